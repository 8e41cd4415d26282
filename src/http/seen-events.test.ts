import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { perFile } from '../../test/support/per-file.js';
import { startRedis } from '../../test/support/redis.js';
import { DEDUPE_TTL_SECONDS, SeenEvents } from './seen-events.js';

const redis = perFile(() => startRedis());

describe('webhook de-duplication markers', () => {
  it("finds a shop's event once marked, and no other event or shop's", async () => {
    const seen = new SeenEvents(redis().client(), `{t${randomUUID().slice(0, 8)}}`);
    const event = randomUUID();
    expect(await seen.has('dakar-mode', event)).toBe(false);
    await seen.mark('dakar-mode', event);
    expect(await seen.has('dakar-mode', event)).toBe(true);
    expect(await seen.has('dakar-mode', randomUUID())).toBe(false);
    expect(await seen.has('abidjan-shop', event)).toBe(false);
    expect(await seen.count()).toBe(1);
  });

  it('remembers an event marked at any moment for at least 48 hours, and forgets it by its hash expiring', async () => {
    const prefix = `{t${randomUUID().slice(0, 8)}}`;
    const period = DEDUPE_TTL_SECONDS * 1000;
    // The current period, so the hashes' expiry instants are in the future for Redis, whose clock is real.
    const periodStart = Math.floor(Date.now() / period) * period;
    for (const markedAt of [periodStart + 1000, periodStart + period / 2, periodStart + period - 1000]) {
      let now = markedAt;
      const seen = new SeenEvents(redis().client(), prefix, () => now);
      const event = randomUUID();
      await seen.mark('dakar-mode', event);
      now = markedAt + period - 1000;
      expect(await seen.has('dakar-mode', event), `marked ${new Date(markedAt).toISOString()}`).toBe(true);
      // Forgotten by Redis itself: the hash holding it expires within a second window.
      const [key] = await seen.keys();
      const expiresAt = (await redis().client().expiretime(key!)) * 1000;
      expect(expiresAt).toBeGreaterThanOrEqual(markedAt + period);
      expect(expiresAt).toBeLessThanOrEqual(markedAt + 2 * period);
      // Two periods on, the lookup no longer reads the hash it was in.
      now = periodStart + 2 * period;
      expect(await seen.has('dakar-mode', event)).toBe(false);
      await redis()
        .client()
        .del(...(await seen.keys()));
    }
  });

  it("keeps a period's markers of one shop in a bounded number of small hashes, however many events arrive", async () => {
    const seen = new SeenEvents(redis().client(), `{t${randomUUID().slice(0, 8)}}`);
    const events = Array.from({ length: 20_000 }, () => randomUUID());
    for (let i = 0; i < events.length; i += 500)
      await Promise.all(events.slice(i, i + 500).map((event) => seen.mark('dakar-mode', event)));
    expect(await seen.count()).toBe(events.length);
    const keys = await seen.keys();
    expect(keys.length).toBeLessThanOrEqual(4096);
    // Each hash small enough for Redis's compact encoding.
    for (const key of keys.slice(0, 50)) expect(await redis().client().object('ENCODING', key)).toBe('listpack');
    expect(await seen.has('dakar-mode', events[12_345]!)).toBe(true);
  });
});

describe('webhook de-duplication markers on a Redis that forgot its scripts', () => {
  it('still marks and finds events after SCRIPT FLUSH (as after a restart)', async () => {
    // A private server: flushing the scripts of a shared one would touch other tests' queues.
    const own = await startRedis({ extraArgs: [] });
    try {
      const seen = new SeenEvents(own.client(), `{t${randomUUID().slice(0, 8)}}`);
      const event = randomUUID();
      await seen.mark('dakar-mode', event);
      await own.client().script('FLUSH');
      expect(await seen.has('dakar-mode', event)).toBe(true);
      await own.client().script('FLUSH');
      const later = randomUUID();
      await seen.mark('dakar-mode', later);
      expect(await seen.has('dakar-mode', later)).toBe(true);
    } finally {
      await own.stop();
    }
  });
});
