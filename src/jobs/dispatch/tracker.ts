import type { ShopConfig } from '../../config/shops.js';
import { DeliveryError } from '../../domain/delivery.js';
import type { Logger } from '../../log.js';
import { OrderLockLostError, type OrderLock } from '../order-lock.js';
import type { ShopRateLimiter } from '../rate-limit.js';
import type { AttemptWrites } from './attempt-writes.js';

/** Makes one dispatch call, paced, lock-checked, timed and noted on the timeline. */
export type Tracker = <T>(operation: string, fn: () => Promise<T>) => Promise<T>;

/** What the tracker needs of the pipeline's dependencies (deps.ts PipelineDeps). */
export interface TrackerDeps {
  now(): Date;
  logger: Logger;
  rateLimiter?: ShopRateLimiter;
  onDispatchCall?(call: { operation: string; ms: number; error?: unknown }): void;
}

/** The calls that change something at the service: made only while the job still holds the order lock. */
const SIDE_EFFECTS: ReadonlySet<string> = new Set(['createShipment', 'markReady', 'cancelShipment']);

/**
 * Paces and records every dispatch call on the order's timeline: what, when, how long, how it ended.
 * `paced` calls were already taken from the shop's pacing window by the caller; the rest wait their turn.
 * A call with a side effect is made only while `lock` is still held: a job that lost the order (another
 * worker took it over) stops there with a retryable error, noted on the timeline.
 */
export function tracker(
  deps: TrackerDeps,
  externalOrderId: string,
  shop: ShopConfig,
  paced: number,
  lock: OrderLock,
  writes: AttemptWrites,
): Tracker {
  let prepaid = paced;
  return async (operation, fn) => {
    // Before a createShipment, the step saying a shipment may exist is applied and waited for (beforeSideEffect):
    // it goes out before the pacing wait, so the call starts as soon after its turn as the other calls do.
    const recorded = operation === 'createShipment' ? writes.sendNow() : undefined;
    recorded?.catch(() => undefined); // awaited in beforeSideEffect; this only keeps Node from calling it unhandled meanwhile
    // Waiting for the shop's pacing window is not part of the call's latency.
    if (prepaid > 0) prepaid -= 1;
    else await deps.rateLimiter?.acquire(shop.id, shop.policy.dispatchCallsPerSecond);
    if (SIDE_EFFECTS.has(operation)) await beforeSideEffect(deps, externalOrderId, operation, lock, writes, recorded);
    const started = Date.now();
    let result: Awaited<ReturnType<typeof fn>>;
    try {
      result = await fn();
    } catch (error) {
      const ms = Date.now() - started;
      deps.onDispatchCall?.({ operation, ms, error });
      const outcome = error instanceof DeliveryError ? error.label : 'error';
      writes.note({
        at: deps.now().toISOString(),
        system: 'dispatch',
        operation,
        outcome,
        ms,
        detail: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
    const ms = Date.now() - started;
    deps.onDispatchCall?.({ operation, ms });
    writes.note({ at: deps.now().toISOString(), system: 'dispatch', operation, outcome: 'ok', ms });
    return result;
  };
}

/**
 * What the attempt learnt so far is recorded as one step before the service changes anything. Before a
 * createShipment (`recorded`: sent already) it is also waited for, beside the lock's confirmation: it says a
 * shipment may exist.
 */
async function beforeSideEffect(
  deps: TrackerDeps,
  externalOrderId: string,
  operation: string,
  lock: OrderLock,
  writes: AttemptWrites,
  recorded: Promise<void> | undefined,
): Promise<void> {
  writes.send();
  try {
    await Promise.all([lock.confirm(operation), recorded]);
  } catch (error) {
    if (error instanceof OrderLockLostError) {
      // The call's timeline line goes with the attempt's step it belongs to.
      writes.note({
        at: deps.now().toISOString(),
        system: 'relais',
        operation,
        outcome: 'lock_lost',
        detail: error.message,
      });
      deps.logger.warn({ externalOrderId, operation }, 'order lock lost; stopped before a side effect, to be retried');
    }
    throw error;
  }
}
