/**
 * The WooCommerce writer against the emulator over real HTTP: what the merchant and the customer see on
 * the order, and that every write happens once however often it is asked for.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../shops/secret.js';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';
import type { DispatchInfo, ShopOrderRef } from '../../shops/platforms/writer.js';
import { createWooRest } from './rest.js';
import { META_SHIPMENT_ID, META_TRACKING_CODE, META_TRACKING_URL, WooWriter, plainText } from './writer.js';

const SHOP = 'abidjan-tech';
const consumerKey = `ck_${randomBytes(16).toString('hex')}`;
const consumerSecret = `cs_${randomBytes(16).toString('hex')}`;
let woo: WooEmulator;
let writer: WooWriter;

beforeAll(async () => {
  woo = await startWooEmulator({ shops: [{ id: SHOP, consumerKey, consumerSecret }] });
  writer = new WooWriter(
    createWooRest({
      url: woo.siteUrl(SHOP),
      consumerKey: new Secret(consumerKey, 't'),
      consumerSecret: new Secret(consumerSecret, 't'),
    }),
  );
});
afterAll(async () => {
  await woo?.close();
});

async function newOrder(overrides: Record<string, unknown> = {}): Promise<ShopOrderRef> {
  const json = await woo.createOrder(SHOP, overrides);
  return {
    shopId: SHOP,
    orderId: String(json.id),
    orderName: `#${String(json.number)}`,
    externalOrderId: `${SHOP}:${String(json.id)}`,
  };
}

function info(overrides: Partial<DispatchInfo> = {}): DispatchInfo {
  return {
    shipmentId: 'shp_7Hq2',
    trackingCode: 'K7M2P9Q4XZ',
    publicTrackingUrl: 'http://127.0.0.1:4000/t/K7M2P9Q4XZ',
    goods: 18000,
    cashOnDelivery: true,
    carrierName: 'Relais',
    notifyCustomer: true,
    ...overrides,
  };
}

const relaisNotes = (ref: ShopOrderRef) =>
  woo.orderSnapshot(SHOP, Number(ref.orderId)).notes.filter((n) => n.note.startsWith('Relais'));
const writesTo = (ref: ShopOrderRef) =>
  woo.calls().filter((c) => c.method !== 'GET' && c.route.startsWith(`/wc/v3/orders/${ref.orderId}`));

describe('on dispatch', () => {
  it('writes the shipment reference as hidden meta_data and tells the customer the tracking link once', async () => {
    const ref = await newOrder();
    await writer.recordDispatch(ref, info());
    await writer.recordDispatch(ref, info());

    const snapshot = woo.orderSnapshot(SHOP, Number(ref.orderId));
    const meta = Object.fromEntries(snapshot.meta_data.map((m) => [m.key, m.value]));
    expect(meta).toMatchObject({
      [META_SHIPMENT_ID]: 'shp_7Hq2',
      [META_TRACKING_CODE]: 'K7M2P9Q4XZ',
      [META_TRACKING_URL]: 'http://127.0.0.1:4000/t/K7M2P9Q4XZ',
    });
    expect(
      Object.keys(meta)
        .filter((k) => k.startsWith('_relais_'))
        .every((k) => k.startsWith('_')),
    ).toBe(true);

    const customerNotes = snapshot.notes.filter((n) => n.customer_note);
    expect(customerNotes).toHaveLength(1);
    expect(customerNotes[0]!.note).toContain('http://127.0.0.1:4000/t/K7M2P9Q4XZ');
    expect(customerNotes[0]!.note).toContain('18000 XOF');
    // The second call only read: one PUT (meta) and one POST (note) in all.
    expect(writesTo(ref).map((c) => c.method)).toEqual(['PUT', 'POST']);
  });

  it('keeps the note private when the merchant chose not to notify customers, and updates a changed tracking link', async () => {
    const ref = await newOrder();
    await writer.recordDispatch(ref, info({ notifyCustomer: false, publicTrackingUrl: 'http://127.0.0.1:4000/t/OLD' }));
    await writer.recordDispatch(ref, info({ notifyCustomer: false }));
    const snapshot = woo.orderSnapshot(SHOP, Number(ref.orderId));
    expect(snapshot.notes.filter((n) => n.customer_note)).toHaveLength(0);
    expect(snapshot.meta_data.filter((m) => m.key === META_TRACKING_URL)).toEqual([
      expect.objectContaining({ value: 'http://127.0.0.1:4000/t/K7M2P9Q4XZ' }),
    ]);
  });
});

describe('delivery steps, payment and problems', () => {
  it('writes one private note per step, in order, and none twice', async () => {
    const ref = await newOrder();
    for (const step of [
      'picked_up',
      'in_transit',
      'picked_up',
      'out_for_delivery',
      'delivered',
      'delivered',
    ] as const) {
      await writer.recordStep(ref, step, new Date().toISOString(), info());
    }
    await writer.recordStep(ref, 'assigned', new Date().toISOString(), info());
    expect(relaisNotes(ref).map((n) => [n.note, n.customer_note])).toEqual([
      ['Relais: picked up by the courier (shipment shp_7Hq2).', false],
      ['Relais: in transit (shipment shp_7Hq2).', false],
      ['Relais: out for delivery (shipment shp_7Hq2).', false],
      ['Relais: delivered (shipment shp_7Hq2).', false],
    ]);
  });

  it('completes and marks paid a delivered COD order once, with the cash collected noted', async () => {
    const ref = await newOrder();
    expect(woo.orderSnapshot(SHOP, Number(ref.orderId))).toMatchObject({ status: 'processing', date_paid: null });
    await writer.markPaid(ref, info());
    await writer.markPaid(ref, info());
    const snapshot = woo.orderSnapshot(SHOP, Number(ref.orderId));
    expect(snapshot).toMatchObject({ status: 'completed', set_paid: true });
    expect(snapshot.date_paid).not.toBeNull();
    expect(relaisNotes(ref).map((n) => n.note)).toEqual([
      'Relais: cash collected for the goods: 18000 XOF (shipment shp_7Hq2).',
    ]);
    expect(writesTo(ref).filter((c) => c.method === 'PUT')).toHaveLength(1);
  });

  it('completes a prepaid order once delivered, without asking to mark it paid again', async () => {
    const ref = await newOrder({
      payment_method: 'bacs',
      payment_method_title: 'Virement bancaire',
      status: 'processing',
    });
    await writer.recordStep(ref, 'delivered', new Date().toISOString(), info({ cashOnDelivery: false, goods: 0 }));
    await writer.recordStep(ref, 'delivered', new Date().toISOString(), info({ cashOnDelivery: false, goods: 0 }));
    expect(woo.orderSnapshot(SHOP, Number(ref.orderId))).toMatchObject({ status: 'completed', set_paid: false });
    expect(relaisNotes(ref)).toHaveLength(1);
    expect(writesTo(ref).filter((c) => c.method === 'PUT')).toHaveLength(1);
  });

  it('never completes an order the merchant cancelled meanwhile: it says so in a note instead', async () => {
    const ref = await newOrder();
    await woo.updateOrder(SHOP, Number(ref.orderId), { status: 'cancelled' });
    await writer.markPaid(ref, info());
    const snapshot = woo.orderSnapshot(SHOP, Number(ref.orderId));
    expect(snapshot.status).toBe('cancelled');
    expect(relaisNotes(ref)[0]?.note).toMatch(/collected 18000 XOF .* "cancelled" in the shop/);
  });

  it('a failed delivery gets a clear private note and no payment', async () => {
    const ref = await newOrder();
    await writer.recordStep(ref, 'delivery_failed', new Date().toISOString(), info());
    const snapshot = woo.orderSnapshot(SHOP, Number(ref.orderId));
    expect(snapshot.status).toBe('processing');
    expect(snapshot.date_paid).toBeNull();
    expect(relaisNotes(ref).map((n) => n.note)).toEqual([
      expect.stringMatching(/^Relais: delivery failed: the courier could not deliver/),
    ]);
  });

  it('records a problem once', async () => {
    const ref = await newOrder();
    await writer.recordProblem(
      ref,
      'the delivery service refused to cancel shipment shp_7Hq2: the parcel has already been picked up.',
    );
    await writer.recordProblem(
      ref,
      'the delivery service refused to cancel shipment shp_7Hq2: the parcel has already been picked up.',
    );
    expect(relaisNotes(ref)).toHaveLength(1);
  });
});

describe('reading notes back as written', () => {
  it('sees through the tags and entities WordPress adds', () => {
    expect(plainText('<p>Relais: cash collected &amp; noted (shipment shp_1).</p>\n')).toBe(
      'Relais: cash collected & noted (shipment shp_1).',
    );
  });
});
