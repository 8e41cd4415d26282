/**
 * The rules of reconciliation, as pure functions: one order of a shop (what the shop says, what the ledger
 * says, every shipment carrying its external_order_id, their claims) in, findings out, each with the repair
 * that would fix it. Nothing here calls anything: run.ts gathers the facts and carries the repairs out.
 */
import { describeDoorAmount, goodsOwed } from '../domain/door-amount.js';
import type { ShopConfig } from '../config/shops.js';
import type { StoreOrder } from '../domain/order.js';
import { FINAL_STEPS, movesForward, showsMarkedReady, type DeliveryStep } from '../domain/shipment-status.js';
import { collectsCash, type Claim, type Shipment } from '../domain/delivery.js';
import { decideEligibility } from '../jobs/policy.js';
import { platformOf } from '../stores/index.js';
import type { OrderRecord } from '../ledger/order-ledger.js';
import type { FindingKind } from './types.js';

/** What run.ts can do about a finding. */
export type Repair =
  /** Fetch the order from the shop and enqueue it as a shop event, the path a webhook takes. */
  | { type: 'enqueue_order'; orderId: string }
  | { type: 'mark_ready'; shipmentId: string }
  /** A `sync` delivery job: re-read the shipment, move the ledger, write the shop. */
  | { type: 'sync'; shipmentId: string; status: string }
  /** A `cancel` delivery job, as for a shop cancellation webhook. */
  | { type: 'cancel'; shipmentId: string };

export interface Assessment {
  kind: FindingKind;
  detail: string;
  advice?: string;
  shipment?: Shipment;
  amountXof?: number;
  /** Set when Relais can fix it; otherwise `severity` says whether a person must look. */
  repair?: Repair;
  severity: 'alert' | 'info';
}

/** What the shop said about the order this run, when it was read. */
export type ShopSide =
  | { kind: 'order'; order: StoreOrder }
  /** Read, but it cannot be shipped as it is (normalise.ts's reason). */
  | { kind: 'unreadable'; code: string; message: string }
  /** Not in the window's listing and not looked up. */
  | { kind: 'not_read' }
  /** Looked up: the shop has no such order. */
  | { kind: 'missing' };

export interface OrderCase {
  shop: ShopConfig;
  externalOrderId: string;
  /** The platform's order id, for a replay. */
  orderId?: string;
  shopSide: ShopSide;
  record?: OrderRecord;
  /** Every shipment carrying this external_order_id (duplicates included). */
  shipments: Shipment[];
  /** Claims by shipment id, for the shipments whose claims were read. */
  claims: ReadonlyMap<string, Claim[]>;
  now: Date;
}

/** Ledger states that are an end, as the step the service shows for it. */
const FINAL_STATE_STEP: Partial<Record<OrderRecord['state'], DeliveryStep>> = {
  cancelled: 'cancelled',
  delivered: 'delivered',
  returned: 'returned',
};

/** How long after Relais starts dispatching, or marks a shipment ready, a missing write-back is still "on its way", not drift. */
const JUST_MARKED_READY_MS = 5 * 60_000;

const stepOf = (shipment: Shipment): DeliveryStep | undefined => shipment.step;

/** A shipment whose run can still happen or is happening (unknown states count as live: never assume an end). */
export function isLive(shipment: Shipment): boolean {
  const step = stepOf(shipment);
  return step === undefined || !FINAL_STEPS.has(step);
}

/**
 * The shipment that stands for the order: the ledger's own, else the newest live one, else the newest.
 * The service may hold several for one reference (it does not refuse duplicates).
 */
export function primaryShipment(shipments: readonly Shipment[], record: OrderRecord | undefined): Shipment | undefined {
  const ours = record?.shipment ? shipments.find((s) => s.shipmentId === record.shipment?.shipmentId) : undefined;
  if (ours) return ours;
  const newestFirst = [...shipments].sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? ''));
  return newestFirst.find(isLive) ?? newestFirst[0];
}

