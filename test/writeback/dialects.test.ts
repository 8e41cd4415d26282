/**
 * The whole order path against two dialects of the dispatch service: the default wire profile (today's
 * guesses) and a deliberately different one (test/fixtures/dispatch-profiles/other-dialect.json: other names
 * for every state, another error body, another webhook shape and signature header, other spellings). Only
 * the profile differs between the two runs: the emulator speaks it, the shop's dispatch settings name it.
 *
 * Shopify emulator → signed order webhook → Relais → the dispatch emulator's courier and its signed delivery
 * webhooks → Relais → the Shopify order: tracking link, every step, paid once delivered; a failed delivery
 * returned and never paid. Then the trap an independent service double showed: a shop whose profile does
 * not match the service's dialect must fail loudly (held with a reason), never leave a shipment unready.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWireProfile } from '../../src/adapters/dispatch-api/profile.js';
import type { DeliveryStep } from '../../src/domain/shipment-status.js';
import { DEFAULT_COURIER_STEP_MS } from '@relais/emulators/dispatch';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import type { DeliveryProgress } from '../../src/ledger/order-ledger.js';
import { shipmentsFor, shopifyExternalId, waitForIdle, waitForState } from '../pipeline/helpers.js';
import {
  makeSecrets,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  waitFor,
  type TestRelais,
} from '../support/relais.js';

const OTHER_DIALECT = join(import.meta.dirname, '..', 'fixtures', 'dispatch-profiles', 'other-dialect.json');
const ORDER_TOPICS = ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled'];
const TO_DELIVERED: DeliveryStep[] = ['assigned', 'picked_up', 'in_transit', 'out_for_delivery', 'delivered'];

interface Stack {
  shopify: ShopifyEmulator;
  relais: TestRelais;
  failing: Set<string>;
}

async function startStack(options: { shopProfile: string; serviceProfile: string }): Promise<Stack> {
  const secrets = makeSecrets();
  const signingSecret = randomBytes(24).toString('hex');
  const failing = new Set<string>();
  const shopify = await startShopifyEmulator({
    shops: [
      { domain: SHOPIFY_DOMAIN, accessToken: secrets.shopifyAccessToken, clientSecret: secrets.shopifyClientSecret },
    ],
  });
  const relais = await startTestRelais({
    secrets,
    shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
    deliveryOutcome: ({ externalOrderId }) => (failing.has(externalOrderId) ? 'fail' : 'deliver'),
    pollIntervalMs: 300,
    dispatchProfile: options.shopProfile,
    emulatorProfile: options.serviceProfile,
    dispatchSigningSecret: signingSecret,
  });
  for (const topic of ORDER_TOPICS) shopify.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  relais.emulator.setOrganisationWebhook(
    'org_relais',
    `${relais.web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`,
    signingSecret,
  );
  return { shopify, relais, failing };
}

async function stopStack(stack: Stack | undefined): Promise<void> {
  await stack?.shopify.webhooksSettled();
  await stack?.relais.stop();
  await stack?.shopify.close();
}

describe.each([
  { dialect: 'the default profile', profile: 'default' },
  { dialect: 'a deliberately different dialect', profile: OTHER_DIALECT },
])('the order path against $dialect', ({ profile }) => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ shopProfile: profile, serviceProfile: profile });
  });
  afterAll(async () => {
    await stopStack(stack);
  });

  const delivery = async (extId: string): Promise<DeliveryProgress | undefined> =>
    (await stack.relais.worker.runtime.ledger.get(extId))?.delivery;
  const placeOrder = () => {
    const order = stack.shopify.createOrder(SHOPIFY_DOMAIN, {});
    return { order, extId: shopifyExternalId(order.id) };
  };
  async function courier(extId: string, stages: DeliveryStep[]): Promise<void> {
    for (const stage of stages) {
      await stack.relais.emulator.advance(DEFAULT_COURIER_STEP_MS);
      await waitFor(
        async () => {
          const progress = await delivery(extId);
          return progress?.step === stage && (stage === 'assigned' || progress.written.steps[stage] !== undefined);
        },
        { what: `${extId} at ${stage} in Shopify` },
      );
    }
  }

  it('a cash-on-delivery order is marked ready, followed through every step by signed webhooks, and paid in the shop once delivered', async () => {
    const { order, extId } = placeOrder();
    const ready = await waitForState(stack.relais, extId, ['ready', 'held']);
    expect(ready.hold).toBeUndefined();
    expect(ready.shipment?.markedReadyAt).toBeDefined();
    expect(shipmentsFor(stack.relais, extId).map((s) => s.status)).toEqual(['READY']); // the emulator's own name for the step
    await waitFor(async () => (await delivery(extId))?.written.dispatch, { what: 'the tracking link in Shopify' });

    await courier(extId, TO_DELIVERED);
    await waitFor(async () => (await delivery(extId))?.written.paid, { what: 'the order marked paid' });
    const shop = stack.shopify.orderSnapshot(SHOPIFY_DOMAIN, order.id);
    expect(shop.fulfillments[0]!.events.map((e) => e.status)).toEqual([
      'CARRIER_PICKED_UP',
      'IN_TRANSIT',
      'OUT_FOR_DELIVERY',
      'DELIVERED',
    ]);
    expect(shop.financialStatus).toBe('PAID');
    const record = await stack.relais.worker.runtime.ledger.get(extId);
    expect(record?.state).toBe('delivered');
    expect(record?.delivery?.serviceStatus).toBe(loadWireProfile(profile).stateFor('delivered'));
    expect(record?.delivery?.unknownStates).toBeUndefined();

    // Every delivery webhook was signed in the dialect's header and accepted; none refused.
    const sent = stack.relais.emulator.webhookDeliveries().filter((d) => JSON.stringify(d.body).includes(extId));
    expect(sent.length).toBeGreaterThanOrEqual(TO_DELIVERED.length);
    expect(sent.filter((d) => d.status !== 200)).toEqual([]);
  });

  it('a failed delivery shows the attempt and the return, and is never marked paid', async () => {
    const { order, extId } = placeOrder();
    stack.failing.add(extId);
    await waitFor(async () => (await delivery(extId))?.written.dispatch, { what: 'the tracking link in Shopify' });
    await courier(extId, ['assigned', 'picked_up', 'in_transit', 'out_for_delivery', 'delivery_failed', 'returned']);
    await waitForIdle(stack.relais);
    const shop = stack.shopify.orderSnapshot(SHOPIFY_DOMAIN, order.id);
    expect(shop.fulfillments[0]!.events.map((e) => e.status)).toEqual([
      'CARRIER_PICKED_UP',
      'IN_TRANSIT',
      'OUT_FOR_DELIVERY',
      'ATTEMPTED_DELIVERY',
      'FAILURE',
    ]);
    expect(shop.financialStatus).toBe('PENDING');
    expect((await stack.relais.worker.runtime.ledger.get(extId))?.state).toBe('returned');
  });
});

describe("a shop whose wire profile does not match the service's dialect", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ shopProfile: 'default', serviceProfile: OTHER_DIALECT });
  });
  afterAll(async () => {
    await stopStack(stack);
  });

  it('holds the order with a reason naming what the profile could not read, and leaves no shipment unready', async () => {
    const order = stack.shopify.createOrder(SHOPIFY_DOMAIN, {});
    const extId = shopifyExternalId(order.id);
    const record = await waitForState(stack.relais, extId, ['held', 'ready'], 20_000);
    expect(record.state).toBe('held');
    // The quote's expiry is spelled valid_until in that dialect; the default profile looks for expiresAt.
    expect(record.hold).toMatchObject({
      code: 'dispatch_unreadable_answer',
      message: expect.stringMatching(
        /createQuote could not be read with wire profile "default".*quote without expiresAt or expires_at/,
      ),
    });
    expect(shipmentsFor(stack.relais, extId)).toEqual([]);
  });
});
