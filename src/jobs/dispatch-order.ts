/**
 * The heart of Relais: one order becomes exactly one shipment, marked ready, with the right amount to
 * collect and the right neighbourhood.
 *
 *   resolve neighbourhood → quote (reused while firm) → createShipment(orderAmountXof) → markReady
 *
 * Resumable: the ledger records progress after every external call, and records that a createShipment is
 * about to be sent before it leaves. An attempt that finds that mark looks the shipment up by
 * external_order_id before creating anything, so a retry after a crash, a timeout or a dropped response
 * ("the shipment exists but we never heard") adopts the shipment instead of making a second one; a first
 * attempt has nothing to find and makes no lookup.
 * Business refusals are outcomes (the order is held with the service's code and message), not
 * exceptions; only errors a retry can help are thrown, for BullMQ to retry with backoff.
 */
import type { RedisClient } from '../redis.js';
import type { ShopConfig, ShopRegistry } from '../config/shops.js';
import type { HoldReason, StoreOrder } from '../domain/order.js';
import {
  collectsCash,
  DeliveryError,
  type DeliveryService,
  type Quote,
  type QuoteRequest,
  type Shipment,
} from '../domain/delivery.js';
import { doorAmount, goodsOwed } from '../domain/door-amount.js';
import { xof } from '../domain/money.js';
import { showsMarkedReady } from '../domain/shipment-status.js';
import type { NeighbourhoodResolver } from '../geo/resolver.js';
import type { AliasStore } from '../ledger/alias-store.js';
import { DISPATCHED_STATES, type OrderState } from '../domain/order-state.js';
import type {
  OrderChange,
  OrderLedger,
  OrderRecord,
  SavedField,
  ShipmentProgress,
  TimelineEntry,
} from '../ledger/order-ledger.js';
import type { Logger } from '../log.js';
import { quoteRequestFor, shipmentRequestFor } from './delivery-requests.js';
import type { DispatchJob } from './queues.js';
import { OrderLockLostError, withOrderLock, type OrderLock } from './order-lock.js';
import type { ShopRateLimiter } from './rate-limit.js';
import type { ServiceMapStore } from '../ledger/service-map.js';
import { PricedDropoff, resolveDropoff } from './priced-dropoff.js';
import { weightLabel, type TariffMemory } from './tariff-guard.js';

/** What the dispatch job asks of the shop's delivery service (the port, src/domain/delivery.ts). */
export type DispatchDelivery = Pick<DeliveryService, 'quote' | 'createShipment' | 'shipmentForOrder' | 'markReady'>;

export interface PipelineDeps {
  ledger: OrderLedger;
  shops: ShopRegistry;
  deliveryFor(shop: ShopConfig): DispatchDelivery;
  resolver: NeighbourhoodResolver;
  /** Aliases operators added at run time, merged over the registry's. */
  aliases: AliasStore;
  redis: RedisClient;
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
  /** Told of a shipment state the shop's wire profile does not know (metrics: relais_dispatch_unknown_states_total). */
  onUnknownState?(shopId: string, state: string): void;
  /** Paces this shop's dispatch calls (policy.dispatchCallsPerSecond) across every worker; absent: unpaced. */
  rateLimiter?: ShopRateLimiter;
  /** The fallback tariff's memory (tariff-guard.ts); absent: quotes are not checked against the fallback. */
  tariffs?: TariffMemory;
  /** Which names each service prices (priced-dropoff.ts); absent: nothing is learned from one order to the next. */
  serviceMap?: ServiceMapStore;
}

export type DispatchOutcome =
  | { kind: 'ready'; shipmentId: string; adopted: boolean }
  | { kind: 'awaiting_ready'; shipmentId: string }
  | { kind: 'held'; reason: HoldReason; /** not priced: the candidate names, for the map's refresh */ names?: string[] }
  | { kind: 'skipped'; why: string };

/** A quote closer than this to its expiry is replaced: createShipment would race the clock. */
export const QUOTE_SAFETY_MARGIN_MS = 60_000;

