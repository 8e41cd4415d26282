/**
 * The order ledger's port: what Relais keeps about every shop order it acknowledged, and the one door through
 * which jobs, reconciliation, the dashboard and the CLI read and change it. The adapter is PostgreSQL
 * (src/adapters/postgres/): nothing outside it builds SQL or knows a table.
 *
 * The ledger is the pipeline's memory (progress saved after each external call, so a retried or restarted job
 * resumes instead of repeating a side effect), the operator's view (held orders with their reason, the timeline
 * of every call), the input of reconciliation, and the merchant's cash-on-delivery record: what each customer
 * owes, what the courier collected, every hold, claim and write-back, kept as long as the merchant's accounts need it.
 *
 * The rules for moving an order between states live in src/domain/order-state.ts; the adapter enforces them
 * in the store itself (a conditional update), so two workers racing on one order cannot move it backwards.
 *
 * The raw shop payload (most of a record's size: a Shopify order is about 9 kB of JSON) is kept only while the
 * order may still need a replay: until it has a shipment marked ready, or is cancelled. A finished order's personal
 * data (the normalised order: names, phones, addresses) is erased `retentionDays` after it finished
 * (RELAIS_RETENTION_DAYS, default 90); its amounts, states, shipment and timeline stay.
 */
import type { HoldReason, Platform, StoreOrder } from '../domain/order.js';
import type { DoorAmount } from '../domain/door-amount.js';
import type { DeliveryStep } from '../domain/shipment-status.js';
import type { MoveCause, OrderState } from '../domain/order-state.js';

export type { OrderState } from '../domain/order-state.js';

export interface QuoteProgress {
  quoteId: string;
  expiresAt: string;
  total: number;
  breakdown?: Record<string, number | undefined>;
  /** What it priced (src/orders/dispatch/quote.ts quoteBasis): reused only for the same pickup, drop-off, coordinates, weight and payment mode. */
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
  /**
   * When a createShipment was first about to be sent for the order, recorded before it left (OrderChange
   * `shipmentRequested`); kept through replays. Absent: no createShipment was ever sent, so no shipment can exist
   * for the order and a dispatch attempt need not look one up before creating it.
   */
  shipmentRequestedAt?: string;
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

/** How long a finished order is kept (days), unless RELAIS_RETENTION_DAYS says otherwise. */
export const DEFAULT_RETENTION_DAYS = 90;
export const DEFAULT_TIMELINE_LENGTH = 200;
/** After how many days an order with no final state is reported (`relais stale`), unless RELAIS_STALE_AFTER_DAYS says otherwise. */
export const DEFAULT_STALE_AFTER_DAYS = 30;

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

/** The parts of a record written whole by one step (`save`); state, hold and shipment have their own methods. */
export type SavedField = 'order' | 'payload' | 'neighbourhood' | 'quote' | 'delivery' | 'door';

/**
 * One step's writes to an order (`OrderLedger.apply`): each part is applied as its own method would apply it,
 * all of them together or none.
 */
export interface OrderChange {
  now: Date;
  /**
   * Moves the order to this state, unless the state rules refuse the move from where it is (as `setState`). A
   * step is a dispatch attempt's, which a replay or a shop event started: it may move a held order (a stale hold
   * from a worker that lost its lease never keeps a shipment the service marked ready out of `ready`).
   */
  state?: OrderState;
  /** Parts written whole (as `save`). */
  saved?: Partial<Record<SavedField, unknown>>;
  /** What the service said of the shipment (as `saveShipment`, and refused in the same case). */
  shipment?: ShipmentProgress;
  /** Timeline entries, in this order (as `appendTimeline`). */
  timeline?: TimelineEntry[];
  /** A createShipment is about to be sent: sets `shipmentRequestedAt` to `now` unless it is already set. */
  shipmentRequested?: true;
}

/** A claim (dispute) on the order's shipment as Relais last saw it; `key` identifies it within the order. */
export interface KnownClaim<T = unknown> {
  key: string;
  claim: T;
  decided: boolean;
}

/** The record as recordEvent left it. */
export type RecordedEvent = OrderRecord & {
  olderThanApplied?: { version: string; applied: string };
  /**
   * The write noted that a createShipment may follow (recordEvent's `shipmentMayFollow`): the ledger shows it now,
   * although `shipmentRequestedAt` is still the one noted before this event.
   */
  shipmentRequestNoted?: boolean;
  /**
   * The shop's run-time aliases (AliasStore.list), read in the same statement where the ledger can (PostgreSQL):
   * the attempt that ships the order next needs them, and is spared a read of its own. Absent: read them.
   */
  shopAliases?: Record<string, string>;
};

export interface OrderLedger {
  /** Days after an order finished that its personal data is kept (see `erasePersonalDataOfFinished`). */
  readonly retentionDays: number;

