/**
 * A shop webhook, acknowledged by the web process, processed here: normalise the order, record it in
 * the ledger, and decide (ship now, wait, hold, cancel).
 *
 * An order to ship now is shipped in this same job, under the order lock already held, from the record just
 * written (`dispatchNow`: src/orders/dispatch/dispatch-order.ts): one job, one lock and no second read per order. An
 * attempt that fails there, and every later one, is the dispatch job's: enqueued with a job id per order and
 * generation so duplicates collapse into one, and retried with backoff until it ships or holds the order.
 */
import type { Queue } from 'bullmq';
import type { ShopConfig, ShopRegistry } from '../../shops/shops.js';
import { externalOrderId } from '../../domain/ids.js';
import { isPermanent } from '../../domain/errors.js';
import { holdFor } from '../../domain/holds.js';
import type { Eligibility, HoldReason, StoreOrder } from '../../domain/order.js';
import type { OrderLedger, OrderRecord, RecordedEvent } from '../../ledger/order-ledger.js';
import type { Logger } from '../../log.js';
import {
  isUninstallTopic,
  normaliseOrder,
  orderIdOf,
  orderVersionOf,
  platformOf,
  type CompletedOrderEvent,
  type OwnershipCheck,
} from '../../shops/platforms/index.js';
import { flagAmountChangedAfterShipping } from './amount-changed.js';
import { COMPLIANCE_TOPICS, handleCompliance, type ComplianceOutcome } from './compliance.js';
import type { OrderLock } from '../order-lock.js';
import type { DispatchOutcome } from '../dispatch/dispatch-order.js';
import type { UninstallOutcome } from '../../shops/uninstall.js';
import { decideEligibility } from './policy.js';
import { dispatchJobOptions, RELAIS_TOPICS, retryDelayMs, type DispatchJob, type ShopEventJob } from '../queues.js';
import type { RedisClient } from '../../redis.js';
import type { ShopRateLimiter } from '../rate-limit.js';
import { withPacedOrderLock } from '../dispatch/ship.js';
import { ReplayPayload } from './replay-payload.js';
import {
  endOrderGoneFromShop,
  holdAsRecorded,
  holdStoppedInShop,
  MAY_START_DISPATCH,
  type HeldOrder,
} from './event-holds.js';

export interface ShopEventDeps {
  ledger: OrderLedger;
  shops: ShopRegistry;
  dispatchQueue: Queue<DispatchJob>;
  shopEventQueue: Queue<ShopEventJob>;
  redis: RedisClient;
  prefix: string;
  now(): Date;
  logger: Logger;
  /**
   * Reads from the shop what the order event's body leaves out (StorePlatform.createEventCompleter); undefined
   * (or absent) when the body carries all. Throws when the shop cannot be read: the job is retried.
   */
  completeEvent?(
    shop: ShopConfig,
    event: { topic: string; orderId: string; payload: unknown },
  ): Promise<CompletedOrderEvent | undefined> | undefined;
  /** Called for a cancelled order that already has a shipment (write-back and cancellation live elsewhere). */
  onCancelled?(shop: ShopConfig, externalOrderId: string): Promise<void>;
  /** Stops work for a shop whose app was uninstalled (src/shops/uninstall.ts); without it the event is ignored. */
  onUninstalled?(shop: ShopConfig): Promise<UninstallOutcome>;
  /**
   * Whether a verified event (any topic) is the shop's, where the platform's signature cannot tell (shops of one
   * Shopify app share its secret): stores/index.ts createOwnershipCheck. Without it, every event is taken as the shop's.
   */
  ownership?: OwnershipCheck;
  /** Dispatch pacing: the turns of `dispatchNow`'s calls are taken with the order lock (withPacedOrderLock). */
  pacing?: ShopRateLimiter;
  /**
   * Ships an order decided ready to ship, in this job, under the order lock it holds (`known`: the record as
   * just written, when still current; `beforeHold`: stores the payload a replay needs, called before a hold).
   * Absent, or when it throws, the order goes to the dispatch queue.
   */
  dispatchNow?(
    job: DispatchJob,
    lock: OrderLock,
    known: RecordedEvent | undefined,
    beforeHold: () => Promise<unknown>,
  ): Promise<DispatchOutcome>;
}