export async function dispatchOrder(job: DispatchJob, deps: PipelineDeps): Promise<DispatchOutcome> {
  return withOrderLock(deps.redis, deps.prefix, job.externalOrderId, (lock) => dispatchUnderLock(job, deps, lock));
}

/**
 * One attempt at an order whose lock the caller holds (the dispatch job, or the shop event that recorded the
 * order and ships it in the same job: src/jobs/shop-event.ts). `known` is the record as the caller just read or
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
  known?: OrderRecord,
): Promise<DispatchOutcome> {
  const writes = new AttemptWrites(deps.ledger, job.externalOrderId, deps.now);
  let outcome: DispatchOutcome;
  try {
    outcome = await dispatchLocked(job, deps, writes, lock, known);
  } catch (error) {
    await writes.settle().catch(() => undefined);
    throw error;
  }
  await writes.settle();
  return outcome;
}

/**
 * The calls a first attempt makes: quote, createShipment, markReady, paced as one batch when the shop's window
 * allows. Any other call (the lookup by external order id of a later attempt, a second quote) waits its own turn.
 */
const CALLS_PER_ORDER = 3;

/** What one attempt at one order works with. */
interface Attempt {
  deps: PipelineDeps;
  shop: ShopConfig;
  /** The record as the attempt found it: its meta (ids, names) is what a hold needs. */
  record: OrderRecord;
  order: StoreOrder;
  /** The goods' value the courier collects (orderAmountXof), for a cash-collecting order. */
  goods: number | undefined;
  delivery: DispatchDelivery;
  call: Tracker;
  writes: AttemptWrites;
  log: Logger;
}

async function dispatchLocked(
  job: DispatchJob,
  deps: PipelineDeps,
  writes: AttemptWrites,
  lock: OrderLock,
  known: OrderRecord | undefined,
): Promise<DispatchOutcome> {
  const { ledger } = deps;
  const shop = deps.shops.get(job.shopId);
  // Read together: the record, the shop's run-time aliases, and the shop's pacing for this attempt's calls.
  const batch = shop ? Math.min(CALLS_PER_ORDER, shop.policy.dispatchCallsPerSecond) : 0;
  const [record, aliases, paced] = await Promise.all([
    known ?? ledger.get(job.externalOrderId),
    shop ? deps.aliases.forShop(shop) : undefined,
    shop && deps.rateLimiter
      ? deps.rateLimiter.acquire(shop.id, shop.policy.dispatchCallsPerSecond, batch).then(() => batch)
      : 0,
  ]);
  if (!record) return { kind: 'skipped', why: 'unknown order' };
  if (record.meta.generation !== job.generation) return { kind: 'skipped', why: 'superseded by a replay' };
  if (DISPATCHED_STATES.has(record.state)) return { kind: 'skipped', why: `already ${record.state}` };
  if (!shop) {
    // A job that was waiting when its shop stopped being served (switched off, uninstalled) ends held, saying why.
    const notServed = deps.shops.notServed(job.shopId);
    return hold(
      deps,
      record,
      notServed
        ? { code: 'shop_not_served', message: `shop "${job.shopId}" is not served: ${notServed.reason}` }
        : { code: 'unknown_shop', message: `shop "${job.shopId}" is no longer in the shop registry` },
    );
  }
  const order = record.order;
  if (!order)
    return hold(deps, record, {
      code: 'no_order_data',
      message: 'the order data is missing (redacted or never received); replay from the shop',
    });
  if (order.cancelled) return { kind: 'skipped', why: 'order cancelled' };
  // What the courier collects for the goods (door-amount.ts): never 0 for cash on delivery, never the shop's
  // shipping on top of the service's own delivery price.
  let goods: number | undefined;
  if (collectsCash(order.paymentFamily)) {
    if (order.amountToCollect <= 0) {
      return hold(deps, record, {
        code: 'cod_nothing_to_collect',
        message: `order ${order.orderName} is cash on delivery but nothing is left to collect; it was not shipped with 0`,
      });
    }
    const owed = goodsOwed(order, shop.policy.deliveryFeePaidBy);
    if (!owed.ok) return hold(deps, record, owed.hold);
    goods = owed.goods;
  }

  const attempt: Attempt = {
    deps,
    shop,
    record,
    order,
    goods,
    delivery: deps.deliveryFor(shop),
    call: tracker(deps, order.externalOrderId, shop, paced, lock, writes),
    writes,
    log: deps.logger.child({ order: order.orderName, externalOrderId: order.externalOrderId }), // the worker's logger binds the shop
  };
  try {
    return await ship(attempt, record, aliases ?? {});
  } catch (error) {
    if (error instanceof DeliveryError && !error.retryable) {
      if (error.answer === 'unreadable') {
        // A wrong guess in the wire profile fails loudly: the order waits with what could not be read.
        return holdAfterWrites(attempt, {
          code: 'dispatch_unreadable_answer',
          message: `the delivery service's answer to ${error.operation} could not be read with wire profile "${shop.dispatch.profile}": ${error.message}. Correct the profile (relais probe shows what the service sends), then replay the order.`,
        });
      }
      return holdAfterWrites(attempt, {
        code: `dispatch_${error.refusal.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`,
        message: `the delivery service refused ${error.operation}: ${error.message}`,
      });
    }
    throw error;
  }
}

