/**
 * The shop's shipping that comes out of what the courier collects is the shipping the order still owes: after a
 * discount code on it, after a refund of it, and with the tax charged on it when the shop's prices exclude tax.
 * Orders are placed in the Shopify and WooCommerce emulators, reach Relais by their webhooks, and the amount is
 * read from the shipment the dispatch emulator holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';
import { makeSecrets, SHOPIFY_DOMAIN, startTestRelais, WOO_SHOP_ID, type TestRelais } from '../support/relais.js';
import { shipmentsFor, shopifyExternalId, waitForIdle, waitForState, wooExternalId } from './helpers.js';

let relais: TestRelais;
let woo: WooEmulator;

beforeAll(async () => {
  const secrets = makeSecrets();
  // A WooCommerce shop with taxes on: Senegal's VAT of 18 % on shipping.
  woo = await startWooEmulator({
    shops: [
      {
        id: WOO_SHOP_ID,
        consumerKey: secrets.wooConsumerKey,
        consumerSecret: secrets.wooConsumerSecret,
        shippingTaxRate: 0.18,
      },
    ],
  });
  relais = await startTestRelais({ wooUrl: woo.siteUrl(WOO_SHOP_ID), secrets });
  for (const topic of ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled']) {
    relais.shopify!.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  }
  for (const topic of ['order.created', 'order.updated']) {
    await woo.addWebhook(WOO_SHOP_ID, {
      topic,
      deliveryUrl: `${relais.web.url}/webhooks/woocommerce/${WOO_SHOP_ID}`,
      secret: secrets.wooWebhookSecret,
    });
  }
}, 60_000);

afterAll(async () => {
  await relais?.shopify?.webhooksSettled();
  await relais?.stop();
  await woo?.close();
});

/** What the shipment at the service carries for the goods, once the order is ready. */
async function goodsSent(extId: string): Promise<(number | undefined)[]> {
  const record = await waitForState(relais, extId, ['ready', 'held'], 20_000);
  expect(record.hold).toBeUndefined();
  return shipmentsFor(relais, extId).map((s) => s.orderAmountXof);
}

const goods = [{ title: 'Boubou brodé', price: '15000', grams: 800 }];

describe('a Shopify order', () => {
  it('with a free-shipping code on goods of 15 000 and a 2 000 shipping line: the courier collects 15 000 for the goods', async () => {
    const order = relais.shopify!.createOrder(SHOPIFY_DOMAIN, {
      lineItems: goods,
      shippingLines: [{ title: 'Livraison Dakar', price: '2000', discount: { code: 'LIVRAISON0', amount: '2000' } }],
    });
    expect(order.total_outstanding).toBe('15000.00');
    expect(await goodsSent(shopifyExternalId(order.id))).toEqual([15_000]);
  });

  it('whose shipping was refunded before it shipped (goods 15 000 + shipping 2 000): the courier collects 15 000 for the goods', async () => {
    const created = relais.shopify!.createOrder(
      SHOPIFY_DOMAIN,
      { lineItems: goods, shippingLines: [{ title: 'Livraison Dakar', price: '2000' }] },
      { webhooks: false },
    );
    // The merchant refunds the shipping; Relais hears of the order through orders/updated.
    const refunded = relais.shopify!.refundShipping(SHOPIFY_DOMAIN, created.id, '2000');
    expect(refunded.total_outstanding).toBe('15000.00');
    expect(await goodsSent(shopifyExternalId(created.id))).toEqual([15_000]);
  });

  it('from a shop whose prices exclude tax, 18 % on its 2 000 shipping: the courier collects 15 000 for the goods, not 15 360', async () => {
    const order = relais.shopify!.createOrder(SHOPIFY_DOMAIN, {
      lineItems: goods,
      taxesIncluded: false,
      shippingLines: [{ title: 'Livraison Dakar', price: '2000', taxRate: 0.18 }],
    });
    expect(order.total_outstanding).toBe('17360.00');
    expect(await goodsSent(shopifyExternalId(order.id))).toEqual([15_000]);
  });
});

