/**
 * One error base for every adapter (the delivery service's client, the Shopify and WooCommerce clients) and
 * for the jobs' own waits: whatever failed, the error says whether trying again can help.
 *
 *  - `transient`: the same call may succeed later (no answer, a timeout, 429, 5xx, a busy order). When the
 *    remote side said how long to wait (Retry-After, Shopify's cost figures), `retryAfterMs` carries it.
 *  - `permanent`: the remote side answered about the request itself (a refusal, an answer that is not the
 *    resource): the same call gets the same answer, so a job stops at once (src/orders/queues.ts jobFailure).
 *
 * The field is `failure`, not `kind`: the adapters' errors keep their own `kind` (how the call failed on the
 * wire: network, timeout, http, invalid_response), which logs and tests already read under that name.
 */
export type FailureKind = 'transient' | 'permanent';

export interface RelaisErrorInit {
  failure: FailureKind;
  message: string;
  retryAfterMs?: number;
  cause?: unknown;
}

// eslint-disable-next-line no-restricted-syntax -- the one class that derives from Error: the base itself
export class RelaisError extends Error {
  override readonly name: string = 'RelaisError';
  readonly failure: FailureKind;
  /** `failure === 'transient'`, kept as a field: callers, logs and job data have read it under this name. */
  readonly retryable: boolean;
  /** How long the remote side asked to wait before trying again, when it said. */
  readonly retryAfterMs?: number;

  constructor(init: RelaisErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.failure = init.failure;
    this.retryable = init.failure === 'transient';
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
  }
}

/**
 * A request refused for a reason the caller can act on (a shop's install or connection, say): permanent, the
 * same request gets the same answer. `reason` is a code from the refusing module's own list.
 */
export class RefusalError<Reason extends string> extends RelaisError {
  override readonly name: string = 'RefusalError';
  constructor(
    readonly reason: Reason,
    message: string,
  ) {
    super({ failure: 'permanent', message });
  }
}

/** The `failure` of a retry verdict: `transient` when a retry can help. */
export function failureOf(retryable: boolean): FailureKind {
  return retryable ? 'transient' : 'permanent';
}

/** An error a retry cannot help: the job stops, the run reports it. */
export function isPermanent(error: unknown): error is RelaisError {
  return error instanceof RelaisError && error.failure === 'permanent';
}

/** An error a retry may help, after `retryAfterMs` when the remote side said. */
export function isTransient(error: unknown): error is RelaisError {
  return error instanceof RelaisError && error.failure === 'transient';
}
