/**
 * WooCommerce end to end, through real HTTP and a real Redis: the WooCommerce emulator (the shop), Relais
 * (web + worker) and the dispatch emulator (the courier service).
 *
 *   shop checkout → signed order webhooks → Relais → quote (weight from the products) → shipment, ready
 *   → courier steps → dispatch webhooks → Relais reads the shipment → meta_data, notes, completed and paid
 *
 * The courier is driven one stage at a time (advance, then wait for Relais to settle) so every step has
 * its moment: Relais writes the state it READS, so a courier racing ahead would rightly skip a step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWooEmulator, type OrderSnapshot, type WooEmulator } from '@relais/emulators/woocommerce';
import { makeSecrets, startTestRelais, waitFor, WOO_SHOP_ID, type TestRelais } from '../support/relais.js';
import { shipmentsFor, waitForIdle, waitForState, wooExternalId } from '../pipeline/helpers.js';

const COURIER_STEP_MS = 60_000; // the dispatch emulator's default time between courier stages

let woo: WooEmulator;
let relais: TestRelais;
/** External order ids whose delivery attempt fails (the courier cannot deliver). */
const failingDeliveries = new Set<string>();

beforeAll(async () => {
  const secrets = makeSecrets();
  // The shop first: Relais is configured with its URL and the same generated keys.
  woo = await startWooEmulator({
    shops: [
      {
        id: WOO_SHOP_ID,
        consumerKey: secrets.wooConsumerKey,
        consumerSecret: secrets.wooConsumerSecret,
        weightUnit: 'kg',
      },
    ],
  });
  relais = await startTestRelais({
    wooUrl: woo.siteUrl(WOO_SHOP_ID),
    secrets,
    deliveryOutcome: ({ externalOrderId }) => (failingDeliveries.has(externalOrderId) ? 'fail' : 'deliver'),
  });
  for (const topic of ['order.created', 'order.updated']) {
    const webhook = await woo.addWebhook(WOO_SHOP_ID, {
      topic,
      deliveryUrl: `${relais.web.url}/webhooks/woocommerce/${WOO_SHOP_ID}`,
      secret: secrets.wooWebhookSecret,
    });
    // WooCommerce pings a new webhook first, unsigned; anything but a 2xx and it keeps pinging.
    expect(webhook.ping).toMatchObject({ ok: true, status: 200 });
  }
  relais.emulator.setOrganisationWebhook(
    'org_relais',
    `${relais.web.url}/webhooks/dispatch/${WOO_SHOP_ID}/${secrets.dispatchWebhookToken}`,
  );
});

afterAll(async () => {
  await relais?.stop();
  await woo?.close();
});

const ABIDJAN = {
  first_name: 'Aya',
  last_name: 'Kouassi',
  company: '',
  address_1: 'Cocody Angré 7e tranche',
  address_2: 'Près de la pharmacie',
  city: 'Abidjan',
  state: '',
  postcode: '',
  country: 'CI',
};

async function placeOrder(input: {
  lines: { product_id: number; variation_id?: number; quantity: number }[];
  payment?: { payment_method: string; payment_method_title: string };
}): Promise<{ id: number; total: number; shipping: number; extId: string }> {
  const json = await woo.createOrder(WOO_SHOP_ID, {
    line_items: input.lines,
    ...(input.payment ?? { payment_method: 'cod', payment_method_title: 'Paiement à la livraison' }),
    billing: { ...ABIDJAN, email: 'aya.kouassi@example.com', phone: '+225 07 07 12 34 56' },
    shipping: { ...ABIDJAN, phone: '' },
  });
  const id = Number(json.id);
  return { id, total: Number(json.total), shipping: Number(json.shipping_total ?? 0), extId: wooExternalId(id) };
}

/** A COD order of 2 × 0.45 kg + 1 × 1.2 kg (a variation without its own weight), placed at checkout. */
async function placeCodOrder() {
  const phone = await woo.createProduct(WOO_SHOP_ID, { name: 'Téléphone Tecno', weight: '0.45', price: '45000' });
  const speaker = await woo.createProduct(WOO_SHOP_ID, {
    name: 'Enceinte',
    weight: '1.2',
    price: '15000',
    variations: [{ option: 'Noire' }],
  });
  return placeOrder({
    lines: [
      { product_id: phone.id, quantity: 2 },
      { product_id: speaker.id, variation_id: speaker.variationIds[0]!, quantity: 1 },
    ],
  });
}

function shipmentOf(extId: string) {
  const [shipment, ...others] = shipmentsFor(relais, extId);
  expect(others).toHaveLength(0);
  if (!shipment) throw new Error(`no shipment for ${extId}`);
  return shipment;
}

/** Moves the courier one stage at a time until the shipment reaches `finalStatus`, letting Relais settle after each. */
async function driveCourier(extId: string, finalStatus: string): Promise<void> {
  for (let stage = 0; stage < 10 && shipmentOf(extId).status !== finalStatus; stage += 1) {
    await relais.emulator.advance(COURIER_STEP_MS);
    await settle();
  }
  expect(shipmentOf(extId).status).toBe(finalStatus);
  await settle();
}

