/**
 * Parcel weights for WooCommerce orders: exact unit conversion, the all-or-nothing rule, variations, the
 * Redis cache (a real redis-server) and failures, against the WooCommerce emulator over real HTTP.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../shops/secret.js';
import type { StoreOrder } from '../../domain/order.js';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';
import { startRedis, type TestRedis } from '../../../test/support/redis.js';
import { normaliseWooOrder } from './normalise.js';
import { createWooRest } from './rest.js';
import { WooApiError, type WooProductView, type WooRest } from './rest-types.js';
import { fillWooWeights, wooWeightToGrams, wooWeightToMilligrams, type WeightSource } from './weights.js';

const KG_SHOP = 'abidjan-tech';
const LBS_SHOP = 'lome-imports';
const OZ_SHOP = 'bamako-bijoux';
const READ_DENIED_SHOP = 'write-only';
const key = () => `ck_${randomBytes(16).toString('hex')}`;
const secret = () => `cs_${randomBytes(16).toString('hex')}`;
const shops = [
  { id: KG_SHOP, consumerKey: key(), consumerSecret: secret(), weightUnit: 'kg' as const },
  { id: LBS_SHOP, consumerKey: key(), consumerSecret: secret(), weightUnit: 'lbs' as const },
  { id: OZ_SHOP, consumerKey: key(), consumerSecret: secret(), weightUnit: 'oz' as const },
  { id: READ_DENIED_SHOP, consumerKey: key(), consumerSecret: secret(), permissions: 'write' as const },
];

let woo: WooEmulator;
let redis: TestRedis;
let client: Redis;
let prefix: string;

beforeAll(async () => {
  [woo, redis] = await Promise.all([startWooEmulator({ shops }), startRedis()]);
  client = redis.client();
  prefix = `{${redis.prefix}}`;
});
afterAll(async () => {
  await woo?.close();
  await redis?.stop();
});
afterEach(() => {
  woo.faults.clear();
});

function restFor(shopId: string): WooRest {
  const shop = shops.find((s) => s.id === shopId)!;
  return createWooRest({
    url: woo.siteUrl(shopId),
    consumerKey: new Secret(shop.consumerKey, 'test'),
    consumerSecret: new Secret(shop.consumerSecret, 'test'),
  });
}

/** An order placed in the emulated shop, as Relais normalises it (no weights yet). */
async function placeOrder(
  shopId: string,
  lines: { product_id: number; variation_id?: number; quantity: number }[],
): Promise<StoreOrder> {
  const json = await woo.createOrder(shopId, { line_items: lines });
  const result = normaliseWooOrder(json, {
    shopId,
    codGateways: ['cod'],
    depositGateways: [],
    businessAccountGateways: [],
  });
  if (!result.ok) throw new Error(`the test order did not normalise: ${result.hold.message}`);
  return result.order;
}

function fill(order: StoreOrder, rest: WeightSource = restFor(order.shopId)) {
  return fillWooWeights(order, { rest, redis: client, prefix, now: () => new Date() });
}

function productCalls(shopId: string) {
  return woo
    .calls()
    .filter(
      (c) => c.shopId === shopId && (c.route.startsWith('/wc/v3/products/') || c.route.startsWith('/wc/v3/settings/')),
    );
}

describe('converting WooCommerce weights to grams', () => {
  it('converts kg, g, lbs and oz exactly (a pound is 453.59237 g, an ounce 28.349523125 g)', () => {
    expect(wooWeightToGrams('0.8', 'kg')).toBe(800);
    expect(wooWeightToGrams('1.005', 'kg')).toBe(1005); // 1.005 * 1000 is 1004.9999999999999 in floating point
    expect(wooWeightToGrams('250', 'g')).toBe(250);
    expect(wooWeightToGrams('2', 'lbs')).toBe(907.185); // 907.18474 g, rounded up to the milligram
    expect(wooWeightToMilligrams('100', 'lbs')).toBe(45_359_237);
    expect(wooWeightToMilligrams('16', 'oz')).toBe(453_593); // 453 592.37 mg: sixteen ounces make a pound
    expect(wooWeightToGrams('1', 'oz')).toBe(28.35);
  });

  it('reads "", "0", garbage and negatives as no weight, and a stray decimal comma as a decimal point', () => {
    for (const weight of ['', '  ', '0', '0.000', '.', 'abc', '-1', '1e3', '1.2.3'])
      expect(wooWeightToGrams(weight, 'kg')).toBeUndefined();
    expect(wooWeightToGrams('1,5', 'kg')).toBe(1500);
    expect(wooWeightToGrams('.5', 'kg')).toBe(500);
  });

  it('refuses a unit WooCommerce does not define', () => {
    expect(() => wooWeightToGrams('1', 'stone')).toThrow(RangeError);
  });
});

