/**
 * The Shopify CarrierService callback, driven over real HTTP with Shopify's published rate request (copied from
 * ../shared/fixtures into test/fixtures/shopify) moved to Dakar, real Redis, and the dispatch emulator.
 *
 * Emulator tariff used below (packages/emulators/src/dispatch/pricing.ts): from the Plateau, Almadies/Yoff/Mamelles/Unité 26
 * are zone band 3 (2 000 XOF), HLM Grand Yoff and Point E band 2 (1 500 XOF); ≤ 1 kg adds nothing, 1–5 kg adds 300.
 * These shops keep the default checkoutRates.includeCodFee (true): Shopify never names the payment method, so every
 * rate includes the service's 500 XOF cash-collection fee, what the customer pays at the door.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAliasStore } from '../../src/adapters/postgres/pg-aliases.js';
import {
  ANSWER_MARGIN_MS,
  eventually,
  FLAT_RATE_XOF,
  SHOPIFY_FLAT_SHOP_ID,
  SHOPIFY_OFF_SHOP_ID,
  SHOPIFY_SHOP_ID,
  SLOW_SERVICE_MS,
  startCheckoutStack,
  TEST_BUDGET_MS,
  type CheckoutStack,
} from './stack.js';

interface PublishedRateRequest {
  rate: {
    origin: Record<string, unknown>;
    destination: Record<string, unknown>;
    items: Record<string, unknown>[];
    [key: string]: unknown;
  };
}

const published = JSON.parse(
  readFileSync(new URL('../fixtures/shopify/carrier-service-request.json', import.meta.url), 'utf8'),
) as PublishedRateRequest;
const publishedResponse = JSON.parse(
  readFileSync(new URL('../fixtures/shopify/carrier-service-response.json', import.meta.url), 'utf8'),
) as {
  rates: Record<string, unknown>[];
};

/**
 * Shopify's example, moved to Dakar: the shop's location on the Plateau, the customer's address as given, the
 * T-shirt replaced by `items` (grams per unit × quantity), currency XOF.
 */
