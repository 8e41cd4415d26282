/**
 * What Relais writes back into a shop as the parcel moves. One implementation per platform
 * (shopify/writer.ts, woocommerce/writer.ts); the delivery-sync job calls only this interface.
 *
 * Every method is idempotent: it reads the shop's state first (or uses keys the platform dedupes on),
 * so a retried job, a duplicate webhook or a replay never writes the same thing twice.
 */
import type { DoorAmount } from '../../domain/door-amount.js';
import type { DeliveryStep } from '../../domain/shipment-status.js';

export interface ShopOrderRef {
  shopId: string;
  /** The platform's order id (numeric, as a string). */
  orderId: string;
  orderName: string;
  externalOrderId: string;
}

export interface DispatchInfo {
  shipmentId: string;
  trackingCode?: string;
  publicTrackingUrl?: string;
  /** The goods: what the shipment carries for the courier to collect (door-amount.ts goodsCarried; 0 for prepaid). */
  goods: number;
  /** What the customer hands the courier and why (goods, delivery, collection fee), when cash is collected. */
  door?: DoorAmount;
  cashOnDelivery: boolean;
  neighbourhood?: string;
  /** For the merchant's accounting only, never shown to the customer. */
  quote?: { quoteId: string; total: number; breakdown?: Record<string, number | undefined> };
  /** The carrier name shown with the tracking link. */
  carrierName: string;
  notifyCustomer: boolean;
}

export interface ShopWriter {
  /** Shipment reference on the order (metafields + tag / meta_data) and the tracking link for the customer (fulfillment / customer note). */
  recordDispatch(order: ShopOrderRef, info: DispatchInfo): Promise<void>;
  /** One delivery step: a fulfillment event (Shopify) or a private order note (WooCommerce). */
  recordStep(order: ShopOrderRef, step: DeliveryStep, at: string, info: DispatchInfo): Promise<void>;
  /** Cash collected: mark the order paid (and WooCommerce `completed`). Never called for a failed or returned delivery. */
  markPaid(order: ShopOrderRef, info: DispatchInfo): Promise<void>;
  /** A problem the merchant must see on the order (a refused cancellation, a failed delivery). */
  recordProblem(order: ShopOrderRef, message: string): Promise<void>;
}
