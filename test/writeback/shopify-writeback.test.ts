/**
 * Delivery status back into Shopify, end to end over real HTTP and Redis: the Shopify emulator (Admin GraphQL
 * validated against the real 2026-10 schema, signed order webhooks) → Relais (web + worker) → the dispatch
 * emulator's courier and its delivery webhooks → Relais → what the merchant sees on the Shopify order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShopifyEmulator, type OrderSnapshot, type ShopifyEmulator } from '@relais/emulators/shopify';
import { DEFAULT_COURIER_STEP_MS } from '@relais/emulators/dispatch';
import type { DeliveryStep } from '../../src/domain/shipment-status.js';
import type { DeliveryProgress } from '../../src/ledger/order-ledger.js';
import { courierThrough, shipmentsFor, shopifyExternalId, waitForIdle, waitForState } from '../pipeline/helpers.js';
import {
  makeSecrets,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  waitFor,
  type TestRelais,
} from '../support/relais.js';

const ORDER_TOPICS = ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled'];
/** Where the courier ends each stage, in order (READY is where dispatch leaves it). */
const TO_DELIVERED: DeliveryStep[] = ['assigned', 'picked_up', 'in_transit', 'out_for_delivery', 'delivered'];
const DELIVERED_EVENTS = ['CARRIER_PICKED_UP', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED'];

let shopify: ShopifyEmulator;
let relais: TestRelais;
const failingOrders = new Set<string>();
let dispatchWebhookUrl: string;

beforeAll(async () => {
  const secrets = makeSecrets();
  shopify = await startShopifyEmulator({
    shops: [
      { domain: SHOPIFY_DOMAIN, accessToken: secrets.shopifyAccessToken, clientSecret: secrets.shopifyClientSecret },
    ],
  });
  relais = await startTestRelais({
    secrets,
    shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
    deliveryOutcome: ({ externalOrderId }) => (failingOrders.has(externalOrderId) ? 'fail' : 'deliver'),
    // The polling fallback, fast enough for a test; webhooks usually get there first.
    pollIntervalMs: 300,
  });
  for (const topic of ORDER_TOPICS) shopify.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  dispatchWebhookUrl = `${relais.web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`;
  relais.emulator.setOrganisationWebhook('org_relais', dispatchWebhookUrl);
});

afterAll(async () => {
  await shopify?.webhooksSettled();
  await relais?.stop();
  await shopify?.close();
});

// ---- helpers ---------------------------------------------------------------------------------------------

const snapshot = (orderId: number): OrderSnapshot => shopify.orderSnapshot(SHOPIFY_DOMAIN, orderId);

async function delivery(extId: string): Promise<DeliveryProgress | undefined> {
  return (await relais.worker.runtime.ledger.get(extId))?.delivery;
}

/** A new order in the shop; Shopify tells Relais with a signed orders/create. */
function placeOrder(input: Parameters<ShopifyEmulator['createOrder']>[1] = {}) {
  const order = shopify.createOrder(SHOPIFY_DOMAIN, input);
  return { order, extId: shopifyExternalId(order.id) };
}

async function dispatched(extId: string): Promise<void> {
  await waitFor(async () => (await delivery(extId))?.written.dispatch, {
    what: `the tracking of ${extId} written into Shopify`,
  });
}

/** Moves the courier one stage at a time; after each, waits until Relais has seen it and written it. */
const courier = (extId: string, stages: DeliveryStep[]) =>
  courierThrough(relais, relais.worker.runtime.ledger, extId, stages);

const metafield = (order: OrderSnapshot, key: string) =>
  order.metafields.find((m) => m.namespace === 'relais' && m.key === key);
const shopMutations = (orderId: number, field: string) =>
  shopify
    .graphqlCalls()
    .filter(
      (c) =>
        c.rootFields.includes(field) &&
        c.outcome === 'ok' &&
        JSON.stringify(c.variables).includes(`/Order/${orderId}"`),
    );

// ---- the flows -------------------------------------------------------------------------------------------

describe('a cash-on-delivery order, from the shop to the door', () => {
  it('shows the tracking link at dispatch, every courier step in order, and is paid once delivered', async () => {
    const { order, extId } = placeOrder();
    await dispatched(extId);

    const [shipment] = shipmentsFor(relais, extId);
    expect(shipment).toBeDefined();
    const atDispatch = snapshot(order.id);
    expect(atDispatch.tags).toEqual(expect.arrayContaining(['relais:dispatched', 'relais:cod']));
    expect(metafield(atDispatch, 'shipment_id')?.value).toBe(shipment!.shipment_id);
    expect(metafield(atDispatch, 'tracking_code')?.value).toBe(shipment!.tracking_code);
    expect(metafield(atDispatch, 'tracking_url')).toMatchObject({ type: 'url', value: shipment!.publicTrackingUrl });
    // The quote is kept for the merchant's accounting: a json metafield, no storefront definition.
    const quote = JSON.parse(metafield(atDispatch, 'quote')?.value ?? '{}') as {
      quoteId?: string;
      total?: number;
      currency?: string;
    };
    expect(quote).toMatchObject({ quoteId: shipment!.quote_id, currency: 'XOF' });
    expect(quote.total).toBeGreaterThan(0);
    expect(atDispatch.fulfillments).toHaveLength(1);
    expect(atDispatch.fulfillments[0]).toMatchObject({
      trackingInfo: [{ company: 'Relais', number: shipment!.tracking_code, url: shipment!.publicTrackingUrl }],
      notifyCustomer: true,
    });
    expect(atDispatch.financialStatus).toBe('PENDING');

    await courier(extId, TO_DELIVERED);
    await waitFor(async () => (await delivery(extId))?.written.paid, { what: 'the order marked paid' });

    const delivered = snapshot(order.id);
    expect(delivered.fulfillments).toHaveLength(1);
    expect(delivered.fulfillments[0]!.events.map((e) => e.status)).toEqual(DELIVERED_EVENTS);
    // Each event carries the time the service says the step happened (on the emulator's clock, which
    // moves a minute per stage), not the time Relais wrote it. Shopify's DateTime keeps whole seconds.
    const history = shipmentsFor(relais, extId)[0]!.status_history;
    const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);
    const timeOf = (status: string) => seconds(history.find((h) => h.status === status)!.at);
    expect(delivered.fulfillments[0]!.events.map((e) => seconds(e.happenedAt))).toEqual(
      ['PICKED_UP', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED'].map(timeOf),
    );
    expect(delivered.financialStatus).toBe('PAID');
    expect((await relais.worker.runtime.ledger.get(extId))?.state).toBe('delivered');
  });

  it('a failed delivery shows the attempt and the return, and is never marked paid', async () => {
    const { order, extId } = placeOrder();
    failingOrders.add(extId);
    await dispatched(extId);
    await courier(extId, ['assigned', 'picked_up', 'in_transit', 'out_for_delivery', 'delivery_failed', 'returned']);
    await waitForIdle(relais);

    const after = snapshot(order.id);
    expect(after.fulfillments[0]!.events.map((e) => [e.status, e.message])).toEqual([
      ['CARRIER_PICKED_UP', null],
      ['IN_TRANSIT', null],
      ['OUT_FOR_DELIVERY', null],
      ['ATTEMPTED_DELIVERY', null],
      ['FAILURE', 'returned to the merchant'],
    ]);
    expect(after.financialStatus).toBe('PENDING');
    expect(shopMutations(order.id, 'orderMarkAsPaid')).toEqual([]);
    expect((await relais.worker.runtime.ledger.get(extId))?.state).toBe('returned');
  });
});

describe('duplicate and out-of-order delivery webhooks', () => {
  it('the same webhook five times and an older status change nothing: no event twice, no step backwards', async () => {
    const { order, extId } = placeOrder();
    await dispatched(extId);
    await courier(extId, TO_DELIVERED);
    await waitFor(async () => (await delivery(extId))?.written.paid, { what: 'the order marked paid' });
    await waitForIdle(relais);
    const before = snapshot(order.id);
    const mutationsBefore = shopify.graphqlCalls().filter((c) => c.operationType === 'mutation').length;

    const sent = relais.emulator.webhookDeliveries().filter((d) => JSON.stringify(d.body).includes(extId));
    const deliveredBody = sent.find((d) => (d.body as { status?: string }).status === 'DELIVERED')?.body;
    const olderBody = sent.find((d) => (d.body as { status?: string }).status === 'IN_TRANSIT')?.body;
    expect(deliveredBody).toBeDefined();
    expect(olderBody).toBeDefined();
    const post = (body: unknown) =>
      fetch(dispatchWebhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => post(deliveredBody)),
      post(olderBody),
      post({ ...(olderBody as object), status: 'PICKED_UP' }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200]);
    await waitForIdle(relais);

    const after = snapshot(order.id);
    expect(after.fulfillments).toEqual(before.fulfillments);
    expect(after.fulfillments[0]!.events.map((e) => e.status)).toEqual(DELIVERED_EVENTS);
    expect(after.financialStatus).toBe('PAID');
    expect(shopify.graphqlCalls().filter((c) => c.operationType === 'mutation').length).toBe(mutationsBefore);
    expect((await relais.worker.runtime.ledger.get(extId))?.state).toBe('delivered');
  });
});

