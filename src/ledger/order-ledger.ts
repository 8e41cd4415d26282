/**
 * The order ledger: what Relais knows about every shop order it acknowledged, kept in Redis.
 *
 * It is the pipeline's memory (progress saved after each external call, so a retried or restarted job
 * resumes instead of repeating a side effect), the operator's view (held orders with their reason,
 * the timeline of every call), and the input of reconciliation.
 *
 * Layout (all keys under the configured prefix, a Redis Cluster hash tag such as `{relais}`):
 *   <p>:order:<externalOrderId>      hash; each field a JSON document owned by one step, so concurrent
 *                                    writers of different fields never overwrite each other
 *   <p>:orders:<shopId>               sorted set of external ids by first-seen time, trimmed to the retention
 *   <p>:held                          sorted set of held external ids by hold time
 *   <p>:in-flight                     sorted set of orders with a live shipment (for the polling fallback)
 *   <p>:timeline:<externalOrderId>   capped list of calls made for the order (newest first)
 * Finished orders expire after `retentionDays` (RELAIS_RETENTION_DAYS, default 90) so memory stays bounded as
 * volume grows. An order that never reaches a final state never expires: `listStale` finds those older than a
 * bound (RELAIS_STALE_AFTER_DAYS, `relais stale`), and `closeStale` lets the operator end one.
 * Erasure (`eraseShop`, `redactOrders`) walks the keys themselves (SCAN), never the bounded shop index.
 *
 * The raw shop payload (most of a record's size: a Shopify order is about 9 kB of JSON) is kept only while
 * the order may still need a replay: until it has a shipment marked ready, or is cancelled. After that the
 * normalised order, the shipment and the delivery progress are all the later steps read.
 */
import type { Redis } from 'ioredis';
import { SHOP_ID_PATTERN } from '../domain/ids.js';
import type { HoldReason, Platform, StoreOrder } from '../domain/order.js';
import type { DoorAmount } from '../domain/door-amount.js';
import type { DeliveryStep } from '../domain/shipment-status.js';
import { BEFORE_DISPATCH_STATES, FINAL_STATES, statesRefusingMoveTo, type OrderState } from '../domain/order-state.js';

export type { OrderState } from '../domain/order-state.js';

export interface QuoteProgress {
  quoteId: string;
  expiresAt: string;
  total: number;
  breakdown?: Record<string, number | undefined>;
  /** What it priced (dispatch-order.ts quoteBasis): reused only for the same pickup, drop-off, coordinates, weight and payment mode. */
  basis?: string;
}

export interface ShipmentProgress {
  shipmentId: string;
  /** The service's own name for the state, as it came. */
  status: string;
  /** The step the shop's wire profile maps `status` to; absent for a name the profile does not know. */
  step?: DeliveryStep;
  trackingCode?: string;
  publicTrackingUrl?: string;
  orderAmountXof?: number;
  /** Set only from a 2xx markReady answer, a state the profile maps past ready, or an "already ready" refusal. */
  markedReadyAt?: string;
  createdAt: string;
}

/** Where the parcel is, and what has been written into the shop about it (each write once). */
export interface DeliveryProgress {
  step: DeliveryStep;
  serviceStatus: string;
  updatedAt: string;
  written: {
    dispatch?: string;
    steps: Partial<Record<DeliveryStep, string>>;
    paid?: string;
    /** Delivered but the cash collected did not cover what the order owes: the note was written (not paid). */
    shortfall?: string;
  };
  /** Service states the state table does not know yet, as seen (reported, never a crash). */
  unknownStates?: string[];
  /** The last problem written on the order (refused cancellation, failed delivery). */
  problem?: string;
}

export interface OrderMeta {
  externalOrderId: string;
  shopId: string;
  platform: Platform;
  orderId: string;
  orderName: string;
  firstSeenAt: string;
  /** Bumped by each replay so a new dispatch job can be enqueued for an order whose last one completed. */
  generation: number;
}

