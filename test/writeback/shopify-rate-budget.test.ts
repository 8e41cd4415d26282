/**
 * Two workers and a reconciliation run calling one Shopify shop in a burst, against the Shopify emulator's real
 * leaky bucket (cost computed from each document, THROTTLED when it is empty). With the shop's rate budget shared
 * in Redis they wait their turn and Shopify never has to throttle them; without it, the same burst is throttled.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { Secret } from '../../src/shops/secret.js';
import { createLogger } from '../../src/log.js';
import { ShopifyAdminClient } from '../../src/adapters/shopify/admin.js';
import { ShopifyOrderLister } from '../../src/adapters/shopify/orders.js';
import { RedisShopRateBudget } from '../../src/adapters/shopify/rate-budget.js';
import { startRedis, type TestRedis } from '../support/redis.js';

const SHOP = 'dakar-mode.myshopify.com';
const accessToken = `shpat_${randomBytes(16).toString('hex')}`;
const clientSecret = randomBytes(32).toString('hex');
const logger = createLogger({ level: 'silent' });
/**
 * A bucket the burst empties: each read asks 620 points up front and costs 9, the listing asks 882, so after some
 * forty reads a call must wait for the refill (50 points a second).
 */
const THROTTLE = { maximumAvailable: 1_000, restoreRate: 50 };

let redis: TestRedis;
let emulator: ShopifyEmulator;
let orderIds: string[];

beforeAll(async () => {
  redis = await startRedis();
  emulator = await startShopifyEmulator({ shops: [{ domain: SHOP, accessToken, clientSecret }], throttle: THROTTLE });
  orderIds = Array.from({ length: 30 }, () => emulator.createOrder(SHOP, {}, { webhooks: false }).admin_graphql_api_id);
});
afterAll(async () => {
  await emulator?.close();
  await redis?.stop();
});

/** A worker's Admin client; with `sharedPrefix`, it takes from the shop's budget in Redis under that prefix. */
function workerClient(sharedPrefix: string | undefined, waits: number[]): ShopifyAdminClient {
  return new ShopifyAdminClient({
    domain: SHOP,
    accessToken: new Secret(accessToken, 'test'),
    clientSecret: new Secret(clientSecret, 'test'),
    adminUrl: emulator.adminUrl(SHOP),
    logger,
    maxAttempts: 8,
    maxWaitMs: 5_000,
    ...(sharedPrefix === undefined
      ? {}
      : {
          budget: new RedisShopRateBudget(redis.client(), sharedPrefix, SHOP, logger),
          onBudgetWait: (ms: number) => waits.push(ms),
        }),
  });
}

/** Two workers each reading every order while reconciliation lists the shop; answers the emulator's outcomes. */
async function burst(sharedPrefix: string | undefined) {
  const before = emulator.graphqlCalls().length;
  const waits: number[] = [];
  const workers = [workerClient(sharedPrefix, waits), workerClient(sharedPrefix, waits)];
  const reconciliation = new ShopifyOrderLister(workerClient(sharedPrefix, waits));
  const reads = workers.flatMap((worker) => orderIds.map((id) => worker.orderState(id)));
  const listing = reconciliation.page({ updatedSince: new Date(Date.now() - 3_600_000) });
  const settled = await Promise.allSettled([...reads, listing]);
  const calls = emulator.graphqlCalls().slice(before);
  return {
    failed: settled.filter((s) => s.status === 'rejected').length,
    throttled: calls.filter((c) => c.outcome === 'throttled').length,
    listed: settled.at(-1)?.status === 'fulfilled',
    waits,
  };
}

describe('one Shopify rate budget per shop, shared by every worker in Redis', () => {
  it(
    'a burst from two workers and a reconciliation listing is never throttled by Shopify, and every call succeeds',
    { timeout: 60_000 },
    async () => {
      const outcome = await burst(`${redis.prefix}:shared`);
      expect(outcome.throttled).toBe(0);
      expect(outcome.failed).toBe(0);
      expect(outcome.listed).toBe(true);
      expect(outcome.waits.length).toBeGreaterThan(0); // they did wait for the bucket, rather than being lucky
    },
  );

  it(
    'the same burst without the shared budget is throttled by Shopify (what the budget prevents)',
    { timeout: 60_000 },
    async () => {
      // The same starting point as the first burst: a full bucket.
      while (emulator.throttleStatus(SHOP).currentlyAvailable < THROTTLE.maximumAvailable) {
        await new Promise((r) => setTimeout(r, 200));
      }
      const outcome = await burst(undefined);
      expect(outcome.throttled).toBeGreaterThan(0);
    },
  );
});
