/**
 * The Shopify writer against the Shopify emulator: what the merchant sees on the order after each write,
 * and that writing twice changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../shops/secret.js';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { createLogger } from '../../log.js';
import { dispatchInfo } from '../../../test/support/factories.js';
import type { ShopOrderRef } from '../../shops/platforms/writer.js';
import { ShopifyAdminClient } from './admin.js';
import { ShopifyWriteError } from './admin-errors.js';
import { RELAIS_TAGS, ShopifyWriter } from './writer.js';

const SHOP = 'dakar-mode.myshopify.com';
const hex = (bytes = 16) => randomBytes(bytes).toString('hex');
const accessToken = `shpat_${hex()}`;
const clientSecret = hex(32);

let emulator: ShopifyEmulator;
let writer: ShopifyWriter;

beforeAll(async () => {
  emulator = await startShopifyEmulator({ shops: [{ domain: SHOP, accessToken, clientSecret }] });
  const logger = createLogger({ level: 'silent' });
  const admin = new ShopifyAdminClient({
    domain: SHOP,
    accessToken: new Secret(accessToken, 'test'),
    clientSecret: new Secret(clientSecret, 'test'),
    adminUrl: emulator.adminUrl(SHOP),
    logger,
  });
  writer = new ShopifyWriter(admin, logger);
});
afterAll(async () => {
  await emulator.close();
});

function newOrder(input: Parameters<ShopifyEmulator['createOrder']>[1] = {}): { ref: ShopOrderRef; id: number } {
  const order = emulator.createOrder(SHOP, input, { webhooks: false });
  return {
    id: order.id,
    ref: {
      shopId: 'dakar-mode',
      orderId: String(order.id),
      orderName: order.name,
      externalOrderId: `dakar-mode:${order.id}`,
    },
  };
}

const mutations = () => emulator.graphqlCalls().filter((c) => c.operationType === 'mutation').length;

/** GraphQL straight to the emulator, as the merchant's admin would act. */
async function adminGraphql(query: string, variables: Record<string, unknown>): Promise<unknown> {
  const response = await fetch(emulator.graphqlUrl(SHOP), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-shopify-access-token': accessToken },
    body: JSON.stringify({ query, variables }),
  });
  return response.json();
}

describe('recordDispatch', () => {
  it('puts the shipment reference, tracking and quote in relais metafields, the tags, and one fulfillment with tracking', async () => {
    const { ref, id } = newOrder();
    const info = dispatchInfo();
    await writer.recordDispatch(ref, info);

    const order = emulator.orderSnapshot(SHOP, id);
    expect(order.tags).toEqual(expect.arrayContaining([RELAIS_TAGS.dispatched, RELAIS_TAGS.cashOnDelivery]));
    const fields = Object.fromEntries(
      order.metafields.map((m) => [`${m.namespace}.${m.key}`, { type: m.type, value: m.value }]),
    );
    expect(fields['relais.shipment_id']).toEqual({ type: 'single_line_text_field', value: info.shipmentId });
    expect(fields['relais.tracking_code']).toEqual({ type: 'single_line_text_field', value: info.trackingCode });
    expect(fields['relais.tracking_url']).toEqual({ type: 'url', value: info.publicTrackingUrl });
    expect(fields['relais.quote']?.type).toBe('json');
    expect(JSON.parse(fields['relais.quote']!.value)).toEqual({
      quoteId: info.quote!.quoteId,
      currency: 'XOF',
      total: 2500,
      breakdown: { base: 2000, codFee: 500 },
    });

    expect(order.fulfillments).toHaveLength(1);
    expect(order.fulfillments[0]).toMatchObject({
      trackingInfo: [{ company: 'Relais', number: info.trackingCode, url: info.publicTrackingUrl }],
      notifyCustomer: true,
    });
    expect(order.fulfillmentStatus).toBe('FULFILLED');
  });

  it('written twice, changes nothing the second time and sends no mutation', async () => {
    const { ref, id } = newOrder();
    const info = dispatchInfo();
    await writer.recordDispatch(ref, info);
    const before = mutations();
    await writer.recordDispatch(ref, info);
    expect(mutations()).toBe(before);
    expect(emulator.orderSnapshot(SHOP, id).fulfillments).toHaveLength(1);
  });

  it("a prepaid order gets no COD tag, and the merchant's choice not to notify is kept", async () => {
    const { ref, id } = newOrder({ gateway: 'shopify_payments', financialStatus: 'paid' });
    await writer.recordDispatch(ref, dispatchInfo({ cashOnDelivery: false, goods: 0, notifyCustomer: false }));
    const order = emulator.orderSnapshot(SHOP, id);
    expect(order.tags).toEqual([RELAIS_TAGS.dispatched]);
    expect(order.fulfillments[0]?.notifyCustomer).toBe(false);
  });

  it('an order already fulfilled by hand keeps its metafields and tags, and gets no second fulfillment', async () => {
    const { ref, id } = newOrder();
    const fo = emulator.orderSnapshot(SHOP, id).fulfillmentOrders[0]!;
    await adminGraphql(
      `mutation Hand($f: FulfillmentInput!) { fulfillmentCreate(fulfillment: $f) { fulfillment { id } userErrors { message } } }`,
      { f: { lineItemsByFulfillmentOrder: [{ fulfillmentOrderId: fo.id }], notifyCustomer: false } },
    );
    const info = dispatchInfo();
    await writer.recordDispatch(ref, info);
    await writer.recordStep(ref, 'picked_up', new Date().toISOString(), info);
    const order = emulator.orderSnapshot(SHOP, id);
    expect(order.fulfillments).toHaveLength(1);
    expect(order.fulfillments[0]?.trackingInfo).toEqual([]);
    expect(order.fulfillments[0]?.events).toEqual([]);
    expect(order.metafields.map((m) => m.key)).toContain('tracking_url');
    expect(order.tags).toContain(RELAIS_TAGS.dispatched);
  });
});

