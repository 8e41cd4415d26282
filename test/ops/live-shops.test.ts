/**
 * Connected shops served live (issue 17): a web process and two workers started with no shop serve a shop the
 * moment it is saved into the directory and announced, without a restart; Shopify's app/uninstalled stops one shop
 * (switched off, its tokens deleted, its webhooks refused, its waiting order held) while the other ships, and its
 * shop/redact is still acted on; a reload that fails keeps the shops served before. Real PostgreSQL, real Redis,
 * real HTTP, the Shopify and dispatch emulators.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/shops/secret-box.js';
import { ServedShops } from '../../src/shops/served-shops.js';
import { loadServedShops } from '../../src/shops/shop-directory.js';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { PostgresShopSecretStore } from '../../src/adapters/postgres/pg-shop-secrets.js';
import { PostgresShopDirectory } from '../../src/adapters/postgres/pg-shops.js';
import { startWeb, type RunningWeb } from '../../src/main/web.js';
import { startWorker, type RunningWorker } from '../../src/main/worker.js';
import { saveConnectedShop } from '../support/connected-shops.js';
import { shopifyOrderPayload, wooOrderPayload } from '../support/factories.js';
import {
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  waitFor,
  WOO_SHOP_ID,
  type TestRelais,
} from '../support/relais.js';
import { postShopify, postWoo, shopifyExternalId, waitForState, wooExternalId } from '../pipeline/helpers.js';

const KEYS = `k1:${randomBytes(32).toString('base64')}`;

let relais: TestRelais;
let web: RunningWeb;
let workers: RunningWorker[];
/** The test's Relais seen through the live web process and the first live worker (for the pipeline helpers). */
let live: TestRelais;
let directory: PostgresShopDirectory;
let secrets: PostgresShopSecretStore;

beforeAll(async () => {
  // The file-served web process of startTestRelais stays idle: the live one below is the one under test.
  relais = await startTestRelais({ inProcessWorker: false, secretKeys: KEYS });
  directory = new PostgresShopDirectory(relais.db.pool());
  secrets = new PostgresShopSecretStore(relais.db.pool(), SecretBox.fromSetting(KEYS));
  // No shop at start, and no periodic reload within the test: what it sees comes from the announcements.
  const base = {
    ...relais.base,
    shops: await loadServedShops({ directory, secrets }),
    liveShops: { reloadEveryMs: 600_000 },
  };
  web = await startWeb({ ...base, port: 0 });
  workers = [];
  for (let i = 0; i < 2; i++)
    workers.push(await startWorker({ ...base, resolver: NeighbourhoodResolver.load(), concurrency: 2 }));
  live = { ...relais, web, worker: workers[0]! };
});
afterAll(async () => {
  for (const worker of workers ?? []) await worker.close();
  await web?.close();
  await relais?.stop();
});

async function connect(shopId: string): Promise<void> {
  await saveConnectedShop(relais, { directory, secrets }, shopId);
  await web.runtime.announceShops();
}

const processes = () => [web.runtime, ...workers.map((w) => w.runtime)];

async function servedEverywhere(shopId: string, served: boolean): Promise<void> {
  await waitFor(async () => processes().every((p) => (p.options.shops.get(shopId) !== undefined) === served), {
    what: `shop ${shopId} ${served ? 'served' : 'no longer served'} by the web process and both workers`,
  });
}

/** The order webhook is accepted, and its order ends shipped (marked ready, never held). */
async function expectShipped(post: () => Promise<{ status: number }>, externalOrderId: string): Promise<void> {
  expect((await post()).status).toBe(200);
  const record = await waitForState(live, externalOrderId, ['ready', 'held'], 20_000);
  expect(record.hold).toBeUndefined();
  expect(record.state).toBe('ready');
}

