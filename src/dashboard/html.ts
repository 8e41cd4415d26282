/**
 * HTML for the dashboard, built with one tagged template. Every value interpolated into `html\`...\``
 * goes through `escapeHtml`, the single escaping function; only fragments produced by the tag itself
 * (SafeHtml) are inserted as they are. So a shop payload with `<script>` in an address, an order name
 * or a hold reason can never become markup, and no page has to remember to escape.
 */

export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** The one escaping function: text and attribute values alike (attributes are always double-quoted). */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => ENTITIES[c] ?? c);
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/**
 * A link target that cannot run script: only http(s) URLs and same-site paths pass; anything else
 * (javascript:, data:) becomes '#'. The result is still escaped when interpolated.
 */
export function safeHref(url: string | undefined): string {
  if (!url) return '#';
  if (url.startsWith('/') && !url.startsWith('//')) return url;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : '#';
  } catch {
    return '#';
  }
}

/** "15 000 F": francs CFA have no subunit; grouped with a narrow no-break space as written in Dakar. */
export function formatXof(amount: number | undefined): string {
  if (amount === undefined || !Number.isFinite(amount)) return '—';
  const sign = amount < 0 ? '−' : '';
  const digits = Math.abs(Math.trunc(amount))
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f');
  return `${sign}${digits}\u00a0F`;
}

/** ISO instants shown as "2026-05-04 14:03:22 UTC": operators compare them with logs, which are UTC. */
export function formatTime(iso: string | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
