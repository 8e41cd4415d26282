/**
 * Cash figures per day, by the order's creation date (UTC), in whole francs: sums of integers, no division.
 *
 *  - COD expected: the goods carried by shipped cash-on-delivery orders (shipments not cancelled): what the
 *    shipment carries (door-amount.ts goodsCarried), else the goods the order owed when Relais shipped it.
 *  - collected: the same amounts, for delivered shipments.
 *  - held in dispute: the same amounts, for shipments with an open claim (settlement held until decided).
 */
import type { StoreOrder } from '../../domain/order.js';
import type { Shipment } from '../../domain/delivery.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import { goodsCarried, goodsOwed, type DeliveryFeePaidBy } from '../../domain/door-amount.js';
import { isCashOnDelivery } from './case.js';
import type { DayFigures } from './types.js';

export interface FigureInput {
  order: StoreOrder;
  record?: OrderRecord;
  /** The shipment standing for the order (assess.ts primaryShipment), if any. */
  shipment?: Shipment;
  openClaims: number;
  /** Who pays the delivery at the door (the shop's policy): the goods owed are worked out with it. */
  paidBy: DeliveryFeePaidBy;
}

export function emptyDay(day: string): DayFigures {
  return {
    day,
    orders: 0,
    shipped: 0,
    delivered: 0,
    codOrders: 0,
    codExpectedXof: 0,
    codCollectedXof: 0,
    heldInDisputeXof: 0,
    openDisputes: 0,
  };
}

/** YYYY-MM-DD of an instant, in UTC (the zone of most XOF countries; Benin and Niger are one hour ahead). */
export function dayOf(instant: string | Date): string | undefined {
  const at = instant instanceof Date ? instant.getTime() : Date.parse(instant);
  return Number.isNaN(at) ? undefined : new Date(at).toISOString().slice(0, 10);
}

/** Days in [from, until), ascending, each with its figures; days without orders are left out. */
export function figuresByDay(inputs: readonly FigureInput[], window: { from: Date; until: Date }): DayFigures[] {
  const firstDay = dayOf(window.from) ?? '';
  const days = new Map<string, DayFigures>();
  for (const input of inputs) {
    const created = Date.parse(input.order.createdAt);
    const day = dayOf(input.order.createdAt);
    // Whole days only from the window's first day on, so each day shown counts every order created on it.
    if (day === undefined || day < firstDay || created >= window.until.getTime()) continue;
    const figures = days.get(day) ?? emptyDay(day);
    days.set(day, figures);
    add(figures, input);
  }
  return [...days.values()].sort((a, b) => a.day.localeCompare(b.day));
}

function add(figures: DayFigures, { order, record, shipment, openClaims, paidBy }: FigureInput): void {
  figures.orders += 1;
  const step = shipment?.step;
  const shipped = shipment !== undefined && step !== 'cancelled';
  const delivered = step === 'delivered';
  const cod = isCashOnDelivery(order, shipment);
  const amount = goodsCarried(record, shipment) ?? goodsOwedWhenShipped(record, paidBy);
  if (shipped) figures.shipped += 1;
  if (delivered) figures.delivered += 1;
  if (openClaims > 0) figures.openDisputes += 1;
  if (!cod) return;
  figures.codOrders += 1;
  if (shipped) figures.codExpectedXof += amount;
  if (delivered) figures.codCollectedXof += amount;
  if (shipped && openClaims > 0) figures.heldInDisputeXof += amount;
}

/** The goods the order owed as Relais recorded it (door-amount.ts goodsOwed), for a shipment that does not say. */
function goodsOwedWhenShipped(record: OrderRecord | undefined, paidBy: DeliveryFeePaidBy): number {
  if (!record?.order) return 0;
  const owed = goodsOwed(record.order, paidBy);
  return owed.ok ? owed.goods : 0;
}
