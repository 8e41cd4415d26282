/**
 * A short per-order lock in Redis, so that two jobs about the same order (a late `orders/updated`
 * event and the dispatch job, or two workers) never interleave their read-modify-write of the ledger.
 * The lock expires by itself if its holder dies; a job that cannot take it throws a retryable error
 * and BullMQ tries again after a backoff.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export class OrderBusyError extends Error {
  override readonly name = 'OrderBusyError';
  readonly retryAfterMs = 1_000;
}

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export async function withOrderLock<T>(
  redis: Redis,
  prefix: string,
  externalOrderId: string,
  work: () => Promise<T>,
  options: { ttlMs?: number; waitMs?: number } = {},
): Promise<T> {
  const key = `${prefix}:lock:order:${externalOrderId}`;
  const token = randomUUID();
  const deadline = Date.now() + (options.waitMs ?? 2_000);
  for (;;) {
    const taken = await redis.set(key, token, 'PX', options.ttlMs ?? 60_000, 'NX');
    if (taken === 'OK') break;
    if (Date.now() >= deadline) throw new OrderBusyError(`order ${externalOrderId} is being processed by another job`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  try {
    return await work();
  } finally {
    await redis.eval(RELEASE, 1, key, token);
  }
}