async function ship(attempt: Attempt, record: OrderRecord, aliases: Record<string, string>): Promise<DispatchOutcome> {
  const { deps, shop, order, delivery, call, writes, log } = attempt;
  if (record.shipment) return finishReady(attempt, record.shipment, false);

  // A previous attempt may have created the shipment and died (or lost the response) before saving it:
  // when the ledger shows a createShipment may have been sent (it records that before sending one), the
  // lookup by external id must answer before anything is created. It runs beside the quote, which creates
  // nothing; a quote made for an order that turns out to be shipped already is simply not used. An order
  // for which no createShipment was ever sent has no shipment to find: its first attempt makes no lookup.
  const adopt = (existing: Shipment) => {
    const shipment = saveShipment(attempt, existing, undefined);
    log.warn({ shipment: existing.shipmentId }, 'adopted a shipment created by an earlier attempt');
    writes.state('dispatching');
    return finishReady(attempt, shipment, true);
  };
  const lookUp = async () =>
    record.shipmentRequestedAt === undefined
      ? undefined
      : call('getShipmentByExternalOrder', () => delivery.shipmentForOrder(order.externalOrderId));

  const dropoff = resolveDropoff(deps.resolver, shop, order, aliases);
  if ('code' in dropoff) {
    const existing = await lookUp();
    return existing ? adopt(existing) : holdAfterWrites(attempt, dropoff);
  }

  // Weight hook: WooCommerce orders get their parcel weight from the shop's products, only when a quote is due.
  const fillWeights = deps.weightsFor?.(shop);
  let weighed: StoreOrder | undefined;
  const quoted = async () => (weighed ??= fillWeights ? await fillWeights(order) : order);
  const pricing = new PricedDropoff(
    {
      shop,
      resolver: deps.resolver,
      ...(deps.tariffs ? { tariffs: deps.tariffs } : {}),
      ...(deps.serviceMap ? { serviceMap: deps.serviceMap } : {}),
      now: deps.now,
      log,
      quoteName: (weighedOrder, name) => newQuote(attempt, weighedOrder, name),
      quoteCity: async (atBand, city) =>
        (await call('createQuote', () => delivery.quote(quoteRequestFor(shop, atBand, city)))).total,
    },
    dropoff,
  );
  // A hold for want of a priced name carries the candidates: the worker has the service asked about them again.
  const notPriced = (outcome: DispatchOutcome): DispatchOutcome =>
    outcome.kind === 'held' ? { ...outcome, names: dropoff.candidates.map((c) => c.name) } : outcome;
  // Which names to try, most precise first, from what the service map knows: read before the first quote.
  const plan = await pricing.plan(order);
  if (plan.length === 0) {
    const existing = await lookUp();
    return existing
      ? adopt(existing)
      : notPriced(await holdAfterWrites(attempt, await pricing.notPriced(order, [], [], undefined)));
  }
  const firstName = plan[0]!.candidate.name;
  // A saved quote is reused only while firm and for exactly what it priced: the same pickup, drop-off
  // neighbourhood, coordinates, weight and payment mode. A customer who corrected the address gets a new one.
  const saved = record.quote;
  const savedIsFirm =
    saved?.basis !== undefined &&
    Date.parse(saved.expiresAt) - deps.now().getTime() > QUOTE_SAFETY_MARGIN_MS &&
    saved.basis === quoteBasis(quoteRequestFor(shop, await quoted(), firstName));
  const [lookup, firstQuote, knownFallback] = await Promise.allSettled([
    lookUp(),
    savedIsFirm ? Promise.resolve(saved) : quoted().then((weighedOrder) => newQuote(attempt, weighedOrder, firstName)),
    // The fallback price: cached, else learned now, beside the order's own quote rather than after it.
    quoted().then((weighedOrder) => pricing.fallback(weighedOrder)),
  ]);
  if (lookup.status === 'rejected') throw lookup.reason;
  if (lookup.value) return adopt(lookup.value);
  if (firstQuote.status === 'rejected') throw firstQuote.reason;
  if (knownFallback.status === 'rejected') throw knownFallback.reason;
  const chosen = await pricing.choose(await quoted(), plan, firstQuote.value, knownFallback.value);
  if ('code' in chosen) return notPriced(await holdAfterWrites(attempt, chosen));
  let { quote } = chosen;
  const { sent } = chosen;
  writes.save('neighbourhood', sent);
  writes.state('dispatching');

  let created: Shipment;
  const { goods } = attempt;
  // Recorded, and waited for, before the call leaves (the tracker): any later attempt looks the shipment up first.
  writes.shipmentRequested();
  try {
    created = await call('createShipment', () =>
      delivery.createShipment(shipmentRequestFor(order, quote.quoteId, goods)),
    );
  } catch (error) {
    if (!isStaleQuote(error)) throw error;
    // The quote expired between steps (or the service forgot it): a fresh quote, once.
    log.info({ quote: quote.quoteId }, 'quote went stale before createShipment; re-quoting');
    quote = await newQuote(attempt, await quoted(), sent.name);
    created = await call('createShipment', () =>
      delivery.createShipment(shipmentRequestFor(order, quote.quoteId, goods)),
    );
  }
  const shipment = saveShipment(attempt, created, undefined);
  if (goods !== undefined) {
    writes.save(
      'door',
      doorAmount(xof(goods), { total: quote.total, codFee: quote.breakdown?.codFee }, shop.policy.deliveryFeePaidBy),
    );
  }
  log.info({ shipment: created.shipmentId, amount: created.orderAmountXof }, 'shipment created');
  return finishReady(attempt, shipment, false);
}