/** Waits until Relais's queues are empty and the shop's webhooks back to Relais were all delivered, twice in a row. */
async function settle(): Promise<void> {
  for (let round = 0; round < 2; round += 1) {
    await woo.settled();
    await waitForIdle(relais, 15_000);
  }
}

const snapshot = (id: number): OrderSnapshot => woo.orderSnapshot(WOO_SHOP_ID, id);
const relaisNotes = (id: number) => snapshot(id).notes.filter((n) => !n.customer_note && n.note.startsWith('Relais'));
const customerNotes = (id: number) => snapshot(id).notes.filter((n) => n.customer_note);
const meta = (id: number) => Object.fromEntries(snapshot(id).meta_data.map((m) => [m.key, m.value]));

async function quotedWeightKg(quoteId: string): Promise<unknown> {
  const response = await fetch(`${relais.emulator.baseUrl}/v1/quotes/${quoteId}`, {
    headers: { 'X-Api-Key': relais.secrets.dispatchApiKey },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { weight_kg?: unknown }).weight_kg;
}

describe('a WooCommerce COD order, from checkout to cash collected', () => {
  it('is quoted at its real weight, shows the tracking link, every step once and in order, and ends completed and paid', async () => {
    const order = await placeCodOrder();
    const record = await waitForState(relais, order.extId, ['ready', 'held']);
    expect(record.hold).toBeUndefined();

    const shipment = shipmentOf(order.extId);
    // The goods: the order's total less the shipping the shop charged (the service collects its own delivery).
    const goods = order.total - order.shipping;
    expect(order.shipping).toBeGreaterThan(0);
    expect(shipment.orderAmountXof).toBe(goods);
    const atDoor = goods + record.quote!.total;
    // 2 × 0.45 kg + 1.2 kg (the variation ships at its parent's weight)
    expect(await quotedWeightKg(shipment.quote_id)).toBe(2.1);

    // As soon as the shipment is ready: the reference on the order, the link for the customer.
    await waitFor(async () => customerNotes(order.id).length > 0, { what: 'the tracking note' });
    expect(meta(order.id)).toMatchObject({
      _relais_shipment_id: shipment.shipment_id,
      _relais_tracking_code: shipment.tracking_code,
      _relais_tracking_url: shipment.publicTrackingUrl,
    });

    await driveCourier(order.extId, 'DELIVERED');
    await waitForState(relais, order.extId, ['delivered']);
    await waitFor(async () => relaisNotes(order.id).some((n) => n.note.includes('cash collected')), {
      what: 'the cash note',
    });

    const final = snapshot(order.id);
    expect(final.status).toBe('completed');
    expect(final.set_paid).toBe(true);
    expect(final.date_paid).not.toBeNull();
    const customer = customerNotes(order.id);
    expect(customer).toHaveLength(1);
    expect(customer[0]!.note).toContain(shipment.publicTrackingUrl);
    expect(customer[0]!.note).toContain(`Please have ${atDoor} XOF ready for the courier.`);
    expect(relaisNotes(order.id).map((n) => n.note)).toEqual([
      `Relais: picked up by the courier (shipment ${shipment.shipment_id}).`,
      `Relais: in transit (shipment ${shipment.shipment_id}).`,
      `Relais: out for delivery (shipment ${shipment.shipment_id}).`,
      `Relais: delivered (shipment ${shipment.shipment_id}).`,
      expect.stringMatching(
        new RegExp(
          `^Relais: cash collected for the goods: ${goods} XOF \\(shipment ${shipment.shipment_id}; at the door: goods .* = .* XOF\\)\\.$`,
        ),
      ),
    ]);
    // Hidden from the customer: every key Relais wrote starts with an underscore.
    expect(Object.keys(meta(order.id)).filter((k) => k.includes('relais'))).toEqual([
      '_relais_shipment_id',
      '_relais_tracking_code',
      '_relais_tracking_url',
    ]);
  });

  it('duplicate and out-of-order dispatch webhooks add no note and change nothing', async () => {
    const order = await placeCodOrder();
    await waitForState(relais, order.extId, ['ready']);
    await driveCourier(order.extId, 'DELIVERED');
    await waitFor(async () => relaisNotes(order.id).some((n) => n.note.includes('cash collected')), {
      what: 'the cash note',
    });
    const before = snapshot(order.id);

    const shipmentId = shipmentOf(order.extId).shipment_id;
    const sent = relais.emulator.webhookDeliveries().filter((d) => JSON.stringify(d.body).includes(shipmentId));
    const delivered = sent.find((d) => JSON.stringify(d.body).includes('"DELIVERED"'));
    const pickedUp = sent.find((d) => JSON.stringify(d.body).includes('"PICKED_UP"'));
    expect(delivered && pickedUp).toBeTruthy();
    const url = `${relais.web.url}/webhooks/dispatch/${WOO_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`;
    for (const body of [
      delivered!.body,
      delivered!.body,
      pickedUp!.body,
      delivered!.body,
      delivered!.body,
      pickedUp!.body,
    ]) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBeLessThan(300);
    }
    await settle();

    const after = snapshot(order.id);
    expect(after.notes).toEqual(before.notes);
    expect(after.meta_data).toEqual(before.meta_data);
    expect(after.status).toBe('completed');
    expect((await relais.worker.runtime.ledger.get(order.extId))?.state).toBe('delivered');
  });
});

