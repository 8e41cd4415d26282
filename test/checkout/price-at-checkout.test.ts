/**
 * The pieces under the checkout endpoints: weight bands, signatures, the single flight, and priceAtCheckout when
 * Redis is gone (a real ioredis client aimed at a port nobody listens on; the dispatch emulator answers prices).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { priceAtCheckout, type CheckoutPrice, type CheckoutRatesDeps } from '../../src/checkout/checkout-rates.js';
import { CodFeeMemory } from '../../src/checkout/cod-fee.js';
import { DispatchPriceSource } from '../../src/checkout/price-source.js';
import { RateCache, SingleFlight } from '../../src/checkout/rate-cache.js';
import { ResolutionMemo } from '../../src/checkout/resolution-memo.js';
import { checkBodySignature, signBody } from '../../src/shops/platforms/checkout-signature.js';
import { weightBand } from '../../src/checkout/weight.js';
import { buildShopRegistry, type ShopConfig } from '../../src/shops/shops.js';
import { startDispatchEmulator, type DispatchEmulator } from '@relais/emulators/dispatch';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { TariffMemory } from '../../src/orders/dispatch/tariff-guard.js';
import { createPool } from '../../src/adapters/postgres/database.js';
import { PostgresAliasStore } from '../../src/adapters/postgres/pg-aliases.js';
import { silentLogger } from '../../src/log.js';
import { freePort } from '../support/redis.js';
import { makeSecrets, registryDocument, secretEnv, SHOPIFY_SHOP_ID } from '../support/relais.js';

describe('weight bands', () => {
  it('prices a basket at the upper bound of its band, so a cached price is never below the firm quote', () => {
    expect(weightBand(0)).toEqual({ key: 'std' });
    expect(weightBand(1)).toEqual({ key: 'le0.5', priceAtKg: 0.5 });
    expect(weightBand(1000)).toEqual({ key: 'le1', priceAtKg: 1 });
    expect(weightBand(1001)).toEqual({ key: 'le2', priceAtKg: 2 });
    expect(weightBand(50_000)).toEqual({ key: 'le50', priceAtKg: 50 });
    expect(weightBand(50_001)).toEqual({ key: 'kg51', priceAtKg: 51 });
    expect(() => weightBand(-1)).toThrow(RangeError);
  });
});

describe('body signatures', () => {
  const secret = 'a-secret-generated-for-this-test';
  const body = Buffer.from('{"rate":{}}');

  it('accepts the base64 HMAC-SHA256 of the exact bytes and nothing else', () => {
    expect(checkBodySignature(body, signBody(body, secret), secret)).toEqual({ ok: true });
    expect(checkBodySignature(Buffer.from('{"rate": {}}'), signBody(body, secret), secret)).toEqual({
      ok: false,
      reason: 'invalid_signature',
    });
    expect(checkBodySignature(body, signBody(body, secret).slice(0, 20), secret)).toEqual({
      ok: false,
      reason: 'invalid_signature',
    });
    expect(checkBodySignature(body, 'not base64!', secret)).toEqual({ ok: false, reason: 'invalid_signature' });
    expect(checkBodySignature(body, undefined, secret)).toEqual({ ok: false, reason: 'missing_signature' });
  });
});

describe('single flight', () => {
  it('shares one running call between callers of the same key, and starts afresh once it ended', async () => {
    const flights = new SingleFlight<number>();
    let calls = 0;
    const work = () => new Promise<number>((resolve) => setTimeout(() => resolve(++calls), 20));
    const together = await Promise.all([flights.run('k', work), flights.run('k', work), flights.run('other', work)]);
    expect(together.slice(0, 2)).toEqual([together[0], together[0]]);
    expect(calls).toBe(2);
    expect(flights.size).toBe(0);
    await flights.run('k', work);
    expect(calls).toBe(3);
  });
});

describe('resolution memo', () => {
  it('answers a repeated address without resolving it again, sees a new alias at once, and stays bounded', () => {
    const resolver = NeighbourhoodResolver.load();
    let resolved = 0;
    const counting = {
      resolve: (input: Parameters<typeof resolver.resolve>[0]) => (resolved++, resolver.resolve(input)),
    };
    const memo = new ResolutionMemo(counting, 2);
    const address = { country: 'SN', fields: { address1: '3 rue Carnot', city: 'Dakar' } };
    expect(memo.resolve(address).ok).toBe(false);
    expect(memo.resolve(address).ok).toBe(false);
    expect(resolved).toBe(1);
    const aliased = memo.resolve({ ...address, aliases: { 'rue Carnot': 'Point E' } });
    expect(aliased.ok && aliased.neighbourhood.name).toBe('Point E');
    expect(resolved).toBe(2);
    memo.resolve({ country: 'SN', fields: { address1: 'Villa 5, Almadies' } });
    expect(memo.size).toBe(2);
    memo.resolve(address); // the oldest entry was dropped: resolved again
    expect(resolved).toBe(4);
  });
});

describe('priceAtCheckout without Redis', () => {
  let emulator: DispatchEmulator;
  let redis: Redis;
  let unreachableDatabase: ReturnType<typeof createPool>;
  let prices: DispatchPriceSource;
  let shop: ShopConfig;

  beforeAll(async () => {
    const secrets = makeSecrets();
    emulator = await startDispatchEmulator({
      organisations: [{ id: 'org', name: 'org', apiKeys: [secrets.dispatchApiKey] }],
    });
    const env = secretEnv(secrets);
    const registry = buildShopRegistry(registryDocument({ dispatchBaseUrl: emulator.baseUrl }), (ref) =>
      'env' in ref ? env[ref.env] : undefined,
    );
    shop = registry.get(SHOPIFY_SHOP_ID)!;
    // The web process's settings: fail fast rather than queue commands while Redis is away.
    redis = new Redis(`redis://127.0.0.1:${String(await freePort())}`, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    // The run-time aliases' database is away too: nothing listens on its port.
    unreachableDatabase = createPool({ url: `postgres://relais@127.0.0.1:${String(await freePort())}/relais` });
    prices = new DispatchPriceSource(silentLogger);
  });
  afterAll(async () => {
    await prices?.close();
    redis?.disconnect();
    await unreachableDatabase?.end();
    await emulator?.close();
  });

  it("still gives the live price, within the budget, when neither Redis nor the aliases' database can answer", async () => {
    const deps: CheckoutRatesDeps = {
      resolver: NeighbourhoodResolver.load(),
      aliases: new PostgresAliasStore(unreachableDatabase),
      cache: new RateCache(redis, '{t}'),
      prices,
      flights: new SingleFlight<CheckoutPrice>(),
      tariffs: new TariffMemory(redis, '{t}'),
      fees: new CodFeeMemory(redis, '{t}'),
      logger: silentLogger,
    };
    const started = performance.now();
    const outcome = await priceAtCheckout(
      shop,
      { destination: { country: 'SN', fields: { address1: 'Villa 5, Almadies', city: 'Dakar' } }, weightGrams: 2000 },
      deps,
    );
    // 2 300 simulated + the 500 collection fee, learned from two quotes since Redis cannot give it.
    expect(outcome).toEqual({ kind: 'rate', basis: 'live', amountXof: 2800, neighbourhood: 'Almadies' });
    expect(performance.now() - started).toBeLessThan(shop.policy.checkoutRates.budgetMs);
  });
});
