/**
 * The rules of reconciliation, as pure functions: one order of a shop (case.ts) in, findings out, each with the
 * repair that would fix it. Nothing here calls anything: run.ts gathers the facts and repairs.ts carries the
 * repairs out.
 */
import { describeDoorAmount, goodsCarried } from '../../domain/door-amount.js';
import type { StoreOrder } from '../../domain/order.js';
import { FINAL_STEPS, movesForward, showsMarkedReady, type DeliveryStep } from '../../domain/shipment-status.js';
import { collectsCash, type Shipment } from '../../domain/delivery.js';
import { decideEligibility } from '../intake/policy.js';
import { platformOf } from '../../shops/platforms/index.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import {
  createdAtOf,
  FINAL_STATE_STEP,
  goodsOf,
  isCashOnDelivery,
  isLive,
  isOpenClaim,
  JUST_MARKED_READY_MS,
  primaryShipment,
  stepOf,
  type Assessment,
  type OrderCase,
} from './case.js';

export {
  isCashOnDelivery,
  isLive,
  isOpenClaim,
  primaryShipment,
  type Assessment,
  type OrderCase,
  type Repair,
  type ShopSide,
} from './case.js';

/**
 * Ledger states a shop event can still move to dispatch (shop-event.ts). A held order is reported as held;
 * one being dispatched is the dispatch job's (which holds it if it gives up); the others have moved on.
 */
const REPLAYABLE = new Set(['received', 'waiting']);

/**
 * Everything reconciliation finds about one order. A held order is never repaired around its hold (no
 * markReady, sync or replay): its findings are reported for a person, who resolves the hold first. Only the
 * shop's own word goes through (see below).
 */
export function assessOrder(c: OrderCase): Assessment[] {
  const found = assessCase(c);
  if (c.record?.state !== 'held') return found;
  const code = c.record.hold?.code ?? 'unknown';
  // The shop's own word is not a repair around the hold: its cancellation (the shipment is cancelled, as the
  // lost webhook would have had it), and, for a hold the shop's status placed (a failed payment, a cancellation),
  // the shop's order replayed as the webhook that was lost.
  const shopsWord = (a: Assessment) =>
    a.repair?.type === 'cancel' || (a.repair?.type === 'enqueue_order' && stoppedByShop(c.record));
  return found.map((a) => (shopsWord(a) ? a : withoutRepairWhileHeld(a, code)));
}

/** Held because the shop stopped the order in a way it can undo (StoreOrder.stoppedInShop), not for a person. */
function stoppedByShop(record: OrderRecord | undefined): boolean {
  const stopped = record?.order?.stoppedInShop;
  return record?.state === 'held' && stopped !== undefined && record.hold?.code === stopped.code;
}

/** A finding of a held order: reported, not repaired (a hold is left only by what resolves it: order-state.ts). */
function withoutRepairWhileHeld(a: Assessment, code: string): Assessment {
  if (!a.repair) return a;
  const { repair: _repair, ...rest } = a;
  return {
    ...rest,
    severity: 'alert',
    advice: `the order is held (${code}): reconciliation repairs no held order; resolve the hold first (relais held shows why)${a.advice ? `, then ${a.advice}` : ''}`,
  };
}

/** What the rules read of a case, worked out once. */
interface Facts {
  c: OrderCase;
  record: OrderRecord | undefined;
  /** The shop's order as read this run, when it was. */
  order: StoreOrder | undefined;
  primary: Shipment | undefined;
  cancelledInShop: boolean;
  /** The shop's policy says ship it. */
  shopShips: boolean;
  /** Held because the shop stopped it (stoppedByShop). */
  stopped: boolean;
}

/** The findings about the order's shipment, once it has one. */
interface ShipmentFacts extends Facts {
  primary: Shipment;
  step: DeliveryStep | undefined;
}

