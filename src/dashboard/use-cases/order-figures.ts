/**
 * What the pages read from the ledger: a shop's orders newest first (optionally one state), and the
 * cash-on-delivery figures per day. Records are read a batch per query, and every scan is bounded.
 */
import { collectsCash } from '../../domain/delivery.js';
import { goodsCarried } from '../../domain/door-amount.js';
import type { OrderFilter, OrderInsights } from '../../ledger/order-insights.js';
import type { OrderLedger, OrderRecord, OrderState } from '../../ledger/order-ledger.js';

type LedgerReader = Pick<OrderLedger, 'getMany'>;

const BATCH = 200;
/** The cash page reads at most this many of the window's latest orders. */
export const SCAN_LIMIT = 10_000;

export interface OrderListing {
  records: OrderRecord[];
  /** How many orders match in all. */
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

/** The orders the filter finds, newest first, at most `filter.limit` of them read. */
export async function findOrderListing(
  ports: { ledger: LedgerReader; insights: Pick<OrderInsights, 'findOrders'> },
  filter: OrderFilter,
): Promise<OrderListing> {
  const found = await ports.insights.findOrders(filter);
  const records = await loadRecords(ports.ledger, found.ids);
  return { records, inWindow: found.total, truncated: found.total > found.ids.length };
}

/** An order's figure on the cash pages, and which number it is (src/domain/door-amount.ts names them). */
export interface CashFigure {
  xof: number;
  /** goods: what its shipment carries; outstanding: not shipped yet, what the shop says is owed; none: nothing to collect. */
  is: 'goods' | 'outstanding' | 'none';
}

/**
 * The order's cash figure: the goods its shipment carries (goodsCarried) once one was sent; before that, for an
 * order that collects cash, the outstanding in the shop (its goods are worked out from it when it ships).
 */
export function cashFigure(record: OrderRecord): CashFigure {
  const goods = goodsCarried(record);
  if (goods !== undefined) return { xof: goods, is: 'goods' };
  // Same rule as the shipment request: only these families send an amount for the courier to collect.
  if (record.order && collectsCash(record.order.paymentFamily))
    return { xof: record.order.outstanding, is: 'outstanding' };
  return { xof: 0, is: 'none' };
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
    const { xof } = cashFigure(record);
    if (xof <= 0) continue;
    if (record.state === 'delivered') add(dayOf(record.stateChangedAt), 'collected', xof);
    else if (record.state === 'returned') add(dayOf(record.stateChangedAt), 'returned', xof);
    else if (IN_FLIGHT.has(record.state)) add(dayOf(record.meta.firstSeenAt), 'expected', xof);
    else if (NOT_DISPATCHED.has(record.state)) add(dayOf(record.meta.firstSeenAt), 'notDispatched', xof);
  }
  const days = [...byDay.values()].sort((a, b) => b.day.localeCompare(a.day));
  return { days, totals, ordersRead: records.length };
}
