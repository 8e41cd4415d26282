import { describe, expect, it } from 'vitest';
import { perFile } from '../../test/support/per-file.js';
import { startRedis } from '../../test/support/redis.js';
import { ShopRateLimited, ShopRateLimiter } from './rate-limit.js';

const redis = perFile(() => startRedis());

describe('per-shop dispatch call pacing', () => {
  it('lets a shop make its calls per second, then makes the next one wait for the next second', async () => {
    const limiter = new ShopRateLimiter(redis().client(), `{${redis().prefix}a}`, { maxWaitMs: 3_000 });
    const started = Date.now();
    const windows = new Set<number>();
    for (let i = 0; i < 6; i++) {
      await limiter.acquire('dakar-mode', 3);
      windows.add(Math.floor(Date.now() / 1000));
    }
    // Six calls at three per second cannot all fit in one second.
    expect(windows.size).toBeGreaterThanOrEqual(2);
    expect(Date.now() - started).toBeLessThan(3_500);
  });

  it('keeps shops apart: one shop at its limit does not slow another', async () => {
    // A frozen clock: both calls fall in the same one-second window whatever the real time.
    const limiter = new ShopRateLimiter(redis().client(), `{${redis().prefix}b}`, {
      maxWaitMs: 0,
      now: () => 1_800_000_000_500,
    });
    await limiter.acquire('busy-shop', 1);
    await expect(limiter.acquire('busy-shop', 1)).rejects.toBeInstanceOf(ShopRateLimited);
    await expect(limiter.acquire('quiet-shop', 1)).resolves.toBeUndefined();
  });

  it('gives up with a retryable error carrying when to retry, rather than holding a worker', async () => {
    const limiter = new ShopRateLimiter(redis().client(), `{${redis().prefix}c}`, {
      maxWaitMs: 0,
      now: () => 1_800_000_000_500,
    });
    await limiter.acquire('s', 1);
    const error = await limiter.acquire('s', 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShopRateLimited);
    expect((error as ShopRateLimited).retryable).toBe(true);
    expect((error as ShopRateLimited).retryAfterMs).toBeGreaterThan(0);
  });

  it('takes several calls at once, counted against the same window as single ones', async () => {
    const limiter = new ShopRateLimiter(redis().client(), `{${redis().prefix}d}`, {
      maxWaitMs: 0,
      now: () => 1_800_000_000_500,
    });
    await limiter.acquire('s', 5, 4);
    await limiter.acquire('s', 5);
    await expect(limiter.acquire('s', 5)).rejects.toBeInstanceOf(ShopRateLimited);
    await expect(limiter.acquire('t', 3, 4)).rejects.toBeInstanceOf(RangeError);
  });

  it('counts turns another command took (the order lock) in the same window, and gives back only into a window still there', async () => {
    let clock = 1_800_000_000_500;
    const client = redis().client();
    const limiter = new ShopRateLimiter(client, `{${redis().prefix}e}`, { maxWaitMs: 0, now: () => clock });
    const take = limiter.windowTake('s', 3);
    await client.incrby(take.key, take.calls); // what the order lock's acquisition does with it
    await client.expire(take.key, take.ttlSeconds);
    expect(limiter.mayUse('s', 5, { key: take.key, count: 3 })).toBe(true);
    expect(limiter.mayUse('s', 2, { key: take.key, count: 3 })).toBe(false);
    await limiter.acquire('s', 5, 2); // 5 of 5: the window is full
    await expect(limiter.acquire('s', 5)).rejects.toBeInstanceOf(ShopRateLimited);
    await limiter.giveBack(take);
    await expect(limiter.acquire('s', 5)).resolves.toBeUndefined();
    // A second later the turns are of a past window: not spent, and never given back into a window that is gone.
    clock += 1_000;
    expect(limiter.mayUse('s', 5, { key: take.key, count: 3 })).toBe(false);
    await client.del(take.key);
    await limiter.giveBack(take);
    expect(await client.exists(take.key)).toBe(0);
  });
});
