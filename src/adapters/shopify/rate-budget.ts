/**
 * One Shopify rate budget per shop, shared by every process that calls the shop's Admin API (issue 16, item 6).
 *
 * Shopify meters GraphQL calls with a leaky bucket per app and shop: `maximumAvailable` points, refilled at
 * `restoreRate` points a second, each call charged its `requestedQueryCost` up front. Every answer reports the
 * bucket (`extensions.cost.throttleStatus`). Each worker used to keep that knowledge to itself, so five workers in
 * a burst each believed they had the whole bucket and were all throttled together.
 *
 * Here the bucket's last reported state lives in Redis, per shop domain, with the reservations of the calls still
 * out. Before a call, a Lua script refills the copy by the time elapsed on Redis's clock, subtracts the
 * reservations, and either reserves the call's requested cost or answers how long to wait. When the answer comes
 * back the reservation ends, and Shopify's own figures (after its refund of the unused cost) replace the copy, so
 * it never drifts far from the truth and a call made outside Relais is seen at the next answer. Until Shopify has
 * reported a bucket, one call at a time goes out to learn it.
 *
 * The budget is an optimisation, never a new way to fail: if Redis does not answer, the call goes out and
 * Shopify's own THROTTLED answer (handled in admin-classify.ts) still paces it.
 */
import type { RedisClient } from '../../redis.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log.js';

/** What Shopify reports of a shop's bucket with every GraphQL answer. */
export interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

/** A call's claim on the bucket, until its answer comes back. */
export interface BudgetTicket {
  readonly member: string;
}

/** The port the Admin client calls before and after each Admin API call (BudgetGate, admin-throttle.ts). */
export interface ShopRateBudget {
  /**
   * Reserves what `operation` costs (its last reported requestedQueryCost, else `estimate`) until the call is
   * settled: a ticket, or the milliseconds to wait before asking again.
   */
  take(operation: string, estimate: number): Promise<{ ticket: BudgetTicket } | { waitMs: number }>;
  /** Ends the reservation; with Shopify's report of the answer, records the operation's cost and the bucket. */
  settle(
    ticket: BudgetTicket,
    report?: { operation: string; requestedCost: number; status: ThrottleStatus },
  ): Promise<void>;
}

/** Buckets expire once a shop is idle long enough to be full again anyway (a minute covers every plan). */
const BUCKET_TTL_MS = 60_000;
/**
 * Until Shopify has reported the bucket, one call at a time goes out to learn it; another may try after this. The
 * same for an operation whose cost is not known yet: a burst of reads taken at a 10-point estimate would each ask
 * Shopify for their real cost (hundreds of points) and be throttled together.
 */
const SCOUT_MS = 2_000;
/** How long a call waits when the points it needs are held by calls still in flight (their answers free them). */
const IN_FLIGHT_WAIT_MS = 100;
/** A reservation whose call never settled (its process died) lapses after this: longer than any call's timeout. */
const RESERVATION_MS = 30_000;

// Two keys per shop, kept in one Redis Cluster slot by the {domain} hash tag: a hash (available, maximum, rate, at
// on Redis's clock, scout, cost:<operation>, scout:<operation>) and a sorted set of reservations ("ticket:points", scored by when they
// lapse). Shopify charges a call's requested cost when it arrives and refunds the difference with its actual cost
// in the answer; what the answer reports already counts that call, and the reservations count the calls still out.
// Redis's TIME is the one clock every process shares, so a skewed host clock cannot hand points out twice.
const NOW_MS = `local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)`;