describe('filling the weights of an order', () => {
  it("sums unit weight × quantity in the shop's unit and keeps each line's unit weight", async () => {
    const phone = await woo.createProduct(KG_SHOP, { name: 'Téléphone', weight: '0.45' });
    const speaker = await woo.createProduct(KG_SHOP, { name: 'Enceinte', weight: '1.2' });
    const order = await placeOrder(KG_SHOP, [
      { product_id: phone.id, quantity: 2 },
      { product_id: speaker.id, quantity: 1 },
    ]);
    expect(order.weightGrams).toBeUndefined();

    const filled = await fill(order);
    expect(filled.lineItems.map((l) => l.unitGrams)).toEqual([450, 1200]);
    expect(filled.weightGrams).toBe(2100);
  });

  it('converts pounds and ounces shops and rounds the parcel up to the gram', async () => {
    const rice = await woo.createProduct(LBS_SHOP, { name: 'Riz parfumé', weight: '2' });
    const lbsOrder = await fill(await placeOrder(LBS_SHOP, [{ product_id: rice.id, quantity: 3 }]));
    expect(lbsOrder.lineItems[0]?.unitGrams).toBe(907.185);
    expect(lbsOrder.weightGrams).toBe(2722); // 3 × 907.18474 g = 2721.55422 g

    const ring = await woo.createProduct(OZ_SHOP, { name: 'Bague', weight: '0.5' });
    const ozOrder = await fill(await placeOrder(OZ_SHOP, [{ product_id: ring.id, quantity: 1 }]));
    expect(ozOrder.weightGrams).toBe(15); // 14.1747615625 g
  });

  it("uses a variation's own weight when it has one", async () => {
    const shirt = await woo.createProduct(KG_SHOP, {
      name: 'Chemise',
      weight: '0.3',
      variations: [{ weight: '0.5', option: 'XXL' }],
    });
    const filled = await fill(
      await placeOrder(KG_SHOP, [{ product_id: shirt.id, variation_id: shirt.variationIds[0]!, quantity: 2 }]),
    );
    expect(filled.lineItems[0]?.unitGrams).toBe(500);
    expect(filled.weightGrams).toBe(1000);
  });

  it('falls back to the parent product\'s weight when a variation\'s is ""', async () => {
    // Core shows the parent's weight on the variation itself (and so does the emulator): this source answers
    // "" as a plugin or an edit context would, to prove the fallback.
    const products = new Map<string, WooProductView>([['501', { id: 501, weight: '0.75' }]]);
    const source: WeightSource = {
      getProduct: async (id) => products.get(id) ?? Promise.reject(new Error(`no product ${id}`)),
      getVariation: async (_product, variation) => ({ id: Number(variation), weight: '' }),
      getWeightUnit: async () => 'kg',
    };
    const order = await placeOrder(KG_SHOP, [
      { product_id: (await woo.createProduct(KG_SHOP, { name: 'x', weight: '9' })).id, quantity: 1 },
    ]);
    const asVariation: StoreOrder = {
      ...order,
      lineItems: [{ name: 'Pagne', productId: '501', variantId: '502', quantity: 2 }],
    };
    const filled = await fill(asVariation, source);
    expect(filled.lineItems[0]?.unitGrams).toBe(750);
    expect(filled.weightGrams).toBe(1500);
  });

  it('gives no weight at all (standard parcel) when any line has none, rather than under-declaring', async () => {
    const weighed = await woo.createProduct(KG_SHOP, { name: 'Ordinateur', weight: '2.1' });
    const unweighed = await woo.createProduct(KG_SHOP, { name: 'Sacoche', weight: '' });
    const filled = await fill(
      await placeOrder(KG_SHOP, [
        { product_id: weighed.id, quantity: 1 },
        { product_id: unweighed.id, quantity: 1 },
      ]),
    );
    expect(filled.weightGrams).toBeUndefined();
    expect(filled).not.toHaveProperty('weightGrams');
    expect(filled.lineItems[0]?.unitGrams).toBe(2100);
    expect(filled.lineItems[1]).not.toHaveProperty('unitGrams');
  });

  it('leaves virtual products out of the parcel instead of making its weight unknown', async () => {
    const source: WeightSource = {
      getProduct: async (id): Promise<WooProductView> =>
        id === '1' ? { id: 1, weight: '1.5' } : { id: 2, weight: '', virtual: true },
      getVariation: () => Promise.reject(new Error('no variations here')),
      getWeightUnit: async () => 'kg',
    };
    const order = await placeOrder(KG_SHOP, [
      { product_id: (await woo.createProduct(KG_SHOP, { name: 'y', weight: '1' })).id, quantity: 1 },
    ]);
    const mixed: StoreOrder = {
      ...order,
      shopId: 'virtual-shop',
      lineItems: [
        { name: 'Lampe', productId: '1', quantity: 2 },
        { name: 'Garantie', productId: '2', quantity: 1 },
      ],
    };
    expect((await fill(mixed, source)).weightGrams).toBe(3000);
  });
});

