/**
 * Webhook de-duplication markers in Redis: whether a shop's event was already stored (src/http/routes/webhooks.ts).
 *
 * A marker is kept at least DEDUPE_TTL_SECONDS, however many orders arrive meanwhile, so in a flash sale the
 * markers are most of what Redis holds per order. They are therefore kept small: not a key per event (about
 * 136 bytes each, measured), but a 12-byte digest of the event as a field of a small hash. The hashes are one
 * per shop, day and digest bucket (BUCKETS per day), so each stays under Redis's compact listpack encoding
 * (128 fields by default) up to about half a million events a day per shop, at about 20 bytes per marker.
 *
 * Expiry is per hash, by day: a day's hashes expire MARKER_DAYS days after that day began, and a lookup checks
 * the hashes of the days a marker can still be in. A marker written at any moment of day d is found until
 * day d + MARKER_DAYS begins: never less than DEDUPE_TTL_SECONDS.
 *
 * Collisions: two events with the same 96-bit digest in one shop's window would be taken for one. At a million
 * events the odds are about 10^-17.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis.js';

/** How long a delivery is remembered at least: well past Shopify's 4-hour retry window and BullMQ's retention. */
export const DEDUPE_TTL_SECONDS = 48 * 3600;
const DAY_SECONDS = 24 * 3600;
/** Days a day's hashes live: the day itself plus the whole window after its last moment. */
const MARKER_DAYS = Math.ceil(DEDUPE_TTL_SECONDS / DAY_SECONDS) + 1;
/** Hashes per shop and day; a power of two. */
const BUCKETS = 4096;

/** Whether any of the hashes holds the marker: one round trip for every day checked. */
const SEEN = `for _, key in ipairs(KEYS) do
  if redis.call('HEXISTS', key, ARGV[1]) == 1 then return 1 end
end
return 0`;
/** Writes the marker into today's hash, which expires with its day (EXPIREAT on each write: the same instant). */
const MARK = `redis.call('HSET', KEYS[1], ARGV[1], 1)
return redis.call('EXPIREAT', KEYS[1], ARGV[2])`;

export class SeenEvents {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Whether the shop's event was marked within the window. */
  async has(shopId: string, eventKey: string): Promise<boolean> {
    const { field, bucket } = digestOf(shopId, eventKey);
    const today = this.day();
    const keys = Array.from({ length: MARKER_DAYS }, (_, back) => this.key(shopId, today - back, bucket));
    return (await this.redis.eval(SEEN, keys.length, ...keys, field)) === 1;
  }

  /** Marks the shop's event as stored. */
  async mark(shopId: string, eventKey: string): Promise<void> {
    const { field, bucket } = digestOf(shopId, eventKey);
    const today = this.day();
    const expiresAt = (today + MARKER_DAYS) * DAY_SECONDS;
    await this.redis.eval(MARK, 1, this.key(shopId, today, bucket), field, String(expiresAt));
  }

  /** How many markers are held (for tests and operators: a SCAN, not for the request path). */
  async count(): Promise<number> {
    let total = 0;
    for (const key of await this.keys()) total += await this.redis.hlen(key);
    return total;
  }

  /** The hashes holding markers. */
  async keys(): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}:seen:*`, 'COUNT', 1000);
      found.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return found;
  }

  private day(): number {
    return Math.floor(this.clock() / 1000 / DAY_SECONDS);
  }

  /**
   * A shop's hashes share a hash tag when the prefix has none, so the lookup's keys are in one Redis Cluster slot
   * (a prefix with a tag, the default `{relais}`, already puts them all in its own).
   */
  private key(shopId: string, day: number, bucket: string): string {
    const tagged = /\{[^}]+\}/.test(this.prefix) ? shopId : `{seen:${shopId}}`;
    return `${this.prefix}:seen:${tagged}:${day}:${bucket}`;
  }
}

function digestOf(shopId: string, eventKey: string): { field: Buffer; bucket: string } {
  const digest = createHash('sha256').update(shopId).update('\u0000').update(eventKey).digest();
  return {
    field: digest.subarray(0, 12),
    bucket: (digest.readUInt16BE(12) & (BUCKETS - 1)).toString(36),
  };
}
