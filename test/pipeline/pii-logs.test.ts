/**
 * No personal data in the logs. Orders with the fixtures' customers go through the whole pipeline (web,
 * worker, dispatch emulator, write-back) with every log line captured at trace level: one dispatched, one
 * held because its address names no neighbourhood, one held for a missing phone, a WooCommerce order, and
 * a checkout price asked for an unknown address. Then the captured text is searched for the customers'
 * names, phones, emails and address lines.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { shopifyOrderPayload, signShopify, wooOrderPayload } from '../support/factories.js';
import { SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, startTestRelais, type TestRelais } from '../support/relais.js';
import { postShopify, postWoo, shopifyExternalId, waitForIdle, waitForState, wooExternalId } from './helpers.js';

let relais: TestRelais;
let captured = '';

const HELD_CUSTOMER = {
  name: 'Fatou Diop',
  phone: '+221 76 987 65 43',
  email: 'fatou.diop@example.sn',
  street: 'Immeuble Kër Yaay, Quartier Introuvable',
};
const NO_PHONE_CUSTOMER = { name: 'Moussa Faye', email: 'moussa.faye@example.sn', street: 'Villa 31, Sacré Coeur 3' };
const CHECKOUT_STREET = 'Résidence Baobab Inconnu, porte 9';

/** The fixtures' personal data (test/support/factories.ts) and this file's customers, in the forms they are written. */
const PERSONAL_DATA = [
  'Awa Ndiaye',
  'Ndiaye',
  '+221 77 123 45 67',
  '+221771234567',
  '771234567',
  'awa.ndiaye@example.com',
  'Villa 12',
  'Aya',
  'Kouassi',
  '+225 07 08 09 10 11',
  '0708091011',
  'Villa 24',
  'Riviera Golf',
  HELD_CUSTOMER.name,
  'Diop',
  HELD_CUSTOMER.phone,
  '769876543',
  HELD_CUSTOMER.email,
  'Kër Yaay',
  'Quartier Introuvable',
  NO_PHONE_CUSTOMER.name,
  'Faye',
  NO_PHONE_CUSTOMER.email,
  'Villa 31',
  'Baobab Inconnu',
];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      captured += chunk.toString('utf8');
      done();
    },
  });
  relais = await startTestRelais({ logger: createLogger({ level: 'trace', destination: sink }) });
});
afterAll(async () => {
  await relais?.stop();
});

function address(customer: { name: string; phone?: string | null; street: string }) {
  const [first, last] = customer.name.split(' ');
  return {
    first_name: first,
    last_name: last,
    name: customer.name,
    address1: customer.street,
    address2: '',
    city: 'Dakar',
    phone: customer.phone ?? null,
    latitude: undefined,
    longitude: undefined,
  };
}

