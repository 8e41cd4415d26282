/**
 * The heart of Relais: one order becomes exactly one shipment, marked ready, with the right amount to
 * collect and the right neighbourhood.
 *
 *   resolve neighbourhood → find an existing shipment by external_order_id → quote (reused while firm)
 *   → createShipment(orderAmountXof) → markReady
 *
 * Resumable: the ledger records progress after every external call, and before creating anything we
 * look the shipment up by external_order_id, so a retry after a crash, a timeout or a dropped response
 * ("the shipment exists but we never heard") adopts the shipment instead of making a second one.
 * Business refusals are outcomes (the order is held with the service's code and message), not
 * exceptions; only errors a retry can help are thrown, for BullMQ to retry with backoff.
 */
import type { Redis } from 'ioredis';
import type { ShopConfig, ShopRegistry } from '../config/shops.js';
import type { HoldReason, StoreOrder } from '../domain/order.js';
import type { DispatchClient } from '../dispatch/client.js';
import { DispatchError } from '../dispatch/errors.js';
import { buildCreateShipmentRequest, buildQuoteRequest, collectsCash } from '../dispatch/requests.js';
import { ErrorCode, type WireQuote, type WireShipment } from '../dispatch/wire.js';
import { resolveDeliveryAddress } from '../geo/order-address.js';
import type { NeighbourhoodResolver } from '../geo/resolver.js';
import type { AliasStore } from '../ledger/alias-store.js';
import type { OrderLedger, OrderRecord, OrderState, ShipmentProgress } from '../ledger/order-ledger.js';
import type { Logger } from '../log.js';
import type { DispatchJob } from './queues.js';
import { withOrderLock } from './order-lock.js';
import type { ShopRateLimiter } from './rate-limit.js';

export type DispatchClientLike = Pick<
  DispatchClient,
  'createQuote' | 'getQuote' | 'createShipment' | 'getShipment' | 'getShipmentByExternalOrder' | 'markReady' | 'cancelShipment'
>;

export interface PipelineDeps {
  ledger: OrderLedger;
  shops: ShopRegistry;
  dispatchClientFor(shop: ShopConfig): DispatchClientLike;
  resolver: NeighbourhoodResolver;
  /** Aliases operators added at run time, merged over the registry's. */
  aliases: AliasStore;
  redis: Redis;
  prefix: string;
  now(): Date;
  logger: Logger;
  /**
   * Fills the weights a platform leaves off its orders (WooCommerce reads them from its products) before
   * a quote; undefined when the platform's orders already carry them (Shopify).
   * A retryable failure throws (the job retries); see src/stores/woocommerce/weights.ts.
   */
  weightsFor?(shop: ShopConfig): ((order: StoreOrder) => Promise<StoreOrder>) | undefined;
  /** Told of every dispatch call the pipeline makes, as timed for the timeline (metrics: latency, errors by code). */
  onDispatchCall?(call: { operation: string; ms: number; error?: unknown }): void;
  /** Paces this shop's dispatch calls (policy.dispatchCallsPerSecond) across every worker; absent: unpaced. */
  rateLimiter?: ShopRateLimiter;
}

export type DispatchOutcome =
  | { kind: 'ready'; shipmentId: string; adopted: boolean }
  | { kind: 'awaiting_ready'; shipmentId: string }
  | { kind: 'held'; reason: HoldReason }
  | { kind: 'skipped'; why: string };

/** A quote closer than this to its expiry is replaced: createShipment would race the clock. */
export const QUOTE_SAFETY_MARGIN_MS = 60_000;

const ALREADY_DISPATCHED: ReadonlySet<OrderState> = new Set([
  'ready', 'in_delivery', 'delivered', 'delivery_failed', 'returned', 'cancelled', 'cancel_refused',
]);

/** States of a shipment that no longer needs markReady. Unknown states count as "moved on". */
const NEEDS_READY = new Set(['CREATED']);

export async function dispatchOrder(job: DispatchJob, deps: PipelineDeps): Promise<DispatchOutcome> {
  return withOrderLock(deps.redis, deps.prefix, job.externalOrderId, () => dispatchLocked(job, deps));
}

