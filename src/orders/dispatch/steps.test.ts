/**
 * The dispatch steps that decide from what they are given, on a real shop registry and orders normalised from
 * shop payloads: whether an order is shipped and with what goods, whether a shipment may go to a courier with
 * the amount it carries, whether a saved quote is used again, and when the job gives up.
 */
import { randomBytes } from 'node:crypto';
import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { dakarModeShopsDocument, shopifyOrderPayload, type JsonOverrides } from '../../../test/support/factories.js';
import { buildShopRegistry } from '../../shops/shops.js';
import type { StoreOrder } from '../../domain/order.js';
import type { OrderRecord, QuoteProgress } from '../../ledger/order-ledger.js';
import { normaliseOrder } from '../../shops/platforms/index.js';
import { quoteRequestFor } from '../delivery/delivery-requests.js';
import { admit } from './admit.js';
import { retriesExhausted } from '../queues.js';
import { firmSavedQuote, quoteBasis, QUOTE_SAFETY_MARGIN_MS } from './quote.js';
import { wrongAmount } from './read-back.js';

const LIVE_KEY = `pk_live_${randomBytes(8).toString('hex')}`;
const shops = buildShopRegistry(dakarModeShopsDocument(), (ref) =>
  'env' in ref && ref.env === 'K' ? LIVE_KEY : 'a-secret-of-some-length',
);
const shop = shops.get('dakar-mode')!;

function orderOf(overrides: JsonOverrides = {}): StoreOrder {
  const normalised = normaliseOrder(shop, shopifyOrderPayload(overrides));
  if (!normalised.ok) throw new Error(`test order not normalised: ${normalised.hold.message}`);
  return normalised.order;
}

function recordOf(order: StoreOrder | undefined, state: OrderRecord['state'] = 'received'): OrderRecord {
  return {
    meta: {
      externalOrderId: `dakar-mode:${order?.orderId ?? '1'}`,
      shopId: 'dakar-mode',
      platform: 'shopify',
      orderId: order?.orderId ?? '1',
      orderName: order?.orderName ?? '#1',
      firstSeenAt: '2026-11-27T10:00:00.000Z',
      generation: 0,
    },
    state,
    stateChangedAt: '2026-11-27T10:00:00.000Z',
    ...(order ? { order } : {}),
  };
}

const job = { shopId: 'dakar-mode', externalOrderId: 'dakar-mode:1', generation: 0, trigger: 'test' };

describe('admitting an order to a dispatch attempt', () => {
  it('ships a cash-on-delivery order with its goods to collect, the shipping the customer paid left out', () => {
    const order = orderOf({ total_price: '27500.00', current_total_price: '27500.00', total_outstanding: '27500.00' });
    const admitted = admit({ job, record: recordOf(order), shops });
    expect(admitted.kind).toBe('ship');
    if (admitted.kind !== 'ship') return;
    expect(admitted.goods).toBe(order.outstanding - order.shippingCharged);
    expect(admitted.goods).toBeGreaterThan(0);
  });

  it('skips an unknown order, one replayed since the job was made, and one already marked ready', () => {
    const order = orderOf();
    expect(admit({ job, record: undefined, shops })).toEqual({ kind: 'skip', why: 'unknown order' });
    expect(admit({ job: { ...job, generation: 1 }, record: recordOf(order), shops })).toEqual({
      kind: 'skip',
      why: 'superseded by a replay',
    });
    expect(admit({ job, record: recordOf(order, 'ready'), shops })).toEqual({ kind: 'skip', why: 'already ready' });
  });

  it('holds an order of a shop no longer in the registry, and one whose data is gone, saying so', () => {
    const gone = admit({ job: { ...job, shopId: 'closed-shop' }, record: recordOf(orderOf()), shops });
    expect(gone).toMatchObject({ kind: 'hold', reason: { code: 'unknown_shop' } });
    if (gone.kind === 'hold') expect(gone.reason.message).toContain('"closed-shop" is no longer in the shop registry');
    expect(admit({ job, record: recordOf(undefined), shops })).toMatchObject({
      kind: 'hold',
      reason: { code: 'no_order_data' },
    });
  });
});

describe('reading back the amount a shipment carries', () => {
  it('lets a shipment go that carries the goods owed, or does not echo the amount', () => {
    const check = { goods: 15_000, paymentFamily: 'cash_on_delivery' as const };
    expect(wrongAmount({ ...check, shipment: { orderAmountXof: 15_000 } })).toBeUndefined();
    expect(wrongAmount({ ...check, shipment: {} })).toBeUndefined();
  });

  it('stops a shipment carrying another amount than the goods owed, or any amount for a prepaid order', () => {
    const edited = wrongAmount({
      goods: 12_000,
      paymentFamily: 'cash_on_delivery',
      shipment: { orderAmountXof: 15_000 },
    });
    expect(edited).toContain('carries 15000 XOF to collect for the goods but the order owes 12000 XOF');
    const prepaid = wrongAmount({ goods: undefined, paymentFamily: 'prepaid', shipment: { orderAmountXof: 500 } });
    expect(prepaid).toContain('the order is prepaid, with nothing to collect');
  });
});

describe('a saved quote', () => {
  const now = new Date('2026-11-27T10:00:00Z');
  const order = orderOf();
  const savedFor = (name: string, expiresInMs: number): QuoteProgress => ({
    quoteId: 'q_1',
    expiresAt: new Date(now.getTime() + expiresInMs).toISOString(),
    total: 2_300,
    basis: quoteBasis(quoteRequestFor(shop, order, name)),
  });
  const input = (saved: QuoteProgress, name = 'Mermoz') => ({
    shop,
    order: () => Promise.resolve(order),
    name,
    saved,
    now,
  });

  it('is used again while firm and for the same request', async () => {
    const saved = savedFor('Mermoz', 10 * 60_000);
    expect(await firmSavedQuote(input(saved))).toBe(saved);
  });

  it('is replaced close to its expiry, or for another drop-off', async () => {
    expect(await firmSavedQuote(input(savedFor('Mermoz', QUOTE_SAFETY_MARGIN_MS - 1)))).toBeUndefined();
    expect(await firmSavedQuote(input(savedFor('Mermoz', 10 * 60_000), 'Ouakam'))).toBeUndefined();
  });
});

describe('the dispatch job gives up', () => {
  it('after its last attempt, or at once on an error no retry can help, and not before', () => {
    const error = new Error('503');
    expect(retriesExhausted({ attemptsMade: 3, attempts: 8, error })).toBe(false);
    expect(retriesExhausted({ attemptsMade: 8, attempts: 8, error })).toBe(true);
    expect(retriesExhausted({ attemptsMade: 1, attempts: 8, error: new UnrecoverableError('no') })).toBe(true);
  });
});
