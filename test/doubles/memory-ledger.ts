/**
 * An OrderLedger in memory, for unit tests of the use cases (src/orders/...) that need a ledger but not a database.
 *
 * It is a test double that is proven: it passes the same contract suite as the PostgreSQL adapter
 * (test/contracts/order-ledger.contract.ts, run by test/doubles/memory-ledger.test.ts), so a use case tested on
 * it sees the rules the real ledger enforces: no move out of a final state, out of `held` for mere progress, or
 * from a dispatched state back before ready (src/domain/order-state.ts); a recorded markReady never replaced;
 * an event older than the version applied (or of the same version, received earlier) ignored.
 *
 * Each method mirrors one statement of src/adapters/postgres/pg-ledger.ts and applies it at once, when called:
 * writes land in the order they were issued, as PostgresOrderLedger's per-order chaining guarantees. Values go
 * in and out as JSON, as they do through jsonb, so a caller never shares an object with the store.
 *
 * Several ledgers may share one store (`MemoryLedgerStore`), as several workers share one database.
 */
import { SHOP_ID_PATTERN } from '../../src/domain/ids.js';
import type { HoldReason } from '../../src/domain/order.js';
import {
  BEFORE_DISPATCH_STATES,
  FINAL_STATES,
  statesRefusingMoveTo,
  type MoveCause,
  type OrderState,
} from '../../src/domain/order-state.js';
import {
  DEFAULT_RETENTION_DAYS,
  DEFAULT_TIMELINE_LENGTH,
  type CloseStaleResult,
  type KnownClaim,
  type OrderChange,
  type OrderLedger,
  type OrderMeta,
  type OrderRecord,
  type RecordedEvent,
  type SavedField,
  type ShipmentProgress,
  type StaleOrder,
  type TimelineEntry,
} from '../../src/ledger/order-ledger.js';

/** One order as the `orders` table keeps it: the record's parts, and the columns the lookups read. */
interface StoredOrder {
  meta: Omit<OrderMeta, 'firstSeenAt'>;
  firstSeenAt: number;
  state: OrderState;
  stateChangedAt: number;
  saved: Partial<Record<SavedField | 'shipment' | 'hold', unknown>>;
  heldAt: number | null;
  versionMs: number | null;
  versionReceivedMs: number | null;
  inFlightSince: number | null;
  unreadySince: number | null;
  finishedAt: number | null;
  personalDataErasedAt: number | null;
  shipmentRequestedAt: number | null;
}

interface StoredLine {
  externalOrderId: string;
  shopId: string;
  entry: TimelineEntry;
}

interface StoredClaim {
  externalOrderId: string;
  shopId: string;
  key: string;
  claim: unknown;
  decided: boolean;
  seenAt: number;
}

/** What the database holds: share one between ledgers to play several workers on one store. */
export class MemoryLedgerStore {
  readonly orders = new Map<string, StoredOrder>();
  readonly timeline: StoredLine[] = [];
  readonly claims = new Map<string, StoredClaim>();
}

export interface MemoryLedgerOptions {
  retentionDays?: number;
  timelineLength?: number;
}

/** A value as jsonb gives it back: a copy, with undefined fields dropped (undefined itself becomes null). */
function json<T>(value: T): T {
  return value === undefined ? (null as T) : (JSON.parse(JSON.stringify(value)) as T);
}

function msOrNull(iso: string | undefined): number | null {
  const ms = iso === undefined ? Number.NaN : Date.parse(iso);
  return Number.isFinite(ms) ? ms : null;
}

/** The shop of an order id that carries no meta (split_part(id, ':', 1) in SQL). */
const shopOf = (externalOrderId: string) => externalOrderId.split(':')[0] ?? '';

/** Ascending, nulls last, then by id: ORDER BY <time>, external_order_id. */
function byTimeThenId(time: (o: StoredOrder) => number | null) {
  return (a: StoredOrder, b: StoredOrder) => {
    const [x, y] = [time(a) ?? Infinity, time(b) ?? Infinity];
    return x !== y ? x - y : a.meta.externalOrderId < b.meta.externalOrderId ? -1 : 1;
  };
}

/** Whether an event (version v, received r) is older than the one applied: SQL's NULLs never make it older. */
function isOlder(v: number | null, r: number | null, applied: StoredOrder | undefined): boolean {
  if (!applied || v === null || applied.versionMs === null) return false;
  if (v < applied.versionMs) return true;
  return v === applied.versionMs && r !== null && applied.versionReceivedMs !== null && r < applied.versionReceivedMs;
}

