/**
 * The one private `request()` of the dispatch client. It owns the base URLs, the X-Api-Key header, the time
 * budget of every call, JSON in and out, reading responses through the zod readers of wire.ts, and the
 * mapping of every failure to a DispatchError that says whether a retry can help.
 *
 * Why node:http with our own keep-alive Agent rather than global fetch: fetch's connection pool is the
 * process-wide undici dispatcher, which a client cannot close without closing everyone's connections, and
 * whose abort/reset errors arrive as generic "fetch failed" TypeErrors. An Agent we own keeps connections
 * alive between calls (one TLS/TCP handshake per connection, not per call), is destroyed by `close()` so
 * tests and shutdowns leave no socket behind, and reports resets with their errno (ECONNRESET...).
 */
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { z } from 'zod';
import { RelaisError } from '../../domain/errors.js';
import type { Logger } from '../../log.js';
import type { WireProfile } from './profile.js';
import { API_KEY_HEADER } from './wire.js';
import { DispatchError, isRetryableStatus, parseRetryAfter, type OperationName } from './errors.js';

export interface CallOptions {
  /** Aborts the call (e.g. a worker shutting down). Reported as a retryable `network` error. */
  signal?: AbortSignal;
  /** Overrides the client's time budget for this call (whole call: connect, send, full answer). */
  timeoutMs?: number;
}

export interface RequestSpec<T> {
  operation: OperationName;
  method: 'GET' | 'POST';
  /** Starts with /v1 (wire.ts `paths`). */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Public operations go to the tracking host and carry no API key (spec section 5, rule 5). */
  public?: boolean;
  /** The wire.ts reader of the success body. */
  read: z.ZodType<T>;
}

export interface DispatchHttpOptions {
  baseUrl: URL;
  trackingUrl: URL;
  apiKey: string;
  timeoutMs: number;
  userAgent: string;
  logger: Logger;
  /** Where error bodies keep their code and message, and what each code means. */
  profile: WireProfile;
}

