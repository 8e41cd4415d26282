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

describe('webhook de-duplication markers batched per turn of the event loop', () => {
  it("finds a repeat looked up in the same turn as its original's mark, however many the turn holds", async () => {
    const seen = new SeenEvents(redis().client(), `{t${randomUUID().slice(0, 8)}}`);
    // More than one command's worth (256 lookups and marks), each repeat asked for before its original is marked,
    // and the marks in the opposite order: a lookup and its mark would fall in different commands.
    const events = Array.from({ length: 300 }, () => randomUUID());
    const [found, , other] = await Promise.all([
      Promise.all(events.map((event) => seen.has('dakar-mode', event))),
      Promise.all([...events].reverse().map((event) => seen.mark('dakar-mode', event))),
      seen.has('dakar-mode', randomUUID()),
    ]);
    expect(found).toEqual(events.map(() => true));
    expect(other).toBe(false);
  });

  it("sends one turn's lookups and marks as one command per shop slot", async () => {
    // A private server, so its command counts are this test's own.
    const own = await startRedis({ extraArgs: [] });
    const client = own.client();
    const scriptCalls = async () => {
      const stats = await client.info('commandstats');
      return ['evalsha', 'eval']
        .map((name) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0))
        .reduce((a, b) => a + b);
    };
    try {
      for (const [prefix, slots] of [
        [`{t${randomUUID().slice(0, 8)}}`, 1], // a prefix with a hash tag: every shop's markers in its slot
        [`t${randomUUID().slice(0, 8)}`, 2], // without: each shop's in its own
      ] as const) {
        const seen = new SeenEvents(client, prefix);
        const events = Array.from({ length: 50 }, () => randomUUID());
        await seen.mark('dakar-mode', 'warm-up'); // the script loaded
        const before = await scriptCalls();
        const answers = await Promise.all([
          ...events.map((event) => seen.mark('dakar-mode', event)),
          ...events.map((event) => seen.has('dakar-mode', event)),
          ...events.map((event) => seen.has('abidjan-shop', event)),
        ]);
        expect(answers.slice(50, 100)).toEqual(events.map(() => true));
        expect(answers.slice(100)).toEqual(events.map(() => false));
        expect((await scriptCalls()) - before, prefix).toBe(slots);
      }
    } finally {
      await own.stop();
    }
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