describe('recordStep', () => {
  it('adds one fulfillment event per step with the step time, in order, and never the same status twice', async () => {
    const { ref, id } = newOrder();
    const info = dispatchInfo();
    await writer.recordDispatch(ref, info);
    const times = [
      '2026-03-02T09:00:00.000Z',
      '2026-03-02T09:30:00.000Z',
      '2026-03-02T11:00:00.000Z',
      '2026-03-02T11:45:00.000Z',
    ];
    await writer.recordStep(ref, 'picked_up', times[0]!, info);
    await writer.recordStep(ref, 'in_transit', times[1]!, info);
    await writer.recordStep(ref, 'in_transit', times[1]!, info);
    await writer.recordStep(ref, 'out_for_delivery', times[2]!, info);
    await writer.recordStep(ref, 'delivered', times[3]!, info);
    await writer.recordStep(ref, 'delivered', times[3]!, info);
    const events = emulator.orderSnapshot(SHOP, id).fulfillments[0]!.events;
    expect(events.map((e) => e.status)).toEqual(['CARRIER_PICKED_UP', 'IN_TRANSIT', 'OUT_FOR_DELIVERY', 'DELIVERED']);
    expect(events.map((e) => Date.parse(e.happenedAt))).toEqual(times.map((t) => Date.parse(t)));
  });

  it('a failed attempt is ATTEMPTED_DELIVERY, a return is FAILURE with a message', async () => {
    const { ref, id } = newOrder();
    const info = dispatchInfo();
    await writer.recordDispatch(ref, info);
    await writer.recordStep(ref, 'delivery_failed', new Date().toISOString(), info);
    await writer.recordStep(ref, 'returned', new Date().toISOString(), info);
    expect(emulator.orderSnapshot(SHOP, id).fulfillments[0]!.events.map((e) => [e.status, e.message])).toEqual([
      ['ATTEMPTED_DELIVERY', null],
      ['FAILURE', 'returned to the merchant'],
    ]);
  });

  it('steps internal to the service (assigned) write nothing', async () => {
    const { ref, id } = newOrder();
    const info = dispatchInfo();
    await writer.recordDispatch(ref, info);
    const before = mutations();
    await writer.recordStep(ref, 'assigned', new Date().toISOString(), info);
    expect(mutations()).toBe(before);
    expect(emulator.orderSnapshot(SHOP, id).fulfillments[0]!.events).toEqual([]);
  });
});

describe('markPaid', () => {
  it('marks a COD order paid once, and a second call sends nothing', async () => {
    const { ref, id } = newOrder();
    await writer.markPaid(ref, dispatchInfo());
    expect(emulator.orderSnapshot(SHOP, id).financialStatus).toBe('PAID');
    const before = mutations();
    await writer.markPaid(ref, dispatchInfo());
    expect(mutations()).toBe(before);
  });

  it('refuses to mark paid a parcel that came back', async () => {
    const { ref, id } = newOrder();
    const info = dispatchInfo();
    await writer.recordDispatch(ref, info);
    await writer.recordStep(ref, 'returned', new Date().toISOString(), info);
    const error = await writer.markPaid(ref, info).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShopifyWriteError);
    expect(emulator.orderSnapshot(SHOP, id).financialStatus).toBe('PENDING');
  });

  it('a cancelled order is not marked paid: the merchant gets a note instead', async () => {
    const { ref, id } = newOrder();
    emulator.cancelOrder(SHOP, id);
    await writer.markPaid(ref, dispatchInfo());
    const order = emulator.orderSnapshot(SHOP, id);
    expect(order.financialStatus).toBe('VOIDED');
    expect(order.tags).toContain(RELAIS_TAGS.problem);
    expect(order.note).toMatch(/^Relais: the courier collected 17000 XOF .* not marked as paid\.$/);
  });
});

describe('recordProblem', () => {
  it("appends one line to the merchant's note, tags the order, and never writes the same line twice", async () => {
    const { ref, id } = newOrder({ note: 'Livrer après 18h' });
    const message = 'The delivery service refused to cancel shipment shp_1: the parcel has already been picked up.';
    await writer.recordProblem(ref, message);
    await writer.recordProblem(ref, message);
    const order = emulator.orderSnapshot(SHOP, id);
    expect(order.note).toBe(`Livrer après 18h\nRelais: ${message}`);
    expect(order.tags).toContain(RELAIS_TAGS.problem);
  });

  it('an order that does not exist is a non-retryable error', async () => {
    const error = await writer
      .recordProblem({ shopId: 'dakar-mode', orderId: '1', orderName: '#1', externalOrderId: 'dakar-mode:1' }, 'x')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShopifyWriteError);
    expect((error as ShopifyWriteError).retryable).toBe(false);
  });
});