function dakarRateRequest(
  destination: Record<string, unknown>,
  items: { grams: number; quantity: number }[] = [{ grams: 1000, quantity: 2 }],
): PublishedRateRequest {
  const body = structuredClone(published);
  body.rate.currency = 'XOF';
  body.rate.locale = 'fr';
  body.rate.origin = {
    ...body.rate.origin,
    country: 'SN',
    postal_code: '10200',
    province: 'Dakar',
    city: 'Dakar',
    address1: '12 avenue Léopold Sédar Senghor',
    company_name: 'Dakar Mode',
  };
  body.rate.destination = {
    ...body.rate.destination,
    country: 'SN',
    postal_code: null,
    province: 'Dakar',
    city: 'Dakar',
    name: 'Awa Ndiaye',
    address2: '',
    ...destination,
  };
  const template = body.rate.items[0]!;
  body.rate.items = items.map((item, i) => ({ ...template, name: `Article ${i + 1}`, price: 1_500_000, ...item }));
  return body;
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

describe('Shopify carrier service: the price at checkout', () => {
  it('prices a Dakar basket at the delivery service\'s total plus its collection fee, in Shopify sub-units (2 800 XOF is "280000")', async () => {
    const before = stack.simulateCalls();
    // Two 1 kg items: band ≤ 2 kg, priced at 2 kg; Almadies from the Plateau: 2 000 + 300 + 500 (collection) = 2 800 XOF.
    const answer = await stack.shopifyRates(SHOPIFY_SHOP_ID, dakarRateRequest({ address1: 'Villa 5, Almadies' }));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      rates: [
        {
          service_name: 'Relais — livraison',
          service_code: 'RELAIS_STANDARD',
          total_price: '280000',
          description: 'Livraison à Almadies',
          currency: 'XOF',
        },
      ],
    });
    // Two: the neighbourhood's price, and the city name's, which the fallback-tariff guard learns once per weight band.
    expect(stack.simulateCalls()).toBe(before + 2);
  });

  it("answers with only the fields of Shopify's published response, and never the price breakdown", async () => {
    const answer = await stack.shopifyRates(
      SHOPIFY_SHOP_ID,
      dakarRateRequest({ address1: 'Cité Mamelles' }, [{ grams: 400, quantity: 1 }]),
    );
    const rate = (answer.body as Rates).rates[0]!;
    const publishedFields = new Set(publishedResponse.rates.flatMap((r) => Object.keys(r)));
    for (const field of Object.keys(rate)) expect(publishedFields).toContain(field);
    expect(JSON.stringify(answer.body)).not.toMatch(/breakdown|courier|platform|cod_fee/);
    expect(rate.total_price).toBe('250000');
  });

  it('answers a second identical request from Redis without asking the delivery service again', async () => {
    const request = dakarRateRequest({ address1: 'Yoff Tonghor' });
    const first = await stack.shopifyRates(SHOPIFY_SHOP_ID, request);
    const calls = stack.simulateCalls();
    const second = await stack.shopifyRates(SHOPIFY_SHOP_ID, request);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(stack.simulateCalls()).toBe(calls);
    // Another basket in the same weight band and neighbourhood is the same cached price.
    const sameBand = await stack.shopifyRates(
      SHOPIFY_SHOP_ID,
      dakarRateRequest({ address1: 'Rue 12, Yoff Tonghor' }, [{ grams: 1500, quantity: 1 }]),
    );
    expect(sameBand.body).toEqual(first.body);
    expect(stack.simulateCalls()).toBe(calls);
  });

  it('makes one simulatePrice call for a burst of identical requests arriving together', async () => {
    stack.emulator.faults.add({ operation: 'simulatePrice', times: 1, fault: { kind: 'latency', ms: 150 } });
    const before = stack.simulateCalls();
    const request = dakarRateRequest({ address1: 'HLM Grand Yoff' }, [{ grams: 700, quantity: 1 }]);
    const answers = await Promise.all(Array.from({ length: 8 }, () => stack.shopifyRates(SHOPIFY_SHOP_ID, request)));
    // HLM Grand Yoff from the Plateau, ≤ 1 kg: 1 500 XOF, + 500 collection fee.
    for (const a of answers) expect((a.body as Rates).rates[0]?.total_price).toBe('200000');
    // Two for the burst: the neighbourhood's price, and the city name's (the fallback tariff, learned once per weight band).
    expect(stack.simulateCalls()).toBe(before + 2);
  });

  it('reads the postcode from `zip`, as Shopify sends it to API-created carrier services', async () => {
    const request = dakarRateRequest({ address1: 'Point E, rue de Kaolack', zip: '12500' });
    delete request.rate.destination.postal_code;
    const answer = await stack.shopifyRates(SHOPIFY_SHOP_ID, request);
    expect(answer.status).toBe(200);
    expect((answer.body as Rates).rates[0]).toMatchObject({
      total_price: '230000',
      description: 'Livraison à Point E',
    });
  });
});

