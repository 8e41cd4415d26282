/**
 * Follows a parcel and writes each step into the shop.
 *
 * A delivery webhook (or the polling fallback, or the dispatch job once a shipment is ready) only says
 * "look at this shipment". The job reads the shipment with getShipment: that read, not the payload,
 * decides the state. The step moves forward only (duplicates and out-of-order events change nothing);
 * an unknown state is recorded and reported, never a crash. Each write into the shop is recorded in
 * the ledger once done, so a retry continues where the last attempt stopped.
 */
import type { ShopConfig } from '../../shops/shops.js';
import {
  FINAL_STEPS,
  movesForward,
  showsMarkedReady,
  stepsPassedBefore,
  type DeliveryStep,
} from '../../domain/shipment-status.js';
import { DeliveryError, type Shipment } from '../../domain/delivery.js';
import type { OrderState } from '../../domain/order-state.js';
import type { DeliveryProgress, OrderRecord, ShipmentProgress } from '../../ledger/order-ledger.js';
import { collectedCovers, goodsCarried, goodsOwed } from '../../domain/door-amount.js';
import {
  deliveryGatewayOf,
  progressOf,
  shopWrites,
  stepTime,
  type DeliveryDeps,
  type ShopWrites,
} from './delivery-shop-writes.js';
import { withOrderLock } from '../order-lock.js';
import type { DeliveryJob } from '../queues.js';

export type { DeliveryDeps } from './delivery-shop-writes.js';
export { afterFailedCancel, cancelDelivery, type CancelOutcome } from './cancel-delivery.js';

export type DeliveryOutcome =
  | { kind: 'synced'; step: DeliveryStep; moved: boolean; wrote: string[] }
  | { kind: 'unknown_state'; state: string }
  | { kind: 'ignored'; why: string };

const STATE_OF_STEP: Record<DeliveryStep, OrderState> = {
  created: 'awaiting_ready',
  ready: 'ready',
  assigned: 'in_delivery',
  picked_up: 'in_delivery',
  in_transit: 'in_delivery',
  out_for_delivery: 'in_delivery',
  delivery_failed: 'delivery_failed',
  delivered: 'delivered',
  returned: 'returned',
  cancelled: 'cancelled',
};

/** Steps worth a line in the shop (assignment is internal to the service). */
const STEPS_WRITTEN: ReadonlySet<DeliveryStep> = new Set([
  'picked_up',
  'in_transit',
  'out_for_delivery',
  'delivery_failed',
  'delivered',
  'returned',
  'cancelled',
]);

export async function syncDelivery(job: DeliveryJob, deps: DeliveryDeps): Promise<DeliveryOutcome> {
  const shop = deps.shops.get(job.shopId);
  if (!shop) return { kind: 'ignored', why: `unknown shop ${job.shopId}` };
  const gateway = deliveryGatewayOf(deps);
  const service = gateway.forShop(shop);

  let shipment: Shipment | undefined;
  try {
    // Read before the order is known (a webhook names a shipment): on no order's timeline.
    if (job.shipmentId) shipment = await service.shipment(job.shipmentId);
    else if (job.externalOrderId) shipment = await service.shipmentForOrder(job.externalOrderId);
  } catch (error) {
    // A transient "not found" is the lookup by external order saying the shipment may exist: look again.
    if (error instanceof DeliveryError && error.notFound && !error.retryable)
      return { kind: 'ignored', why: 'no such shipment for this organisation' };
    throw error;
  }
  if (!shipment) return { kind: 'ignored', why: 'no shipment id or external order id found' };
  const extId = shipment.externalOrderId ?? job.externalOrderId;
  if (!extId) return { kind: 'ignored', why: 'the shipment carries no external order id' };
  const read = shipment;

  return withOrderLock(deps.redis, deps.prefix, extId, async () => {
    const record = await deps.ledger.get(extId);
    if (!record) return { kind: 'ignored', why: `order ${extId} is not in the ledger` };
    // Several shops may share one dispatch organisation, whose webhooks go to a single URL: the order
    // then belongs to another shop of the same organisation. Any other shop's order is refused.
    const owner = record.meta.shopId === shop.id ? shop : deps.shops.get(record.meta.shopId);
    if (!owner || !gateway.forShop(owner).sameOrganisation(service)) {
      deps.logger.warn({ owner: record.meta.shopId }, 'delivery webhook for an order of another organisation ignored');
      return { kind: 'ignored', why: 'shipment belongs to another organisation' };
    }
    if (record.shipment && record.shipment.shipmentId !== read.shipmentId)
      return notTheOrdersShipment(deps, record, read);
    // Read before the lock was taken: a shipment the ledger has seen end since (a cancellation made while this
    // job waited for the order) is not reopened by the older read, nor written into the shop as ready.
    const ended = record.shipment?.step;
    if (ended !== undefined && FINAL_STEPS.has(ended) && read.step !== ended) {
      deps.logger.info({ order: record.meta.orderName, read: read.status, ended }, 'shipment read before it ended');
      return { kind: 'ignored', why: `read as ${read.status} before the shipment was ${ended}` };
    }
    return applyShipment(deps, owner, record, read);
  });
}

