import { describe, expect, it } from 'vitest';
import { perFile } from '../../test/support/per-file.js';
import { rejectionOf } from '../../test/support/rejection.js';
import { startRedis } from '../../test/support/redis.js';
import { OrderBusyError, OrderLockLostError, withOrderLock } from './order-lock.js';

const redis = perFile(() => startRedis());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the order lock', () => {
  it("marks its lease lost when a timed renewal finds the key taken by another holder, refuses to confirm it, and leaves the other holder's key alone", async () => {
    const client = redis().client();
    const prefix = `{${redis().prefix}a}`;
    const key = `${prefix}:lock:order:dakar-mode:1`;
    const seen = await withOrderLock(
      client,
      prefix,
      'dakar-mode:1',
      async (lock) => {
        const before = lock.stillHeld();
        await client.set(key, 'another-holder', 'PX', 60_000);
        await sleep(250); // two timed renewals at a 300 ms TTL
        const after = lock.stillHeld();
        const confirmed = await lock.confirm('createShipment').then(
          () => 'confirmed',
          (error: unknown) => error,
        );
        return { before, after, confirmed };
      },
      { ttlMs: 300 },
    );
    expect(seen.before).toBe(true);
    expect(seen.after).toBe(false);
    expect(seen.confirmed).toBeInstanceOf(OrderLockLostError);
    expect((seen.confirmed as Error).message).toContain('stopped before createShipment');
    expect(await client.get(key)).toBe('another-holder');
  });

  it('confirms a lease still held by renewing it, so a holder busy longer than the TTL keeps the order', async () => {
    const client = redis().client();
    const prefix = `{${redis().prefix}b}`;
    const key = `${prefix}:lock:order:dakar-mode:2`;
    await withOrderLock(
      client,
      prefix,
      'dakar-mode:2',
      async (lock) => {
        await sleep(700); // more than twice the TTL: kept by the timed renewals
        await lock.confirm('markReady');
        expect(lock.stillHeld()).toBe(true);
        expect(await client.pttl(key)).toBeGreaterThan(200);
      },
      { ttlMs: 300 },
    );
    expect(await client.exists(key)).toBe(0);
  });

  it('confirms a repeatable side effect just after the key answered without a command to Redis, any other with a renewal that sees a takeover', async () => {
    const client = redis().client();
    const prefix = `{${redis().prefix}c}`;
    const key = `${prefix}:lock:order:dakar-mode:3`;
    // What reaches the server about this order's key, whichever connection sends it.
    const monitor = await client.duplicate().monitor();
    const sent: string[] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua' && args.includes(key)) sent.push(String(args[0]).toLowerCase());
    });
    const seen = await withOrderLock(
      client,
      prefix,
      'dakar-mode:3',
      async (lock) => {
        await lock.confirm('createShipment'); // a renewal, however recent the acquisition
        await lock.confirm('markReady', { repeatable: true }); // just renewed: the key lives its whole TTL from now
        await sleep(50); // the monitor's connection hears of the commands a moment after they ran
        const quick = [...sent];
        // Taken over at once: a side effect that is not repeatable sees it, however recent the last renewal.
        await client.set(key, 'another-holder', 'PX', 60_000);
        const notRepeatable = await lock.confirm('cancelShipment').then(
          () => 'confirmed',
          (error: unknown) => error,
        );
        return { quick, notRepeatable };
      },
      { ttlMs: 3_000 },
    );
    const late = await withOrderLock(
      client,
      prefix,
      'dakar-mode:4',
      async (lock) => {
        await sleep(400); // past RECENTLY_CONFIRMED_MS (250 ms at this TTL), before the first timed renewal
        await client.set(`${prefix}:lock:order:dakar-mode:4`, 'another-holder', 'PX', 60_000);
        return lock.confirm('markReady', { repeatable: true }).then(
          () => 'confirmed',
          (error: unknown) => error,
        );
      },
      { ttlMs: 3_000 },
    );
    await sleep(50);
    monitor.disconnect();
    expect(seen.quick).toEqual(['set', 'evalsha']);
    expect(seen.notRepeatable).toBeInstanceOf(OrderLockLostError);
    expect(late).toBeInstanceOf(OrderLockLostError);
    expect(await client.get(key)).toBe('another-holder');
  });

  it("takes a counter's turns in the same command as the lock, hands them out once, and gives back those nobody spent", async () => {
    const client = redis().client();
    const prefix = `{${redis().prefix}e}`;
    const counter = `${prefix}:rate:dakar-mode:1`;
    const take = () => ({ key: counter, calls: 3, ttlSeconds: 2 });
    const given: number[] = [];
    const giveBack = async (turns: { key: string; calls: number }) => {
      given.push(turns.calls);
      await client.decrby(turns.key, turns.calls);
    };
    const spent = await withOrderLock(
      client,
      prefix,
      'dakar-mode:5',
      async (lock) => {
        const first = lock.takenTurns();
        return { first, second: lock.takenTurns(), count: await client.get(counter) };
      },
      { take, giveBack },
    );
    expect(spent.first).toMatchObject({ key: counter, calls: 3, count: 3 });
    expect(spent.second).toBeUndefined();
    expect(spent.count).toBe('3');
    expect(given).toEqual([]);
    // The next holder spends nothing: its turns go back before the lock is released.
    await withOrderLock(client, prefix, 'dakar-mode:5', async () => undefined, { take, giveBack });
    expect(given).toEqual([3]);
    expect(await client.get(counter)).toBe('3');
    expect(await client.ttl(counter)).toBeGreaterThan(0);
    // Not taken when the lock is not: another holder has the order.
    await client.set(`${prefix}:lock:order:dakar-mode:6`, 'another-holder', 'PX', 60_000);
    await rejectionOf(
      withOrderLock(client, prefix, 'dakar-mode:6', async () => 'ran', { take, waitMs: 0 }),
      OrderBusyError,
    );
    expect(await client.get(counter)).toBe('3');
  });
});
