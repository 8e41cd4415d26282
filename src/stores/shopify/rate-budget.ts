/**
 * One Shopify rate budget per shop, shared by every Relais process through Redis.
 *
 * Shopify limits Admin GraphQL calls with a leaky bucket per shop and app: `maximumAvailable` points, refilled at
 * `restoreRate` points a second; a query runs only when its `requestedQueryCost` is available, and the difference
 * between requested and actual cost is given back. Every answer (THROTTLED ones included) reports the bucket in
 * `extensions.cost.throttleStatus`. Each worker used to learn about the bucket only from its own THROTTLED
 * answers, so several workers together overdrew it during a burst. Here they keep one copy of it in Redis and
 * reserve points before sending:
 *
 *  - Key `<prefix>:shopify-budget:<shopDomain>`, a hash: `max`, `rate`, `avail` (points, may go below zero: a
 *    debt, see below), `at` (ms, Redis TIME of `avail`), `c:<cost key>` (the requestedQueryCost answers reported
 *    for an operation), `r:<id>` (a reservation not yet answered: "<points>:<expires at ms>"), `probe` (see
 *    below). All times are Redis's clock (TIME), so workers on different machines agree. The key expires when the
 *    shop has been quiet long enough for the bucket to be full again (a missing key means exactly that).
 *    The prefix is a hash tag like `{relais}`, so the key lives in the same Redis Cluster slot as the rest.
 *  - Reserve (atomic, one script): refill `avail` at `rate` since `at`; take the cost (its reported
 *    requestedQueryCost, or the whole bucket when no answer has reported it yet: never too little; when the
 *    caller cannot wait for the whole bucket, what the bucket holds now: at worst that one call is
 *    THROTTLED, and its answer reports the cost, so a new operation is never starved by a busy shop). When the
 *    bucket holds less, the points are still taken (the bucket goes into debt) and the caller is told how long
 *    to wait before sending: the time the refill needs. Callers thus queue in the order they reserved, and a big
 *    query (a page of orders) is not starved by a stream of small ones. A caller that cannot wait that long
 *    takes nothing and is told the wait (it hands the work back to the queue).
 *  - Settle (atomic, after the answer): drop the reservation; give back what the shop gave back (reserved minus
 *    actual cost; everything for a THROTTLED answer, which ran nothing; nothing when no answer came: it may have
 *    run); then the server's view wins when it holds less: `avail` = min(our figure, currentlyAvailable minus
 *    the points of reservations still out). It sees consumers we do not (a process without Redis, a drained
 *    bucket). We do not raise our figure to a higher server figure: an answer may arrive after a later one, and
 *    a stale higher figure would let a burst through; our own figure refills to `max` by itself.
 *  - Before anything is known (no key), one caller is the probe: it sends alone, its answer fills the bucket
 *    in, and the others ask again shortly. A probe whose answer never comes expires.
 *  - Reservations expire (a worker that died between reserve and answer does not hold points forever).
 *
 * Without Redis the client does not use a budget at all: THROTTLED answers are waited out as before.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

/** The cost figures of one answer, as Shopify reports them in extensions.cost. */
export interface CostReport {
  requestedQueryCost: number;
  actualQueryCost: number | null;
  throttleStatus: ThrottleStatus;
}

export type Reservation =
  /** Points taken: send after `waitMs`, then settle. */
  | { reserved: true; id: string; points: number; waitMs: number }
  /** Nothing taken: the wait is longer than the caller can afford (or a probe is out); ask again after `waitMs`. */
  | { reserved: false; waitMs: number };

/** How long an unanswered reservation holds its points past its send time. */
const RESERVATION_HOLD_MS = 60_000;
/** How long the first caller may take to bring back the bucket's figures before another one tries. */
const PROBE_MS = 20_000;
/** How soon to ask again while a probe is out. */
const PROBE_POLL_MS = 50;
/** The key outlives the time the bucket needs to fill up by this much (and at least this long). */
const IDLE_TTL_MS = 60_000;

// KEYS[1] the bucket; ARGV: id, cost key, maxWaitMs, holdMs, probeMs, probePollMs, idleTtlMs.
// Returns { reserved (0|1), waitMs, points }.
const RESERVE = `
local key = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max = tonumber(redis.call('HGET', key, 'max'))
if not max then
  local probe = tonumber(redis.call('HGET', key, 'probe'))
  if probe and probe > now then return {0, tonumber(ARGV[6]), 0} end
  redis.call('HSET', key, 'probe', now + tonumber(ARGV[5]), 'r:' .. ARGV[1], '0:' .. (now + tonumber(ARGV[4])))
  redis.call('PEXPIRE', key, tonumber(ARGV[7]))
  return {1, 0, 0}
end
local rate = tonumber(redis.call('HGET', key, 'rate'))
local avail = tonumber(redis.call('HGET', key, 'avail'))
local at = tonumber(redis.call('HGET', key, 'at'))
avail = math.min(max, avail + math.max(0, now - at) * rate / 1000)
local known = tonumber(redis.call('HGET', key, 'c:' .. ARGV[2]))
local cost = math.min(known or max, max)
local wait = 0
if avail < cost then wait = math.ceil((cost - avail) * 1000 / rate) end
if not known and wait > tonumber(ARGV[3]) then
  -- Unknown cost, and no time to wait for the whole bucket: take what is there now (no debt for a guess).
  cost = math.max(1, math.min(max, math.floor(avail)))
  wait = 0
  if avail < cost then wait = math.ceil((cost - avail) * 1000 / rate) end
end
local ttl = math.max(tonumber(ARGV[7]), math.ceil((max - math.min(avail - cost, max)) * 1000 / rate) + tonumber(ARGV[7]))
if wait > tonumber(ARGV[3]) then
  redis.call('HSET', key, 'avail', tostring(avail), 'at', now)
  redis.call('PEXPIRE', key, ttl)
  return {0, wait, 0}
end
redis.call('HSET', key, 'avail', tostring(avail - cost), 'at', now, 'r:' .. ARGV[1], cost .. ':' .. (now + wait + tonumber(ARGV[4])))
redis.call('PEXPIRE', key, ttl)
return {1, wait, cost}
`;

