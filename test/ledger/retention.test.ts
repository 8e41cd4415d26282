/**
 * Retention and erasure (issue 13, item 8) against a real redis-server: shop/redact erases every record of the
 * shop however old and however many (20 000 here, half of them older than the shop index keeps), and nothing of
 * another shop; orders with no final state after N days are reported and can be closed; the retention of finished
 * orders comes from the environment. Orders are written through the ledger API, many at a time.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvError, readEnv } from '../../src/config/env.js';
import { ShopRegistry } from '../../src/config/shops.js';
import { handleCompliance } from '../../src/jobs/compliance.js';
import { createQueues, type RelaisQueues } from '../../src/jobs/queues.js';
import { OrderLedger } from '../../src/ledger/order-ledger.js';
import { silentLogger } from '../../src/log.js';
import { createRuntime } from '../../src/main/runtime.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { makeSecrets, registryDocument, secretEnv } from '../support/relais.js';

const DAY = 86_400_000;
const NOW = new Date('2026-11-25T12:00:00Z');

let redis: TestRedis;
let client: Redis;
beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

/** Records `count` orders of `shopId` through the ledger, `concurrency` at a time (ioredis sends them without waiting). */
async function seed(ledger: OrderLedger, shopId: string, count: number, firstSeen: (i: number) => Date, concurrency = 2_000): Promise<void> {
  for (let start = 0; start < count; start += concurrency) {
    const batch: Promise<unknown>[] = [];
    for (let i = start; i < Math.min(count, start + concurrency); i += 1) {
      const orderId = String(1_000_000 + i);
      const at = firstSeen(i);
      batch.push(
        ledger.recordEvent({
          meta: { externalOrderId: `${shopId}:${orderId}`, shopId, platform: 'shopify', orderId, orderName: `#${orderId}` },
          payload: { id: orderId, customer: { phone: '+221770000000' } },
          order: undefined,
          now: at,
          timeline: { at: at.toISOString(), system: 'shop', operation: 'webhook orders/create', outcome: 'received' },
        }),
      );
    }
    await Promise.all(batch);
  }
}

describe('shop/redact', () => {
  it('erases all 20 000 records of the shop, including those older than the 90-day index and past its 10 000 limit, and touches nothing of another shop', async () => {
    const prefix = `{${redis.prefix}redact}`;
    const ledger = new OrderLedger(client, prefix);
    const queues: RelaisQueues = createQueues(client, prefix);
    try {
      // Half the orders were first seen a year ago (out of the shop index once trimmed), half last week.
      await seed(ledger, 'dakar-mode', 20_000, (i) => new Date(NOW.getTime() - (i % 2 === 0 ? 365 : 7) * DAY));
      await seed(ledger, 'dakar-modes', 300, () => new Date(NOW.getTime() - 365 * DAY));
      await seed(ledger, 'abidjan-tech', 500, (i) => new Date(NOW.getTime() - (i % 2 === 0 ? 365 : 7) * DAY));
      // Some of the shop's orders are in the other indexes: held, finished (with an expiry), and in flight.
      await ledger.hold('dakar-mode:1000000', { code: 'neighbourhood_not_found', message: 'x' }, NOW);
      await ledger.setState('dakar-mode:1000001', 'delivered', NOW);
      await ledger.saveShipment('dakar-mode:1000003', { shipmentId: 'shp_1', status: 'CREATED', createdAt: NOW.toISOString() });
      await ledger.trimShopIndex('dakar-mode', NOW);
      expect(await ledger.listShopOrders('dakar-mode', { limit: 100_000 })).toHaveLength(10_000);

      const started = performance.now();
      const outcome = await handleCompliance('dakar-mode', 'shop/redact', { shop_id: 1, shop_domain: 'dakar-mode.myshopify.com' }, {
        ledger, shopEvents: queues.shopEvents, logger: silentLogger,
      });
      const ms = performance.now() - started;

      expect(outcome).toEqual({ kind: 'redacted', orders: 20_000, jobs: 0 });
      expect(await client.keys(`${prefix}:order:dakar-mode:*`)).toEqual([]);
      expect(await client.keys(`${prefix}:timeline:dakar-mode:*`)).toEqual([]);
      expect(await client.exists(`${prefix}:orders:dakar-mode`)).toBe(0);
      expect(await ledger.listHeld()).toEqual([]);
      expect(await ledger.listInFlight(10)).toEqual([]);
      expect(await ledger.countUnready(NOW)).toBe(0);
      // The other shops: every record, timeline and index entry as it was (a shop id that starts alike included).
      expect(await client.keys(`${prefix}:order:abidjan-tech:*`)).toHaveLength(500);
      expect(await client.keys(`${prefix}:timeline:abidjan-tech:*`)).toHaveLength(500);
      expect(await client.keys(`${prefix}:order:dakar-modes:*`)).toHaveLength(300);
      expect(await ledger.listShopOrders('abidjan-tech')).toHaveLength(500);
      expect(await ledger.payload('abidjan-tech:1000000')).toEqual({ id: '1000000', customer: { phone: '+221770000000' } });
      expect(ms).toBeLessThan(20_000);
    } finally {
      await Promise.all(queues.all().map((q) => q.close()));
    }
  });
});

