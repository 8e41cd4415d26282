/**
 * WooCommerce REST authentication, as `WC_REST_Authentication` does it (plugins/woocommerce/includes/
 * class-wc-rest-authentication.php):
 *
 *  - Basic auth / `consumer_key`+`consumer_secret` query parameters. Core accepts them only over HTTPS; this
 *    emulator is plain HTTP, so it accepts them as if the request had come through TLS (a client configured
 *    with an https URL behind a TLS proxy, or a test calling with fetch). An unknown key falls through to
 *    OAuth silently, a known key with a wrong secret is "Consumer secret is invalid.".
 *  - OAuth 1.0a "one-legged" (what @woocommerce/woocommerce-rest-api does over http): the signature base
 *    string is `METHOD&rawurlencode(home_url + path)&` followed by every GET/POST parameter except
 *    `oauth_signature`, sorted with strcmp on the top-level key, each key and value rawurlencoded, joined as
 *    `k=v` and rawurlencoded again, the pairs joined by `%26`. Key: `consumer_secret&`. HMAC-SHA1 or -SHA256,
 *    base64. Then the timestamp must be within 15 minutes and the nonce unused.
 *
 * Error codes and messages are core's, so a client's error mapping can be tested against them.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { parseStr, rawurldecode, rawurlencode, toBytes, urldecode, type PhpArray, type PhpValue } from './php.js';

export interface ApiKey {
  consumerKey: string;
  consumerSecret: string;
  permissions: 'read' | 'write' | 'read_write';
}

export interface WpError {
  code: string;
  message: string;
  status: number;
  /** Extra members of `data` beside `status`. */
  data?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export type AuthMethod = 'oauth1' | 'basic' | 'query' | 'none';

export type AuthOutcome =
  | { kind: 'authenticated'; method: Exclude<AuthMethod, 'none'>; key: ApiKey }
  | { kind: 'anonymous' }
  | { kind: 'rejected'; method: Exclude<AuthMethod, 'none'>; error: WpError };

export interface AuthRequest {
  method: string;
  /** The raw path of the request (percent escapes kept), e.g. `/shops/a/wp-json/wc/v3/orders`. */
  rawPath: string;
  /** The raw query string without `?`. */
  rawQuery: string;
  /** Raw form body when the request was `application/x-www-form-urlencoded` (PHP's `$_POST`). */
  formBody?: string;
  authorization?: string;
}

export interface AuthContext {
  /** The shop's home URL, e.g. `http://127.0.0.1:4100/shops/a` (no trailing slash). */
  homeUrl: string;
  findKey(consumerKey: string): ApiKey | undefined;
  nonces: NonceStore;
  /** Seconds since the epoch, for the timestamp window. */
  nowSeconds(): number;
}

const OAUTH_REQUIRED = [
  'oauth_consumer_key',
  'oauth_timestamp',
  'oauth_nonce',
  'oauth_signature',
  'oauth_signature_method',
];
const VALID_WINDOW_SECONDS = 15 * 60;

const authError = (message: string, extra: Partial<WpError> = {}): WpError => ({
  code: 'woocommerce_rest_authentication_error',
  message,
  status: 401,
  ...extra,
});

/** Used nonces per consumer key, forgotten once they fall out of the 15-minute window. */
export class NonceStore {
  private readonly used = new Map<string, Map<string, number>>();

  /** Records the nonce; false when it was already used within the window. */
  claim(consumerKey: string, nonce: string, timestamp: number, nowSeconds: number): boolean {
    let seen = this.used.get(consumerKey);
    if (!seen) {
      seen = new Map();
      this.used.set(consumerKey, seen);
    }
    for (const [oldNonce, at] of seen) if (at < nowSeconds - VALID_WINDOW_SECONDS) seen.delete(oldNonce);
    if (seen.has(nonce)) return false;
    seen.set(nonce, timestamp);
    return true;
  }
}

