/**
 * What a reconciliation run does about a finding. Repairs go through the paths the webhooks take (a shop event, a
 * `sync` or `cancel` delivery job), under job ids derived from what they repair, so a second run finds the first
 * run's job instead of adding one: it repairs nothing new. The one direct call is markReady, made through the
 * gateway under the order lock (as the cancel job's cancelShipment is), which the service treats as idempotent.
 */
import type { ShopConfig } from '../../shops/shops.js';
import { withOrderLock } from '../order-lock.js';
import { RECONCILE_TOPIC, stableJobId } from '../queues.js';
import type { OrderState } from '../../ledger/order-ledger.js';
import type { ShopOrderLister } from '../../shops/platforms/index.js';
import type { Assessment, Repair } from './assess.js';
import type { RunCase } from './gather.js';
import type { RunContext } from './run-context.js';
import type { Finding, FindingAction } from './types.js';

/** What `by` says on a markReady Relais makes here (the service keeps it for audit). */
export const RECONCILE_ACTOR = 'Relais reconciliation';
/** Ledger states in which a markReady by reconciliation moves the order to `ready`. */
const BEFORE_READY: ReadonlySet<OrderState> = new Set(['received', 'dispatching', 'awaiting_ready']);

type Done = { action: FindingAction; note: string };

/** Turns an assessment into a finding, carrying out its repair when the run repairs. */
export async function settle(
  ctx: RunContext,
  shop: ShopConfig,
  lister: ShopOrderLister,
  c: RunCase,
  a: Assessment,
): Promise<Finding> {
  const orderName = c.shopSide.kind === 'order' ? c.shopSide.order.orderName : c.record?.meta.orderName;
  const finding: Finding = {
    kind: a.kind,
    shopId: shop.id,
    externalOrderId: c.externalOrderId,
    ...(orderName === undefined ? {} : { orderName }),
    ...(a.shipment ? { shipmentId: a.shipment.shipmentId, shipmentStatus: a.shipment.status } : {}),
    ...(a.amountXof === undefined ? {} : { amountXof: a.amountXof }),
    action: a.severity,
    detail: a.detail,
    ...(a.advice ? { advice: a.advice } : {}),
  };
  if (!a.repair) return finding;
  if (!ctx.window.repair) {
    return {
      ...finding,
      action: 'would_repair',
      advice: a.advice ?? `run with --repair to ${describeRepair(a.repair)}`,
    };
  }
  try {
    const outcome = await carryOut(ctx, shop, lister, c, a.repair);
    return { ...finding, action: outcome.action, detail: `${finding.detail}; ${outcome.note}` };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    ctx.deps.logger.warn(
      { shop: shop.id, order: c.externalOrderId, repair: a.repair.type, err: message },
      'reconciliation repair failed',
    );
    return {
      ...finding,
      action: 'alert',
      detail: `${finding.detail}; the repair failed: ${message}`,
      advice: 'run again later, or fix it by hand',
    };
  }
}

async function carryOut(
  ctx: RunContext,
  shop: ShopConfig,
  lister: ShopOrderLister,
  c: RunCase,
  repair: Repair,
): Promise<Done> {
  const extId = c.externalOrderId;
  switch (repair.type) {
    case 'enqueue_order':
      return replayOrder(ctx, shop, lister, c, repair.orderId);
    case 'mark_ready':
      return markReady(ctx, shop, extId, repair.shipmentId);
    case 'sync': {
      const queued = await enqueueDelivery(ctx, 'sync', shop, extId, repair.shipmentId, repair.status);
      if (!queued) return { action: 'already_requested', note: 'an earlier run already asked for this sync' };
      const unnoted = await note(ctx, extId, 'sync delivery', 'enqueued');
      return { action: 'repaired', note: `a sync delivery job re-reads the shipment and writes the shop${unnoted}` };
    }
    case 'cancel': {
      // The cancel job calls cancelShipment through the gateway under the order lock (src/orders/delivery/cancel-delivery.ts).
      const queued = await enqueueDelivery(ctx, 'cancel', shop, extId, repair.shipmentId, 'cancel');
      if (!queued) return { action: 'already_requested', note: 'an earlier run already asked to cancel it' };
      const unnoted = await note(ctx, extId, 'cancel shipment', 'enqueued');
      return {
        action: 'repaired',
        note: `a cancel delivery job cancels the shipment (refused once picked up: then written on the order)${unnoted}`,
      };
    }
  }
}

