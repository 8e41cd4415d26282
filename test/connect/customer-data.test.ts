/**
 * A Shopify shop whose app lacks protected customer data access (Level 2): Shopify sends customers' names,
 * addresses and phones as null, in webhooks and Admin API reads, not as an error. Relais holds such an order as
 * `customer_data_redacted`, saying which access is missing and where to ask for it; `relais doctor` and the
 * Connect page's "Check and switch on" find the missing access before the shop is switched on.
 *
 * Real parts: the Shopify emulator running both shops without that access, the dispatch emulator, a real Relais
 * (web, worker, Redis, PostgreSQL), the dashboard over HTTP.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { silentLogger } from '../../src/log.js';
import { checkShop, renderReport } from '../../src/ops/doctor.js';
import { DashboardSession } from '../dashboard/session.js';
import { connectSettingsForm, saveInstalledShopifyShop } from '../support/installed-shopify-shop.js';
import { shopifyExternalId, waitForState } from '../pipeline/helpers.js';
import {
  makeSecrets,
  randomHex,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  type TestRelais,
} from '../support/relais.js';

const TOKEN = `dash_${randomHex(16)}`;
const KEYS = `k1:${randomBytes(32).toString('base64')}`;
const NO_ORDERS_SCOPE_DOMAIN = 'sans-commandes.myshopify.com';
const CONNECTED_ID = 'thies-boutique';
const CONNECTED_DOMAIN = 'thies-boutique.myshopify.com';
const connectedToken = `shpat_${randomHex(16)}`;
const connectedSecret = randomHex(32);
const secrets = makeSecrets();

let shopify: ShopifyEmulator;
let relais: TestRelais;

beforeAll(async () => {
  shopify = await startShopifyEmulator({
    shops: [
      {
        domain: SHOPIFY_DOMAIN,
        accessToken: secrets.shopifyAccessToken,
        clientSecret: secrets.shopifyClientSecret,
        protectedCustomerData: false,
      },
      // An app granted no order scope at all (same token, another shop).
      {
        domain: NO_ORDERS_SCOPE_DOMAIN,
        accessToken: secrets.shopifyAccessToken,
        clientSecret: secrets.shopifyClientSecret,
        scopes: 'write_shipping',
      },
      {
        domain: CONNECTED_DOMAIN,
        accessToken: connectedToken,
        clientSecret: connectedSecret,
        protectedCustomerData: false,
      },
    ],
  });
  relais = await startTestRelais({
    secrets,
    shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
    dashboardToken: TOKEN,
    secretKeys: KEYS,
  });
  for (const topic of ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled']) {
    shopify.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  }
}, 60_000);

afterAll(async () => {
  await shopify?.webhooksSettled();
  await relais?.stop();
  await shopify?.close();
});

/** What the app reads of an order through the Admin API (GraphQL), as Relais's own client would. */
async function adminRead(domain: string, token: string, orderId: number): Promise<Record<string, unknown>> {
  const response = await fetch(shopify.graphqlUrl(domain), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-shopify-access-token': token },
    body: JSON.stringify({
      query: `query($id: ID!) { order(id: $id) { email phone shippingAddress { name address1 phone city countryCodeV2 } } }`,
      variables: { id: `gid://shopify/Order/${String(orderId)}` },
    }),
  });
  const body = (await response.json()) as { data: { order: Record<string, unknown> } };
  return body.data.order;
}

