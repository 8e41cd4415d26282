/**
 * How long an Admin call waits, and the shop's shared rate budget it passes through (rate-budget.ts).
 *
 *  - THROTTLED (HTTP 200, `errors[].extensions.code`): the request was not executed. We wait exactly what the
 *    cost figures say, (requestedQueryCost - currentlyAvailable) / restoreRate seconds (throttleWaitMs).
 *  - 429 and 5xx: Retry-After when given (retryAfterMsOf), else a default or an exponential backoff.
 *  - Before each call, its cost is reserved in the budget every worker of the shop shares; after it, Shopify's
 *    own account of the bucket settles the reservation (BudgetGate).
 */
import { z } from 'zod';
import { ShopifyWriteError } from './admin-errors.js';
import type { BudgetTicket, ShopRateBudget } from './rate-budget.js';

/** Shopify sends Retry-After: 2.0 on REST 429s; the same default serves a GraphQL 429 without the header. */
export const DEFAULT_RETRY_AFTER_MS = 2_000;
const MIN_WAIT_MS = 100;
/** What a call is taken to cost before Shopify has reported its operation's cost (a mutation's usual 10 points). */
const DEFAULT_ESTIMATED_COST = 10;

const throttleStatusSchema = z.object({
  maximumAvailable: z.number(),
  currentlyAvailable: z.number(),
  restoreRate: z.number(),
});
/** The `extensions.cost` Shopify reports with every answer, THROTTLED ones included. */
export const costSchema = z.object({ requestedQueryCost: z.number(), throttleStatus: throttleStatusSchema });

/** (requested - available) / restoreRate seconds: exactly when the bucket will hold enough points again. */
export function throttleWaitMs(cost: z.infer<typeof costSchema> | undefined): number {
  if (!cost || cost.throttleStatus.restoreRate <= 0) return DEFAULT_RETRY_AFTER_MS;
  const missing = cost.requestedQueryCost - cost.throttleStatus.currentlyAvailable;
  return Math.max(MIN_WAIT_MS, Math.ceil((missing / cost.throttleStatus.restoreRate) * 1000));
}

/** The wait before another attempt when Shopify did not say how long. */
export function backoffMs(attempt: number): number {
  return Math.min(250 * 2 ** (attempt - 1), 4_000);
}

/** A Retry-After of so many seconds, as a wait of at least MIN_WAIT_MS. */
export function secondsToWaitMs(seconds: number): number {
  return Math.max(MIN_WAIT_MS, Math.ceil(seconds * 1000));
}

/** Retry-After (seconds) from the library's canonicalised headers ({ 'Retry-After': ['2.0'] }). */
export function retryAfterMsOf(headers: Record<string, unknown> | undefined): number | undefined {
  if (!headers) return undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'retry-after') continue;
    const raw = Array.isArray(value) ? value[0] : value;
    const seconds = typeof raw === 'string' || typeof raw === 'number' ? Number(raw) : Number.NaN;
    if (Number.isFinite(seconds) && seconds >= 0) return secondsToWaitMs(seconds);
  }
  return undefined;
}

export interface BudgetGateOptions {
  /** The shop's rate budget shared by every process; without one, every call passes at once. */
  budget: ShopRateBudget | undefined;
  /** Longest single wait; a longer one hands the job back to the queue. */
  maxWaitMs: number;
  /** The client's in-process attempts: with maxWaitMs, how long a call may wait for the budget in all. */
  maxAttempts: number;
  sleep: (ms: number) => Promise<void>;
  /** Told how long a call waited for the budget. */
  onBudgetWait: ((ms: number) => void) | undefined;
}

/** Every Admin call of a client passes here: a reservation in the shop's shared budget before, settled after. */
export class BudgetGate {
  readonly #options: BudgetGateOptions;

  constructor(options: BudgetGateOptions) {
    this.#options = options;
  }

  /**
   * Reserves the call's cost in the shop's shared budget, waiting while the bucket refills or other calls hold
   * it. A wait longer than this client's patience hands the job back to the queue (retryable, the wait as
   * retryAfterMs) rather than holding a worker slot; the order lister is patient enough to wait (reconciliation
   * does not report THROTTLED for a bucket the workers emptied). Answers the ticket and the time waited.
   */
  async take(operation: string): Promise<{ ticket: BudgetTicket | undefined; waitedMs: number }> {
    const { budget, maxWaitMs, maxAttempts, sleep, onBudgetWait } = this.#options;
    if (!budget) return { ticket: undefined, waitedMs: 0 };
    const patienceMs = maxWaitMs * maxAttempts;
    let waitedMs = 0;
    for (;;) {
      const taken = await budget.take(operation, DEFAULT_ESTIMATED_COST);
      if ('ticket' in taken) {
        if (waitedMs > 0) onBudgetWait?.(waitedMs);
        return { ticket: taken.ticket, waitedMs };
      }
      if (taken.waitMs > maxWaitMs || waitedMs + taken.waitMs > patienceMs) {
        onBudgetWait?.(waitedMs);
        throw new ShopifyWriteError({
          operation,
          message: `${operation}: the shop's Shopify rate budget is spent; retrying once it refills`,
          retryable: true,
          retryAfterMs: taken.waitMs,
        });
      }
      await sleep(taken.waitMs);
      waitedMs += taken.waitMs;
    }
  }

  /** Ends the call's reservation, with Shopify's account of the bucket and the call's cost when it gave one. */
  async settle(ticket: BudgetTicket | undefined, operation: string, extensions: unknown): Promise<void> {
    const { budget } = this.#options;
    if (!budget || !ticket) return;
    const reported = z.object({ cost: costSchema }).safeParse(extensions);
    await budget.settle(
      ticket,
      reported.success
        ? { operation, requestedCost: reported.data.cost.requestedQueryCost, status: reported.data.cost.throttleStatus }
        : undefined,
    );
  }
}