export class MemoryOrderLedger implements OrderLedger {
  readonly retentionDays: number;
  private readonly timelineLength: number;

  constructor(
    readonly store: MemoryLedgerStore = new MemoryLedgerStore(),
    options: MemoryLedgerOptions = {},
  ) {
    this.retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
    this.timelineLength = options.timelineLength ?? DEFAULT_TIMELINE_LENGTH;
  }

  async get(externalOrderId: string): Promise<OrderRecord | undefined> {
    const row = this.store.orders.get(externalOrderId);
    return row && toRecord(row);
  }

  async getMany(externalOrderIds: readonly string[]): Promise<Array<OrderRecord | undefined>> {
    return externalOrderIds.map((id) => {
      const row = this.store.orders.get(id);
      return row && toRecord(row);
    });
  }

  async payload(externalOrderId: string): Promise<unknown> {
    return json(this.store.orders.get(externalOrderId)?.saved.payload) ?? undefined;
  }

  async keepPayload(externalOrderId: string, payload: unknown): Promise<boolean> {
    const row = this.store.orders.get(externalOrderId);
    if (!row || !BEFORE_DISPATCH_STATES.has(row.state)) return false;
    row.saved.payload = json(payload);
    return true;
  }

  async recordEvent(input: Parameters<OrderLedger['recordEvent']>[0]): ReturnType<OrderLedger['recordEvent']> {
    const { meta, now } = input;
    const version = msOrNull(input.version);
    const receivedAt = msOrNull(input.receivedAt);
    const prior = this.store.orders.get(meta.externalOrderId);
    const older = isOlder(version, receivedAt, prior);
    const row = prior ?? this.created(meta, now);
    const requestedBefore = row.shipmentRequestedAt;
    if (input.shipmentMayFollow && !older && (row.state === 'received' || row.state === 'waiting'))
      row.shipmentRequestedAt ??= now.getTime();
    if (!prior) {
      row.saved.payload = input.payload === undefined ? null : json(input.payload);
      if (input.order) row.saved.order = json(input.order);
      row.versionMs = version;
      row.versionReceivedMs = version === null ? null : receivedAt;
    } else if (!older) {
      if (BEFORE_DISPATCH_STATES.has(row.state) && input.payload !== undefined) row.saved.payload = json(input.payload);
      if (input.order) row.saved.order = json(input.order);
      if (version !== null) [row.versionMs, row.versionReceivedMs] = [version, receivedAt];
    }
    if (input.timeline) {
      const entry = older
        ? {
            ...input.timeline,
            outcome: 'ignored_older',
            detail: `the order in this event was last modified ${input.version}, before the version already applied (or in the same second, and received before it); nothing was changed`,
          }
        : input.timeline;
      this.note(meta.externalOrderId, entry, meta.shopId);
    }
    const { shipmentRequestedAt: _noted, ...recorded } = toRecord(row);
    const record: RecordedEvent = {
      ...recorded,
      ...(requestedBefore === null ? {} : { shipmentRequestedAt: new Date(requestedBefore).toISOString() }),
      ...(input.shipmentMayFollow && row.shipmentRequestedAt !== null ? { shipmentRequestNoted: true } : {}),
    };
    if (!older || version === null || prior?.versionMs == null) return record;
    return {
      ...record,
      olderThanApplied: { version: new Date(version).toISOString(), applied: new Date(prior.versionMs).toISOString() },
    };
  }

  private created(meta: Omit<OrderMeta, 'firstSeenAt' | 'generation'>, now: Date): StoredOrder {
    const row: StoredOrder = {
      meta: {
        externalOrderId: meta.externalOrderId,
        shopId: meta.shopId,
        platform: meta.platform,
        orderId: meta.orderId,
        orderName: meta.orderName,
        generation: 0,
      },
      firstSeenAt: now.getTime(),
      state: 'received',
      stateChangedAt: now.getTime(),
      saved: {},
      heldAt: null,
      versionMs: null,
      versionReceivedMs: null,
      inFlightSince: null,
      unreadySince: null,
      finishedAt: null,
      personalDataErasedAt: null,
      shipmentRequestedAt: null,
    };
    this.store.orders.set(meta.externalOrderId, row);
    return row;
  }

  async setState(externalOrderId: string, state: OrderState, now: Date, cause: MoveCause = 'progress') {
    return this.moveState(externalOrderId, state, now, null, cause);
  }

  async hold(externalOrderId: string, reason: HoldReason, now: Date): Promise<boolean> {
    return this.moveState(externalOrderId, 'held', now, { ...reason, at: now.toISOString() }, 'progress');
  }

