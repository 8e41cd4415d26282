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
 * A lease can be lost while its holder still runs: a renewal the key no longer answers to (the holder was
 * frozen past the TTL and another worker took the order), or a renewal that failed. The lease is then
 * marked lost, and the work confirms it (`OrderLock.confirm`, a renewal made there and then) before each
 * side effect, stopping with OrderLockLostError, retryable: the next attempt takes the lock again, or
 * waits behind whoever holds it now. Past the last confirmed renewal plus the TTL the lease counts as
 * lost too, even before a renewal says so (a holder resumed from a freeze has not had its timer run yet).
 *
 * Before a side effect that may be repeated harmlessly (markReady: the service answers "already ready"), a
 * confirmation within RECENTLY_CONFIRMED_MS of the last one the key answered to (the acquisition, a renewal, the
 * confirmation before createShipment) makes no round trip: nobody else can take the key while it lives (SET NX),
 * and it lives the TTL past that renewal's sending. What that could miss is only a key overwritten from outside
 * within that fraction of a second; createShipment and every other side effect are always confirmed with one.
 *
 * `tryLease` is the lease itself, for other one-holder-at-a-time work that does not wait (src/orders/disputes).
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import { RelaisError } from '../domain/errors.js';
import { RedisScript } from './redis-script.js';

/** Transient: the order is another job's for now; tried again a second later. */
export class OrderBusyError extends RelaisError {
  override readonly name: string = 'OrderBusyError';

  constructor(message: string) {
    super({ failure: 'transient', message, retryAfterMs: 1_000 });
  }
}

/** The order lock was lost while the job held it: it stops before its next side effect, and is retried. */
export class OrderLockLostError extends OrderBusyError {
  override readonly name: string = 'OrderLockLostError';
}

/** What the work inside `withOrderLock` is handed: whether the order is still its own. */
export interface OrderLock {
  /** False once a renewal found the key taken by another holder, or failed, or the lease may have lapsed. */
  stillHeld(): boolean;
  /**
   * Before a side effect: renews the lease now and resolves if it is still this holder's; otherwise marks
   * it lost and throws OrderLockLostError naming `before` (the side effect not made). One round trip, so a
   * takeover is seen however recently it happened, not only at the next timed renewal. `repeatable` (a side
   * effect a second holder may repeat harmlessly): none within RECENTLY_CONFIRMED_MS of the last renewal the
   * key answered to, when no other holder can have taken it yet.
   */
  confirm(before: string, options?: { repeatable?: boolean }): Promise<void>;
  /**
   * The turns the acquisition took with the lock (`take`), with the counter's value once they were: handed out once,
   * to the attempt that spends them; undefined after that, or when none were taken.
   */
  takenTurns(): TakenTurns | undefined;
}

/** Turns of a counter (a shop's pacing window: rate-limit.ts) taken in the same command as the lock. */
export interface CounterTake {
  key: string;
  calls: number;
  ttlSeconds: number;
}

export type TakenTurns = CounterTake & { count: number };

/** How long the lock outlives a holder that stopped renewing it (crashed, or frozen longer than this). */
export const ORDER_LOCK_TTL_MS = 10_000;

/** How soon after the last renewal the key answered to a confirmation needs no round trip (at most a tenth of the TTL). */
export const RECENTLY_CONFIRMED_MS = 250;

// Run by their SHA1 (EVALSHA): a renewal before each side effect no longer sends the script's text each time.
const RELEASE = new RedisScript(
  `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`,
);
// The lock and a counter's turns in one command: the turns only when the lock is taken (-1: it was not).
const TAKE_WITH_TURNS = new RedisScript(
  "if not redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return -1 end " +
    "local n = redis.call('incrby', KEYS[2], ARGV[3]) redis.call('expire', KEYS[2], ARGV[4]) return n",
);
const RENEW = new RedisScript(
  `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`,
);

/** How `withOrderLock` takes and gives back the lock. */
export interface OrderLockOptions {
  ttlMs?: number;
  waitMs?: number;
  /**
   * Turns to take with the lock, asked at each try (a shop's pacing window is per second): one command for both.
   * Those the work never asks for (`takenTurns`) are handed to `giveBack` before the lock is released.
   */
  take?: () => CounterTake | undefined;
  giveBack?: (turns: TakenTurns) => Promise<void>;
}

