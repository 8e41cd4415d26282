/**
 * The WooCommerce emulator, driven the way Relais and merchants drive a real shop: through the official npm
 * client (@woocommerce/woocommerce-rest-api, OAuth 1.0a over http), plain fetch with Basic auth, and real
 * webhook receivers on 127.0.0.1 that check what arrives byte for byte.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';

// ------------------------------------------------------------------------------------------- test support

interface WooClient {
  get(endpoint: string, params?: Record<string, unknown>): Promise<ClientResponse>;
  post(endpoint: string, data: unknown, params?: Record<string, unknown>): Promise<ClientResponse>;
  put(endpoint: string, data: unknown, params?: Record<string, unknown>): Promise<ClientResponse>;
}
interface ClientResponse {
  status: number;
  data: unknown;
  headers: Record<string, string>;
  request: { path: string };
}
interface ClientInternals {
  _getUrl(endpoint: string, params: Record<string, unknown>): string;
  _getOAuth(): { authorize(request: { url: string; method: string }): Record<string, string> };
}
type WooClientConstructor = new (options: {
  url: string;
  consumerKey: string;
  consumerSecret: string;
  version: 'wc/v3';
}) => WooClient;

/** The npm package is CommonJS with `exports.default`: depending on the loader the class is one level deeper. */
async function loadClientClass(): Promise<WooClientConstructor> {
  const mod: { default: unknown } = await import('@woocommerce/woocommerce-rest-api');
  const candidate = mod.default;
  if (typeof candidate === 'function') return candidate as WooClientConstructor;
  return (candidate as { default: WooClientConstructor }).default;
}

/** Runs a request expected to fail and returns the axios error response. */
async function failing(
  request: Promise<ClientResponse>,
): Promise<{ status: number; data: unknown; headers: Record<string, string> }> {
  try {
    await request;
  } catch (error) {
    const response = (error as { response?: { status: number; data: unknown; headers: Record<string, string> } })
      .response;
    if (response) return response;
    throw error;
  }
  throw new Error('the request succeeded but was expected to fail');
}

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
}

