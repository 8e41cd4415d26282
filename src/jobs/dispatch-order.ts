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
import { DISPATCHED_STATES, type OrderLedger, type OrderRecord, type ShipmentProgress } from '../ledger/order-ledger.js';
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

/** States of a shipment that no longer needs markReady. Unknown states count as "moved on". */
const NEEDS_READY = new Set(['CREATED']);

export async function dispatchOrder(job: DispatchJob, deps: PipelineDeps): Promise<DispatchOutcome> {
  // The attempt's ledger writes are waited for after the lock is released: the release goes out behind
  // them on the same connection, so whoever takes the lock next sees them applied, and the job saves a
  // round trip. A write that failed still fails the job.
  const writes = new PendingWrites();
  let outcome: DispatchOutcome;
  try {
    outcome = await withOrderLock(deps.redis, deps.prefix, job.externalOrderId, () => dispatchLocked(job, deps, writes));
  } catch (error) {
    await writes.settle().catch(() => undefined);
    throw error;
  }
  await writes.settle();
  return outcome;
}

/** The calls a first attempt makes: lookup, quote, createShipment, markReady (paced as one batch when the shop's window allows). */
const CALLS_PER_ORDER = 4;

/** What one attempt at one order works with. */
interface Attempt {
  deps: PipelineDeps;
  shop: ShopConfig;
  order: StoreOrder;
  client: DispatchClientLike;
  call: Tracker;
  writes: PendingWrites;
  log: Logger;
}