/**
 * The markReady invariant (spec: a shipment never declared ready waits forever, and nothing signals it).
 * Relais calls markReady on every shipment it created or adopted, unless the service has positively shown
 * the shipment is past ready: a state the shop's wire profile maps to a step after `created`. An unknown
 * state name proves nothing, so the call is made. "Marked ready" is recorded only from a 2xx answer, from
 * such a mapped state, or from a refusal the profile reads as "already ready"; any other refusal holds the
 * order with the shipment's id, and a replay tries markReady again (the shipment is never re-created).
 */
async function finishReady(attempt: Attempt, shipment: ShipmentProgress, adopted: boolean): Promise<DispatchOutcome> {
  const { deps, shop, delivery, call, writes } = attempt;
  if (shipment.markedReadyAt !== undefined || showsMarkedReady(shipment.step)) {
    // The service shows the order's shipment as cancelled: never marked ready, never silently re-created.
    if (shipment.step === 'cancelled') {
      return holdAfterWrites(attempt, {
        code: 'shipment_cancelled',
        message: `the delivery service shows shipment ${shipment.shipmentId} for this order as cancelled (${shipment.status}); no courier is coming. Check with the delivery service before shipping it again.`,
      });
    }
    if (shipment.markedReadyAt === undefined)
      saveShipment(attempt, { ...shipment, status: shipment.status }, shipment, deps.now().toISOString());
    writes.state('ready');
    return { kind: 'ready', shipmentId: shipment.shipmentId, adopted };
  }
  // Read back what the shipment will collect: a shipment carrying another amount than the goods owed is
  // never put in front of a courier (a shipment's amount cannot be changed through the service's API).
  const amountProblem = wrongAmount(attempt, shipment);
  if (amountProblem) return holdUnready(attempt, shipment, amountProblem, 'cod_amount_mismatch', '');
  let ready: Shipment | ShipmentProgress;
  try {
    ready = await call('markReady', () =>
      delivery.markReady(shipment.shipmentId, `Relais (automatic) for ${shop.name}`),
    );
  } catch (error) {
    if (!(error instanceof DeliveryError) || error.retryable) throw error;
    if (error.reason !== 'already_ready') {
      return holdUnready(attempt, shipment, `the delivery service refused to mark it ready: ${error.message}`);
    }
    attempt.log.info({ shipment: shipment.shipmentId }, 'markReady answered "already ready"');
    ready = shipment;
  }
  saveShipment(attempt, ready, shipment, deps.now().toISOString());
  writes.state('ready');
  return { kind: 'ready', shipmentId: shipment.shipmentId, adopted };
}