/** A webhook receiver on 127.0.0.1 that records every request and answers with `respondWith`. */
async function startReceiver(
  respondWith: () => number = () => 200,
): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
      });
      res.writeHead(respondWith(), { 'Content-Type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/woocommerce`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A port that refuses connections: bind one, note it, close it. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/gone`;
}

const newKey = () => `ck_${randomBytes(20).toString('hex')}`;
const newSecret = () => `cs_${randomBytes(20).toString('hex')}`;
const basic = (key: string, secret: string) => `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;

const SHOP_A = { id: 'dakar-wax', consumerKey: newKey(), consumerSecret: newSecret() };
const SHOP_B = { id: 'abidjan-shoes', consumerKey: newKey(), consumerSecret: newSecret(), weightUnit: 'g' as const };

let Client: WooClientConstructor;
let woo: WooEmulator;
let clientA: WooClient;

beforeAll(async () => {
  Client = await loadClientClass();
  woo = await startWooEmulator({ shops: [SHOP_A, SHOP_B] });
  clientA = new Client({
    url: woo.siteUrl(SHOP_A.id),
    consumerKey: SHOP_A.consumerKey,
    consumerSecret: SHOP_A.consumerSecret,
    version: 'wc/v3',
  });
});

afterAll(async () => {
  await woo.close();
});

afterEach(() => {
  woo.faults.clear();
});

const restUrl = (shopId: string, route: string) => `${woo.siteUrl(shopId)}/wp-json/wc/v3/${route}`;

// ------------------------------------------------------------------------------------------- auth

describe('authentication', () => {
  it('serves each shop at /shops/{id} on 127.0.0.1', () => {
    expect(woo.siteUrl(SHOP_A.id)).toBe(`http://127.0.0.1:${woo.port}/shops/dakar-wax`);
  });

  it('lets the npm client read orders over http with OAuth 1.0a in the query string', async () => {
    const order = await woo.createOrder(SHOP_A.id);
    const response = await clientA.get(`orders/${String(order.id)}`);
    expect(response.status).toBe(200);
    expect(response.request.path).toContain('oauth_signature_method=HMAC-SHA256');
    expect((response.data as { id: number }).id).toBe(order.id);
    expect(woo.calls().at(-1)).toMatchObject({
      shopId: SHOP_A.id,
      method: 'GET',
      route: `/wc/v3/orders/${String(order.id)}`,
      status: 200,
      auth: 'oauth1',
    });
  });

  it("refuses a client signing with the wrong consumer secret with core's invalid-signature error", async () => {
    const wrong = new Client({
      url: woo.siteUrl(SHOP_A.id),
      consumerKey: SHOP_A.consumerKey,
      consumerSecret: newSecret(),
      version: 'wc/v3',
    });
    const response = await failing(wrong.get('orders'));
    expect(response.status).toBe(401);
    expect(response.data).toEqual({
      code: 'woocommerce_rest_authentication_error',
      message: 'Invalid signature - provided signature does not match.',
      data: { status: 401 },
    });
  });

  it('refuses a signed request whose query was changed after signing', async () => {
    const signed = await clientA.get('orders', { status: 'processing' });
    // The client sends each parameter twice (in the URL it signed and again from axios params); PHP keeps the last.
    const tampered = signed.request.path.replaceAll('status=processing', 'status=completed');
    expect(tampered).not.toBe(signed.request.path);
    const response = await fetch(`http://127.0.0.1:${woo.port}${tampered}`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ message: 'Invalid signature - provided signature does not match.' });
  });

  it('refuses a replayed nonce and a timestamp older than 15 minutes', async () => {
    const signed = await clientA.get('orders');
    const replay = await fetch(`http://127.0.0.1:${woo.port}${signed.request.path}`);
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ message: 'Invalid nonce - nonce has already been used.' });

    const internals = clientA as unknown as ClientInternals;
    const url = internals._getUrl('orders', {});
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() - 16 * 60_000 });
    let oauth: Record<string, string>;
    try {
      oauth = internals._getOAuth().authorize({ url, method: 'GET' });
    } finally {
      vi.useRealTimers();
    }
    const stale = await fetch(`${url}?${new URLSearchParams(oauth).toString()}`);
    expect(stale.status).toBe(401);
    expect(await stale.json()).toMatchObject({ message: 'Invalid timestamp.' });
  });

  it('refuses a request without credentials with woocommerce_rest_cannot_view', async () => {
    const response = await fetch(restUrl(SHOP_A.id, 'orders'));
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      code: 'woocommerce_rest_cannot_view',
      message: 'Sorry, you cannot list resources.',
      data: { status: 401 },
    });
  });

  it('accepts Basic auth and consumer_key/consumer_secret query parameters, and refuses a wrong Basic secret', async () => {
    const withBasic = await fetch(restUrl(SHOP_A.id, 'orders'), {
      headers: { Authorization: basic(SHOP_A.consumerKey, SHOP_A.consumerSecret) },
    });
    expect(withBasic.status).toBe(200);
    expect(woo.calls().at(-1)?.auth).toBe('basic');

    const query = new URLSearchParams({ consumer_key: SHOP_A.consumerKey, consumer_secret: SHOP_A.consumerSecret });
    const withQuery = await fetch(`${restUrl(SHOP_A.id, 'orders')}?${query.toString()}`);
    expect(withQuery.status).toBe(200);
    expect(woo.calls().at(-1)).toMatchObject({ auth: 'query', query: {} });

    const wrong = await fetch(restUrl(SHOP_A.id, 'orders'), {
      headers: { Authorization: basic(SHOP_A.consumerKey, newSecret()) },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('Basic realm=');
    expect(await wrong.json()).toMatchObject({
      code: 'woocommerce_rest_authentication_error',
      message: 'Consumer secret is invalid.',
    });
  });

  it("keeps shops apart: one shop's key is an invalid consumer key on another", async () => {
    const crossed = new Client({
      url: woo.siteUrl(SHOP_B.id),
      consumerKey: SHOP_A.consumerKey,
      consumerSecret: SHOP_A.consumerSecret,
      version: 'wc/v3',
    });
    const response = await failing(crossed.get('orders'));
    expect(response.status).toBe(401);
    expect(response.data).toMatchObject({ message: 'Consumer key is invalid.' });
  });
});

// ------------------------------------------------------------------------------------------- orders

