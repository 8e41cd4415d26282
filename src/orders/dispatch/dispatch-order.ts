/**
 * The heart of Relais: one order becomes exactly one shipment, marked ready, with the right amount to
 * collect and the right neighbourhood.
 *
 *   admit → resolve drop-off → choose the name → quote (reused while firm) → create or adopt
 *   → read back → mark ready → finish
 *
 * Each step is a function of its own in src/orders/dispatch/ (ship.ts runs them in order; finish.ts is what the
 * worker does after an attempt, or once the job gives up); the holds it may end with are in src/domain/holds.ts.
 *
 * Resumable: the ledger records what the attempt learnt before its createShipment, with the mark that one is
 * about to be sent, before it leaves; the rest when the attempt ends (or fails). An attempt that finds that mark looks the shipment up by
 * external_order_id before creating anything, so a retry after a crash, a timeout or a dropped response
 * ("the shipment exists but we never heard") adopts the shipment instead of making a second one; a first
 * attempt has nothing to find and makes no lookup.
 */
import type { RecordedEvent } from '../../ledger/order-ledger.js';
import type { DispatchJob } from '../queues.js';
import { withOrderLock, type OrderLock } from '../order-lock.js';
import { AttemptWrites } from './attempt-writes.js';
import type { DispatchOutcome, PipelineDeps } from './deps.js';
import { attemptOrder } from './ship.js';

export type { DispatchOutcome, PipelineDeps } from './deps.js';

export async function dispatchOrder(job: DispatchJob, deps: PipelineDeps): Promise<DispatchOutcome> {
  return withOrderLock(deps.redis, deps.prefix, job.externalOrderId, (lock) => dispatchUnderLock(job, deps, lock));
}

/**
 * One attempt at an order whose lock the caller holds (the dispatch job, or the shop event that recorded the
 * order and ships it in the same job: src/orders/intake/shop-event.ts). `known` is the record as the caller just read or
 * wrote it, for the current generation; without it the record is read here.
 *
 * The attempt's ledger writes go out as each step has its answer and are all waited for before this returns,
 * so whoever takes the order lock next reads them applied (the ledger's connection is not the lock's). A write
 * that failed fails the attempt.
 */
export async function dispatchUnderLock(
  job: DispatchJob,
  deps: PipelineDeps,
  lock: OrderLock,
  known?: RecordedEvent,
): Promise<DispatchOutcome> {
  const writes = new AttemptWrites(deps.ledger, job.externalOrderId, deps.now);
  let outcome: DispatchOutcome;
  try {
    outcome = await attemptOrder(job, deps, writes, lock, known);
  } catch (error) {
    await writes.settle().catch(() => undefined);
    throw error;
  }
  // What follows the outcome goes out with the last write, not a round trip after it: the write-back job's sync
  // reads the shipment from the service before it takes the order lock (sync-delivery.ts), and so finds the write
  // applied. Either failing fails the attempt, once both have answered.
  const after = deps.afterAttempt?.(outcome);
  if (after) writes.add(after);
  await writes.settle();
  return outcome;
}
