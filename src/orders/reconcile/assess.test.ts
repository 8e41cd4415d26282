import { describe, expect, it } from 'vitest';
import { ZERO_XOF } from '../../domain/money.js';
import type { WireClaim, WireShipment } from '../../adapters/dispatch-api/wire.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import { assessOrder, primaryShipment, type OrderCase, type ShopSide } from './assess.js';
import { ledgerRecord, storeOrder, testShop, wireClaim, wireShipment } from './fixtures.test-support.js';

const NOW = new Date('2026-11-18T12:00:00Z');

function assess(input: {
  side?: ShopSide;
  record?: OrderRecord;
  shipments?: WireShipment[];
  claims?: [string, WireClaim[]][];
  policy?: Record<string, unknown>;
  now?: Date;
}) {
  const c: OrderCase = {
    shop: testShop(input.policy),
    externalOrderId: 'dakar-mode:1001',
    orderId: '1001',
    shopSide: input.side ?? { kind: 'order', order: storeOrder() },
    ...(input.record ? { record: input.record } : {}),
    shipments: input.shipments ?? [],
    claims: new Map(input.claims ?? []),
    now: input.now ?? NOW,
  };
  return assessOrder(c);
}

const kinds = (found: ReturnType<typeof assess>) => found.map((f) => f.kind);

/** A finding Relais can only report: it has these fields and no repair. */
function expectReportedOnly(found: ReturnType<typeof assess>[number] | undefined, fields: Record<string, unknown>) {
  expect(found).toMatchObject(fields);
  expect(found?.repair).toBeUndefined();
}

describe('an order the shop says to ship, with no shipment', () => {
  it('is a missed webhook, replayed as a shop event, when Relais never heard of it', () => {
    expect(assess({})).toEqual([
      expect.objectContaining({
        kind: 'missed_webhook',
        repair: { type: 'enqueue_order', orderId: '1001' },
        amountXof: 17_000,
      }),
    ]);
  });

  it('is a missed update when Relais still has it waiting (orders/paid never came)', () => {
    const paid = storeOrder({ paymentFamily: 'prepaid', financialStatus: 'paid', outstanding: ZERO_XOF });
    expect(kinds(assess({ side: { kind: 'order', order: paid }, record: ledgerRecord('waiting') }))).toEqual([
      'missed_webhook',
    ]);
  });

  it('is left to the dispatch job while it is being dispatched', () => {
    expect(assess({ record: ledgerRecord('dispatching') })).toEqual([]);
  });

  it('is reported held, with its reason and the replay command, not replayed', () => {
    expect(assess({ record: ledgerRecord('held') })).toEqual([
      expect.objectContaining({
        kind: 'held',
        detail: expect.stringContaining('neighbourhood_not_found'),
        advice: 'fix the cause, then: relais replay dakar-mode:1001',
      }),
    ]);
  });

  it("is nothing when the shop's policy says wait (a prepaid order not paid yet)", () => {
    const unpaid = storeOrder({ paymentFamily: 'prepaid', financialStatus: 'pending', outstanding: ZERO_XOF });
    expect(assess({ side: { kind: 'order', order: unpaid } })).toEqual([]);
  });

  it('is replayed to be held visibly when it cannot be read and Relais never recorded it', () => {
    const found = assess({ side: { kind: 'unreadable', code: 'no_phone', message: 'order #1001 has no phone' } });
    expect(found).toEqual([
      expect.objectContaining({ kind: 'missed_webhook', repair: { type: 'enqueue_order', orderId: '1001' } }),
    ]);
  });
});

