/**
 * Retention and erasure against the real PostgreSQL ledger: shop/redact erases every record of the shop however
 * old and however many (5 000 here, half of them a year old), with their timelines and claims, and nothing of
 * another shop; orders with no final state after N days are reported and can be closed; the retention of a
 * finished order's personal data comes from the environment. Orders are written through the ledger API.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvError, readEnv } from '../../src/config/env.js';
import { ShopRegistry } from '../../src/shops/shops.js';
import type { StoreOrder } from '../../src/domain/order.js';
import { handleCompliance } from '../../src/orders/intake/compliance.js';
import { createQueues, type RelaisQueues } from '../../src/orders/queues.js';
import type { OrderLedger } from '../../src/ledger/order-ledger.js';
import { PostgresOrderLedger } from '../../src/adapters/postgres/pg-ledger.js';
import { silentLogger } from '../../src/log.js';
import { createRuntime } from '../../src/main/runtime.js';
import { startTestDatabase, type TestDatabase } from '../support/postgres.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { makeSecrets, registryDocument, secretEnv } from '../support/relais.js';

const DAY = 86_400_000;
const NOW = new Date('2026-11-25T12:00:00Z');

let redis: TestRedis;
const databases: TestDatabase[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
  await Promise.all(databases.map((db) => db.stop()));
});

async function freshDatabase(): Promise<TestDatabase> {
  const db = await startTestDatabase();
  databases.push(db);
  return db;
}

async function count(pool: pg.Pool, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, params);
  return Number(rows[0]!.n);
}

/** Records `count` orders of `shopId` through the ledger, `concurrency` at a time. */
async function seed(
  ledger: OrderLedger,
  shopId: string,
  count: number,
  firstSeen: (i: number) => Date,
  concurrency = 8,
): Promise<void> {
  for (let start = 0; start < count; start += concurrency) {
    const batch: Promise<unknown>[] = [];
    for (let i = start; i < Math.min(count, start + concurrency); i += 1) {
      const orderId = String(1_000_000 + i);
      const at = firstSeen(i);
      batch.push(
        ledger.recordEvent({
          meta: {
            externalOrderId: `${shopId}:${orderId}`,
            shopId,
            platform: 'shopify',
            orderId,
            orderName: `#${orderId}`,
          },
          payload: { id: orderId, customer: { phone: '+221770000000' } },
          order: { orderName: `#${orderId}`, dropoff: { phone: '+221770000000' } } as unknown as StoreOrder,
          now: at,
          timeline: { at: at.toISOString(), system: 'shop', operation: 'webhook orders/create', outcome: 'received' },
        }),
      );
    }
    await Promise.all(batch);
  }
}

describe('shop/redact', () => {
  it('erases all 5 000 records of the shop however old, with their timelines, claims and holds, and touches nothing of another shop (one whose id starts alike included)', async () => {
    const db = await freshDatabase();
    const pool = db.pool();
    const ledger = new PostgresOrderLedger(pool);
    const queues: RelaisQueues = createQueues(redis.client(), `{${redis.prefix}redact}`);
    try {
      await seed(ledger, 'dakar-mode', 5_000, (i) => new Date(NOW.getTime() - (i % 2 === 0 ? 365 : 7) * DAY));
      await seed(ledger, 'dakar-modes', 300, () => new Date(NOW.getTime() - 365 * DAY));
      await seed(ledger, 'abidjan-tech', 500, (i) => new Date(NOW.getTime() - (i % 2 === 0 ? 365 : 7) * DAY));
      // Some of the shop's orders are held, finished, in flight, or have a claim.
      await ledger.hold('dakar-mode:1000000', { code: 'neighbourhood_not_found', message: 'x' }, NOW);
      await ledger.hold('abidjan-tech:1000000', { code: 'neighbourhood_not_found', message: 'x' }, NOW);
      expect(await count(pool, "order_holds WHERE shop_id = 'dakar-mode'")).toBe(1);
      await ledger.setState('dakar-mode:1000001', 'delivered', NOW);
      await ledger.saveShipment('dakar-mode:1000003', {
        shipmentId: 'shp_1',
        status: 'CREATED',
        createdAt: NOW.toISOString(),
      });
      await ledger.saveClaim('dakar-mode:1000001', { key: 'clm_1', claim: { reason: 'damaged' }, decided: false }, NOW);

      const outcome = await handleCompliance(
        'dakar-mode',
        'shop/redact',
        { shop_id: 1, shop_domain: 'dakar-mode.myshopify.com' },
        {
          ledger,
          shopEvents: queues.shopEvents,
          logger: silentLogger,
        },
      );

      expect(outcome).toEqual({ kind: 'redacted', orders: 5_000, jobs: 0 });
      expect(await count(pool, "orders WHERE shop_id = 'dakar-mode'")).toBe(0);
      expect(await count(pool, "order_timeline WHERE shop_id = 'dakar-mode'")).toBe(0);
      expect(await count(pool, "order_claims WHERE shop_id = 'dakar-mode'")).toBe(0);
      expect(await count(pool, "order_holds WHERE shop_id = 'dakar-mode'")).toBe(0);
      expect((await ledger.listHeld()).map((r) => r.meta.shopId)).toEqual(['abidjan-tech']);
      expect(await ledger.listInFlight(10)).toEqual([]);
      expect(await ledger.countUnready(NOW)).toBe(0);
      // The other shops: every record and timeline as it was.
      expect(await count(pool, "orders WHERE shop_id = 'abidjan-tech'")).toBe(500);
      expect(await count(pool, "order_holds WHERE shop_id = 'abidjan-tech'")).toBe(1);
      expect(await count(pool, "order_timeline WHERE shop_id = 'abidjan-tech'")).toBe(500);
      expect(await count(pool, "orders WHERE shop_id = 'dakar-modes'")).toBe(300);
      expect(await ledger.listShopOrders('abidjan-tech')).toHaveLength(500);
      expect(await ledger.payload('abidjan-tech:1000000')).toEqual({
        id: '1000000',
        customer: { phone: '+221770000000' },
      });
    } finally {
      await Promise.all(queues.all().map((q) => q.close()));
    }
  }, 180_000);
});