describe('Shopify carrier service: when the delivery service is slow or down', () => {
  it("answers 503 with no rate, so Shopify shows the shop's backup rates, when the service is down and the shop has no flat rate", async () => {
    stack.emulator.faults.add({ operation: 'simulatePrice', fault: { kind: 'status', status: 503 } });
    const answer = await stack.shopifyRates(SHOPIFY_SHOP_ID, dakarRateRequest({ address1: 'Parcelles Assainies U26' }));
    expect(answer).toMatchObject({ status: 503, body: { rates: [] } });
    expect(
      stack.logs.some(
        (l) => l.shop === SHOPIFY_SHOP_ID && l.msg === 'delivery service unavailable for a checkout price',
      ),
    ).toBe(true);
  });

  it("answers the merchant's flat rate, flagged in the description, when the service is down, and does not keep it", async () => {
    stack.emulator.faults.add({ operation: 'simulatePrice', times: 1, fault: { kind: 'status', status: 503 } });
    const request = dakarRateRequest({ address1: 'Parcelles Assainies U26' });
    const down = await stack.shopifyRates(SHOPIFY_FLAT_SHOP_ID, request);
    expect(down.status).toBe(200);
    const flat = (down.body as Rates).rates[0]!;
    expect(flat).toMatchObject({
      service_code: 'RELAIS_STANDARD',
      total_price: String(FLAT_RATE_XOF * 100),
      currency: 'XOF',
    });
    expect(flat.description).toMatch(/tarif forfaitaire/);
    // The flat rate was not cached: once the service is back, the next checkout gets the real price.
    const before = stack.simulateCalls();
    const up = await stack.shopifyRates(SHOPIFY_FLAT_SHOP_ID, request);
    expect((up.body as Rates).rates[0]).toMatchObject({
      total_price: '280000',
      description: 'Livraison à Parcelles Assainies',
    });
    expect(stack.simulateCalls()).toBe(before + 1);
  });

  it('answers within the time budget when the service is slower than the budget, and the late price serves the next customer', async () => {
    stack.emulator.faults.add({
      operation: 'simulatePrice',
      times: 1,
      fault: { kind: 'latency', ms: SLOW_SERVICE_MS },
    });
    const request = dakarRateRequest({ address1: 'Villa 9, Almadies' }, [{ grams: 4000, quantity: 1 }]);
    // The emulator records a call when it answers, so the slow call is counted late: count from before it.
    const before = stack.simulateCalls();
    const slow = await stack.shopifyRates(SHOPIFY_SHOP_ID, request);
    expect(slow).toMatchObject({ status: 503, body: { rates: [] } });
    expect(slow.ms).toBeLessThan(TEST_BUDGET_MS + ANSWER_MARGIN_MS);
    expect(stack.logs.some((l) => l.msg === 'delivery service too slow for the checkout time budget')).toBe(true);
    // The call that outlived the budget goes on and stores its price: the next identical checkout is a cache hit.
    await eventually(
      async () => (await stack.shopifyRates(SHOPIFY_SHOP_ID, request)).status === 200,
      'the late price is cached',
    );
    const next = await stack.shopifyRates(SHOPIFY_SHOP_ID, request);
    expect((next.body as Rates).rates[0]?.total_price).toBe('280000');
    // Two simulatePrice calls in all: the slow one, and the city name's that the fallback-tariff guard learns once per
    // weight band; every later answer came from what they stored.
    expect(stack.simulateCalls()).toBe(before + 2);
  });

  it('answers the flat rate within the budget when the service is slower than the budget', async () => {
    stack.emulator.faults.add({
      operation: 'simulatePrice',
      times: 1,
      fault: { kind: 'latency', ms: SLOW_SERVICE_MS },
    });
    const answer = await stack.shopifyRates(
      SHOPIFY_FLAT_SHOP_ID,
      dakarRateRequest({ address1: 'Villa 2, Almadies' }, [{ grams: 9000, quantity: 1 }]),
    );
    expect(answer.status).toBe(200);
    expect((answer.body as Rates).rates[0]).toMatchObject({ total_price: String(FLAT_RATE_XOF * 100) });
    expect(answer.ms).toBeLessThan(TEST_BUDGET_MS + ANSWER_MARGIN_MS);
  });
});

describe('Shopify carrier service: addresses Relais cannot price', () => {
  it('gives no rate, never the flat rate, to an address whose neighbourhood is unknown, and logs the shape of the alias that would fix it without the address', async () => {
    // The service is down too: a shop with a flat fallback still must not show it for an unknown place.
    stack.emulator.faults.add({ operation: 'simulatePrice', fault: { kind: 'status', status: 503 } });
    const before = stack.simulateCalls();
    const answer = await stack.shopifyRates(
      SHOPIFY_FLAT_SHOP_ID,
      dakarRateRequest({ address1: 'Immeuble Kébé, rue Carnot' }),
    );
    expect(answer).toMatchObject({ status: 200, body: { rates: [] } });
    expect(stack.simulateCalls()).toBe(before);
    const line = stack.logs.find((l) => l.shop === SHOPIFY_FLAT_SHOP_ID && typeof l.fix === 'string');
    expect(line).toBeDefined();
    expect(line!.level).toBe(40); // warn
    // The customer's address is personal data: neither a field nor the message carries it.
    expect(line!.address).toBeUndefined();
    expect(line!.fix).toBe(
      `relais alias add ${SHOPIFY_FLAT_SHOP_ID} "<the words the customer wrote>" "<neighbourhood>"`,
    );
    expect(line!.msg).toContain('no delivery price at checkout');
    expect(JSON.stringify(line)).not.toContain('Kébé');
  });

  it('prices that address as soon as an operator adds an alias at run time', async () => {
    const request = dakarRateRequest({ address1: '3 rue Carnot' }, [{ grams: 500, quantity: 1 }]);
    expect((await stack.shopifyRates(SHOPIFY_SHOP_ID, request)).body).toEqual({ rates: [] });
    await new PostgresAliasStore(stack.db.pool()).add(SHOPIFY_SHOP_ID, 'rue Carnot', 'Point E');
    const answer = await stack.shopifyRates(SHOPIFY_SHOP_ID, request);
    expect((answer.body as Rates).rates[0]).toMatchObject({
      total_price: '200000',
      description: 'Livraison à Point E',
    });
  });

  it("gives no rate to Shopify's published example as it is, an address in Ottawa", async () => {
    const before = stack.simulateCalls();
    const answer = await stack.shopifyRates(SHOPIFY_SHOP_ID, published);
    expect(answer).toMatchObject({ status: 200, body: { rates: [] } });
    expect(stack.simulateCalls()).toBe(before);
  });
});

