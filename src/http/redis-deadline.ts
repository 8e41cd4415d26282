/**
 * The bound on how long a webhook waits for Redis before it is answered 503 (the platform retries later).
 *
 * The web process's connections already fail each command after their commandTimeout (src/main/web-redis.ts), but
 * on its auto-pipelined one a command joins the next batch only once the batch in flight is answered, and its own
 * timer starts then: behind a batch stuck on a hung Redis it could wait two timeouts. This bound is the whole wait.
 */
import { RelaisError } from '../domain/errors.js';
import { withTimeout } from '../observability/with-timeout.js';

/** Past this, Redis is treated as unreachable and the platform is told to retry. */
export const REDIS_DEADLINE_MS = 2_000;

export class RedisUnavailable extends RelaisError {
  override readonly name = 'RedisUnavailable';

  constructor() {
    super({ failure: 'transient', message: `Redis did not answer within ${REDIS_DEADLINE_MS} ms` });
  }
}

/** `work`'s result, or RedisUnavailable once REDIS_DEADLINE_MS have passed without it. */
export function withinRedisDeadline<T>(work: () => Promise<T>): Promise<T> {
  let running: Promise<T>;
  try {
    running = work();
  } catch (error) {
    return Promise.reject(error);
  }
  return withTimeout(running, REDIS_DEADLINE_MS, () => new RedisUnavailable());
}
