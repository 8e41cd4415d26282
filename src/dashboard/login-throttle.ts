/**
 * Wrong dashboard tokens slow their sender down; they never lock the operator out for long.
 *
 * Each wrong token makes its client (an address, or a browser that logged in before: middleware/auth.ts) wait
 * before its next token is even looked at: 1 s after the first, then 2, 4, 8… up to a minute. A token sent during
 * the wait is answered "wait N seconds", right or wrong alike (anything else would tell a guesser which guess is
 * right), and is not counted: a burst of guesses tests one token, and the operator who types the right token after
 * a colleague's typos gets in once the short wait is over. At one try a minute, a 32+ character token is beyond
 * guessing.
 *
 * Kept in Redis, so every web process counts the same tries and a restart forgets none. Per client, two keys: the
 * count of wrong tokens, forgotten FORGET_AFTER_MS after the last one, and the wait, a key whose time to live is
 * what is left of it (Redis's clock, the one every process shares). Both carry the client as their hash tag (or
 * sit under the prefix's), so the script that moves them touches one Redis Cluster slot.
 *
 * When Redis does not answer within REDIS_ANSWER_MS, the process counts on its own (MemoryLoginThrottle, the same
 * waits) rather than leave a script's bearer request hanging or let a token through unthrottled: the dashboard's
 * ledger pages keep answering while Redis is away, and a guesser is still slowed, per process, as before.
 */
import type { RedisClient } from '../redis.js';
import { slotTag } from '../redis.js';

/** The wait after the first wrong token; each further one doubles it, up to LONGEST_WAIT_MS. */
export const FIRST_WAIT_MS = 1_000;
export const LONGEST_WAIT_MS = 60_000;
/** A client's count of wrong tokens is forgotten this long after its last one. */
export const FORGET_AFTER_MS = 15 * 60_000;

/** What a wrong token did: counted (the client now waits `waitMs`), or sent during a wait and not counted. */
export type WrongTokenOutcome = { kind: 'counted'; waitMs: number } | { kind: 'waiting'; waitMs: number };

/** Wrong dashboard tokens per client, shared by every web process (the dashboard's port; RedisLoginThrottle). */
export interface LoginThrottle {
  /** How long `client` must still wait before a token it sends is looked at; 0 when it need not. */
  waitMs(client: string): Promise<number>;
  /** A wrong token from `client`: counted, with the wait it now has, unless the client was still waiting. */
  wrongToken(client: string): Promise<WrongTokenOutcome>;
  /** The right token, let in: the client's count starts again from nothing. */
  rightToken(client: string): Promise<void>;
}

// KEYS count, wait; ARGV first wait, longest wait, forget after (ms). Returns {1, wait} (counted) or {0, left}.
const WRONG_TOKEN = `
local left = redis.call('PTTL', KEYS[2])
if left > 0 then return {0, left} end
local count = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local wait = math.floor(math.min(tonumber(ARGV[2]), tonumber(ARGV[1]) * 2 ^ math.min(count - 1, 20)))
redis.call('SET', KEYS[2], '1', 'PX', wait)
return {1, wait}
`;

export interface LoginWaits {
  firstMs: number;
  longestMs: number;
  forgetAfterMs: number;
}