describe('a shipment created and never marked ready', () => {
  const created = wireShipment({ status: 'CREATED', createdAt: '2026-11-18T11:00:00Z' });

  it("is marked ready past the shop's bound when its policy is to mark ready immediately", () => {
    expect(assess({ shipments: [created] })).toEqual([
      expect.objectContaining({
        kind: 'never_ready',
        repair: { type: 'mark_ready', shipmentId: 'shp_1' },
        detail: expect.stringContaining('60 min'),
      }),
    ]);
  });

  it('is nothing within the bound', () => {
    expect(assess({ shipments: [created], policy: { unreadyAlertMinutes: 90 } })).toEqual([]);
  });

  it('is not marked ready while the order is held: the hold and the shipment are reported, nothing is repaired', () => {
    const found = assess({ record: ledgerRecord('held', { shipmentId: 'shp_1' }), shipments: [created] });
    expect(kinds(found)).toEqual(['held', 'never_ready']);
    expect(found.filter((f) => f.repair !== undefined)).toEqual([]);
    expect(found[1]).toMatchObject({ severity: 'alert', advice: expect.stringContaining('resolve the hold first') });
  });

  it("is still cancelled when the order, held, was cancelled in the shop: the shop's word, not a repair around the hold", () => {
    const cancelled = storeOrder({ cancelled: true, outstanding: ZERO_XOF });
    const found = assess({
      side: { kind: 'order', order: cancelled },
      record: ledgerRecord('held', { shipmentId: 'shp_1' }),
      shipments: [created],
    });
    expect(found.map((f) => [f.kind, f.repair?.type])).toEqual([
      ['held', undefined],
      ['cancelled_with_live_shipment', 'cancel'],
    ]);
  });

  it('is not marked ready when the order was cancelled in the shop', () => {
    const cancelled = storeOrder({ cancelled: true, outstanding: ZERO_XOF });
    expect(kinds(assess({ side: { kind: 'order', order: cancelled }, shipments: [created] }))).toEqual([
      'cancelled_with_live_shipment',
    ]);
  });

  it("is an alert, not a repair, when the shop's order cannot be read to confirm it still stands", () => {
    const [found] = assess({
      side: { kind: 'unreadable', code: 'no_phone', message: 'no phone' },
      shipments: [created],
    });
    expectReportedOnly(found, {
      kind: 'never_ready',
      severity: 'alert',
      advice: expect.stringContaining('check the order'),
    });
  });

  it('is not marked ready when the shop no longer has the order', () => {
    expect(assess({ side: { kind: 'missing' }, shipments: [created] })).toEqual([]);
  });
});

describe('a shipment whose state the wire profile does not map', () => {
  const unknown = wireShipment({ status: 'AWAITING_PICKUP_SLOT', createdAt: '2026-11-18T11:00:00Z' });

  it('is reported as never ready past the bound when no markReady was recorded, and as an unknown state naming it', () => {
    const found = assess({ record: ledgerRecord('dispatching', { shipmentId: 'shp_1' }), shipments: [unknown] });
    expect(kinds(found).sort()).toEqual(['never_ready', 'unknown_state']);
    expect(found.find((f) => f.kind === 'never_ready')).toMatchObject({
      repair: { type: 'mark_ready', shipmentId: 'shp_1' },
      detail: expect.stringContaining('AWAITING_PICKUP_SLOT'),
    });
    expect(found.find((f) => f.kind === 'unknown_state')).toMatchObject({
      advice: expect.stringContaining('"AWAITING_PICKUP_SLOT"'),
    });
  });

  it('is only an unknown state when Relais recorded its 2xx markReady: the name proves nothing either way', () => {
    const record = ledgerRecord('ready', { shipmentId: 'shp_1' });
    record.shipment = { ...record.shipment!, status: 'AWAITING_PICKUP_SLOT', markedReadyAt: '2026-11-18T11:00:01Z' };
    expect(kinds(assess({ record, shipments: [unknown] }))).toEqual(['unknown_state']);
  });

  it('is never ready although the service calls it by a name that sounds ready, when the profile does not map that name', () => {
    const soundsReady = wireShipment({ status: 'READY_TO_GO', createdAt: '2026-11-18T11:00:00Z' });
    expect(kinds(assess({ shipments: [soundsReady] })).sort()).toEqual(['never_ready', 'unknown_state']);
  });
});

