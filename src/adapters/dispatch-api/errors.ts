/**
 * Errors of the dispatch client.
 *
 * A DispatchError answers the one question a job asks after a failed call: can a retry help?
 * `retryable` is decided here, in one table (`isRetryableStatus`), so no caller re-derives it from a status.
 * Nothing in an error ever carries the API key: messages are built from the operation, the status and the
 * service's code, and a service message is scrubbed of the key before it is kept (see http.ts).
 */
import { DeliveryError, type DeliveryAnswer } from '../../domain/delivery.js';
import { failureOf, RelaisError } from '../../domain/errors.js';
import type { ErrorMeaning } from './profile.js';
import type { OperationName } from './wire.js';

/** The twelve operations of the dispatch service (spec section 4); the list lives with the wire names. */
export { OPERATIONS as DISPATCH_OPERATIONS, type OperationName } from './wire.js';

/**
 * - `network`: no answer (refused, reset, dropped mid-answer, aborted by the caller). The operation MAY have
 *   happened on the service side (a connection dropped after the commit): look before repeating a write.
 * - `timeout`: no complete answer within the call's time budget. Same caveat as `network`.
 * - `http`: the service answered with a non-2xx status.
 * - `invalid_response`: a 2xx whose body is not the resource we asked for. Retrying would read the same body.
 */
export type DispatchErrorKind = 'network' | 'timeout' | 'http' | 'invalid_response';

export interface DispatchErrorInit {
  operation: OperationName;
  kind: DispatchErrorKind;
  message: string;
  retryable: boolean;
  status?: number;
  code?: string;
  meaning?: ErrorMeaning;
  retryAfterMs?: number;
  cause?: unknown;
}

/**
 * The dispatch adapter's error is the delivery port's (src/domain/delivery.ts DeliveryError): the use-cases read
 * its `answer`, `reason`, `label` and `refusal`, which are derived here from the wire-level fields below.
 */
export class DispatchError extends DeliveryError {
  override readonly name = 'DispatchError';
  declare readonly operation: OperationName;
  readonly kind: DispatchErrorKind;
  readonly status?: number;
  /** The service's error code when it sent one, e.g. SANDBOX_KEY_NOT_SUPPORTED. */
  readonly code?: string;
  /**
   * What the answer means to Relais, read through the shop's wire profile (quote expired, cancel refused,
   * already ready...). Use-cases decide on this, never on the service's code.
   */
  readonly meaning?: ErrorMeaning;

  /** `retryable` is the transient/permanent verdict of the base (src/domain/errors.ts); `retryAfterMs` comes from Retry-After. */
  constructor(init: DispatchErrorInit) {
    super({
      failure: failureOf(init.retryable),
      message: init.message,
      retryAfterMs: init.retryAfterMs,
      cause: init.cause,
      operation: init.operation,
      answer: ANSWER_OF_KIND[init.kind],
      notFound: init.kind === 'http' && init.status === 404,
      reason: reasonOf(init),
      label: init.code ?? init.kind,
      refusal: init.meaning ?? init.code ?? `http_${init.status ?? 'error'}`,
    });
    this.kind = init.kind;
    if (init.status !== undefined) this.status = init.status;
    if (init.code !== undefined) this.code = init.code;
    if (init.meaning !== undefined) this.meaning = init.meaning;
  }

  /** Structured form for logs: every field a reader needs, never a header or a key. */
  override toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      operation: this.operation,
      kind: this.kind,
      status: this.status,
      code: this.code,
      meaning: this.meaning,
      retryable: this.retryable,
      retryAfterMs: this.retryAfterMs,
    };
  }
}

const ANSWER_OF_KIND: Record<DispatchErrorKind, DeliveryAnswer> = {
  network: 'none',
  timeout: 'none',
  http: 'refused',
  invalid_response: 'unreadable',
};

/**
 * The reason the port reports: the profile's reading of the answer, except that a 409 to cancelShipment is the
 * spec's refusal after pickup (`cancel_refused`), whatever code the profile reads in it.
 */
function reasonOf(init: DispatchErrorInit): ErrorMeaning | undefined {
  return init.operation === 'cancelShipment' && init.status === 409 ? 'cancel_refused' : init.meaning;
}

/**
 * A configuration the client refuses before making any call (a sandbox key, a malformed base URL...): permanent,
 * since the same settings are refused again until someone changes them.
 */
export class DispatchConfigError extends RelaisError {
  override readonly name = 'DispatchConfigError';
  constructor(message: string) {
    super({ failure: 'permanent', message });
  }
}

/**
 * The retry table. 5xx and 429 are the service saying "not now"; 408 is a proxy saying the same.
 * Every other status is an answer about the request itself (400 bad input, 401/403 wrong key, 404 absent,
 * 409 stale quote or refused cancel, 422 refused content): the same request would get the same answer.
 */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}

export function isDispatchError(value: unknown): value is DispatchError {
  return value instanceof DispatchError;
}

/**
 * Retry-After is either a number of seconds or an HTTP-date (RFC 9110 §10.2.3). Returns milliseconds to wait,
 * never negative, or undefined when the header is absent or unreadable.
 */
export function parseRetryAfter(header: string | undefined, now: number = Date.now()): number | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '') return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