/**
 * Why the shipment must not go to a courier with the amount it carries, or undefined when it may: the
 * service's answer names another amount than Relais sent, or the order was edited since and now owes
 * another amount of goods. An answer that does not echo the amount cannot be checked (the spec does not
 * show the field in a Shipment), and goes on.
 */
function wrongAmount(attempt: Attempt, shipment: ShipmentProgress): string | undefined {
  const { goods, order } = attempt;
  const carried = shipment.orderAmountXof;
  if (goods === undefined) {
    // Not a cash-collecting order (goods are set for those only): nothing may be collected.
    return carried !== undefined && carried > 0
      ? `it carries ${carried} XOF to collect but the order is ${order.paymentFamily.replace(/_/g, ' ')}, with nothing to collect; cancel it with the delivery service`
      : undefined;
  }
  if (carried === undefined || carried === goods) return undefined;
  return `it carries ${carried} XOF to collect for the goods but the order owes ${goods} XOF (the order was edited, or the service changed the amount); a shipment's amount cannot be changed, so cancel it with the delivery service and replay the order`;
}

/** Holds the order once this attempt's ledger writes are applied (a failed write fails the job, not the hold). */
async function holdAfterWrites(attempt: Attempt, reason: HoldReason): Promise<DispatchOutcome> {
  await attempt.writes.settle();
  return hold(attempt.deps, attempt.record, reason);
}

/** A shipment created but not marked ready: held with its id, so the merchant knows no courier is coming. */
function holdUnready(
  attempt: Attempt,
  shipment: ShipmentProgress,
  why: string,
  code = 'shipment_not_ready',
  advice = "Replay the order to try markReady again, or mark it ready in the delivery service's console.",
): Promise<DispatchOutcome> {
  return holdAfterWrites(attempt, {
    code,
    message: `shipment ${shipment.shipmentId} was created but is not marked ready, so no courier will be offered it: ${why}.${advice ? ` ${advice}` : ''}`,
  });
}

type QuoteProgress = NonNullable<OrderRecord['quote']>;

/** What a quote priced, as one comparable string: pickup, drop-off neighbourhood, coordinates, weight, payment mode. */
export function quoteBasis(request: QuoteRequest): string {
  const at = (c: { lat: number; lng: number } | undefined) => (c ? `${c.lat.toFixed(5)},${c.lng.toFixed(5)}` : '-');
  return [
    request.pickup.neighbourhood,
    at(request.pickup.coords),
    request.dropoff.neighbourhood,
    at(request.dropoff.coords),
    weightLabel(request.weightKg),
    request.payment ?? '-',
  ].join('|');
}

