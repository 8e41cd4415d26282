/**
 * A Shopify shop connected with its app's client id and secret only (an app of the merchant's own organisation,
 * client credentials grant), end to end: imported as `relais shops import` does, served from the database by a
 * web process and a worker, its orders dispatched and written back while the Shopify emulator expires the token
 * in the middle of a delivery. Relais renews it once after the 401 and no order or step is lost.
 * (Renewal before expiry, on a clock moved by the test, is src/adapters/shopify/access-token.test.ts.)
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { loadServedShops, prepareImport } from '../../src/shops/shop-directory.js';
import { defaultSecretSourceFor } from '../../src/shops/shops.js';
import { SecretBox } from '../../src/shops/secret-box.js';
import type { DeliveryStep } from '../../src/domain/shipment-status.js';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { PostgresShopSecretStore } from '../../src/adapters/postgres/pg-shop-secrets.js';
import { PostgresShopDirectory } from '../../src/adapters/postgres/pg-shops.js';
import { startWeb, type RunningWeb } from '../../src/main/web.js';
import { startWorker, type RunningWorker } from '../../src/main/worker.js';
import { courierThrough, shopifyExternalId } from '../pipeline/helpers.js';
import {
  makeSecrets,
  randomHex,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  waitFor,
  type TestRelais,
} from '../support/relais.js';

const KEYS = `k1:${randomBytes(32).toString('base64')}`;
const CLIENT_ID = `client_${randomHex(8)}`;
const DAY_AND_AN_HOUR_MS = 25 * 3_600_000;
const TO_DELIVERED: DeliveryStep[] = ['assigned', 'picked_up', 'in_transit', 'out_for_delivery', 'delivered'];

let shopify: ShopifyEmulator;
let relais: TestRelais;
let web: RunningWeb;
let worker: RunningWorker;
let sealedNames: string[];

beforeAll(async () => {
  const secrets = makeSecrets();
  shopify = await startShopifyEmulator({
    shops: [
      {
        domain: SHOPIFY_DOMAIN,
        accessToken: secrets.shopifyAccessToken,
        clientId: CLIENT_ID,
        clientSecret: secrets.shopifyClientSecret,
      },
    ],
  });
  relais = await startTestRelais({
    secrets,
    shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
    inProcessWorker: false,
  });
  // The registry entry a merchant writes for an app of their own organisation: no access token, the client id
  // and (as webhookSecret) the client secret.
  const fileShop = (relais.registryDocument as { shops: Array<Record<string, unknown>> }).shops[0]!;
  const document = {
    shops: [
      {
        ...fileShop,
        shopify: {
          domain: SHOPIFY_DOMAIN,
          oauth: { grant: 'client_credentials', clientId: CLIENT_ID },
          webhookSecret: { env: 'T_SHOPIFY_CLIENT_SECRET' },
          adminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
        },
      },
    ],
  };
  const directory = new PostgresShopDirectory(relais.db.pool());
  const store = new PostgresShopSecretStore(relais.db.pool(), SecretBox.fromSetting(KEYS));
  const [prepared] = prepareImport(document, defaultSecretSourceFor(relais.env));
  sealedNames = [...prepared!.secrets.keys()].sort();
  for (const [name, value] of prepared!.secrets) await store.put(prepared!.id, name, value);
  await directory.save(prepared!);
  const shops = await loadServedShops({ directory, secrets: store });
  const base = { ...relais.base, shops, secretKeys: KEYS };
  web = await startWeb({ ...base, port: 0 });
  worker = await startWorker({
    ...base,
    resolver: NeighbourhoodResolver.load(),
    concurrency: 2,
    pollIntervalMs: 300,
  });
  shopify.subscribe(SHOPIFY_DOMAIN, 'orders/create', `${web.url}/webhooks/shopify`);
  relais.emulator.setOrganisationWebhook(
    'org_relais',
    `${web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`,
  );
}, 90_000);

afterAll(async () => {
  await shopify?.webhooksSettled();
  await worker?.close();
  await web?.close();
  await relais?.stop();
  await shopify?.close();
});

const grants = () =>
  shopify.oauth.requests().filter((r) => r.grantType === 'client_credentials' && r.status === 200).length;
const refusedCalls = () => shopify.graphqlCalls().filter((c) => c.httpStatus === 401).length;
const delivery = async (extId: string) => (await worker.runtime.ledger.get(extId))?.delivery;

const courier = (extId: string, stages: DeliveryStep[]) => courierThrough(relais, worker.runtime.ledger, extId, stages);

describe('a shop connected with client credentials only', () => {
  it('is declared with its client id and secret (no access token sealed), gets its token on first use, and renews it once after the 401 of a token Shopify expired mid-delivery, losing no order and no step', async () => {
    expect(sealedNames).toEqual(['dispatch.apiKey', 'dispatch.webhookToken', 'shopify.webhookSecret']);

    const first = shopify.createOrder(SHOPIFY_DOMAIN, {});
    const firstId = shopifyExternalId(first.id);
    await waitFor(async () => (await delivery(firstId))?.written.dispatch, { what: 'the first order dispatched' });
    expect(grants()).toBe(1);
    await courier(firstId, ['assigned', 'picked_up']);

    // A day passes on Shopify's side: the token Relais holds is refused from now on.
    shopify.oauth.advance(DAY_AND_AN_HOUR_MS);
    expect(refusedCalls()).toBe(0);
    await courier(firstId, ['in_transit', 'out_for_delivery', 'delivered']);
    expect(refusedCalls()).toBe(1);
    expect(grants()).toBe(2);

    const second = shopify.createOrder(SHOPIFY_DOMAIN, {});
    const secondId = shopifyExternalId(second.id);
    await waitFor(async () => (await delivery(secondId))?.written.dispatch, { what: 'the second order dispatched' });
    await courier(secondId, TO_DELIVERED);

    for (const [order, extId] of [
      [first, firstId],
      [second, secondId],
    ] as const) {
      expect((await worker.runtime.ledger.get(extId))?.state).toBe('delivered');
      const events = shopify.orderSnapshot(SHOPIFY_DOMAIN, order.id).fulfillments[0]?.events.map((e) => e.status);
      expect(events).toEqual(['CARRIER_PICKED_UP', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED']);
    }
    expect(grants()).toBe(2);
    expect(refusedCalls()).toBe(1);
  });
});