describe('orders', () => {
  let shopId: string;
  let client: WooClient;
  let emulator: WooEmulator;
  let clock: Date;

  beforeAll(async () => {
    shopId = 'paging';
    const shop = { id: shopId, consumerKey: newKey(), consumerSecret: newSecret() };
    clock = new Date('2025-06-01T10:00:00Z');
    emulator = await startWooEmulator({ shops: [shop], now: () => clock });
    client = new Client({
      url: emulator.siteUrl(shopId),
      consumerKey: shop.consumerKey,
      consumerSecret: shop.consumerSecret,
      version: 'wc/v3',
    });
  });
  afterAll(async () => {
    await emulator.close();
  });
  const tick = (minutes: number) => {
    clock = new Date(clock.getTime() + minutes * 60_000);
  };

  it("charges a shop's tax rate on shipping, kept before tax in shipping_total, as shipping_tax, in the total and the tax lines", async () => {
    const taxed = await startWooEmulator({
      shops: [{ id: 'taxed', consumerKey: newKey(), consumerSecret: newSecret(), shippingTaxRate: 0.18 }],
    });
    try {
      const product = await taxed.createProduct('taxed', { name: 'Pagne wax', price: '15000' });
      const order = await taxed.createOrder('taxed', {
        line_items: [{ product_id: product.id, quantity: 1 }],
        shipping_lines: [{ method_id: 'flat_rate', method_title: 'Livraison', total: '2000' }],
      });
      expect(order).toMatchObject({
        shipping_total: '2000.00',
        shipping_tax: '360.00',
        total_tax: '360.00',
        total: '17360.00',
        tax_lines: [{ rate_id: 1, label: 'TVA', tax_total: '0.00', shipping_tax_total: '360.00' }],
        shipping_lines: [{ total: '2000.00', total_tax: '360.00', taxes: [{ id: 1, total: '360', subtotal: '' }] }],
      });
    } finally {
      await taxed.close();
    }
  });

  it('refunds shipping as core does: the order keeps its totals and lists the refund by total, the refund carries the shipping lines negative', async () => {
    const keys = { consumerKey: newKey(), consumerSecret: newSecret() };
    const taxed = await startWooEmulator({ shops: [{ id: 'taxed', ...keys, shippingTaxRate: 0.18 }] });
    try {
      const product = await taxed.createProduct('taxed', { name: 'Pagne wax', price: '15000' });
      const order = await taxed.createOrder('taxed', {
        line_items: [{ product_id: product.id, quantity: 1 }],
        shipping_lines: [{ method_id: 'flat_rate', method_title: 'Livraison', total: '2000' }],
      });
      const id = order.id as number;
      await taxed.refundOrder('taxed', id, { goods: 1000, reason: 'Article abîmé' });
      const refunded = await taxed.refundOrder('taxed', id, { shipping: 2000, reason: 'Livraison offerte' });
      expect(refunded).toMatchObject({ status: 'processing', total: '17360.00', shipping_total: '2000.00' });
      const [shippingRefund, goodsRefund] = refunded.refunds as { id: number; reason: string; total: string }[];
      expect(shippingRefund).toMatchObject({ reason: 'Livraison offerte', total: '-2360.00' });
      expect(goodsRefund).toMatchObject({ reason: 'Article abîmé', total: '-1000.00' });

      const rest = new Client({ url: taxed.siteUrl('taxed'), ...keys, version: 'wc/v3' });
      const listed = await rest.get(`orders/${id}/refunds`);
      expect(listed.headers['x-wp-total']).toBe('2');
      expect(listed.data).toMatchObject([
        {
          id: shippingRefund!.id,
          amount: '2360.00',
          line_items: [],
          shipping_lines: [
            {
              method_id: 'flat_rate',
              total: '-2000.00',
              total_tax: '-360.00',
              meta_data: [
                { key: '_refunded_item_id', value: String((order.shipping_lines as { id: number }[])[0]!.id) },
              ],
            },
          ],
        },
        { id: goodsRefund!.id, amount: '1000.00', shipping_lines: [] },
      ]);
      const last = await taxed.refundOrder('taxed', id, { goods: 14000 });
      expect(last.status).toBe('refunded');
    } finally {
      await taxed.close();
    }
  });

  it('pages orders newest first with X-WP-Total, X-WP-TotalPages and Link headers', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await emulator.createOrder(shopId)).id as number);
      tick(1);
    }
    const first = await client.get('orders', { per_page: 2 });
    expect(first.headers['x-wp-total']).toBe('5');
    expect(first.headers['x-wp-totalpages']).toBe('3');
    expect(first.headers.link).toContain('rel="next"');
    expect(first.headers.link).not.toContain('oauth_');
    expect((first.data as { id: number }[]).map((order) => order.id)).toEqual([ids[4], ids[3]]);

    const last = await client.get('orders', { per_page: 2, page: 3 });
    expect((last.data as { id: number }[]).map((order) => order.id)).toEqual([ids[0]]);
    expect(last.headers.link).toContain('rel="prev"');

    const ascending = await client.get('orders', { per_page: 100, order: 'asc', orderby: 'id' });
    expect((ascending.data as { id: number }[]).map((order) => order.id)).toEqual(ids);
  });

  it('refuses per_page above 100 with rest_invalid_param', async () => {
    const response = await failing(client.get('orders', { per_page: 101 }));
    expect(response.status).toBe(400);
    expect(response.data).toMatchObject({
      code: 'rest_invalid_param',
      message: 'Invalid parameter(s): per_page',
      data: { status: 400, params: { per_page: 'per_page must be between 1 (inclusive) and 100 (inclusive)' } },
    });
  });

  it('filters by status and by modified_after, which every save moves forward', async () => {
    const old = await emulator.createOrder(shopId);
    tick(10);
    const since = clock.toISOString().slice(0, 19);
    tick(1);
    await emulator.updateOrder(shopId, old.id as number, { status: 'on-hold' });
    const onHold = await client.get('orders', { status: 'on-hold' });
    expect((onHold.data as { id: number }[]).map((order) => order.id)).toEqual([old.id]);
    const either = await client.get('orders', { status: ['on-hold', 'completed'], per_page: 100 });
    expect((either.data as { id: number }[]).map((order) => order.id)).toEqual([old.id]);

    const modified = await client.get('orders', { modified_after: since });
    expect((modified.data as { id: number; date_modified_gmt: string }[]).map((order) => order.id)).toEqual([old.id]);
    const createdAfter = await client.get('orders', { after: since });
    expect(createdAfter.data).toEqual([]);
  });

  it('answers an unknown order with 404 woocommerce_rest_shop_order_invalid_id (400 on update, as core does)', async () => {
    const get = await failing(client.get('orders/999999'));
    expect(get.status).toBe(404);
    expect(get.data).toEqual({
      code: 'woocommerce_rest_shop_order_invalid_id',
      message: 'Invalid ID.',
      data: { status: 404 },
    });
    const put = await failing(client.put('orders/999999', { status: 'completed' }));
    expect(put.status).toBe(400);
    expect(put.data).toMatchObject({ code: 'woocommerce_rest_shop_order_invalid_id' });
  });
});

