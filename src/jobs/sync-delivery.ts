/**
 * Follows a parcel and writes each step into the shop.
 *
 * A delivery webhook (or the polling fallback, or the dispatch job once a shipment is ready) only says
 * "look at this shipment". The job reads the shipment with getShipment: that read, not the payload,
 * decides the state. The step moves forward only (duplicates and out-of-order events change nothing);
 * an unknown state is recorded and reported, never a crash. Each write into the shop is recorded in
 * the ledger once done, so a retry continues where the last attempt stopped.
 */
import type { RedisClient } from '../redis.js';
import type { ShopConfig, ShopRegistry } from '../config/shops.js';
import {
  FINAL_STEPS,
  movesForward,
  showsMarkedReady,
  stepsPassedBefore,
  type DeliveryStep,
} from '../domain/shipment-status.js';
import { collectsCash, DeliveryError, type DeliveryService, type Shipment } from '../domain/delivery.js';
import { canMove, FINAL_STATES, type OrderState } from '../domain/order-state.js';
import type { DeliveryProgress, OrderLedger, OrderRecord, ShipmentProgress } from '../ledger/order-ledger.js';
import type { Logger } from '../log.js';
import type { DispatchInfo, ShopOrderRef, ShopWriter } from '../stores/writer.js';
import { collectedCovers, goodsOwed } from '../domain/door-amount.js';
import { withOrderLock } from './order-lock.js';
import type { DeliveryJob } from './queues.js';

