import { describe, expect, it } from 'vitest';
import { xof, ZERO_XOF } from '../../domain/money.js';
import { figuresByDay, type FigureInput } from './figures.js';
import { ledgerRecord, storeOrder, wireShipment } from './fixtures.test-support.js';

const window = { from: new Date('2026-11-17T00:00:00Z'), until: new Date('2026-11-20T00:00:00Z') };

function input(
  day: string,
  options: {
    amount?: number;
    status?: string;
    prepaid?: boolean;
    openClaims?: number;
    noShipment?: boolean;
    shipmentAmount?: number | null;
  },
): FigureInput {
  const amount = options.amount ?? 17_000;
  const order = storeOrder({
    createdAt: `${day}T10:00:00Z`,
    total: xof(amount),
    outstanding: options.prepaid ? ZERO_XOF : xof(amount),
    paymentFamily: options.prepaid ? 'prepaid' : 'cash_on_delivery',
  });
  const shipmentAmount =
    options.shipmentAmount === null ? undefined : (options.shipmentAmount ?? (options.prepaid ? undefined : amount));
  return {
    order,
    ...(options.noShipment
      ? {}
      : { shipment: wireShipment({ status: options.status ?? 'READY', orderAmountXof: shipmentAmount }) }),
    openClaims: options.openClaims ?? 0,
    paidBy: 'customer',
  };
}

describe('figures per day', () => {
  it('adds up a known set of orders by day of creation, in whole francs', () => {
    const days = figuresByDay(
      [
        input('2026-11-17', { status: 'DELIVERED' }),
        input('2026-11-17', { amount: 27_000, status: 'RETURNED' }),
        input('2026-11-17', { prepaid: true, status: 'DELIVERED' }),
        input('2026-11-17', { noShipment: true }),
        input('2026-11-18', { amount: 9_500, status: 'DELIVERED', openClaims: 1 }),
        input('2026-11-18', { amount: 12_000, status: 'CANCELLED' }),
        input('2026-11-19', { amount: 3_333, status: 'IN_TRANSIT' }),
      ],
      window,
    );
    expect(days).toEqual([
      {
        day: '2026-11-17',
        orders: 4,
        shipped: 3,
        delivered: 2,
        codOrders: 3,
        codExpectedXof: 44_000,
        codCollectedXof: 17_000,
        heldInDisputeXof: 0,
        openDisputes: 0,
      },
      {
        day: '2026-11-18',
        orders: 2,
        shipped: 1,
        delivered: 1,
        codOrders: 2,
        codExpectedXof: 9_500,
        codCollectedXof: 9_500,
        heldInDisputeXof: 9_500,
        openDisputes: 1,
      },
      {
        day: '2026-11-19',
        orders: 1,
        shipped: 1,
        delivered: 0,
        codOrders: 1,
        codExpectedXof: 3_333,
        codCollectedXof: 0,
        heldInDisputeXof: 0,
        openDisputes: 0,
      },
    ]);
  });

  it('leaves out days before the window and orders created at or after its end', () => {
    const days = figuresByDay([input('2026-11-16', {}), input('2026-11-20', {}), input('2026-11-19', {})], window);
    expect(days.map((d) => d.day)).toEqual(['2026-11-19']);
  });

  it('counts the cash the shipment carries, else what the customer owed when Relais shipped it', () => {
    const shipped = input('2026-11-18', { amount: 17_000, shipmentAmount: 15_000, status: 'DELIVERED' });
    const withoutAmount = {
      ...input('2026-11-18', { amount: 8_000, shipmentAmount: null, status: 'DELIVERED' }),
      record: ledgerRecord('delivered', { order: storeOrder({ outstanding: xof(8_000) }) }),
    };
    // Delivered and paid: the shop now says nothing is owed, the figures still count what was collected.
    withoutAmount.order = { ...withoutAmount.order, outstanding: ZERO_XOF };
    const [day] = figuresByDay([shipped, withoutAmount], window);
    expect(day).toMatchObject({ codExpectedXof: 23_000, codCollectedXof: 23_000 });
  });
});