describe('orders with no final state', () => {
  it('reports the orders without a final state first seen more than N days ago, and not finished or recent ones', async () => {
    const ledger = new PostgresOrderLedger((await freshDatabase()).pool());
    await seed(ledger, 'dakar-mode', 6, (i) => new Date(NOW.getTime() - (i < 4 ? 200 : 3) * DAY));
    await ledger.setState('dakar-mode:1000000', 'in_delivery', new Date(NOW.getTime() - 190 * DAY));
    await ledger.hold(
      'dakar-mode:1000001',
      { code: 'neighbourhood_not_found', message: 'x' },
      new Date(NOW.getTime() - 199 * DAY),
    );
    await ledger.setState('dakar-mode:1000002', 'delivered', new Date(NOW.getTime() - 150 * DAY));

    const stale = await ledger.listStale(new Date(NOW.getTime() - 30 * DAY));
    expect(stale.map((s) => [s.externalOrderId, s.state, s.holdCode])).toEqual([
      ['dakar-mode:1000000', 'in_delivery', undefined],
      ['dakar-mode:1000001', 'held', 'neighbourhood_not_found'],
      ['dakar-mode:1000003', 'received', undefined],
    ]);
    expect(await ledger.listStale(new Date(NOW.getTime() - 30 * DAY), { shopId: 'abidjan-tech' })).toEqual([]);
  });

  it('closes a stale order as cancelled in Relais, off the held list, finished now (so its personal data goes after the retention), with a timeline entry; refuses a recent or finished one', async () => {
    const ledger = new PostgresOrderLedger((await freshDatabase()).pool(), { retentionDays: 45, timelineLength: 20 });
    await seed(ledger, 'dakar-mode', 3, (i) => new Date(NOW.getTime() - (i < 2 ? 200 : 3) * DAY));
    await ledger.hold(
      'dakar-mode:1000000',
      { code: 'neighbourhood_not_found', message: 'x' },
      new Date(NOW.getTime() - 199 * DAY),
    );
    await ledger.setState('dakar-mode:1000001', 'delivered', NOW);
    const bound = new Date(NOW.getTime() - 30 * DAY);

    const closed = await ledger.closeStale('dakar-mode:1000000', {
      reason: 'customer unreachable',
      by: 'awa',
      now: NOW,
      firstSeenBefore: bound,
    });
    expect(closed).toEqual({ ok: true, previousState: 'held' });
    expect((await ledger.get('dakar-mode:1000000'))?.state).toBe('cancelled');
    expect(await ledger.listHeld()).toEqual([]);
    // Retention 45 days: 44 days from now the closed order (and the one delivered now) keep their personal data; past 45, not.
    const finishedBefore = (daysFromNow: number) =>
      new Date(NOW.getTime() + daysFromNow * DAY - ledger.retentionDays * DAY);
    expect(await ledger.erasePersonalDataOfFinished(finishedBefore(44))).toBe(0);
    expect(await ledger.erasePersonalDataOfFinished(finishedBefore(45.01))).toBe(2);
    expect((await ledger.timeline('dakar-mode:1000000')).at(-1)).toMatchObject({
      operation: 'close',
      outcome: 'closed_by_operator',
      detail: expect.stringContaining('closed by awa from state held'),
    });
    expect(await ledger.listStale(bound)).toEqual([]);

    expect(
      await ledger.closeStale('dakar-mode:1000001', { reason: 'r', by: 'awa', now: NOW, firstSeenBefore: bound }),
    ).toMatchObject({ ok: false, why: 'already_final' });
    expect(
      await ledger.closeStale('dakar-mode:1000002', { reason: 'r', by: 'awa', now: NOW, firstSeenBefore: bound }),
    ).toMatchObject({ ok: false, why: 'not_stale' });
    expect((await ledger.get('dakar-mode:1000002'))?.state).toBe('received');
  });
});