function assessCase(c: OrderCase): Assessment[] {
  const order = c.shopSide.kind === 'order' ? c.shopSide.order : undefined;
  const facts: Facts = {
    c,
    record: c.record,
    order,
    primary: primaryShipment(c.shipments, c.record),
    cancelledInShop: order?.cancelled === true,
    shopShips: order !== undefined && decideEligibility(order, c.shop).decision === 'dispatch',
    stopped: stoppedByShop(c.record),
  };
  const found = [...held(facts), ...duplicates(facts)];
  if (!facts.primary) return [...found, ...missedWebhook(facts)];
  const shipped: ShipmentFacts = { ...facts, primary: facts.primary, step: stepOf(facts.primary) };
  return [
    ...found,
    ...restoredAfterCancel(shipped),
    ...cancelledWithLiveShipment(shipped),
    ...unknownState(shipped),
    ...neverReady(shipped),
    ...codMismatch(shipped),
    ...statusDrift(shipped),
    ...claimFindings(facts),
  ];
}

function held({ c, record, stopped, shopShips }: Facts): Assessment[] {
  if (record?.state !== 'held' || (stopped && shopShips)) return [];
  const detail = `held since ${record.hold?.at ?? record.stateChangedAt}: [${record.hold?.code ?? 'unknown'}] ${record.hold?.message ?? 'no reason recorded'}`;
  return [
    stopped
      ? { kind: 'held', severity: 'info', detail, advice: 'nothing to do: it ships once the shop ships it' }
      : { kind: 'held', severity: 'alert', detail, advice: `fix the cause, then: relais replay ${c.externalOrderId}` },
  ];
}

function duplicates({ c, primary }: Facts): Assessment[] {
  const live = c.shipments.filter(isLive);
  if (live.length <= 1) return [];
  const extra = live.filter((s) => s !== primary).map((s) => s.shipmentId);
  return [
    {
      kind: 'duplicate_shipment',
      severity: 'alert',
      shipment: primary,
      detail: `${live.length} live shipments carry this order: ${live.map((s) => `${s.shipmentId} (${s.status})`).join(', ')}`,
      advice: `cancel ${extra.join(', ')} with the delivery service before pickup, so the customer gets one parcel`,
    },
  ];
}

/** A missed webhook: the shop says ship it, nothing was shipped, and Relais is not in the middle of it. */
function missedWebhook({ c, record, stopped }: Facts): Assessment[] {
  const { shop } = c;
  if (c.orderId === undefined) return [];
  if (c.shopSide.kind === 'order' && decideEligibility(c.shopSide.order, shop).decision === 'dispatch') {
    if (record && !REPLAYABLE.has(record.state) && !stopped) return [];
    const status = platformOf(shop).describeStatus(c.shopSide.order);
    return [
      {
        kind: 'missed_webhook',
        severity: 'alert',
        detail: record
          ? `the shop says ship it (${status}) but Relais has it ${record.state} and no shipment exists`
          : `the shop says ship it (${status}) but Relais never received the order and no shipment exists`,
        repair: { type: 'enqueue_order', orderId: c.orderId },
        ...(isCashOnDelivery(c.shopSide.order, undefined) ? { amountXof: goodsOf(c.shopSide.order, shop) } : {}),
      },
    ];
  }
  if (c.shopSide.kind !== 'unreadable' || record) return [];
  // Never recorded at all: replaying it records it, held with this reason, where a person will see it.
  return [
    {
      kind: 'missed_webhook',
      severity: 'alert',
      detail: `Relais never received the order; it cannot be shipped as it is: [${c.shopSide.code}] ${c.shopSide.message}`,
      advice: 'replayed, it will be held with this reason; fix the order in the shop',
      repair: { type: 'enqueue_order', orderId: c.orderId },
    },
  ];
}

/**
 * Restored in the shop after its shipment was cancelled: Relais will not make a second shipment under the same
 * reference (its lookup finds the cancelled one), so nobody ships it unless a person does.
 */