export type ShopEventOutcome =
  | { kind: 'dispatch_enqueued'; externalOrderId: string; generation: number }
  | {
      kind: 'dispatched';
      externalOrderId: string;
      generation: number;
      /** When the order was first seen (for the time-to-ready metric). */
      firstSeenAt: string;
      dispatch: DispatchOutcome;
    }
  | { kind: 'waiting'; externalOrderId: string; why: string }
  | { kind: 'held'; externalOrderId: string; code: string }
  | { kind: 'cancelled'; externalOrderId: string }
  | { kind: 'compliance'; result: ComplianceOutcome }
  | { kind: 'uninstalled'; result: UninstallOutcome }
  | { kind: 'ignored'; why: string }
  | { kind: 'ignored_older'; externalOrderId: string; version: string; applied: string };

export async function handleShopEvent(event: ShopEventJob, deps: ShopEventDeps): Promise<ShopEventOutcome> {
  const uninstall = isUninstallTopic(event.platform, event.topic);
  // A shop no longer served still has its data-protection events acted on, and its uninstall finished (a retry).
  const shop =
    deps.shops.get(event.shopId) ??
    (COMPLIANCE_TOPICS.has(event.topic) || uninstall ? deps.shops.notServed(event.shopId)?.shop : undefined);
  if (!shop) return { kind: 'ignored', why: `shop "${event.shopId}" is not in the registry` };
  const orderId = orderIdOf(event.payload);
  // Confirmed as the shop's before anything is done, whatever the topic: another shop's uninstall or erasure
  // request must not touch this one.
  if (uninstall || COMPLIANCE_TOPICS.has(event.topic))
    return (await notTheShops(event, shop, orderId, deps)) ?? (await actOnShop(event, shop, uninstall, deps));
  if (!orderId) {
    deps.logger.error({ topic: event.topic }, 'order webhook without an order id; nothing to record');
    return { kind: 'ignored', why: 'payload has no order id' };
  }
  const notOurs = await notTheShops(event, shop, orderId, deps);
  if (notOurs) return notOurs;
  const extId = externalOrderId(shop.id, orderId);
  const pacing = { shop, limiter: deps.dispatchNow ? deps.pacing : undefined };
  const decided = await withPacedOrderLock(deps, pacing, extId, async (lock) => {
    const completed = await completeEvent(event, shop, orderId, deps);
    if (completed?.kind === 'gone') return endOrderGoneFromShop(event, shop, extId, deps);
    const payload = completed?.kind === 'order' ? completed.payload : event.payload;
    const unreadable = completed?.kind === 'unreadable' ? completed.hold : undefined;
    const replayable = new ReplayPayload(deps.ledger, extId, payload);
    const decision = await recordAndDecide(
      { ...event, payload },
      shop,
      { orderId, extId, replayable, unreadable },
      deps,
    );
    const result = await shipNowOrDecide(decision, { extId, lock, replayable }, deps);
    await replayable.keepUnlessDone(result);
    return result;
  });
  if (decided.kind !== 'dispatch') return decided;
  // Enqueued once the order lock is released: the dispatch job starts by taking the same lock, and would
  // otherwise wait out a retry interval behind this job. A crash before this line leaves the event job
  // unfinished; BullMQ runs it again, and the order is still before dispatch (or left dispatching, which
  // is enqueued too), so it lands here again.
  const { job } = decided;
  await deps.dispatchQueue.add('dispatch', job, {
    ...dispatchJobOptions(job),
    ...(decided.delayMs ? { delay: decided.delayMs } : {}),
  });
  return { kind: 'dispatch_enqueued', externalOrderId: extId, generation: job.generation };
}

/** Ships the order now, under the lock this job holds, when the event decided so; else the decision as it is. */
async function shipNowOrDecide(
  decision: ShopEventOutcome | DispatchDecision,
  { extId, lock, replayable }: { extId: string; lock: OrderLock; replayable: ReplayPayload },
  deps: ShopEventDeps,
): Promise<ShopEventOutcome | DispatchDecision> {
  if (decision.kind !== 'dispatch' || decision.queueOnly || !deps.dispatchNow) return decision;
  try {
    const dispatch = await deps.dispatchNow(decision.job, lock, decision.known, () => replayable.keep());
    return {
      kind: 'dispatched',
      externalOrderId: extId,
      generation: decision.job.generation,
      firstSeenAt: decision.firstSeenAt,
      dispatch,
    };
  } catch (error) {
    // Not this job's to retry: a retry of the event would record the webhook again. The dispatch job
    // retries it with backoff (Retry-After honoured from the first wait), and holds the order at the end.
    deps.logger.warn(
      { order: extId, err: error instanceof Error ? error.message : String(error) },
      'dispatch attempt failed; the order goes to the dispatch queue',
    );
    return { ...decision, delayMs: retryDelayMs(1, error) };
  }
}