async function dispatchLocked(job: DispatchJob, deps: PipelineDeps, writes: PendingWrites): Promise<DispatchOutcome> {
  const { ledger } = deps;
  const shop = deps.shops.get(job.shopId);
  // Read together: the record, the shop's run-time aliases, and the shop's pacing for this attempt's calls.
  const batch = shop ? Math.min(CALLS_PER_ORDER, shop.policy.dispatchCallsPerSecond) : 0;
  const [record, aliases, paced] = await Promise.all([
    ledger.get(job.externalOrderId),
    shop ? deps.aliases.forShop(shop) : undefined,
    shop && deps.rateLimiter ? deps.rateLimiter.acquire(shop.id, shop.policy.dispatchCallsPerSecond, batch).then(() => batch) : 0,
  ]);
  if (!record) return { kind: 'skipped', why: 'unknown order' };
  if (record.meta.generation !== job.generation) return { kind: 'skipped', why: 'superseded by a replay' };
  if (DISPATCHED_STATES.has(record.state)) return { kind: 'skipped', why: `already ${record.state}` };
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

  const attempt: Attempt = {
    deps,
    shop,
    order,
    client: deps.dispatchClientFor(shop),
    call: tracker(deps, order.externalOrderId, shop, paced),
    writes,
    log: deps.logger.child({ order: order.orderName, externalOrderId: order.externalOrderId }), // the worker's logger binds the shop
  };
  try {
    return await ship(attempt, record, aliases ?? {});
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

async function ship(attempt: Attempt, record: OrderRecord, aliases: Record<string, string>): Promise<DispatchOutcome> {
  const { deps, shop, order, client, call, writes, log } = attempt;
  if (record.shipment) return finishReady(attempt, record.shipment, false);

  // A previous attempt may have created the shipment and died (or lost the response) before saving it:
  // the lookup by external id must answer before anything is created. It runs beside the quote, which
  // creates nothing, so a first attempt waits for one call instead of two; a quote made for an order
  // that turns out to be shipped already is simply not used.
  const adopt = (existing: WireShipment) => {
    const shipment = saveShipment(attempt, existing, undefined);
    log.warn({ shipment: existing.shipmentId }, 'adopted a shipment created by an earlier attempt');
    writes.add(deps.ledger.setState(order.externalOrderId, 'dispatching', deps.now()));
    return finishReady(attempt, shipment, true);
  };
  const lookUp = () => call('getShipmentByExternalOrder', () => client.getShipmentByExternalOrder(order.externalOrderId));

  const neighbourhood = resolveDropoff(deps, shop, order, aliases);
  if ('code' in neighbourhood) {
    const existing = await lookUp();
    return existing ? adopt(existing) : hold(deps, record, neighbourhood);
  }

  const saved = record.quote;
  const savedIsFirm = saved !== undefined && Date.parse(saved.expiresAt) - deps.now().getTime() > QUOTE_SAFETY_MARGIN_MS;
  // Weight hook: WooCommerce orders get their parcel weight from the shop's products, only when a quote is due.
  const fillWeights = deps.weightsFor?.(shop);
  let weighed: StoreOrder | undefined;
  const quoted = async () => (weighed ??= fillWeights ? await fillWeights(order) : order);
  const [lookup, firstQuote] = await Promise.allSettled([
    lookUp(),
    savedIsFirm ? Promise.resolve(saved) : quoted().then((weighedOrder) => newQuote(attempt, weighedOrder, neighbourhood.name)),
  ]);
  if (lookup.status === 'rejected') throw lookup.reason;
  if (lookup.value) return adopt(lookup.value);
  if (firstQuote.status === 'rejected') throw firstQuote.reason;
  let quote = firstQuote.value;
  writes.add(deps.ledger.save(order.externalOrderId, 'neighbourhood', neighbourhood));
  writes.add(deps.ledger.setState(order.externalOrderId, 'dispatching', deps.now()));

  let created: WireShipment;
  try {
    created = await call('createShipment', () => client.createShipment(buildCreateShipmentRequest(order, quote.quoteId)));
  } catch (error) {
    if (!isStaleQuote(error)) throw error;
    // The quote expired between steps (or the service forgot it): a fresh quote, once.
    log.info({ quote: quote.quoteId }, 'quote went stale before createShipment; re-quoting');
    quote = await newQuote(attempt, await quoted(), neighbourhood.name);
    created = await call('createShipment', () => client.createShipment(buildCreateShipmentRequest(order, quote.quoteId)));
  }
  const shipment = saveShipment(attempt, created, undefined);
  log.info({ shipment: created.shipmentId, amount: created.orderAmountXof }, 'shipment created');
  return finishReady(attempt, shipment, false);
}

async function finishReady(attempt: Attempt, shipment: ShipmentProgress, adopted: boolean): Promise<DispatchOutcome> {
  const { deps, shop, order, client, call, writes } = attempt;
  if (!NEEDS_READY.has(shipment.status)) {
    writes.add(deps.ledger.setState(order.externalOrderId, 'ready', deps.now()));
    return { kind: 'ready', shipmentId: shipment.shipmentId, adopted };
  }
  if (shop.policy.markReady === 'on_shop_signal') {
    writes.add(deps.ledger.setState(order.externalOrderId, 'awaiting_ready', deps.now()));
    return { kind: 'awaiting_ready', shipmentId: shipment.shipmentId };
  }
  const ready = await call('markReady', () => client.markReady(shipment.shipmentId, `Relais (automatic) for ${shop.name}`));
  saveShipment(attempt, ready, shipment, deps.now().toISOString());
  writes.add(deps.ledger.setState(order.externalOrderId, 'ready', deps.now()));
  return { kind: 'ready', shipmentId: shipment.shipmentId, adopted };
}

function resolveDropoff(deps: PipelineDeps, shop: ShopConfig, order: StoreOrder, aliases: Record<string, string>): { name: string; confidence: number } | HoldReason {
  const resolution = resolveDeliveryAddress(deps.resolver, order.dropoff, { country: shop.country, aliases });
  if (!resolution.ok) return { code: 'neighbourhood_not_found', message: resolution.reason };
  return { name: resolution.neighbourhood.name, confidence: resolution.confidence };
}

async function newQuote(attempt: Attempt, order: StoreOrder, neighbourhood: string): Promise<NonNullable<OrderRecord['quote']>> {
  const { deps, shop, client, call, writes } = attempt;
  const quote: WireQuote = await call('createQuote', () => client.createQuote(buildQuoteRequest(shop, order, neighbourhood)));
  const progress = { quoteId: quote.quoteId, expiresAt: quote.expiresAt, total: quote.total, breakdown: quote.breakdown };
  writes.add(deps.ledger.save(order.externalOrderId, 'quote', progress));
  return progress;
}

/**
 * Saves what the service said of the shipment over what was saved before. The caller passes the saved
 * progress it already holds (under the order lock nobody else writes it), so no re-read of the record.
 */
function saveShipment(attempt: Attempt, s: WireShipment, previous: ShipmentProgress | undefined, markedReadyAt?: string): ShipmentProgress {
  const progress: ShipmentProgress = {
    shipmentId: s.shipmentId,
    status: s.status,
    trackingCode: s.trackingCode ?? previous?.trackingCode,
    publicTrackingUrl: s.publicTrackingUrl ?? previous?.publicTrackingUrl,
    orderAmountXof: s.orderAmountXof ?? previous?.orderAmountXof,
    markedReadyAt: markedReadyAt ?? previous?.markedReadyAt,
    createdAt: previous?.createdAt ?? s.createdAt ?? attempt.deps.now().toISOString(),
  };
  attempt.writes.add(attempt.deps.ledger.saveShipment(attempt.order.externalOrderId, progress));
  return progress;
}

/**
 * Ledger writes of one attempt, sent as soon as each step has its answer but not waited for one by one:
 * they share the ledger's connection, so Redis applies them in order, and the job waits for all of them
 * before it reports its outcome (a failed write fails the attempt, and BullMQ retries it).
 * Recording progress is an optimisation of the retry, never what prevents a duplicate: a retry that finds
 * no saved shipment still looks the shipment up by external id before creating one.
 */
class PendingWrites {
  private readonly writes: Promise<unknown>[] = [];

  add(write: Promise<unknown>): void {
    write.catch(() => undefined); // awaited in settle(); this only keeps Node from calling it unhandled meanwhile
    this.writes.push(write);
  }

  async settle(): Promise<void> {
    const failed = (await Promise.allSettled(this.writes)).find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

function isStaleQuote(error: unknown): boolean {
  return (
    error instanceof DispatchError &&
    (error.code === ErrorCode.QUOTE_EXPIRED || error.code === ErrorCode.QUOTE_NOT_FOUND || (error.status === 409 && /quote/i.test(error.code ?? '')))
  );
}

async function hold(deps: PipelineDeps, record: OrderRecord, reason: HoldReason): Promise<DispatchOutcome> {
  // Refused when another attempt dispatched the order meanwhile (this one lost its lease while frozen).
  if (!(await deps.ledger.hold(record.meta.externalOrderId, reason, deps.now()))) {
    deps.logger.warn({ order: record.meta.orderName, code: reason.code }, 'not held: the order was dispatched by another attempt meanwhile');
    return { kind: 'skipped', why: `already dispatched; not held for ${reason.code}` };
  }
  await deps.ledger.appendTimeline(record.meta.externalOrderId, {
    at: deps.now().toISOString(), system: 'relais', operation: 'hold', outcome: reason.code, detail: reason.message,
  });
  // The reason may quote the customer's address: it is on the order's timeline (relais held, the dashboard), not in the log.
  deps.logger.warn({ order: record.meta.orderName, code: reason.code }, `order held (${reason.code}): see relais held`);
  return { kind: 'held', reason };
}

type Tracker = <T>(operation: string, fn: () => Promise<T>) => Promise<T>;

/**
 * Paces and records every dispatch call on the order's timeline: what, when, how long, how it ended.
 * `paced` calls were already taken from the shop's pacing window by the caller; the rest wait their turn.
 */
function tracker(deps: PipelineDeps, externalOrderId: string, shop: ShopConfig, paced: number): Tracker {
  let prepaid = paced;
  return async (operation, fn) => {
    // Waiting for the shop's pacing window is not part of the call's latency.
    if (prepaid > 0) prepaid -= 1;
    else await deps.rateLimiter?.acquire(shop.id, shop.policy.dispatchCallsPerSecond);
    const started = Date.now();
    let result: Awaited<ReturnType<typeof fn>>;
    try {
      result = await fn();
    } catch (error) {
      const ms = Date.now() - started;
      deps.onDispatchCall?.({ operation, ms, error });
      const outcome = error instanceof DispatchError ? (error.code ?? error.kind) : 'error';
      note({ at: deps.now().toISOString(), system: 'dispatch', operation, outcome, ms, detail: error instanceof Error ? error.message : String(error) });
      throw error;
    }
    const ms = Date.now() - started;
    deps.onDispatchCall?.({ operation, ms });
    note({ at: deps.now().toISOString(), system: 'dispatch', operation, outcome: 'ok', ms });
    return result;
  };

  /**
   * The timeline line is sent without waiting for its answer: it is an account of the call, not progress
   * a retry depends on. It goes out on the ledger's connection ahead of the job's next command, and the
   * job ends by releasing the order lock on that connection, so by then Redis has applied it.
   */
  function note(entry: Parameters<OrderLedger['appendTimeline']>[1]): void {
    deps.ledger.appendTimeline(externalOrderId, entry).catch((error: unknown) => {
      deps.logger.warn({ externalOrderId, operation: entry.operation, err: (error as Error).message }, 'could not note a dispatch call on the timeline');
    });
  }
}
