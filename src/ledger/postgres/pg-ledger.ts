/**
 * The order ledger in PostgreSQL (the port: src/ledger/order-ledger.ts; the tables: migrations.ts).
 *
 * Each method is one statement, or one transaction where it writes two tables, so a step's writes land together
 * or not at all. The state rules of src/domain/order-state.ts are enforced by the statement itself: a state move
 * is an UPDATE whose WHERE refuses the states `statesRefusingMoveTo` lists, and a shipment saved without its
 * markReady cannot replace the same shipment saved with one. Two workers racing on one order therefore cannot
 * move it backwards or replace a recorded markReady, whatever the order their statements arrive in.
 */
import type pg from 'pg';
import { SHOP_ID_PATTERN } from '../../domain/ids.js';
import type { HoldReason, StoreOrder } from '../../domain/order.js';
import {
  BEFORE_DISPATCH_STATES,
  FINAL_STATES,
  statesRefusingMoveTo,
  type MoveCause,
  type OrderState,
} from '../../domain/order-state.js';
import {
  DEFAULT_RETENTION_DAYS,
  DEFAULT_TIMELINE_LENGTH,
  type CloseStaleResult,
  type KnownClaim,
  type OrderChange,
  type OrderLedger,
  type OrderMeta,
  type OrderRecord,
  type SavedField,
  type ShipmentProgress,
  type StaleOrder,
  type TimelineEntry,
} from '../order-ledger.js';
import { inTransaction } from './database.js';

/** A row of `orders` as the record reads it (everything but the payload). */
interface OrderRow {
  external_order_id: string;
  shop_id: string;
  platform: OrderMeta['platform'];
  order_id: string;
  order_name: string;
  first_seen_at: Date;
  generation: number;
  state: OrderState;
  state_changed_at: Date;
  hold: (HoldReason & { at: string }) | null;
  store_order: StoreOrder | null;
  neighbourhood: OrderRecord['neighbourhood'] | null;
  quote: OrderRecord['quote'] | null;
  shipment: OrderRecord['shipment'] | null;
  delivery: OrderRecord['delivery'] | null;
  door: OrderRecord['door'] | null;
  shipment_requested_at: Date | null;
}

const RECORD_COLUMNS =
  'external_order_id, shop_id, platform, order_id, order_name, first_seen_at, generation, state, state_changed_at, hold, store_order, neighbourhood, quote, shipment, delivery, door, shipment_requested_at';

/** Milliseconds since the epoch of an ISO time, or null when absent or unreadable. */
function msOrNull(iso: string | undefined): number | null {
  const ms = iso === undefined ? Number.NaN : Date.parse(iso);
  return Number.isFinite(ms) ? ms : null;
}

/** The column each `save` field is kept in. */
const SAVED_COLUMN: Record<SavedField, string> = {
  order: 'store_order',
  payload: 'payload',
  neighbourhood: 'neighbourhood',
  quote: 'quote',
  delivery: 'delivery',
  door: 'door',
};

const BEFORE_DISPATCH = [...BEFORE_DISPATCH_STATES];
const FINAL = [...FINAL_STATES];

/** Inserts the timeline entry given as a jsonb parameter (skipped when it is null). */
const TIMELINE_FROM_JSON = `INSERT INTO order_timeline (external_order_id, shop_id, at, system, operation, outcome, ms, detail)
  SELECT $1, split_part($1, ':', 1), e.at, e.system, e.operation, e.outcome, e.ms, e.detail
  FROM jsonb_to_record($2::jsonb) AS e(at timestamptz, system text, operation text, outcome text, ms integer, detail text)
  WHERE $2::jsonb IS NOT NULL`;

export interface PostgresLedgerOptions {
  retentionDays?: number;
  /** Timeline entries `timeline()` answers at most (the newest); all are kept. */
  timelineLength?: number;
}

export class PostgresOrderLedger implements OrderLedger {
  readonly retentionDays: number;
  private readonly timelineLength: number;
  /** The last statement issued about each order with one still running (see `inOrder`). */
  readonly #tails = new Map<string, Promise<void>>();

  constructor(
    private readonly pool: pg.Pool,
    options: PostgresLedgerOptions = {},
  ) {
    this.retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
    this.timelineLength = options.timelineLength ?? DEFAULT_TIMELINE_LENGTH;
  }