describe('a Shopify shop whose app lacks protected customer data access', () => {
  it("gets the customer's name, address and phone as null in the order webhook and in Admin API reads, the city and country kept", async () => {
    const order = shopify.createOrder(SHOPIFY_DOMAIN, {});
    await shopify.webhooksSettled();
    const delivery = shopify
      .webhookDeliveries()
      .find((d) => d.topic === 'orders/create' && JSON.parse(d.body).id === order.id);
    const sent = JSON.parse(delivery!.body) as { shipping_address: Record<string, unknown>; phone: unknown };
    expect(sent.shipping_address).toMatchObject({ name: null, address1: null, phone: null, city: 'Dakar' });
    expect(sent.phone).toBeNull();
    expect(await adminRead(SHOPIFY_DOMAIN, secrets.shopifyAccessToken, order.id)).toEqual({
      email: null,
      phone: null,
      shippingAddress: { name: null, address1: null, phone: null, city: 'Dakar', countryCodeV2: 'SN' },
    });
    // The merchant's own view of the order is whole.
    expect(shopify.order(SHOPIFY_DOMAIN, order.id)?.shipping_address).toMatchObject({ address1: expect.any(String) });
  });

  it('has its order held as customer_data_redacted, saying which access the app lacks and where to ask for it', async () => {
    const order = shopify.createOrder(SHOPIFY_DOMAIN, {});
    const externalId = shopifyExternalId(order.id);
    await waitForState(relais, externalId, ['held']);
    const record = await relais.worker.runtime.ledger.get(externalId);
    expect(record?.hold?.code).toBe('customer_data_redacted');
    expect(record?.hold?.message).toContain(`order ${order.name} came from Shopify without the customer's name`);
    expect(record?.hold?.message).toContain('Level 2');
    expect(record?.hold?.message).toContain('Dev Dashboard');
    expect(relais.emulator.calls().filter((c) => c.operation === 'createShipment')).toEqual([]);
  });

  it('is reported by relais doctor, which names the missing access and where to ask for it', async () => {
    const results = await checkShop(relais.shops.get(SHOPIFY_SHOP_ID)!, {
      resolver: NeighbourhoodResolver.load(),
      publicUrl: undefined,
      fix: false,
      timeoutMs: 10_000,
      logger: silentLogger,
    });
    const check = results.find((r) => r.name === 'customer data (protected, Level 2)');
    expect(check).toMatchObject({ status: 'error' });
    expect(check?.detail).toMatch(/Shopify hides customers' names, street addresses and phones from Relais's app/);
    expect(check?.fix).toMatch(/Level 2\) to the Name, Address and Phone fields, chosen in the Dev Dashboard/);
    const printed = renderReport({
      ok: false,
      fixed: false,
      counts: { ok: 0, warn: 0, error: 1 },
      checks: [{ section: `Shop ${SHOPIFY_SHOP_ID}`, ...check! }],
    });
    expect(printed).toContain("customer data (protected, Level 2): Shopify hides customers' names");
  });

  it('is told by relais doctor when the app may not even read orders (its granted scopes lack read_orders)', async () => {
    const registered = relais.shops.get(SHOPIFY_SHOP_ID)!;
    if (registered.platform !== 'shopify') throw new Error('expected the Shopify shop');
    const results = await checkShop(
      {
        ...registered,
        shopify: {
          ...registered.shopify,
          domain: NO_ORDERS_SCOPE_DOMAIN,
          adminUrl: shopify.adminUrl(NO_ORDERS_SCOPE_DOMAIN),
        },
      },
      {
        resolver: NeighbourhoodResolver.load(),
        publicUrl: undefined,
        fix: false,
        timeoutMs: 10_000,
        logger: silentLogger,
      },
    );
    expect(results.find((r) => r.name === 'customer data (protected, Level 2)')).toMatchObject({
      status: 'error',
      detail: 'the app is not granted read_orders (granted: write_shipping), so it cannot read orders',
    });
  });

  it('is kept switched off by the Connect page, naming the missing access', async () => {
    const { directory } = await saveInstalledShopifyShop(relais, KEYS, {
      id: CONNECTED_ID,
      domain: CONNECTED_DOMAIN,
      accessToken: connectedToken,
      webhookSecret: connectedSecret,
      adminUrl: shopify.adminUrl(CONNECTED_DOMAIN),
    });
    // A recent order of the shop: what the check reads.
    shopify.createOrder(CONNECTED_DOMAIN, {});

    const session = new DashboardSession(relais.web.url);
    expect((await session.login(TOKEN)).status).toBe(303);
    const path = `/dashboard/shops/${CONNECTED_ID}`;
    const post = async (to: string, form: Record<string, string>) =>
      session.request(to, { form: { ...form, _csrf: await session.csrf(path) } });
    await post(path, connectSettingsForm(relais));
    await post(`${path}/on`, {});
    const page = await session.request(path);
    expect(page.body).toContain('Not switched on');
    expect(page.body).toContain('customer data (protected, Level 2)');
    expect(page.body).toContain('Dev Dashboard');
    expect((await directory.list()).find((s) => s.id === CONNECTED_ID)?.enabled).toBe(false);
  });
});