async function newQuote(attempt: Attempt, order: StoreOrder, neighbourhood: string): Promise<QuoteProgress> {
  const { shop, delivery, call, writes } = attempt;
  const request = quoteRequestFor(shop, order, neighbourhood);
  const quote: Quote = await call('createQuote', () => delivery.quote(request));
  const progress = {
    quoteId: quote.quoteId,
    expiresAt: quote.expiresAt,
    total: quote.total,
    breakdown: quote.breakdown,
    basis: quoteBasis(request),
  };
  writes.save('quote', progress);
  return progress;
}

/**
 * Saves what the service said of the shipment over what was saved before. The caller passes the saved
 * progress it already holds (under the order lock nobody else writes it), so no re-read of the record.
 */
function saveShipment(
  attempt: Attempt,
  s: Shipment | ShipmentProgress,
  previous: ShipmentProgress | undefined,
  markedReadyAt?: string,
): ShipmentProgress {
  const step = s.step ?? previous?.step;
  const progress: ShipmentProgress = {
    shipmentId: s.shipmentId,
    status: s.status,
    ...(step === undefined ? {} : { step }),
    trackingCode: s.trackingCode ?? previous?.trackingCode,
    publicTrackingUrl: s.publicTrackingUrl ?? previous?.publicTrackingUrl,
    orderAmountXof: s.orderAmountXof ?? previous?.orderAmountXof,
    markedReadyAt: markedReadyAt ?? previous?.markedReadyAt,
    createdAt: previous?.createdAt ?? s.createdAt ?? attempt.deps.now().toISOString(),
  };
  if (progress.step === undefined) attempt.deps.onUnknownState?.(attempt.shop.id, s.status);
  attempt.writes.shipment(progress);
  return progress;
}

/**
 * The ledger writes of one attempt, gathered step by step and sent as one write per step (OrderLedger.apply):
 * what the lookup and the quote answered, sent before createShipment; what createShipment answered, sent before
 * markReady; and the rest when the attempt ends. A step is sent without waiting for its answer (the ledger
 * applies one order's writes in the order they were made: PostgresOrderLedger.inOrder), and the attempt waits
 * for all of them before it ends: a failed write fails the attempt, and BullMQ retries it.
 * Recording progress is an optimisation of the retry, with one exception that prevents a duplicate: the step
 * before a createShipment carries `shipmentRequested` and is applied before the call leaves, so a retry that
 * finds no saved shipment knows to look the shipment up by external id before creating one.
 */
class AttemptWrites {
  #step: Omit<OrderChange, 'now'> = {};
  readonly #sent: Promise<unknown>[] = [];

  constructor(
    private readonly ledger: OrderLedger,
    private readonly externalOrderId: string,
    private readonly now: () => Date,
  ) {}

