/**
 * Webhook de-duplication markers in Redis: whether a shop's event was already stored (src/http/routes/webhooks.ts).
 *
 * A marker is kept at least DEDUPE_TTL_SECONDS, however many orders arrive meanwhile, so in a flash sale the
 * markers are most of what Redis holds per order. They are therefore kept small: not a key per event (about
 * 136 bytes each, measured), but a 12-byte digest of the event as a field of a small hash. The hashes are one
 * per shop, period and digest bucket (BUCKETS per period), so each stays under Redis's compact listpack encoding
 * (128 fields by default) up to about half a million events per period and shop, at about 20 bytes per marker.
 *
 * Expiry is per hash, by period (PERIOD_SECONDS, the de-duplication window itself): a period's hashes expire when
 * the period after it ends, and a lookup checks the current period's hash and the previous one's. A marker is
 * therefore found for at least one period and at most two.
 *
 * Each lookup and each mark is one small Lua script (one command), run by EVALSHA so that no script is defined on the
 * connection: the web process's is auto-pipelined, and ioredis copies a connection's defined scripts onto every
 * pipeline it builds (src/main/web-redis.ts).
 *
 * Collisions: two events with the same 96-bit digest in one shop's window would be taken for one. At a million
 * events the odds are about 10^-17.
 */
import { createHash } from 'node:crypto';
import { hasHashTag, type RedisClient } from '../redis.js';
import { RedisScript } from '../orders/redis-script.js';

/** How long a delivery is remembered at least: well past Shopify's 4-hour retry window and BullMQ's retention. */
export const DEDUPE_TTL_SECONDS = 48 * 3600;
const PERIOD_SECONDS = DEDUPE_TTL_SECONDS;
/** Hashes per shop and period; a power of two. */
const BUCKETS = 4096;

/** KEYS: the current and the previous period's hash; ARGV: the digest. 1 when either holds it. */
const HAS = new RedisScript(
  "return math.min(1, redis.call('HEXISTS', KEYS[1], ARGV[1]) + redis.call('HEXISTS', KEYS[2], ARGV[1]))",
);
/** KEYS: the current period's hash; ARGV: the digest, the instant the hash expires (the same for every mark). */
const MARK = new RedisScript("redis.call('HSET', KEYS[1], ARGV[1], 1) return redis.call('EXPIREAT', KEYS[1], ARGV[2])");

/** One event's marker: where it is looked up and written, computed once for both. */
export interface SeenEvent {
  /** Whether the event was marked within the window. */
  has(): Promise<boolean>;
  /** Marks the event as stored. */
  mark(): Promise<void>;
}

export class SeenEvents {
  /** Whether the prefix holds a hash tag of its own (see key()). */
  private readonly tagged: boolean;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly clock: () => number = Date.now,
  ) {
    this.tagged = hasHashTag(prefix);
  }

  /** The shop's event: its digest and hashes computed once, for the lookup and then the mark. */
  event(shopId: string, eventKey: string): SeenEvent {
    const { field, bucket } = digestOf(shopId, eventKey);
    const period = this.period();
    const current = this.key(shopId, period, bucket);
    return {
      has: async () => (await HAS.run(this.redis, [current, this.key(shopId, period - 1, bucket)], [field])) === 1,
      // The same instant on every write: when the next period ends.
      mark: async () => {
        await MARK.run(this.redis, [current], [field, (period + 2) * PERIOD_SECONDS]);
      },
    };
  }

  /** Whether the shop's event was marked within the window. */
  async has(shopId: string, eventKey: string): Promise<boolean> {
    return this.event(shopId, eventKey).has();
  }

  /** Marks the shop's event as stored. */
  async mark(shopId: string, eventKey: string): Promise<void> {
    await this.event(shopId, eventKey).mark();
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

  private period(): number {
    return Math.floor(this.clock() / 1000 / PERIOD_SECONDS);
  }

  /**
   * A shop's hashes share a hash tag when the prefix has none, so the lookup's keys are in one Redis Cluster slot
   * (a prefix with a tag, the default `{relais}`, already puts them all in its own).
   */
  private key(shopId: string, period: number, bucket: string): string {
    return `${this.prefix}:seen:${this.tagged ? shopId : `{seen:${shopId}}`}:${period}:${bucket}`;
  }
}

function digestOf(shopId: string, eventKey: string): { field: Buffer; bucket: string } {
  const digest = createHash('sha256').update(shopId).update('\u0000').update(eventKey).digest();
  return {
    field: digest.subarray(0, 12),
    bucket: (digest.readUInt16BE(12) & (BUCKETS - 1)).toString(36),
  };
}