export interface OrderRecord {
  meta: OrderMeta;
  state: OrderState;
  stateChangedAt: string;
  hold?: HoldReason & { at: string };
  order?: StoreOrder;
  neighbourhood?: { name: string; confidence: number };
  quote?: QuoteProgress;
  shipment?: ShipmentProgress;
  delivery?: DeliveryProgress;
  /** What the courier collects at the door and why (goods, delivery, collection fee), as sent with the shipment. */
  door?: DoorAmount;
}

export interface TimelineEntry {
  at: string;
  /** 'dispatch' | 'shop' | 'relais' */
  system: string;
  operation: string;
  outcome: string;
  ms?: number;
  detail?: string;
}

type Field = 'meta' | 'state' | 'hold' | 'order' | 'payload' | 'neighbourhood' | 'quote' | 'shipment' | 'delivery' | 'door';

/**
 * KEYS: order hash, held index, in-flight index, timeline, unready index. ARGV: the new state's JSON, the hold JSON (''
 * when not holding), now (ms), external id, '1' when the new state is before dispatch, the retention in
 * seconds ('' unless the state is final), then the states the move is refused from (domain/order-state.ts,
 * `canMove`). Answers 1 when applied, 0 when refused.
 */
const MOVE_STATE_SCRIPT = `
local before_dispatch = ARGV[5] == '1'
local current = redis.call('HGET', KEYS[1], 'state')
if current then
  local value = cjson.decode(current)['value']
  for i = 7, #ARGV do
    if ARGV[i] == value then return 0 end
  end
end
redis.call('HSET', KEYS[1], 'state', ARGV[1])
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[1], 'hold', ARGV[2])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
else
  redis.call('HDEL', KEYS[1], 'hold')
  redis.call('ZREM', KEYS[2], ARGV[4])
end
if not before_dispatch then redis.call('HDEL', KEYS[1], 'payload') end
if ARGV[6] ~= '' then
  redis.call('ZREM', KEYS[3], ARGV[4])
  redis.call('ZREM', KEYS[5], ARGV[4])
  redis.call('EXPIRE', KEYS[1], ARGV[6])
  redis.call('EXPIRE', KEYS[4], ARGV[6])
end
return 1
`;

/**
 * KEYS: order hash, in-flight index, unready index. ARGV: shipment JSON, its id, '1' when it records a
 * markReady, now (ms), external id. Refuses (0) to save a shipment without its markReady over the same
 * shipment saved with one.
 */
const SAVE_SHIPMENT_SCRIPT = `
local current = redis.call('HGET', KEYS[1], 'shipment')
if current and ARGV[3] ~= '1' then
  local saved = cjson.decode(current)
  if saved['shipmentId'] == ARGV[2] and saved['markedReadyAt'] then return 0 end
end
redis.call('HSET', KEYS[1], 'shipment', ARGV[1])
redis.call('ZADD', KEYS[2], 'NX', ARGV[4], ARGV[5])
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[3], ARGV[5])
else
  redis.call('ZADD', KEYS[3], 'NX', ARGV[4], ARGV[5])
end
return 1
`;

/** Every field `get` reads: all but the payload, which only a replay needs (`payload()`). */
const RECORD_FIELDS = ['meta', 'state', 'hold', 'order', 'neighbourhood', 'quote', 'shipment', 'delivery', 'door'] as const;

/**
 * recordEvent in one round trip: create the record on first sight, keep the payload only while the order
 * is before dispatch, refresh the normalised order, index it, note the event on the timeline, and answer
 * the record's fields (RECORD_FIELDS order), then the version already applied when this event is older
 * (nil otherwise). An event whose order version (ms) is older than the one applied changes neither the
 * payload, the order nor the version: only its ignored entry goes on the timeline.
 * KEYS: order hash, shop index, timeline. ARGV: meta, state, payload, order ('' for none), score,
 * external id, timeline entry ('' for none), timeline length, the event's order version ('' when unknown),
 * its timeline entry when ignored as older ('' for none), then the states before dispatch.
 */