describe('retention from the environment', () => {
  it("reads RELAIS_RETENTION_DAYS and RELAIS_STALE_AFTER_DAYS, refuses a value that is not a whole positive number of days, and keeps a finished order's personal data that long", async () => {
    expect(readEnv({})).toMatchObject({ RELAIS_RETENTION_DAYS: 90, RELAIS_STALE_AFTER_DAYS: 30 });
    const env = readEnv({ RELAIS_RETENTION_DAYS: '7', RELAIS_STALE_AFTER_DAYS: '14' });
    expect(env).toMatchObject({ RELAIS_RETENTION_DAYS: 7, RELAIS_STALE_AFTER_DAYS: 14 });
    expect(() => readEnv({ RELAIS_RETENTION_DAYS: '0' })).toThrow(EnvError);
    expect(() => readEnv({ RELAIS_RETENTION_DAYS: '1.5' })).toThrow(/RELAIS_RETENTION_DAYS/);

    const db = await freshDatabase();
    const runtime = createRuntime({
      redisUrl: redis.url,
      prefix: `{${redis.prefix}env}`,
      shops: new ShopRegistry([]),
      logger: silentLogger,
      retentionDays: env.RELAIS_RETENTION_DAYS,
      databaseUrl: db.url,
      databaseSchema: db.schema,
    });
    try {
      expect(runtime.ledger.retentionDays).toBe(7);
      await seed(runtime.ledger, 'dakar-mode', 1, () => NOW);
      await runtime.ledger.setState('dakar-mode:1000000', 'delivered', NOW);
      const bound = (days: number) => new Date(NOW.getTime() + days * DAY - runtime.ledger.retentionDays * DAY);
      expect(await runtime.ledger.erasePersonalDataOfFinished(bound(6))).toBe(0);
      expect((await runtime.ledger.get('dakar-mode:1000000'))?.order).toBeDefined();
      expect(await runtime.ledger.erasePersonalDataOfFinished(bound(7.01))).toBe(1);
      const erased = await runtime.ledger.get('dakar-mode:1000000');
      expect([erased?.state, erased?.order]).toEqual(['delivered', undefined]);
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
    const db = await freshDatabase();
    const env = {
      PATH: process.env.PATH ?? '',
      ...secretEnv(secrets),
      ...db.env,
      REDIS_URL: redis.url,
      RELAIS_REDIS_PREFIX: prefix,
      RELAIS_SHOPS_FILE: registry,
      LOG_LEVEL: 'silent',
      RELAIS_STALE_AFTER_DAYS: '20',
    };
    const cli = async (...args: string[]) => {
      try {
        return {
          ...(await run(join(process.cwd(), 'node_modules/.bin/tsx'), ['src/main/cli.ts', 'stale', ...args], {
            env,
            cwd: process.cwd(),
          })),
          code: 0,
        };
      } catch (error) {
        const e = error as { stdout?: string; stderr?: string; code?: number };
        return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: e.code ?? 1 };
      }
    };
    const ledger = new PostgresOrderLedger(db.pool());
    await seed(ledger, 'dakar-mode', 1, () => new Date(Date.now() - 25 * DAY));

    const listed = await cli();
    // With its stderr: a full run once saw exit 1 here that a lone run never shows.
    expect({ code: listed.code, stderr: 'stderr' in listed ? listed.stderr : '' }).toEqual({ code: 0, stderr: '' });
    expect(listed.stdout).toContain('dakar-mode:1000000  #1000000  received');
    expect(listed.stdout).toContain('1 order(s) with no final state after 20 days');
    expect((await cli('--days', '30')).stdout).toContain('No order without a final state for more than 30 days.');

    expect((await cli('--close', 'dakar-mode:1000000')).code).toBe(2);
    const closed = await cli('--close', 'dakar-mode:1000000', '--reason', 'never paid', '--by', 'awa');
    expect(closed).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('closed dakar-mode:1000000 (was received)'),
    });
    expect((await ledger.get('dakar-mode:1000000'))?.state).toBe('cancelled');
  }, 120_000);
});