export async function withOrderLock<T>(
  redis: RedisClient,
  prefix: string,
  externalOrderId: string,
  work: (lock: OrderLock) => Promise<T>,
  options: OrderLockOptions = {},
): Promise<T> {
  const key = `${prefix}:lock:order:${externalOrderId}`;
  const ttlMs = options.ttlMs ?? ORDER_LOCK_TTL_MS;
  const deadline = Date.now() + (options.waitMs ?? 2_000);
  let lease: Lease | undefined;
  let sentAt = Date.now();
  while (!(lease = await tryLease(redis, key, ttlMs, options.take?.()))) {
    if (Date.now() >= deadline) throw new OrderBusyError(`order ${externalOrderId} is being processed by another job`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    sentAt = Date.now();
  }
  const held = lease;
  let turns = held.taken;
  // Held until the last confirmed renewal (timed from when it was sent) plus the TTL, unless a renewal says otherwise.
  let validUntil = sentAt + ttlMs;
  const recently = Math.min(RECENTLY_CONFIRMED_MS, Math.floor(ttlMs / 10));
  let lost = false;
  /** Renews the lease; false (and lost from then on) when the key is another holder's or the renewal failed. */
  const renew = async (): Promise<boolean> => {
    const sent = Date.now();
    const ours = await held.renew().catch(() => false);
    if (!ours) lost = true;
    else validUntil = Math.max(validUntil, sent + ttlMs);
    return !lost;
  };
  const lock: OrderLock = {
    stillHeld: () => !lost && Date.now() < validUntil,
    async confirm(before, options) {
      const recent = options?.repeatable === true && validUntil - Date.now() > ttlMs - recently;
      if (lock.stillHeld() && (recent || (await renew()))) return;
      lost = true;
      throw new OrderLockLostError(
        `order ${externalOrderId}: the order lock was lost (taken over, or not renewed in time); stopped before ${before}`,
      );
    },
    takenTurns() {
      const handed = turns;
      turns = undefined;
      return handed;
    },
  };
  // Renewed three times per TTL, so one slow round trip never lets a live holder's lease lapse.
  const renewal = setInterval(() => void renew(), Math.max(100, Math.floor(ttlMs / 3)));
  try {
    return await work(lock);
  } finally {
    clearInterval(renewal);
    // Turns nobody spent go back first: they are not lost to the shop's window however the work ended.
    if (turns && options.giveBack) await options.giveBack(turns).catch(() => undefined);
    // Sent, not waited for (one round trip less at the end of every job): the next take of this order from this
    // process goes out on the same connection, after it; a take from another process that reaches Redis first finds
    // the order busy and tries again 50 ms later. A release that fails leaves the key to lapse within the TTL, as a
    // crashed holder's does.
    held.release().catch(() => undefined);
  }
}

/** A key held in Redis for a while by one holder, who alone can renew or release it. */
export interface Lease {
  /** Extends the lease; false when the key is no longer this holder's (it lapsed, or another holder took it). */
  renew(): Promise<boolean>;
  release(): Promise<void>;
  /** The turns taken with it (`take`), with the counter's value once they were. */
  taken?: TakenTurns;
}

/**
 * Takes `key` for `ttlMs` if nobody holds it (undefined if somebody does); it lapses by itself if not released.
 * With `take`, a counter's turns are taken in the same command, only if the key is.
 */
export async function tryLease(
  redis: RedisClient,
  key: string,
  ttlMs: number,
  take?: CounterTake,
): Promise<Lease | undefined> {
  const token = randomUUID();
  let taken: TakenTurns | undefined;
  if (take) {
    const count = Number(
      await TAKE_WITH_TURNS.run(redis, [key, take.key], [token, ttlMs, take.calls, take.ttlSeconds]),
    );
    if (count < 0) return undefined;
    taken = { ...take, count };
  } else if ((await redis.set(key, token, 'PX', ttlMs, 'NX')) !== 'OK') return undefined;
  return {
    ...(taken ? { taken } : {}),
    renew: async () => (await RENEW.run(redis, [key], [token, ttlMs])) === 1,
    release: async () => {
      await RELEASE.run(redis, [key], [token]);
    },
  };
}
