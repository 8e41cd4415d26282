/**
 * Per-shop pacing of calls to the dispatch service, shared by every worker process through Redis.
 *
 * The service's rate limits are "not shown" (spec section 8), and one merchant's flash sale must not
 * eat the organisation's budget for the others, so each shop gets its own calls-per-second window
 * (policy.dispatchCallsPerSecond). A call over the limit waits for the next window, briefly; past
 * `maxWaitMs` it gives up with a retryable error so the job backs off instead of holding a worker.
 * A 429 from the service is handled separately (Retry-After, see jobs/queues.ts).
 */
import type { RedisClient } from '../redis.js';
import { RelaisError } from '../domain/errors.js';
import { RedisScript } from './redis-script.js';

/**
 * KEYS: the shop's window of this second; ARGV: the calls taken, the window's lifetime in seconds. The count after
 * taking them. One command per acquisition (it was MULTI, INCRBY, EXPIRE, EXEC: four).
 */
const TAKE = new RedisScript(
  "local count = redis.call('INCRBY', KEYS[1], ARGV[1]) redis.call('EXPIRE', KEYS[1], ARGV[2]) return count",
);

/** A window lives two seconds: its own, and the next one's start for a clock a little behind. */
const WINDOW_TTL_SECONDS = 2;

export class ShopRateLimited extends RelaisError {
  override readonly name = 'ShopRateLimited';
  constructor(
    readonly shopId: string,
    retryAfterMs: number,
  ) {
    super({
      failure: 'transient',
      message: `shop ${shopId} is over its dispatch call rate; retrying in ${retryAfterMs} ms`,
      retryAfterMs,
    });
  }
}

/**
 * KEYS: a window; ARGV: turns to give back. Only into a window still there: a DECRBY on an expired key would leave a
 * negative count behind with no expiry.
 */
const GIVE_BACK = new RedisScript(
  "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECRBY', KEYS[1], ARGV[1]) end return 0",
);

/** Turns of a shop's window taken by another command (the order lock's acquisition: order-lock.ts). */
export interface WindowTake {
  /** The window: the shop's second at the time. */
  key: string;
  calls: number;
  /** The window's lifetime, as TAKE sets it. */
  ttlSeconds: number;
}

export class ShopRateLimiter {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly options: { maxWaitMs: number; now?: () => number } = { maxWaitMs: 3_000 },
  ) {}

  /**
   * Resolves when the shop may make `calls` more calls (default one); throws ShopRateLimited after
   * maxWaitMs. Taking a job's expected calls at once costs one round trip instead of one per call.
   */
  async acquire(shopId: string, callsPerSecond: number, calls = 1): Promise<void> {
    if (calls > callsPerSecond)
      throw new RangeError(`cannot take ${calls} calls at once from a window of ${callsPerSecond} per second`);
    const now = this.options.now ?? Date.now;
    const deadline = now() + this.options.maxWaitMs;
    for (;;) {
      const second = Math.floor(now() / 1000);
      const count = Number(await TAKE.run(this.redis, [this.windowKey(shopId, second)], [calls, WINDOW_TTL_SECONDS]));
      if (count <= callsPerSecond) return;
      const nextWindow = (second + 1) * 1000 - now();
      if (now() + nextWindow > deadline) throw new ShopRateLimited(shopId, nextWindow + 250);
      await new Promise((resolve) => setTimeout(resolve, nextWindow + Math.floor(Math.random() * 20)));
    }
  }

  /** `calls` turns of the shop's window now, for another command to take with its own (INCRBY, then EXPIRE). */
  windowTake(shopId: string, calls: number): WindowTake {
    const now = this.options.now ?? Date.now;
    return { key: this.windowKey(shopId, Math.floor(now() / 1000)), calls, ttlSeconds: WINDOW_TTL_SECONDS };
  }

  /**
   * Whether turns taken by another command (`count`: the window's count once they were) may be spent now without
   * a command of their own: the window is still the current one and they fit in it.
   */
  mayUse(shopId: string, callsPerSecond: number, taken: { key: string; count: number }): boolean {
    return taken.count <= callsPerSecond && taken.key === this.windowTake(shopId, 0).key;
  }

  /** Turns taken and never spent (the event did not ship the order): back into their window, if it is still there. */
  async giveBack(take: { key: string; calls: number }): Promise<void> {
    await GIVE_BACK.run(this.redis, [take.key], [take.calls]);
  }

  private windowKey(shopId: string, second: number): string {
    return `${this.prefix}:rate:${shopId}:${second}`;
  }
}