/**
 * Another shipment carrying the order's reference (a duplicate made by hand or by another tool, often cancelled
 * as reconciliation advises): what it says is never applied to the order, whose own shipment is the ledger's.
 * Noted on the order's timeline; reconciliation reports the duplicate.
 */
async function notTheOrdersShipment(
  deps: DeliveryDeps,
  record: OrderRecord,
  shipment: Shipment,
): Promise<DeliveryOutcome> {
  const own = record.shipment!.shipmentId;
  await deps.ledger.appendTimeline(record.meta.externalOrderId, {
    at: deps.now().toISOString(),
    system: 'dispatch',
    operation: 'getShipment',
    outcome: 'not_this_orders_shipment',
    detail: `shipment ${shipment.shipmentId} (${shipment.status}) carries this order's reference but is not its shipment ${own}; nothing was applied`,
  });
  deps.logger.warn(
    { order: record.meta.orderName, shipment: shipment.shipmentId, own },
    "a shipment with the order's reference that is not its own; ignored",
  );
  return { kind: 'ignored', why: `shipment ${shipment.shipmentId} is not the order's shipment ${own}` };
}

/** One shipment read being applied to its order. */
interface ShipmentSync {
  deps: DeliveryDeps;
  shop: ShopConfig;
  record: OrderRecord;
  shipment: Shipment;
}

async function applyShipment(
  deps: DeliveryDeps,
  shop: ShopConfig,
  record: OrderRecord,
  shipment: Shipment,
): Promise<DeliveryOutcome> {
  const now = deps.now().toISOString();
  const step = shipment.step;
  const previous = progressOf(record, record.shipment?.status ?? shipment.status, now);
  // "Marked ready" is known from Relais's own 2xx markReady, or from a state the profile maps past ready.
  const markedReady = record.shipment?.markedReadyAt !== undefined || showsMarkedReady(step);
  const sync: ShipmentSync = { deps, shop, record, shipment };
  if (!step) return recordUnknownState(sync, { previous, markedReady, now });

  const moved = record.delivery === undefined || movesForward(previous.step, step);
  let progress: DeliveryProgress = moved
    ? { ...previous, step, serviceStatus: shipment.status, updatedAt: now }
    : previous;
  if (moved) await recordStep(sync, { step, progress, now });

  const writer = deps.writerFor(shop);
  const write = writer && record.order ? shopWrites(deps, shop, record, shipment, writer, progress) : undefined;
  if (write) {
    // The tracking link goes out as soon as the shipment is known to be ready, before any step is written.
    if (!write.progress.written.dispatch && markedReady && step !== 'cancelled') await write.trackingLink(now);
    await writeStep(write, shipment, now);
    await writePaidOrShortfall(sync, write, now);
    progress = write.progress;
  }
  return { kind: 'synced', step: progress.step, moved, wrote: write?.wrote ?? [] };
}

/**
 * An unknown name is never progress: recorded, counted, shown on the order's page and in reconciliation; the
 * order stays in flight, so polling keeps reading it until the service shows a state the profile knows.
 */
async function recordUnknownState(
  sync: ShipmentSync,
  at: { previous: DeliveryProgress; markedReady: boolean; now: string },
): Promise<DeliveryOutcome> {
  const { deps, shop, record, shipment } = sync;
  const extId = record.meta.externalOrderId;
  const unknownStates = [...new Set([...(at.previous.unknownStates ?? []), shipment.status])];
  const progress: DeliveryProgress = { ...at.previous, unknownStates };
  await deps.ledger.save(extId, 'delivery', progress);
  await deps.ledger.appendTimeline(extId, {
    at: at.now,
    system: 'dispatch',
    operation: 'getShipment',
    outcome: 'unknown_state',
    detail: shipment.status,
  });
  deps.logger.warn(
    { order: record.meta.orderName, state: shipment.status },
    'shipment state unknown to the wire profile; recorded, the order does not move',
  );
  deps.onUnknownState?.(shop.id, shipment.status);
  // The tracking link still goes out once the shipment is known to be ready: the customer can follow it.
  const writer = deps.writerFor(shop);
  if (writer && record.order && at.markedReady && !progress.written.dispatch) {
    const write = shopWrites(deps, shop, record, shipment, writer, progress);
    await write.trackingLink(at.now);
  }
  return { kind: 'unknown_state', state: shipment.status };
}