  private moveState(
    externalOrderId: string,
    state: OrderState,
    now: Date,
    hold: (HoldReason & { at: string }) | null,
    cause: MoveCause,
  ): boolean {
    const row = this.store.orders.get(externalOrderId);
    if (!row || statesRefusingMoveTo(state, cause).includes(row.state)) return false;
    row.state = state;
    row.stateChangedAt = now.getTime();
    row.saved.hold = json(hold);
    row.heldAt = hold ? now.getTime() : null;
    if (!BEFORE_DISPATCH_STATES.has(state)) row.saved.payload = null;
    if (FINAL_STATES.has(state)) this.finish(row, now.getTime());
    return true;
  }

  /** A final state ends the order's following: out of the in-flight and unready lists, finished from now. */
  private finish(row: StoredOrder, at: number): void {
    row.inFlightSince = null;
    row.unreadySince = null;
    row.finishedAt ??= at;
  }

  async save(externalOrderId: string, field: SavedField, value: unknown): Promise<void> {
    const row = this.store.orders.get(externalOrderId);
    if (row) row.saved[field] = json(value);
  }

  async saveShipment(externalOrderId: string, shipment: ShipmentProgress): Promise<boolean> {
    const row = this.store.orders.get(externalOrderId);
    if (!row || !mayReplaceShipment(row, shipment)) return false;
    this.putShipment(row, shipment, Date.now());
    return true;
  }

  /** The shipment, and the in-flight and unready lists it joins or leaves (as of the row before it). */
  private putShipment(row: StoredOrder, shipment: ShipmentProgress, at: number): void {
    const marked = shipment.markedReadyAt !== undefined;
    row.saved.shipment = json(shipment);
    row.inFlightSince = row.finishedAt === null ? (row.inFlightSince ?? at) : null;
    row.unreadySince = marked || row.finishedAt !== null ? null : (row.unreadySince ?? at);
  }

  async apply(externalOrderId: string, change: OrderChange): Promise<void> {
    const { state, shipment, now } = change;
    for (const entry of change.timeline ?? []) this.note(externalOrderId, entry);
    const row = this.store.orders.get(externalOrderId);
    if (!row) return;
    // Both decided on the row as it stood before this step, as one UPDATE does.
    const moves = state !== undefined && !statesRefusingMoveTo(state, 'resolution').includes(row.state);
    const ships = shipment !== undefined && mayReplaceShipment(row, shipment);
    for (const [field, value] of Object.entries(change.saved ?? {})) row.saved[field as SavedField] = json(value);
    if (change.shipmentRequested) row.shipmentRequestedAt ??= now.getTime();
    if (moves) {
      row.state = state;
      row.stateChangedAt = now.getTime();
      row.saved.hold = null;
      row.heldAt = null;
      if (!BEFORE_DISPATCH_STATES.has(state)) row.saved.payload = null;
    }
    if (moves && FINAL_STATES.has(state)) {
      row.saved.shipment = ships ? json(shipment) : row.saved.shipment;
      this.finish(row, now.getTime());
    } else if (ships) {
      this.putShipment(row, shipment, now.getTime());
    }
  }

  async bumpGeneration(externalOrderId: string): Promise<number> {
    const row = this.store.orders.get(externalOrderId);
    if (!row) throw new Error(`unknown order ${externalOrderId}`);
    row.meta.generation += 1;
    return row.meta.generation;
  }

  async listUnready(createdBefore: Date, limit = 1000): Promise<Array<{ externalOrderId: string; since: Date }>> {
    return this.unready(createdBefore)
      .slice(0, limit)
      .map((row) => ({ externalOrderId: row.meta.externalOrderId, since: new Date(row.unreadySince!) }));
  }

  async countUnready(createdBefore: Date): Promise<number> {
    return this.unready(createdBefore).length;
  }

  private unready(createdBefore: Date): StoredOrder[] {
    return this.rows((row) => row.unreadySince !== null && row.unreadySince <= createdBefore.getTime()).sort(
      byTimeThenId((row) => row.unreadySince),
    );
  }

  async listInFlight(limit: number): Promise<Array<{ externalOrderId: string; shopId: string; shipmentId: string }>> {
    return this.rows((row) => row.inFlightSince !== null)
      .sort(byTimeThenId((row) => row.inFlightSince))
      .slice(0, limit)
      .map((row) => ({
        externalOrderId: row.meta.externalOrderId,
        shopId: row.meta.shopId,
        shipmentId: (row.saved.shipment as ShipmentProgress | null)?.shipmentId as string,
      }));
  }