  /** The order's record without its raw payload (see `payload`), or undefined for an unknown order. */
  get(externalOrderId: string): Promise<OrderRecord | undefined>;
  /** Several records in one read, in the order asked (undefined where unknown). */
  getMany(externalOrderIds: readonly string[]): Promise<Array<OrderRecord | undefined>>;
  /** The last raw shop payload, while the order is before dispatch (undefined after, or once redacted). */
  payload(externalOrderId: string): Promise<unknown>;
  /**
   * Stores the raw shop payload a replay would start from, if the order is still before dispatch (held included);
   * false, storing nothing, once it is past dispatch or unknown.
   */
  keepPayload(externalOrderId: string, payload: unknown): Promise<boolean>;

  /**
   * Creates the record on first sight; later calls refresh the normalised order, and the payload (when given) while
   * the order is before dispatch. `timeline`, when given, is noted in the same write.
   *
   * `shipmentMayFollow`: this job ships the order next, under the order lock it holds, so a createShipment may
   * follow without another write; the record notes it as OrderChange `shipmentRequested` would, in this same write,
   * for an order received or waiting (not held: its attempt reads the record again and notes it itself) unless the
   * event is older than the one applied. The answer's `shipmentRequestedAt` stays the one noted before this event
   * (whether an earlier attempt may have sent one: its lookup depends on it), and `shipmentRequestNoted` says so.
   *
   * `payload` may be left out by a job that holds the payload itself and stores it with `keepPayload` only if the
   * order may need a replay (a shop event's job: an order shipped at once never does); the stored one then stays.
   *
   * `version` is the order's own last-modified time as the shop signed it (Shopify updated_at, WooCommerce
   * date_modified): an event older than the version already applied (a late delivery of an earlier update)
   * refreshes nothing. It is noted on the timeline as ignored, and the answer carries `olderThanApplied`.
   * `receivedAt` (when the webhook reached Relais) breaks a tie: shops keep whole seconds, so two saves in one
   * second carry the same version, and the one received earlier is the older.
   */
  recordEvent(input: {
    meta: Omit<OrderMeta, 'firstSeenAt' | 'generation'>;
    payload?: unknown;
    order?: StoreOrder;
    shipmentMayFollow?: boolean;
    version?: string;
    receivedAt?: string;
    now: Date;
    timeline?: TimelineEntry;
  }): Promise<RecordedEvent>;

  /**
   * Moves the order to `state`. Returns false, changing nothing, when `canMove` (domain/order-state.ts) refuses
   * it (out of a final state, out of `held` for mere progress, or from a dispatched state back before dispatch),
   * or the order is unknown. A worker that lost its order lease (frozen past it, then resumed) may still finish
   * its steps and ask for such a move. `cause` is 'progress' unless the caller is the action that resolves a
   * hold (a shop event, the shop's cancellation): only that may move a held order.
   */
  setState(externalOrderId: string, state: OrderState, now: Date, cause?: MoveCause): Promise<boolean>;
  /** Holds the order with its reason; false, changing nothing, when the order has been shipped already. */
  hold(externalOrderId: string, reason: HoldReason, now: Date): Promise<boolean>;
  save(externalOrderId: string, field: SavedField, value: unknown): Promise<void>;
  /**
   * Saves what the service said of the shipment, and follows the order until it is final (the polling fallback
   * for lost webhooks). A shipment whose markReady was recorded is never saved back without it: a worker that
   * lost its lease may report the createShipment answer it was waiting for after another worker marked the same
   * shipment ready. Returns false when refused. A shipment without a recorded markReady is listed as unready
   * (the watchdog's input) until one is recorded or the order ends.
   */
  saveShipment(externalOrderId: string, shipment: ShipmentProgress): Promise<boolean>;
  /**
   * One step of a job (what a dispatch call answered, and the progress it makes) as one write: a reader never
   * sees half of it. Refusals are silent, as a step's writes are progress, not decisions: use `setState`,
   * `hold` or `saveShipment` where the answer matters.
   */
  apply(externalOrderId: string, change: OrderChange): Promise<void>;
  /** Starts a new generation for a replay; returns it. */
  bumpGeneration(externalOrderId: string): Promise<number>;