describe('the logs of a run carry no personal data', () => {
  it('after dispatched, held, WooCommerce and checkout traffic, no customer name, phone, email or address line appears in any log line', async () => {
    const dispatched = shopifyOrderPayload();
    const held = shopifyOrderPayload({
      email: HELD_CUSTOMER.email,
      contact_email: HELD_CUSTOMER.email,
      phone: HELD_CUSTOMER.phone,
      shipping_address: address(HELD_CUSTOMER),
      billing_address: address(HELD_CUSTOMER),
      customer: { first_name: 'Fatou', last_name: 'Diop', email: HELD_CUSTOMER.email, phone: HELD_CUSTOMER.phone },
    });
    const noPhone = shopifyOrderPayload({
      email: NO_PHONE_CUSTOMER.email,
      contact_email: NO_PHONE_CUSTOMER.email,
      shipping_address: address(NO_PHONE_CUSTOMER),
      billing_address: address(NO_PHONE_CUSTOMER),
      customer: {
        first_name: 'Moussa',
        last_name: 'Faye',
        email: NO_PHONE_CUSTOMER.email,
        phone: null,
        default_address: undefined,
      },
    });
    const woo = wooOrderPayload();
    for (const payload of [dispatched, held, noPhone])
      expect((await postShopify(relais, 'orders/create', payload)).status).toBe(200);
    expect((await postWoo(relais, 'order.created', woo)).status).toBe(200);
    await waitForState(relais, shopifyExternalId(dispatched.id), ['ready', 'in_delivery', 'delivered'], 15_000);
    expect((await waitForState(relais, shopifyExternalId(held.id), ['held'])).hold?.code).toBe(
      'neighbourhood_not_found',
    );
    await waitForState(relais, shopifyExternalId(noPhone.id), ['held']);
    await waitForState(relais, wooExternalId(woo.id), ['ready', 'in_delivery', 'delivered', 'held'], 15_000);

    const rateRequest = JSON.stringify({
      rate: {
        origin: { country: 'SN', city: 'Dakar', address1: '12 avenue Léopold Sédar Senghor' },
        destination: {
          country: 'SN',
          city: 'Dakar',
          name: 'Awa Ndiaye',
          address1: CHECKOUT_STREET,
          address2: '',
          phone: '+221771234567',
          email: 'awa.ndiaye@example.com',
        },
        items: [
          {
            name: 'Article',
            sku: 'A',
            quantity: 1,
            grams: 500,
            price: 500_000,
            vendor: 'Dakar Mode',
            requires_shipping: true,
            taxable: false,
            fulfillment_service: 'manual',
          },
        ],
        currency: 'XOF',
        locale: 'fr',
      },
    });
    const rates = await fetch(`${relais.web.url}/checkout/shopify/${SHOPIFY_SHOP_ID}/rates`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-shopify-shop-domain': SHOPIFY_DOMAIN,
        'x-shopify-hmac-sha256': signShopify(rateRequest, relais.secrets.shopifyClientSecret),
      },
      body: rateRequest,
    });
    expect(rates.status).toBe(200);
    await waitForIdle(relais);

    // The run was logged: the lines this test looks through exist.
    expect(captured).toContain('shipment created');
    expect(captured).toContain('order held (neighbourhood_not_found)');
    expect(captured).toContain('no delivery price at checkout');
    const found = PERSONAL_DATA.filter((value) => captured.includes(value));
    expect(found).toEqual([]);
  });

  it('in the same run, no log line carries the key "shop" or "order" twice (a child logger\'s binding repeated by the call)', () => {
    const lines = captured.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(20);
    const doubled = lines.filter(
      (line) => (line.match(/"shop":/g) ?? []).length > 1 || (line.match(/"order":"/g) ?? []).length > 1,
    );
    expect(doubled).toEqual([]);
  });
});

describe("a request id on the web process's log lines", () => {
  const linesWith = (requestId: string) => captured.split('\n').filter((l) => l.includes(`"requestId":"${requestId}"`));

  it('answers with an X-Request-Id, and the lines the request caused carry it as requestId', async () => {
    const response = await fetch(`${relais.web.url}/webhooks/shopify`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-shopify-shop-domain': SHOPIFY_DOMAIN,
        'x-shopify-topic': 'orders/create',
        'x-shopify-hmac-sha256': 'bm90LWEtc2lnbmF0dXJl',
        'x-shopify-webhook-id': 'w-1',
        'x-shopify-api-version': '2025-10',
      },
      body: '{"id":1}',
    });
    expect(response.status).toBe(401);
    const requestId = response.headers.get('x-request-id')!;
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const lines = linesWith(requestId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('rejected a Shopify webhook');
  });

  it('keeps the X-Request-Id a proxy sent when it is a plain token, and replaces one that is not', async () => {
    const kept = await fetch(`${relais.web.url}/healthz`, { headers: { 'x-request-id': 'lb-7f3a.42' } });
    expect(kept.headers.get('x-request-id')).toBe('lb-7f3a.42');
    const replaced = await fetch(`${relais.web.url}/healthz`, { headers: { 'x-request-id': 'a b"c' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