/** An event about the whole shop: the app uninstalled, or a data-protection request. */
async function actOnShop(
  event: ShopEventJob,
  shop: ShopConfig,
  uninstall: boolean,
  deps: ShopEventDeps,
): Promise<ShopEventOutcome> {
  if (uninstall) {
    if (!deps.onUninstalled) return { kind: 'ignored', why: 'this process cannot switch a shop off' };
    return { kind: 'uninstalled', result: await deps.onUninstalled(shop) };
  }
  const result = await handleCompliance(shop.id, event.topic, event.payload, {
    ledger: deps.ledger,
    shopEvents: deps.shopEventQueue,
    logger: deps.logger,
  });
  return { kind: 'compliance', result };
}

/** What the event decided when the order is to ship: the dispatch job, and what an attempt here starts from. */
interface DispatchDecision {
  kind: 'dispatch';
  job: DispatchJob;
  /** When the order was first seen. */
  firstSeenAt: string;
  /** The record as written by this event, when it is the generation the job ships. */
  known?: RecordedEvent;
  /** Resume through the dispatch queue only: an earlier attempt left the order dispatching. */
  queueOnly?: boolean;
  /** When the order goes to the queue after an attempt here failed: the wait before the next. */
  delayMs?: number;
}

/**
 * A shop event is acted on only once it is confirmed as the shop's, where the platform's signature cannot tell (a
 * Shopify header is not signed, and shops of one app share its secret: src/adapters/shopify/owner.ts, one rule per
 * topic). The web process already refuses what the signed body shows to be another shop's; this covers the rest.
 */
async function notTheShops(
  event: ShopEventJob,
  shop: ShopConfig,
  orderId: string | undefined,
  deps: ShopEventDeps,
): Promise<ShopEventOutcome | undefined> {
  // Relais's own replays carry what it read from the shop itself (or recorded once confirmed): nothing to confirm.
  if (RELAIS_TOPICS.has(event.topic)) return undefined;
  const why = await deps.ownership?.(shop, event, orderId);
  if (why === undefined) return undefined;
  deps.logger.warn(
    { topic: event.topic, ...(orderId === undefined ? {} : { orderId }), why },
    `${platformOf(shop).label} ${event.topic} webhook not acted on: not confirmed as this shop's`,
  );
  return { kind: 'ignored', why };
}

/** The event's order: its ids, its payload for a replay, and why the shop could not be read (when it could not). */
interface EventOrder {
  orderId: string;
  extId: string;
  replayable: ReplayPayload;
  unreadable: HoldReason | undefined;
}