async function dispatchLocked(job: DispatchJob, deps: PipelineDeps): Promise<DispatchOutcome> {
  const { ledger } = deps;
  const record = await ledger.get(job.externalOrderId);
  if (!record) return { kind: 'skipped', why: 'unknown order' };
  if (record.meta.generation !== job.generation) return { kind: 'skipped', why: 'superseded by a replay' };
  if (ALREADY_DISPATCHED.has(record.state)) return { kind: 'skipped', why: `already ${record.state}` };
  const shop = deps.shops.get(job.shopId);
  if (!shop) return hold(deps, record, { code: 'unknown_shop', message: `shop "${job.shopId}" is no longer in the shop registry` });
  const order = record.order;
  if (!order) return hold(deps, record, { code: 'no_order_data', message: 'the order data is missing (redacted or never received); replay from the shop' });
  if (order.cancelled) return { kind: 'skipped', why: 'order cancelled' };
  if (collectsCash(order.paymentFamily) && order.amountToCollect <= 0) {
    return hold(deps, record, {
      code: 'cod_nothing_to_collect',
      message: `order ${order.orderName} is cash on delivery but nothing is left to collect; it was not shipped with 0`,
    });
  }

  const log = deps.logger.child({ shop: shop.id, order: order.orderName, externalOrderId: order.externalOrderId });
  const client = deps.dispatchClientFor(shop);
  const call = tracker(deps, order.externalOrderId, shop);

  try {
    let shipment = record.shipment;
    if (!shipment) {
      // A previous attempt may have created the shipment and died (or lost the response) before saving it.
      const existing = await call('getShipmentByExternalOrder', () => client.getShipmentByExternalOrder(order.externalOrderId));
      if (existing) {
        shipment = await saveShipment(deps, order.externalOrderId, existing, undefined);
        log.warn({ shipment: existing.shipmentId }, 'adopted a shipment created by an earlier attempt');
        await deps.ledger.setState(order.externalOrderId, 'dispatching', deps.now());
        return await finishReady(deps, shop, order, shipment, call, true);
      }
    } else {
      return await finishReady(deps, shop, order, shipment, call, false);
    }

    const neighbourhood = await resolveDropoff(deps, shop, order);
    if ('code' in neighbourhood) return hold(deps, record, neighbourhood);
    await ledger.save(order.externalOrderId, 'neighbourhood', neighbourhood);
    await ledger.setState(order.externalOrderId, 'dispatching', deps.now());

    const saved = record.quote;
    const savedIsFirm = saved !== undefined && Date.parse(saved.expiresAt) - deps.now().getTime() > QUOTE_SAFETY_MARGIN_MS;
    // Weight hook: WooCommerce orders get their parcel weight from the shop's products, only when a quote is due.
    const fillWeights = deps.weightsFor?.(shop);
    let weighed: StoreOrder | undefined;
    const quoted = async () => (weighed ??= fillWeights ? await fillWeights(order) : order);
    let quote = savedIsFirm ? saved : await newQuote(deps, shop, await quoted(), neighbourhood.name, client, call);

    let created: WireShipment;
    try {
      created = await call('createShipment', () => client.createShipment(buildCreateShipmentRequest(order, quote.quoteId)));
    } catch (error) {
      if (!isStaleQuote(error)) throw error;
      // The quote expired between steps (or the service forgot it): a fresh quote, once.
      log.info({ quote: quote.quoteId }, 'quote went stale before createShipment; re-quoting');
      quote = await newQuote(deps, shop, await quoted(), neighbourhood.name, client, call);
      created = await call('createShipment', () => client.createShipment(buildCreateShipmentRequest(order, quote.quoteId)));
    }
    shipment = await saveShipment(deps, order.externalOrderId, created, undefined);
    log.info({ shipment: created.shipmentId, amount: created.orderAmountXof }, 'shipment created');
    return await finishReady(deps, shop, order, shipment, call, false);
  } catch (error) {
    if (error instanceof DispatchError && !error.retryable) {
      return hold(deps, record, {
        code: `dispatch_${(error.code ?? `http_${error.status ?? 'error'}`).toLowerCase()}`,
        message: `the delivery service refused ${error.operation}: ${error.message}`,
      });
    }
    throw error;
  }
}

async function finishReady(
  deps: PipelineDeps,
  shop: ShopConfig,
  order: StoreOrder,
  shipment: ShipmentProgress,
  call: Tracker,
  adopted: boolean,
): Promise<DispatchOutcome> {
  if (!NEEDS_READY.has(shipment.status)) {
    await deps.ledger.setState(order.externalOrderId, 'ready', deps.now());
    return { kind: 'ready', shipmentId: shipment.shipmentId, adopted };
  }
  if (shop.policy.markReady === 'on_shop_signal') {
    await deps.ledger.setState(order.externalOrderId, 'awaiting_ready', deps.now());
    return { kind: 'awaiting_ready', shipmentId: shipment.shipmentId };
  }
  const client = deps.dispatchClientFor(shop);
  const ready = await call('markReady', () => client.markReady(shipment.shipmentId, `Relais (automatic) for ${shop.name}`));
  await saveShipment(deps, order.externalOrderId, ready, shipment, deps.now().toISOString());
  await deps.ledger.setState(order.externalOrderId, 'ready', deps.now());
  return { kind: 'ready', shipmentId: shipment.shipmentId, adopted };
}