/** When the shipment was created: the service's date, else what the ledger recorded. */
function createdAtOf(shipment: Shipment, record: OrderRecord | undefined): number | undefined {
  const candidates = [
    shipment.createdAt,
    record?.shipment?.shipmentId === shipment.shipmentId ? record.shipment.createdAt : undefined,
  ];
  for (const text of candidates) {
    const at = text === undefined ? Number.NaN : Date.parse(text);
    if (!Number.isNaN(at)) return at;
  }
  return undefined;
}

/** The cash the shipment carries: its orderAmountXof, else the amount owed when Relais shipped it, else now. */
export function codAmountOf(
  shipment: Shipment | undefined,
  record: OrderRecord | undefined,
  order: StoreOrder | undefined,
): number {
  return (
    shipment?.orderAmountXof ?? record?.door?.goods ?? record?.order?.amountToCollect ?? order?.amountToCollect ?? 0
  );
}

/** The goods' value the courier would collect for this order (door-amount.ts), 0 when nothing is owed. */
function goodsOf(order: StoreOrder, shop: ShopConfig): number {
  const owed = goodsOwed(order, shop.policy.deliveryFeePaidBy);
  return owed.ok ? owed.goods : 0;
}

export function isCashOnDelivery(order: StoreOrder | undefined, shipment: Shipment | undefined): boolean {
  return (order !== undefined && collectsCash(order.paymentFamily)) || (shipment?.orderAmountXof ?? 0) > 0;
}

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