describe('order shape and writes', () => {
  it('places a cash-on-delivery order in XOF with money as strings and the v3 fields', async () => {
    const order = await woo.createOrder(SHOP_A.id);
    expect(order).toMatchObject({
      status: 'processing',
      currency: 'XOF',
      payment_method: 'cod',
      total: '14000.00',
      shipping_total: '1500.00',
      created_via: 'checkout',
      date_paid: null,
      shipping: { city: 'Dakar', country: 'SN', phone: '' },
      billing: { phone: '+221 77 123 45 67' },
    });
    const line = (
      order.line_items as { product_id: number; variation_id: number; quantity: number; total: string; price: number }[]
    )[0];
    expect(line).toMatchObject({ variation_id: 0, quantity: 1, total: '12500.00', price: 12500 });
    expect(typeof order.date_modified_gmt).toBe('string');
    expect(woo.orderSnapshot(SHOP_A.id, order.id as number).notes.map((note) => note.note)).toEqual([
      'Payment to be made upon delivery. Order status changed from Pending payment to Processing.',
    ]);
  });

  it("creates an order from the docs' create request through POST /orders", async () => {
    const request = JSON.parse(
      readFileSync(new URL('../fixtures/woocommerce/order-create-request-docs.json', import.meta.url), 'utf8'),
    ) as {
      line_items: { product_id: number; variation_id?: number; quantity: number }[];
    };
    // The docs name products 93 and 22 (variation 23); this shop's ids are its own.
    const single = await woo.createProduct(SHOP_A.id, { name: 'Woo Single #1', price: '3', weight: '0.2' });
    const variable = await woo.createProduct(SHOP_A.id, {
      name: 'Ship Your Idea',
      variations: [{ price: '12', option: 'Black' }],
    });
    request.line_items = [
      { product_id: single.id, quantity: 2 },
      { product_id: variable.id, variation_id: variable.variationIds[0] ?? 0, quantity: 1 },
    ];
    const response = await clientA.post('orders', request);
    expect(response.status).toBe(201);
    const order = response.data as Record<string, unknown>;
    expect(response.headers.location).toBe(restUrl(SHOP_A.id, `orders/${String(order.id)}`));
    expect(order).toMatchObject({
      status: 'processing',
      payment_method: 'bacs',
      created_via: 'rest-api',
      total: '28.00',
      billing: { city: 'San Francisco' },
    });
    expect(order.date_paid).not.toBeNull();
    expect(order).not.toHaveProperty('set_paid');
    expect(woo.orderSnapshot(SHOP_A.id, order.id as number).set_paid).toBe(true);
  });

  it('applies meta_data like update_meta_data: by id, by key (duplicates removed), null deletes', async () => {
    const order = await woo.createOrder(SHOP_A.id, {
      meta_data: [
        { key: '_relais_shipment', value: 'shp_1' },
        { key: 'gift_message', value: 'Bonne fête' },
      ],
    });
    const [shipment, gift] = order.meta_data as { id: number; key: string; value: unknown }[];
    expect(shipment?.id).toBeGreaterThan(0);

    // By id: that row changes, key included.
    let response = await clientA.put(`orders/${String(order.id)}`, {
      meta_data: [{ id: shipment?.id, key: '_relais_shipment', value: 'shp_2' }],
    });
    expect(response.data).toMatchObject({
      meta_data: [{ id: shipment?.id, key: '_relais_shipment', value: 'shp_2' }, { key: 'gift_message' }],
    });

    // By key, no id: a new key is added, an existing one is updated in place.
    response = await clientA.put(`orders/${String(order.id)}`, {
      meta_data: [
        { key: '_relais_status', value: 'ready' },
        { key: 'gift_message', value: 'Joyeux anniversaire' },
      ],
    });
    const meta = (response.data as { meta_data: { id: number; key: string; value: unknown }[] }).meta_data;
    expect(meta.map((entry) => [entry.key, entry.value])).toEqual([
      ['_relais_shipment', 'shp_2'],
      ['gift_message', 'Joyeux anniversaire'],
      ['_relais_status', 'ready'],
    ]);
    expect(meta[1]?.id).toBe(gift?.id);

    // An id that does not exist adds a row and deletes the rows with that key; a null value deletes.
    response = await clientA.put(`orders/${String(order.id)}`, {
      meta_data: [
        { id: 987654, key: '_relais_status', value: 'picked_up' },
        { key: 'gift_message', value: null },
      ],
    });
    expect(
      (response.data as { meta_data: { key: string; value: unknown }[] }).meta_data.map((entry) => [
        entry.key,
        entry.value,
      ]),
    ).toEqual([
      ['_relais_shipment', 'shp_2'],
      ['_relais_status', 'picked_up'],
    ]);
  });

  it('completes a COD order: set_paid alone does nothing on a processing order, completion sets date_paid', async () => {
    const order = await woo.createOrder(SHOP_A.id);
    const paidOnly = await clientA.put(`orders/${String(order.id)}`, { set_paid: true });
    expect(paidOnly.data).toMatchObject({ status: 'processing', date_paid: null });

    const completed = await clientA.put(`orders/${String(order.id)}`, { status: 'completed' });
    expect(completed.data).toMatchObject({ status: 'completed' });
    const snapshot = woo.orderSnapshot(SHOP_A.id, order.id as number);
    expect(snapshot.date_paid).not.toBeNull();
    expect(snapshot.date_completed).not.toBeNull();
    expect(snapshot.set_paid).toBe(true);
    expect(snapshot.notes.at(-1)?.note).toBe('Order status changed from Processing to Completed.');
  });

  it("refuses an unknown status with WordPress's enum message", async () => {
    const order = await woo.createOrder(SHOP_A.id);
    const response = await failing(clientA.put(`orders/${String(order.id)}`, { status: 'delivered' }));
    expect(response.status).toBe(400);
    expect(response.data).toMatchObject({
      code: 'rest_invalid_param',
      data: {
        params: {
          status:
            'status is not one of pending, processing, on-hold, completed, cancelled, refunded, failed, and checkout-draft.',
        },
      },
    });
  });
});

