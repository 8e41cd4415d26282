/**
 * One attempt at one order, as its steps in order:
 *
 *   admit → resolve drop-off → choose the name (plan) → quote ∥ look up an earlier shipment ∥ fallback price
 *   → choose the name → create or adopt → read back → mark ready → finish (dispatch-order.ts, the worker)
 *
 * Business refusals are outcomes (the order is held with a reason from src/domain/holds.ts), not exceptions;
 * only errors a retry can help are thrown, for BullMQ to retry with backoff.
 */
import { DeliveryError } from '../../domain/delivery.js';
import { holdFor, refusalHold } from '../../domain/holds.js';
import type { HoldReason } from '../../domain/order.js';
import type { RecordedEvent } from '../../ledger/order-ledger.js';
import { DeliveryGateway } from '../delivery-gateway.js';
import type { ShopConfig } from '../../shops/shops.js';
import type { DispatchJob } from '../queues.js';
import { withOrderLock, type CounterTake, type OrderLock } from '../order-lock.js';
import { hasHashTag, type RedisClient } from '../../redis.js';
import type { ShopRateLimiter } from '../rate-limit.js';
import { admit } from './admit.js';
import type { AttemptWrites } from './attempt-writes.js';
import { chooseName, nothingToTry, planNames, type NamePlan } from './choose-name.js';
import { adopt, createShipment, existingShipment } from './create-or-adopt.js';
import type { Attempt, DispatchOutcome, PipelineDeps } from './deps.js';
import { hold, holdAfterWrites } from './hold.js';
import { markReady } from './mark-ready.js';
import { firmSavedQuote, newQuote } from './quote.js';
import { resolveDropoffStep } from './resolve-dropoff.js';

/**
 * The calls a first attempt makes: quote, createShipment, markReady, paced as one batch when the shop's window
 * allows. Any other call (the lookup by external order id of a later attempt, a second quote) waits its own turn.
 */
const CALLS_PER_ORDER = 3;

/** The turns an attempt takes from the shop's pacing window at once: its three calls, or fewer for a slow shop. */
const turnsPerAttempt = (shop: ShopConfig): number => Math.min(CALLS_PER_ORDER, shop.policy.dispatchCallsPerSecond);

/**
 * The order lock, for a job that ships the order under it: the turns of the attempt's calls are taken with the lock
 * (one command for both; `attemptOrder` spends them), and given back if the job ships nothing after all.
 */
export function withPacedOrderLock<T>(
  deps: { redis: RedisClient; prefix: string },
  pacing: { shop: ShopConfig; limiter: ShopRateLimiter | undefined },
  externalOrderId: string,
  work: (lock: OrderLock) => Promise<T>,
): Promise<T> {
  const { shop, limiter } = pacing;
  const calls = turnsPerAttempt(shop);
  // One script for both keys only where they share a Redis Cluster slot: the prefix's hash tag (the limiter works
  // under the same prefix). Without one (keys spread over a cluster's masters), the attempt takes its turns itself.
  const options =
    limiter && hasHashTag(deps.prefix)
      ? { take: () => limiter.windowTake(shop.id, calls), giveBack: (turns: CounterTake) => limiter.giveBack(turns) }
      : {};
  return withOrderLock(deps.redis, deps.prefix, externalOrderId, work, options);
}

/**
 * An attempt under the order lock the caller holds; `known`: the record as the caller just read or wrote it (with
 * the shop's run-time aliases when the ledger read them with it).
 */
export async function attemptOrder(
  job: DispatchJob,
  deps: PipelineDeps,
  writes: AttemptWrites,
  lock: OrderLock,
  known: RecordedEvent | undefined,
): Promise<DispatchOutcome> {
  const shop = deps.shops.get(job.shopId);
  const service = shop ? gatewayOf(deps).forShop(shop) : undefined;
  // Read together: the record, the shop's run-time aliases, and the shop's pacing for this attempt's calls.
  const batch = shop ? turnsPerAttempt(shop) : 0;
  const [record, aliases, prepaid] = await Promise.all([
    known ?? deps.ledger.get(job.externalOrderId),
    shop ? aliasesFor(deps, shop, known) : undefined,
    // Turns the shop event took with the order lock, when it did: then no command of its own.
    service ? service.prepay(batch, lock.takenTurns()) : 0,
  ]);
  // A createShipment may leave only once the ledger shows one may have been sent (the lookup of a later attempt
  // depends on it): already so when the record says it, or the shop event's write just noted it.
  const requestNoted = record?.shipmentRequestedAt !== undefined || known?.shipmentRequestNoted === true;
  const admission = admit({ job, record, shops: deps.shops });
  if (admission.kind === 'skip') return { kind: 'skipped', why: admission.why };
  if (admission.kind === 'hold') return hold(deps, admission.record, admission.reason);
  const { shop: admitted, order, goods } = admission;
  // Admission found the shop the service was taken for (admit.ts reads the same registry): `??` only narrows.
  const calls = (service ?? gatewayOf(deps).forShop(admitted)).underLock(order.externalOrderId, lock, {
    prepaid,
    timeline: {
      // The calls' timeline lines go with the attempt's step they belong to, not each a write of its own.
      note: (entry) => writes.note(entry),
      // Unless the ledger shows already that a createShipment may have been sent, what the attempt learnt before one
      // is one step, applied before the call leaves: it says so. Otherwise it goes with the attempt's last step, as
      // what createShipment answered does, after markReady: a retry that never saw it finds the shipment by the lookup.
      beforeChange: (operation) => (operation === 'createShipment' && !requestNoted ? writes.sendNow() : undefined),
    },
  });
  const attempt: Attempt = {
    deps,
    shop: admitted,
    record: admission.record,
    order,
    goods,
    calls,
    writes,
    log: deps.logger.child({ order: order.orderName, externalOrderId: order.externalOrderId }), // the worker's logger binds the shop
  };
  try {
    return await ship(attempt, aliases ?? {});
  } catch (error) {
    const refused = refusalOf(attempt, error);
    if (refused) return holdAfterWrites(attempt, refused);
    throw error;
  }
}