  save(field: SavedField, value: unknown): void {
    (this.#step.saved ??= {})[field] = value;
  }

  state(state: OrderState): void {
    this.#step.state = state;
  }

  shipment(progress: ShipmentProgress): void {
    this.#step.shipment = progress;
  }

  /** A createShipment is about to be sent: the step carrying this must be applied before it is (`sendNow`). */
  shipmentRequested(): void {
    this.#step.shipmentRequested = true;
  }

  note(entry: TimelineEntry): void {
    (this.#step.timeline ??= []).push(entry);
  }

  /** A write to another store that the attempt waits for with its own (the fallback-tariff memory). */
  add(write: Promise<unknown>): void {
    write.catch(() => undefined); // awaited in settle(); this only keeps Node from calling it unhandled meanwhile
    this.#sent.push(write);
  }

  /** Sends the step gathered so far as one write, without waiting for it. */
  send(): void {
    this.sendNow().catch(() => undefined); // a failed write fails the attempt in settle()
  }

  /**
   * Sends the step gathered so far as one write; resolves once it is applied (the attempt's earlier writes of
   * this order are applied before it: PostgresOrderLedger.inOrder).
   */
  async sendNow(): Promise<void> {
    const step = this.#step;
    this.#step = {};
    if (Object.keys(step).length === 0) return;
    const write = this.ledger.apply(this.externalOrderId, { ...step, now: this.now() });
    this.add(write);
    await write;
  }

  async settle(): Promise<void> {
    this.send();
    const failed = (await Promise.allSettled(this.#sent)).find(
      (r): r is PromiseRejectedResult => r.status === 'rejected',
    );
    if (failed) throw failed.reason;
  }
}

function isStaleQuote(error: unknown): boolean {
  return error instanceof DeliveryError && (error.reason === 'quote_expired' || error.reason === 'quote_not_found');
}

async function hold(deps: PipelineDeps, record: OrderRecord, reason: HoldReason): Promise<DispatchOutcome> {
  // Refused when another attempt dispatched the order meanwhile (this one lost its lease while frozen).
  if (!(await deps.ledger.hold(record.meta.externalOrderId, reason, deps.now()))) {
    deps.logger.warn(
      { order: record.meta.orderName, code: reason.code },
      'not held: the order was dispatched by another attempt meanwhile',
    );
    return { kind: 'skipped', why: `already dispatched; not held for ${reason.code}` };
  }
  await deps.ledger.appendTimeline(record.meta.externalOrderId, {
    at: deps.now().toISOString(),
    system: 'relais',
    operation: 'hold',
    outcome: reason.code,
    detail: reason.message,
  });
  // The reason may quote the customer's address: it is on the order's timeline (relais held, the dashboard), not in the log.
  deps.logger.warn({ order: record.meta.orderName, code: reason.code }, `order held (${reason.code}): see relais held`);
  return { kind: 'held', reason };
}

type Tracker = <T>(operation: string, fn: () => Promise<T>) => Promise<T>;

/** The calls that change something at the service: made only while the job still holds the order lock. */
const SIDE_EFFECTS: ReadonlySet<string> = new Set(['createShipment', 'markReady', 'cancelShipment']);

/**
 * Paces and records every dispatch call on the order's timeline: what, when, how long, how it ended.
 * `paced` calls were already taken from the shop's pacing window by the caller; the rest wait their turn.
 * A call with a side effect is made only while `lock` is still held: a job that lost the order (another
 * worker took it over) stops there with a retryable error, noted on the timeline.
 */
function tracker(
  deps: PipelineDeps,
  externalOrderId: string,
  shop: ShopConfig,
  paced: number,
  lock: OrderLock,
  writes: AttemptWrites,
): Tracker {
  let prepaid = paced;
  return async (operation, fn) => {
    // Waiting for the shop's pacing window is not part of the call's latency.
    if (prepaid > 0) prepaid -= 1;
    else await deps.rateLimiter?.acquire(shop.id, shop.policy.dispatchCallsPerSecond);
    if (SIDE_EFFECTS.has(operation)) {
      // What the attempt learnt so far is recorded as one step before the service changes anything. Before a
      // createShipment it is also waited for, beside the lock's confirmation: it says a shipment may exist.
      let recorded: Promise<void> | undefined;
      if (operation === 'createShipment') recorded = writes.sendNow();
      else writes.send();
      try {
        await Promise.all([lock.confirm(operation), recorded]);
      } catch (error) {
        if (error instanceof OrderLockLostError) {
          note({
            at: deps.now().toISOString(),
            system: 'relais',
            operation,
            outcome: 'lock_lost',
            detail: error.message,
          });
          deps.logger.warn(
            { externalOrderId, operation },
            'order lock lost; stopped before a side effect, to be retried',
          );
        }
        throw error;
      }
    }
    const started = Date.now();
    let result: Awaited<ReturnType<typeof fn>>;
    try {
      result = await fn();
    } catch (error) {
      const ms = Date.now() - started;
      deps.onDispatchCall?.({ operation, ms, error });
      const outcome = error instanceof DeliveryError ? error.label : 'error';
      note({
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
    note({ at: deps.now().toISOString(), system: 'dispatch', operation, outcome: 'ok', ms });
    return result;
  };

  /** The call's timeline line goes with the attempt's step it belongs to. */
  function note(entry: TimelineEntry): void {
    writes.note(entry);
  }
}
