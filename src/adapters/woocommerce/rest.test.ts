/**
 * The WooCommerce REST client against the WooCommerce emulator over real HTTP (OAuth 1.0a, as the npm
 * client signs over http): what it reads and writes, how each failure is classified for the job retry,
 * and that the consumer key and secret never show in an error or a log line.
 */
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Secret } from '../../shops/secret.js';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';
import { createLogger } from '../../log.js';
import { freePort } from '../../../test/support/redis.js';
import { createWooRest, scrubCredentials } from './rest.js';
import { WooApiError, type WooRest } from './rest-types.js';
import { rejectionOf } from '../../../test/support/rejection.js';

const SHOP = 'abidjan-tech';
const consumerKey = `ck_${randomHex(20)}`;
const consumerSecret = `cs_${randomHex(20)}`;
let woo: WooEmulator;
let logLines: string[];
let rest: WooRest;

function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

function clientFor(options: { url?: string; key?: string; secret?: string; timeoutMs?: number } = {}): WooRest {
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  return createWooRest({
    url: options.url ?? woo.siteUrl(SHOP),
    consumerKey: new Secret(options.key ?? consumerKey, 'test'),
    consumerSecret: new Secret(options.secret ?? consumerSecret, 'test'),
    timeoutMs: options.timeoutMs ?? 2_000,
    logger: createLogger({ level: 'debug', destination }),
  });
}

const failure = (promise: Promise<unknown>) => rejectionOf(promise, WooApiError);

/** Everything a log or an error report could show of an error. */
function everythingShownOf(error: WooApiError): string {
  return [
    error.message,
    String(error),
    JSON.stringify(error),
    inspect(error, { depth: 5, showHidden: true }),
    ...logLines,
  ].join('\n');
}

function expectNoCredentials(text: string): void {
  expect(text).not.toContain(consumerKey);
  expect(text).not.toContain(consumerSecret);
  expect(text).not.toMatch(/(oauth_signature|oauth_consumer_key|consumer_secret)=(?!\[redacted\])/);
}

beforeAll(async () => {
  woo = await startWooEmulator({ shops: [{ id: SHOP, consumerKey, consumerSecret, weightUnit: 'kg' }] });
});
afterAll(async () => {
  await woo?.close();
});
afterEach(() => {
  woo.faults.clear();
});

describe('WooCommerce REST client: reads and writes', () => {
  beforeAll(() => {
    logLines = [];
    rest = clientFor();
  });

  it('reads an order, writes hidden meta_data and notes, and reads them back', async () => {
    const placed = await woo.createOrder(SHOP);
    const id = String(placed.id);
    const order = await rest.getOrder(id);
    expect(order.status).toBe('processing');

    const updated = await rest.updateOrder(id, { meta_data: [{ key: '_relais_shipment_id', value: 'shp_1' }] });
    expect(updated.meta_data.find((m) => m.key === '_relais_shipment_id')?.value).toBe('shp_1');

    await rest.addOrderNote(id, 'Relais: in transit (shipment shp_1).', false);
    await rest.addOrderNote(id, 'Your parcel: http://127.0.0.1/t/ABC', true);
    const notes = await rest.listOrderNotes(id);
    expect(notes.map((n) => [n.note, n.customer_note])).toEqual(
      expect.arrayContaining([
        ['Relais: in transit (shipment shp_1).', false],
        ['Your parcel: http://127.0.0.1/t/ABC', true],
      ]),
    );
    expect(
      woo
        .calls()
        .filter((c) => c.route === `/wc/v3/orders/${id}`)
        .every((c) => c.auth === 'oauth1'),
    ).toBe(true);
  });

  it("reads product and variation weights and the shop's weight unit", async () => {
    const product = await woo.createProduct(SHOP, { name: 'Casque', weight: '0.35', variations: [{ weight: '0.4' }] });
    expect((await rest.getProduct(String(product.id))).weight).toBe('0.35');
    expect((await rest.getVariation(String(product.id), String(product.variationIds[0]))).weight).toBe('0.4');
    expect(await rest.getWeightUnit()).toBe('kg');
  });

  it('refuses an id that is not a number before any request (no path can be injected)', async () => {
    const before = woo.calls().length;
    await expect(rest.getOrder('12/../../webhooks')).rejects.toThrow(TypeError);
    expect(woo.calls()).toHaveLength(before);
  });
});

