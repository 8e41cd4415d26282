/**
 * From a signed shop webhook to one shipment marked ready, through real HTTP, a real Redis and the
 * dispatch emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopifyOrderPayload, wooOrderPayload } from '../support/factories.js';
import { startTestRelais, type TestRelais } from '../support/relais.js';
import {
  postShopify,
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

describe('a cash-on-delivery order becomes exactly one shipment marked ready', () => {
  it('Shopify: the amount to collect, the neighbourhood, the coordinates and the weight reach the service', async () => {
    const payload = shopifyOrderPayload({
      total_price: '27500.00',
      current_total_price: '27500.00',
      total_outstanding: '27500.00',
      total_weight: 1800,
      shipping_address: { address1: 'Villa 12, Sacré Coeur 3', city: 'Dakar', latitude: 14.7167, longitude: -17.4677 },
    });
    const answer = await postShopify(relais, 'orders/create', payload);
    expect(answer.status).toBe(200);

    const extId = shopifyExternalId(payload.id);
    const record = await waitForState(relais, extId, ['ready', 'held']);
    expect(record.hold).toBeUndefined();
    expect(record.state).toBe('ready');

    const shipments = shipmentsFor(relais, extId);
    expect(shipments).toHaveLength(1);
    const [shipment] = shipments;
    expect(shipment!.status).toBe('READY');
    expect(shipment!.orderAmountXof).toBe(27500);
    expect(record.neighbourhood?.name).toMatch(/Sacr[ée][ -]C(œ|oe)ur 3/i);

    const quoteCall = relais.emulator.calls().filter((c) => c.operation === 'createQuote');
    expect(quoteCall.length).toBeGreaterThan(0);
    expect(record.shipment?.publicTrackingUrl).toContain('/t/');
    expect(record.shipment?.trackingCode).toHaveLength(10);
  });

  it('WooCommerce: a COD order in processing is shipped with its goods to collect (its total less the shipping the shop charged)', async () => {
    const payload = wooOrderPayload({
      total: '18000',
      shipping: { address_1: 'Cocody Angré, 7e tranche', city: 'Abidjan' },
    });
    const answer = await postWoo(relais, 'order.created', payload);
    expect(answer.status).toBe(200);
    const extId = wooExternalId(payload.id);
    const record = await waitForState(relais, extId, ['ready', 'held']);
    expect(record.hold).toBeUndefined();
    const shipments = shipmentsFor(relais, extId);
    expect(shipments).toHaveLength(1);
    expect(shipments[0]!.orderAmountXof).toBe(18000 - 2000); // shipping_total 2000 (the factory's)
    expect(shipments[0]!.status).toBe('READY');
  });

  it('a prepaid Shopify order waits while unpaid and ships once paid', async () => {
    const payload = shopifyOrderPayload({
      payment_gateway_names: ['shopify_payments'],
      gateway: 'shopify_payments',
      financial_status: 'pending',
    });
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    await waitForState(relais, extId, ['waiting']);
    await waitForIdle(relais);
    expect(shipmentsFor(relais, extId)).toHaveLength(0);

    const paid = {
      ...payload,
      financial_status: 'paid',
      total_outstanding: '0.00',
      updated_at: new Date().toISOString(),
    };
    await postShopify(relais, 'orders/paid', paid);
    await waitForState(relais, extId, ['ready']);
    const shipments = shipmentsFor(relais, extId);
    expect(shipments).toHaveLength(1);
    // Prepaid: nothing to collect at the door.
    expect(shipments[0]!.orderAmountXof ?? 0).toBe(0);
    expect(shipments[0]!.payment_mode).toBe('prepaid');
  });
});

describe('duplicates never make a second shipment', () => {
  it('the same webhook delivered five times at once, then again after completion, gives one shipment', async () => {
    const payload = shopifyOrderPayload();
    const eventId = `evt-${payload.id}`;
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => postShopify(relais, 'orders/create', payload, { eventId })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const extId = shopifyExternalId(payload.id);
    await waitForState(relais, extId, ['ready']);
    await waitForIdle(relais);

    const again = await postShopify(relais, 'orders/create', payload, { eventId });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'duplicate' });
    // A different delivery of another topic for the same order (orders/updated) is processed but ships nothing new.
    await postShopify(relais, 'orders/updated', payload, { eventId: `${eventId}-updated` });
    await waitForIdle(relais);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
  });
});

describe('the ledger keeps the raw shop payload only while a replay may need it', () => {
  it('a held order keeps it; once shipped it is dropped, and a later orders/updated does not bring it back', async () => {
    const held = shopifyOrderPayload({
      shipping_address: { address1: 'Rue 10', address2: '', city: 'Dakar', latitude: null, longitude: null },
    });
    await postShopify(relais, 'orders/create', held);
    const heldId = shopifyExternalId(held.id);
    await waitForState(relais, heldId, ['held']);
    expect(await relais.worker.runtime.ledger.payload(heldId)).toMatchObject({ id: held.id });

    const shipped = shopifyOrderPayload();
    await postShopify(relais, 'orders/create', shipped);
    const shippedId = shopifyExternalId(shipped.id);
    const record = await waitForState(relais, shippedId, ['ready']);
    expect(record.order?.outstanding).toBeGreaterThan(0);
    expect(await relais.worker.runtime.ledger.payload(shippedId)).toBeUndefined();

    await postShopify(relais, 'orders/updated', { ...shipped, note: 'Appeler avant de livrer' });
    await waitForIdle(relais);
    expect(await relais.worker.runtime.ledger.payload(shippedId)).toBeUndefined();
    expect((await relais.worker.runtime.ledger.timeline(shippedId)).map((e) => e.operation)).toContain(
      'webhook orders/updated',
    );
  });
});