  async touchInFlight(externalOrderId: string, now: Date): Promise<void> {
    const row = this.store.orders.get(externalOrderId);
    if (row && row.inFlightSince !== null) row.inFlightSince = now.getTime();
  }

  async listHeld(limit = 500): Promise<OrderRecord[]> {
    return this.rows((row) => row.state === 'held')
      .sort(byTimeThenId((row) => row.heldAt))
      .reverse()
      .slice(0, limit)
      .map(toRecord);
  }

  async listHeldPage(options: { shopId?: string; after?: string; limit: number }): Promise<OrderRecord[]> {
    const { shopId, after } = options;
    return this.rows(
      (row) =>
        row.state === 'held' &&
        (shopId === undefined || row.meta.shopId === shopId) &&
        (after === undefined || row.meta.externalOrderId > after),
    )
      .sort((a, b) => (a.meta.externalOrderId < b.meta.externalOrderId ? -1 : 1))
      .slice(0, options.limit)
      .map(toRecord);
  }

  async listShopOrders(shopId: string, options: { since?: Date; limit?: number } = {}): Promise<string[]> {
    const since = options.since?.getTime() ?? -Infinity;
    return this.rows((row) => row.meta.shopId === shopId && row.firstSeenAt >= since)
      .sort(byTimeThenId((row) => row.firstSeenAt))
      .slice(0, options.limit ?? 10_000)
      .map((row) => row.meta.externalOrderId);
  }

  async appendTimeline(externalOrderId: string, entry: TimelineEntry): Promise<void> {
    this.note(externalOrderId, entry);
  }

  async timeline(externalOrderId: string): Promise<TimelineEntry[]> {
    const lines = this.store.timeline.filter((line) => line.externalOrderId === externalOrderId);
    return lines.slice(-this.timelineLength).map((line) => json(line.entry));
  }

  /** A timeline line as order_timeline keeps it: its time normalised, no empty duration or detail. */
  private note(externalOrderId: string, entry: TimelineEntry, shopId = shopOf(externalOrderId)): void {
    const { ms, detail, ...line } = entry;
    this.store.timeline.push({
      externalOrderId,
      shopId,
      entry: {
        ...line,
        at: new Date(entry.at).toISOString(),
        ...(ms === undefined ? {} : { ms }),
        ...(detail === undefined ? {} : { detail }),
      },
    });
  }

  async ordersWithClaims(externalOrderIds: readonly string[]): Promise<Set<string>> {
    const wanted = new Set(externalOrderIds);
    return new Set([...this.store.claims.values()].map((c) => c.externalOrderId).filter((id) => wanted.has(id)));
  }

  async knownClaims<T>(externalOrderId: string): Promise<Array<KnownClaim<T>>> {
    return [...this.store.claims.values()]
      .filter((c) => c.externalOrderId === externalOrderId)
      .sort((a, b) => a.seenAt - b.seenAt || (a.key < b.key ? -1 : 1))
      .map((c) => ({ key: c.key, claim: json(c.claim) as T, decided: c.decided }));
  }

  async saveClaim<T>(externalOrderId: string, claim: KnownClaim<T>, now: Date): Promise<{ newlyDecided: boolean }> {
    const id = `${externalOrderId}\n${claim.key}`;
    const kept = this.store.claims.get(id);
    if (kept) kept.claim = json(claim.claim);
    else {
      const { key } = claim;
      const seenAt = now.getTime();
      this.store.claims.set(id, {
        externalOrderId,
        shopId: shopOf(externalOrderId),
        key,
        claim: json(claim.claim),
        decided: false,
        seenAt,
      });
    }
    const stored = this.store.claims.get(id)!;
    if (!claim.decided || stored.decided) return { newlyDecided: false };
    stored.decided = true;
    return { newlyDecided: true };
  }

  async redactOrders(externalOrderIds: string[]): Promise<number> {
    const wanted = new Set(externalOrderIds);
    const rows = this.rows(
      (row) => wanted.has(row.meta.externalOrderId) && (row.saved.payload != null || row.saved.order != null),
    );
    for (const row of rows) this.erasePersonalData(row, row.personalDataErasedAt ?? Date.now());
    return rows.length;
  }

  async erasePersonalDataOfFinished(finishedBefore: Date): Promise<number> {
    const rows = this.rows(
      (row) =>
        row.finishedAt !== null && row.finishedAt < finishedBefore.getTime() && row.personalDataErasedAt === null,
    );
    for (const row of rows) this.erasePersonalData(row, Date.now());
    return rows.length;
  }

