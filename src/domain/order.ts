/**
 * One platform-neutral order. Everything past src/shops/platforms/ sees a StoreOrder, never a Shopify or
 * WooCommerce payload: the stores convert at the edge (DESIGN.md, "Conventions").
 */
import type { Xof } from './money.js';

/**
 * The shop's platform, as the store-platform registry names it (src/shops/platforms/settings.ts, `shop.platform`).
 * Opaque here: what a platform means is the platform's business (src/shops/platforms/), never a branch in the domain.
 */
export type Platform = string;

/** The spec's payment families (section 1). */
export type PaymentFamily = 'cash_on_delivery' | 'prepaid' | 'deposit_then_balance' | 'business_account';

export interface Coordinates {
  lat: number;
  lng: number;
}

export interface StoreAddress {
  name: string;
  phone?: string;
  company?: string;
  address1?: string;
  address2?: string;
  /** What the customer typed as city: often the city name, sometimes the neighbourhood. */
  city?: string;
  province?: string;
  zip?: string;
  countryCode?: string;
  coords?: Coordinates;
}

export interface StoreLineItem {
  productId?: string;
  variantId?: string;
  name: string;
  quantity: number;
  /** Weight of one unit in grams, when the platform gives it on the line. */
  unitGrams?: number;
}

export interface StoreOrder {
  platform: Platform;
  /** The shop's id in the Relais shop registry. */
  shopId: string;
  /** The platform's own id of the order (numeric id as a string); never the display name. */
  orderId: string;
  /** What the merchant sees ("#1001"). */
  orderName: string;
  /** See src/domain/ids.ts: deterministic, unique per dispatch organisation, reversible. */
  externalOrderId: string;
  currency: string;
  /** The order total in francs. */
  total: Xof;
  /**
   * What the shop says the customer still owes (its outstanding balance); zero for a prepaid order. It may
   * include the shipping the shop charged: what the courier collects is worked out from it and the shop's
   * policy (src/domain/door-amount.ts), never sent as it is.
   */
  outstanding: Xof;
  /**
   * The shop's shipping the order still owes (0 when free or unknown), part of `total`: after discounts and
   * refunds, with the tax on it when the shop's prices exclude tax. It comes out of `outstanding` when the
   * customer pays the delivery service's own price at the door (src/domain/door-amount.ts).
   */
  shippingCharged: Xof;
  paymentFamily: PaymentFamily;
  /** The platform's raw state, kept for policies and reconciliation (Shopify financial_status, Woo status). */
  financialStatus: string;
  platformStatus: string;
  gatewayNames: string[];
  cancelled: boolean;
  /**
   * With `cancelled`: the shop may bring the order back (a payment that failed and may be paid again, an order
   * the merchant may restore from cancelled or the trash), so it is not over. Why it is stopped (one sentence
   * for the merchant), as the hold the order waits in until the shop says ship it (src/orders/intake/shop-event.ts).
   * Absent: the cancellation is final.
   */
  stoppedInShop?: HoldReason;
  dropoff: StoreAddress;
  /** Parcel weight in grams; undefined means "standard parcel" (the service's own default). */
  weightGrams?: number;
  lineItems: StoreLineItem[];
  createdAt: string;
  updatedAt: string;
}

/**
 * Why an order is held instead of dispatched. `code` is stable (for filters and metrics); `message`
 * is written for the merchant and says what to do.
 */
export interface HoldReason {
  code: string;
  message: string;
}

/**
 * Whether an order ships now, by its shop's policy (src/orders/intake/policy.ts, and each platform's own rules). `wait` is
 * for a state the shop moves on from by itself (a payment in progress); an order no event will move on is held,
 * with a reason that says what the merchant can do.
 */
export type Eligibility =
  | { decision: 'dispatch' }
  | { decision: 'wait'; why: string }
  | { decision: 'hold'; hold: HoldReason }
  | { decision: 'cancel' };
