/**
 * What a reconciliation run produces: findings (each with the order, the shipment, and what Relais did or
 * advises), figures per day, and a summary per shop. Plain data: printed as a table, JSON or CSV, stored
 * in Redis for the dashboard.
 */

export const FINDING_KINDS = [
  /** The shop says ship it, there is no shipment: the webhook never arrived (or was lost before the ledger). */
  'missed_webhook',
  /** A shipment with no recorded markReady past the shop's bound, whatever its state is called: no courier is offered it. */
  'never_ready',
  /** The service shows a state the shop's wire profile does not map: never counted as progress. */
  'unknown_state',
  /** The service is further along than the ledger (and therefore the shop): a delivery webhook was lost. */
  'status_drift',
  /** The amount the courier collects differs from what the customer owes. */
  'cod_mismatch',
  /** Cancelled in the shop, the shipment is still live. */
  'cancelled_with_live_shipment',
  /** More than one live shipment carries the order's external_order_id. */
  'duplicate_shipment',
  /** A claim is open: the settlement of the shipment is held until it is decided. */
  'dispute_open',
  /** A claim was decided: its outcome, kept in the order's history. */
  'dispute_decided',
  /** The order sits held in the ledger, with its reason. */
  'held',
  /** The shop says ship it again (restored, paid again), but its only shipment was cancelled: nobody ships it. */
  'restored_after_cancel',
  /** A shipment of this organisation whose external_order_id belongs to no shop of the registry. */
  'unknown_shipment',
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

/**
 * - `repaired`: Relais acted in this run (enqueued a job, marked ready).
 * - `already_requested`: an earlier run's repair is still queued or done (a second run repairs nothing new).
 * - `would_repair`: a repair exists; run with --repair (the scheduled job always repairs).
 * - `alert`: a person must act; `advice` says what to do.
 * - `info`: nothing to do.
 */
export type FindingAction = 'repaired' | 'already_requested' | 'would_repair' | 'alert' | 'info';

export interface Finding {
  kind: FindingKind;
  shopId: string;
  externalOrderId?: string;
  orderName?: string;
  shipmentId?: string;
  shipmentStatus?: string;
  /** The amount the finding is about (COD owed, collected, held), in XOF. */
  amountXof?: number;
  action: FindingAction;
  /** What happened or what Relais did, one sentence. */
  detail: string;
  /** What a person should do, when anything. */
  advice?: string;
}

/** Figures of one day (the orders' creation date, UTC), in whole francs. */
export interface DayFigures {
  day: string;
  orders: number;
  /** Orders with a shipment that was not cancelled. */
  shipped: number;
  delivered: number;
  codOrders: number;
  /** What customers owe on shipped cash-on-delivery orders. */
  codExpectedXof: number;
  /** The amounts of delivered cash-on-delivery shipments (what the couriers collected). */
  codCollectedXof: number;
  /** Cash-on-delivery amounts of shipments with an open claim. */
  heldInDisputeXof: number;
  openDisputes: number;
}

export interface ShopReconciliation {
  shopId: string;
  platform: string;
  runAt: string;
  window: { from: string; to: string };
  repair: boolean;
  ordersChecked: number;
  shipmentsChecked: number;
  findings: Finding[];
  days: DayFigures[];
  /** A shop that could not be read (credentials, service down): the run goes on with the other shops. */
  error?: string;
}

export interface ReconciliationReport {
  runAt: string;
  window: { from: string; to: string };
  repair: boolean;
  shops: ShopReconciliation[];
}
