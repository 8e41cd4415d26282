/**
 * The rate at checkout is what the customer pays at the door (issue 13, item 7): the cash-collection fee is in
 * it, it is bounded by the shop's maximum, and a neighbourhood the service prices at the fallback tariff (the
 * city's) gets no rate at all. Real HTTP, real Redis, the dispatch emulator told not to price Mermoz.
 *
 * Emulator tariff from the Plateau (packages/emulators/src/dispatch/pricing.ts): Almadies 2 000, Point E 1 500, an
 * unpriced name or a city name 4 000 (the fallback); ≤ 1 kg adds nothing, 1–5 kg 300; cash on delivery adds 500,
 * which simulatePrice never shows. From Marcory (the WooCommerce shop): Danga 1 500.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildShopRegistry } from '../../src/shops/shops.js';
import { serviceId, TariffMemory } from '../../src/orders/dispatch/tariff-guard.js';
import { PostgresServiceMap } from '../../src/adapters/postgres/pg-service-map.js';
import { makeSecrets, registryDocument, secretEnv } from '../support/relais.js';
import {
  CAPPED_MAX_XOF,
  FLAT_RATE_XOF,
  SHOPIFY_CAPPED_SHOP_ID,
  SHOPIFY_FLAT_SHOP_ID,
  SHOPIFY_PREPAID_SHOP_ID,
  SHOPIFY_SHOP_ID,
  startCheckoutStack,
  WOO_SHOP_ID,
  type CheckoutStack,
} from './stack.js';

type Rates = { rates: Record<string, unknown>[] };

function dakar(address1: string, grams = 1000): unknown {
  return {
    rate: {
      origin: { country: 'SN', city: 'Dakar', address1: '12 avenue Léopold Sédar Senghor' },
      destination: { country: 'SN', province: 'Dakar', city: 'Dakar', address1, address2: '' },
      items: [{ grams, quantity: 1, requires_shipping: true }],
      currency: 'XOF',
    },
  };
}

function abidjan(paymentMethod?: string): unknown {
  return {
    destination: {
      country: 'CI',
      state: 'AB',
      postcode: '',
      city: 'Abidjan',
      address_1: 'Rue des Jardins',
      address_2: 'Cocody Danga',
    },
    total_weight_kg: 0.8,
    currency: 'XOF',
    ...(paymentMethod === undefined ? {} : { payment_method: paymentMethod }),
  };
}

const price = (answer: { body: unknown }): unknown =>
  (answer.body as Rates).rates[0]?.total_price ?? (answer.body as Rates).rates[0]?.cost;

let stack: CheckoutStack;

beforeAll(async () => {
  stack = await startCheckoutStack({ unpricedNeighbourhoods: ['Mermoz'] });
});
afterAll(async () => {
  await stack?.stop();
});
afterEach(() => {
  stack.emulator.faults.clear();
});

describe('the collection fee at checkout', () => {
  it("adds the service's 500 XOF collection fee to a Shopify rate, learning it once from two quotes, and leaves it out for a shop set to includeCodFee false", async () => {
    const quotesBefore = stack.quoteCalls();
    // Almadies, 1 kg: 2 000 simulated + 500 collection.
    expect(price(await stack.shopifyRates(SHOPIFY_SHOP_ID, dakar('Villa 5, Almadies')))).toBe('250000');
    expect(stack.quoteCalls()).toBe(quotesBefore + 2);
    // Another neighbourhood: the fee comes from Redis, no more quotes.
    expect(price(await stack.shopifyRates(SHOPIFY_SHOP_ID, dakar('Rue 10, Point E')))).toBe('200000');
    expect(stack.quoteCalls()).toBe(quotesBefore + 2);
    // The mostly-prepaid shop: the simulated price alone.
    expect(price(await stack.shopifyRates(SHOPIFY_PREPAID_SHOP_ID, dakar('Villa 5, Almadies')))).toBe('200000');
  });

  it('shows the rate a cash-on-delivery customer pays equal to the total of a cash-on-delivery quote for the same route', async () => {
    const shop = stack.shops.get(SHOPIFY_SHOP_ID)!;
    const response = await fetch(`${stack.emulator.baseUrl}/v1/quotes`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Api-Key': shop.dispatch.apiKey.reveal() },
      body: JSON.stringify({
        pickup: { city: 'Plateau', address: shop.pickup.address },
        dropoff: { city: 'Almadies', address: 'Villa 5, Almadies' },
        parcel: { weight_kg: 1 },
        payment_mode: 'cash_on_delivery',
      }),
    });
    const quote = (await response.json()) as { total: number };
    const rate = await stack.shopifyRates(SHOPIFY_SHOP_ID, dakar('Villa 5, Almadies'));
    expect(price(rate)).toBe(String(quote.total * 100));
  });

  it('follows the WooCommerce payment method when the plugin names it: a COD gateway pays the fee, another gateway does not', async () => {
    expect(price(await stack.wooRates(WOO_SHOP_ID, abidjan('cod')))).toBe(2000);
    expect(price(await stack.wooRates(WOO_SHOP_ID, abidjan('bacs')))).toBe(1500);
    // Unnamed: the shop's default (includeCodFee true).
    expect(price(await stack.wooRates(WOO_SHOP_ID, abidjan()))).toBe(2000);
  });

  it("answers as for a service down (the shop's flat rate), not with no rate, when the fee cannot be learned because the service refuses the quotes", async () => {
    const service = serviceId(stack.shops.get(SHOPIFY_FLAT_SHOP_ID)!);
    await stack.redis.client().del(`${stack.prefix}:tariff:${service}:cod-fee`);
    stack.emulator.faults.add({ operation: 'createQuote', fault: { kind: 'status', status: 400 } });
    const answer = await stack.shopifyRates(SHOPIFY_FLAT_SHOP_ID, dakar('Villa 2, Yoff'));
    expect(answer.status).toBe(200);
    expect((answer.body as Rates).rates[0]).toMatchObject({
      total_price: String(FLAT_RATE_XOF * 100),
      description: expect.stringContaining('tarif forfaitaire'),
    });
    expect(
      stack.logs.some(
        (l) =>
          l.msg === 'delivery service unavailable for a checkout price' &&
          String(l.err).startsWith('cannot learn the cash-collection fee'),
      ),
    ).toBe(true);
  });
});

describe("the shop's maximum rate", () => {
  it('offers no rate above maxRateXof, logs it and counts it, and still offers a rate below it', async () => {
    // Almadies, 3 kg: 2 000 + 300 + 500 = 2 800, above the 2 500 maximum.
    const above = await stack.shopifyRates(SHOPIFY_CAPPED_SHOP_ID, dakar('Villa 8, Almadies', 3000));
    expect(above).toMatchObject({ status: 200, body: { rates: [] } });
    const line = stack.logs.find(
      (l) =>
        l.shop === SHOPIFY_CAPPED_SHOP_ID &&
        typeof l.msg === 'string' &&
        l.msg.includes(`above the shop's maximum of ${String(CAPPED_MAX_XOF)} XOF`),
    );
    expect(line).toMatchObject({ level: 40, amountXof: 2800, maxRateXof: CAPPED_MAX_XOF });
    // The price is cached now: a cached price above the maximum is withheld the same way.
    expect(await stack.shopifyRates(SHOPIFY_CAPPED_SHOP_ID, dakar('Villa 8, Almadies', 3000))).toMatchObject({
      status: 200,
      body: { rates: [] },
    });
    const counted = await stack.web.metrics.checkoutRatesWithheld.get();
    expect(
      counted.values.find((v) => v.labels.shop === SHOPIFY_CAPPED_SHOP_ID && v.labels.reason === 'above_maximum')
        ?.value,
    ).toBe(2);
    // Point E, 1 kg: 1 500 + 500 = 2 000, within the maximum.
    expect(price(await stack.shopifyRates(SHOPIFY_CAPPED_SHOP_ID, dakar('Rue 10, Point E')))).toBe('200000');
  });

  it("refuses a maximum that is not a whole number of francs, or one below the shop's flat fallback rate", () => {
    const secrets = makeSecrets();
    const env = secretEnv(secrets);
    const build = (checkoutRates: Record<string, unknown>) => () =>
      buildShopRegistry(
        registryDocument({ dispatchBaseUrl: 'http://127.0.0.1:1', policy: { checkoutRates } }),
        (ref) => ('env' in ref ? env[ref.env] : undefined),
      );
    expect(build({ maxRateXof: 2500.5 })).toThrow(/maxRateXof/);
    expect(build({ maxRateXof: 1500, fallback: { mode: 'rate', amountXof: 2000 } })).toThrow(
      /fallback.amountXof must not exceed maxRateXof/,
    );
    expect(build({ maxRateXof: 2500, fallback: { mode: 'rate', amountXof: 2000 } })).not.toThrow();
  });
});

describe('the fallback-tariff guard at checkout', () => {
  it("offers no rate for a neighbourhood the service prices at the city's fallback tariff, says which alias fixes it, and records the name as priced at the fallback in the service map", async () => {
    const answer = await stack.shopifyRates(SHOPIFY_SHOP_ID, dakar('Villa 3, Mermoz'));
    expect(answer).toMatchObject({ status: 200, body: { rates: [] } });
    const line = stack.logs.find(
      (l) => l.neighbourhood === 'Mermoz' && typeof l.msg === 'string' && l.msg.includes('fallback tariff'),
    );
    expect(line).toMatchObject({ level: 40, fallback: 4000, simulated: 4000 });
    expect(line!.msg).toContain(
      `An alias fixes it for every later checkout and order: relais alias add ${SHOPIFY_SHOP_ID} "<the words the customer wrote>"`,
    );
    expect(JSON.stringify(line)).not.toContain('Villa 3'); // the customer's address stays out of the logs
    const map = new PostgresServiceMap(stack.db.pool());
    expect((await map.lookup(serviceId(stack.shops.get(SHOPIFY_SHOP_ID)!), ['Mermoz'])).get('Mermoz')).toMatchObject({
      priced: false,
      totalXof: 4000,
    });
    // Nothing was cached as a price: a second customer gets no rate either.
    expect(await stack.shopifyRates(SHOPIFY_SHOP_ID, dakar('Villa 3, Mermoz'))).toMatchObject({
      status: 200,
      body: { rates: [] },
    });
  });

  it('keeps offering a priced neighbourhood of the same city, whose price is below the fallback', async () => {
    expect(price(await stack.shopifyRates(SHOPIFY_PREPAID_SHOP_ID, dakar('Villa 5, Almadies')))).toBe('200000');
    const fallback = await new TariffMemory(stack.redis.client(), stack.prefix).fallback(
      serviceId(stack.shops.get(SHOPIFY_SHOP_ID)!),
      {
        pickup: 'Plateau',
        city: 'Dakar',
        weight: '1.0',
        paymentMode: 'simulate_price',
      },
    );
    expect(fallback).toBe(4000);
  });
});