describe('a WooCommerce order', () => {
  it('from a shop charging 18 % tax on its 2 000 shipping: the courier collects 15 000 for the goods, not 15 360', async () => {
    const product = await woo.createProduct(WOO_SHOP_ID, { name: 'Pagne wax', weight: '0.8', price: '15000' });
    const order = await woo.createOrder(WOO_SHOP_ID, wooCheckout(product.id));
    expect(order).toMatchObject({ total: '17360.00', shipping_total: '2000.00', shipping_tax: '360.00' });
    expect(await goodsSent(wooExternalId(Number(order.id)))).toEqual([15_000]);
  });

  it('placed pending, its 2 000 shipping and 360 tax refunded, then processing: the courier collects 15 000 for the goods, not 12 640', async () => {
    const product = await woo.createProduct(WOO_SHOP_ID, { name: 'Pagne wax', weight: '0.8', price: '15000' });
    const order = await woo.createOrder(WOO_SHOP_ID, { ...wooCheckout(product.id), status: 'pending' });
    const id = Number(order.id);
    // The merchant gives the shipping back before the parcel leaves: the order keeps its totals and lists the refund.
    const refunded = await woo.refundOrder(WOO_SHOP_ID, id, { shipping: 2000, reason: 'Livraison offerte' });
    expect(refunded).toMatchObject({ total: '17360.00', shipping_total: '2000.00', shipping_tax: '360.00' });
    expect(refunded.refunds).toEqual([expect.objectContaining({ total: '-2360.00' })]);
    await woo.updateOrder(WOO_SHOP_ID, id, { status: 'processing' });
    expect(await goodsSent(wooExternalId(id))).toEqual([15_000]);
  });

  it('with 5 000 of its goods refunded, not its shipping: the courier collects 10 000 for the goods', async () => {
    const product = await woo.createProduct(WOO_SHOP_ID, { name: 'Pagne wax', weight: '0.8', price: '15000' });
    const order = await woo.createOrder(WOO_SHOP_ID, { ...wooCheckout(product.id), status: 'pending' });
    const id = Number(order.id);
    await woo.refundOrder(WOO_SHOP_ID, id, { goods: 5000, reason: 'Un article manquant' });
    await woo.updateOrder(WOO_SHOP_ID, id, { status: 'processing' });
    expect(await goodsSent(wooExternalId(id))).toEqual([10_000]);
  });

  it('refunded while its refunds are refused by the shop (401), then processing: held saying so, never shipped with the refund read as goods', async () => {
    const product = await woo.createProduct(WOO_SHOP_ID, { name: 'Pagne wax', weight: '0.8', price: '15000' });
    const order = await woo.createOrder(WOO_SHOP_ID, { ...wooCheckout(product.id), status: 'pending' });
    const id = Number(order.id);
    const extId = wooExternalId(id);
    woo.faults.add({ kind: 'status', status: 401, route: `/orders/${id}/refunds`, times: 100 });
    try {
      await woo.refundOrder(WOO_SHOP_ID, id, { shipping: 2000, reason: 'Livraison offerte' });
      const held = await waitForState(relais, extId, ['held'], 20_000);
      expect(held.hold?.code).toBe('shop_unreadable');
      expect(held.hold?.message).toContain('refunds');
      await woo.updateOrder(WOO_SHOP_ID, id, { status: 'processing' });
      await waitForIdle(relais);
      const after = await relais.worker.runtime.ledger.get(extId);
      expect([after?.state, after?.hold?.code]).toEqual(['held', 'shop_unreadable']);
      expect(shipmentsFor(relais, extId)).toEqual([]);
    } finally {
      woo.faults.clear();
    }
  });

  it('never reads the refunds of an order that has none', async () => {
    const product = await woo.createProduct(WOO_SHOP_ID, { name: 'Pagne wax', weight: '0.8', price: '15000' });
    const order = await woo.createOrder(WOO_SHOP_ID, wooCheckout(product.id));
    expect(await goodsSent(wooExternalId(Number(order.id)))).toEqual([15_000]);
    expect(woo.calls().filter((call) => call.route === `/wc/v3/orders/${String(order.id)}/refunds`)).toEqual([]);
    // Whereas an order with a refund has its refunds read.
    expect(woo.calls().filter((call) => call.route.endsWith('/refunds')).length).toBeGreaterThan(0);
  });
});

/** A cash-on-delivery checkout of one product with a 2 000 flat-rate shipping line, delivered in Abidjan. */
function wooCheckout(productId: number) {
  const address = {
    first_name: 'Aya',
    last_name: 'Kouassi',
    address_1: 'Cocody Angré 7e tranche',
    city: 'Abidjan',
    country: 'CI',
  };
  return {
    line_items: [{ product_id: productId, quantity: 1 }],
    shipping_lines: [{ method_id: 'flat_rate', method_title: 'Livraison Abidjan', total: '2000' }],
    payment_method: 'cod',
    payment_method_title: 'Paiement à la livraison',
    billing: { ...address, email: 'aya.kouassi@example.com', phone: '+225 07 07 12 34 56' },
    shipping: { ...address, phone: '' },
  };
}