describe('status drift', () => {
  it('asks for a sync when the service is further along than the ledger', () => {
    const found = assess({
      record: ledgerRecord('ready', { shipmentId: 'shp_1', step: 'ready' }),
      shipments: [wireShipment({ status: 'DELIVERED' })],
    });
    expect(found).toEqual([
      expect.objectContaining({
        kind: 'status_drift',
        repair: { type: 'sync', shipmentId: 'shp_1', status: 'DELIVERED' },
      }),
    ]);
  });

  it('asks for a sync when the tracking was never written (no delivery step since the shipment was created)', () => {
    expect(
      kinds(
        assess({
          record: ledgerRecord('ready', { shipmentId: 'shp_1' }),
          shipments: [wireShipment({ status: 'READY' })],
        }),
      ),
    ).toEqual(['status_drift']);
  });

  it('gives the write-back five minutes while Relais marks the shipment ready itself, then reports it missing', () => {
    const record = { ...ledgerRecord('ready', { shipmentId: 'shp_1' }), stateChangedAt: '2026-11-18T09:31:00Z' };
    const ready = [wireShipment({ status: 'READY' })];
    expect(assess({ record, shipments: ready, now: new Date('2026-11-18T09:33:00Z') })).toEqual([]);
    expect(kinds(assess({ record, shipments: ready, now: new Date('2026-11-18T09:36:01Z') }))).toEqual([
      'status_drift',
    ]);
    // Caught between markReady's answer and the dispatch job's own last write: the same.
    const dispatching = { ...record, state: 'dispatching' as const };
    expect(assess({ record: dispatching, shipments: ready, now: new Date('2026-11-18T09:33:00Z') })).toEqual([]);
    expect(kinds(assess({ record: dispatching, shipments: ready, now: new Date('2026-11-18T09:36:01Z') }))).toEqual([
      'status_drift',
    ]);
    // Further along than ready is drift at once: Relais did not cause that step.
    expect(
      kinds(
        assess({ record, shipments: [wireShipment({ status: 'DELIVERED' })], now: new Date('2026-11-18T09:31:30Z') }),
      ),
    ).toEqual(['status_drift']);
  });

  it('is nothing when both agree, or when Relais cancelled the shipment itself', () => {
    expect(
      assess({ record: ledgerRecord('ready', { shipmentId: 'shp_1', step: 'ready' }), shipments: [wireShipment()] }),
    ).toEqual([]);
    const cancelledOrder = storeOrder({ cancelled: true, outstanding: ZERO_XOF });
    expect(
      assess({
        side: { kind: 'order', order: cancelledOrder },
        record: ledgerRecord('cancelled', { shipmentId: 'shp_1', step: 'ready' }),
        shipments: [wireShipment({ status: 'CANCELLED' })],
      }),
    ).toEqual([]);
  });

  it('is not claimed for a shipment the ledger does not follow', () => {
    expect(
      assess({
        record: ledgerRecord('ready', { shipmentId: 'shp_other', step: 'ready' }),
        shipments: [wireShipment({ status: 'DELIVERED' })],
      }),
    ).toEqual([]);
  });
});

describe('cash on delivery amounts', () => {
  it('reports a shipment that carries less than the customer owes', () => {
    expect(assess({ shipments: [wireShipment({ orderAmountXof: 5_000 })] })).toEqual([
      expect.objectContaining({
        kind: 'cod_mismatch',
        amountXof: 17_000,
        detail:
          'the customer owes 17000 XOF for the goods (outstanding in the shop 17000 XOF, shop shipping 0 XOF, delivery paid by the customer); the shipment carries 5000 XOF',
      }),
    ]);
  });

  it('reports a COD shipment with no amount at all', () => {
    expect(assess({ shipments: [wireShipment({ orderAmountXof: undefined })] })).toEqual([
      expect.objectContaining({ kind: 'cod_mismatch', detail: expect.stringContaining('no amount') }),
    ]);
  });

  it('reports a prepaid order whose shipment has the courier collect money', () => {
    const prepaid = storeOrder({ paymentFamily: 'prepaid', financialStatus: 'paid', outstanding: ZERO_XOF });
    expect(
      kinds(assess({ side: { kind: 'order', order: prepaid }, shipments: [wireShipment({ orderAmountXof: 3_000 })] })),
    ).toEqual(['cod_mismatch']);
  });

  it('stops comparing once the parcel is delivered (the shop then shows nothing left to pay)', () => {
    const paidNow = storeOrder({ outstanding: ZERO_XOF, financialStatus: 'paid' });
    expect(
      assess({ side: { kind: 'order', order: paidNow }, shipments: [wireShipment({ status: 'DELIVERED' })] }),
    ).toEqual([]);
  });
});

describe('an order cancelled in the shop with a live shipment', () => {
  const cancelled: ShopSide = { kind: 'order', order: storeOrder({ cancelled: true, outstanding: ZERO_XOF }) };

  it('is cancelled through a cancel job when the ledger follows the shipment', () => {
    expect(
      assess({
        side: cancelled,
        record: ledgerRecord('ready', { shipmentId: 'shp_1', step: 'ready' }),
        shipments: [wireShipment()],
      }),
    ).toEqual([
      expect.objectContaining({
        kind: 'cancelled_with_live_shipment',
        repair: { type: 'cancel', shipmentId: 'shp_1' },
      }),
    ]);
  });

  it("is an alert with the service's refusal when the parcel was already picked up", () => {
    const record = ledgerRecord('cancel_refused', {
      shipmentId: 'shp_1',
      step: 'picked_up',
      problem: 'refused: picked up',
    });
    const [found] = assess({ side: cancelled, record, shipments: [wireShipment({ status: 'PICKED_UP' })] });
    expectReportedOnly(found, {
      kind: 'cancelled_with_live_shipment',
      detail: 'refused: picked up',
      advice: expect.stringContaining('stop or return'),
    });
  });

  it('is an alert to cancel by hand when Relais does not follow that shipment', () => {
    const [found] = assess({ side: cancelled, shipments: [wireShipment()] });
    expectReportedOnly(found, {
      kind: 'cancelled_with_live_shipment',
      advice: expect.stringContaining('cancel shp_1'),
    });
  });
});