describe('order notes', () => {
  it('adds private and customer notes through the npm client and lists them newest first', async () => {
    const order = await woo.createOrder(SHOP_A.id);
    const privateNote = await clientA.post(`orders/${String(order.id)}/notes`, {
      note: 'Relais: shipment shp_9 created',
    });
    expect(privateNote.status).toBe(201);
    expect(privateNote.data).toMatchObject({
      note: 'Relais: shipment shp_9 created',
      customer_note: false,
      author: 'WooCommerce',
    });
    await clientA.post(`orders/${String(order.id)}/notes`, { note: 'Votre colis est en route', customer_note: true });

    const list = await clientA.get(`orders/${String(order.id)}/notes`);
    expect(
      (list.data as { note: string; customer_note: boolean }[]).map((note) => [note.note, note.customer_note]),
    ).toEqual([
      ['Votre colis est en route', true],
      ['Relais: shipment shp_9 created', false],
      ['Payment to be made upon delivery. Order status changed from Pending payment to Processing.', false],
    ]);
    expect(
      woo.orderSnapshot(SHOP_A.id, order.id as number).notes.map((note) => [note.note, note.customer_note]),
    ).toEqual([
      ['Payment to be made upon delivery. Order status changed from Pending payment to Processing.', false],
      ['Relais: shipment shp_9 created', false],
      ['Votre colis est en route', true],
    ]);
  });

  it('refuses a note without text and a note on an unknown order as core does', async () => {
    const order = await woo.createOrder(SHOP_A.id);
    const missing = await failing(clientA.post(`orders/${String(order.id)}/notes`, { customer_note: true }));
    expect(missing.status).toBe(400);
    expect(missing.data).toMatchObject({ code: 'rest_missing_callback_param', message: 'Missing parameter(s): note' });
    const unknown = await failing(clientA.post('orders/999999/notes', { note: 'x' }));
    expect(unknown.status).toBe(404);
    expect(unknown.data).toMatchObject({ code: 'woocommerce_rest_order_invalid_id', message: 'Invalid order ID.' });
  });
});

describe('products and weights', () => {
  it("reads weights as strings in the shop's unit, with variations inheriting an empty weight", async () => {
    const clientB = new Client({
      url: woo.siteUrl(SHOP_B.id),
      consumerKey: SHOP_B.consumerKey,
      consumerSecret: SHOP_B.consumerSecret,
      version: 'wc/v3',
    });
    const sandal = await woo.createProduct(SHOP_B.id, {
      name: 'Sandales cuir',
      weight: '450',
      variations: [{ weight: '520' }, {}],
    });
    const poster = await woo.createProduct(SHOP_B.id, { name: 'Affiche' });

    const unit = await clientB.get('settings/products/woocommerce_weight_unit');
    expect(unit.data).toMatchObject({
      id: 'woocommerce_weight_unit',
      type: 'select',
      value: 'g',
      options: { kg: 'kg', g: 'g', lbs: 'lbs', oz: 'oz' },
    });

    const product = await clientB.get(`products/${String(sandal.id)}`);
    expect(product.data).toMatchObject({
      id: sandal.id,
      type: 'variable',
      weight: '450',
      variations: sandal.variationIds,
    });
    const own = await clientB.get(`products/${String(sandal.id)}/variations/${String(sandal.variationIds[0])}`);
    expect(own.data).toMatchObject({ weight: '520', parent_id: sandal.id });
    const inherited = await clientB.get(`products/${String(sandal.id)}/variations/${String(sandal.variationIds[1])}`);
    expect(inherited.data).toMatchObject({ weight: '450' });
    expect((await clientB.get(`products/${String(poster.id)}`)).data).toMatchObject({ weight: '', type: 'simple' });

    const wrongParent = await failing(
      clientB.get(`products/${String(poster.id)}/variations/${String(sandal.variationIds[0])}`),
    );
    expect(wrongParent.status).toBe(404);
    expect(wrongParent.data).toMatchObject({ code: 'woocommerce_rest_product_variation_invalid_id' });
    const missing = await failing(clientB.get('products/999999'));
    expect(missing.data).toMatchObject({ code: 'woocommerce_rest_product_invalid_id', data: { status: 404 } });
  });
});

