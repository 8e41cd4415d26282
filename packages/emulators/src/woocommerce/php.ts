/**
 * The few PHP behaviours WooCommerce's wire format depends on, reproduced byte for byte:
 *  - `rawurlencode` (RFC 3986: everything but A-Z a-z 0-9 - _ . ~ is escaped, uppercase hex),
 *  - `parse_str` / `$_GET` (`+` is a space, `a[b]=1` and `a[]=1` build nested arrays, the last duplicate wins),
 *  - `wp_json_encode` with no flags (`/` becomes `\/`, every non-ASCII character becomes `\uXXXX`).
 *
 * PHP strings are bytes. Here a "byte string" is a JS string whose every code unit is one byte (latin1 view),
 * so percent-decoding and re-encoding never pass through UTF-8 decoding and cannot fail or normalise anything.
 */

/** A PHP value as `parse_str` builds it: a byte string or an ordered array (string keys, insertion order). */
export type PhpValue = string | PhpArray;
export type PhpArray = Map<string, PhpValue>;

const UNRESERVED = /[A-Za-z0-9\-_.~]/;

/** PHP `rawurlencode` over a byte string. */
export function rawurlencode(bytes: string): string {
  let out = '';
  for (const char of bytes) {
    const code = char.charCodeAt(0);
    if (code < 0x80 && UNRESERVED.test(char)) out += char;
    else out += `%${code.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** PHP `urldecode` (`+` is a space) to a byte string. Malformed escapes stay as they are, as in PHP. */
export function urldecode(text: string): string {
  return percentDecode(text.replace(/\+/g, ' '));
}

/** PHP `rawurldecode` to a byte string. */
export function rawurldecode(text: string): string {
  return percentDecode(text);
}

function percentDecode(text: string): string {
  // Work on the UTF-8 bytes of the raw text so a literal non-ASCII character survives as its bytes.
  const raw = Buffer.from(text, 'utf8').toString('latin1');
  return raw.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A UTF-8 JS string as a byte string (its UTF-8 bytes, one per code unit). */
export function toBytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/** A byte string back to a JS string, reading the bytes as UTF-8. */
export function fromBytes(bytes: string): string {
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/**
 * PHP `parse_str` over a raw query string (no leading `?`), returning byte strings.
 * Top-level keys get PHP's mangling (space and `.` become `_`), `a[x][y]=v` nests, `a[]=v` appends.
 */
export function parseStr(query: string): PhpArray {
  const result: PhpArray = new Map();
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? '' : pair.slice(eq + 1);
    const key = urldecode(rawKey);
    if (key === '') continue;
    assignPhpParam(result, key, urldecode(rawValue));
  }
  return result;
}

function assignPhpParam(target: PhpArray, key: string, value: string): void {
  const open = key.indexOf('[');
  const segments: string[] = [];
  let base = key;
  if (open > 0) {
    // Only well-formed trailing [..] groups nest; PHP keeps anything after the last group out.
    let rest = key.slice(open);
    const groups: string[] = [];
    while (rest.startsWith('[')) {
      const close = rest.indexOf(']');
      if (close === -1) break;
      groups.push(rest.slice(1, close));
      rest = rest.slice(close + 1);
    }
    if (groups.length > 0) {
      base = key.slice(0, open);
      segments.push(...groups);
    }
  }
  base = base.replace(/[ .]/g, '_').replace(/\[/g, '_');
  if (segments.length === 0) {
    target.set(base, value);
    return;
  }
  let node = target;
  const path = [base, ...segments];
  for (let i = 0; i < path.length; i++) {
    const segment = path[i] ?? '';
    const last = i === path.length - 1;
    const slot = segment === '' ? String(nextIndex(node)) : segment;
    if (last) {
      node.set(slot, value);
      return;
    }
    const existing = node.get(slot);
    if (existing instanceof Map) {
      node = existing;
    } else {
      const child: PhpArray = new Map();
      node.set(slot, child);
      node = child;
    }
  }
}

function nextIndex(array: PhpArray): number {
  let next = 0;
  for (const key of array.keys()) {
    if (/^(0|[1-9]\d*)$/.test(key)) next = Math.max(next, Number(key) + 1);
  }
  return next;
}

/** A parse_str result as plain JSON-like data (strings decoded as UTF-8), for request parameters. */
export function phpArrayToPlain(array: PhpArray): Record<string, unknown> {
  const plain: Record<string, unknown> = {};
  for (const [key, value] of array) plain[fromBytes(key)] = phpValueToPlain(value);
  return plain;
}

function phpValueToPlain(value: PhpValue): unknown {
  if (typeof value === 'string') return fromBytes(value);
  const keys = [...value.keys()];
  const isList = keys.every((key, index) => key === String(index));
  if (isList) return [...value.values()].map(phpValueToPlain);
  return phpArrayToPlain(value);
}

/**
 * `wp_json_encode($data)` with no flags, as WordPress sends REST responses and WooCommerce sends webhook
 * bodies: slashes escaped as `\/`, non-ASCII escaped as lowercase `\uXXXX` (surrogate pairs for astral
 * characters). A receiver that re-serialises the JSON instead of hashing the raw bytes gets another signature.
 */
export function phpJsonEncode(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) return 'null';
  return json
    .replace(/\//g, '\\/')
    .replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `wp_specialchars_decode($text, ENT_QUOTES)`: WooCommerce decodes the stored secret before signing. */
export function wpSpecialcharsDecode(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#0*39;/g, "'")
    .replace(/&#x0*27;/gi, "'")
    .replace(/&amp;/g, '&');
}

/** `wp_sprintf('%l', $list)`: "a, b, and c" (the form WordPress uses in enum validation messages). */
export function wpList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}