describe('Shopify carrier service: who may ask', () => {
  it('refuses a request signed with another secret (401), without asking for a price', async () => {
    const before = stack.simulateCalls();
    const answer = await stack.shopifyRates(SHOPIFY_SHOP_ID, dakarRateRequest({ address1: 'Villa 5, Almadies' }), {
      secret: 'not-the-client-secret',
    });
    expect(answer).toMatchObject({ status: 401, body: { error: 'invalid_signature' } });
    expect(stack.simulateCalls()).toBe(before);
  });

  it('refuses a request with no signature (401)', async () => {
    const answer = await stack.shopifyRates(SHOPIFY_SHOP_ID, dakarRateRequest({ address1: 'Villa 5, Almadies' }), {
      headers: { 'X-Shopify-Hmac-Sha256': null },
    });
    expect(answer).toMatchObject({ status: 401, body: { error: 'missing_signature' } });
  });

  it('refuses a correctly signed request that names another shop (401): the client secret is shared by every shop of the app', async () => {
    const answer = await stack.shopifyRates(SHOPIFY_SHOP_ID, dakarRateRequest({ address1: 'Villa 5, Almadies' }), {
      headers: { 'X-Shopify-Shop-Domain': 'someone-else.myshopify.com' },
    });
    expect(answer).toMatchObject({ status: 401, body: { error: 'shop_domain_mismatch' } });
  });

  it('answers 400 to a signed body that is not a rate request, and 404 to an unknown shop', async () => {
    expect((await stack.shopifyRates(SHOPIFY_SHOP_ID, { rate: { destination: {} } })).status).toBe(400);
    expect((await stack.shopifyRates(SHOPIFY_SHOP_ID, 'not json')).status).toBe(400);
    expect((await stack.shopifyRates('no-such-shop', dakarRateRequest({ address1: 'Villa 5, Almadies' }))).status).toBe(
      404,
    );
  });

  it('answers 404 for a shop that turned checkout prices off, so Shopify shows its backup rates', async () => {
    const answer = await stack.shopifyRates(SHOPIFY_OFF_SHOP_ID, dakarRateRequest({ address1: 'Villa 5, Almadies' }));
    expect(answer).toMatchObject({ status: 404, body: { error: 'checkout_rates_disabled' } });
  });
});

describe('Shopify carrier service: delivery dates', () => {
  it("gives delivery dates in Shopify's format when the merchant set delivery days", async () => {
    const answer = await stack.shopifyRates(
      SHOPIFY_FLAT_SHOP_ID,
      dakarRateRequest({ address1: 'Cité Mamelles' }, [{ grams: 300, quantity: 2 }]),
    );
    const rate = (answer.body as Rates).rates[0]!;
    const format = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \+0000$/;
    expect(rate.min_delivery_date).toMatch(format);
    expect(rate.max_delivery_date).toMatch(format);
    const day = (s: unknown) => Date.parse(String(s).replace(' ', 'T').replace(' +0000', 'Z'));
    expect(day(rate.max_delivery_date) - day(rate.min_delivery_date)).toBe(86_400_000);
  });
});
