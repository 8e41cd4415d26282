/**
 * Reading the shops' orders for reconciliation, over real HTTP: the Shopify emulator (Admin GraphQL validated
 * and costed against the real 2026-10 schema) and the WooCommerce emulator (wc/v3, OAuth 1.0a, X-WP-TotalPages).
 * What the listers give back must normalise exactly as the webhook body of the same order does, because a
 * repaired order is replayed through the webhook path with it.
 */
import { parse, validate } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildShopRegistry } from '../../src/shops/shops.js';
import type { ShopifyShopConfig } from '../../src/adapters/shopify/settings.js';
import type { WooShopConfig } from '../../src/adapters/woocommerce/settings.js';
import { loadAdminSchema, startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';
import { createLogger } from '../../src/log.js';
import { normaliseOrder, type ShopOrderLister } from '../../src/shops/platforms/index.js';
import {
  createShopifyOrderLister,
  ORDER_LIST_DOCUMENTS,
  ShopifyOrderLister,
} from '../../src/adapters/shopify/orders.js';
import { ShopifyAdminClient } from '../../src/adapters/shopify/admin.js';
import { Secret } from '../../src/shops/secret.js';
import { createWooOrderLister, WooOrderLister } from '../../src/adapters/woocommerce/orders.js';
import { wooRestFor } from '../../src/adapters/woocommerce/writer.js';
import {
  makeSecrets,
  registryDocument,
  secretEnv,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  WOO_SHOP_ID,
} from '../support/relais.js';

const logger = createLogger({ level: 'silent' });
const secrets = makeSecrets();
let shopify: ShopifyEmulator;
let woo: WooEmulator;
let shopifyShop: ShopifyShopConfig;
let wooShop: WooShopConfig;

beforeAll(async () => {
  shopify = await startShopifyEmulator({
    shops: [
      { domain: SHOPIFY_DOMAIN, accessToken: secrets.shopifyAccessToken, clientSecret: secrets.shopifyClientSecret },
    ],
  });
  woo = await startWooEmulator({
    shops: [{ id: WOO_SHOP_ID, consumerKey: secrets.wooConsumerKey, consumerSecret: secrets.wooConsumerSecret }],
  });
  const env = secretEnv(secrets);
  const registry = buildShopRegistry(
    registryDocument({
      dispatchBaseUrl: 'http://127.0.0.1:9',
      shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
      wooUrl: woo.siteUrl(WOO_SHOP_ID),
    }),
    (ref) => ('env' in ref ? env[ref.env] : undefined),
  );
  shopifyShop = registry.get(SHOPIFY_SHOP_ID) as ShopifyShopConfig;
  wooShop = registry.get(WOO_SHOP_ID) as WooShopConfig;
});

afterAll(async () => {
  await shopify?.close();
  await woo?.close();
});

/** REST writes +00:00 where GraphQL writes Z: the same instant, compared as such. */
function instants<T extends { createdAt: string; updatedAt: string }>(order: T): T {
  return {
    ...order,
    createdAt: new Date(order.createdAt).toISOString(),
    updatedAt: new Date(order.updatedAt).toISOString(),
  };
}

async function listAll(lister: ShopOrderLister, since: Date): Promise<unknown[]> {
  const all: unknown[] = [];
  let next: string | undefined;
  let pages = 0;
  do {
    const page = await lister.page({ updatedSince: since }, next);
    all.push(...page.payloads);
    next = page.next;
    pages += 1;
    expect(pages).toBeLessThan(50);
  } while (next !== undefined);
  return all;
}

describe('Shopify orders for reconciliation', () => {
  it('sends documents that are valid against the real Admin schema 2026-10', async () => {
    const { schema } = await loadAdminSchema('2026-10');
    for (const [name, document] of Object.entries(ORDER_LIST_DOCUMENTS)) {
      expect(validate(schema, parse(document)).map((e) => `${name}: ${e.message}`)).toEqual([]);
    }
  });

  it('pages through every order changed since the window opened, following pageInfo, within the query cost limit', async () => {
    const before = new Date(Date.now() - 60_000);
    const created = Array.from({ length: 7 }, () => shopify.createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false }));
    const admin = new ShopifyAdminClient({
      domain: SHOPIFY_DOMAIN,
      accessToken: new Secret(secrets.shopifyAccessToken, 't'),
      clientSecret: new Secret(secrets.shopifyClientSecret, 't'),
      adminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
      logger,
    });
    const payloads = await listAll(new ShopifyOrderLister(admin, 3), before);
    const ids = payloads.map((p) => String((p as { id: unknown }).id));
    expect(ids).toEqual(expect.arrayContaining(created.map((o) => String(o.id))));
    expect(new Set(ids).size).toBe(ids.length);
    const calls = shopify.graphqlCalls().filter((c) => c.operationName === 'RelaisReconcileOrders');
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(calls.every((c) => c.outcome === 'ok')).toBe(true);
    // A full page of 100 must stay under Shopify's single-query limit of 1000 points.
    const full = await createShopifyOrderLister(shopifyShop, { logger }).page({ updatedSince: before });
    expect(full.payloads.length).toBeGreaterThanOrEqual(7);
    const fullCall = shopify
      .graphqlCalls()
      .filter((c) => c.operationName === 'RelaisReconcileOrders')
      .at(-1);
    expect(fullCall?.cost?.requestedQueryCost).toBeLessThanOrEqual(1000);
  });

  it('leaves out orders not changed since the window opened', async () => {
    const old = shopify.createOrder(
      SHOPIFY_DOMAIN,
      { createdAt: '2026-01-02T10:00:00Z', updatedAt: '2026-01-02T10:00:00Z' },
      { webhooks: false },
    );
    const payloads = await listAll(createShopifyOrderLister(shopifyShop, { logger }), new Date('2026-02-01T00:00:00Z'));
    expect(payloads.map((p) => String((p as { id: unknown }).id))).not.toContain(String(old.id));
  });

  it('gives orders that normalise exactly as their webhook bodies do (line items read for a replay)', async () => {
    const cases = [
      shopify.createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false }),
      shopify.createOrder(
        SHOPIFY_DOMAIN,
        { financialStatus: 'paid', gateway: 'shopify_payments' },
        { webhooks: false },
      ),
      shopify.createOrder(
        SHOPIFY_DOMAIN,
        { lineItems: [{ title: 'Boubou', price: '12500', quantity: 2, grams: 800 }] },
        { webhooks: false },
      ),
    ];
    const cancelled = shopify.cancelOrder(
      SHOPIFY_DOMAIN,
      shopify.createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false }).id,
    );
    // The shop's shipping still owed: after a free-shipping code, with its tax when prices exclude tax, after a refund
    // of it (a partial refund's share of the tax is not read from the Admin API: see README).
    const shippingCases = [
      shopify.createOrder(
        SHOPIFY_DOMAIN,
        { shippingLines: [{ title: 'Livraison', price: '2000', discount: { code: 'LIVRAISON0', amount: '2000' } }] },
        { webhooks: false },
      ),
      shopify.createOrder(
        SHOPIFY_DOMAIN,
        { taxesIncluded: false, shippingLines: [{ title: 'Livraison', price: '2000', taxRate: 0.18 }] },
        { webhooks: false },
      ),
      shopify.refundShipping(
        SHOPIFY_DOMAIN,
        shopify.createOrder(
          SHOPIFY_DOMAIN,
          { taxesIncluded: false, shippingLines: [{ title: 'Livraison', price: '2500', taxRate: 0.18 }] },
          { webhooks: false },
        ).id,
        '2500',
      ),
    ];
    const lister = createShopifyOrderLister(shopifyShop, { logger });
    const listed = await listAll(lister, new Date(Date.now() - 60_000));
    for (const rest of [...cases, cancelled, ...shippingCases]) {
      const fromWebhook = normaliseOrder(shopifyShop, rest);
      expect(fromWebhook.ok).toBe(true);
      const fromListing = normaliseOrder(
        shopifyShop,
        listed.find((p) => String((p as { id: unknown }).id) === String(rest.id)),
      );
      const fromReplay = normaliseOrder(shopifyShop, await lister.order(String(rest.id)));
      if (!fromWebhook.ok || !fromListing.ok || !fromReplay.ok) throw new Error('not normalised');
      expect(fromListing.order.shippingCharged).toBe(fromWebhook.order.shippingCharged);
      expect(instants({ ...fromListing.order, lineItems: [] })).toEqual(
        instants({ ...fromWebhook.order, lineItems: [] }),
      );
      expect(instants(fromReplay.order)).toEqual({
        ...instants(fromWebhook.order),
        // The webhook's lines carry grams; the GraphQL LineItem has no weight (the order's totalWeight does).
        lineItems: fromWebhook.order.lineItems.map(({ unitGrams: _grams, ...line }) => line),
      });
    }
  });

  it('answers undefined for an order the shop does not have', async () => {
    await expect(createShopifyOrderLister(shopifyShop, { logger }).order('999999999')).resolves.toBeUndefined();
  });
});

