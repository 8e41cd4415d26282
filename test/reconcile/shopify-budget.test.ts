/**
 * Reconciliation of a Shopify shop whose rate budget the workers have just spent, over real HTTP and a real
 * Redis: the Shopify emulator with a bucket of 1000 points refilled at 300 a second (a page of 80 orders asks for
 * 882), Relais's web process and worker, and a worker's Admin client sharing the shop's budget in Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShopifyEmulator, type ShopifyEmulator } from '../../src/emulators/shopify/index.js';
import type { ShopifyShopConfig } from '../../src/config/shops.js';
import { reconcile, reconcileDepsFor } from '../../src/reconcile/index.js';
import { shopifyAdminClientFor } from '../../src/stores/shopify/admin.js';
import { makeSecrets, SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, startTestRelais, type TestRelais } from '../support/relais.js';

const BUCKET = { maximumAvailable: 1000, restoreRate: 300 };
let shopify: ShopifyEmulator;
let relais: TestRelais;

beforeAll(async () => {
  const secrets = makeSecrets();
  shopify = await startShopifyEmulator({
    shops: [{ domain: SHOPIFY_DOMAIN, accessToken: secrets.shopifyAccessToken, clientSecret: secrets.shopifyClientSecret }],
    throttle: BUCKET,
  });
  relais = await startTestRelais({ secrets, shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN), pollIntervalMs: 3_600_000 });
  for (let i = 0; i < 3; i += 1) shopify.createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false });
}, 60_000);

afterAll(async () => {
  await relais?.stop();
  await shopify?.close();
});

/** What a burst of the workers does to the shop's bucket: two calls of 50 tagsAdd (500 points each) through the shared budget. */
async function spendTheBudget(): Promise<void> {
  while (shopify.throttleStatus(SHOPIFY_DOMAIN).currentlyAvailable < BUCKET.maximumAvailable) await new Promise((r) => setTimeout(r, 50));
  const shop = relais.shops.get(SHOPIFY_SHOP_ID) as ShopifyShopConfig;
  const admin = shopifyAdminClientFor(shop, { logger: relais.logger, budget: { redis: relais.worker.runtime.redis, prefix: relais.prefix } });
  const order = shopify.orders(SHOPIFY_DOMAIN)[0]!;
  const fields = Array.from({ length: 50 }, (_, i) => `t${i}: tagsAdd(id: $id, tags: ["burst-${i}"]) { node { id } userErrors { field message } }`);
  const burst = `mutation RelaisBurst($id: ID!) {\n${fields.join('\n')}\n}`;
  for (let i = 0; i < 2; i += 1) await admin.mutate(burst, { id: order.admin_graphql_api_id }, 'RelaisBurst');
  expect(shopify.throttleStatus(SHOPIFY_DOMAIN).currentlyAvailable).toBeLessThan(100);
}

const listingCalls = (from: number) => shopify.graphqlCalls().slice(from).filter((c) => c.operationName === 'RelaisReconcileOrders');

describe('reconciliation and the shop\'s shared Shopify rate budget', () => {
  it('waits for the budget the workers spent, sends its listing once the points are there, is never THROTTLED, and reads every order', async () => {
    await spendTheBudget();
    const from = shopify.graphqlCalls().length;
    const started = Date.now();
    const report = await reconcile(reconcileDepsFor(relais.worker.runtime), { since: new Date(Date.now() - 86_400_000), repair: false });
    const shop = report.shops.find((s) => s.shopId === SHOPIFY_SHOP_ID)!;
    expect(shop.error).toBeUndefined();
    expect(shop.ordersChecked).toBe(3);
    expect(listingCalls(from).map((c) => c.outcome)).toEqual(['ok']);
    // The listing's cost is not known yet: it waits for the whole bucket, 1000 points at 300/s from under 100.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
  });

  it('reports the shop, without sending its listing, when the budget cannot be there before the run\'s deadline', async () => {
    await spendTheBudget();
    const from = shopify.graphqlCalls().length;
    const report = await reconcile(reconcileDepsFor(relais.worker.runtime), {
      since: new Date(Date.now() - 86_400_000), repair: false, deadline: new Date(Date.now() + 300),
    });
    const shop = report.shops.find((s) => s.shopId === SHOPIFY_SHOP_ID)!;
    expect(shop.error).toMatch(/RelaisReconcileOrders: the shop's Shopify rate budget is spent for \d+ ms/);
    expect(listingCalls(from)).toEqual([]);
  });
});
