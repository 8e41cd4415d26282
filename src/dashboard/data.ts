/**
 * What the pages read from the ledger: a shop's orders newest first (optionally one state), and the
 * cash-on-delivery figures per day. Records are read a batch per query, and every scan is bounded.
 */
import { collectsCash } from '../domain/delivery.js';
import type { OrderLedger, OrderRecord, OrderState } from '../ledger/order-ledger.js';

type LedgerReader = Pick<OrderLedger, 'getMany' | 'listShopOrders'>;

const BATCH = 200;
/** The ledger index holds ids by first-seen time; the pages look at most at this many of a shop's latest. */
export const SCAN_LIMIT = 10_000;

export interface OrderListing {
  records: OrderRecord[];
  /** Ids in the window (capped at SCAN_LIMIT). */
  inWindow: number;
  /** True when more matching orders exist than were shown. */
  truncated: boolean;
}

export async function loadRecords(ledger: LedgerReader, ids: readonly string[]): Promise<OrderRecord[]> {
  const out: OrderRecord[] = [];
  for (let i = 0; i < ids.length; i += BATCH) {
    for (const record of await ledger.getMany(ids.slice(i, i + BATCH))) if (record) out.push(record);
  }
  return out;
}

/** A shop's orders first seen since `since`, newest first, keeping those in `state` (all when undefined). */
export async function listOrders(
  ledger: LedgerReader,
  options: { shopId: string; since: Date; state?: OrderState; limit: number },
): Promise<OrderListing> {
  const ids = (await ledger.listShopOrders(options.shopId, { since: options.since, limit: SCAN_LIMIT })).reverse();
  const records: OrderRecord[] = [];
  let i = 0;
  while (i < ids.length && records.length <= options.limit) {
    const batch = await loadRecords(ledger, ids.slice(i, i + BATCH));
    i += BATCH;
    for (const record of batch) if (!options.state || record.state === options.state) records.push(record);
  }
  return { records: records.slice(0, options.limit), inWindow: ids.length, truncated: records.length > options.limit };
}

/** What the courier collects for this order's goods: the amount sent with the shipment, else the order's own. */
export function amountToCollect(record: OrderRecord): number {
  if (record.shipment?.orderAmountXof !== undefined) return record.shipment.orderAmountXof;
  if (record.door) return record.door.goods;
  // Same rule as the shipment request: only these families send an amount for the courier to collect.
  if (record.order && collectsCash(record.order.paymentFamily)) return record.order.amountToCollect;
  return 0;
}

/** Orders with a live shipment: cash the couriers are expected to bring back. */
const IN_FLIGHT: ReadonlySet<OrderState> = new Set([
  'awaiting_ready',
  'ready',
  'in_delivery',
  'delivery_failed',
  'cancel_refused',
]);
/** Orders that have not reached the service yet. */
const NOT_DISPATCHED: ReadonlySet<OrderState> = new Set(['received', 'held', 'dispatching']);

export interface CodDay {
  /** YYYY-MM-DD (UTC). */
  day: string;
  collected: { orders: number; xof: number };
  expected: { orders: number; xof: number };
  notDispatched: { orders: number; xof: number };
  returned: { orders: number; xof: number };
}

export interface CodFigures {
  days: CodDay[];
  totals: Omit<CodDay, 'day'>;
  ordersRead: number;
}

const dayOf = (iso: string) => iso.slice(0, 10);

/**
 * Cash-on-delivery figures from the ledger, per day (UTC): collected = delivered orders, on the day they
 * were delivered; expected = orders with a live shipment, on the day they were received; not dispatched
 * = received or held orders with an amount to collect; returned = parcels that came back (cash never
 * collected). Prepaid orders count for nothing.
 */
export function codFigures(records: readonly OrderRecord[]): CodFigures {
  const zero = () => ({ orders: 0, xof: 0 });
  const byDay = new Map<string, CodDay>();
  const totals = { collected: zero(), expected: zero(), notDispatched: zero(), returned: zero() };
  const add = (day: string, bucket: keyof typeof totals, xof: number) => {
    let entry = byDay.get(day);
    if (!entry) {
      entry = { day, collected: zero(), expected: zero(), notDispatched: zero(), returned: zero() };
      byDay.set(day, entry);
    }
    entry[bucket].orders += 1;
    entry[bucket].xof += xof;
    totals[bucket].orders += 1;
    totals[bucket].xof += xof;
  };
  for (const record of records) {
    const xof = amountToCollect(record);
    if (xof <= 0) continue;
    if (record.state === 'delivered') add(dayOf(record.stateChangedAt), 'collected', xof);
    else if (record.state === 'returned') add(dayOf(record.stateChangedAt), 'returned', xof);
    else if (IN_FLIGHT.has(record.state)) add(dayOf(record.meta.firstSeenAt), 'expected', xof);
    else if (NOT_DISPATCHED.has(record.state)) add(dayOf(record.meta.firstSeenAt), 'notDispatched', xof);
  }
  const days = [...byDay.values()].sort((a, b) => b.day.localeCompare(a.day));
  return { days, totals, ordersRead: records.length };
}