describe('the weight cache', () => {
  it('serves a second order of the same products from Redis: no second GET, not even the unit', async () => {
    const lamp = await woo.createProduct(KG_SHOP, { name: 'Lampe solaire', weight: '0.9' });
    const bare = await woo.createProduct(KG_SHOP, { name: 'Autocollant', weight: '' });
    const first = await placeOrder(KG_SHOP, [{ product_id: lamp.id, quantity: 1 }]);
    const before = productCalls(KG_SHOP).length;
    expect((await fill(first)).weightGrams).toBe(900);
    const afterFirst = productCalls(KG_SHOP).length;
    expect(afterFirst - before).toBe(2); // the product, then the unit

    const second = await placeOrder(KG_SHOP, [{ product_id: lamp.id, quantity: 3 }]);
    expect((await fill(second)).weightGrams).toBe(2700);
    expect(productCalls(KG_SHOP).length).toBe(afterFirst);

    // "No weight" is cached as well: a shop that never weighs its products costs one GET per product.
    const unweighed = await placeOrder(KG_SHOP, [{ product_id: bare.id, quantity: 1 }]);
    await fill(unweighed);
    const afterBare = productCalls(KG_SHOP).length;
    expect((await fill(unweighed)).weightGrams).toBeUndefined();
    expect(productCalls(KG_SHOP).length).toBe(afterBare);
    expect(await client.ttl(`${prefix}:woo-weight:v1:${KG_SHOP}:${lamp.id}:-`)).toBeGreaterThan(5 * 3600);
  });
});

describe('when the shop fails to answer', () => {
  it('throws a retryable error on 503 (the job retries later), and caches nothing', async () => {
    const fan = await woo.createProduct(KG_SHOP, { name: 'Ventilateur', weight: '3' });
    const order = await placeOrder(KG_SHOP, [{ product_id: fan.id, quantity: 1 }]);
    woo.faults.add({ kind: 'status', status: 503, route: `/products/${fan.id}` });
    const error: unknown = await fill(order).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WooApiError);
    expect(error).toMatchObject({ retryable: true, status: 503 });
    expect((await fill(order)).weightGrams).toBe(3000);
  });

  it('counts a deleted product as having no weight (and remembers it)', async () => {
    const kept = await woo.createProduct(KG_SHOP, { name: 'Chargeur', weight: '0.2' });
    const order = await placeOrder(KG_SHOP, [{ product_id: kept.id, quantity: 1 }]);
    const deleted: StoreOrder = {
      ...order,
      lineItems: [...order.lineItems, { name: 'Produit supprimé', productId: '987654', quantity: 1 }],
    };
    const filled = await fill(deleted);
    expect(filled.weightGrams).toBeUndefined();
    const calls = productCalls(KG_SHOP).length;
    await fill(deleted);
    expect(productCalls(KG_SHOP).length).toBe(calls);
  });

  it('counts a refused read (a write-only key) as no weight without caching it, so fixing the key works at once', async () => {
    const mug = await woo.createProduct(READ_DENIED_SHOP, { name: 'Tasse', weight: '0.3' });
    const order: StoreOrder = {
      ...(await placeOrder(KG_SHOP, [
        { product_id: (await woo.createProduct(KG_SHOP, { name: 'z', weight: '1' })).id, quantity: 1 },
      ])),
      shopId: READ_DENIED_SHOP,
      lineItems: [{ name: 'Tasse', productId: String(mug.id), quantity: 1 }],
    };
    expect((await fill(order)).weightGrams).toBeUndefined();
    const calls = productCalls(READ_DENIED_SHOP).length;
    await fill(order);
    expect(productCalls(READ_DENIED_SHOP).length).toBe(calls + 1);
  });
});