/** A body larger than this is not a dispatch resource; refusing it bounds the memory one call can take. */
const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
/** Service messages are kept in errors for people to read; a bounded excerpt is enough. */
const MAX_SERVICE_MESSAGE_CHARS = 300;

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** An answer too large to be a resource: a retry would read the same (#transportError makes it `invalid_response`). */
class ResponseTooLarge extends RelaisError {
  override readonly name = 'ResponseTooLarge';
  constructor(message: string) {
    super({ failure: 'permanent', message });
  }
}

/** The caller aborted the call (a worker shutting down): a later call may go through (`network`, retryable). */
class CallerAborted extends RelaisError {
  override readonly name = 'CallerAborted';
  constructor(message: string) {
    super({ failure: 'transient', message });
  }
}

export class DispatchHttp {
  readonly #apiKey: string;
  readonly #baseUrl: URL;
  readonly #trackingUrl: URL;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #log: Logger;
  readonly #profile: WireProfile;
  #closed = false;
  // Bounded pools: a burst of jobs queues on the agent instead of opening hundreds of sockets.
  readonly #httpAgent = new http.Agent({ keepAlive: true, maxSockets: 32, scheduling: 'lifo' });
  readonly #httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 32, scheduling: 'lifo' });

  constructor(options: DispatchHttpOptions) {
    this.#apiKey = options.apiKey;
    this.#baseUrl = options.baseUrl;
    this.#trackingUrl = options.trackingUrl;
    this.#timeoutMs = options.timeoutMs;
    this.#userAgent = options.userAgent;
    this.#log = options.logger;
    this.#profile = options.profile;
  }

  async request<T>(spec: RequestSpec<T>, options: CallOptions = {}): Promise<T> {
    // A closed agent would quietly open fresh sockets again; a call after close() is a shutdown-order bug.
    if (this.#closed) throw new Error(`dispatch ${spec.operation}: the client is closed`);
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError('timeoutMs must be a positive number');
    const url = this.#url(spec);
    // A timer cleared with the answer, not AbortSignal.timeout: that one cannot be cleared, and fired for every call
    // long after its answer, building an abort error each time (about 2 % of a worker's CPU per order).
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    timer.unref();
    const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
    const started = performance.now();
    const logFields = { operation: spec.operation, method: spec.method, path: spec.path };

    let response: RawResponse;
    try {
      response = await this.#send(url, spec, signal);
    } catch (cause) {
      const error = this.#transportError(spec.operation, cause, timeout.signal.aborted, timeoutMs);
      this.#log.debug({ ...logFields, kind: error.kind, ms: elapsed(started) }, 'dispatch call failed');
      throw error;
    } finally {
      clearTimeout(timer);
    }
    this.#log.debug({ ...logFields, status: response.status, ms: elapsed(started) }, 'dispatch call');

    if (response.status < 200 || response.status > 299) throw this.#httpError(spec.operation, response);
    return this.#readSuccess(spec, response);
  }

  /** Closes idle keep-alive connections and refuses new ones. */
  close(): void {
    this.#closed = true;
    this.#httpAgent.destroy();
    this.#httpsAgent.destroy();
  }

  #url(spec: RequestSpec<unknown>): URL {
    const base = spec.public ? this.#trackingUrl : this.#baseUrl;
    const url = new URL(base.href);
    // A base URL may carry a path prefix (a gateway mounted under /dispatch): keep it, then add /v1/...
    url.pathname = `${base.pathname.replace(/\/+$/, '')}${spec.path}`;
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url;
  }

  #send(url: URL, spec: RequestSpec<unknown>, signal: AbortSignal): Promise<RawResponse> {
    return new Promise<RawResponse>((resolve, reject) => {
      if (signal.aborted) {
        reject(new CallerAborted('aborted before the call'));
        return;
      }
      const payload = spec.body === undefined ? undefined : Buffer.from(JSON.stringify(spec.body), 'utf8');
      const headers: http.OutgoingHttpHeaders = { accept: 'application/json', 'user-agent': this.#userAgent };
      if (payload) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = payload.length;
      }
      if (!spec.public) headers[API_KEY_HEADER] = this.#apiKey;

      let settled = false;
      const settle = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        outcome();
      };
      const secure = url.protocol === 'https:';
      const request = (secure ? https : http).request(
        url,
        { method: spec.method, headers, agent: secure ? this.#httpsAgent : this.#httpAgent },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) {
              settle(() => reject(new ResponseTooLarge(`answer larger than ${MAX_RESPONSE_BYTES} bytes`)));
              res.destroy();
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () =>
            settle(() => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) })),
          );
          res.on('error', (error) => settle(() => reject(error)));
          // The socket closed after the status line but before the whole body: the answer is unusable.
          res.on('close', () => {
            if (!res.complete) settle(() => reject(new Error('connection closed before the answer was complete')));
          });
        },
      );
      // Destroying the request also destroys its socket, so a timed-out connection is never reused.
      const onAbort = (): void => {
        request.destroy();
        settle(() => reject(new CallerAborted('aborted')));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      request.on('error', (error) => settle(() => reject(error)));
      request.end(payload);
    });
  }

  #transportError(operation: OperationName, cause: unknown, timedOut: boolean, timeoutMs: number): DispatchError {
    if (timedOut) {
      return new DispatchError({
        operation,
        kind: 'timeout',
        retryable: true,
        message: `dispatch ${operation}: no complete answer within ${timeoutMs} ms`,
        cause,
      });
    }
    if (cause instanceof ResponseTooLarge) {
      return new DispatchError({
        operation,
        kind: 'invalid_response',
        retryable: false,
        message: `dispatch ${operation}: ${cause.message}`,
      });
    }
    if (cause instanceof CallerAborted) {
      return new DispatchError({
        operation,
        kind: 'network',
        retryable: true,
        message: `dispatch ${operation}: aborted by the caller`,
        cause,
      });
    }
    const code = errnoCode(cause);
    const detail = cause instanceof Error ? cause.message : String(cause);
    return new DispatchError({
      operation,
      kind: 'network',
      retryable: true,
      message: `dispatch ${operation}: no answer (${code ? `${code}: ` : ''}${this.#scrub(detail)})`,
      cause,
    });
  }

  #httpError(operation: OperationName, response: RawResponse): DispatchError {
    const { code, message } = this.#profile.readErrorBody(parseJson(response.body));
    const meaning = this.#profile.meaningOf(response.status, code);
    const serviceMessage = message ? this.#scrub(message).slice(0, MAX_SERVICE_MESSAGE_CHARS) : undefined;
    const retryAfterMs = parseRetryAfter(headerValue(response.headers['retry-after']));
    const hint =
      meaning === 'sandbox_key'
        ? ' (the service refuses every pk_test_ key; use a pk_live_ key, or `relais emulate dispatch` to try things safely)'
        : '';
    return new DispatchError({
      operation,
      kind: 'http',
      status: response.status,
      ...(code === undefined ? {} : { code }),
      ...(meaning === undefined ? {} : { meaning }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      retryable: isRetryableStatus(response.status),
      message: `dispatch ${operation}: HTTP ${response.status}${code ? ` ${code}` : ''}${serviceMessage ? `: ${serviceMessage}` : ''}${hint}`,
    });
  }

  #readSuccess<T>(spec: RequestSpec<T>, response: RawResponse): T {
    const invalid = (why: string): DispatchError =>
      new DispatchError({
        operation: spec.operation,
        kind: 'invalid_response',
        status: response.status,
        retryable: false,
        message: `dispatch ${spec.operation}: HTTP ${response.status} with ${why}`,
      });
    const json = parseJson(response.body);
    if (json === undefined) throw invalid(response.body.length === 0 ? 'an empty body' : 'a body that is not JSON');
    const parsed = spec.read.safeParse(json);
    if (!parsed.success) {
      // Paths and messages only: values may be personal data (addresses, names) and stay out of errors.
      const issues = parsed.error.issues
        .slice(0, 5)
        .map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
        .join('; ');
      throw invalid(`a body that is not the expected resource (${issues})`);
    }
    return parsed.data;
  }

  /** Belt and braces: should a service or proxy ever echo the key back, it is cut out before we keep any text. */
  #scrub(text: string): string {
    return this.#apiKey.length > 0 ? text.split(this.#apiKey).join('[redacted]') : text;
  }
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function errnoCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string')
    return error.code;
  return undefined;
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