  async get(externalOrderId: string): Promise<OrderRecord | undefined> {
    const { rows } = await this.inOrder(externalOrderId, () =>
      this.pool.query<OrderRow>(`SELECT ${RECORD_COLUMNS} FROM orders WHERE external_order_id = $1`, [externalOrderId]),
    );
    return rows[0] && toRecord(rows[0]);
  }

  async getMany(externalOrderIds: readonly string[]): Promise<Array<OrderRecord | undefined>> {
    if (externalOrderIds.length === 0) return [];
    const { rows } = await this.pool.query<OrderRow>(
      `SELECT ${RECORD_COLUMNS} FROM orders WHERE external_order_id = ANY($1::text[])`,
      [externalOrderIds],
    );
    const byId = new Map(rows.map((row) => [row.external_order_id, toRecord(row)]));
    return externalOrderIds.map((id) => byId.get(id));
  }

  async payload(externalOrderId: string): Promise<unknown> {
    const { rows } = await this.inOrder(externalOrderId, () =>
      this.pool.query<{ payload: unknown }>('SELECT payload FROM orders WHERE external_order_id = $1', [
        externalOrderId,
      ]),
    );
    return rows[0]?.payload ?? undefined;
  }

  /**
   * One statement: `prior` reads the version applied before it (data-modifying CTEs share one snapshot), the
   * upsert creates the record or refreshes it unless the event is older than that version, and the timeline
   * entry (or its "ignored" variant) is inserted with it.
   */
  async recordEvent(input: Parameters<OrderLedger['recordEvent']>[0]): ReturnType<OrderLedger['recordEvent']> {
    const { meta, now } = input;
    const version = msOrNull(input.version);
    const receivedAt = msOrNull(input.receivedAt);
    const ignored: TimelineEntry | null = input.timeline
      ? {
          ...input.timeline,
          outcome: 'ignored_older',
          detail: `the order in this event was last modified ${input.version}, before the version already applied (or in the same second, and received before it); nothing was changed`,
        }
      : null;
    // An event is older than the one applied when its version is earlier, or the same (shops keep whole seconds:
    // a refund in the second the order was placed) and it was received earlier. Its job can still run later: jobs
    // of one order wait for its lock, and take it in no set order.
    const older = (v: string, r: string, prior: string) =>
      `(${v} < ${prior}.version_ms OR (${v} = ${prior}.version_ms AND ${r} < ${prior}.version_received_ms))`;
    const notOlder = `NOT coalesce(${older('$10::bigint', '$13::bigint', 'o')}, false)`;
    const { rows } = await this.inOrder(input.meta.externalOrderId, () =>
      this.pool.query<OrderRow & { prior_version: string | null; prior_older: boolean | null }>(
        `WITH prior AS (SELECT version_ms, version_received_ms FROM orders WHERE external_order_id = $1),
      upserted AS (
        INSERT INTO orders AS o (external_order_id, shop_id, platform, order_id, order_name, first_seen_at, state, state_changed_at, payload, store_order, version_ms, version_received_ms)
        VALUES ($1, $3, $4, $5, $6, $7, 'received', $7, $8, $9, $10, CASE WHEN $10::bigint IS NULL THEN NULL ELSE $13::bigint END)
        ON CONFLICT (external_order_id) DO UPDATE SET
          payload = CASE WHEN ${notOlder} AND o.state = ANY($11::text[]) THEN EXCLUDED.payload ELSE o.payload END,
          store_order = CASE WHEN ${notOlder} AND EXCLUDED.store_order IS NOT NULL
                             THEN EXCLUDED.store_order ELSE o.store_order END,
          version_ms = CASE WHEN ${notOlder} THEN coalesce($10::bigint, o.version_ms) ELSE o.version_ms END,
          version_received_ms = CASE WHEN ${notOlder} AND $10::bigint IS NOT NULL THEN $13::bigint ELSE o.version_received_ms END
        RETURNING ${RECORD_COLUMNS.split(', ')
          .map((c) => `o.${c}`)
          .join(', ')}
      ),
      judged AS (SELECT coalesce((SELECT ${older('$10::bigint', '$13::bigint', 'prior')} FROM prior), false) AS older),
      noted AS (
        INSERT INTO order_timeline (external_order_id, shop_id, at, system, operation, outcome, ms, detail)
        SELECT $1, $3, e.at, e.system, e.operation, e.outcome, e.ms, e.detail
        FROM jsonb_to_record(CASE WHEN (SELECT older FROM judged) THEN $12::jsonb ELSE $2::jsonb END)
          AS e(at timestamptz, system text, operation text, outcome text, ms integer, detail text)
        WHERE $2::jsonb IS NOT NULL
      )
      SELECT upserted.*, (SELECT version_ms FROM prior)::text AS prior_version, (SELECT older FROM judged) AS prior_older
      FROM upserted`,
        [
          meta.externalOrderId,
          input.timeline ? JSON.stringify(input.timeline) : null,
          meta.shopId,
          meta.platform,
          meta.orderId,
          meta.orderName,
          now,
          JSON.stringify(input.payload),
          input.order ? JSON.stringify(input.order) : null,
          version,
          BEFORE_DISPATCH,
          ignored ? JSON.stringify(ignored) : null,
          receivedAt,
        ],
      ),
    );
    const row = rows[0]!;
    const record = toRecord(row);
    if (!row.prior_older || version === null || row.prior_version === null) return record;
    return {
      ...record,
      olderThanApplied: {
        version: new Date(version).toISOString(),
        applied: new Date(Number(row.prior_version)).toISOString(),
      },
    };
  }

