/**
 * Every shop that installs one Shopify app shares its client secret, and the X-Shopify-Shop-Domain header is not
 * signed: a real delivery of shop A (its body and its HMAC), replayed with shop B's header, verifies. For every
 * topic Relais acts on, the body's own field must name B (src/adapters/shopify/owner.ts, one rule per topic), or the
 * replay is refused with 401 and nothing happens to B: still served, its token and webhook secret intact, its
 * orders kept. A body that names no shop is refused too, and a job of another shop's body that reached the queue
 * (enqueued before the check existed) is not acted on by the worker.
 *
 * B is a connected shop (directory and sealed secrets in PostgreSQL), as the shops an uninstall switches off are.
 * Real PostgreSQL, real Redis, real HTTP, the Shopify and dispatch emulators.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShopEventJob } from '../../src/orders/queues.js';
import { uninstalledKey } from '../../src/shops/uninstall.js';
import { SecretBox } from '../../src/shops/secret-box.js';
import { loadServedShops } from '../../src/shops/shop-directory.js';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { PostgresShopSecretStore } from '../../src/adapters/postgres/pg-shop-secrets.js';
import { PostgresShopDirectory } from '../../src/adapters/postgres/pg-shops.js';
import { startWeb, type RunningWeb } from '../../src/main/web.js';
import { startWorker, type RunningWorker } from '../../src/main/worker.js';
import { saveConnectedShop } from '../support/connected-shops.js';
import { shopifyOrderPayload } from '../support/factories.js';
import { SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, startTestRelais, waitFor, type TestRelais } from '../support/relais.js';
import { postShopify, queuedShopEvents, shopifyExternalId, waitForIdle, waitForState } from './helpers.js';

/** Shop A: another shop of the same app. Relais does not even need to serve it for its deliveries to be replayed. */
const OTHER_DOMAIN = 'lome-style.myshopify.com';
const OTHER_SHOP_ID = 77001;

let relais: TestRelais;
let web: RunningWeb;
let worker: RunningWorker;
let live: TestRelais;
let directory: PostgresShopDirectory;
let secrets: PostgresShopSecretStore;
/** An order of B, shipped before the replays: an erasure acted on would empty it. */
let bOrderId: number;
let secretsBefore: string[];

beforeAll(async () => {
  const keys = `k1:${randomBytes(32).toString('base64')}`;
  relais = await startTestRelais({ inProcessWorker: false, secretKeys: keys });
  directory = new PostgresShopDirectory(relais.db.pool());
  secrets = new PostgresShopSecretStore(relais.db.pool(), SecretBox.fromSetting(keys));
  await saveConnectedShop(relais, { directory, secrets }, SHOPIFY_SHOP_ID);
  secretsBefore = [...(await secrets.allOf(SHOPIFY_SHOP_ID)).keys()].sort();

  const base = {
    ...relais.base,
    shops: await loadServedShops({ directory, secrets }),
    liveShops: { reloadEveryMs: 600_000 },
  };
  web = await startWeb({ ...base, port: 0 });
  worker = await startWorker({ ...base, resolver: NeighbourhoodResolver.load(), concurrency: 2 });
  live = { ...relais, web, worker };

  const order = shopifyOrderPayload();
  bOrderId = order.id;
  expect((await postShopify(live, 'orders/create', order)).status).toBe(200);
  await waitForState(live, shopifyExternalId(bOrderId), ['ready'], 20_000);
});
afterAll(async () => {
  await worker?.close();
  await web?.close();
  await relais?.stop();
});

/** What shop A's real deliveries carry, per topic (Shopify's payload shapes); the customer topics list B's order. */
function bodyOfOtherShop(topic: string): Record<string, unknown> {
  const shop = { shop_id: OTHER_SHOP_ID, shop_domain: OTHER_DOMAIN };
  const customer = { id: 5501, email: 'client@example.com', phone: '+22890000000' };
  switch (topic) {
    case 'app/uninstalled':
      return { id: OTHER_SHOP_ID, name: 'Lomé Style', domain: 'www.lome-style.tg', myshopify_domain: OTHER_DOMAIN };
    case 'shop/redact':
      return shop;
    case 'customers/redact':
      return { ...shop, customer, orders_to_redact: [bOrderId] };
    case 'customers/data_request':
      return { ...shop, customer, orders_requested: [bOrderId], data_request: { id: 9001 } };
    default:
      return shopifyOrderPayload({
        order_status_url: `https://${OTHER_DOMAIN}/${OTHER_SHOP_ID}/orders/4f1c0a/authenticate?key=abc`,
      });
  }
}

