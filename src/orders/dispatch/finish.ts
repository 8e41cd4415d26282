/**
 * The finish step: what follows an attempt's outcome, and what happens when the dispatch job gives up. The
 * worker (src/main/worker-queues.ts) only calls these.
 */
import { holdFor } from '../../domain/holds.js';
import type { OrderLedger } from '../../ledger/order-ledger.js';
import type { Logger } from '../../log.js';
import {
  retriesExhausted,
  stableJobId,
  type DeliveryJob,
  type DispatchJob,
  type FailedAttemptCount,
  type MaintenanceJob,
} from '../queues.js';
import type { DispatchOutcome } from './deps.js';

/** A queue as the finish step uses it. */
export interface QueuePort<T> {
  add(name: string, data: T, options?: { jobId?: string }): Promise<unknown>;
}

export interface FinishPorts {
  deliveries: QueuePort<DeliveryJob>;
  maintenance: QueuePort<MaintenanceJob>;
}

/**
 * After an attempt: a ready order's tracking link goes into the shop now (the delivery sync) rather than at the
 * first delivery webhook; an order held for want of a priced name has the service asked about its candidates
 * again (the map refresh), once per shop and set of names.
 */
export async function afterDispatch(shopId: string, outcome: DispatchOutcome, ports: FinishPorts): Promise<void> {
  if (outcome.kind === 'held' && outcome.names) {
    const names = outcome.names;
    await ports.maintenance.add(
      'map-refresh',
      { task: 'map-refresh', shopId, names },
      { jobId: stableJobId('map-refresh', shopId, ...names) },
    );
  }
  if (outcome.kind !== 'ready') return;
  await ports.deliveries.add('sync', { shopId, shipmentId: outcome.shipmentId, trigger: 'ready' });
}

/** A failed dispatch attempt, as BullMQ reports it. */
export interface FailedAttempt extends FailedAttemptCount {
  job: DispatchJob;
  jobId: string | undefined;
}

export interface GaveUpPorts {
  ledger: Pick<OrderLedger, 'hold'>;
  now(): Date;
  logger: Logger;
}

/**
 * After a failed dispatch attempt: logged, and when it was the job's last (or no retry can help), its order is held
 * (holdAfterRetriesExhausted). The warning is written before anything is awaited.
 */
export async function afterFailedAttempt(failed: FailedAttempt, ports: GaveUpPorts): Promise<void> {
  const exhausted = retriesExhausted(failed);
  ports.logger.warn(
    { job: failed.jobId, shop: failed.job.shopId, attempt: failed.attemptsMade, err: failed.error.message, exhausted },
    'dispatch attempt failed',
  );
  if (exhausted) await holdAfterRetriesExhausted(failed, ports);
}

/**
 * A dispatch job that gave up holds its order with the last error rather than leave it in the failed set unseen.
 * Not held when another attempt dispatched it meanwhile. A hold that cannot be recorded is logged: the order is
 * not lost either way, as reconciliation finds an eligible order without a shipment and enqueues it again.
 */
async function holdAfterRetriesExhausted(failed: FailedAttempt, ports: GaveUpPorts): Promise<void> {
  const { job, jobId } = failed;
  // The last error says which service failed (the delivery service, or the shop when reading weights).
  const reason = holdFor('dispatch_unavailable', { attempts: failed.attemptsMade, lastError: failed.error.message });
  try {
    const held = await ports.ledger.hold(job.externalOrderId, reason, ports.now());
    if (!held)
      ports.logger.info(
        { job: jobId, shop: job.shopId },
        'dispatch job gave up, but the order was dispatched by another attempt: not held',
      );
  } catch (holdError) {
    ports.logger.error(
      { job: jobId, err: (holdError as Error).message },
      'could not record the hold of an order whose dispatch failed',
    );
  }
}
