/**
 * Redis keeps queues, locks, de-duplication markers, rate limits and caches only: after orders are delivered, no
 * key holds an order's record, every key outside BullMQ's own bounded queue structures either expires or belongs
 * to a small fixed set, and delivering three times as many orders adds no key that does not expire.
 * A real Relais (web process and worker) over real HTTP, a real Redis, the PostgreSQL ledger and the emulators.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE } from '../../src/orders/queues.js';
import { expectNoAnomaly, startChaosStack, type ChaosStack } from '../chaos/support/stack.js';

let stack: ChaosStack;
let redis: Redis;
beforeAll(async () => {
  stack = await startChaosStack();
  redis = stack.relais.redis.client();
});
afterAll(async () => {
  await stack?.stop();
});

interface Footprint {
  /** Keys with no expiry outside BullMQ's queue structures, by the segment after the prefix. */
  lasting: Map<string, string[]>;
  /** How many keys mention an order id (its shop order id or external id) and never expire. */
  lastingAboutOrders: number;
  keys: number;
}

/** BullMQ's own keys for a queue: `<prefix>:<queue>:...`; bounded by its removeOnComplete / removeOnFail counts. */
const QUEUE_NAMES = new Set<string>(Object.values(QUEUE));

async function footprint(orderIds: readonly string[]): Promise<Footprint> {
  const prefix = stack.relais.prefix;
  const lasting = new Map<string, string[]>();
  let lastingAboutOrders = 0;
  let keys = 0;
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of batch) {
      keys += 1;
      const rest = key.slice(prefix.length + 1);
      const family = rest.split(':')[0]!;
      if (QUEUE_NAMES.has(family)) continue;
      if ((await redis.pttl(key)) > 0) continue;
      lasting.set(family, [...(lasting.get(family) ?? []), rest]);
      if (orderIds.some((id) => rest.includes(id))) lastingAboutOrders += 1;
    }
  } while (cursor !== '0');
  return { lasting, lastingAboutOrders, keys };
}

describe('what finished orders leave in Redis', () => {
  it('no key without an expiry names a finished (delivered or returned) order, and three times as many orders add no such key', async () => {
    const ids: string[] = [];
    const deliver = async (count: number) => {
      const orders = await stack.placeMany(count);
      for (const order of orders) ids.push(order.externalOrderId, order.externalOrderId.split(':')[1]!);
      await Promise.all(orders.map((o) => stack.send(o)));
      await stack.waitDispatched(orders, { timeoutMs: 60_000 });
      await stack.driveCourier();
      await stack.settle();
      for (const order of orders)
        expect(['delivered', 'returned']).toContain((await stack.ledger.get(order.externalOrderId))?.state);
    };

    await deliver(6);
    const after6 = await footprint(ids);
    await deliver(18);
    const after24 = await footprint(ids);
    const { report } = await stack.finish();
    expectNoAnomaly(report);

    expect(after24.lastingAboutOrders).toBe(0);
    // The lasting keys are a fixed set (per-shop and per-service memories, the reconciliation summary): the
    // same families, and no more keys in them, after 24 orders as after 6.
    const summary = (f: Footprint) => [...f.lasting].map(([family, keys]) => `${family}: ${keys.length}`).sort();
    expect(summary(after24)).toEqual(summary(after6));
    expect([...after24.lasting.values()].flat().length).toBeLessThanOrEqual(20);
  }, 180_000);
});