describe('orders with no final state', () => {
  it('reports the orders without a final state first seen more than N days ago, even once out of the shop index, and not finished or recent ones', async () => {
    const ledger = new OrderLedger(client, `{${redis.prefix}stale}`);
    await seed(ledger, 'dakar-mode', 6, (i) => new Date(NOW.getTime() - (i < 4 ? 200 : 3) * DAY));
    await ledger.setState('dakar-mode:1000000', 'in_delivery', new Date(NOW.getTime() - 190 * DAY));
    await ledger.hold('dakar-mode:1000001', { code: 'neighbourhood_not_found', message: 'x' }, new Date(NOW.getTime() - 199 * DAY));
    await ledger.setState('dakar-mode:1000002', 'delivered', new Date(NOW.getTime() - 150 * DAY));
    await ledger.trimShopIndex('dakar-mode', NOW);

    const stale = await ledger.listStale(new Date(NOW.getTime() - 30 * DAY));
    expect(stale.map((s) => [s.externalOrderId, s.state, s.holdCode])).toEqual([
      ['dakar-mode:1000000', 'in_delivery', undefined],
      ['dakar-mode:1000001', 'held', 'neighbourhood_not_found'],
      ['dakar-mode:1000003', 'received', undefined],
    ]);
    expect(await ledger.listStale(new Date(NOW.getTime() - 30 * DAY), { shopId: 'abidjan-tech' })).toEqual([]);
  });

  it('closes a stale order as cancelled in Relais, out of the held index, expiring after the retention, with a timeline entry; refuses a recent or finished one', async () => {
    const ledger = new OrderLedger(client, `{${redis.prefix}close}`, { retentionDays: 45, timelineLength: 20 });
    await seed(ledger, 'dakar-mode', 3, (i) => new Date(NOW.getTime() - (i < 2 ? 200 : 3) * DAY));
    await ledger.hold('dakar-mode:1000000', { code: 'neighbourhood_not_found', message: 'x' }, new Date(NOW.getTime() - 199 * DAY));
    await ledger.setState('dakar-mode:1000001', 'delivered', NOW);
    const bound = new Date(NOW.getTime() - 30 * DAY);

    const closed = await ledger.closeStale('dakar-mode:1000000', { reason: 'customer unreachable', by: 'awa', now: NOW, firstSeenBefore: bound });
    expect(closed).toEqual({ ok: true, previousState: 'held' });
    expect((await ledger.get('dakar-mode:1000000'))?.state).toBe('cancelled');
    expect(await ledger.listHeld()).toEqual([]);
    const ttl = await client.ttl(`{${redis.prefix}close}:order:dakar-mode:1000000`);
    expect(ttl).toBeGreaterThan(45 * 86_400 - 60);
    expect(ttl).toBeLessThanOrEqual(45 * 86_400);
    expect((await ledger.timeline('dakar-mode:1000000')).at(-1)).toMatchObject({ operation: 'close', outcome: 'closed_by_operator', detail: expect.stringContaining('closed by awa from state held') });
    expect(await ledger.listStale(bound)).toEqual([]);

    expect(await ledger.closeStale('dakar-mode:1000001', { reason: 'r', by: 'awa', now: NOW, firstSeenBefore: bound })).toMatchObject({ ok: false, why: 'already_final' });
    expect(await ledger.closeStale('dakar-mode:1000002', { reason: 'r', by: 'awa', now: NOW, firstSeenBefore: bound })).toMatchObject({ ok: false, why: 'not_stale' });
    expect((await ledger.get('dakar-mode:1000002'))?.state).toBe('received');
  });
});