describe('WooCommerce REST client: failures say whether a retry can help', () => {
  beforeAll(() => {
    logLines = [];
    rest = clientFor();
  });

  it('503 with Retry-After is retryable and carries the delay', async () => {
    woo.faults.add({ kind: 'status', status: 503, route: '/products/' });
    const error = await failure(rest.getProduct('1'));
    expect(error).toMatchObject({ retryable: true, status: 503, kind: 'http', retryAfterMs: 1000 });
  });

  it("429 is retryable with the shop's Retry-After", async () => {
    woo.faults.add({ kind: 'status', status: 429 });
    const error = await failure(rest.getWeightUnit());
    expect(error).toMatchObject({ retryable: true, status: 429, retryAfterMs: 1000 });
  });

  it('a PHP fatal error (500) is retryable', async () => {
    woo.faults.add({ kind: 'status', status: 500 });
    const error = await failure(rest.getOrder('1'));
    expect(error).toMatchObject({ retryable: true, status: 500, code: 'internal_server_error' });
    expect(error.message).not.toContain('<p>');
  });

  it("a deleted product is a non-retryable 404 with WooCommerce's own code and message", async () => {
    const error = await failure(rest.getProduct('999999'));
    expect(error).toMatchObject({
      retryable: false,
      status: 404,
      code: 'woocommerce_rest_product_invalid_id',
      notFound: true,
    });
    expect(error.message).toContain('Invalid ID.');
  });

  it('an unknown order on PUT is a non-retryable 400 (core answers 400 there, not 404)', async () => {
    const error = await failure(rest.updateOrder('999999', { status: 'completed' }));
    expect(error).toMatchObject({
      retryable: false,
      status: 400,
      code: 'woocommerce_rest_shop_order_invalid_id',
      notFound: true,
    });
  });

  it('a connection refused is a retryable network error', async () => {
    const port = await freePort();
    const error = await failure(clientFor({ url: `http://127.0.0.1:${port}/shops/${SHOP}` }).getOrder('1'));
    expect(error).toMatchObject({ retryable: true, kind: 'network' });
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('no answer within the timeout is a retryable timeout', async () => {
    woo.faults.add({ kind: 'latency', ms: 600, times: 1 });
    const error = await failure(clientFor({ timeoutMs: 200 }).getOrder('1'));
    expect(error).toMatchObject({ retryable: true, kind: 'timeout' });
  });
});

describe('WooCommerce REST client: the consumer key and secret never leak', () => {
  beforeEach(() => {
    logLines = [];
  });

  it('a refused signature (wrong secret) names the problem, not the credentials', async () => {
    const wrongSecret = `cs_${randomHex(20)}`;
    const error = await failure(clientFor({ secret: wrongSecret }).getOrder('1'));
    expect(error).toMatchObject({ retryable: false, status: 401, code: 'woocommerce_rest_authentication_error' });
    const shown = everythingShownOf(error);
    expectNoCredentials(shown);
    expect(shown).not.toContain(wrongSecret);
  });

  it('network errors, timeouts and 5xx leave no key, secret or OAuth parameter in messages or logs', async () => {
    const port = await freePort();
    const errors = [
      await failure(clientFor({ url: `http://127.0.0.1:${port}/shops/${SHOP}` }).getOrder('1')),
      await (async () => {
        woo.faults.add({ kind: 'latency', ms: 600, times: 1 });
        return failure(clientFor({ timeoutMs: 200 }).getOrder('1'));
      })(),
      await (async () => {
        woo.faults.add({ kind: 'status', status: 502 });
        return failure(clientFor().listOrderNotes('1'));
      })(),
    ];
    expect(logLines.length).toBeGreaterThan(0);
    for (const error of errors) expectNoCredentials(everythingShownOf(error));
  });

  it('successful calls log method, endpoint and status only', async () => {
    await clientFor().getWeightUnit();
    const lines = logLines.join('\n');
    expect(lines).toContain('settings/products/woocommerce_weight_unit');
    expectNoCredentials(lines);
  });

  it('scrubs OAuth parameters and the secrets themselves from any text', () => {
    const text = `GET http://x/wp-json/wc/v3/orders?oauth_consumer_key=${consumerKey}&oauth_signature=abc%3D&consumer_secret=${consumerSecret} ${consumerSecret}`;
    const scrubbed = scrubCredentials(text, [consumerKey, consumerSecret]);
    expectNoCredentials(scrubbed);
    expect(scrubbed).toContain('oauth_signature=[redacted]');
  });
});