// KEYS[1] the bucket. The time until the bucket, reservations included, is out of debt (0: it is not in debt).
const DEBT_WAIT = `
local key = KEYS[1]
local max = tonumber(redis.call('HGET', key, 'max'))
if not max then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(redis.call('HGET', key, 'rate'))
local avail = tonumber(redis.call('HGET', key, 'avail'))
local at = tonumber(redis.call('HGET', key, 'at'))
avail = math.min(max, avail + math.max(0, now - at) * rate / 1000)
if avail >= 0 then return 0 end
return math.ceil(-avail * 1000 / rate)
`;

// KEYS[1] the bucket; ARGV: id, given back (points), cost key, requestedQueryCost ('' when unknown),
// max, rate, currentlyAvailable ('' when the answer carried no figures), idleTtlMs.
const SETTLE = `
local key = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HDEL', key, 'r:' .. ARGV[1])
local pending = 0
local fields = redis.call('HGETALL', key)
for i = 1, #fields, 2 do
  local name = fields[i]
  if string.sub(name, 1, 2) == 'r:' then
    local points, expires = string.match(fields[i + 1], '^([^:]+):(.+)$')
    if tonumber(expires) < now then redis.call('HDEL', key, name) else pending = pending + tonumber(points) end
  end
end
if ARGV[4] ~= '' then redis.call('HSET', key, 'c:' .. ARGV[3], ARGV[4]) end
local oldMax = tonumber(redis.call('HGET', key, 'max'))
local ours = nil
if oldMax then
  local rate = tonumber(redis.call('HGET', key, 'rate'))
  local avail = tonumber(redis.call('HGET', key, 'avail'))
  local at = tonumber(redis.call('HGET', key, 'at'))
  ours = math.min(oldMax, avail + math.max(0, now - at) * rate / 1000) + tonumber(ARGV[2])
end
if ARGV[7] == '' then
  -- No figures (no answer): whoever asks next may probe.
  redis.call('HDEL', key, 'probe')
  if not ours then return 0 end
  redis.call('HSET', key, 'avail', tostring(math.min(oldMax, ours)), 'at', now)
  return 1
end
local max = tonumber(ARGV[5])
local rate = tonumber(ARGV[6])
-- One point of slack: Shopify reports whole points, and our stamps are whole milliseconds of Redis's clock.
local theirs = tonumber(ARGV[7]) - 1 - pending
local avail = theirs
if ours then avail = math.min(ours, theirs) end
avail = math.min(avail, max)
redis.call('HSET', key, 'max', max, 'rate', rate, 'avail', tostring(avail), 'at', now)
redis.call('HDEL', key, 'probe')
redis.call('PEXPIRE', key, math.max(tonumber(ARGV[8]), math.ceil((max - avail) * 1000 / rate) + tonumber(ARGV[8])))
return 1
`;

/** The shared budget of one shop. */
export class ShopifyRateBudget {
  readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    shopDomain: string,
  ) {
    this.key = `${prefix}:shopify-budget:${shopDomain.toLowerCase()}`;
  }

  /**
   * Takes the points `costKey`'s operation costs, when the caller can wait for them (`maxWaitMs`): the answer
   * says how long to wait before sending. Otherwise takes nothing and says how long the wait would be.
   */
  async reserve(costKey: string, maxWaitMs: number): Promise<Reservation> {
    const id = randomUUID();
    const [reserved, waitMs, points] = (await this.redis.eval(
      RESERVE, 1, this.key, id, costKey, Math.max(0, Math.floor(maxWaitMs)), RESERVATION_HOLD_MS, PROBE_MS, PROBE_POLL_MS, IDLE_TTL_MS,
    )) as [number, number, number];
    return reserved === 1 ? { reserved: true, id, points, waitMs } : { reserved: false, waitMs };
  }

  /**
   * How long until every reservation made so far is covered. A caller waiting for its reservation asks this now
   * and then: the points earlier calls gave back (requested minus actual cost) shorten every wait in the queue.
   */
  async debtWaitMs(): Promise<number> {
    return (await this.redis.eval(DEBT_WAIT, 1, this.key)) as number;
  }

  /**
   * After the call: `cost` is what the answer reported (undefined when there was no answer, or no figures);
   * `ran` is 'no' for an answer that says nothing ran (THROTTLED), 'maybe' when no answer came.
   */
  async settle(reservation: Extract<Reservation, { reserved: true }>, costKey: string, cost: CostReport | undefined, ran: 'yes' | 'no' | 'maybe'): Promise<void> {
    const givenBack = ran === 'no' ? reservation.points
      : ran === 'yes' && cost?.actualQueryCost !== null && cost?.actualQueryCost !== undefined ? Math.max(0, reservation.points - cost.actualQueryCost)
        : 0;
    const status = cost?.throttleStatus;
    const usable = status !== undefined && status.maximumAvailable > 0 && status.restoreRate > 0;
    await this.redis.eval(
      SETTLE, 1, this.key, reservation.id, givenBack, costKey, cost ? String(cost.requestedQueryCost) : '',
      usable ? status.maximumAvailable : '', usable ? status.restoreRate : '', usable ? status.currentlyAvailable : '', IDLE_TTL_MS,
    );
  }
}