describe('WooCommerce orders for reconciliation', () => {
  it('pages with per_page and X-WP-TotalPages, modified after the window opened, and normalises as the webhook body', async () => {
    const since = new Date(Date.now() - 60_000);
    const created = [];
    for (let i = 0; i < 5; i += 1) created.push(await woo.createOrder(WOO_SHOP_ID));
    const payloads = await listAll(new WooOrderLister(wooRestFor(wooShop, logger), 2), since);
    const ids = payloads.map((p) => (p as { id: number }).id);
    expect(ids).toEqual(expect.arrayContaining(created.map((o) => o.id as number)));
    expect(new Set(ids).size).toBe(ids.length);
    const listCalls = woo.calls().filter((c) => c.method === 'GET' && c.route === '/wc/v3/orders');
    expect(listCalls.length).toBeGreaterThanOrEqual(3);
    expect(listCalls[0]?.query).toMatchObject({
      per_page: '2',
      modified_after: expect.any(String),
      dates_are_gmt: 'true',
    });
    for (const order of created) {
      const a = normaliseOrder(wooShop, order);
      const b = normaliseOrder(
        wooShop,
        payloads.find((p) => (p as { id: number }).id === order.id),
      );
      expect(b).toEqual(a);
    }
    const none = await createWooOrderLister(wooShop, { logger }).page({
      updatedSince: new Date(Date.now() + 3_600_000),
    });
    expect(none).toEqual({ payloads: [] });
  });

  it('reads one order in full, and undefined for one the shop does not have', async () => {
    const order = await woo.createOrder(WOO_SHOP_ID);
    const lister = createWooOrderLister(wooShop, { logger });
    expect(normaliseOrder(wooShop, await lister.order(String(order.id)))).toEqual(normaliseOrder(wooShop, order));
    await expect(lister.order('987654')).resolves.toBeUndefined();
  });

  it("reads an order whose shipping was refunded with what the refund gave back, so it owes what the worker's shipment carries", async () => {
    const since = new Date(Date.now() - 60_000);
    const order = await woo.createOrder(WOO_SHOP_ID, { status: 'pending' });
    const id = Number(order.id);
    const charged = Number.parseFloat(String(order.shipping_total));
    await woo.refundOrder(WOO_SHOP_ID, id, { shipping: charged, reason: 'Livraison offerte' });
    const lister = createWooOrderLister(wooShop, { logger });
    const listed = (await listAll(lister, since)).find((p) => (p as { id: number }).id === id);
    for (const payload of [listed, await lister.order(String(id))]) {
      const normalised = normaliseOrder(wooShop, payload);
      expect(normalised.ok && normalised.order.shippingCharged).toBe(0);
    }
    // The body alone, as the order lists its refunds, cannot tell a shipping refund from one of goods.
    const bodyOnly = normaliseOrder(wooShop, woo.getOrder(WOO_SHOP_ID, id));
    expect(bodyOnly.ok && bodyOnly.order.shippingCharged).toBe(charged);
  });
});