describe('delivery webhooks that never arrive', () => {
  it('the polling fallback still brings the shop to delivered and paid', async () => {
    relais.emulator.setOrganisationWebhook('org_relais', undefined);
    try {
      const { order, extId } = placeOrder();
      await dispatched(extId);
      const sentBefore = relais.emulator.webhookDeliveries().length;
      await courier(extId, TO_DELIVERED);
      await waitFor(async () => (await delivery(extId))?.written.paid, { what: 'the order marked paid' });
      expect(relais.emulator.webhookDeliveries().length).toBe(sentBefore);
      const after = snapshot(order.id);
      expect(after.fulfillments[0]!.events.map((e) => e.status)).toEqual(DELIVERED_EVENTS);
      expect(after.financialStatus).toBe('PAID');
    } finally {
      relais.emulator.setOrganisationWebhook('org_relais', dispatchWebhookUrl);
    }
  });
});

describe('a prepaid order', () => {
  it('gets tracking and every step, and Relais never marks it paid (it already was)', async () => {
    const { order, extId } = placeOrder({ gateway: 'shopify_payments', financialStatus: 'paid' });
    await dispatched(extId);
    await courier(extId, TO_DELIVERED);
    await waitForIdle(relais);
    const after = snapshot(order.id);
    expect(after.tags).toContain('relais:dispatched');
    expect(after.tags).not.toContain('relais:cod');
    expect(after.fulfillments[0]!.trackingInfo[0]?.number).toBe(shipmentsFor(relais, extId)[0]!.tracking_code);
    expect(after.fulfillments[0]!.events.map((e) => e.status)).toEqual(DELIVERED_EVENTS);
    expect(after.financialStatus).toBe('PAID');
    expect(shopMutations(order.id, 'orderMarkAsPaid')).toEqual([]);
    expect((await delivery(extId))?.written.paid).toBeUndefined();
  });
});