export interface DeliveryDeps {
  ledger: OrderLedger;
  shops: ShopRegistry;
  /** The shop's delivery service (the port, src/domain/delivery.ts). */
  deliveryFor(shop: ShopConfig): Pick<DeliveryService, 'shipment' | 'shipmentForOrder' | 'cancel' | 'carrierName'>;
  /** The shop writer; undefined when the shop has no write access configured (nothing is written). */
  writerFor(shop: ShopConfig): ShopWriter | undefined;
  redis: RedisClient;
  prefix: string;
  now(): Date;
  logger: Logger;
  /** Called when a state the shop's wire profile does not know shows up (metrics, the order's page, reconcile). */
  onUnknownState?(shopId: string, state: string): void;
  /** Called once when an order moves to a new delivery step, as soon as the ledger holds it (metrics: delivered). */
  onStep?(shopId: string, step: DeliveryStep): void;
}

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
  const delivery = deps.deliveryFor(shop);

  let shipment: Shipment | undefined;
  try {
    if (job.shipmentId) shipment = await delivery.shipment(job.shipmentId);
    else if (job.externalOrderId) shipment = await delivery.shipmentForOrder(job.externalOrderId);
  } catch (error) {
    // A transient "not found" is the lookup by external order saying the shipment may exist: look again.
    if (error instanceof DeliveryError && error.notFound && !error.retryable)
      return { kind: 'ignored', why: 'no such shipment for this organisation' };
    throw error;
  }
  if (!shipment) return { kind: 'ignored', why: 'no shipment id or external order id found' };
  const extId = shipment.externalOrderId ?? job.externalOrderId;
  if (!extId) return { kind: 'ignored', why: 'the shipment carries no external order id' };

  return withOrderLock(deps.redis, deps.prefix, extId, async () => {
    const record = await deps.ledger.get(extId);
    if (!record) return { kind: 'ignored', why: `order ${extId} is not in the ledger` };
    // Several shops may share one dispatch organisation, whose webhooks go to a single URL: the order
    // then belongs to another shop of the same organisation (same key). Any other shop's order is refused.
    const owner = record.meta.shopId === shop.id ? shop : deps.shops.get(record.meta.shopId);
    if (!owner || owner.dispatch.apiKey.reveal() !== shop.dispatch.apiKey.reveal()) {
      deps.logger.warn({ owner: record.meta.shopId }, 'delivery webhook for an order of another organisation ignored');
      return { kind: 'ignored', why: 'shipment belongs to another organisation' };
    }
    if (record.shipment && record.shipment.shipmentId !== shipment.shipmentId)
      return notTheOrdersShipment(deps, record, shipment);
    // Read before the lock was taken: a shipment the ledger has seen end since (a cancellation made while this
    // job waited for the order) is not reopened by the older read, nor written into the shop as ready.
    const ended = record.shipment?.step;
    if (ended !== undefined && FINAL_STEPS.has(ended) && shipment.step !== ended) {
      deps.logger.info({ order: record.meta.orderName, read: shipment.status, ended }, 'shipment read before it ended');
      return { kind: 'ignored', why: `read as ${shipment.status} before the shipment was ${ended}` };
    }
    return applyShipment(deps, owner, record, shipment);
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

async function applyShipment(
  deps: DeliveryDeps,
  shop: ShopConfig,
  record: OrderRecord,
  shipment: Shipment,
): Promise<DeliveryOutcome> {
  const extId = record.meta.externalOrderId;
  const now = deps.now().toISOString();
  const step = shipment.step;
  const previous: DeliveryProgress = record.delivery ?? {
    step: 'created',
    serviceStatus: record.shipment?.status ?? shipment.status,
    updatedAt: now,
    written: { steps: {} },
  };
  // "Marked ready" is known from Relais's own 2xx markReady, or from a state the profile maps past ready.
  const markedReady = record.shipment?.markedReadyAt !== undefined || showsMarkedReady(step);

  if (!step) {
    // An unknown name is never progress: recorded, counted, shown on the order's page and in reconciliation;
    // the order stays in flight, so polling keeps reading it until the service shows a state the profile knows.
    const unknownStates = [...new Set([...(previous.unknownStates ?? []), shipment.status])];
    const progress: DeliveryProgress = { ...previous, unknownStates };
    await deps.ledger.save(extId, 'delivery', progress);
    await deps.ledger.appendTimeline(extId, {
      at: now,
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
    if (writer && record.order && markedReady && !progress.written.dispatch) {
      const write = shopWrites(deps, shop, record, shipment, writer, progress);
      await write.trackingLink(now);
    }
    return { kind: 'unknown_state', state: shipment.status };
  }

  const moved = record.delivery === undefined || movesForward(previous.step, step);
  let progress: DeliveryProgress = moved
    ? { ...previous, step, serviceStatus: shipment.status, updatedAt: now }
    : previous;
  if (moved) {
    await deps.ledger.save(extId, 'delivery', progress);
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

  const writer = deps.writerFor(shop);
  const write = writer && record.order ? shopWrites(deps, shop, record, shipment, writer, progress) : undefined;
  if (write) {
    // The tracking link goes out as soon as the shipment is known to be ready, before any step is written.
    if (!write.progress.written.dispatch && markedReady && step !== 'cancelled') await write.trackingLink(now);
    // The steps the shipment went through while its states were unknown to the profile (issue 28): written first, in order.
    const missed = write.progress.unknownStates?.length ? stepsPassedBefore(shipment.statusHistory ?? [], step) : [];
    for (const current of [...missed, write.progress.step]) {
      if (!STEPS_WRITTEN.has(current) || write.progress.written.steps[current]) continue;
      await write.track(
        `recordStep ${current}`,
        (ref, info) => write.writer.recordStep(ref, current, stepTime(shipment, current, now), info),
        (p) => ({
          ...p,
          written: { ...p.written, steps: { ...p.written.steps, [current]: now } },
        }),
      );
    }
    // Paid only once delivered and what was collected covers what the order owes; never for a failed or
    // returned delivery. Short of it, the merchant gets a note with both figures, once.
    const { progress: written } = write;
    if (
      written.step === 'delivered' &&
      write.info.cashOnDelivery &&
      !written.written.paid &&
      !written.written.shortfall
    ) {
      const owed = goodsOwed(record.order!, shop.policy.deliveryFeePaidBy);
      const collected = shipment.orderAmountXof ?? record.shipment?.orderAmountXof ?? record.door?.goods;
      if (owed.ok && !collectedCovers(collected, owed.goods)) {
        const message = `delivered, but the courier collected ${collected === undefined ? 'an unknown amount' : `${collected} XOF`} for the goods (shipment ${shipment.shipmentId}) while the order owes ${owed.goods} XOF: it was not marked as paid. Settle the difference with the customer, then mark it paid.`;
        await write.track(
          'recordProblem shortfall',
          (ref) => write.writer.recordProblem(ref, message),
          (p) => ({ ...p, problem: message, written: { ...p.written, shortfall: now } }),
        );
      } else {
        await write.track(
          'markPaid',
          (ref, info) => write.writer.markPaid(ref, info),
          (p) => ({ ...p, written: { ...p.written, paid: now } }),
        );
      }
    }
    progress = write.progress;
  }
  return { kind: 'synced', step: progress.step, moved, wrote: write?.wrote ?? [] };
}

/**
 * The writes of one sync into the shop, each recorded once done (progress saved, a timeline line with its
 * time) or noted as an error on the timeline before the job fails, so a retry continues where this one stopped.
 */
function shopWrites(
  deps: DeliveryDeps,
  shop: ShopConfig,
  record: OrderRecord,
  shipment: Shipment,
  writer: ShopWriter,
  start: DeliveryProgress,
) {
  const extId = record.meta.externalOrderId;
  const ref = shopOrderRef(shop, record);
  const info = dispatchInfo(shop, record, shipment, deps.deliveryFor(shop).carrierName);
  const state = {
    writer,
    info,
    progress: start,
    wrote: [] as string[],
    async track(
      operation: string,
      run: (ref: ShopOrderRef, info: DispatchInfo) => Promise<void>,
      mark: (p: DeliveryProgress) => DeliveryProgress,
    ): Promise<void> {
      const started = Date.now();
      try {
        await run(ref, info);
      } catch (error) {
        await deps.ledger.appendTimeline(extId, {
          at: deps.now().toISOString(),
          system: 'shop',
          operation,
          outcome: 'error',
          ms: Date.now() - started,
          detail: (error as Error).message,
        });
        throw error;
      }
      state.progress = mark(state.progress);
      await deps.ledger.save(extId, 'delivery', state.progress);
      await deps.ledger.appendTimeline(extId, {
        at: deps.now().toISOString(),
        system: 'shop',
        operation,
        outcome: 'ok',
        ms: Date.now() - started,
      });
      state.wrote.push(operation);
    },
    /** The shipment reference and the tracking link for the customer. */
    trackingLink(at: string): Promise<void> {
      return state.track(
        'recordDispatch',
        (r, i) => writer.recordDispatch(r, i),
        (p) => ({ ...p, written: { ...p.written, dispatch: at } }),
      );
    },
  };
  return state;
}

function shopOrderRef(shop: ShopConfig, record: OrderRecord): ShopOrderRef {
  return {
    shopId: shop.id,
    orderId: record.meta.orderId,
    orderName: record.meta.orderName,
    externalOrderId: record.meta.externalOrderId,
  };
}

/** `carrierName`: the shop's delivery service's (dispatch.carrierName), shown with the tracking link. */
function dispatchInfo(shop: ShopConfig, record: OrderRecord, shipment: Shipment, carrierName: string): DispatchInfo {
  const order = record.order!;
  const cashOnDelivery = collectsCash(order.paymentFamily);
  return {
    shipmentId: shipment.shipmentId,
    trackingCode: shipment.trackingCode ?? record.shipment?.trackingCode,
    publicTrackingUrl: shipment.publicTrackingUrl ?? record.shipment?.publicTrackingUrl,
    // What the shipment carries for the goods (read back from the service), else what Relais sent.
    amountToCollect: cashOnDelivery
      ? (shipment.orderAmountXof ?? record.shipment?.orderAmountXof ?? record.door?.goods ?? 0)
      : 0,
    ...(cashOnDelivery && record.door ? { door: record.door } : {}),
    cashOnDelivery,
    neighbourhood: record.neighbourhood?.name,
    quote: record.quote
      ? { quoteId: record.quote.quoteId, total: record.quote.total, breakdown: record.quote.breakdown }
      : undefined,
    carrierName,
    notifyCustomer: shop.policy.notifyCustomer,
  };
}

/** When the service says the step happened (its status history), so a late write (a poll) keeps the real time. */
function stepTime(shipment: Shipment, step: DeliveryStep, fallback: string): string {
  const at = shipment.statusHistory?.filter((h) => h.step === step).at(-1)?.at;
  return at !== undefined && !Number.isNaN(Date.parse(at)) ? new Date(at).toISOString() : fallback;
}

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
    const delivery = deps.deliveryFor(shop);
    await lock.confirm('cancelShipment');
    const started = Date.now();
    try {
      const cancelled = await delivery.cancel(record.shipment.shipmentId, {
        reason: `order ${record.meta.orderName} cancelled in the shop`,
        by: `Relais for ${shop.name}`,
      });
      await deps.ledger.appendTimeline(extId, {
        at: deps.now().toISOString(),
        system: 'dispatch',
        operation: 'cancelShipment',
        outcome: 'ok',
        ms: Date.now() - started,
      });
      await deps.ledger.saveShipment(extId, {
        ...record.shipment,
        status: cancelled.status,
        ...(cancelled.step ? { step: cancelled.step } : {}),
      });
      await endOrHoldCancelled(deps, record);
      return { kind: 'cancelled' };
    } catch (error) {
      if (!(error instanceof DeliveryError) || error.retryable) throw error;
      await deps.ledger.appendTimeline(extId, {
        at: deps.now().toISOString(),
        system: 'dispatch',
        operation: 'cancelShipment',
        outcome: error.label,
        ms: Date.now() - started,
        detail: error.message,
      });
      const pickedUp = error.reason === 'cancel_refused';
      const message = pickedUp
        ? `The order was cancelled in the shop, but the delivery service refused to cancel shipment ${record.shipment.shipmentId}: the parcel has already been picked up. Contact the courier service to stop or return it.`
        : `The order was cancelled in the shop, but the delivery service refused to cancel shipment ${record.shipment.shipmentId} (${error.label}): ${error.message}`;
      // The note is written only once the ledger took the refusal: an order that reached a final state meanwhile
      // (its delivery was synced by a worker that did not wait for this lock) gets no note saying otherwise.
      if (!(await deps.ledger.setState(extId, 'cancel_refused', deps.now(), 'resolution'))) {
        const current = await deps.ledger.get(extId);
        return {
          kind: 'ignored',
          why: `the order is already ${current?.state ?? 'gone'}; the refusal changes nothing`,
        };
      }
      await writeProblem(deps, shop, record, message);
      return { kind: 'refused', message };
    }
  });
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
 * A cancel job that spent all its attempts (the service kept failing, never refused): the shipment still runs
 * while the shop shows the order cancelled. Recorded on the order (timeline, problem, a note in the shop) so a
 * person sees it; reconciliation reports the live shipment and asks again (cancelled_with_live_shipment).
 */
export async function recordCancelGaveUp(job: DeliveryJob, error: Error, deps: DeliveryDeps): Promise<void> {
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

/** A problem on the order with a shipment: kept with its delivery progress (the order's page), and noted in the shop. */
async function writeProblem(deps: DeliveryDeps, shop: ShopConfig, record: OrderRecord, message: string): Promise<void> {
  const delivery: DeliveryProgress = record.delivery ?? {
    step: 'created',
    serviceStatus: record.shipment?.status ?? 'unknown',
    updatedAt: deps.now().toISOString(),
    written: { steps: {} },
  };
  await deps.ledger.save(record.meta.externalOrderId, 'delivery', { ...delivery, problem: message });
  await deps.writerFor(shop)?.recordProblem(shopOrderRef(shop, record), message);
}