const RECORD_EVENT_SCRIPT = `
redis.call('HSETNX', KEYS[1], 'meta', ARGV[1])
redis.call('HSETNX', KEYS[1], 'state', ARGV[2])
local applied = redis.call('HGET', KEYS[1], 'version')
local older = ARGV[9] ~= '' and applied and tonumber(ARGV[9]) < tonumber(applied)
local entry = ARGV[7]
if older then
  entry = ARGV[10]
else
  if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'version', ARGV[9]) end
  local state = cjson.decode(redis.call('HGET', KEYS[1], 'state'))['value']
  for i = 11, #ARGV do
    if ARGV[i] == state then redis.call('HSET', KEYS[1], 'payload', ARGV[3]) break end
  end
  if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'order', ARGV[4]) end
end
redis.call('ZADD', KEYS[2], 'NX', ARGV[5], ARGV[6])
if entry ~= '' then
  redis.call('LPUSH', KEYS[3], entry)
  redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[8]) - 1)
end
local fields = redis.call('HMGET', KEYS[1], ${RECORD_FIELDS.map((f) => `'${f}'`).join(', ')})
if older then fields[#fields + 1] = applied end
return fields
`;

/** How long a finished order is kept (days), unless RELAIS_RETENTION_DAYS says otherwise. */
export const DEFAULT_RETENTION_DAYS = 90;
export const DEFAULT_TIMELINE_LENGTH = 200;
/** After how many days an order with no final state is reported (`relais stale`), unless RELAIS_STALE_AFTER_DAYS says otherwise. */
export const DEFAULT_STALE_AFTER_DAYS = 30;
/** Keys per SCAN step and per pipelined batch when walking every order. */
const SCAN_BATCH = 1_000;

/** An order with no final state, as `listStale` reports it. */
export interface StaleOrder {
  externalOrderId: string;
  shopId: string;
  orderName: string;
  state: OrderState;
  firstSeenAt: string;
  stateChangedAt: string;
  holdCode?: string;
}

export type CloseStaleResult =
  | { ok: true; previousState: OrderState }
  | { ok: false; why: 'unknown_order' | 'already_final' | 'not_stale'; detail: string };