export function authenticate(request: AuthRequest, ctx: AuthContext): AuthOutcome {
  const basic = tryBasic(request, ctx);
  if (basic) return basic;
  return tryOAuth(request, ctx);
}

function tryBasic(request: AuthRequest, ctx: AuthContext): AuthOutcome | undefined {
  const query = parseStr(request.rawQuery);
  const queryKey = query.get('consumer_key');
  const querySecret = query.get('consumer_secret');
  let method: 'basic' | 'query' | undefined;
  let consumerKey = '';
  let consumerSecret = '';
  if (typeof queryKey === 'string' && queryKey !== '' && typeof querySecret === 'string' && querySecret !== '') {
    method = 'query';
    consumerKey = queryKey;
    consumerSecret = querySecret;
  } else {
    const credentials = parseBasicHeader(request.authorization);
    if (credentials) {
      method = 'basic';
      consumerKey = credentials.user;
      consumerSecret = credentials.password;
    }
  }
  if (!method || consumerKey === '' || consumerSecret === '') return undefined;
  const key = ctx.findKey(Buffer.from(consumerKey, 'latin1').toString('utf8'));
  if (!key) return undefined;
  if (!bytesEqual(toBytes(key.consumerSecret), consumerSecret)) {
    return {
      kind: 'rejected',
      method,
      error: authError('Consumer secret is invalid.', {
        headers: {
          'WWW-Authenticate':
            'Basic realm="WooCommerce API. Use a consumer key in the username field and a consumer secret in the password field."',
        },
      }),
    };
  }
  return { kind: 'authenticated', method, key };
}

function parseBasicHeader(header: string | undefined): { user: string; password: string } | undefined {
  if (!header) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header.trim());
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('latin1');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function tryOAuth(request: AuthRequest, ctx: AuthContext): AuthOutcome {
  // $_GET + $_POST, then the Authorization: OAuth header on top (as get_oauth_parameters() merges them).
  const params: PhpArray = new Map(parseStr(request.rawQuery));
  if (request.formBody !== undefined) for (const [k, v] of parseStr(request.formBody)) params.set(k, v);
  for (const [k, v] of parseOAuthHeader(request.authorization)) params.set(k, v);

  const missing = OAUTH_REQUIRED.filter((name) => {
    const value = params.get(name);
    return typeof value !== 'string' || value === '' || value === '0';
  });
  if (missing.length === OAUTH_REQUIRED.length) return { kind: 'anonymous' };
  if (missing.length > 0) {
    return {
      kind: 'rejected',
      method: 'oauth1',
      error: {
        code: 'woocommerce_rest_authentication_missing_parameter',
        message: `${missing.length === 1 ? 'Missing OAuth parameter' : 'Missing OAuth parameters'} ${missing.join(', ')}`,
        status: 401,
      },
    };
  }

  const consumerKey = params.get('oauth_consumer_key') as string;
  const key = ctx.findKey(Buffer.from(consumerKey, 'latin1').toString('utf8'));
  if (!key) return { kind: 'rejected', method: 'oauth1', error: authError('Consumer key is invalid.') };

  const signatureProblem = checkSignature(request, ctx, key, params);
  if (signatureProblem) return { kind: 'rejected', method: 'oauth1', error: signatureProblem };

  const timestampText = params.get('oauth_timestamp') as string;
  const timestamp = /^\d+$/.test(timestampText) ? Number(timestampText) : Number.NaN;
  const now = ctx.nowSeconds();
  if (!Number.isFinite(timestamp) || timestamp < now - VALID_WINDOW_SECONDS || timestamp > now + VALID_WINDOW_SECONDS) {
    return { kind: 'rejected', method: 'oauth1', error: authError('Invalid timestamp.') };
  }
  if (!ctx.nonces.claim(key.consumerKey, params.get('oauth_nonce') as string, timestamp, now)) {
    return { kind: 'rejected', method: 'oauth1', error: authError('Invalid nonce - nonce has already been used.') };
  }
  return { kind: 'authenticated', method: 'oauth1', key };
}