  private erasePersonalData(row: StoredOrder, at: number): void {
    row.saved.payload = null;
    row.saved.order = null;
    row.personalDataErasedAt = at;
  }

  async eraseShop(shopId: string): Promise<number> {
    if (!SHOP_ID_PATTERN.test(shopId)) throw new Error(`invalid shop id "${shopId}"`);
    const kept = this.store.timeline.filter((line) => line.shopId !== shopId);
    this.store.timeline.splice(0, this.store.timeline.length, ...kept);
    for (const [id, claim] of this.store.claims) if (claim.shopId === shopId) this.store.claims.delete(id);
    const erased = this.rows((row) => row.meta.shopId === shopId);
    for (const row of erased) this.store.orders.delete(row.meta.externalOrderId);
    return erased.length;
  }

  async listStale(firstSeenBefore: Date, options: { shopId?: string } = {}): Promise<StaleOrder[]> {
    const { shopId } = options;
    return this.rows(
      (row) =>
        row.finishedAt === null &&
        row.firstSeenAt < firstSeenBefore.getTime() &&
        !FINAL_STATES.has(row.state) &&
        (shopId === undefined || row.meta.shopId === shopId),
    )
      .sort(byTimeThenId((row) => row.firstSeenAt))
      .map((row) => {
        const hold = row.saved.hold as HoldReason | null | undefined;
        return {
          externalOrderId: row.meta.externalOrderId,
          shopId: row.meta.shopId,
          orderName: row.meta.orderName,
          state: row.state,
          firstSeenAt: new Date(row.firstSeenAt).toISOString(),
          stateChangedAt: new Date(row.stateChangedAt).toISOString(),
          ...(hold ? { holdCode: hold.code } : {}),
        };
      });
  }

  async closeStale(
    externalOrderId: string,
    input: { reason: string; by: string; now: Date; firstSeenBefore: Date },
  ): Promise<CloseStaleResult> {
    const row = this.store.orders.get(externalOrderId);
    if (!row) return { ok: false, why: 'unknown_order', detail: `no order ${externalOrderId} in the ledger` };
    if (FINAL_STATES.has(row.state))
      return { ok: false, why: 'already_final', detail: `order ${externalOrderId} is already ${row.state}` };
    const firstSeenAt = new Date(row.firstSeenAt).toISOString();
    if (!(row.firstSeenAt < input.firstSeenBefore.getTime())) {
      const detail = `order ${externalOrderId} was first seen ${firstSeenAt}, after ${input.firstSeenBefore.toISOString()}`;
      return { ok: false, why: 'not_stale', detail };
    }
    const previousState = row.state;
    row.state = 'cancelled';
    row.stateChangedAt = input.now.getTime();
    row.saved.hold = null;
    row.heldAt = null;
    row.saved.payload = null;
    this.finish(row, input.now.getTime());
    this.note(externalOrderId, {
      at: input.now.toISOString(),
      system: 'relais',
      operation: 'close',
      outcome: 'closed_by_operator',
      detail: `closed by ${input.by} from state ${previousState} (no final state since ${firstSeenAt}): ${input.reason}. Nothing was sent to the delivery service or the shop.`,
    });
    return { ok: true, previousState };
  }

  private rows(keep: (row: StoredOrder) => boolean): StoredOrder[] {
    return [...this.store.orders.values()].filter(keep);
  }
}

/** A shipment saved without its markReady never replaces the same shipment saved with one. */
function mayReplaceShipment(row: StoredOrder, shipment: ShipmentProgress): boolean {
  const kept = row.saved.shipment as ShipmentProgress | null | undefined;
  return (
    shipment.markedReadyAt !== undefined ||
    !kept ||
    kept.shipmentId !== shipment.shipmentId ||
    kept.markedReadyAt == null
  );
}

function toRecord(row: StoredOrder): OrderRecord {
  const record: OrderRecord = {
    meta: { ...row.meta, firstSeenAt: new Date(row.firstSeenAt).toISOString() },
    state: row.state,
    stateChangedAt: new Date(row.stateChangedAt).toISOString(),
  };
  const parts = ['hold', 'order', 'neighbourhood', 'quote', 'shipment', 'delivery', 'door'] as const;
  for (const part of parts) {
    const value = row.saved[part];
    if (value != null) (record as unknown as Record<string, unknown>)[part] = json(value);
  }
  if (row.shipmentRequestedAt !== null) record.shipmentRequestedAt = new Date(row.shipmentRequestedAt).toISOString();
  return record;
}