describe('reading the weight', () => {
  it('a product read answering 503 delays the quote (Retry-After honoured) instead of quoting without the weight', async () => {
    const fridge = await woo.createProduct(WOO_SHOP_ID, { name: 'Mini-frigo', weight: '14.5', price: '95000' });
    woo.faults.add({ kind: 'status', status: 503, route: `/products/${fridge.id}` });
    const order = await placeOrder({ lines: [{ product_id: fridge.id, quantity: 1 }] });
    await waitForState(relais, order.extId, ['ready'], 15_000);
    const productReads = woo.calls().filter((c) => c.route === `/wc/v3/products/${fridge.id}`);
    expect(productReads.map((c) => c.status)).toEqual([503, 200]);
    expect(await quotedWeightKg(shipmentOf(order.extId).quote_id)).toBe(14.5);
  });
});

describe('a delivery that fails', () => {
  it('is never completed nor paid, and the merchant reads why on the order', async () => {
    const order = await placeCodOrder();
    failingDeliveries.add(order.extId);
    await waitForState(relais, order.extId, ['ready']);
    await driveCourier(order.extId, 'RETURNED');
    await waitForState(relais, order.extId, ['returned']);
    await waitFor(async () => relaisNotes(order.id).some((n) => n.note.includes('returned to the merchant')), {
      what: 'the return note',
    });

    const final = snapshot(order.id);
    expect(final.status).toBe('processing');
    expect(final.date_paid).toBeNull();
    expect(final.set_paid).toBe(false);
    const notes = relaisNotes(order.id).map((n) => n.note);
    expect(notes.some((n) => n.startsWith('Relais: delivery failed: the courier could not deliver the parcel'))).toBe(
      true,
    );
    expect(notes.some((n) => n.includes('cash collected'))).toBe(false);
    expect(notes.indexOf(notes.find((n) => n.includes('delivery failed'))!)).toBeLessThan(
      notes.findIndex((n) => n.includes('returned to the merchant')),
    );
  });
});

describe('orders that must not ship, or no longer', () => {
  it('a bank-transfer order waiting on-hold is never shipped and never written to', async () => {
    const product = await woo.createProduct(WOO_SHOP_ID, { name: 'Tablette', weight: '0.6', price: '80000' });
    const order = await placeOrder({
      lines: [{ product_id: product.id, quantity: 1 }],
      payment: { payment_method: 'bacs', payment_method_title: 'Virement bancaire' },
    });
    expect(snapshot(order.id).status).toBe('on-hold');
    await waitForState(relais, order.extId, ['waiting']);
    await settle();
    expect(shipmentsFor(relais, order.extId)).toHaveLength(0);
    expect(relaisNotes(order.id)).toHaveLength(0);
    expect(
      woo.calls().filter((c) => c.method !== 'GET' && c.route.startsWith(`/wc/v3/orders/${order.id}`)),
    ).toHaveLength(0);
  });

  it('an order cancelled in the shop before pickup cancels its shipment, and the courier never comes', async () => {
    const order = await placeCodOrder();
    await waitForState(relais, order.extId, ['ready']);
    await settle();

    // The merchant cancels in wp-admin: WooCommerce sends order.updated with status cancelled.
    await woo.updateOrder(WOO_SHOP_ID, order.id, { status: 'cancelled' });
    await waitForState(relais, order.extId, ['cancelled']);
    const shipment = shipmentOf(order.extId);
    expect(shipment.status).toBe('CANCELLED');
    const cancel = shipment.status_history.find((h) => h.status === 'CANCELLED');
    expect(cancel?.reason).toContain('cancelled in the shop');
    expect(cancel?.by).toContain('Relais');
    await waitFor(async () => relaisNotes(order.id).some((n) => n.note.includes('shipment cancelled')), {
      what: 'the cancellation note',
    });

    // Time passes: no courier stage follows a cancellation, and the shop order stays cancelled and unpaid.
    await relais.emulator.advance(5 * COURIER_STEP_MS);
    await settle();
    expect(shipmentOf(order.extId).status).toBe('CANCELLED');
    expect(snapshot(order.id)).toMatchObject({ status: 'cancelled', date_paid: null });
    expect(relaisNotes(order.id).map((n) => n.note)).toEqual([
      `Relais: shipment cancelled (shipment ${shipment.shipment_id}).`,
    ]);
  });
});
