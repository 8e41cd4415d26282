/**
 * What the delivery jobs (sync-delivery.ts, cancel-delivery.ts) share: their dependencies, the gateway they call
 * the delivery service through, and the writes into the shop, each recorded once done so a retry continues
 * where the last attempt stopped.
 */
import type { RedisClient } from '../../redis.js';
import type { ShopConfig, ShopRegistry } from '../../shops/shops.js';
import type { DeliveryStep } from '../../domain/shipment-status.js';
import { collectsCash, type DeliveryService, type Shipment } from '../../domain/delivery.js';
import { goodsCarried } from '../../domain/door-amount.js';
import type { DeliveryProgress, OrderLedger, OrderRecord } from '../../ledger/order-ledger.js';
import type { Logger } from '../../log.js';
import type { DispatchInfo, ShopOrderRef, ShopWriter } from '../../shops/platforms/writer.js';
import { DeliveryGateway, type DeliveryCallReport } from '../delivery-gateway.js';
import type { ShopRateLimiter } from '../rate-limit.js';

export interface DeliveryDeps {
  ledger: OrderLedger;
  shops: ShopRegistry;
  /** The shop's delivery service (the port, src/domain/delivery.ts), called through the gateway only. */
  deliveryFor(shop: ShopConfig): DeliveryService;
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
  /** Paces the delivery jobs' calls with the dispatch job's (policy.dispatchCallsPerSecond); absent: unpaced. */
  rateLimiter?: ShopRateLimiter;
  /** Told of every call to the delivery service, as timed (metrics); absent: not counted. */
  onDispatchCall?(call: DeliveryCallReport): void;
}

/** The gateway the delivery jobs call the service through (src/orders/delivery-gateway.ts). */
export function deliveryGatewayOf(deps: DeliveryDeps): DeliveryGateway {
  return new DeliveryGateway({
    deliveryFor: (shop) => deps.deliveryFor(shop),
    ledger: deps.ledger,
    now: deps.now,
    logger: deps.logger,
    ...(deps.rateLimiter ? { rateLimiter: deps.rateLimiter } : {}),
    ...(deps.onDispatchCall ? { onCall: deps.onDispatchCall } : {}),
  });
}

/** The order's delivery progress, or where it starts when nothing was recorded yet. */
export function progressOf(record: OrderRecord, serviceStatus: string, now: string): DeliveryProgress {
  return record.delivery ?? { step: 'created', serviceStatus, updatedAt: now, written: { steps: {} } };
}

export type ShopWrites = ReturnType<typeof shopWrites>;

/**
 * The writes of one sync into the shop, each recorded once done (progress saved, a timeline line with its
 * time) or noted as an error on the timeline before the job fails, so a retry continues where this one stopped.
 */
export function shopWrites(
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
  const line = (operation: string, outcome: string, started: number, detail?: string) =>
    deps.ledger.appendTimeline(extId, {
      at: deps.now().toISOString(),
      system: 'shop',
      operation,
      outcome,
      ms: Date.now() - started,
      ...(detail === undefined ? {} : { detail }),
    });
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
        await line(operation, 'error', started, (error as Error).message);
        throw error;
      }
      state.progress = mark(state.progress);
      await deps.ledger.save(extId, 'delivery', state.progress);
      await line(operation, 'ok', started);
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

export function shopOrderRef(shop: ShopConfig, record: OrderRecord): ShopOrderRef {
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
    goods: cashOnDelivery ? (goodsCarried(record, shipment) ?? 0) : 0,
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
export function stepTime(shipment: Shipment, step: DeliveryStep, fallback: string): string {
  const at = shipment.statusHistory?.filter((h) => h.step === step).at(-1)?.at;
  return at !== undefined && !Number.isNaN(Date.parse(at)) ? new Date(at).toISOString() : fallback;
}

/** A problem on the order with a shipment: kept with its delivery progress (the order's page), and noted in the shop. */
export async function writeProblem(
  deps: DeliveryDeps,
  shop: ShopConfig,
  record: OrderRecord,
  message: string,
): Promise<void> {
  const delivery = progressOf(record, record.shipment?.status ?? 'unknown', deps.now().toISOString());
  await deps.ledger.save(record.meta.externalOrderId, 'delivery', { ...delivery, problem: message });
  await deps.writerFor(shop)?.recordProblem(shopOrderRef(shop, record), message);
}