export class OrderLedger {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly options: { retentionDays: number; timelineLength: number } = { retentionDays: DEFAULT_RETENTION_DAYS, timelineLength: DEFAULT_TIMELINE_LENGTH },
  ) {}

  get retentionDays(): number {
    return this.options.retentionDays;
  }

  private orderKey(id: string): string {
    return `${this.prefix}:order:${id}`;
  }
  private timelineKey(id: string): string {
    return `${this.prefix}:timeline:${id}`;
  }
  private shopIndexKey(shopId: string): string {
    return `${this.prefix}:orders:${shopId}`;
  }
  private get heldKey(): string {
    return `${this.prefix}:held`;
  }
  private get inFlightKey(): string {
    return `${this.prefix}:in-flight`;
  }
  private get unreadyKey(): string {
    return `${this.prefix}:unready`;
  }

  /** The order's record without its raw payload (see `payload`), or undefined for an unknown order. */
  async get(externalOrderId: string): Promise<OrderRecord | undefined> {
    return parseRecord(await this.redis.hmget(this.orderKey(externalOrderId), ...RECORD_FIELDS));
  }

  /** The last raw shop payload, while the order is before dispatch (undefined after, or once redacted). */
  async payload(externalOrderId: string): Promise<unknown> {
    const raw = await this.redis.hget(this.orderKey(externalOrderId), 'payload');
    return raw === null ? undefined : (JSON.parse(raw) as unknown);
  }

  /**
   * Creates the record on first sight; later calls refresh the normalised order, and the payload while the
   * order is before dispatch. `timeline`, when given, is noted in the same round trip.
   *
   * `version` is the order's own last-modified time as the shop signed it (Shopify updated_at, WooCommerce
   * date_modified): an event older than the version already applied (a late delivery of an earlier update)
   * refreshes nothing. It is noted on the timeline as ignored, and the answer carries `olderThanApplied`.
   */
  async recordEvent(input: {
    meta: Omit<OrderMeta, 'firstSeenAt' | 'generation'>;
    payload: unknown;
    order?: StoreOrder;
    version?: string;
    now: Date;
    timeline?: TimelineEntry;
  }): Promise<OrderRecord & { olderThanApplied?: { version: string; applied: string } }> {
    const id = input.meta.externalOrderId;
    const at = input.now.toISOString();
    const meta: OrderMeta = { ...input.meta, firstSeenAt: at, generation: 0 };
    const versionMs = input.version === undefined ? Number.NaN : Date.parse(input.version);
    const ignored: TimelineEntry | undefined = input.timeline && {
      ...input.timeline,
      outcome: 'ignored_older',
      detail: `the order in this event was last modified ${input.version}, before the version already applied; nothing was changed`,
    };
    const fields = (await this.redis.eval(
      RECORD_EVENT_SCRIPT,
      3,
      this.orderKey(id),
      this.shopIndexKey(input.meta.shopId),
      this.timelineKey(id),
      JSON.stringify(meta),
      JSON.stringify({ value: 'received', at }),
      JSON.stringify(input.payload),
      input.order ? JSON.stringify(input.order) : '',
      String(input.now.getTime()),
      id,
      input.timeline ? JSON.stringify(input.timeline) : '',
      String(this.options.timelineLength),
      Number.isFinite(versionMs) ? String(versionMs) : '',
      ignored ? JSON.stringify(ignored) : '',
      ...BEFORE_DISPATCH_STATES,
    )) as (string | null)[];
    const record = parseRecord(fields)!;
    const applied = fields[RECORD_FIELDS.length];
    if (typeof applied !== 'string') return record;
    return { ...record, olderThanApplied: { version: new Date(versionMs).toISOString(), applied: new Date(Number(applied)).toISOString() } };
  }

  /**
   * Moves the order to `state`. Returns false, changing nothing, when `canMove` (domain/order-state.ts)
   * refuses it: out of a final state, or from a dispatched state back before dispatch (see `moveState`).
   */
  async setState(externalOrderId: string, state: OrderState, now: Date): Promise<boolean> {
    return this.moveState(externalOrderId, state, now);
  }

  /** Holds the order with its reason; false, changing nothing, when the order has been shipped already. */
  async hold(externalOrderId: string, reason: HoldReason, now: Date): Promise<boolean> {
    return this.moveState(externalOrderId, 'held', now, { ...reason, at: now.toISOString() });
  }

  /**
   * One state change and what goes with it (hold reason and held index, payload, in-flight index, expiry),
   * applied in Redis only if `canMove` allows it from the order's current state: a delivered, returned or
   * cancelled order never leaves that state, and an order marked ready (or further) never goes back to
   * received, waiting, held or dispatching. A worker that lost its order lease (frozen past
   * it, then resumed) may still finish its steps and ask for such a move; found by the long chaos suite
   * (test/chaos/worker-kill.test.ts), where a resumed worker held an order another worker had made ready.
   */
  private async moveState(externalOrderId: string, state: OrderState, now: Date, hold?: HoldReason & { at: string }): Promise<boolean> {
    const moved = await this.redis.eval(
      MOVE_STATE_SCRIPT,
      5,
      this.orderKey(externalOrderId),
      this.heldKey,
      this.inFlightKey,
      this.timelineKey(externalOrderId),
      this.unreadyKey,
      JSON.stringify({ value: state, at: now.toISOString() }),
      hold ? JSON.stringify(hold) : '',
      String(now.getTime()),
      externalOrderId,
      BEFORE_DISPATCH_STATES.has(state) ? '1' : '0',
      FINAL_STATES.has(state) ? String(this.options.retentionDays * 86_400) : '',
      ...statesRefusingMoveTo(state),
    );
    return moved === 1;
  }

  async save(externalOrderId: string, field: Exclude<Field, 'meta' | 'state' | 'hold' | 'shipment'>, value: unknown): Promise<void> {
    await this.redis.hset(this.orderKey(externalOrderId), field, JSON.stringify(value));
  }

  /**
   * Saves what the service said of the shipment, and follows the order until it is final (the polling
   * fallback for lost webhooks). A shipment whose markReady was recorded is never saved back without it: a
   * worker that lost its lease may report the createShipment answer it was waiting for after another worker
   * marked the same shipment ready. Returns false when refused. A shipment without a recorded markReady is
   * kept in the unready index (the watchdog's input) until one is recorded or the order ends.
   */
  async saveShipment(externalOrderId: string, shipment: ShipmentProgress): Promise<boolean> {
    const saved = await this.redis.eval(
      SAVE_SHIPMENT_SCRIPT, 3, this.orderKey(externalOrderId), this.inFlightKey, this.unreadyKey,
      JSON.stringify(shipment), shipment.shipmentId, shipment.markedReadyAt === undefined ? '0' : '1', String(Date.now()), externalOrderId,
    );
    return saved === 1;
  }

  /**
   * Orders whose shipment has no recorded markReady since before `createdBefore`, oldest first, with the
   * time each was saved unready (the watchdog: whatever the service calls the shipment's state).
   */
  async listUnready(createdBefore: Date, limit = 1000): Promise<Array<{ externalOrderId: string; since: Date }>> {
    const flat = await this.redis.zrangebyscore(this.unreadyKey, '-inf', createdBefore.getTime(), 'WITHSCORES', 'LIMIT', 0, limit);
    const found: Array<{ externalOrderId: string; since: Date }> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) found.push({ externalOrderId: flat[i]!, since: new Date(Number(flat[i + 1])) });
    return found;
  }

  /** How many orders have a shipment with no recorded markReady since before `createdBefore`. */
  async countUnready(createdBefore: Date): Promise<number> {
    return this.redis.zcount(this.unreadyKey, '-inf', createdBefore.getTime());
  }

  /** Orders with a live shipment, oldest first (the polling fallback walks them at a bounded rate). */
  async listInFlight(limit: number): Promise<string[]> {
    return this.redis.zrange(this.inFlightKey, 0, limit - 1);
  }

  /** Moves an order to the back of the polling line once it has been polled. */
  async touchInFlight(externalOrderId: string, now: Date): Promise<void> {
    await this.redis.zadd(this.inFlightKey, 'XX', now.getTime(), externalOrderId);
  }

  /** Starts a new generation for a replay; returns it. */
  async bumpGeneration(externalOrderId: string): Promise<number> {
    const record = await this.get(externalOrderId);
    if (!record) throw new Error(`unknown order ${externalOrderId}`);
    const meta = { ...record.meta, generation: record.meta.generation + 1 };
    await this.redis.hset(this.orderKey(externalOrderId), 'meta', JSON.stringify(meta));
    return meta.generation;
  }

  async listHeld(limit = 500): Promise<OrderRecord[]> {
    const ids = await this.redis.zrange(this.heldKey, 0, limit - 1);
    const records = await Promise.all(ids.map((id) => this.get(id)));
    return records.filter((r): r is OrderRecord => r !== undefined && r.state === 'held');
  }

  async listShopOrders(shopId: string, options: { since?: Date; limit?: number } = {}): Promise<string[]> {
    return this.redis.zrangebyscore(
      this.shopIndexKey(shopId),
      options.since ? options.since.getTime() : '-inf',
      '+inf',
      'LIMIT',
      0,
      options.limit ?? 10_000,
    );
  }

  /**
   * Drops from the shop's index the orders first seen longer ago than the retention: their records have
   * expired (finished orders) or are still listed where they matter (held, in flight). Without this the
   * index would grow by one entry per order for ever. Returns how many entries were removed.
   */
  async trimShopIndex(shopId: string, now: Date): Promise<number> {
    return this.redis.zremrangebyscore(this.shopIndexKey(shopId), '-inf', `(${now.getTime() - this.options.retentionDays * 86_400_000}`);
  }

  async appendTimeline(externalOrderId: string, entry: TimelineEntry): Promise<void> {
    const key = this.timelineKey(externalOrderId);
    await this.redis.multi().lpush(key, JSON.stringify(entry)).ltrim(key, 0, this.options.timelineLength - 1).exec();
  }

  async timeline(externalOrderId: string): Promise<TimelineEntry[]> {
    const items = await this.redis.lrange(this.timelineKey(externalOrderId), 0, -1);
    return items.map((i) => JSON.parse(i) as TimelineEntry).reverse();
  }

  /**
   * Compliance, customers/redact: drop the personal data Relais keeps for these orders: the raw payload and the
   * normalised order (names, phones, addresses). The shipment reference and amounts stay: they carry no personal
   * data and the merchant's accounting needs them. Each order is found by its key, however old (never through the
   * shop index, which only lists the retention window); pipelined in batches, so thousands cost a few round trips.
   */
  async redactOrders(externalOrderIds: string[]): Promise<number> {
    let count = 0;
    for (let i = 0; i < externalOrderIds.length; i += SCAN_BATCH) {
      const pipeline = this.redis.pipeline();
      for (const id of externalOrderIds.slice(i, i + SCAN_BATCH)) pipeline.hdel(this.orderKey(id), 'payload', 'order');
      for (const [error, removed] of (await pipeline.exec()) ?? []) {
        if (error) throw error;
        if (typeof removed === 'number' && removed > 0) count += 1;
      }
    }
    return count;
  }

  /**
   * Compliance, shop/redact (48 h after the shop uninstalled the app): erase every record of the shop, however
   * old and however many: the order hashes and timelines are found by SCAN over their keys (external ids are
   * `<shopId>:<orderId>`, and a shop id holds no ':', so `<p>:order:<shopId>:*` is exactly this shop's), then
   * deleted with their entries in the held, in-flight and unready indexes, a batch per round trip; the shop index
   * goes last. Whole records, not only the personal fields: the shop has left, and nothing of it is dispatched,
   * followed or reconciled any more. Returns how many orders were erased.
   */
  async eraseShop(shopId: string): Promise<number> {
    if (!SHOP_ID_PATTERN.test(shopId)) throw new Error(`invalid shop id "${shopId}"`);
    let erased = 0;
    for await (const keys of this.scanKeys(`${globEscape(this.prefix)}:order:${shopId}:*`)) {
      const ids = keys.map((key) => key.slice(this.orderKey('').length));
      const results = await this.redis
        .pipeline()
        .del(...keys)
        .del(...ids.map((id) => this.timelineKey(id)))
        .zrem(this.heldKey, ...ids)
        .zrem(this.inFlightKey, ...ids)
        .zrem(this.unreadyKey, ...ids)
        .exec();
      for (const [error] of results ?? []) if (error) throw error;
      // SCAN may give a key twice: count what DEL removed, not what SCAN listed.
      erased += Number(results?.[0]?.[1] ?? 0);
    }
    // Timelines whose order hash was already gone (expired separately, or a partial earlier erasure).
    for await (const keys of this.scanKeys(`${globEscape(this.prefix)}:timeline:${shopId}:*`)) await this.redis.del(...keys);
    await this.redis.del(this.shopIndexKey(shopId));
    return erased;
  }

  /**
   * Orders with no final state first seen before `firstSeenBefore`, oldest first. Such an order never expires
   * (only finished ones do) and drops out of the shop index after the retention, so every order key is walked
   * (SCAN, a pipelined read of meta and state per batch): an operator's query, not a hot path.
   */
  async listStale(firstSeenBefore: Date, options: { shopId?: string } = {}): Promise<StaleOrder[]> {
    const bound = firstSeenBefore.getTime();
    const found = new Map<string, StaleOrder>();
    const pattern = `${globEscape(this.prefix)}:order:${options.shopId === undefined ? '' : `${options.shopId}:`}*`;
    for await (const keys of this.scanKeys(pattern)) {
      const pipeline = this.redis.pipeline();
      for (const key of keys) pipeline.hmget(key, 'meta', 'state', 'hold');
      for (const [error, values] of (await pipeline.exec()) ?? []) {
        if (error) throw error;
        const [meta, state, hold] = (values as (string | null)[]).map((v) => (v === null ? undefined : (JSON.parse(v) as unknown)));
        if (!meta || !state) continue;
        const m = meta as OrderMeta;
        const st = state as { value: OrderState; at: string };
        if (FINAL_STATES.has(st.value) || !(Date.parse(m.firstSeenAt) < bound)) continue;
        // A Map: SCAN may give a key twice.
        found.set(m.externalOrderId, {
          externalOrderId: m.externalOrderId, shopId: m.shopId, orderName: m.orderName, state: st.value, firstSeenAt: m.firstSeenAt, stateChangedAt: st.at,
          ...(hold ? { holdCode: (hold as HoldReason).code } : {}),
        });
      }
    }
    return [...found.values()].sort((a, b) => a.firstSeenAt.localeCompare(b.firstSeenAt) || a.externalOrderId.localeCompare(b.externalOrderId));
  }

  /**
   * The operator ends an order that never reached a final state: it becomes `cancelled` in Relais only (no call
   * to the delivery service, nothing written to the shop), leaves the held, in-flight and unready indexes, and
   * expires after the retention like any finished order. Its timeline says it was closed, by whom, from which
   * state and why. Refused for an unknown order, a finished one, or one first seen after `firstSeenBefore`.
   */
  async closeStale(externalOrderId: string, input: { reason: string; by: string; now: Date; firstSeenBefore: Date }): Promise<CloseStaleResult> {
    const record = await this.get(externalOrderId);
    if (!record) return { ok: false, why: 'unknown_order', detail: `no order ${externalOrderId} in the ledger` };
    if (FINAL_STATES.has(record.state)) return { ok: false, why: 'already_final', detail: `order ${externalOrderId} is already ${record.state}` };
    if (!(Date.parse(record.meta.firstSeenAt) < input.firstSeenBefore.getTime())) {
      return { ok: false, why: 'not_stale', detail: `order ${externalOrderId} was first seen ${record.meta.firstSeenAt}, after ${input.firstSeenBefore.toISOString()}` };
    }
    if (!(await this.moveState(externalOrderId, 'cancelled', input.now))) {
      return { ok: false, why: 'already_final', detail: `order ${externalOrderId} changed state meanwhile` };
    }
    await this.appendTimeline(externalOrderId, {
      at: input.now.toISOString(), system: 'relais', operation: 'close', outcome: 'closed_by_operator',
      detail: `closed by ${input.by} from state ${record.state} (no final state since ${record.meta.firstSeenAt}): ${input.reason}. Nothing was sent to the delivery service or the shop.`,
    });
    // The state change gave an existing timeline the order's expiry; a timeline that had expired on its own was
    // just recreated by the entry above, without one.
    await this.redis.expire(this.timelineKey(externalOrderId), this.options.retentionDays * 86_400);
    return { ok: true, previousState: record.state };
  }

  /** The keys matching `pattern`, a SCAN step at a time (SCAN may give a key more than once: callers cope). */
  private async *scanKeys(pattern: string): AsyncGenerator<string[]> {
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_BATCH);
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== '0');
  }
}

/** A Redis glob matching `text` literally (the prefix may hold glob characters). */
function globEscape(text: string): string {
  return text.replace(/[*?[\\\]]/g, (c) => `\\${c}`);
}

/** A record from its fields as HMGET answers them (RECORD_FIELDS order). */
function parseRecord(values: (string | null)[]): OrderRecord | undefined {
  const raw = Object.fromEntries(RECORD_FIELDS.map((field, i) => [field, values[i] ?? null])) as Record<(typeof RECORD_FIELDS)[number], string | null>;
  if (!raw.meta || !raw.state) return undefined;
  const parse = <T>(field: (typeof RECORD_FIELDS)[number]): T | undefined => (raw[field] ? (JSON.parse(raw[field]) as T) : undefined);
  const state = parse<{ value: OrderState; at: string }>('state')!;
  return {
    meta: parse<OrderMeta>('meta')!,
    state: state.value,
    stateChangedAt: state.at,
    hold: parse('hold'),
    order: parse('order'),
    neighbourhood: parse('neighbourhood'),
    quote: parse('quote'),
    shipment: parse('shipment'),
    delivery: parse('delivery'),
    door: parse('door'),
  };
}