describe('Shopify throttling and errors on the way', () => {
  it('THROTTLED, a 429 and a 503 are retried: the shop ends exactly as without them', async () => {
    const { order, extId } = placeOrder();
    shopify.faults.add({ kind: 'throttle', times: 2 });
    shopify.faults.add({ kind: 'status', status: 429, retryAfterSeconds: 1, operation: 'fulfillmentCreate' });
    await dispatched(extId);
    shopify.faults.add({ kind: 'status', status: 503, operation: 'fulfillmentEventCreate' });
    await courier(extId, TO_DELIVERED);
    await waitFor(async () => (await delivery(extId))?.written.paid, { what: 'the order marked paid' });
    expect(shopify.faults.pending()).toEqual([]);
    const outcomes = shopify.graphqlCalls().map((c) => c.outcome);
    expect(outcomes).toContain('throttled');
    expect(outcomes).toContain('fault');
    const after = snapshot(order.id);
    expect(after.fulfillments).toHaveLength(1);
    expect(after.fulfillments[0]!.events.map((e) => e.status)).toEqual(DELIVERED_EVENTS);
    expect(after.financialStatus).toBe('PAID');
  });
});

describe('an order cancelled in Shopify', () => {
  it('before pickup, cancels the shipment, and the shop shows the shipment cancelled', async () => {
    const { order, extId } = placeOrder();
    await dispatched(extId);
    shopify.cancelOrder(SHOPIFY_DOMAIN, order.id, { reason: 'CUSTOMER' });
    await waitForState(relais, extId, ['cancelled']);
    await waitFor(async () => (await delivery(extId))?.written.steps.cancelled, {
      what: 'the cancellation written into Shopify',
    });
    await waitForIdle(relais);

    expect(shipmentsFor(relais, extId)[0]!.status).toBe('CANCELLED');
    // orders/cancelled and orders/updated both say "cancelled": the shipment is cancelled once.
    const cancels = relais.emulator
      .calls()
      .filter((c) => c.operation === 'cancelShipment' && c.path.includes(shipmentsFor(relais, extId)[0]!.shipment_id));
    expect(cancels.map((c) => c.status)).toEqual([200]);
    const after = snapshot(order.id);
    expect(after.cancelled).toBe(true);
    expect(after.fulfillments[0]!.events.map((e) => [e.status, e.message])).toEqual([
      ['FAILURE', 'shipment cancelled'],
    ]);
    expect(after.tags).not.toContain('relais:problem');
    // The courier never comes: nothing is scheduled for this shipment any more.
    await relais.emulator.advance(DEFAULT_COURIER_STEP_MS * 3);
    expect(shipmentsFor(relais, extId)[0]!.status).toBe('CANCELLED');
  });

  it('after pickup, the refusal is written on the order (tag and one note line) and the ledger says cancel_refused', async () => {
    const { order, extId } = placeOrder({ note: 'Appeler avant de livrer' });
    await dispatched(extId);
    await courier(extId, ['assigned', 'picked_up']);
    shopify.cancelOrder(SHOPIFY_DOMAIN, order.id, { reason: 'CUSTOMER' });
    await waitForState(relais, extId, ['cancel_refused']);
    await waitFor(async () => snapshot(order.id).tags.includes('relais:problem'), { what: 'the problem tag' });
    // Our own tag and note writes come back as orders/updated webhooks: each is handled, none repeats the line.
    await shopify.webhooksSettled();
    await waitForIdle(relais);
    await shopify.webhooksSettled();
    await waitForIdle(relais);

    const after = snapshot(order.id);
    const lines = (after.note ?? '').split('\n');
    expect(lines[0]).toBe('Appeler avant de livrer');
    const refusal = lines.filter((line) => line.startsWith('Relais: ') && line.includes('already been picked up'));
    expect(refusal).toHaveLength(1);
    expect(refusal[0]).toContain(shipmentsFor(relais, extId)[0]!.shipment_id);
    expect(after.tags).toContain('relais:problem');
    expect(shipmentsFor(relais, extId)[0]!.status).toBe('PICKED_UP');
    const record = await relais.worker.runtime.ledger.get(extId);
    expect(record?.state).toBe('cancel_refused');
    expect(record?.delivery?.problem).toContain('already been picked up');
  });

  it('a shipment cancelled on the service side (by the courier company) is reflected in the shop', async () => {
    const { order, extId } = placeOrder();
    await dispatched(extId);
    const shipmentId = shipmentsFor(relais, extId)[0]!.shipment_id;
    // Not Relais: the courier company's operator cancels in its own console; its webhook tells Relais.
    const client = relais.worker.runtime.dispatchClientFor(relais.shops.get(SHOPIFY_SHOP_ID)!);
    await client.cancelShipment(shipmentId, { reason: 'no courier available in the area', by: 'dispatch operator' });
    await waitForState(relais, extId, ['cancelled']);
    await waitFor(async () => (await delivery(extId))?.written.steps.cancelled, {
      what: 'the cancellation written into Shopify',
    });
    const after = snapshot(order.id);
    expect(after.cancelled).toBe(false);
    expect(after.fulfillments[0]!.events.map((e) => [e.status, e.message])).toEqual([
      ['FAILURE', 'shipment cancelled'],
    ]);
    expect(after.financialStatus).not.toMatch(/paid/i);
  });
});
