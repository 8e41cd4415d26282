/**
 * The shop cancelled an order that has a shipment: the shipment is cancelled with the delivery service while
 * it allows it (before pickup), through the gateway under the order lock. A refusal is written on the order and
 * in the shop; a cancel job that spent its attempts is recorded so a person (and reconciliation) sees it.
 */
import { DeliveryError } from '../../domain/delivery.js';
import { canMove, FINAL_STATES } from '../../domain/order-state.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import type { ShopConfig } from '../../shops/shops.js';
import type { OrderCalls } from '../delivery-gateway.js';
import { deliveryGatewayOf, writeProblem, type DeliveryDeps } from './delivery-shop-writes.js';
import { withOrderLock } from '../order-lock.js';
import { retriesExhausted, type DeliveryJob, type FailedAttemptCount } from '../queues.js';

export type CancelOutcome =
  { kind: 'cancelled' } | { kind: 'refused'; message: string } | { kind: 'ignored'; why: string };

/**
 * The shop cancelled the order: cancel the shipment while the service allows it. Once the parcel is
 * picked up the service refuses; the refusal is written on the order and shows in reconciliation.
 */
export async function cancelDelivery(job: DeliveryJob, deps: DeliveryDeps): Promise<CancelOutcome> {
  const shop = deps.shops.get(job.shopId);
  if (!shop || !job.externalOrderId) return { kind: 'ignored', why: 'unknown shop or order' };
  const extId = job.externalOrderId;
  return withOrderLock(deps.redis, deps.prefix, extId, async (lock) => {
    const record = await deps.ledger.get(extId);
    if (!record?.shipment) return { kind: 'ignored', why: 'no shipment to cancel' };
    if (record.state === 'cancelled') return { kind: 'cancelled' };
    // A delivered or returned order is final: a late cancellation in the shop never moves it back.
    if (!canMove(record.state, 'cancelled', 'resolution'))
      return { kind: 'ignored', why: `the order is already ${record.state}` };
    const calls = deliveryGatewayOf(deps).forShop(shop).underLock(extId, lock);
    try {
      return await cancelShipment(deps, shop, record, calls);
    } catch (error) {
      if (!(error instanceof DeliveryError) || error.retryable) throw error;
      return refused(deps, shop, record, error);
    }
  });
}

async function cancelShipment(
  deps: DeliveryDeps,
  shop: ShopConfig,
  record: OrderRecord,
  calls: OrderCalls,
): Promise<CancelOutcome> {
  const shipment = record.shipment!;
  const cancelled = await calls.cancel(shipment.shipmentId, {
    reason: `order ${record.meta.orderName} cancelled in the shop`,
    by: `Relais for ${shop.name}`,
  });
  await deps.ledger.saveShipment(record.meta.externalOrderId, {
    ...shipment,
    status: cancelled.status,
    ...(cancelled.step ? { step: cancelled.step } : {}),
  });
  await endOrHoldCancelled(deps, record);
  return { kind: 'cancelled' };
}

/** The service refused the cancellation (noted on the timeline by the gateway): written on the order and in the shop. */
async function refused(
  deps: DeliveryDeps,
  shop: ShopConfig,
  record: OrderRecord,
  error: DeliveryError,
): Promise<CancelOutcome> {
  const extId = record.meta.externalOrderId;
  const shipmentId = record.shipment!.shipmentId;
  const pickedUp = error.reason === 'cancel_refused';
  const message = pickedUp
    ? `The order was cancelled in the shop, but the delivery service refused to cancel shipment ${shipmentId}: the parcel has already been picked up. Contact the courier service to stop or return it.`
    : `The order was cancelled in the shop, but the delivery service refused to cancel shipment ${shipmentId} (${error.label}): ${error.message}`;
  // The note is written only once the ledger took the refusal: an order that reached a final state meanwhile
  // (its delivery was synced by a worker that did not wait for this lock) gets no note saying otherwise.
  if (!(await deps.ledger.setState(extId, 'cancel_refused', deps.now(), 'resolution'))) {
    const current = await deps.ledger.get(extId);
    return { kind: 'ignored', why: `the order is already ${current?.state ?? 'gone'}; the refusal changes nothing` };
  }
  await writeProblem(deps, shop, record, message);
  return { kind: 'refused', message };
}

/**
 * Once its shipment is cancelled: an order the shop may bring back (StoreOrder.stoppedInShop) is held with the
 * shop's reason, not over; any other ends cancelled. One already marked ready cannot go back to held
 * (order-state.ts): it ends cancelled, and reconciliation reports it if the shop restores it (restored_after_cancel).
 */
async function endOrHoldCancelled(deps: DeliveryDeps, record: OrderRecord): Promise<void> {
  const extId = record.meta.externalOrderId;
  const stopped = record.order?.stoppedInShop;
  const reason = stopped && {
    code: stopped.code,
    message: `${stopped.message} Its shipment ${record.shipment?.shipmentId} was cancelled with the delivery service: if the shop restores the order, shipping it again needs a person (a new shipment).`,
  };
  if (reason && (await deps.ledger.hold(extId, reason, deps.now()))) return;
  await deps.ledger.setState(extId, 'cancelled', deps.now(), 'resolution');
}

/**
 * After a failed cancel attempt: when the job gave up (its last attempt, or an error no retry can help), the
 * cancellation the service never took is recorded on the order rather than left in the failed set unseen. A record
 * that fails is logged: reconciliation still reports the live shipment.
 */
export async function afterFailedCancel(
  job: DeliveryJob,
  failed: FailedAttemptCount,
  deps: DeliveryDeps,
): Promise<void> {
  if (!retriesExhausted(failed)) return;
  try {
    await recordCancelGaveUp(job, failed.error, deps);
  } catch (recordError) {
    deps.logger.error(
      { err: (recordError as Error).message },
      'could not record a cancellation that gave up; reconciliation still reports the live shipment',
    );
  }
}

/**
 * A cancel job that spent all its attempts (the service kept failing, never refused): the shipment still runs
 * while the shop shows the order cancelled. Recorded on the order (timeline, problem, a note in the shop) so a
 * person sees it; reconciliation reports the live shipment and asks again (cancelled_with_live_shipment).
 */
async function recordCancelGaveUp(job: DeliveryJob, error: Error, deps: DeliveryDeps): Promise<void> {
  const shop = deps.shops.get(job.shopId);
  const extId = job.externalOrderId;
  if (!shop || !extId) return;
  const record = await deps.ledger.get(extId);
  if (!record?.shipment || FINAL_STATES.has(record.state)) return;
  const { shipmentId } = record.shipment;
  const message = `The order was cancelled in the shop, but shipment ${shipmentId} could not be cancelled with the delivery service (${error.message}): it is still live. Reconciliation asks again; cancel it with the delivery service if the courier must not come.`;
  await deps.ledger.appendTimeline(extId, {
    at: deps.now().toISOString(),
    system: 'dispatch',
    operation: 'cancelShipment',
    outcome: 'gave_up',
    detail: `shipment ${shipmentId} is still live after the cancel job's last attempt: ${error.message}`,
  });
  deps.logger.error({ order: record.meta.orderName, shipment: shipmentId }, 'cancel job gave up; the shipment is live');
  await writeProblem(deps, shop, record, message);
}
