/**
 * The first-contact loop's setup (issue 28), shared by the CLI loop (learn-loop.test.ts) and the dashboard's
 * (test/dashboard/learn-profile-browser.test.ts): Relais on the default profile against a dispatch emulator
 * speaking a dialect Relais is never given, a Shopify emulator sending it orders, and the service's delivery
 * webhooks sent to the shop's secret URL signed under the dialect's own header.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'vitest';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { DEFAULT_COURIER_STEP_MS } from '@relais/emulators/dispatch';
import { loadWireProfile, type WireProfile } from '../../src/adapters/dispatch-api/profile.js';
import { shopifyExternalId, waitForState } from '../pipeline/helpers.js';
import {
  makeSecrets,
  SHOPIFY_DOMAIN,
  startTestRelais,
  SHOPIFY_SHOP_ID,
  type TestRelais,
  type TestRelaisOptions,
} from '../support/relais.js';

export const DIALECT_FILE = join(
  import.meta.dirname,
  '..',
  'fixtures',
  'dispatch-profiles',
  'first-contact-dialect.json',
);
/** The steps a delivered order shows in Shopify. */
export const EVERY_STEP = ['CARRIER_PICKED_UP', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED'];
/** The courier's moves from ready to delivered. */
const COURIER_MOVES = 5;
const ORDER_TOPICS = ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled'];

export interface DialectLoop {
  relais: TestRelais;
  shopify: ShopifyEmulator;
  /** The profile the emulator speaks: what a learned profile is compared with. */
  service: WireProfile;
  signingSecret: string;
  stop(): Promise<void>;
}

export async function startDialectLoop(options: Pick<TestRelaisOptions, 'dashboardToken'> = {}): Promise<DialectLoop> {
  const secrets = makeSecrets();
  const signingSecret = randomBytes(24).toString('hex');
  const shopify = await startShopifyEmulator({
    shops: [
      { domain: SHOPIFY_DOMAIN, accessToken: secrets.shopifyAccessToken, clientSecret: secrets.shopifyClientSecret },
    ],
  });
  const relais = await startTestRelais({
    ...options,
    secrets,
    shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
    pollIntervalMs: 300,
    emulatorProfile: DIALECT_FILE,
    dispatchSigningSecret: signingSecret,
  });
  for (const topic of ORDER_TOPICS) shopify.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  relais.emulator.setOrganisationWebhook(
    'org_relais',
    `${relais.web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`,
    signingSecret,
  );
  return {
    relais,
    shopify,
    service: loadWireProfile(DIALECT_FILE),
    signingSecret,
    stop: async () => {
      await shopify.webhooksSettled();
      await relais.stop();
      await shopify.close();
    },
  };
}

/** Places orders in the shop and waits until each is dispatched and marked ready (never held). */
export async function placeOrders(loop: DialectLoop, count: number): Promise<Array<{ id: number; extId: string }>> {
  const orders = Array.from({ length: count }, () => loop.shopify.createOrder(SHOPIFY_DOMAIN, {}));
  const placed = orders.map((o) => ({ id: o.id, extId: shopifyExternalId(o.id) }));
  for (const { extId } of placed) {
    const ready = await waitForState(loop.relais, extId, ['ready', 'held'], 20_000);
    expect(ready.hold, JSON.stringify(ready.hold)).toBeUndefined();
  }
  return placed;
}

/** Moves every courier from ready to delivered, one step at a time, giving each step's webhook time to land. */
export async function deliverEverything(loop: DialectLoop): Promise<void> {
  for (let move = 0; move < COURIER_MOVES; move++) {
    await loop.relais.emulator.advance(DEFAULT_COURIER_STEP_MS);
    await new Promise((r) => setTimeout(r, 400));
  }
}