export class RedisLoginThrottle implements LoginThrottle {
  readonly #waits: LoginWaits;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    waits: Partial<LoginWaits> = {},
  ) {
    this.#waits = { firstMs: FIRST_WAIT_MS, longestMs: LONGEST_WAIT_MS, forgetAfterMs: FORGET_AFTER_MS, ...waits };
  }

  /** The client's two keys, in one slot. A client never holds a brace (an address, or `browser:<base64url>`). */
  #keys(client: string): [count: string, wait: string] {
    const base = `${this.prefix}:dashboard:login:${slotTag(this.prefix, client)}`;
    return [`${base}:count`, `${base}:wait`];
  }

  async waitMs(client: string): Promise<number> {
    return Math.max(0, await this.redis.pttl(this.#keys(client)[1]));
  }

  async wrongToken(client: string): Promise<WrongTokenOutcome> {
    const { firstMs, longestMs, forgetAfterMs } = this.#waits;
    const [counted, waitMs] = (await this.redis.eval(
      WRONG_TOKEN,
      2,
      ...this.#keys(client),
      String(firstMs),
      String(longestMs),
      String(forgetAfterMs),
    )) as [number, number];
    return { kind: counted === 1 ? 'counted' : 'waiting', waitMs };
  }

  async rightToken(client: string): Promise<void> {
    await this.redis.del(...this.#keys(client));
  }
}

/** The wait after the `count`th wrong token in a row (the Lua script above computes the same). */
export function waitAfter(count: number, waits: Pick<LoginWaits, 'firstMs' | 'longestMs'>): number {
  return Math.floor(Math.min(waits.longestMs, waits.firstMs * 2 ** Math.min(count - 1, 20)));
}

/** Wrong tokens counted in this process only: what the web process falls back on while Redis does not answer. */
export class MemoryLoginThrottle implements LoginThrottle {
  readonly #clients = new Map<string, { count: number; waitUntilMs: number; forgetAtMs: number }>();
  readonly #waits: LoginWaits;

  constructor(
    private readonly nowMs: () => number = Date.now,
    waits: Partial<LoginWaits> = {},
  ) {
    this.#waits = { firstMs: FIRST_WAIT_MS, longestMs: LONGEST_WAIT_MS, forgetAfterMs: FORGET_AFTER_MS, ...waits };
  }

  #current(client: string) {
    const entry = this.#clients.get(client);
    if (entry && entry.forgetAtMs <= this.nowMs()) this.#clients.delete(client);
    return this.#clients.get(client);
  }

  async waitMs(client: string): Promise<number> {
    return Promise.resolve(Math.max(0, (this.#current(client)?.waitUntilMs ?? 0) - this.nowMs()));
  }

  async wrongToken(client: string): Promise<WrongTokenOutcome> {
    const left = await this.waitMs(client);
    if (left > 0) return { kind: 'waiting', waitMs: left };
    const count = (this.#current(client)?.count ?? 0) + 1;
    const waitMs = waitAfter(count, this.#waits);
    const now = this.nowMs();
    this.#clients.delete(client); // re-inserted last: the oldest clients are forgotten first
    this.#clients.set(client, { count, waitUntilMs: now + waitMs, forgetAtMs: now + this.#waits.forgetAfterMs });
    if (this.#clients.size > 10_000) this.#clients.delete(this.#clients.keys().next().value as string);
    return { kind: 'counted', waitMs };
  }

  async rightToken(client: string): Promise<void> {
    this.#clients.delete(client);
    return Promise.resolve();
  }
}

/** How long Redis has to answer the throttle before the process counts on its own. */
export const REDIS_ANSWER_MS = 750;

/** After Redis was late once, the process counts on its own this long before asking Redis again. */
const REDIS_LATE_PAUSE_MS = 5_000;

/** Redis's throttle, or this process's own when Redis does not answer in time (see the top of this file). */
export class FallbackLoginThrottle implements LoginThrottle {
  #askRedisAfterMs = 0;

  constructor(
    private readonly shared: LoginThrottle,
    private readonly local: LoginThrottle,
    private readonly answerWithinMs = REDIS_ANSWER_MS,
  ) {}

  async #either<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (Date.now() < this.#askRedisAfterMs) return local();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.answerWithinMs);
    });
    const answer = shared();
    answer.catch(() => undefined); // a late failure is already answered by the local throttle
    try {
      const first = await Promise.race([answer, late]);
      if (first !== 'late') return first;
    } catch {
      // Redis refused or failed: counted below, as when it is late.
    } finally {
      clearTimeout(timer);
    }
    this.#askRedisAfterMs = Date.now() + REDIS_LATE_PAUSE_MS;
    return local();
  }

  waitMs(client: string): Promise<number> {
    return this.#either(
      () => this.shared.waitMs(client),
      () => this.local.waitMs(client),
    );
  }

  wrongToken(client: string): Promise<WrongTokenOutcome> {
    return this.#either(
      () => this.shared.wrongToken(client),
      () => this.local.wrongToken(client),
    );
  }

  async rightToken(client: string): Promise<void> {
    await Promise.all([
      this.local.rightToken(client),
      this.#either(
        () => this.shared.rightToken(client),
        async () => undefined,
      ),
    ]);
  }
}

/** "1 second", "37 seconds": a wait as the login page and the bearer answer say it (rounded up). */
export function waitInWords(waitMs: number): string {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return seconds === 1 ? '1 second' : `${String(seconds)} seconds`;
}

/** The Retry-After header's value for a wait. */
export function retryAfterSeconds(waitMs: number): string {
  return String(Math.max(1, Math.ceil(waitMs / 1000)));
}