/** B as it was before: served by the web process and the worker, switched on, every secret kept, its order whole (an erasure empties `order`). */
async function expectShopUntouched(): Promise<void> {
  await waitForIdle(live);
  for (const runtime of [web.runtime, worker.runtime]) expect(runtime.options.shops.get(SHOPIFY_SHOP_ID)).toBeDefined();
  expect((await directory.list()).find((s) => s.id === SHOPIFY_SHOP_ID)?.enabled).toBe(true);
  expect([...(await secrets.allOf(SHOPIFY_SHOP_ID)).keys()].sort()).toEqual(secretsBefore);
  expect(await relais.redis.client().exists(uninstalledKey(relais.prefix, SHOPIFY_SHOP_ID))).toBe(0);
  const record = await worker.runtime.ledger.get(shopifyExternalId(bOrderId));
  expect(record?.state).toBe('ready');
  expect(record?.order?.dropoff.address1).toBe('Villa 12, Sacré Coeur 3');
}

const TOPICS = [
  'app/uninstalled',
  'shop/redact',
  'customers/redact',
  'customers/data_request',
  'orders/create',
  'orders/paid',
  'orders/updated',
  'orders/cancelled',
];

describe("another shop's signed delivery replayed under this shop's header", () => {
  it.each(TOPICS)(
    '%s of shop A, signed with the shared app secret, is refused with 401 and nothing happens to shop B',
    async (topic) => {
      const before = await queuedShopEvents(live);
      const answer = await postShopify(live, topic, bodyOfOtherShop(topic));
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ error: 'shop_mismatch' });
      expect(await queuedShopEvents(live)).toBe(before);
      await expectShopUntouched();
    },
  );

  it.each([
    ['app/uninstalled', { id: OTHER_SHOP_ID, name: 'Lomé Style', domain: 'www.lome-style.tg' }],
    ['shop/redact', { shop_id: OTHER_SHOP_ID }],
    ['customers/redact', { shop_id: OTHER_SHOP_ID, customer: { id: 5501 }, orders_to_redact: [0] }],
    ['customers/data_request', { shop_id: OTHER_SHOP_ID, customer: { id: 5501 }, orders_requested: [0] }],
  ])('%s whose body names no myshopify shop is refused with 401, not acted on', async (topic, body) => {
    const payload = topic === 'customers/redact' ? { ...body, orders_to_redact: [bOrderId] } : body;
    const before = await queuedShopEvents(live);
    const answer = await postShopify(live, topic, payload);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ error: 'shop_unconfirmed' });
    expect(await queuedShopEvents(live)).toBe(before);
    await expectShopUntouched();
  });

  it.each(['relais/replay', 'relais/reconcile'])(
    "a signed delivery naming Relais's own %s topic is acknowledged and ignored: nothing is queued",
    async (topic) => {
      const before = await queuedShopEvents(live);
      const answer = await postShopify(live, topic, bodyOfOtherShop('orders/create'));
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ status: 'ignored', topic });
      expect(await queuedShopEvents(live)).toBe(before);
      await expectShopUntouched();
    },
  );

  it("the worker does not act on a queued job whose body is another shop's, whatever its topic", async () => {
    for (const topic of ['app/uninstalled', 'shop/redact', 'customers/redact']) {
      const job: ShopEventJob = {
        shopId: SHOPIFY_SHOP_ID,
        platform: 'shopify',
        topic,
        receivedAt: new Date().toISOString(),
        payload: bodyOfOtherShop(topic),
      };
      const added = await web.runtime.queues.shopEvents.add(topic, job);
      const done = await waitFor(
        async () => {
          const found = await web.runtime.queues.shopEvents.getJob(added.id!);
          return found?.finishedOn ? found : undefined;
        },
        { what: `the queued ${topic} job to finish` },
      );
      expect(done.returnvalue).toEqual({
        kind: 'ignored',
        why: `the body belongs to ${OTHER_DOMAIN}, not ${SHOPIFY_DOMAIN}`,
      });
    }
    await expectShopUntouched();
  });

  it("shop B's own uninstall, naming B in myshopify_domain, is still acted on: B is switched off", async () => {
    const answer = await postShopify(live, 'app/uninstalled', {
      id: 1,
      domain: 'www.dakar-mode.sn',
      myshopify_domain: SHOPIFY_DOMAIN,
    });
    expect(answer.status).toBe(200);
    await waitFor(async () => web.runtime.options.shops.get(SHOPIFY_SHOP_ID) === undefined, {
      what: 'shop B no longer served after its own uninstall',
    });
    expect((await directory.list()).find((s) => s.id === SHOPIFY_SHOP_ID)?.enabled).toBe(false);
  });
});
