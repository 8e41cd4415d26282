/**
 * The order ledger in PostgreSQL (the port: src/ledger/order-ledger.ts; the tables: migrations.ts).
 *
 * Each method is one statement, or one transaction where it writes two tables, so a step's writes land together
 * or not at all. The state rules of src/domain/order-state.ts are enforced by the statement itself: a state move
 * is an UPDATE whose WHERE refuses the states `statesRefusingMoveTo` lists, and a shipment saved without its
 * markReady cannot replace the same shipment saved with one. Two workers racing on one order therefore cannot
 * move it backwards or replace a recorded markReady, whatever the order their statements arrive in.
 *
 * The statements about one order are here; those across orders (lists, claims, erasure, stale orders) are in
 * pg-ledger-lists.ts, which this class extends; the row and its mapping to a record in pg-order-rows.ts.
 */
import type pg from 'pg';
import type { HoldReason } from '../../domain/order.js';
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
  type OrderChange,
  type OrderLedger,
  type OrderRecord,
  type RecordedEvent,
  type SavedField,
  type ShipmentProgress,
  type TimelineEntry,
} from '../../ledger/order-ledger.js';
import { PostgresLedgerLists } from './pg-ledger-lists.js';
import { APPLY_CHANGE, GET_ORDER, MOVE_STATE, RECORD_EVENT } from './pg-ledger-statements.js';
import {
  BEFORE_DISPATCH,
  msOrNull,
  RECORD_COLUMNS,
  SAVED_COLUMN,
  TIMELINE_FROM_JSON,
  toRecord,
  type OrderRow,
} from './pg-order-rows.js';

/** What RECORD_EVENT answers beside the row. */
interface RecordEventExtras {
  prior_version: string | null;
  prior_older: boolean | null;
  prior_shipment_requested_at: Date | null;
  shop_aliases: Record<string, string> | null;
}

export interface PostgresLedgerOptions {
  retentionDays?: number;
  /** Timeline entries `timeline()` answers at most (the newest); all are kept. */
  timelineLength?: number;
}

/** The ledger: the statements about one order here, those across orders in PostgresLedgerLists. */
export class PostgresOrderLedger extends PostgresLedgerLists implements OrderLedger {
  readonly retentionDays: number;
  private readonly timelineLength: number;
  /** The last statement issued about each order with one still running (see `inOrder`). */
  readonly #tails = new Map<string, Promise<void>>();

  constructor(pool: pg.Pool, options: PostgresLedgerOptions = {}) {
    super(pool);
    this.retentionDays = options.retentionDays ?? DEFAULT_RETENTION_DAYS;
    this.timelineLength = options.timelineLength ?? DEFAULT_TIMELINE_LENGTH;
  }

  async get(externalOrderId: string): Promise<OrderRecord | undefined> {
    const { rows } = await this.inOrder(externalOrderId, () =>
      this.pool.query<OrderRow>({ ...GET_ORDER, values: [externalOrderId] }),
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

  async keepPayload(externalOrderId: string, payload: unknown): Promise<boolean> {
    const { rowCount } = await this.inOrder(externalOrderId, () =>
      this.pool.query(
        'UPDATE orders SET payload = $2::jsonb WHERE external_order_id = $1 AND state = ANY($3::text[])',
        [externalOrderId, JSON.stringify(payload), BEFORE_DISPATCH],
      ),
    );
    return (rowCount ?? 0) > 0;
  }

  /** One statement (RECORD_EVENT: pg-ledger-statements.ts), which also reads the shop's run-time aliases. */
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
    const { rows } = await this.inOrder(input.meta.externalOrderId, () =>
      this.pool.query<OrderRow & RecordEventExtras>({
        ...RECORD_EVENT,
        values: [
          meta.externalOrderId,
          input.timeline ? JSON.stringify(input.timeline) : null,
          meta.shopId,
          meta.platform,
          meta.orderId,
          meta.orderName,
          now,
          input.payload === undefined ? null : JSON.stringify(input.payload),
          input.order ? JSON.stringify(input.order) : null,
          version,
          BEFORE_DISPATCH,
          ignored ? JSON.stringify(ignored) : null,
          receivedAt,
          input.shipmentMayFollow === true,
        ],
      }),
    );
    const row = rows[0]!;
    // The normalised order comes back only when it is not the one given (RECORD_EVENT).
    const { shipmentRequestedAt: _noted, ...recorded } = toRecord({
      ...row,
      store_order: row.store_order ?? input.order ?? null,
    });
    const record: RecordedEvent = {
      ...recorded,
      ...(row.prior_shipment_requested_at
        ? { shipmentRequestedAt: row.prior_shipment_requested_at.toISOString() }
        : {}),
      ...(input.shipmentMayFollow && row.shipment_requested_at ? { shipmentRequestNoted: true } : {}),
      shopAliases: row.shop_aliases ?? {},
    };
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
    const { rows } = await this.inOrder(externalOrderId, () =>
      this.pool.query<{ moved: number }>({
        ...MOVE_STATE,
        values: [
          externalOrderId,
          state,
          now,
          hold ? JSON.stringify(hold) : null,
          BEFORE_DISPATCH_STATES.has(state),
          final,
          statesRefusingMoveTo(state, cause),
        ],
      }),
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
   * One statement (APPLY_CHANGE: pg-ledger-statements.ts): the UPDATE sets each column from the row as it stands
   * when the statement reaches it (a concurrent writer's update is waited for and re-read), with the same refusals
   * as `moveState` and `saveShipment`, and the timeline entries are inserted beside it.
   */
  async apply(externalOrderId: string, change: OrderChange): Promise<void> {
    const { state, shipment, now } = change;
    const saved: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(change.saved ?? {}))
      saved[SAVED_COLUMN[field as SavedField]] = value ?? null;
    await this.inOrder(externalOrderId, () =>
      this.pool.query({
        ...APPLY_CHANGE,
        values: [
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
      }),
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

  async touchInFlight(externalOrderId: string, now: Date): Promise<void> {
    await this.inOrder(externalOrderId, () =>
      this.pool.query(
        'UPDATE orders SET in_flight_since = $2 WHERE external_order_id = $1 AND in_flight_since IS NOT NULL',
        [externalOrderId, now],
      ),
    );
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
}