// ------------------------------------------------------------------------------------------- webhooks

describe('webhooks', () => {
  it('pings a webhook created through the API with an unsigned form-encoded webhook_id before answering', async () => {
    const receiver = await startReceiver();
    try {
      const secret = `whsec_${randomBytes(16).toString('hex')}`;
      const response = await clientA.post('webhooks', {
        name: 'Relais',
        topic: 'order.updated',
        delivery_url: receiver.url,
        secret,
      });
      expect(response.status).toBe(201);
      const webhook = response.data as { id: number; status: string; secret: string; hooks: string[] };
      expect(webhook).toMatchObject({
        status: 'active',
        topic: 'order.updated',
        resource: 'order',
        event: 'updated',
        secret,
      });
      expect(webhook.hooks).toContain('woocommerce_update_order');

      expect(receiver.received).toHaveLength(1);
      const ping = receiver.received[0];
      expect(ping?.rawBody.toString()).toBe(`webhook_id=${String(webhook.id)}`);
      expect(ping?.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(ping?.headers['user-agent']).toMatch(
        /^WooCommerce\/\d+\.\d+(\.\d+)? Hookshot \(WordPress\/\d+\.\d+(\.\d+)?\)$/,
      );
      expect(Object.keys(ping?.headers ?? {}).filter((name) => name.startsWith('x-wc-webhook'))).toEqual([]);

      const listed = await clientA.get(`webhooks/${String(webhook.id)}`);
      expect(listed.data).not.toHaveProperty('secret');
      expect(woo.webhooks(SHOP_A.id).find((entry) => entry.id === webhook.id)?.pendingDelivery).toBe(false);
    } finally {
      await receiver.close();
    }
  });

  it('delivers a signed order.updated with every core header and a fresh delivery id each time', async () => {
    const receiver = await startReceiver();
    const shop = { id: 'signed', consumerKey: newKey(), consumerSecret: newSecret() };
    const emulator = await startWooEmulator({ shops: [shop] });
    try {
      const secret = `whsec_${randomBytes(16).toString('hex')}`;
      const order = await emulator.createOrder(shop.id);
      const webhook = await emulator.addWebhook(shop.id, { topic: 'order.updated', deliveryUrl: receiver.url, secret });
      expect(webhook.ping).toEqual({ ok: true, status: 200, error: null });

      await emulator.updateOrder(shop.id, order.id as number, { status: 'completed' });
      await emulator.updateOrder(shop.id, order.id as number, {
        meta_data: [{ key: '_relais_delivered', value: 'yes' }],
      });
      const events = receiver.received.slice(1);
      expect(events).toHaveLength(2);
      for (const delivery of events) {
        const expectedSignature = createHmac('sha256', secret).update(delivery.rawBody).digest('base64');
        expect(delivery.headers).toMatchObject({
          'content-type': 'application/json',
          'x-wc-webhook-source': `${emulator.siteUrl(shop.id)}/`,
          'x-wc-webhook-topic': 'order.updated',
          'x-wc-webhook-resource': 'order',
          'x-wc-webhook-event': 'updated',
          'x-wc-webhook-signature': expectedSignature,
          'x-wc-webhook-id': String(webhook.id),
        });
        expect(delivery.headers['x-wc-webhook-delivery-id']).toMatch(/^[0-9a-f]{32}$/);
        expect(delivery.headers['user-agent']).toMatch(/^WooCommerce\/.+ Hookshot \(WordPress\/.+\)$/);
        // wp_json_encode escapes slashes: a receiver must hash the raw bytes, not re-serialised JSON.
        expect(delivery.rawBody.toString()).toContain('\\/wp-json\\/wc\\/v3\\/orders');
      }
      expect(events[0]?.headers['x-wc-webhook-delivery-id']).not.toBe(events[1]?.headers['x-wc-webhook-delivery-id']);
      const last = JSON.parse(events[1]?.rawBody.toString() ?? '{}') as Record<string, unknown>;
      expect(last).toEqual(emulator.getOrder(shop.id, order.id as number));
      expect(last).toMatchObject({ status: 'completed', meta_data: [{ key: '_relais_delivered', value: 'yes' }] });
    } finally {
      await emulator.close();
      await receiver.close();
    }
  });

  it('sends order.created then order.updated for a new order, as core does', async () => {
    const receiver = await startReceiver();
    const shop = { id: 'created', consumerKey: newKey(), consumerSecret: newSecret() };
    const emulator = await startWooEmulator({ shops: [shop] });
    try {
      await emulator.addWebhook(shop.id, {
        topic: 'order.created',
        deliveryUrl: receiver.url,
        secret: 'created-secret',
      });
      await emulator.addWebhook(shop.id, {
        topic: 'order.updated',
        deliveryUrl: receiver.url,
        secret: 'updated-secret',
      });
      const order = await emulator.createOrder(shop.id);
      const topics = receiver.received.slice(2).map((delivery) => delivery.headers['x-wc-webhook-topic']);
      expect(topics).toEqual(['order.created', 'order.updated']);
      const bodies = receiver.received
        .slice(2)
        .map((delivery) => JSON.parse(delivery.rawBody.toString()) as { id: number; status: string });
      expect(bodies.every((body) => body.id === order.id && body.status === 'processing')).toBe(true);
    } finally {
      await emulator.close();
      await receiver.close();
    }
  });

  it('trashing an order sends order.deleted with only its id and reads it as trash; restoring sends the whole order back; deleting it for good answers 404', async () => {
    const receiver = await startReceiver();
    const shop = { id: 'trash', consumerKey: newKey(), consumerSecret: newSecret() };
    const emulator = await startWooEmulator({ shops: [shop] });
    const rest = new Client({ url: emulator.siteUrl(shop.id), ...shop, version: 'wc/v3' });
    try {
      for (const topic of ['order.deleted', 'order.restored'])
        await emulator.addWebhook(shop.id, { topic, deliveryUrl: receiver.url, secret: 's' });
      const order = await emulator.createOrder(shop.id);
      const id = order.id as number;
      const pings = receiver.received.length;

      await emulator.trashOrder(shop.id, id);
      expect(emulator.getOrder(shop.id, id).status).toBe('trash');
      expect(((await rest.get('orders')).data as { id: number }[]).map((o) => o.id)).not.toContain(id);
      expect(((await rest.get('orders', { status: 'trash' })).data as { id: number }[]).map((o) => o.id)).toEqual([id]);

      const restored = await emulator.restoreOrder(shop.id, id);
      expect(restored.status).toBe(order.status);
      const [deleted, back] = receiver.received.slice(pings);
      expect([deleted?.headers['x-wc-webhook-topic'], JSON.parse(deleted!.rawBody.toString())]).toEqual([
        'order.deleted',
        { id },
      ]);
      expect(back?.headers['x-wc-webhook-topic']).toBe('order.restored');
      expect(JSON.parse(back!.rawBody.toString())).toMatchObject({ id, status: order.status });

      await emulator.trashOrder(shop.id, id);
      await emulator.deleteOrderForGood(shop.id, id);
      expect((await failing(rest.get(`orders/${id}`))).status).toBe(404);
    } finally {
      await emulator.close();
      await receiver.close();
    }
  });

  it("disables a webhook on the 6th failed delivery in a row, like core's $failures > 5", async () => {
    let answer = 500;
    const receiver = await startReceiver(() => answer);
    const shop = { id: 'failing', consumerKey: newKey(), consumerSecret: newSecret() };
    const emulator = await startWooEmulator({ shops: [shop] });
    try {
      const order = await emulator.createOrder(shop.id);
      answer = 200;
      const webhook = await emulator.addWebhook(shop.id, {
        topic: 'order.updated',
        deliveryUrl: receiver.url,
        secret: 's',
      });
      answer = 500;
      for (let i = 1; i <= 5; i++)
        await emulator.updateOrder(shop.id, order.id as number, { customer_note: `try ${String(i)}` });
      expect(emulator.webhooks(shop.id)[0]).toMatchObject({ id: webhook.id, status: 'active', failureCount: 5 });
      await emulator.updateOrder(shop.id, order.id as number, { customer_note: 'try 6' });
      expect(emulator.webhooks(shop.id)[0]).toMatchObject({ status: 'disabled' });

      const before = receiver.received.length;
      await emulator.updateOrder(shop.id, order.id as number, { customer_note: 'after' });
      expect(receiver.received.length).toBe(before);
      expect(
        emulator
          .deliveries()
          .filter((delivery) => delivery.kind === 'event')
          .map((delivery) => delivery.status),
      ).toEqual([500, 500, 500, 500, 500, 500]);
    } finally {
      await emulator.close();
      await receiver.close();
    }
  });

  it('disables a webhook after 5 failed deliveries with disableAfterFailures: 5, counting network errors, and a success resets the count', async () => {
    const shop = { id: 'five', consumerKey: newKey(), consumerSecret: newSecret() };
    const emulator = await startWooEmulator({ shops: [shop], disableAfterFailures: 5, deliveryTimeoutMs: 2_000 });
    let answer = 200;
    const receiver = await startReceiver(() => answer);
    try {
      const order = await emulator.createOrder(shop.id);
      const webhook = await emulator.addWebhook(shop.id, {
        topic: 'order.updated',
        deliveryUrl: receiver.url,
        secret: 's',
      });
      answer = 503;
      for (let i = 0; i < 4; i++)
        await emulator.updateOrder(shop.id, order.id as number, { customer_note: `a${String(i)}` });
      answer = 200;
      await emulator.updateOrder(shop.id, order.id as number, { customer_note: 'ok' });
      expect(emulator.webhooks(shop.id)[0]).toMatchObject({ status: 'active', failureCount: 0 });

      await emulator.updateWebhook(shop.id, webhook.id, { deliveryUrl: await closedPortUrl() });
      for (let i = 0; i < 4; i++)
        await emulator.updateOrder(shop.id, order.id as number, { customer_note: `b${String(i)}` });
      expect(emulator.webhooks(shop.id)[0]).toMatchObject({ status: 'active', failureCount: 4 });
      await emulator.updateOrder(shop.id, order.id as number, { customer_note: 'b4' });
      expect(emulator.webhooks(shop.id)[0]).toMatchObject({ status: 'disabled' });
      expect(emulator.deliveries().at(-1)).toMatchObject({ status: null, ok: false, webhookStatusAfter: 'disabled' });
    } finally {
      await emulator.close();
      await receiver.close();
    }
  });

  it('pings again after each delivery until a ping gets a 200, and skips paused webhooks', async () => {
    let answer = 500;
    const receiver = await startReceiver(() => answer);
    const shop = { id: 'reping', consumerKey: newKey(), consumerSecret: newSecret() };
    const emulator = await startWooEmulator({ shops: [shop] });
    const client = new Client({
      url: emulator.siteUrl(shop.id),
      consumerKey: shop.consumerKey,
      consumerSecret: shop.consumerSecret,
      version: 'wc/v3',
    });
    const kinds = () =>
      receiver.received.map((request) => (request.headers['x-wc-webhook-topic'] === undefined ? 'ping' : 'event'));
    try {
      const order = await emulator.createOrder(shop.id);
      // Core answers 201 whatever the ping got; the webhook stays "pending delivery".
      const created = await client.post('webhooks', {
        topic: 'order.updated',
        delivery_url: receiver.url,
        secret: 's',
      });
      expect(created.status).toBe(201);
      const id = (created.data as { id: number }).id;
      expect(emulator.webhooks(shop.id)[0]).toMatchObject({ pendingDelivery: true });

      await emulator.updateOrder(shop.id, order.id as number, { customer_note: 'one' });
      expect(kinds()).toEqual(['ping', 'event', 'ping']);
      answer = 200;
      await emulator.updateOrder(shop.id, order.id as number, { customer_note: 'two' });
      expect(kinds()).toEqual(['ping', 'event', 'ping', 'event', 'ping']);
      await emulator.updateOrder(shop.id, order.id as number, { customer_note: 'three' });
      expect(kinds()).toEqual(['ping', 'event', 'ping', 'event', 'ping', 'event']);
      expect(emulator.webhooks(shop.id)[0]).toMatchObject({ pendingDelivery: false, failureCount: 0 });

      const paused = await client.put(`webhooks/${String(id)}`, { status: 'paused' });
      expect(paused.data).toMatchObject({ status: 'paused' });
      await emulator.updateOrder(shop.id, order.id as number, { customer_note: 'four' });
      expect(receiver.received).toHaveLength(6);
    } finally {
      await emulator.close();
      await receiver.close();
    }
  });

  it('refuses an invalid topic and lists webhooks with paging headers', async () => {
    const bad = await failing(
      clientA.post('webhooks', { topic: 'order.shipped', delivery_url: 'http://127.0.0.1:9/x' }),
    );
    expect(bad.status).toBe(400);
    expect(bad.data).toMatchObject({
      code: 'woocommerce_rest_shop_webhook_invalid_topic',
      message: 'Webhook topic is required and must be valid.',
    });
    const list = await clientA.get('webhooks', { status: 'active' });
    expect(list.headers['x-wp-total']).toBe(String((list.data as unknown[]).length));
  });
});

// ------------------------------------------------------------------------------------------- faults

describe('faults', () => {
  it('answers the next matching requests with an injected status, then recovers', async () => {
    woo.faults.add({ kind: 'status', status: 503, times: 2, route: '/orders' });
    const first = await failing(clientA.get('orders'));
    expect(first.status).toBe(503);
    expect(String(first.headers['content-type'])).toContain('text/html');
    expect((await failing(clientA.get('orders'))).status).toBe(503);
    expect((await clientA.get('orders')).status).toBe(200);
    expect(woo.calls().filter((call) => call.fault === 'status')).toHaveLength(2);
  });

  it('delays matching requests by the injected latency', async () => {
    woo.faults.add({ kind: 'latency', ms: 400, times: 1 });
    expect(woo.faults.active()).toHaveLength(1);
    const started = Date.now();
    await clientA.get('orders');
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(woo.faults.active()).toEqual([]);
  });
});