function assessCase(c: OrderCase): Assessment[] {
  const found: Assessment[] = [];
  const { record, shop } = c;
  const primary = primaryShipment(c.shipments, record);
  const order = c.shopSide.kind === 'order' ? c.shopSide.order : undefined;
  const cancelledInShop = order?.cancelled === true;
  const shopShips = order !== undefined && decideEligibility(order, shop).decision === 'dispatch';
  const stopped = stoppedByShop(record);

  if (record?.state === 'held' && !(stopped && shopShips)) {
    const held = `held since ${record.hold?.at ?? record.stateChangedAt}: [${record.hold?.code ?? 'unknown'}] ${record.hold?.message ?? 'no reason recorded'}`;
    found.push(
      stopped
        ? { kind: 'held', severity: 'info', detail: held, advice: 'nothing to do: it ships once the shop ships it' }
        : {
            kind: 'held',
            severity: 'alert',
            detail: held,
            advice: `fix the cause, then: relais replay ${c.externalOrderId}`,
          },
    );
  }

  const live = c.shipments.filter(isLive);
  if (live.length > 1) {
    const extra = live.filter((s) => s !== primary).map((s) => s.shipmentId);
    found.push({
      kind: 'duplicate_shipment',
      severity: 'alert',
      shipment: primary,
      detail: `${live.length} live shipments carry this order: ${live.map((s) => `${s.shipmentId} (${s.status})`).join(', ')}`,
      advice: `cancel ${extra.join(', ')} with the delivery service before pickup, so the customer gets one parcel`,
    });
  }

  // A missed webhook: the shop says ship it, nothing was shipped, and Relais is not in the middle of it.
  if (!primary) {
    if (
      c.shopSide.kind === 'order' &&
      decideEligibility(c.shopSide.order, shop).decision === 'dispatch' &&
      c.orderId !== undefined
    ) {
      if (!record || REPLAYABLE.has(record.state) || stopped) {
        found.push({
          kind: 'missed_webhook',
          severity: 'alert',
          detail: record
            ? `the shop says ship it (${platformOf(shop).describeStatus(c.shopSide.order)}) but Relais has it ${record.state} and no shipment exists`
            : `the shop says ship it (${platformOf(shop).describeStatus(c.shopSide.order)}) but Relais never received the order and no shipment exists`,
          repair: { type: 'enqueue_order', orderId: c.orderId },
          ...(isCashOnDelivery(c.shopSide.order, undefined) ? { amountXof: goodsOf(c.shopSide.order, shop) } : {}),
        });
      }
    } else if (c.shopSide.kind === 'unreadable' && !record && c.orderId !== undefined) {
      // Never recorded at all: replaying it records it, held with this reason, where a person will see it.
      found.push({
        kind: 'missed_webhook',
        severity: 'alert',
        detail: `Relais never received the order; it cannot be shipped as it is: [${c.shopSide.code}] ${c.shopSide.message}`,
        advice: 'replayed, it will be held with this reason; fix the order in the shop',
        repair: { type: 'enqueue_order', orderId: c.orderId },
      });
    }
    return found;
  }

  const step = stepOf(primary);

  // Restored in the shop after its shipment was cancelled: Relais will not make a second shipment under the same
  // reference (its lookup finds the cancelled one), so nobody ships it unless a person does.
  if (shopShips && step === 'cancelled' && !c.shipments.some(isLive) && (record?.state === 'cancelled' || stopped)) {
    found.push({
      kind: 'restored_after_cancel',
      severity: 'alert',
      shipment: primary,
      detail: `the shop says ship it (${platformOf(shop).describeStatus(order)}) but its shipment ${primary.shipmentId} was cancelled and Relais ${record?.state === 'cancelled' ? 'ended the order' : 'holds it'}: nobody is shipping it`,
      advice: `ship it by hand with the delivery service (Relais makes no second shipment for ${c.externalOrderId}), or cancel it in the shop`,
    });
  }

  // Cancelled in the shop, still running at the service.
  if (cancelledInShop && isLive(primary)) {
    if (record?.state === 'cancel_refused') {
      found.push({
        kind: 'cancelled_with_live_shipment',
        severity: 'alert',
        shipment: primary,
        detail: record.delivery?.problem ?? `the delivery service refused to cancel ${primary.shipmentId}`,
        advice: 'the parcel was picked up: ask the courier service to stop or return it',
      });
    } else if (record?.shipment?.shipmentId === primary.shipmentId) {
      found.push({
        kind: 'cancelled_with_live_shipment',
        severity: 'alert',
        shipment: primary,
        detail: `cancelled in the shop, shipment ${primary.shipmentId} is still ${primary.status}`,
        repair: { type: 'cancel', shipmentId: primary.shipmentId },
      });
    } else {
      found.push({
        kind: 'cancelled_with_live_shipment',
        severity: 'alert',
        shipment: primary,
        detail: `cancelled in the shop, shipment ${primary.shipmentId} is still ${primary.status}, and Relais's ledger does not follow it`,
        advice: `cancel ${primary.shipmentId} with the delivery service before pickup`,
      });
    }
  }

  // A state the wire profile does not know: never progress, so a person must name it (one line in the profile).
  if (step === undefined) {
    found.push({
      kind: 'unknown_state',
      severity: 'alert',
      shipment: primary,
      detail: `the delivery service calls shipment ${primary.shipmentId} "${primary.status}", a state the shop's wire profile does not map; Relais keeps polling it and counts it as no progress`,
      advice: `add "${primary.status}" to the right step in the wire profile (relais probe lists the names the service uses)`,
    });
  }

  // No markReady recorded past the shop's bound, whatever the service calls the state: Relais's own 2xx
  // markReady (in the ledger) or a state the profile maps past ready are the only proofs.
  const ours = record?.shipment?.shipmentId === primary.shipmentId;
  const readyRecorded = ours && record?.shipment?.markedReadyAt !== undefined;
  if (
    !readyRecorded &&
    !showsMarkedReady(step) &&
    isLive(primary) &&
    !cancelledInShop &&
    c.shopSide.kind !== 'missing'
  ) {
    const createdAt = createdAtOf(primary, record);
    const boundMs = shop.policy.unreadyAlertMinutes * 60_000;
    const ageMs = createdAt === undefined ? undefined : c.now.getTime() - createdAt;
    if (ageMs === undefined || ageMs >= boundMs) {
      const since = createdAt === undefined ? 'for an unknown time' : `for ${Math.floor(ageMs! / 60_000)} min`;
      const never = { kind: 'never_ready', severity: 'alert', shipment: primary } as const;
      const unready = `created and not marked ready ${since} (bound ${shop.policy.unreadyAlertMinutes} min; the service calls it "${primary.status}")`;
      // Only for an order the shop shows as standing: never start a courier run on an order Relais could not read.
      if (c.shopSide.kind === 'order') {
        found.push({
          ...never,
          detail: `${unready}: no courier is offered it`,
          repair: { type: 'mark_ready', shipmentId: primary.shipmentId },
        });
      } else {
        found.push({
          ...never,
          detail: `${unready}; the shop's order could not be read to confirm it still stands`,
          advice: 'check the order in the shop, then mark the shipment ready with the delivery service (or cancel it)',
        });
      }
    }
  }

  // The courier collects what the customer owes, until the cash is in.
  if (order && !order.cancelled && step !== undefined && !FINAL_STEPS.has(step)) {
    const carried = primary.orderAmountXof;
    if (collectsCash(order.paymentFamily)) {
      // The goods' value owed, the same rule as the shipment request (door-amount.ts), not the shop's raw balance.
      const goods = goodsOf(order, shop);
      if (carried !== goods) {
        const door = record?.door ? ` (${describeDoorAmount(record.door)})` : '';
        found.push({
          kind: 'cod_mismatch',
          severity: 'alert',
          shipment: primary,
          amountXof: goods,
          detail: `the customer owes ${goods} XOF for the goods (shop balance ${order.amountToCollect} XOF, shipping charged ${order.shippingCharged} XOF, delivery paid by the ${shop.policy.deliveryFeePaidBy}); the shipment carries ${carried === undefined ? 'no amount' : `${carried} XOF`}${door}`,
          advice: 'cancel the shipment before pickup and replay the order, or settle the difference with the customer',
        });
      }
    } else if (carried !== undefined && carried > 0) {
      found.push({
        kind: 'cod_mismatch',
        severity: 'alert',
        shipment: primary,
        amountXof: carried,
        detail: `the order is ${order.paymentFamily.replace(/_/g, ' ')} but the shipment has the courier collect ${carried} XOF`,
        advice: 'cancel the shipment before pickup and replay the order, or tell the courier service not to collect',
      });
    }
  }

  // The service moved on and the ledger (hence the shop) did not hear of it.
  if (record && record.shipment?.shipmentId === primary.shipmentId && step !== undefined) {
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
    if (behind) {
      found.push({
        kind: 'status_drift',
        severity: 'alert',
        shipment: primary,
        detail: `the service says ${primary.status}; Relais (and the shop) last saw ${known ?? 'nothing since the shipment was created'}`,
        repair: { type: 'sync', shipmentId: primary.shipmentId, status: primary.status },
      });
    }
  }

  for (const shipment of c.shipments) {
    for (const claim of c.claims.get(shipment.shipmentId) ?? []) {
      const amount = isCashOnDelivery(order, shipment) ? codAmountOf(shipment, record, order) : undefined;
      if (isOpenClaim(claim)) {
        found.push({
          kind: 'dispute_open',
          severity: 'info',
          shipment,
          ...(amount === undefined ? {} : { amountXof: amount }),
          detail: `claim ${claim.claimId ?? '?'} (${claim.reason}) is open since ${claim.createdAt ?? '?'}: the settlement of ${shipment.shipmentId} is held until it is decided`,
        });
      } else {
        found.push({
          kind: 'dispute_decided',
          severity: 'info',
          shipment,
          ...(amount === undefined ? {} : { amountXof: amount }),
          detail: `claim ${claim.claimId ?? '?'} (${claim.reason}) ${claim.status ?? 'decided'}${claim.decidedAt ? ` on ${claim.decidedAt}` : ''}: ${claim.outcome ?? 'no outcome given'}`,
        });
      }
    }
  }
  return found;
}

/** A claim with no status, or OPEN, is treated as open: the settlement stays held until the service says otherwise. */
export function isOpenClaim(claim: Claim): boolean {
  return claim.status === undefined || claim.status.toUpperCase() === 'OPEN';
}
