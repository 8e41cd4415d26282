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
      const key = `${this.prefix}:rate:${shopId}:${second}`;
      const count = Number(await TAKE.run(this.redis, [key], [calls, 2]));
      if (count <= callsPerSecond) return;
      const nextWindow = (second + 1) * 1000 - now();
      if (now() + nextWindow > deadline) throw new ShopRateLimited(shopId, nextWindow + 250);
      await new Promise((resolve) => setTimeout(resolve, nextWindow + Math.floor(Math.random() * 20)));
    }
  }
}