function restoredAfterCancel({ c, record, order, primary, step, shopShips, stopped }: ShipmentFacts): Assessment[] {
  if (!shopShips || !order || step !== 'cancelled' || c.shipments.some(isLive)) return [];
  if (record?.state !== 'cancelled' && !stopped) return [];
  return [
    {
      kind: 'restored_after_cancel',
      severity: 'alert',
      shipment: primary,
      detail: `the shop says ship it (${platformOf(c.shop).describeStatus(order)}) but its shipment ${primary.shipmentId} was cancelled and Relais ${record?.state === 'cancelled' ? 'ended the order' : 'holds it'}: nobody is shipping it`,
      advice: `ship it by hand with the delivery service (Relais makes no second shipment for ${c.externalOrderId}), or cancel it in the shop`,
    },
  ];
}

/** Cancelled in the shop, still running at the service. */
function cancelledWithLiveShipment({ record, primary, cancelledInShop }: ShipmentFacts): Assessment[] {
  if (!cancelledInShop || !isLive(primary)) return [];
  const base = { kind: 'cancelled_with_live_shipment', severity: 'alert', shipment: primary } as const;
  if (record?.state === 'cancel_refused') {
    return [
      {
        ...base,
        detail: record.delivery?.problem ?? `the delivery service refused to cancel ${primary.shipmentId}`,
        advice: 'the parcel was picked up: ask the courier service to stop or return it',
      },
    ];
  }
  const still = `cancelled in the shop, shipment ${primary.shipmentId} is still ${primary.status}`;
  if (record?.shipment?.shipmentId === primary.shipmentId)
    return [{ ...base, detail: still, repair: { type: 'cancel', shipmentId: primary.shipmentId } }];
  return [
    {
      ...base,
      detail: `${still}, and Relais's ledger does not follow it`,
      advice: `cancel ${primary.shipmentId} with the delivery service before pickup`,
    },
  ];
}

/** A state the wire profile does not know: never progress, so a person must name it (one line in the profile). */
function unknownState({ primary, step }: ShipmentFacts): Assessment[] {
  if (step !== undefined) return [];
  return [
    {
      kind: 'unknown_state',
      severity: 'alert',
      shipment: primary,
      detail: `the delivery service calls shipment ${primary.shipmentId} "${primary.status}", a state the shop's wire profile does not map; Relais keeps polling it and counts it as no progress`,
      advice: `add "${primary.status}" to the right step in the wire profile (relais probe lists the names the service uses)`,
    },
  ];
}

/**
 * No markReady recorded past the shop's bound, whatever the service calls the state: Relais's own 2xx markReady
 * (in the ledger) or a state the profile maps past ready are the only proofs.
 */
function neverReady({ c, record, primary, step, cancelledInShop }: ShipmentFacts): Assessment[] {
  const { shop } = c;
  const readyRecorded =
    record?.shipment?.shipmentId === primary.shipmentId && record.shipment.markedReadyAt !== undefined;
  if (readyRecorded || showsMarkedReady(step) || !isLive(primary) || cancelledInShop) return [];
  if (c.shopSide.kind === 'missing') return [];
  const createdAt = createdAtOf(primary, record);
  const ageMs = createdAt === undefined ? undefined : c.now.getTime() - createdAt;
  if (ageMs !== undefined && ageMs < shop.policy.unreadyAlertMinutes * 60_000) return [];
  const since = ageMs === undefined ? 'for an unknown time' : `for ${Math.floor(ageMs / 60_000)} min`;
  const never = { kind: 'never_ready', severity: 'alert', shipment: primary } as const;
  const unready = `created and not marked ready ${since} (bound ${shop.policy.unreadyAlertMinutes} min; the service calls it "${primary.status}")`;
  // Only for an order the shop shows as standing: never start a courier run on an order Relais could not read.
  if (c.shopSide.kind === 'order') {
    return [
      {
        ...never,
        detail: `${unready}: no courier is offered it`,
        repair: { type: 'mark_ready', shipmentId: primary.shipmentId },
      },
    ];
  }
  return [
    {
      ...never,
      detail: `${unready}; the shop's order could not be read to confirm it still stands`,
      advice: 'check the order in the shop, then mark the shipment ready with the delivery service (or cancel it)',
    },
  ];
}

