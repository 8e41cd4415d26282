/**
 * What the dashboard asks the ledger in aggregate (issue 29): orders found by filters across shops, and the
 * overview's figures per day, per week, per neighbourhood and per hold reason. Days are the merchant's: each shop
 * is given with its time zone. The adapter is src/adapters/postgres/pg-insights.ts (SQL aggregates over indexed
 * columns; nothing is loaded order by order).
 */
import type { OrderState } from '../domain/order-state.js';

/** How the overview sorts an order's state into the outcomes a merchant reads. */
export type Outcome = 'delivered' | 'failed' | 'cancelled' | 'in_flight' | 'held';
export const OUTCOMES: readonly Outcome[] = ['delivered', 'failed', 'cancelled', 'in_flight', 'held'];

/** Groups of states the orders page can be filtered on (the overview's figures link to them). */
export type StateGroup = Outcome | 'returned' | 'with_courier';

export const STATE_GROUPS: Record<StateGroup, readonly OrderState[]> = {
  delivered: ['delivered'],
  failed: ['returned', 'delivery_failed'],
  cancelled: ['cancelled'],
  held: ['held'],
  in_flight: ['received', 'waiting', 'dispatching', 'awaiting_ready', 'ready', 'in_delivery', 'cancel_refused'],
  returned: ['returned'],
  // A live shipment: the cash is with a courier (a failed attempt is still with the courier until it is returned).
  with_courier: ['awaiting_ready', 'ready', 'in_delivery', 'delivery_failed', 'cancel_refused'],
};

export interface ShopZone {
  shopId: string;
  /** IANA time zone: the shop's days. */
  timeZone: string;
}

/** Which orders: every filter is optional but the shops. Days are YYYY-MM-DD in each shop's time zone. */
export interface OrderFilter {
  shops: readonly ShopZone[];
  /** First seen at or after this instant. */
  since?: Date;
  from?: string;
  to?: string;
  /** Which day `from` and `to` apply to: the order's first sight (default), its last state change, or its hold. */
  dated?: 'received' | 'changed' | 'held';
  states?: readonly OrderState[];
  neighbourhood?: string;
  /** Orders held for this reason (code) at some time, `from`/`to` then dating the hold. */
  holdCode?: string;
  /** Only orders with an amount for the courier to collect. */
  collectsCash?: boolean;
  limit: number;
}

export interface FoundOrders {
  /** Newest first. */
  ids: string[];
  /** How many match in all. */
  total: number;
}

export interface OverviewWindow {
  shops: readonly ShopZone[];
  /** First and last local day, inclusive. */
  from: string;
  to: string;
}

export interface OutcomeDay {
  day: string;
  counts: Record<Outcome, number>;
}

/** Cash for the goods, in francs: collected at the door, still with couriers, and returned (never collected). */
export interface CashDay {
  day: string;
  collected: number;
  withCouriers: number;
  returned: number;
}

export interface RateWeek {
  /** The Monday the week starts on. */
  week: string;
  /** Orders of the week handed to a courier (a shipment was created). */
  shipped: number;
  delivered: number;
  failed: number;
  /** Hours from the order to its delivery, over the week's delivered orders. */
  medianHours?: number;
  p90Hours?: number;
}

export interface NeighbourhoodFigures {
  name: string;
  orders: number;
  shipped: number;
  delivered: number;
  failed: number;
  /** The quoted delivery price, averaged over the orders that have one (whole francs). */
  averageDeliveryPrice?: number;
}

export interface HoldDay {
  day: string;
  code: string;
  orders: number;
}

export interface OverviewFigures {
  outcomes: OutcomeDay[];
  cash: CashDay[];
  weeks: RateWeek[];
  neighbourhoods: NeighbourhoodFigures[];
  holds: HoldDay[];
}

export interface OrderInsights {
  findOrders(filter: OrderFilter): Promise<FoundOrders>;
  overview(window: OverviewWindow, options?: { neighbourhoods?: number }): Promise<OverviewFigures>;
}