/** The whole order (Shopify line items are not in the listing), as its webhook would have carried it. */
async function replayOrder(
  ctx: RunContext,
  shop: ShopConfig,
  lister: ShopOrderLister,
  c: RunCase,
  orderId: string,
): Promise<Done> {
  const { deps } = ctx;
  const payload = await ctx.call('shop order', () => lister.order(orderId));
  if (payload === undefined) return { action: 'alert', note: 'the shop no longer has the order; nothing replayed' };
  // One replay per version of the order: a second run finds this job instead of adding one.
  const jobId = stableJobId('reconcile', c.externalOrderId, c.version ?? 'unlisted');
  if (await deps.queues.shopEvents.getJob(jobId))
    return { action: 'already_requested', note: 'an earlier run already replayed it' };
  await deps.queues.shopEvents.add(
    RECONCILE_TOPIC,
    { shopId: shop.id, platform: shop.platform, topic: RECONCILE_TOPIC, receivedAt: deps.now().toISOString(), payload },
    { jobId },
  );
  const unnoted = await note(ctx, c.externalOrderId, 'replay missed webhook', 'enqueued');
  return { action: 'repaired', note: `replayed as a shop event (the path a webhook takes)${unnoted}` };
}

/**
 * markReady, under the order lock, on an order that is not held: the record is read again there, as the run's
 * read may be minutes old (an order held since keeps its hold: reconciliation repairs no held order). The gateway
 * confirms the lock before the call and notes the call on the order's timeline, whatever its outcome.
 */
async function markReady(ctx: RunContext, shop: ShopConfig, extId: string, shipmentId: string): Promise<Done> {
  const { deps } = ctx;
  const marked = await withOrderLock(deps.redis, deps.prefix, extId, async (lock) => {
    const fresh = await deps.ledger.get(extId);
    if (fresh?.state === 'held') return { heldFor: fresh.hold?.code ?? 'unknown' };
    const calls = ctx.gateway.forShop(shop).underLock(extId, lock);
    const { status } = await calls.markReady(shipmentId, RECONCILE_ACTOR, { detail: () => `by ${RECONCILE_ACTOR}` });
    const ours = fresh?.shipment?.shipmentId === shipmentId;
    if (ours && fresh?.shipment) {
      await deps.ledger.saveShipment(extId, { ...fresh.shipment, status, markedReadyAt: deps.now().toISOString() });
      if (BEFORE_READY.has(fresh.state)) await deps.ledger.setState(extId, 'ready', deps.now());
    }
    return { status, ours };
  });
  if ('heldFor' in marked)
    return { action: 'alert', note: `not marked ready: the order is held (${marked.heldFor}) since the run read it` };
  // The tracking link goes to the shop as after any markReady (worker.ts does the same).
  if (marked.ours) await enqueueDelivery(ctx, 'sync', shop, extId, shipmentId, marked.status);
  return { action: 'repaired', note: `marked ready by "${RECONCILE_ACTOR}" (now ${marked.status})` };
}

/** A delivery job under an id made of what it repairs; false when that job already exists and has not failed. */
async function enqueueDelivery(
  ctx: RunContext,
  name: 'sync' | 'cancel',
  shop: ShopConfig,
  extId: string,
  shipmentId: string,
  what: string,
): Promise<boolean> {
  const { deliveries } = ctx.deps.queues;
  const jobId = stableJobId(`reconcile-${name}`, extId, shipmentId, what);
  const earlier = await deliveries.getJob(jobId);
  // A job that spent its attempts repaired nothing: it is asked again, not reported as already requested.
  if (earlier && !(await earlier.isFailed())) return false;
  await earlier?.remove();
  await deliveries.add(
    name,
    { shopId: shop.id, shipmentId, externalOrderId: extId, trigger: RECONCILE_TOPIC },
    { jobId },
  );
  return true;
}

/**
 * The order's timeline entry for a repair already carried out (its job is enqueued). A ledger that cannot take
 * it (PostgreSQL away while Redis answers) does not undo the repair, and reporting the repair as failed would
 * send the operator after something done: the gap is logged and said in the finding instead ('' when noted).
 */
async function note(ctx: RunContext, extId: string, operation: string, outcome: string): Promise<string> {
  try {
    await ctx.deps.ledger.appendTimeline(extId, {
      at: ctx.deps.now().toISOString(),
      system: 'relais',
      operation: `reconciliation: ${operation}`,
      outcome,
    });
    return '';
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    ctx.deps.logger.warn(
      { order: extId, operation, err: message },
      'reconciliation: repair done, but its timeline entry could not be written',
    );
    return ` (not noted on the order's timeline: ${message})`;
  }
}

function describeRepair(repair: Repair): string {
  switch (repair.type) {
    case 'enqueue_order':
      return 'replay the order as a shop event';
    case 'mark_ready':
      return `mark ${repair.shipmentId} ready`;
    case 'sync':
      return `sync ${repair.shipmentId} into the ledger and the shop`;
    case 'cancel':
      return `cancel ${repair.shipmentId}`;
  }
}
