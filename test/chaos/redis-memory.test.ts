/**
 * Redis at its memory limit (maxmemory with noeviction, as production should run it): writes are refused.
 * The web process answers 503 and stores nothing half-written (no event job, no de-duplication mark, no
 * ledger record for what it refused); once memory is freed the platform's retries are accepted. The limit
 * reached while the worker is busy costs nothing either.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { SeenEvents } from '../../src/http/seen-events.js';
import { waitFor } from '../support/relais.js';
import { startOwnedRedis, type OwnedRedis } from './support/processes.js';
import { expectNoAnomaly, scale, SCENARIO_TIMEOUT_MS, startChaosStack, type ChaosStack } from './support/stack.js';

let redis: OwnedRedis;
let stack: ChaosStack;
let ballast: Redis;

beforeAll(async () => {
  redis = await startOwnedRedis({
    args: ['--maxmemory', String(24 * 1024 * 1024), '--maxmemory-policy', 'noeviction'],
  });
  stack = await startChaosStack({ redis });
  ballast = new Redis(redis.url, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  ballast?.disconnect();
  await stack?.stop();
});

const ORDERS = scale(6, 30);
const BALLAST_VALUE = 'x'.repeat(64 * 1024);

const MAXMEMORY = 24 * 1024 * 1024;

/**
 * Fills Redis with ballast until it refuses a write (OOM), then lowers the limit a little under what is
 * used, so that a key expiring or a list trimmed meanwhile cannot bring it back under: it stays full
 * until freeMemory(). Returns how many ballast keys it took.
 */
async function fillMemory(): Promise<number> {
  for (let i = 0; ; i++) {
    try {
      await ballast.set(`chaos:ballast:${i}`, BALLAST_VALUE);
    } catch (error) {
      expect((error as Error).message).toMatch(/OOM/);
      const used = Number(/used_memory:(\d+)/.exec(await ballast.info('memory'))?.[1]);
      await ballast.config('SET', 'maxmemory', String(used - 2 * 1024 * 1024));
      return i;
    }
  }
}

async function freeMemory(keys: number): Promise<void> {
  for (let i = 0; i < keys; i += 100)
    await ballast.del(...Array.from({ length: Math.min(100, keys - i) }, (_, k) => `chaos:ballast:${i + k}`));
  await ballast.config('SET', 'maxmemory', String(MAXMEMORY));
}

describe('Redis at its memory limit', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  it(`refuses ${ORDERS} order webhooks with 503 and keeps no trace of them; accepts the retries once memory is freed`, async () => {
    // Warm up: queues, scripts and the ledger exist before the limit is hit.
    const warm = await stack.placeMany(2);
    await Promise.all(warm.map((o) => stack.send(o)));
    await stack.waitDispatched(warm);
    await stack.settle();
    const prefix = stack.relais.prefix;
    const markers = new SeenEvents(ballast, prefix);
    const seenBefore = await markers.count();
    const jobsBefore = await stack.queues.shopEvents.getJobCountByTypes(
      'completed',
      'waiting',
      'active',
      'delayed',
      'failed',
    );

    const keys = await fillMemory();
    const orders = await stack.placeMany(ORDERS);
    const refused = await Promise.all(orders.map((o) => stack.send(o, { untilAccepted: false })));
    expect(refused.flat().map((a) => a.status)).toEqual(orders.map(() => 503));
    // Nothing half-written: no de-duplication mark (a retry would be taken for a duplicate), no job, no record.
    expect(await markers.count()).toBe(seenBefore);
    expect(
      await stack.queues.shopEvents.getJobCountByTypes('completed', 'waiting', 'active', 'delayed', 'failed'),
    ).toBe(jobsBefore);
    for (const order of orders) expect(await stack.ledger.get(order.externalOrderId)).toBeUndefined();

    await freeMemory(keys);
    await Promise.all(orders.map((o) => stack.send(o)));
    await stack.waitDispatched(orders);
    await stack.driveCourier();
    const { report } = await stack.finish();
    expectNoAnomaly(report);
  });

  it(`reached while the worker is busy with ${ORDERS} orders, for two seconds: every order still ships once`, async () => {
    const orders = await stack.placeMany(ORDERS);
    // Slow calls keep the jobs in flight while memory runs out under them.
    stack.relais.emulator.faults.add({ operation: '*', times: ORDERS * 3, fault: { kind: 'latency', ms: 300 } });
    await Promise.all(orders.map((o) => stack.send(o)));
    // Orders are shipped by their webhooks' jobs.
    await waitFor(async () => (await stack.queues.shopEvents.getActiveCount()) > 0, { what: 'orders being shipped' });
    const keys = await fillMemory();
    await new Promise((r) => setTimeout(r, 2_000));
    await freeMemory(keys);
    // Not a vacuous pass: work in flight did run into the limit (and was retried).
    const jobs = [
      ...(await stack.queues.shopEvents.getJobs(['completed', 'active', 'waiting', 'delayed'])),
      ...(await stack.queues.dispatch.getJobs(['completed', 'active', 'waiting', 'delayed'])),
    ];
    expect(jobs.some((j) => /OOM|EXECABORT/.test(j.failedReason ?? ''))).toBe(true);
    stack.relais.emulator.faults.clear();
    await stack.waitDispatched(orders, { timeoutMs: 60_000 });
    await stack.driveCourier();
    const { report } = await stack.finish();
    expectNoAnomaly(report);
  });
});
