/**
 * The calls `relais probe` makes, with fetch rather than DispatchClient because it needs the RAW answers (field
 * names the profile does not know, error bodies, unknown state names, all of which the client's readers drop by
 * design). Each call's method and path come from allowedRoute (probe-routes.ts); every request and answer is
 * recorded, the API key replaced by [REDACTED] everywhere.
 */
import { API_KEY_HEADER } from '../adapters/dispatch-api/wire.js';
import type { Exchange } from './probe-findings.js';
import { allowedRoute, type ProbeOperation } from './probe-routes.js';

/** Where to call and with which key: the shop's dispatch settings, or a target named directly. */
export interface ProbeEndpoint {
  baseUrl: string;
  /** Default: baseUrl. */
  trackingUrl?: string;
  apiKey: string;
}

export const REDACTED = '[REDACTED]';
const KEPT_RESPONSE_HEADERS =
  /^(content-type|date|retry-after|server|www-authenticate|x-request-id|request-id|x-ratelimit-.*|ratelimit-.*)$/i;

/** Replaces the key wherever it occurs in a value (strings at any depth, and object keys). */
export function redact<T>(value: T, secret: string): T {
  if (secret.length < 4) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return v.split(secret).join(REDACTED);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [walk(k) as string, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

export interface CallOptions {
  arg?: string;
  body?: unknown;
  expectedMeaning?: Exchange['expectedMeaning'];
}

export class ProbeCaller {
  readonly exchanges: Exchange[] = [];

  constructor(
    private readonly target: ProbeEndpoint,
    private readonly fetchFn: typeof globalThis.fetch,
    private readonly timeoutMs: number,
  ) {}

  /** One call of an allowed operation; the answer is recorded whatever it is. */
  async call(step: string, operation: ProbeOperation, options: CallOptions = {}): Promise<Exchange> {
    const route = allowedRoute(operation);
    const path = route.path(options.arg ?? '');
    const base = route.host === 'tracking' ? (this.target.trackingUrl ?? this.target.baseUrl) : this.target.baseUrl;
    const url = `${base.replace(/\/+$/, '')}${path}`;
    // Public operations send no key (spec section 5, rule 5).
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'relais-probe/0.1' };
    if (route.host === 'base') headers[API_KEY_HEADER] = this.target.apiKey;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const started = performance.now();
    const exchange: Exchange = {
      step,
      operation,
      method: route.method,
      path,
      host: route.host,
      requestHeaders: { ...headers, ...(route.host === 'base' ? { [API_KEY_HEADER]: REDACTED } : {}) },
      ...(options.body === undefined ? {} : { requestBody: options.body }),
      responseHeaders: {},
      ms: 0,
      ...(options.expectedMeaning ? { expectedMeaning: options.expectedMeaning } : {}),
    };
    try {
      const response = await this.fetchFn(url, {
        method: route.method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'manual',
      });
      await recordAnswer(exchange, response);
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      exchange.error = `${(error as Error).name}: ${cause?.code ?? cause?.message ?? (error as Error).message}`;
    }
    exchange.ms = Math.round(performance.now() - started);
    const safe = redact(exchange, this.target.apiKey);
    this.exchanges.push(safe);
    return safe;
  }
}

/** The answer's status, the headers worth keeping, and its body: parsed JSON, or the text (cut at 2000). */
async function recordAnswer(exchange: Exchange, response: Response): Promise<void> {
  const text = await response.text();
  exchange.status = response.status;
  response.headers.forEach((value, name) => {
    if (KEPT_RESPONSE_HEADERS.test(name)) exchange.responseHeaders[name] = value;
  });
  try {
    exchange.responseBody = text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    exchange.responseBody = text.length > 2000 ? `${text.slice(0, 2000)}...` : text;
  }
}
