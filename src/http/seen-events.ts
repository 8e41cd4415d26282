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
 * Lookups and marks are batched per turn of the event loop: those asked for in one turn leave together, as one small
 * Lua script per Redis Cluster slot (one command; EVALSHA, so that no script is defined on the connection: the web's
 * is auto-pipelined, and ioredis copies a connection's defined scripts onto every pipeline it builds, see
 * src/main/web-redis.ts). A busy receiver thus sends a fraction of a command per webhook for its markers instead of
 * two. The script writes the batch's marks before it looks anything up, so a repeat looked up in the turn its
 * original was marked is found.
 *
 * Collisions: two events with the same 96-bit digest in one shop's window would be taken for one. At a million
 * events the odds are about 10^-17.
 */
import { hash } from 'node:crypto';
import { hasHashTag, type RedisClient } from '../redis.js';
import { RedisScript } from '../orders/redis-script.js';

/** How long a delivery is remembered at least: well past Shopify's 4-hour retry window and BullMQ's retention. */
export const DEDUPE_TTL_SECONDS = 48 * 3600;
const PERIOD_SECONDS = DEDUPE_TTL_SECONDS;
/** Hashes per shop and period; a power of two. */
const BUCKETS = 4096;

/**
 * KEYS: each lookup's two hashes (the current and the previous period's), then each mark's hash. ARGV: the number of
 * lookups, each lookup's digest, then each mark's digest and the instant its hash expires (the end of the period after
 * the mark's). Returns, for each lookup, 1 when either of its hashes holds its digest.
 */
const BATCH = new RedisScript(`
local lookups = tonumber(ARGV[1])
local marks = #KEYS - 2 * lookups
for i = 1, marks do
  local key = KEYS[2 * lookups + i]
  redis.call('HSET', key, ARGV[lookups + 2 * i], 1)
  redis.call('EXPIREAT', key, ARGV[lookups + 2 * i + 1])
end
local found = {}
for i = 1, lookups do
  found[i] = math.min(1, redis.call('HEXISTS', KEYS[2 * i - 1], ARGV[1 + i]) + redis.call('HEXISTS', KEYS[2 * i], ARGV[1 + i]))
end
return found
`);

/** Past this many lookups and marks, a slot's batch leaves in more than one command. */
const MAX_BATCH = 256;

/** One event's marker: where it is looked up and written, computed once for both. */
export class SeenEvent {
  constructor(
    private readonly events: SeenEvents,
    /** Where the batch goes: the shop's slot (or the prefix's). */
    readonly slot: string,
    readonly field: Buffer,
    /** The current and the previous period's hash. */
    readonly keys: readonly [string, string],
    /** When the current period's hash expires (epoch seconds): the end of the next period. */
    readonly expireAt: number,
  ) {}

  /** Whether the event was marked within the window. */
  has(): Promise<boolean> {
    return this.events.ask(this, 'lookup') as Promise<boolean>;
  }

  /** Marks the event as stored. */
  async mark(): Promise<void> {
    await this.events.ask(this, 'mark');
  }
}

interface Request {
  event: SeenEvent;
  resolve(found: boolean): void;
  reject(error: unknown): void;
}

interface Batch {
  lookups: Request[];
  marks: Request[];
}

export class SeenEvents {
  /** Whether the prefix holds a hash tag of its own (see key()). */
  private readonly tagged: boolean;
  /** This turn's lookups and marks, by slot; sent when the turn ends. */
  private batches = new Map<string, Batch>();

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
    const keys = [this.key(shopId, period, bucket), this.key(shopId, period - 1, bucket)] as const;
    // The same instant on every write of a period: when the next period ends.
    return new SeenEvent(this, this.tagged ? '' : shopId, field, keys, (period + 2) * PERIOD_SECONDS);
  }

  /** Whether the shop's event was marked within the window. */
  async has(shopId: string, eventKey: string): Promise<boolean> {
    return this.event(shopId, eventKey).has();
  }

  /** Marks the shop's event as stored. */
  async mark(shopId: string, eventKey: string): Promise<void> {
    await this.event(shopId, eventKey).mark();
  }

  /** For SeenEvent: joins this turn's batch for the event's slot; the first request of a turn schedules its sending. */
  ask(event: SeenEvent, kind: 'lookup' | 'mark'): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (this.batches.size === 0) setImmediate(() => this.send());
      let batch = this.batches.get(event.slot);
      if (!batch) {
        batch = { lookups: [], marks: [] };
        this.batches.set(event.slot, batch);
      }
      (kind === 'lookup' ? batch.lookups : batch.marks).push({ event, resolve, reject });
    });
  }

  /**
   * Each slot's batch in as few commands as MAX_BATCH allows, its marks first: the commands run in the order they are
   * sent, so every mark of the turn is written before any of its lookups runs.
   */
  private send(): void {
    const batches = this.batches;
    this.batches = new Map();
    for (const { lookups, marks } of batches.values()) {
      for (let start = 0; start < marks.length + lookups.length; start += MAX_BATCH) {
        const end = start + MAX_BATCH;
        void this.run(
          lookups.slice(Math.max(0, start - marks.length), Math.max(0, end - marks.length)),
          marks.slice(start, end),
        );
      }
    }
  }

  private async run(lookups: Request[], marks: Request[]): Promise<void> {
    const keys: string[] = [];
    const args: (string | number | Buffer)[] = [lookups.length];
    for (const { event } of lookups) keys.push(...event.keys);
    for (const { event } of lookups) args.push(event.field);
    for (const { event } of marks) {
      keys.push(event.keys[0]);
      args.push(event.field, event.expireAt);
    }
    try {
      const found = (await BATCH.run(this.redis, keys, args)) as number[];
      lookups.forEach((request, i) => request.resolve(found[i] === 1));
      for (const request of marks) request.resolve(true);
    } catch (error) {
      for (const request of [...lookups, ...marks]) request.reject(error);
    }
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
  // One-shot hash(): about twice as fast as createHash() on inputs this short (the same digest).
  const digest = hash('sha256', `${shopId}\u0000${eventKey}`, 'buffer');
  return {
    field: digest.subarray(0, 12),
    bucket: (digest.readUInt16BE(12) & (BUCKETS - 1)).toString(36),
  };
}
