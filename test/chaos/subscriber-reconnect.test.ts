/**
 * The shop-changes subscriber (every web and worker process has one: src/main/runtime.ts) across reconnections. It
 * was ioredis's own resubscription (autoResubscribe), whose SUBSCRIBE has no handler: a process closing while that
 * SUBSCRIBE was unanswered (shutting down while Redis flapped) got its "Connection is closed." as an unhandled
 * rejection, which ends a Node process and fails a test run (seen once, from the dashboard's dependencies-away test).
 * Now Relais subscribes again itself on each reconnection, its failure handled (`subscribeKept`, src/redis.ts).
 * A real redis-server behind the TCP fault proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, subscribeKept, type RedisClient } from '../../src/redis.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/relais.js';
import { startFaultProxy, type FaultProxy } from './support/tcp-proxy.js';

let redis: TestRedis;
let proxy: FaultProxy;

beforeAll(async () => {
  redis = await startRedis();
  proxy = await startFaultProxy({ targetPort: redis.port });
});

afterAll(async () => {
  await proxy?.close();
  await redis?.stop();
});

/** A subscriber as the runtime makes it, following `channel`; what it heard and the failures it was told of. */
async function follow(channel: string) {
  const heard: string[] = [];
  const failures: string[] = [];
  const subscriber: RedisClient = connectRedis(
    { redisUrl: proxy.url() },
    { maxRetriesPerRequest: null, autoResubscribe: false },
  );
  subscriber.on('error', () => undefined);
  subscriber.on('message', (_from: string, message: string) => heard.push(message));
  await subscribeKept(subscriber, channel, (error) => failures.push(error.message));
  return { subscriber, heard, failures };
}

/** Resets the subscriber's connection and waits until it has lost it. */
async function resetConnection(subscriber: RedisClient): Promise<void> {
  proxy.set({ kind: 'reset' });
  await waitFor(async () => subscriber.status !== 'ready', { what: 'the subscriber to lose its connection' });
}

describe('the shop-changes subscriber across reconnections', () => {
  it('hears the channel again once its connection comes back', async () => {
    const channel = `${redis.prefix}:changed-a`;
    const publisher = redis.client();
    const { subscriber, heard } = await follow(channel);
    try {
      await publisher.publish(channel, 'before');
      await waitFor(async () => heard.includes('before'), { what: 'the first announcement' });
      await resetConnection(subscriber);
      proxy.set({ kind: 'pass' });
      await waitFor(
        async () => {
          await publisher.publish(channel, 'after');
          return heard.includes('after');
        },
        { what: 'an announcement heard after the reconnection' },
      );
    } finally {
      proxy.set({ kind: 'pass' });
      subscriber.disconnect();
      publisher.disconnect();
    }
  });

  it('closed while its SUBSCRIBE after a reconnection is unanswered, it is told of the failure and leaves no unhandled rejection', async () => {
    const channel = `${redis.prefix}:changed-b`;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const { subscriber, failures } = await follow(channel);
    try {
      await resetConnection(subscriber);
      // The reconnection's SUBSCRIBE reaches Redis; its answer is swallowed.
      proxy.set({ kind: 'cut_on', pattern: 'subscribe', cut: 'reply' });
      await waitFor(async () => proxy.cuts() > 0, { what: 'the SUBSCRIBE of the reconnection' });
      // The process closes its connection (shutting down) with that SUBSCRIBE unanswered.
      subscriber.disconnect();
      await waitFor(async () => failures.length > 0, { what: 'the unanswered SUBSCRIBE to fail' });
      // An unhandled rejection is reported on a later turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(failures).toEqual(['Connection is closed.']);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      proxy.set({ kind: 'pass' });
      subscriber.disconnect();
    }
  });
});
