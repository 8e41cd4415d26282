/**
 * Bad input gets a clear answer and loses nothing: wrong signature, missing headers, malformed body,
 * oversized body, unknown shop, Redis down (503), and orders Relais cannot ship safely, held with a
 * reason a merchant understands.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopifyOrderPayload, wooOrderPayload, wooPingBody, wooWebhookHeaders } from '../support/factories.js';
import { SHOPIFY_SHOP_ID, startTestRelais, waitFor, WOO_SHOP_ID, type TestRelais } from '../support/relais.js';
import {
  postShopify,
  queuedShopEvents,
  postWoo,
  shipmentsFor,
  shopifyExternalId,
  waitForIdle,
  waitForState,
  wooExternalId,
} from './helpers.js';

let relais: TestRelais;
beforeAll(async () => {
  relais = await startTestRelais();
});
afterAll(async () => {
  await relais?.stop();
});

async function postWooRaw(body: string): Promise<{ status: number }> {
  const headers = {
    'content-type': 'application/json',
    ...wooWebhookHeaders({ topic: 'order.created', body, secret: relais.secrets.wooWebhookSecret }),
  };
  const response = await fetch(`${relais.web.url}/webhooks/woocommerce/${WOO_SHOP_ID}`, {
    method: 'POST',
    headers,
    body,
  });
  return { status: response.status };
}

const queuedEvents = () => queuedShopEvents(relais);

describe('the webhook endpoints answer bad requests clearly and enqueue nothing unauthenticated', () => {
  it('a Shopify webhook signed with the wrong secret gets 401 and is not enqueued', async () => {
    const before = await queuedEvents();
    const answer = await postShopify(relais, 'orders/create', shopifyOrderPayload(), { secret: 'not-the-secret' });
    expect(answer.status).toBe(401);
    expect(await queuedEvents()).toBe(before);
  });

  it('a Shopify webhook without its HMAC header gets 400', async () => {
    const answer = await postShopify(relais, 'orders/create', shopifyOrderPayload(), {
      headers: { 'x-shopify-hmac-sha256': undefined },
    });
    expect(answer.status).toBe(400);
  });

  it('a Shopify webhook from an unknown shop gets 404', async () => {
    const answer = await postShopify(relais, 'orders/create', shopifyOrderPayload(), {
      headers: { 'x-shopify-shop-domain': 'someone-else.myshopify.com' },
    });
    expect(answer.status).toBe(404);
  });

  it('a correctly signed body that is not JSON gets 400', async () => {
    const answer = await postShopify(relais, 'orders/create', undefined, { rawBody: '{"id": 1, "broken' });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'malformed_body' });
  });

  it('a correctly signed Shopify body nested 20 000 levels deep gets 400 (not 503) and is not enqueued', async () => {
    const before = await queuedEvents();
    const deep = `{"id":1,"note":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const answer = await postShopify(relais, 'orders/create', undefined, { rawBody: deep });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'malformed_body' });
    expect(await queuedEvents()).toBe(before);
  });

  it('a correctly signed WooCommerce body nested 20 000 levels deep gets 400 (not 503) and is not enqueued', async () => {
    const before = await queuedEvents();
    const deep = `{"id":1,"status":"processing","meta":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`;
    const answer = await postWooRaw(deep);
    expect(answer.status).toBe(400);
    expect(await queuedEvents()).toBe(before);
  });

  it('accepts an order nested up to the depth bound, with brackets inside strings not counted', async () => {
    const payload = shopifyOrderPayload({
      note: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[',
    });
    expect((await postShopify(relais, 'orders/create', payload)).status).toBe(200);
  });

  it('a body over the bound gets 413', async () => {
    const huge = 'x'.repeat(600 * 1024);
    const answer = await postShopify(relais, 'orders/create', undefined, { rawBody: JSON.stringify({ note: huge }) });
    expect(answer.status).toBe(413);
  });

  it('a WooCommerce webhook for an unknown shop gets 404', async () => {
    const answer = await postWoo(relais, 'order.created', wooOrderPayload(), { shopId: 'no-such-shop' });
    expect(answer.status).toBe(404);
  });

  it('a WooCommerce webhook with a wrong signature gets 401', async () => {
    const answer = await postWoo(relais, 'order.created', wooOrderPayload(), { secret: 'wrong' });
    expect(answer.status).toBe(401);
  });

  it("WooCommerce's unsigned creation ping gets 200", async () => {
    const response = await fetch(`${relais.web.url}/webhooks/woocommerce/${WOO_SHOP_ID}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: wooPingBody('42'),
    });
    expect(response.status).toBe(200);
  });
});

describe('the delivery webhook route takes the same body limits as the shop routes', () => {
  const deliveryUrl = () =>
    `${relais.web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`;
  const postDelivery = async (body: string) => {
    const response = await fetch(deliveryUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  /** Delivery jobs for one shipment id: other tests' orders are synced in the same queue meanwhile. */
  const queuedFor = async (shipmentId: string) =>
    (await relais.web.runtime.queues.deliveries.getJobs()).filter((job) => job?.data.shipmentId === shipmentId).length;

  it('a delivery webhook nested 10 000 levels deep gets 400 and queues nothing', async () => {
    const deep = `{"shipment_id":"shp_deep_1","data":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const answer = await postDelivery(deep);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'malformed_body' });
    expect(await queuedFor('shp_deep_1')).toBe(0);
  });

  it('a delivery webhook over the size bound gets 413 and queues nothing', async () => {
    const answer = await postDelivery(JSON.stringify({ shipment_id: 'shp_huge_1', note: 'x'.repeat(600 * 1024) }));
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ error: 'body_too_large' });
    expect(await queuedFor('shp_huge_1')).toBe(0);
  });

  it('a delivery webhook nested within the bound is still queued', async () => {
    const answer = await postDelivery(`{"shipment_id":"shp_nested_ok_1","data":${'['.repeat(60)}${']'.repeat(60)}}`);
    expect(answer.status).toBe(200);
    expect(await queuedFor('shp_nested_ok_1')).toBe(1);
  });
});
describe('orders Relais cannot ship safely are held with a reason, never shipped wrong', () => {
  it('an order in another currency than XOF is held, saying so', async () => {
    const payload = shopifyOrderPayload({ currency: 'EUR', presentment_currency: 'EUR' });
    expect((await postShopify(relais, 'orders/create', payload)).status).toBe(200);
    const record = await waitForState(relais, shopifyExternalId(payload.id), ['held']);
    expect(record.hold?.code).toBe('currency_not_xof');
    expect(record.hold?.message).toMatch(/EUR/);
    expect(shipmentsFor(relais, shopifyExternalId(payload.id))).toHaveLength(0);
  });

  it('an address with only a city name is held with a reason that names the address and suggests an alias', async () => {
    const payload = shopifyOrderPayload({
      shipping_address: { address1: 'Rue 10', address2: '', city: 'Dakar', latitude: null, longitude: null },
    });
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    const record = await waitForState(relais, extId, ['held']);
    expect(record.hold?.code).toBe('neighbourhood_not_found');
    expect(record.hold?.message).toMatch(/Rue 10/);
    expect(record.hold?.message).toMatch(/alias/i);
    // Never quoted with a city name.
    expect(shipmentsFor(relais, extId)).toHaveLength(0);
  });

  it('a held order is replayed after an alias is added and ends with exactly one shipment', async () => {
    const payload = shopifyOrderPayload({
      shipping_address: {
        address1: 'Pyrotechnie, villa 3',
        address2: '',
        city: 'Dakar',
        latitude: null,
        longitude: null,
      },
    });
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    await waitForState(relais, extId, ['held']);

    await relais.worker.runtime.aliases.add('dakar-mode', 'Pyrotechnie', 'Sacré-Cœur');
    const { replayOrder } = await import('../../src/orders/intake/replay.js');
    const result = await replayOrder(relais.web.runtime, extId);
    expect(result.ok).toBe(true);
    const record = await waitForState(relais, extId, ['ready']);
    expect(record.neighbourhood?.name).toMatch(/Sacr/);
    // Replaying twice more changes nothing: the order is no longer held.
    expect((await replayOrder(relais.web.runtime, extId)).ok).toBe(false);
    await waitForIdle(relais);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
  });

  it('a cash-on-delivery order with nothing left to collect is held, never shipped with 0', async () => {
    const payload = shopifyOrderPayload({
      total_outstanding: '0.00',
      current_total_price: '0.00',
      total_price: '0.00',
    });
    await postShopify(relais, 'orders/create', payload);
    const record = await waitForState(relais, shopifyExternalId(payload.id), ['held']);
    expect(record.hold?.code).toMatch(/nothing_to_collect/);
  });

  it('a quote the service refuses holds the order with the service code and message', async () => {
    const payload = shopifyOrderPayload({ total_weight: 80_000 }); // 80 kg: over the service's bound
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    const record = await waitForState(relais, extId, ['held']);
    expect(record.hold?.code).toMatch(/^dispatch_/);
    expect(record.hold?.message).toMatch(/createQuote/);
    expect(shipmentsFor(relais, extId)).toHaveLength(0);
  });

  it('a WooCommerce bank transfer waiting in on-hold is not shipped', async () => {
    const payload = wooOrderPayload({
      status: 'on-hold',
      payment_method: 'bacs',
      payment_method_title: 'Direct bank transfer',
    });
    await postWoo(relais, 'order.created', payload);
    await waitForState(relais, wooExternalId(payload.id), ['waiting']);
    await waitForIdle(relais);
    expect(shipmentsFor(relais, wooExternalId(payload.id))).toHaveLength(0);
  });
});

describe('Redis unreachable', () => {
  it('answers 503 at once, never 200, and accepts the retry once Redis is back', async () => {
    const payload = shopifyOrderPayload();
    const eventId = `evt-redis-${payload.id}`;
    // A Redis that hangs is the harder case: connections look alive, answers never come.
    await relais.redis.client().call('CLIENT', 'PAUSE', '3500', 'ALL');
    const started = Date.now();
    const answer = await postShopify(relais, 'orders/create', payload, { eventId });
    expect(answer.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(3_400);
    // The pause ends; Shopify's retry of the same event is accepted and the order ships.
    await new Promise((r) => setTimeout(r, Math.max(0, 3_600 - (Date.now() - started))));
    const retry = await postShopify(relais, 'orders/create', payload, { eventId });
    expect(retry.status).toBe(200);
    await waitForState(relais, shopifyExternalId(payload.id), ['ready'], 15_000);
    expect(shipmentsFor(relais, shopifyExternalId(payload.id))).toHaveLength(1);
  });
});

describe("Shopify's compliance webhooks are acted on", () => {
  it('customers/redact erases the personal data Relais keeps for the listed orders, and keeps the shipment', async () => {
    const payload = shopifyOrderPayload();
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    await waitForState(relais, extId, ['ready']);
    const before = await relais.worker.runtime.ledger.get(extId);
    expect(before?.order?.dropoff.address1).toBe('Villa 12, Sacré Coeur 3');

    const redact = {
      shop_id: 1,
      shop_domain: 'dakar-mode.myshopify.com',
      customer: { id: 1, email: 'x@example.com', phone: '+221770000000' },
      orders_to_redact: [payload.id],
    };
    expect((await postShopify(relais, 'customers/redact', redact)).status).toBe(200);
    const after = await waitFor(
      async () => {
        const r = await relais.worker.runtime.ledger.get(extId);
        return r && r.order === undefined && (await relais.worker.runtime.ledger.payload(extId)) === undefined
          ? r
          : undefined;
      },
      { what: 'the order to be redacted' },
    );
    expect(after.shipment?.shipmentId).toBe(before?.shipment?.shipmentId);
    // The job data of the original webhook no longer carries the customer's address either.
    await waitForIdle(relais);
    const jobs = await relais.web.runtime.queues.shopEvents.getJobs(['completed']);
    const original = jobs.find(
      (j) => j && (j.data.payload as { id?: unknown }).id === payload.id && j.data.topic === 'orders/create',
    );
    expect(original?.data.payload).toEqual({ id: payload.id, redacted: true });
  });
});
