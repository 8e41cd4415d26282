/**
 * A short per-order lock in Redis, so that two jobs about the same order (a late `orders/updated`
 * event and the dispatch job, or two workers) never interleave their read-modify-write of the ledger.
 * The lock expires by itself if its holder dies; a job that cannot take it throws a retryable error
 * and BullMQ tries again after a backoff.
 *
 * The lock is a lease: short, and renewed while the work runs. A live holder keeps it however long its
 * calls take; a holder that crashed (SIGKILL, OOM) loses it within ORDER_LOCK_TTL_MS. A long fixed TTL
 * made the job taken over from a crashed worker spend all its attempts on "order busy" and end held as
 * "dispatch unavailable" (found by test/chaos/worker-kill.test.ts).
 *
 * `tryLease` is the lease itself, for other one-holder-at-a-time work that does not wait (src/disputes).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export class OrderBusyError extends Error {
  override readonly name = 'OrderBusyError';
  readonly retryAfterMs = 1_000;
}

/** How long the lock outlives a holder that stopped renewing it (crashed, or frozen longer than this). */
export const ORDER_LOCK_TTL_MS = 10_000;

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

export async function withOrderLock<T>(
  redis: Redis,
  prefix: string,
  externalOrderId: string,
  work: () => Promise<T>,
  options: { ttlMs?: number; waitMs?: number } = {},
): Promise<T> {
  const key = `${prefix}:lock:order:${externalOrderId}`;
  const ttlMs = options.ttlMs ?? ORDER_LOCK_TTL_MS;
  const deadline = Date.now() + (options.waitMs ?? 2_000);
  let lease: Lease | undefined;
  while (!(lease = await tryLease(redis, key, ttlMs))) {
    if (Date.now() >= deadline) throw new OrderBusyError(`order ${externalOrderId} is being processed by another job`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const held = lease;
  // Renewed three times per TTL, so one slow round trip never lets a live holder's lease lapse.
  const renewal = setInterval(() => void held.renew().catch(() => undefined), Math.max(100, Math.floor(ttlMs / 3)));
  try {
    return await work();
  } finally {
    clearInterval(renewal);
    await held.release();
  }
}

/** A key held in Redis for a while by one holder, who alone can renew or release it. */
export interface Lease {
  renew(): Promise<void>;
  release(): Promise<void>;
}

/** Takes `key` for `ttlMs` if nobody holds it (undefined if somebody does); it lapses by itself if not released. */
export async function tryLease(redis: Redis, key: string, ttlMs: number): Promise<Lease | undefined> {
  const token = randomUUID();
  if ((await redis.set(key, token, 'PX', ttlMs, 'NX')) !== 'OK') return undefined;
  return {
    renew: async () => {
      await redis.eval(RENEW, 1, key, token, String(ttlMs));
    },
    release: async () => {
      await redis.eval(RELEASE, 1, key, token);
    },
  };
}