/** The courier collects the goods the customer owes, until the cash is in. */
function codMismatch({ c, record, order, primary, step }: ShipmentFacts): Assessment[] {
  if (!order || order.cancelled || step === undefined || FINAL_STEPS.has(step)) return [];
  const carried = primary.orderAmountXof;
  const base = { kind: 'cod_mismatch', severity: 'alert', shipment: primary } as const;
  if (!collectsCash(order.paymentFamily)) {
    if (carried === undefined || carried <= 0) return [];
    return [
      {
        ...base,
        amountXof: carried,
        detail: `the order is ${order.paymentFamily.replace(/_/g, ' ')} but the shipment has the courier collect ${carried} XOF`,
        advice: 'cancel the shipment before pickup and replay the order, or tell the courier service not to collect',
      },
    ];
  }
  // The goods owed, the same rule as the shipment request (door-amount.ts), not the outstanding.
  const goods = goodsOf(order, c.shop);
  if (carried === goods) return [];
  const door = record?.door ? ` (${describeDoorAmount(record.door)})` : '';
  return [
    {
      ...base,
      amountXof: goods,
      detail: `the customer owes ${goods} XOF for the goods (outstanding in the shop ${order.outstanding} XOF, shop shipping ${order.shippingCharged} XOF, delivery paid by the ${c.shop.policy.deliveryFeePaidBy}); the shipment carries ${carried === undefined ? 'no amount' : `${carried} XOF`}${door}`,
      advice: 'cancel the shipment before pickup and replay the order, or settle the difference with the customer',
    },
  ];
}

/** The service moved on and the ledger (hence the shop) did not hear of it. */
function statusDrift({ c, record, primary, step }: ShipmentFacts): Assessment[] {
  if (!record || record.shipment?.shipmentId !== primary.shipmentId || step === undefined) return [];
  const known = record.delivery?.step;
  // A cancellation Relais made itself ends the order (state `cancelled`) without a delivery step: not drift.
  const endedAlike = FINAL_STATE_STEP[record.state] === step;
  // Relais is marking it ready, or did moments ago: the dispatch job's last writes and the write-back into
  // the shop (deliveries queue) are on their way, not lost. Had they failed, a later run still finds it.
  const justMarkedReady =
    step === 'ready' &&
    known === undefined &&
    (record.state === 'dispatching' || record.state === 'ready') &&
    c.now.getTime() - Date.parse(record.stateChangedAt) < JUST_MARKED_READY_MS;
  const behind =
    !endedAlike && !justMarkedReady && (known === undefined ? step !== 'created' : movesForward(known, step));
  if (!behind) return [];
  return [
    {
      kind: 'status_drift',
      severity: 'alert',
      shipment: primary,
      detail: `the service says ${primary.status}; Relais (and the shop) last saw ${known ?? 'nothing since the shipment was created'}`,
      repair: { type: 'sync', shipmentId: primary.shipmentId, status: primary.status },
    },
  ];
}

/** Every claim read on the order's shipments, open or decided, with the goods the shipment carries. */
function claimFindings({ c, record, order }: Facts): Assessment[] {
  const found: Assessment[] = [];
  for (const shipment of c.shipments) {
    for (const claim of c.claims.get(shipment.shipmentId) ?? []) {
      const amount = isCashOnDelivery(order, shipment) ? goodsCarried(record, shipment) : undefined;
      const base = { severity: 'info', shipment, ...(amount === undefined ? {} : { amountXof: amount }) } as const;
      found.push(
        isOpenClaim(claim)
          ? {
              ...base,
              kind: 'dispute_open',
              detail: `claim ${claim.claimId ?? '?'} (${claim.reason}) is open since ${claim.createdAt ?? '?'}: the settlement of ${shipment.shipmentId} is held until it is decided`,
            }
          : {
              ...base,
              kind: 'dispute_decided',
              detail: `claim ${claim.claimId ?? '?'} (${claim.reason}) ${claim.status ?? 'decided'}${claim.decidedAt ? ` on ${claim.decidedAt}` : ''}: ${claim.outcome ?? 'no outcome given'}`,
            },
      );
    }
  }
  return found;
}