/** The order moved to a new step: its progress, its shipment and (unless held or lagging) its state. */
async function recordStep(
  sync: ShipmentSync,
  to: { step: DeliveryStep; progress: DeliveryProgress; now: string },
): Promise<void> {
  const { step, now } = to;
  const { deps, shop, record, shipment } = sync;
  const extId = record.meta.externalOrderId;
  await deps.ledger.save(extId, 'delivery', to.progress);
  const saved: ShipmentProgress = record.shipment ?? {
    shipmentId: shipment.shipmentId,
    status: shipment.status,
    createdAt: now,
  };
  const markedReadyAt = saved.markedReadyAt ?? (showsMarkedReady(step) ? now : undefined);
  await deps.ledger.saveShipment(extId, {
    ...saved,
    status: shipment.status,
    step,
    trackingCode: shipment.trackingCode ?? saved.trackingCode,
    publicTrackingUrl: shipment.publicTrackingUrl ?? saved.publicTrackingUrl,
    ...(markedReadyAt === undefined ? {} : { markedReadyAt }),
  });
  // A service still showing `created` after Relais's own markReady answered 2xx is lagging: no step back.
  const lagging = step === 'created' && record.shipment?.markedReadyAt !== undefined;
  // The move is progress: the ledger refuses it for a held order (domain/order-state.ts, MoveCause), which
  // keeps its hold and reason until what resolves it (a replay, the shop) moves it; the step is recorded above.
  if (!lagging && (record.state !== 'cancel_refused' || FINAL_STEPS.has(step))) {
    const moved = await deps.ledger.setState(extId, STATE_OF_STEP[step], deps.now());
    if (!moved && record.state === 'held')
      deps.logger.info({ order: record.meta.orderName, step }, 'delivery step recorded; the order stays held');
  }
  deps.onStep?.(shop.id, step);
}

/**
 * The step's line in the shop, once per step worth one. The steps the shipment went through while its states were
 * unknown to the profile (issue 28) are written first, in order.
 */
async function writeStep(write: ShopWrites, shipment: Shipment, now: string): Promise<void> {
  const step = write.progress.step;
  const missed = write.progress.unknownStates?.length ? stepsPassedBefore(shipment.statusHistory ?? [], step) : [];
  for (const current of [...missed, step]) {
    if (!STEPS_WRITTEN.has(current) || write.progress.written.steps[current]) continue;
    await write.track(
      `recordStep ${current}`,
      (ref, info) => write.writer.recordStep(ref, current, stepTime(shipment, current, now), info),
      (p) => ({ ...p, written: { ...p.written, steps: { ...p.written.steps, [current]: now } } }),
    );
  }
}

/**
 * Paid only once delivered and what was collected covers what the order owes; never for a failed or returned
 * delivery. Short of it, the merchant gets a note with both figures, once.
 */
async function writePaidOrShortfall(sync: ShipmentSync, write: ShopWrites, now: string): Promise<void> {
  const { shop, record, shipment } = sync;
  const { progress } = write;
  if (progress.step !== 'delivered' || !write.info.cashOnDelivery) return;
  if (progress.written.paid || progress.written.shortfall) return;
  const owed = goodsOwed(record.order!, shop.policy.deliveryFeePaidBy);
  const collected = goodsCarried(record, shipment);
  if (owed.ok && !collectedCovers(collected, owed.goods)) {
    const message = `delivered, but the courier collected ${collected === undefined ? 'an unknown amount' : `${collected} XOF`} for the goods (shipment ${shipment.shipmentId}) while the order owes ${owed.goods} XOF: it was not marked as paid. Settle the difference with the customer, then mark it paid.`;
    await write.track(
      'recordProblem shortfall',
      (ref) => write.writer.recordProblem(ref, message),
      (p) => ({ ...p, problem: message, written: { ...p.written, shortfall: now } }),
    );
    return;
  }
  await write.track(
    'markPaid',
    (ref, info) => write.writer.markPaid(ref, info),
    (p) => ({ ...p, written: { ...p.written, paid: now } }),
  );
}
