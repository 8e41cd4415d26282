/**
 * Shops that install one Shopify app share its client secret, and the X-Shopify-Shop-Domain header is not
 * covered by the HMAC: a signed order of shop A replayed with shop B's header verifies. Relais confirms from
 * the signed body (order_status_url) or through B's Admin API that the order is B's before recording or
 * dispatching anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopifyOrderPayload } from '../support/factories.js';
import { SHOPIFY_DOMAIN, startTestRelais, type TestRelais } from '../support/relais.js';
import {
  postShopify,
  queuedShopEvents,
  shipmentsFor,
  shopifyExternalId,
  waitForIdle,
  waitForState,
} from './helpers.js';

let relais: TestRelais;
beforeAll(async () => {
  relais = await startTestRelais();
});
afterAll(async () => {
  await relais?.stop();
});

const queuedEvents = () => queuedShopEvents(relais);

describe('a signed Shopify order is dispatched only for the shop it belongs to', () => {
  it("refuses (401) an order of another myshopify shop replayed under this shop's header, signed with the shared secret, and dispatches nothing", async () => {
    const before = await queuedEvents();
    const otherShops = shopifyOrderPayload({
      order_status_url: 'https://lome-style.myshopify.com/77001/orders/4f1c0a/authenticate?key=abc',
    });
    const answer = await postShopify(relais, 'orders/create', otherShops);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ error: 'shop_mismatch' });
    expect(await queuedEvents()).toBe(before);
    await waitForIdle(relais);
    expect(await relais.worker.runtime.ledger.get(shopifyExternalId(otherShops.id))).toBeUndefined();
    expect(shipmentsFor(relais, shopifyExternalId(otherShops.id))).toHaveLength(0);
  });

  it("records nothing and dispatches nothing for an order on a custom domain that this shop's Admin API does not have", async () => {
    const otherShops = shopifyOrderPayload({
      order_status_url: 'https://boutique-lome.tg/77001/orders/4f1c0a/authenticate?key=abc',
    });
    expect((await postShopify(relais, 'orders/create', otherShops)).status).toBe(200);
    await waitForIdle(relais);
    expect(await relais.worker.runtime.ledger.get(shopifyExternalId(otherShops.id))).toBeUndefined();
    expect(shipmentsFor(relais, shopifyExternalId(otherShops.id))).toHaveLength(0);
  });

  it("records nothing for an order with no order_status_url that this shop's Admin API does not have", async () => {
    const otherShops = shopifyOrderPayload({ order_status_url: undefined });
    expect((await postShopify(relais, 'orders/create', otherShops)).status).toBe(200);
    await waitForIdle(relais);
    expect(await relais.worker.runtime.ledger.get(shopifyExternalId(otherShops.id))).toBeUndefined();
  });

  it("dispatches an order on a custom domain once this shop's Admin API confirms it has the order", async () => {
    const created = relais.shopify!.createOrder(SHOPIFY_DOMAIN, undefined, { webhooks: false }) as unknown as Record<
      string,
      unknown
    > & { id: number };
    const ours = { ...created, order_status_url: 'https://www.dakar-mode.sn/548380009/orders/9a9a/authenticate?key=k' };
    expect((await postShopify(relais, 'orders/create', ours)).status).toBe(200);
    await waitForState(relais, shopifyExternalId(ours.id), ['ready', 'in_delivery', 'delivered', 'held'], 15_000);
    expect(await relais.worker.runtime.ledger.get(shopifyExternalId(ours.id))).toBeDefined();
  });

  it("dispatches an order whose order_status_url is on this shop's own myshopify domain", async () => {
    const payload = shopifyOrderPayload();
    expect((await postShopify(relais, 'orders/create', payload)).status).toBe(200);
    await waitForState(relais, shopifyExternalId(payload.id), ['ready', 'in_delivery', 'delivered'], 15_000);
    expect(shipmentsFor(relais, shopifyExternalId(payload.id))).toHaveLength(1);
  });
});