/** Every alias in force for the shop (AliasStore.forShop): the run-time ones as read with the record, else read now. */
function aliasesFor(
  deps: PipelineDeps,
  shop: ShopConfig,
  known: RecordedEvent | undefined,
): Record<string, string> | Promise<Record<string, string>> {
  if (!known?.shopAliases) return deps.aliases.forShop(shop);
  return { ...shop.policy.neighbourhoodAliases, ...known.shopAliases };
}

/** The gateway to the delivery service, its calls timed into the pipeline's metrics. */
function gatewayOf(deps: PipelineDeps): DeliveryGateway {
  return new DeliveryGateway({
    deliveryFor: (shop) => deps.deliveryFor(shop),
    ledger: deps.ledger,
    now: () => deps.now(),
    logger: deps.logger,
    rateLimiter: deps.rateLimiter,
    onCall: (call) => deps.onDispatchCall?.(call),
  });
}

/** The hold for a refusal of the service no retry can help, or undefined for any other error. */
function refusalOf(attempt: Attempt, error: unknown): HoldReason | undefined {
  if (!(error instanceof DeliveryError) || error.retryable) return undefined;
  // A wrong guess in the wire profile fails loudly: the order waits with what could not be read.
  if (error.answer === 'unreadable') {
    const { operation, message } = error;
    const profile = attempt.shop.dispatch.profile;
    return holdFor('dispatch_unreadable_answer', { operation, profile, error: message });
  }
  return refusalHold(error.refusal, error.operation, error.message);
}

async function ship(attempt: Attempt, aliases: Record<string, string>): Promise<DispatchOutcome> {
  const { deps, shop, order, record, writes } = attempt;
  if (record.shipment) return markReady(attempt, { shipment: record.shipment, adopted: false });

  const resolved = resolveDropoffStep(deps.resolver, { shop, order, aliases });
  if (resolved.kind === 'unresolved') return adoptElseHold(attempt, async () => resolved.reason);
  // Which names to try, most precise first, from what the service map knows: read before the first quote.
  const plan = await planNames(attempt, resolved.dropoff);
  if (plan.names.length === 0)
    return plan.withCandidates(await adoptElseHold(attempt, () => nothingToTry(plan, order)));

  // A previous attempt may have created the shipment and died (or lost the answer) before saving it: the lookup
  // (made only when the ledger shows a createShipment may have been sent) answers before anything is created. It
  // runs beside the quote, which creates nothing; a quote for an order shipped already is simply not used.
  const [lookup, firstQuote, fallback] = await Promise.allSettled([
    existingShipment(attempt),
    quoteFirstName(attempt, plan),
    // The fallback price: cached, else learned now, beside the order's own quote rather than after it.
    plan.quoted().then((weighed) => plan.pricing.fallback(weighed)),
  ]);
  if (lookup.status === 'rejected') throw lookup.reason;
  if (lookup.value) return markReady(attempt, { shipment: adopt(attempt, lookup.value), adopted: true });
  if (firstQuote.status === 'rejected') throw firstQuote.reason;
  if (fallback.status === 'rejected') throw fallback.reason;
  const chosen = await chooseName(plan, { firstQuote: firstQuote.value, fallback: fallback.value });
  if ('code' in chosen) return plan.withCandidates(await holdAfterWrites(attempt, chosen));
  writes.save('neighbourhood', chosen.sent);
  writes.state('dispatching');
  const { quote, sent } = chosen;
  const shipment = await createShipment(attempt, { quote, name: sent.name, quoted: plan.quoted });
  return markReady(attempt, { shipment, adopted: false });
}

/** The quote of the first planned name: the saved one while firm and for the same request, else a new one. */
async function quoteFirstName(attempt: Attempt, plan: NamePlan) {
  const name = plan.names[0]!.candidate.name;
  const { shop, record, deps } = attempt;
  const saved = await firmSavedQuote({ shop, order: plan.quoted, name, saved: record.quote, now: deps.now() });
  return saved ?? newQuote(attempt, await plan.quoted(), name);
}

/** An order that cannot be priced is held, unless an earlier attempt's shipment turns up: that one is finished. */
async function adoptElseHold(attempt: Attempt, reason: () => Promise<HoldReason>): Promise<DispatchOutcome> {
  const existing = await existingShipment(attempt);
  if (existing) return markReady(attempt, { shipment: adopt(attempt, existing), adopted: true });
  return holdAfterWrites(attempt, await reason());
}