// KEYS bucket, reservations; ARGV operation, estimate, ticket. Returns {0, member} (taken) or {wait ms, ''}.
const TAKE = `${NOW_MS}
local b = redis.call('HMGET', KEYS[1], 'available', 'maximum', 'rate', 'at', 'cost:' .. ARGV[1], 'scout:' .. ARGV[1])
if not b[1] then
  if redis.call('HSETNX', KEYS[1], 'scout', nowMs) == 1 then
    redis.call('PEXPIRE', KEYS[1], ${SCOUT_MS})
    return {0, ''}
  end
  return {${IN_FLIGHT_WAIT_MS} * 2, ''}
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs)
local held = 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  held = held + tonumber(string.match(member, ':(%d+)$'))
end
local maximum = tonumber(b[2])
local rate = tonumber(b[3])
local available = math.min(maximum, tonumber(b[1]) + (nowMs - tonumber(b[4])) * rate / 1000) - held
local points = math.min(tonumber(b[5] or ARGV[2]), maximum)
if not b[5] and b[6] and nowMs - tonumber(b[6]) < ${SCOUT_MS} then return {${IN_FLIGHT_WAIT_MS}, ''} end
if available >= points then
  local member = ARGV[3] .. ':' .. points
  if not b[5] then redis.call('HSET', KEYS[1], 'scout:' .. ARGV[1], nowMs) end
  redis.call('ZADD', KEYS[2], nowMs + ${RESERVATION_MS}, member)
  redis.call('PEXPIRE', KEYS[2], ${RESERVATION_MS})
  redis.call('PEXPIRE', KEYS[1], ${BUCKET_TTL_MS})
  return {0, member}
end
if held > 0 and available + held >= points then return {${IN_FLIGHT_WAIT_MS}, ''} end
if rate <= 0 then return {1000, ''} end
return {math.max(${IN_FLIGHT_WAIT_MS}, math.ceil((points - available) * 1000 / rate)), ''}
`;

// KEYS bucket, reservations; ARGV member, then (when Shopify reported) operation, requested cost, maximum,
// available, rate.
const SETTLE = `${NOW_MS}
if ARGV[1] ~= '' then redis.call('ZREM', KEYS[2], ARGV[1]) end
if ARGV[2] then
  redis.call('HSET', KEYS[1], 'maximum', ARGV[4], 'available', ARGV[5], 'rate', ARGV[6], 'at', nowMs,
    'cost:' .. ARGV[2], ARGV[3])
  redis.call('HDEL', KEYS[1], 'scout', 'scout:' .. ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ${BUCKET_TTL_MS})
end
return 0
`;

export class RedisShopRateBudget implements ShopRateBudget {
  readonly #keys: [string, string];

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
    domain: string,
    private readonly logger: Logger,
  ) {
    const bucket = `${prefix}:shopify-budget:{${domain.toLowerCase()}}`;
    this.#keys = [bucket, `${bucket}:reservations`];
  }

  async take(operation: string, estimate: number): Promise<{ ticket: BudgetTicket } | { waitMs: number }> {
    try {
      const [waitMs, member] = (await this.redis.eval(
        TAKE,
        2,
        ...this.#keys,
        operation,
        String(Math.max(1, Math.ceil(estimate))),
        randomUUID(),
      )) as [number, string];
      return waitMs > 0 ? { waitMs } : { ticket: { member } };
    } catch (error) {
      this.unavailable(error);
      return { ticket: { member: '' } };
    }
  }

  async settle(
    ticket: BudgetTicket,
    report?: { operation: string; requestedCost: number; status: ThrottleStatus },
  ): Promise<void> {
    const figures = report
      ? [
          report.operation,
          String(report.requestedCost),
          String(report.status.maximumAvailable),
          String(report.status.currentlyAvailable),
          String(report.status.restoreRate),
        ]
      : [];
    if (ticket.member === '' && figures.length === 0) return;
    try {
      await this.redis.eval(SETTLE, 2, ...this.#keys, ticket.member, ...figures);
    } catch (error) {
      this.unavailable(error);
    }
  }

  private unavailable(error: unknown): void {
    this.logger.debug(
      { err: error instanceof Error ? error.message : String(error) },
      'Shopify rate budget unavailable in Redis; calling without it',
    );
  }
}
