/**
 * The WooCommerce rates endpoint over real HTTP, real Redis and the dispatch emulator. The shop's pickup is in
 * Marcory (Abidjan). Emulator tariff from there: Danga, Riviéra 2 and Treichville are 1 500 XOF, Niangon 2 000;
 * ≤ 1 kg adds nothing, 1–5 kg adds 300. A request that names no payment method follows the shop's default
 * includeCodFee (true): the 500 XOF cash-collection fee is in the rate.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ANSWER_MARGIN_MS,
  FLAT_RATE_XOF,
  SLOW_SERVICE_MS,
  startCheckoutStack,
  TEST_BUDGET_MS,
  WOO_FLAT_SHOP_ID,
  WOO_OWN_SECRET_SHOP_ID,
  WOO_SHOP_ID,
  type CheckoutStack,
} from './stack.js';

/** A WooCommerce shipping package's destination, as the plugin forwards it. */
function abidjanRequest(
  address: { address_1: string; address_2?: string },
  weight: { items?: { weight_kg: number; quantity: number }[]; total_weight_kg?: number } = {
    items: [{ weight_kg: 0.4, quantity: 2 }],
  },
) {
  return {
    destination: { country: 'CI', state: 'AB', postcode: '', city: 'Abidjan', address_2: '', ...address },
    ...weight,
    currency: 'XOF',
  };
}

type Rates = { rates: Record<string, unknown>[] };

let stack: CheckoutStack;

beforeAll(async () => {
  stack = await startCheckoutStack();
});
afterAll(async () => {
  await stack?.stop();
});
afterEach(() => {
  stack.emulator.faults.clear();
});

describe('WooCommerce rates endpoint', () => {
  it('prices an Abidjan basket in whole XOF, with the rate id, label and currency the plugin adds', async () => {
    const answer = await stack.wooRates(
      WOO_SHOP_ID,
      abidjanRequest({ address_1: 'Rue des Jardins', address_2: 'Cocody Danga' }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      rates: [
        {
          id: 'RELAIS_STANDARD',
          label: 'Relais — livraison',
          cost: 2000,
          currency: 'XOF',
          description: 'Livraison à Cocody',
        },
      ],
    });
  });

  it('reads a total weight in kg instead of items, and prices it in its weight band', async () => {
    // 3 kg: band ≤ 3 kg, so 1 500 + 300, + 500 collection fee.
    const answer = await stack.wooRates(
      WOO_SHOP_ID,
      abidjanRequest({ address_1: 'Riviera 2' }, { total_weight_kg: 3 }),
    );
    expect((answer.body as Rates).rates[0]).toMatchObject({ cost: 2300 });
  });

  it('answers a second identical request from Redis without asking the delivery service again', async () => {
    const request = abidjanRequest({ address_1: 'Treichville, avenue 12' });
    const first = await stack.wooRates(WOO_SHOP_ID, request);
    const calls = stack.simulateCalls();
    const second = await stack.wooRates(WOO_SHOP_ID, request);
    expect(second.body).toEqual(first.body);
    expect(stack.simulateCalls()).toBe(calls);
  });

  it('answers 503 with no rate when the service is down and the shop has no flat rate, so the plugin adds nothing', async () => {
    stack.emulator.faults.add({ operation: 'simulatePrice', fault: { kind: 'status', status: 503 } });
    const answer = await stack.wooRates(WOO_SHOP_ID, abidjanRequest({ address_1: 'Yopougon Niangon' }));
    expect(answer).toMatchObject({ status: 503, body: { rates: [] } });
  });

  it("answers the merchant's flat rate within the budget when the service is slower than the budget", async () => {
    stack.emulator.faults.add({
      operation: 'simulatePrice',
      times: 1,
      fault: { kind: 'latency', ms: SLOW_SERVICE_MS },
    });
    const answer = await stack.wooRates(
      WOO_FLAT_SHOP_ID,
      abidjanRequest({ address_1: 'Yopougon Niangon' }, { total_weight_kg: 12 }),
    );
    expect(answer.status).toBe(200);
    const rate = (answer.body as Rates).rates[0]!;
    expect(rate).toMatchObject({ cost: FLAT_RATE_XOF, currency: 'XOF' });
    expect(rate.description).toMatch(/tarif forfaitaire/);
    expect(answer.ms).toBeLessThan(TEST_BUDGET_MS + ANSWER_MARGIN_MS);
  });

  it('gives no rate, never the flat rate, to an address whose neighbourhood is unknown', async () => {
    stack.emulator.faults.add({ operation: 'simulatePrice', fault: { kind: 'status', status: 503 } });
    const answer = await stack.wooRates(WOO_FLAT_SHOP_ID, abidjanRequest({ address_1: 'Rue du Commerce' }));
    expect(answer).toMatchObject({ status: 200, body: { rates: [] } });
    const line = stack.logs.find((l) => l.shop === WOO_FLAT_SHOP_ID && typeof l.fix === 'string');
    expect(line?.fix).toBe(`relais alias add ${WOO_FLAT_SHOP_ID} "<the words the customer wrote>" "<neighbourhood>"`);
    expect(JSON.stringify(line)).not.toContain('Rue du Commerce');
  });

  it("gives no rate to a destination in another country than the shop's", async () => {
    const answer = await stack.wooRates(WOO_SHOP_ID, {
      ...abidjanRequest({ address_1: 'Villa 5, Almadies' }),
      destination: { country: 'SN', city: 'Dakar', address_1: 'Villa 5, Almadies' },
    });
    expect(answer).toMatchObject({ status: 200, body: { rates: [] } });
  });

  it("with the plugin's own secret configured (checkoutSecret), accepts requests signed with it and refuses (401) ones signed with the webhook secret", async () => {
    const request = abidjanRequest({ address_1: 'Rue des Jardins', address_2: 'Cocody Danga' });
    expect(await stack.wooRates(WOO_OWN_SECRET_SHOP_ID, request, { secret: stack.wooCheckoutSecret })).toMatchObject({
      status: 200,
    });
    expect(await stack.wooRates(WOO_OWN_SECRET_SHOP_ID, request)).toMatchObject({
      status: 401,
      body: { error: 'invalid_signature' },
    });
  });

  it('refuses a body signed with another secret (401) and a request with no signature (401)', async () => {
    const request = abidjanRequest({ address_1: 'Riviera 2' });
    expect(await stack.wooRates(WOO_SHOP_ID, request, { secret: 'not-the-webhook-secret' })).toMatchObject({
      status: 401,
      body: { error: 'invalid_signature' },
    });
    expect(await stack.wooRates(WOO_SHOP_ID, request, { headers: { 'X-Relais-Signature': null } })).toMatchObject({
      status: 401,
      body: { error: 'missing_signature' },
    });
  });

  it('does not serve a Shopify shop on the WooCommerce endpoint (404)', async () => {
    const answer = await stack.wooRates('dakar-mode', abidjanRequest({ address_1: 'Riviera 2' }));
    expect(answer.status).toBe(404);
  });
});
