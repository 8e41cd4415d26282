/**
 * A prepaid Shopify order whose payment is not simply "paid" never waits in silence: partly refunded before it
 * shipped (the rest is paid) it ships; only partly paid, or refunded in full, it is held saying what to do, and
 * the shop's own fix (taking the balance) ships it. Orders are placed in the Shopify emulator and reach Relais by
 * its webhooks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOPIFY_DOMAIN, startTestRelais, type TestRelais } from '../support/relais.js';
import { shipmentsFor, shopifyExternalId, waitForState } from './helpers.js';

let relais: TestRelais;
const CARD = 'shopify_payments';

beforeAll(async () => {
  relais = await startTestRelais();
  for (const topic of ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled']) {
    relais.shopify!.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  }
}, 60_000);

afterAll(async () => {
  await relais?.shopify?.webhooksSettled();
  await relais?.stop();
});

describe('a prepaid Shopify order', () => {
  it('paid, then partly refunded (its shipping) before it shipped: ships, nothing to collect at the door', async () => {
    const created = relais.shopify!.createOrder(
      SHOPIFY_DOMAIN,
      { gateway: CARD, financialStatus: 'paid' },
      { webhooks: false },
    );
    const refunded = relais.shopify!.refundShipping(SHOPIFY_DOMAIN, created.id, '2000');
    expect(refunded.financial_status).toBe('partially_refunded');
    const extId = shopifyExternalId(created.id);
    const record = await waitForState(relais, extId, ['ready', 'held', 'waiting'], 20_000);
    expect(record.state).toBe('ready');
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
    expect(shipmentsFor(relais, extId)[0]!.orderAmountXof ?? 0).toBe(0);
  });

  it('only partly paid: held, saying the balance is owed and how to ship it, and ships once the shop takes the balance', async () => {
    const order = relais.shopify!.createOrder(SHOPIFY_DOMAIN, {
      gateway: CARD,
      financialStatus: 'partially_paid',
      amountPaid: '5000',
    });
    const extId = shopifyExternalId(order.id);
    const held = await waitForState(relais, extId, ['held', 'ready', 'waiting'], 20_000);
    expect(held.state).toBe('held');
    expect(held.hold).toMatchObject({
      code: 'prepaid_partially_paid',
      message: expect.stringContaining('only partly paid'),
    });
    expect(held.hold?.message).toContain('depositGateways');
    expect(shipmentsFor(relais, extId)).toHaveLength(0);

    relais.shopify!.markPaid(SHOPIFY_DOMAIN, order.id);
    expect((await waitForState(relais, extId, ['ready'], 20_000)).hold).toBeUndefined();
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
  });

  it('refunded in full but not cancelled: held, not shipped', async () => {
    const created = relais.shopify!.createOrder(
      SHOPIFY_DOMAIN,
      { gateway: CARD, financialStatus: 'paid', lineItems: [{ title: 'Carte cadeau', price: '0' }] },
      { webhooks: false },
    );
    expect(relais.shopify!.refundShipping(SHOPIFY_DOMAIN, created.id, '2000').financial_status).toBe('refunded');
    const extId = shopifyExternalId(created.id);
    const record = await waitForState(relais, extId, ['held', 'ready', 'waiting'], 20_000);
    expect(record.state).toBe('held');
    expect(record.hold).toMatchObject({ code: 'prepaid_refunded', message: expect.stringContaining('refunded') });
    expect(shipmentsFor(relais, extId)).toHaveLength(0);
  });
});
