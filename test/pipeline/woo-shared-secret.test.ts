/**
 * A WooCommerce store connected through the Connect page signs with 32 random bytes of its own, but the registry
 * file lets two stores share one webhook secret. Then store A's signed order, posted to store B's URL, verifies:
 * for such a store the order body's REST link (`_links.self`, built by the store from its own address) must lead
 * to B's `url` (src/adapters/woocommerce/owner.ts), or the delivery is refused with 401 and nothing is queued.
 * Real Redis, real HTTP, the WooCommerce and dispatch emulators.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildShopRegistry } from '../../src/shops/shops.js';
import { startWeb, type RunningWeb } from '../../src/main/web.js';
import { wooOrderPayload } from '../support/factories.js';
import { startTestRelais, WOO_SHOP_ID, type TestRelais } from '../support/relais.js';
import { postWoo, queuedShopEvents, waitForState, wooExternalId } from './helpers.js';

/** Store A: another store of the registry, signing with the same secret as store B (the test's WOO_SHOP_ID). */
const OTHER_STORE = 'lome-tech';
const OTHER_URL = 'https://boutique-lome.example.tg';

let relais: TestRelais;
/** A web process whose registry gives stores A and B one webhook secret. */
let sharedWeb: RunningWeb;
let shared: TestRelais;

beforeAll(async () => {
  relais = await startTestRelais();
  const document = structuredClone(relais.registryDocument) as { shops: Array<Record<string, unknown>> };
  const storeB = document.shops.find((shop) => shop.id === WOO_SHOP_ID)!;
  const storeA = structuredClone(storeB);
  storeA.id = OTHER_STORE;
  storeA.woocommerce = { ...(storeB.woocommerce as Record<string, unknown>), url: OTHER_URL };
  document.shops.push(storeA);
  const shops = buildShopRegistry(document, (ref) => ('env' in ref ? relais.env[ref.env] : undefined));
  sharedWeb = await startWeb({ ...relais.base, shops, port: 0 });
  shared = { ...relais, web: sharedWeb };
});
afterAll(async () => {
  await sharedWeb?.close();
  await relais?.stop();
});

/** An order as the store at `siteUrl` delivers it: its REST links on its own address. */
function orderOf(siteUrl: string) {
  const order = wooOrderPayload();
  return {
    ...order,
    _links: {
      self: [{ href: `${siteUrl}/wp-json/wc/v3/orders/${order.id}` }],
      collection: [{ href: `${siteUrl}/wp-json/wc/v3/orders` }],
    },
  };
}

describe('WooCommerce stores that share a webhook secret', () => {
  it("refuses (401) store A's signed order posted to store B's URL, and queues nothing", async () => {
    const before = await queuedShopEvents(shared);
    const answer = await postWoo(shared, 'order.created', orderOf(OTHER_URL));
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ error: 'shop_mismatch' });
    expect(await queuedShopEvents(shared)).toBe(before);
  });

  it('refuses (401) a body that names no store (order.deleted carries only the id), and queues nothing', async () => {
    const before = await queuedShopEvents(shared);
    const answer = await postWoo(shared, 'order.deleted', { id: 727 });
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ error: 'shop_unconfirmed' });
    expect(await queuedShopEvents(shared)).toBe(before);
  });

  it("accepts store B's own order, its links on B's address, and ships it", async () => {
    const order = orderOf(relais.woo!.siteUrl(WOO_SHOP_ID));
    expect((await postWoo(shared, 'order.created', order)).status).toBe(200);
    expect((await waitForState(shared, wooExternalId(order.id), ['ready', 'held'], 20_000)).state).toBe('ready');
  });
});

describe('a WooCommerce store with a webhook secret of its own', () => {
  it('is proven by its signature alone: an order whose links name another address is accepted', async () => {
    const answer = await postWoo(relais, 'order.created', orderOf(OTHER_URL));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'enqueued' });
  });
});