async function recordAndDecide(
  event: ShopEventJob,
  shop: ShopConfig,
  { orderId, extId, replayable, unreadable }: EventOrder,
  deps: ShopEventDeps,
): Promise<ShopEventOutcome | DispatchDecision> {
  const normalised = normaliseOrder(shop, event.payload);
  const orderName = normalised.ok ? normalised.order.orderName : (normalised.orderName ?? `#${orderId}`);
  const now = deps.now();
  // The order's own version is inside the signed body: an event older than the one applied (a late delivery
  // of an earlier update) is noted on the timeline and changes nothing, whatever it says.
  const version = normalised.ok ? normalised.order.updatedAt : orderVersionOf(shop, event.payload);
  // The shop's policy decides from the order alone: known before the write, so the write can say that this job may
  // send a createShipment next (and the attempt need not write that before the call: ship.ts).
  const eligibility: Eligibility = normalised.ok
    ? decideEligibility(normalised.order, shop)
    : { decision: 'hold', hold: normalised.hold };
  // Without the payload: this job keeps it, and stores it only if the order may need a replay (replay-payload.ts).
  const record = await deps.ledger.recordEvent({
    meta: { externalOrderId: extId, shopId: shop.id, platform: shop.platform, orderId, orderName },
    order: normalised.ok ? normalised.order : undefined,
    shipmentMayFollow: !unreadable && eligibility.decision === 'dispatch' && deps.dispatchNow !== undefined,
    ...(version === undefined ? {} : { version }),
    receivedAt: event.receivedAt,
    now,
    timeline: {
      at: now.toISOString(),
      system: 'shop',
      operation: `webhook ${event.topic}`,
      outcome: normalised.ok ? 'received' : normalised.hold.code,
    },
  });
  if (record.olderThanApplied) {
    deps.logger.info(
      { order: orderName, topic: event.topic, ...record.olderThanApplied },
      'shop event older than the order version applied; ignored',
    );
    return { kind: 'ignored_older', externalOrderId: extId, ...record.olderThanApplied };
  }

  const held = { extId, orderName, state: record.state, replayable };
  if (unreadable) return holdAsRecorded(held, unreadable, deps);
  if (!normalised.ok) return holdAsRecorded(held, normalised.hold, deps);

  if (eligibility.decision === 'cancel') return cancelAsTheShopSays(shop, held, normalised.order, record, deps);
  if (!MAY_START_DISPATCH.has(record.state)) {
    await flagAmountChangedAfterShipping(shop, extId, normalised.order, record, deps);
    // Left dispatching by an attempt that ended with its job (a worker killed while this event's job shipped
    // the order): resumed by the dispatch job, which collapses with one already queued for it.
    if (record.state === 'dispatching') {
      const job = { shopId: shop.id, externalOrderId: extId, generation: record.meta.generation, trigger: event.topic };
      return { kind: 'dispatch', job, firstSeenAt: record.meta.firstSeenAt, queueOnly: true };
    }
    return { kind: 'ignored', why: `already ${record.state}` };
  }
  if (eligibility.decision === 'hold') {
    await replayable.keep();
    await deps.ledger.hold(extId, eligibility.hold, now);
    deps.logger.warn({ order: orderName, code: eligibility.hold.code }, `order held: ${eligibility.hold.message}`);
    return { kind: 'held', externalOrderId: extId, code: eligibility.hold.code };
  }
  if (eligibility.decision === 'wait') {
    await deps.ledger.setState(extId, 'waiting', now, 'resolution');
    return { kind: 'waiting', externalOrderId: extId, why: eligibility.why };
  }
  // A held order that receives a fresh event (the merchant corrected it in the shop) starts a new generation.
  const wasHeld = record.state === 'held';
  const generation = wasHeld ? await deps.ledger.bumpGeneration(extId) : record.meta.generation;
  if (wasHeld) await deps.ledger.setState(extId, 'received', now, 'resolution');
  return {
    kind: 'dispatch',
    job: { shopId: shop.id, externalOrderId: extId, generation, trigger: event.topic },
    firstSeenAt: record.meta.firstSeenAt,
    // A held order's record changed since (generation, state): the attempt reads it again.
    ...(wasHeld ? {} : { known: record }),
  };
}

/** The shop cancelled the order (or stopped it in a way it can undo: held until the shop ships it). */
async function cancelAsTheShopSays(
  shop: ShopConfig,
  held: HeldOrder,
  order: StoreOrder,
  record: OrderRecord,
  deps: ShopEventDeps,
): Promise<ShopEventOutcome> {
  const { extId } = held;
  // With a shipment, the cancel job cancels it first, then ends or holds the order (sync-delivery.ts).
  if (record.shipment) {
    await deps.onCancelled?.(shop, extId);
    return { kind: 'cancelled', externalOrderId: extId };
  }
  const stopped = order.stoppedInShop;
  if (stopped) return holdStoppedInShop(held, stopped, deps);
  await deps.ledger.setState(extId, 'cancelled', deps.now(), 'resolution');
  return { kind: 'cancelled', externalOrderId: extId };
}

/**
 * The event with what its body leaves out read from the shop (undefined: nothing to read). A transient failure is
 * thrown (the job is retried); one a retry cannot help (keys refused) holds the order saying what could not be read,
 * rather than act on a body that would mislead (a shipping refund read as goods) or fail the job silently.
 */
async function completeEvent(
  event: ShopEventJob,
  shop: ShopConfig,
  orderId: string,
  deps: ShopEventDeps,
): Promise<CompletedOrderEvent | { kind: 'unreadable'; hold: HoldReason } | undefined> {
  try {
    return await deps.completeEvent?.(shop, { topic: event.topic, orderId, payload: event.payload });
  } catch (error) {
    if (!isPermanent(error)) throw error;
    const platform = platformOf(shop).label;
    const hold = holdFor('shop_unreadable', { platform, orderId, topic: event.topic, error: error.message });
    return { kind: 'unreadable', hold };
  }
}