describe('retention from the environment', () => {
  it('reads RELAIS_RETENTION_DAYS and RELAIS_STALE_AFTER_DAYS, refuses a value that is not a whole positive number of days, and keeps a finished order that long', async () => {
    expect(readEnv({})).toMatchObject({ RELAIS_RETENTION_DAYS: 90, RELAIS_STALE_AFTER_DAYS: 30 });
    const env = readEnv({ RELAIS_RETENTION_DAYS: '7', RELAIS_STALE_AFTER_DAYS: '14' });
    expect(env).toMatchObject({ RELAIS_RETENTION_DAYS: 7, RELAIS_STALE_AFTER_DAYS: 14 });
    expect(() => readEnv({ RELAIS_RETENTION_DAYS: '0' })).toThrow(EnvError);
    expect(() => readEnv({ RELAIS_RETENTION_DAYS: '1.5' })).toThrow(/RELAIS_RETENTION_DAYS/);

    const prefix = `{${redis.prefix}env}`;
    const runtime = createRuntime({ redisUrl: redis.url, prefix, shops: new ShopRegistry([]), logger: silentLogger, retentionDays: env.RELAIS_RETENTION_DAYS });
    try {
      await seed(runtime.ledger, 'dakar-mode', 1, () => NOW);
      await runtime.ledger.setState('dakar-mode:1000000', 'delivered', NOW);
      const ttl = await client.ttl(`${prefix}:order:dakar-mode:1000000`);
      expect(ttl).toBeGreaterThan(7 * 86_400 - 60);
      expect(ttl).toBeLessThanOrEqual(7 * 86_400);
    } finally {
      await runtime.close();
    }
  });
});

describe('relais stale', () => {
  const run = promisify(execFile);
  it('lists a stale order from the command line, then closes it with --close and --reason', async () => {
    const secrets = makeSecrets();
    const registry = join(mkdtempSync(join(tmpdir(), 'relais-stale-')), 'shops.json');
    writeFileSync(registry, JSON.stringify(registryDocument({ dispatchBaseUrl: 'http://127.0.0.1:9' })));
    const prefix = `{${redis.prefix}cli}`;
    const env = { PATH: process.env.PATH ?? '', ...secretEnv(secrets), REDIS_URL: redis.url, RELAIS_REDIS_PREFIX: prefix, RELAIS_SHOPS_FILE: registry, LOG_LEVEL: 'silent', RELAIS_STALE_AFTER_DAYS: '20' };
    const cli = async (...args: string[]) => {
      try {
        return { ...(await run(join(process.cwd(), 'node_modules/.bin/tsx'), ['src/main/cli.ts', 'stale', ...args], { env, cwd: process.cwd() })), code: 0 };
      } catch (error) {
        const e = error as { stdout?: string; code?: number };
        return { stdout: e.stdout ?? '', code: e.code ?? 1 };
      }
    };
    const ledger = new OrderLedger(client, prefix);
    await seed(ledger, 'dakar-mode', 1, () => new Date(Date.now() - 25 * DAY));

    const listed = await cli();
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('dakar-mode:1000000  #1000000  received');
    expect(listed.stdout).toContain('1 order(s) with no final state after 20 days');
    expect((await cli('--days', '30')).stdout).toContain('No order without a final state for more than 30 days.');

    expect((await cli('--close', 'dakar-mode:1000000')).code).toBe(2);
    const closed = await cli('--close', 'dakar-mode:1000000', '--reason', 'never paid', '--by', 'awa');
    expect(closed).toMatchObject({ code: 0, stdout: expect.stringContaining('closed dakar-mode:1000000 (was received)') });
    expect((await ledger.get('dakar-mode:1000000'))?.state).toBe('cancelled');
  });
});