async function resolveDropoff(deps: PipelineDeps, shop: ShopConfig, order: StoreOrder): Promise<{ name: string; confidence: number } | HoldReason> {
  const resolution = resolveDeliveryAddress(deps.resolver, order.dropoff, { country: shop.country, aliases: await deps.aliases.forShop(shop) });
  if (!resolution.ok) return { code: 'neighbourhood_not_found', message: resolution.reason };
  return { name: resolution.neighbourhood.name, confidence: resolution.confidence };
}

async function newQuote(
  deps: PipelineDeps,
  shop: ShopConfig,
  order: StoreOrder,
  neighbourhood: string,
  client: DispatchClientLike,
  call: Tracker,
): Promise<NonNullable<OrderRecord['quote']>> {
  const quote: WireQuote = await call('createQuote', () => client.createQuote(buildQuoteRequest(shop, order, neighbourhood)));
  const progress = { quoteId: quote.quoteId, expiresAt: quote.expiresAt, total: quote.total, breakdown: quote.breakdown };
  await deps.ledger.save(order.externalOrderId, 'quote', progress);
  return progress;
}

/**
 * Saves what the service said of the shipment over what was saved before. The caller passes the saved
 * progress it already holds (under the order lock nobody else writes it), so no re-read of the record.
 */
async function saveShipment(
  deps: PipelineDeps,
  externalOrderId: string,
  s: WireShipment,
  previous: ShipmentProgress | undefined,
  markedReadyAt?: string,
): Promise<ShipmentProgress> {
  const progress: ShipmentProgress = {
    shipmentId: s.shipmentId,
    status: s.status,
    trackingCode: s.trackingCode ?? previous?.trackingCode,
    publicTrackingUrl: s.publicTrackingUrl ?? previous?.publicTrackingUrl,
    orderAmountXof: s.orderAmountXof ?? previous?.orderAmountXof,
    markedReadyAt: markedReadyAt ?? previous?.markedReadyAt,
    createdAt: previous?.createdAt ?? s.createdAt ?? deps.now().toISOString(),
  };
  await deps.ledger.save(externalOrderId, 'shipment', progress);
  return progress;
}

function isStaleQuote(error: unknown): boolean {
  return (
    error instanceof DispatchError &&
    (error.code === ErrorCode.QUOTE_EXPIRED || error.code === ErrorCode.QUOTE_NOT_FOUND || (error.status === 409 && /quote/i.test(error.code ?? '')))
  );
}

async function hold(deps: PipelineDeps, record: OrderRecord, reason: HoldReason): Promise<DispatchOutcome> {
  await deps.ledger.hold(record.meta.externalOrderId, reason, deps.now());
  await deps.ledger.appendTimeline(record.meta.externalOrderId, {
    at: deps.now().toISOString(), system: 'relais', operation: 'hold', outcome: reason.code, detail: reason.message,
  });
  deps.logger.warn({ shop: record.meta.shopId, order: record.meta.orderName, code: reason.code }, `order held: ${reason.message}`);
  return { kind: 'held', reason };
}

type Tracker = <T>(operation: string, fn: () => Promise<T>) => Promise<T>;

/** Records every dispatch call on the order's timeline: what, when, how long, how it ended. */
function tracker(deps: PipelineDeps, externalOrderId: string, shop: ShopConfig): Tracker {
  return async (operation, fn) => {
    // Waiting for the shop's pacing window is not part of the call's latency.
    await deps.rateLimiter?.acquire(shop.id, shop.policy.dispatchCallsPerSecond);
    const started = Date.now();
    let result: Awaited<ReturnType<typeof fn>>;
    try {
      result = await fn();
    } catch (error) {
      const ms = Date.now() - started;
      deps.onDispatchCall?.({ operation, ms, error });
      const outcome = error instanceof DispatchError ? (error.code ?? error.kind) : 'error';
      await deps.ledger.appendTimeline(externalOrderId, {
        at: deps.now().toISOString(), system: 'dispatch', operation, outcome, ms,
        detail: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
    const ms = Date.now() - started;
    deps.onDispatchCall?.({ operation, ms });
    await deps.ledger.appendTimeline(externalOrderId, { at: deps.now().toISOString(), system: 'dispatch', operation, outcome: 'ok', ms });
    return result;
  };
}