  async setState(
    externalOrderId: string,
    state: OrderState,
    now: Date,
    cause: MoveCause = 'progress',
  ): Promise<boolean> {
    return this.moveState(externalOrderId, state, now, null, cause);
  }

  async hold(externalOrderId: string, reason: HoldReason, now: Date): Promise<boolean> {
    return this.moveState(externalOrderId, 'held', now, { ...reason, at: now.toISOString() }, 'progress');
  }

  /**
   * One state change and what goes with it (hold reason, payload, in-flight and unready lists, finish time),
   * applied only if `canMove` allows it from the order's current state, in the same statement that reads it.
   */
  private async moveState(
    externalOrderId: string,
    state: OrderState,
    now: Date,
    hold: (HoldReason & { at: string }) | null,
    cause: MoveCause,
  ): Promise<boolean> {
    const final = FINAL_STATES.has(state);
    // A hold is also noted in order_holds (kept after the order moves on), in the same statement.
    const { rows } = await this.inOrder(externalOrderId, () =>
      this.pool.query<{ moved: number }>(
        `WITH moved AS (UPDATE orders SET
         state = $2, state_changed_at = $3::timestamptz, hold = $4::jsonb, held_at = CASE WHEN $4::jsonb IS NULL THEN NULL ELSE $3::timestamptz END,
         payload = CASE WHEN $5::boolean THEN payload ELSE NULL END,
         in_flight_since = CASE WHEN $6::boolean THEN NULL ELSE in_flight_since END,
         unready_since = CASE WHEN $6::boolean THEN NULL ELSE unready_since END,
         finished_at = CASE WHEN $6::boolean THEN coalesce(finished_at, $3::timestamptz) ELSE finished_at END
       WHERE external_order_id = $1 AND NOT (state = ANY($7::text[]))
       RETURNING shop_id),
       noted AS (INSERT INTO order_holds (external_order_id, shop_id, code, held_at)
         SELECT $1, shop_id, $4::jsonb->>'code', $3::timestamptz FROM moved WHERE $4::jsonb IS NOT NULL)
       SELECT count(*)::int AS moved FROM moved`,
        [
          externalOrderId,
          state,
          now,
          hold ? JSON.stringify(hold) : null,
          BEFORE_DISPATCH_STATES.has(state),
          final,
          statesRefusingMoveTo(state, cause),
        ],
      ),
    );
    return rows[0]?.moved === 1;
  }

  async save(externalOrderId: string, field: SavedField, value: unknown): Promise<void> {
    await this.inOrder(externalOrderId, () =>
      this.pool.query(`UPDATE orders SET ${SAVED_COLUMN[field]} = $2::jsonb WHERE external_order_id = $1`, [
        externalOrderId,
        JSON.stringify(value),
      ]),
    );
  }

  async saveShipment(externalOrderId: string, shipment: ShipmentProgress): Promise<boolean> {
    const marked = shipment.markedReadyAt !== undefined;
    const result = await this.inOrder(externalOrderId, () =>
      this.pool.query(
        `UPDATE orders SET
         shipment = $2::jsonb,
         in_flight_since = CASE WHEN finished_at IS NULL THEN coalesce(in_flight_since, $4::timestamptz) END,
         unready_since = CASE WHEN $3::boolean OR finished_at IS NOT NULL THEN NULL ELSE coalesce(unready_since, $4::timestamptz) END
       WHERE external_order_id = $1
         AND ($3::boolean OR shipment IS NULL OR shipment->>'shipmentId' IS DISTINCT FROM $5::text OR shipment->>'markedReadyAt' IS NULL)`,
        [externalOrderId, JSON.stringify(shipment), marked, new Date(), shipment.shipmentId],
      ),
    );
    return result.rowCount === 1;
  }

