/**
 * How the PostgreSQL ledger (pg-ledger.ts, pg-ledger-lists.ts) reads and writes the `orders` table: its row,
 * the columns a record is read from, the column of each saved part, and the record a row becomes.
 */
import type { HoldReason, StoreOrder } from '../../domain/order.js';
import { BEFORE_DISPATCH_STATES, FINAL_STATES, type OrderState } from '../../domain/order-state.js';
import type { OrderMeta, OrderRecord, SavedField } from '../../ledger/order-ledger.js';

/** A row of `orders` as the record reads it (everything but the payload). */
export interface OrderRow {
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

export const RECORD_COLUMNS =
  'external_order_id, shop_id, platform, order_id, order_name, first_seen_at, generation, state, state_changed_at, hold, store_order, neighbourhood, quote, shipment, delivery, door, shipment_requested_at';

/** Milliseconds since the epoch of an ISO time, or null when absent or unreadable. */
export function msOrNull(iso: string | undefined): number | null {
  const ms = iso === undefined ? Number.NaN : Date.parse(iso);
  return Number.isFinite(ms) ? ms : null;
}

/** The column each `save` field is kept in. */
export const SAVED_COLUMN: Record<SavedField, string> = {
  order: 'store_order',
  payload: 'payload',
  neighbourhood: 'neighbourhood',
  quote: 'quote',
  delivery: 'delivery',
  door: 'door',
};

export const BEFORE_DISPATCH = [...BEFORE_DISPATCH_STATES];
export const FINAL = [...FINAL_STATES];

/** Inserts the timeline entry given as a jsonb parameter (skipped when it is null). */
export const TIMELINE_FROM_JSON = `INSERT INTO order_timeline (external_order_id, shop_id, at, system, operation, outcome, ms, detail)
  SELECT $1, split_part($1, ':', 1), e.at, e.system, e.operation, e.outcome, e.ms, e.detail
  FROM jsonb_to_record($2::jsonb) AS e(at timestamptz, system text, operation text, outcome text, ms integer, detail text)
  WHERE $2::jsonb IS NOT NULL`;

/** The record a row of `orders` reads as (absent parts left out). */
export function toRecord(row: OrderRow): OrderRecord {
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