  /** Orders whose shipment has no recorded markReady since `createdBefore` or earlier, oldest first. */
  listUnready(createdBefore: Date, limit?: number): Promise<Array<{ externalOrderId: string; since: Date }>>;
  countUnready(createdBefore: Date): Promise<number>;
  /** Orders with a live shipment, least recently polled first (the polling fallback walks them at a bounded rate). */
  listInFlight(limit: number): Promise<Array<{ externalOrderId: string; shopId: string; shipmentId: string }>>;
  /** Moves an order to the back of the polling line once it has been polled. */
  touchInFlight(externalOrderId: string, now: Date): Promise<void>;
  /**
   * Held orders, newest hold first, at most `limit` (500 by default): for a page, where a new hold must show however
   * many are held; allHeldOrders reads them all.
   */
  listHeld(limit?: number): Promise<OrderRecord[]>;
  /** One page of held orders (of one shop, when given) in external order id order, after `after` (keyset paging). */
  listHeldPage(options: { shopId?: string; after?: string; limit: number }): Promise<OrderRecord[]>;
  /** The shop's orders first seen at or after `since`, oldest first. */
  listShopOrders(shopId: string, options?: { since?: Date; limit?: number }): Promise<string[]>;

  appendTimeline(externalOrderId: string, entry: TimelineEntry): Promise<void>;
  /** The order's latest timeline entries (at most the configured length), oldest first. */
  timeline(externalOrderId: string): Promise<TimelineEntry[]>;

  /** Which of these orders have a claim Relais has seen (one read for them all). */
  ordersWithClaims(externalOrderIds: readonly string[]): Promise<Set<string>>;
  /** The claims Relais has seen on the order's shipment, oldest first. */
  knownClaims<T>(externalOrderId: string): Promise<Array<KnownClaim<T>>>;
  /** Saves a claim as last seen; answers whether it was decided now and not before (so its decision is noted once). */
  saveClaim<T>(externalOrderId: string, claim: KnownClaim<T>, now: Date): Promise<{ newlyDecided: boolean }>;

  /**
   * Compliance, customers/redact: drops the personal data kept for these orders (the raw payload and the
   * normalised order: names, phones, addresses). The shipment reference and amounts stay: they carry no personal
   * data and the merchant's accounting needs them. Returns how many orders had some.
   */
  redactOrders(externalOrderIds: string[]): Promise<number>;
  /** Retention: the same erasure for orders that finished before `finishedBefore`. Returns how many. */
  erasePersonalDataOfFinished(finishedBefore: Date): Promise<number>;
  /**
   * Compliance, shop/redact (48 h after the shop uninstalled the app): erases every record of the shop, however
   * old and however many, with their timelines and claims. Returns how many orders were erased.
   */
  eraseShop(shopId: string): Promise<number>;

  /** Orders with no final state first seen before `firstSeenBefore`, oldest first (`relais stale`). */
  listStale(firstSeenBefore: Date, options?: { shopId?: string }): Promise<StaleOrder[]>;
  /**
   * The operator ends an order that never reached a final state: it becomes `cancelled` in Relais only (no call
   * to the delivery service, nothing written to the shop) and leaves the held, in-flight and unready lists. Its
   * timeline says it was closed, by whom, from which state and why. Refused for an unknown order, a finished one,
   * or one first seen after `firstSeenBefore`.
   */
  closeStale(
    externalOrderId: string,
    input: { reason: string; by: string; now: Date; firstSeenBefore: Date },
  ): Promise<CloseStaleResult>;
}

/** Held orders per page read by allHeldOrders. */
export const HELD_PAGE_SIZE = 500;

/**
 * Every held order (of one shop, when given), longest held first, read page by page: however many orders are
 * held, none is left out (reconciliation reports each; `relais replay --all` replays each).
 */
export async function allHeldOrders(
  ledger: Pick<OrderLedger, 'listHeldPage'>,
  options: { shopId?: string; pageSize?: number } = {},
): Promise<OrderRecord[]> {
  const limit = options.pageSize ?? HELD_PAGE_SIZE;
  const held: OrderRecord[] = [];
  for (let after: string | undefined; ;) {
    const page = await ledger.listHeldPage({
      ...(options.shopId === undefined ? {} : { shopId: options.shopId }),
      ...(after === undefined ? {} : { after }),
      limit,
    });
    held.push(...page);
    if (page.length < limit) break;
    after = page.at(-1)!.meta.externalOrderId;
  }
  const since = (record: OrderRecord) => record.hold?.at ?? '';
  return held.sort(
    (a, b) => since(a).localeCompare(since(b)) || a.meta.externalOrderId.localeCompare(b.meta.externalOrderId),
  );
}