/** `WC_REST_Authentication::parse_header`: `oauth_*="..."` pairs of an `Authorization: OAuth ...` header. */
function parseOAuthHeader(header: string | undefined): Map<string, string> {
  const params = new Map<string, string>();
  if (!header) return params;
  const trimmed = header.trim();
  if (!trimmed.startsWith('OAuth ')) return params;
  const pattern = /(oauth_[a-z_-]*)=(:?"([^"]*)"|([^,]*))/g;
  for (const match of trimmed.matchAll(pattern)) {
    const name = match[1];
    if (!name) continue;
    const quoted = match[3];
    params.set(name, urldecode(quoted !== undefined && quoted !== '' ? quoted : (match[4] ?? '')));
  }
  return params;
}

function checkSignature(request: AuthRequest, ctx: AuthContext, key: ApiKey, params: PhpArray): WpError | undefined {
  const baseString = oauthBaseString(request.method, baseRequestUri(request.rawPath, ctx.homeUrl), params);
  const method = params.get('oauth_signature_method');
  if (method !== 'HMAC-SHA1' && method !== 'HMAC-SHA256') {
    return authError('Invalid signature - signature method is invalid.');
  }
  const algorithm = method === 'HMAC-SHA1' ? 'sha1' : 'sha256';
  const expected = createHmac(algorithm, Buffer.from(`${toBytes(key.consumerSecret)}&`, 'latin1'))
    .update(Buffer.from(baseString, 'latin1'))
    .digest('base64');
  const provided = rawurldecode((params.get('oauth_signature') as string).replace(/ /g, '+'));
  if (!bytesEqual(expected, provided)) return authError('Invalid signature - provided signature does not match.');
  return undefined;
}

/** `get_home_url(null, $request_path)`: the shop's home URL plus the path below the home path. */
function baseRequestUri(rawPath: string, homeUrl: string): string {
  const homePath = `${new URL(homeUrl).pathname.replace(/\/+$/, '')}/`;
  let requestPath = rawPath;
  if (requestPath.startsWith(homePath)) requestPath = requestPath.slice(homePath.length);
  return `${homeUrl.replace(/\/+$/, '')}/${requestPath.replace(/^\/+/, '')}`;
}

/**
 * The OAuth 1.0a string to sign, exactly as WooCommerce computes it. Exported so tests (and a client that
 * wants to double-check) can sign requests the way the server verifies them.
 */
export function oauthBaseString(httpMethod: string, baseUri: string, allParams: PhpArray): string {
  const params = new Map(allParams);
  params.delete('oauth_signature');
  const sortedKeys = [...params.keys()].sort(strcmp);
  const pairs: string[] = [];
  for (const key of sortedKeys) {
    const value = params.get(key) as PhpValue;
    joinWithEqualsSign(rawurlencode(key), encodeValue(value), pairs);
  }
  return `${httpMethod.toUpperCase()}&${rawurlencode(toBytes(baseUri))}&${pairs.join('%26')}`;
}

/** wc_rest_urlencode_rfc3986 applied to a value: strings encoded, arrays encoded value by value (keys kept). */
function encodeValue(value: PhpValue): PhpValue {
  if (typeof value === 'string') return rawurlencode(value);
  const encoded: PhpArray = new Map();
  for (const [k, v] of value) encoded.set(k, encodeValue(v));
  return encoded;
}

function joinWithEqualsSign(key: string, value: PhpValue, out: string[]): void {
  if (typeof value === 'string') {
    out.push(rawurlencode(`${key}=${value}`));
    return;
  }
  for (const [childKey, childValue] of value) joinWithEqualsSign(`${key}%5B${childKey}%5D`, childValue, out);
}

function strcmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function bytesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'latin1');
  const right = Buffer.from(b, 'latin1');
  return left.length === right.length && timingSafeEqual(left, right);
}