  /**
   * One statement: the UPDATE sets each column from the row as it stands when the statement reaches it (a
   * concurrent writer's update is waited for and re-read), with the same refusals as `moveState` and
   * `saveShipment`, and the timeline entries are inserted beside it.
   */
  async apply(externalOrderId: string, change: OrderChange): Promise<void> {
    const { state, shipment, now } = change;
    const saved: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(change.saved ?? {}))
      saved[SAVED_COLUMN[field as SavedField]] = value ?? null;
    // The payload is also dropped by a move past dispatch: its column is written below, with the state.
    const savedColumns = Object.values(SAVED_COLUMN)
      .filter((column) => column !== 'payload')
      .map(
        (column) => `${column} = CASE WHEN $3::jsonb ? '${column}' THEN $3::jsonb -> '${column}' ELSE ${column} END`,
      );
    // Whether the state move is allowed, and whether the shipment may be saved, from the row as it stands.
    const moves = `($4::text IS NOT NULL AND NOT (state = ANY($5::text[])))`;
    const ships = `($8::jsonb IS NOT NULL AND ($9::boolean OR shipment IS NULL OR shipment->>'shipmentId' IS DISTINCT FROM $8::jsonb->>'shipmentId' OR shipment->>'markedReadyAt' IS NULL))`;
    await this.inOrder(externalOrderId, () =>
      this.pool.query(
        `WITH changed AS (
        UPDATE orders SET
         ${savedColumns.join(',\n         ')},
         state = CASE WHEN ${moves} THEN $4::text ELSE state END,
         state_changed_at = CASE WHEN ${moves} THEN $2::timestamptz ELSE state_changed_at END,
         hold = CASE WHEN ${moves} THEN NULL ELSE hold END,
         held_at = CASE WHEN ${moves} THEN NULL ELSE held_at END,
         payload = CASE WHEN ${moves} AND NOT $6::boolean THEN NULL WHEN $3::jsonb ? 'payload' THEN $3::jsonb -> 'payload' ELSE payload END,
         shipment = CASE WHEN ${ships} THEN $8::jsonb ELSE shipment END,
         in_flight_since = CASE WHEN ${moves} AND $7::boolean THEN NULL
                                WHEN ${ships} THEN CASE WHEN finished_at IS NULL THEN coalesce(in_flight_since, $2::timestamptz) END
                                ELSE in_flight_since END,
         unready_since = CASE WHEN ${moves} AND $7::boolean THEN NULL
                              WHEN ${ships} THEN CASE WHEN $9::boolean OR finished_at IS NOT NULL THEN NULL ELSE coalesce(unready_since, $2::timestamptz) END
                              ELSE unready_since END,
         finished_at = CASE WHEN ${moves} AND $7::boolean THEN coalesce(finished_at, $2::timestamptz) ELSE finished_at END,
         shipment_requested_at = CASE WHEN $11::boolean THEN coalesce(shipment_requested_at, $2::timestamptz) ELSE shipment_requested_at END
        WHERE external_order_id = $1
        RETURNING external_order_id
      ), noted AS (
        INSERT INTO order_timeline (external_order_id, shop_id, at, system, operation, outcome, ms, detail)
        SELECT $1, split_part($1, ':', 1), e.at, e.system, e.operation, e.outcome, e.ms, e.detail
        FROM ROWS FROM (jsonb_to_recordset($10::jsonb)
          AS (at timestamptz, system text, operation text, outcome text, ms integer, detail text)) WITH ORDINALITY
          AS e(at, system, operation, outcome, ms, detail, n)
        ORDER BY e.n
      )
      SELECT count(*) FROM changed`,
        [
          externalOrderId,
          now,
          JSON.stringify(saved),
          state ?? null,
          // A dispatch attempt's step: the attempt is what a replay or a shop event started (the action resolving
          // a hold), and its markReady is the service's word; a stale hold from a worker that lost its lease must
          // not keep a shipment the service marked ready out of `ready`.
          state ? statesRefusingMoveTo(state, 'resolution') : [],
          state ? BEFORE_DISPATCH_STATES.has(state) : true,
          state ? FINAL_STATES.has(state) : false,
          shipment ? JSON.stringify(shipment) : null,
          shipment?.markedReadyAt !== undefined,
          JSON.stringify(change.timeline ?? []),
          change.shipmentRequested === true,
        ],
      ),
    );
  }

  async bumpGeneration(externalOrderId: string): Promise<number> {
    const { rows } = await this.inOrder(externalOrderId, () =>
      this.pool.query<{ generation: number }>(
        'UPDATE orders SET generation = generation + 1 WHERE external_order_id = $1 RETURNING generation',
        [externalOrderId],
      ),
    );
    if (!rows[0]) throw new Error(`unknown order ${externalOrderId}`);
    return rows[0].generation;
  }

  async listUnready(createdBefore: Date, limit = 1000): Promise<Array<{ externalOrderId: string; since: Date }>> {
    const { rows } = await this.pool.query<{ external_order_id: string; unready_since: Date }>(
      'SELECT external_order_id, unready_since FROM orders WHERE unready_since <= $1 ORDER BY unready_since, external_order_id LIMIT $2',
      [createdBefore, limit],
    );
    return rows.map((row) => ({ externalOrderId: row.external_order_id, since: row.unready_since }));
  }

  async countUnready(createdBefore: Date): Promise<number> {
    const { rows } = await this.pool.query<{ count: string }>('SELECT count(*) FROM orders WHERE unready_since <= $1', [
      createdBefore,
    ]);
    return Number(rows[0]?.count ?? 0);
  }

  async listInFlight(limit: number): Promise<Array<{ externalOrderId: string; shopId: string; shipmentId: string }>> {
    const { rows } = await this.pool.query<{ external_order_id: string; shop_id: string; shipment_id: string }>(
      `SELECT external_order_id, shop_id, shipment->>'shipmentId' AS shipment_id FROM orders
       WHERE in_flight_since IS NOT NULL ORDER BY in_flight_since, external_order_id LIMIT $1`,
      [limit],
    );
    return rows.map((row) => ({
      externalOrderId: row.external_order_id,
      shopId: row.shop_id,
      shipmentId: row.shipment_id,
    }));
  }

  async touchInFlight(externalOrderId: string, now: Date): Promise<void> {
    await this.inOrder(externalOrderId, () =>
      this.pool.query(
        'UPDATE orders SET in_flight_since = $2 WHERE external_order_id = $1 AND in_flight_since IS NOT NULL',
        [externalOrderId, now],
      ),
    );
  }

  async listHeld(limit = 500): Promise<OrderRecord[]> {
    const { rows } = await this.pool.query<OrderRow>(
      `SELECT ${RECORD_COLUMNS} FROM orders WHERE state = 'held' ORDER BY held_at, external_order_id LIMIT $1`,
      [limit],
    );
    return rows.map(toRecord);
  }

  async listHeldPage(options: { shopId?: string; after?: string; limit: number }): Promise<OrderRecord[]> {
    const { rows } = await this.pool.query<OrderRow>(
      `SELECT ${RECORD_COLUMNS} FROM orders
       WHERE state = 'held' AND ($1::text IS NULL OR shop_id = $1) AND ($2::text IS NULL OR external_order_id > $2)
       ORDER BY external_order_id LIMIT $3`,
      [options.shopId ?? null, options.after ?? null, options.limit],
    );
    return rows.map(toRecord);
  }

  async listShopOrders(shopId: string, options: { since?: Date; limit?: number } = {}): Promise<string[]> {
    const { rows } = await this.pool.query<{ external_order_id: string }>(
      `SELECT external_order_id FROM orders WHERE shop_id = $1 AND ($2::timestamptz IS NULL OR first_seen_at >= $2)
       ORDER BY first_seen_at, external_order_id LIMIT $3`,
      [shopId, options.since ?? null, options.limit ?? 10_000],
    );
    return rows.map((row) => row.external_order_id);
  }

  async appendTimeline(externalOrderId: string, entry: TimelineEntry): Promise<void> {
    await this.inOrder(externalOrderId, () =>
      this.pool.query(TIMELINE_FROM_JSON, [externalOrderId, JSON.stringify(entry)]),
    );
  }

  async timeline(externalOrderId: string): Promise<TimelineEntry[]> {
    const { rows } = await this.inOrder(externalOrderId, () =>
      this.pool.query<{
        at: Date;
        system: string;
        operation: string;
        outcome: string;
        ms: number | null;
        detail: string | null;
      }>(
        `SELECT at, system, operation, outcome, ms, detail FROM
         (SELECT id, at, system, operation, outcome, ms, detail FROM order_timeline WHERE external_order_id = $1 ORDER BY id DESC LIMIT $2) newest
       ORDER BY id`,
        [externalOrderId, this.timelineLength],
      ),
    );
    return rows.map((row) => ({
      at: row.at.toISOString(),
      system: row.system,
      operation: row.operation,
      outcome: row.outcome,
      ...(row.ms === null ? {} : { ms: row.ms }),
      ...(row.detail === null ? {} : { detail: row.detail }),
    }));
  }

  async ordersWithClaims(externalOrderIds: readonly string[]): Promise<Set<string>> {
    if (externalOrderIds.length === 0) return new Set();
    const { rows } = await this.pool.query<{ external_order_id: string }>(
      'SELECT DISTINCT external_order_id FROM order_claims WHERE external_order_id = ANY($1::text[])',
      [externalOrderIds],
    );
    return new Set(rows.map((row) => row.external_order_id));
  }

  async knownClaims<T>(externalOrderId: string): Promise<Array<KnownClaim<T>>> {
    const { rows } = await this.pool.query<{ claim_key: string; claim: T; decided: boolean }>(
      'SELECT claim_key, claim, decided FROM order_claims WHERE external_order_id = $1 ORDER BY seen_at, claim_key',
      [externalOrderId],
    );
    return rows.map((row) => ({ key: row.claim_key, claim: row.claim, decided: row.decided }));
  }

  /**
   * The claim is kept as last seen; its decision is then recorded by a conditional update that only one save can
   * make (the row lock orders concurrent ones), so the decision is reported newly decided exactly once.
   */
  async saveClaim<T>(externalOrderId: string, claim: KnownClaim<T>, now: Date): Promise<{ newlyDecided: boolean }> {
    await this.pool.query(
      `INSERT INTO order_claims (external_order_id, claim_key, shop_id, claim, decided, seen_at)
       VALUES ($1, $2, split_part($1, ':', 1), $3::jsonb, false, $4)
       ON CONFLICT (external_order_id, claim_key) DO UPDATE SET claim = EXCLUDED.claim`,
      [externalOrderId, claim.key, JSON.stringify(claim.claim), now],
    );
    if (!claim.decided) return { newlyDecided: false };
    const decided = await this.pool.query(
      'UPDATE order_claims SET decided = true WHERE external_order_id = $1 AND claim_key = $2 AND NOT decided',
      [externalOrderId, claim.key],
    );
    return { newlyDecided: decided.rowCount === 1 };
  }

  async redactOrders(externalOrderIds: string[]): Promise<number> {
    if (externalOrderIds.length === 0) return 0;
    const result = await this.pool.query(
      `UPDATE orders SET payload = NULL, store_order = NULL, personal_data_erased_at = coalesce(personal_data_erased_at, now())
       WHERE external_order_id = ANY($1::text[]) AND (payload IS NOT NULL OR store_order IS NOT NULL)`,
      [externalOrderIds],
    );
    return result.rowCount ?? 0;
  }

  async erasePersonalDataOfFinished(finishedBefore: Date): Promise<number> {
    const result = await this.pool.query(
      `UPDATE orders SET payload = NULL, store_order = NULL, personal_data_erased_at = now()
       WHERE finished_at IS NOT NULL AND finished_at < $1 AND personal_data_erased_at IS NULL`,
      [finishedBefore],
    );
    return result.rowCount ?? 0;
  }

  async eraseShop(shopId: string): Promise<number> {
    if (!SHOP_ID_PATTERN.test(shopId)) throw new Error(`invalid shop id "${shopId}"`);
    return this.transaction(async (client) => {
      await client.query('DELETE FROM order_timeline WHERE shop_id = $1', [shopId]);
      await client.query('DELETE FROM order_claims WHERE shop_id = $1', [shopId]);
      await client.query('DELETE FROM order_holds WHERE shop_id = $1', [shopId]);
      const erased = await client.query('DELETE FROM orders WHERE shop_id = $1', [shopId]);
      return erased.rowCount ?? 0;
    });
  }

  async listStale(firstSeenBefore: Date, options: { shopId?: string } = {}): Promise<StaleOrder[]> {
    const { rows } = await this.pool.query<OrderRow>(
      `SELECT ${RECORD_COLUMNS} FROM orders
       WHERE finished_at IS NULL AND first_seen_at < $1 AND NOT (state = ANY($2::text[])) AND ($3::text IS NULL OR shop_id = $3)
       ORDER BY first_seen_at, external_order_id`,
      [firstSeenBefore, FINAL, options.shopId ?? null],
    );
    return rows.map((row) => ({
      externalOrderId: row.external_order_id,
      shopId: row.shop_id,
      orderName: row.order_name,
      state: row.state,
      firstSeenAt: row.first_seen_at.toISOString(),
      stateChangedAt: row.state_changed_at.toISOString(),
      ...(row.hold ? { holdCode: row.hold.code } : {}),
    }));
  }

  async closeStale(
    externalOrderId: string,
    input: { reason: string; by: string; now: Date; firstSeenBefore: Date },
  ): Promise<CloseStaleResult> {
    const record = await this.get(externalOrderId);
    if (!record) return { ok: false, why: 'unknown_order', detail: `no order ${externalOrderId} in the ledger` };
    if (FINAL_STATES.has(record.state))
      return { ok: false, why: 'already_final', detail: `order ${externalOrderId} is already ${record.state}` };
    if (!(Date.parse(record.meta.firstSeenAt) < input.firstSeenBefore.getTime())) {
      return {
        ok: false,
        why: 'not_stale',
        detail: `order ${externalOrderId} was first seen ${record.meta.firstSeenAt}, after ${input.firstSeenBefore.toISOString()}`,
      };
    }
    // The move and its timeline entry in one transaction: the state is only moved if it is still the one read.
    const closed = await this.transaction(async (client) => {
      const moved = await client.query(
        `UPDATE orders SET state = 'cancelled', state_changed_at = $2, hold = NULL, held_at = NULL, payload = NULL,
           in_flight_since = NULL, unready_since = NULL, finished_at = $2
         WHERE external_order_id = $1 AND state = $3`,
        [externalOrderId, input.now, record.state],
      );
      if (moved.rowCount !== 1) return false;
      const entry: TimelineEntry = {
        at: input.now.toISOString(),
        system: 'relais',
        operation: 'close',
        outcome: 'closed_by_operator',
        detail: `closed by ${input.by} from state ${record.state} (no final state since ${record.meta.firstSeenAt}): ${input.reason}. Nothing was sent to the delivery service or the shop.`,
      };
      await client.query(TIMELINE_FROM_JSON, [externalOrderId, JSON.stringify(entry)]);
      return true;
    });
    if (!closed) return { ok: false, why: 'already_final', detail: `order ${externalOrderId} changed state meanwhile` };
    return { ok: true, previousState: record.state };
  }

  /**
   * This process's statements about one order, applied in the order they were issued. The jobs issue a step's
   * writes without waiting for each (the quote, the door amount, the shipment, then the state): on one Redis
   * connection they arrived in order; over a pool of connections they could land in any order, and a reader
   * could see the order ready before its door amount was saved. Chaining them per order keeps the issue order;
   * other orders' statements still run side by side.
   */
  private inOrder<T>(externalOrderId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(externalOrderId) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(externalOrderId, tail);
    void tail.then(() => {
      if (this.#tails.get(externalOrderId) === tail) this.#tails.delete(externalOrderId);
    });
    return run;
  }

  private transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, work);
  }
}

function toRecord(row: OrderRow): OrderRecord {
  const record: OrderRecord = {
    meta: {
      externalOrderId: row.external_order_id,
      shopId: row.shop_id,
      platform: row.platform,
      orderId: row.order_id,
      orderName: row.order_name,
      firstSeenAt: row.first_seen_at.toISOString(),
      generation: row.generation,
    },
    state: row.state,
    stateChangedAt: row.state_changed_at.toISOString(),
  };
  if (row.hold) record.hold = row.hold;
  if (row.store_order) record.order = row.store_order;
  if (row.neighbourhood) record.neighbourhood = row.neighbourhood;
  if (row.quote) record.quote = row.quote;
  if (row.shipment) record.shipment = row.shipment;
  if (row.delivery) record.delivery = row.delivery;
  if (row.door) record.door = row.door;
  if (row.shipment_requested_at) record.shipmentRequestedAt = row.shipment_requested_at.toISOString();
  return record;
}