describe('connected shops served live', () => {
  it('a shop saved into the directory while web and two workers run is served by all three, and its order ships, without a restart', async () => {
    expect(web.runtime.options.shops.all()).toHaveLength(0);
    await connect(SHOPIFY_SHOP_ID);
    await connect(WOO_SHOP_ID);
    await servedEverywhere(SHOPIFY_SHOP_ID, true);
    await servedEverywhere(WOO_SHOP_ID, true);

    const payload = shopifyOrderPayload({ shipping_address: { address1: 'Villa 12, Sacré Coeur 3', city: 'Dakar' } });
    await expectShipped(() => postShopify(live, 'orders/create', payload), shopifyExternalId(payload.id));
  });

  it('a reload that fails (a connected shop whose document does not validate) keeps serving the shops loaded before, and is counted', async () => {
    await directory.save({
      id: 'broken-shop',
      platform: 'shopify',
      document: { id: 'broken-shop', platform: 'shopify' },
    });
    const served = web.runtime.options.shops as ServedShops;
    expect(await served.reload()).toBe('failed');
    expect(
      served
        .all()
        .map((s) => s.id)
        .sort(),
    ).toEqual([SHOPIFY_SHOP_ID, WOO_SHOP_ID].sort());
    expect(await web.metrics.text()).toMatch(/relais_shop_reloads_total\{outcome="failed"\} 1/);
    await directory.remove('broken-shop');
    expect(await served.reload()).toBe('unchanged');
  });

  it("app/uninstalled stops that shop only: switched off, its tokens deleted, its webhooks refused, its waiting order held, the other shop's order shipped", async () => {
    // An order of the Shopify shop left waiting for dispatch when the uninstall arrives: its first attempt
    // (in its webhook's job) is refused with a 503, and the dispatch workers that would retry it are paused.
    for (const worker of workers) await worker.workers[1]!.pause();
    relais.emulator.faults.add({ operation: 'createQuote', times: 1, fault: { kind: 'status', status: 503 } });
    const waiting = shopifyOrderPayload({ shipping_address: { address1: 'Villa 12, Sacré Coeur 3', city: 'Dakar' } });
    expect((await postShopify(live, 'orders/create', waiting)).status).toBe(200);
    await waitFor(async () => (await web.runtime.queues.dispatch.getJobCountByTypes('waiting', 'delayed')) > 0, {
      what: 'the dispatch job of the order to wait',
    });

    const delivered = await relais.shopify!.deliverWebhook({
      domain: SHOPIFY_DOMAIN,
      topic: 'app/uninstalled',
      payload: { id: 1, domain: SHOPIFY_DOMAIN, myshopify_domain: SHOPIFY_DOMAIN },
      url: `${web.url}/webhooks/shopify`,
    });
    expect(delivered.status).toBe(200);
    await servedEverywhere(SHOPIFY_SHOP_ID, false);

    expect((await directory.list()).find((s) => s.id === SHOPIFY_SHOP_ID)?.enabled).toBe(false);
    // Only the webhook secret is kept, to verify the shop/redact that follows an uninstall.
    expect([...(await secrets.allOf(SHOPIFY_SHOP_ID)).keys()]).toEqual(['shopify.webhookSecret']);
    const refused = await postShopify(live, 'orders/create', shopifyOrderPayload());
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ error: 'unknown_shop' });

    for (const worker of workers) worker.workers[1]!.resume();
    const held = await waitForState(live, shopifyExternalId(waiting.id), ['held', 'ready'], 20_000);
    expect(held.state).toBe('held');
    expect(held.hold?.code).toBe('shop_not_served');
    expect(held.hold?.message).toContain('uninstalled');

    const other = wooOrderPayload({ shipping: { address_1: 'Cocody Angré, 7e tranche', city: 'Abidjan' } });
    await expectShipped(() => postWoo(live, 'order.created', other), wooExternalId(other.id));
  });

  it("the uninstalled shop's shop/redact is still verified and acted on: its orders are erased", async () => {
    const count = async (shopId: string) =>
      Number(
        (await relais.db.pool().query<{ n: string }>('SELECT count(*) AS n FROM orders WHERE shop_id = $1', [shopId]))
          .rows[0]!.n,
      );
    expect(await count(SHOPIFY_SHOP_ID)).toBeGreaterThan(0);
    const answer = await postShopify(live, 'shop/redact', { shop_id: 1, shop_domain: SHOPIFY_DOMAIN });
    expect(answer.status).toBe(200);
    await waitFor(async () => (await count(SHOPIFY_SHOP_ID)) === 0, {
      what: "the uninstalled shop's orders to be erased",
    });
    expect(await count(WOO_SHOP_ID)).toBeGreaterThan(0);
  });
});
