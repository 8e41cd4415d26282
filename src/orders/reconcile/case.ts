/**
 * One order of a shop as reconciliation sees it (what the shop says, what the ledger says, every shipment carrying
 * its external_order_id, their claims), the findings it can have, and the facts about shipments the rules share.
 * Pure: nothing here calls anything.
 */
import { goodsOwed } from '../../domain/door-amount.js';
import type { ShopConfig } from '../../shops/shops.js';
import type { StoreOrder } from '../../domain/order.js';
import { FINAL_STEPS, type DeliveryStep } from '../../domain/shipment-status.js';
import { collectsCash, type Claim, type Shipment } from '../../domain/delivery.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import type { FindingKind } from './types.js';

/** What run.ts (repairs.ts) can do about a finding. */
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
export const FINAL_STATE_STEP: Partial<Record<OrderRecord['state'], DeliveryStep>> = {
  cancelled: 'cancelled',
  delivered: 'delivered',
  returned: 'returned',
};

/** How long after Relais starts dispatching, or marks a shipment ready, a missing write-back is still "on its way", not drift. */
export const JUST_MARKED_READY_MS = 5 * 60_000;

export const stepOf = (shipment: Shipment): DeliveryStep | undefined => shipment.step;

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
export function createdAtOf(shipment: Shipment, record: OrderRecord | undefined): number | undefined {
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

/** The goods' value the courier would collect for this order (door-amount.ts), 0 when nothing is owed. */
export function goodsOf(order: StoreOrder, shop: ShopConfig): number {
  const owed = goodsOwed(order, shop.policy.deliveryFeePaidBy);
  return owed.ok ? owed.goods : 0;
}

export function isCashOnDelivery(order: StoreOrder | undefined, shipment: Shipment | undefined): boolean {
  return (order !== undefined && collectsCash(order.paymentFamily)) || (shipment?.orderAmountXof ?? 0) > 0;
}

/** A claim with no status, or OPEN, is treated as open: the settlement stays held until the service says otherwise. */
export function isOpenClaim(claim: Claim): boolean {
  return claim.status === undefined || claim.status.toUpperCase() === 'OPEN';
}
