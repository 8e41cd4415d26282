/**
 * The ledger's statements run on every order (pg-ledger.ts), as named prepared statements: `pg` sends a
 * statement's text and PostgreSQL parses and plans it once per connection; every later run sends only its
 * name and values. Their text is built here once, at load, and never changes (a name must always carry the
 * same text on a connection). Each run is `{ ...STATEMENT, values }`.
 */
import { RECORD_COLUMNS, SAVED_COLUMN } from './pg-order-rows.js';

/** A named statement: pass `{ ...statement, values }` to `pool.query`. */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

export const GET_ORDER: NamedStatement = {
  name: 'relais_ledger_get',
  text: `SELECT ${RECORD_COLUMNS} FROM orders WHERE external_order_id = $1`,
};

/**
 * An event is older than the one applied when its version ($10) is earlier, or the same (shops keep whole
 * seconds: a refund in the second the order was placed) and it was received ($13) earlier.
 */
const older = (prior: string) =>
  `($10::bigint < ${prior}.version_ms OR ($10::bigint = ${prior}.version_ms AND $13::bigint < ${prior}.version_received_ms))`;
const notOlder = `NOT coalesce(${older('o')}, false)`;

/**
 * The normalised order is read back only when it is not the one the event gave ($9): the event is older than the one
 * applied, or gave none (it could not be normalised). Otherwise the caller has it already.
 */
const STORE_ORDER_IF_NOT_GIVEN = `CASE WHEN $9::jsonb IS NULL OR (SELECT older FROM judged) THEN upserted.store_order END AS store_order`;

/**
 * recordEvent (pg-ledger.ts) in one statement: `prior` reads the version applied before it (data-modifying CTEs
 * share one snapshot), the upsert creates the record or refreshes it unless the event is older than that version,
 * and the timeline entry (or its "ignored" variant, $12) is inserted with it. The shop's run-time aliases ride
 * along ($3 is the shop): the attempt that ships the order next needs them, and this saves it a statement.
 * $1 id, $2 timeline entry, $3..$7 meta and now, $8 payload (null: the stored one stays), $9 normalised order, $10 version, $11 states before
 * dispatch, $12 the "ignored" entry, $13 received at, $14 a createShipment may follow (noted for an order received or
 * waiting, unless the event is older; `prior_shipment_requested_at` is the note as it was before).
 */
export const RECORD_EVENT: NamedStatement = {
  name: 'relais_ledger_record_event',
  text: `WITH prior AS (SELECT version_ms, version_received_ms, shipment_requested_at FROM orders WHERE external_order_id = $1),
      upserted AS (
        INSERT INTO orders AS o (external_order_id, shop_id, platform, order_id, order_name, first_seen_at, state, state_changed_at, payload, store_order, version_ms, version_received_ms, shipment_requested_at)
        VALUES ($1, $3, $4, $5, $6, $7, 'received', $7, $8, $9, $10, CASE WHEN $10::bigint IS NULL THEN NULL ELSE $13::bigint END,
                CASE WHEN $14::boolean THEN $7::timestamptz END)
        ON CONFLICT (external_order_id) DO UPDATE SET
          shipment_requested_at = CASE WHEN $14::boolean AND ${notOlder} AND o.state IN ('received', 'waiting')
                                       THEN coalesce(o.shipment_requested_at, $7::timestamptz) ELSE o.shipment_requested_at END,
          payload = CASE WHEN ${notOlder} AND o.state = ANY($11::text[]) AND $8::jsonb IS NOT NULL
                         THEN EXCLUDED.payload ELSE o.payload END,
          store_order = CASE WHEN ${notOlder} AND EXCLUDED.store_order IS NOT NULL
                             THEN EXCLUDED.store_order ELSE o.store_order END,
          version_ms = CASE WHEN ${notOlder} THEN coalesce($10::bigint, o.version_ms) ELSE o.version_ms END,
          version_received_ms = CASE WHEN ${notOlder} AND $10::bigint IS NOT NULL THEN $13::bigint ELSE o.version_received_ms END
        RETURNING ${RECORD_COLUMNS.split(', ')
          .map((c) => `o.${c}`)
          .join(', ')}
      ),
      judged AS (SELECT coalesce((SELECT ${older('prior')} FROM prior), false) AS older),
      noted AS (
        INSERT INTO order_timeline (external_order_id, shop_id, at, system, operation, outcome, ms, detail)
        SELECT $1, $3, e.at, e.system, e.operation, e.outcome, e.ms, e.detail
        FROM jsonb_to_record(CASE WHEN (SELECT older FROM judged) THEN $12::jsonb ELSE $2::jsonb END)
          AS e(at timestamptz, system text, operation text, outcome text, ms integer, detail text)
        WHERE $2::jsonb IS NOT NULL
      )
      SELECT ${RECORD_COLUMNS.split(', ')
        .map((c) => (c === 'store_order' ? STORE_ORDER_IF_NOT_GIVEN : `upserted.${c}`))
        .join(', ')},
        (SELECT version_ms FROM prior)::text AS prior_version, (SELECT older FROM judged) AS prior_older,
        (SELECT shipment_requested_at FROM prior) AS prior_shipment_requested_at,
        (SELECT coalesce(jsonb_object_agg(alias, neighbourhood), '{}'::jsonb) FROM shop_aliases WHERE shop_id = $3) AS shop_aliases
      FROM upserted`,
};

// Whether the state move is allowed, and whether the shipment may be saved, from the row as it stands.
const moves = `($4::text IS NOT NULL AND NOT (state = ANY($5::text[])))`;
const ships = `($8::jsonb IS NOT NULL AND ($9::boolean OR shipment IS NULL OR shipment->>'shipmentId' IS DISTINCT FROM $8::jsonb->>'shipmentId' OR shipment->>'markedReadyAt' IS NULL))`;
// The payload is also dropped by a move past dispatch: its column is written with the state.
const savedColumns = Object.values(SAVED_COLUMN)
  .filter((column) => column !== 'payload')
  .map((column) => `${column} = CASE WHEN $3::jsonb ? '${column}' THEN $3::jsonb -> '${column}' ELSE ${column} END`);

/**
 * apply (pg-ledger.ts) in one statement: the UPDATE sets each column from the row as it stands when the statement
 * reaches it, with the same refusals as moveState and saveShipment, and the timeline entries are inserted beside
 * it. $1 id, $2 now, $3 saved parts by column, $4 state, $5 states refusing the move, $6 state before dispatch,
 * $7 final state, $8 shipment, $9 shipment marked ready, $10 timeline entries, $11 createShipment requested.
 */
export const APPLY_CHANGE: NamedStatement = {
  name: 'relais_ledger_apply',
  text: `WITH changed AS (
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
};

/**
 * moveState (pg-ledger.ts): one state change and what goes with it, applied only if the order's current state
 * allows it ($7: the states refusing the move), in the same statement that reads it; a hold is also noted in
 * order_holds (kept after the order moves on).
 */
export const MOVE_STATE: NamedStatement = {
  name: 'relais_ledger_move_state',
  text: `WITH moved AS (UPDATE orders SET
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
};
