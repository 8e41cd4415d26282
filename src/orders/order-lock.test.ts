import { describe, expect, it } from 'vitest';
import { perFile } from '../../test/support/per-file.js';
import { startRedis } from '../../test/support/redis.js';
import { OrderLockLostError, withOrderLock } from './order-lock.js';

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
});