describe('duplicates and disputes', () => {
  it('reports two live shipments for one order, naming the one to cancel', () => {
    const ours = wireShipment({ shipmentId: 'shp_ours' });
    const extra = wireShipment({ shipmentId: 'shp_extra', createdAt: '2026-11-18T10:00:00Z' });
    const found = assess({
      record: ledgerRecord('ready', { shipmentId: 'shp_ours', step: 'ready' }),
      shipments: [extra, ours],
    });
    expect(found).toEqual([
      expect.objectContaining({ kind: 'duplicate_shipment', advice: expect.stringContaining('cancel shp_extra') }),
    ]);
  });

  it('reports an open claim with the cash it holds, and a decided one with its outcome', () => {
    const delivered = wireShipment({ status: 'DELIVERED' });
    const found = assess({
      side: { kind: 'order', order: storeOrder({ outstanding: ZERO_XOF, financialStatus: 'paid' }) },
      record: ledgerRecord('delivered', { shipmentId: 'shp_1', step: 'delivered' }),
      shipments: [delivered],
      claims: [
        [
          'shp_1',
          [
            wireClaim(),
            wireClaim({
              claimId: 'clm_2',
              status: 'REJECTED',
              outcome: 'proof of delivery',
              decidedAt: '2026-11-20T10:00:00Z',
            }),
          ],
        ],
      ],
    });
    expect(found).toEqual([
      expect.objectContaining({ kind: 'dispute_open', amountXof: 17_000, severity: 'info' }),
      expect.objectContaining({
        kind: 'dispute_decided',
        detail: expect.stringContaining('REJECTED on 2026-11-20T10:00:00Z: proof of delivery'),
      }),
    ]);
  });
});

describe('the shipment standing for an order', () => {
  it("is the ledger's own, else the newest live one, else the newest", () => {
    const old = wireShipment({ shipmentId: 'shp_old', createdAt: '2026-11-18T09:00:00Z' });
    const newer = wireShipment({ shipmentId: 'shp_new', createdAt: '2026-11-18T10:00:00Z' });
    const cancelledNewest = wireShipment({
      shipmentId: 'shp_cancelled',
      status: 'CANCELLED',
      createdAt: '2026-11-18T11:00:00Z',
    });
    expect(primaryShipment([old, newer], ledgerRecord('ready', { shipmentId: 'shp_old' }))?.shipmentId).toBe('shp_old');
    expect(primaryShipment([old, newer, cancelledNewest], undefined)?.shipmentId).toBe('shp_new');
    expect(primaryShipment([cancelledNewest], undefined)?.shipmentId).toBe('shp_cancelled');
    expect(primaryShipment([], undefined)).toBeUndefined();
  });
});

describe('an order the shop stopped and may bring back (a failed payment, a cancellation)', () => {
  const stoppedInShop = { code: 'shop_payment_failed', message: 'its payment failed' };
  const held = (order = storeOrder({ cancelled: true, stoppedInShop })) => {
    const record = ledgerRecord('held', { order });
    return { ...record, hold: { ...stoppedInShop, at: '2026-11-18T09:31:00Z' } };
  };

  it('is reported held as information while the shop keeps it stopped', () => {
    const stopped = storeOrder({ cancelled: true, stoppedInShop, outstanding: ZERO_XOF });
    expect(assess({ side: { kind: 'order', order: stopped }, record: held() })).toEqual([
      expect.objectContaining({ kind: 'held', severity: 'info' }),
    ]);
  });

  it("is replayed from the shop's order once the shop says ship it (its webhook was lost)", () => {
    expect(assess({ record: held() })).toEqual([
      expect.objectContaining({ kind: 'missed_webhook', repair: { type: 'enqueue_order', orderId: '1001' } }),
    ]);
  });

  it('is reported, not repaired, when the shop ships it again after its only shipment was cancelled', () => {
    const cancelled = wireShipment({ status: 'CANCELLED' });
    expect(assess({ record: ledgerRecord('cancelled', { shipmentId: 'shp_1' }), shipments: [cancelled] })).toEqual([
      expect.objectContaining({ kind: 'restored_after_cancel', severity: 'alert', advice: expect.any(String) }),
    ]);
  });
});
