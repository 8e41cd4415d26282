/**
 * What the emulated shop stores. One model feeds both views: the REST body sent with webhooks
 * (rest.ts) and the GraphQL objects resolvers return (graphql/views.ts), so they never disagree.
 */

export type FinancialStatus =
  'pending' | 'authorized' | 'partially_paid' | 'paid' | 'partially_refunded' | 'refunded' | 'voided';

export type FulfillmentOrderStatus =
  'OPEN' | 'IN_PROGRESS' | 'CLOSED' | 'CANCELLED' | 'ON_HOLD' | 'SCHEDULED' | 'INCOMPLETE';

export type FulfillmentEventStatus =
  | 'ATTEMPTED_DELIVERY'
  | 'CARRIER_PICKED_UP'
  | 'CONFIRMED'
  | 'DELAYED'
  | 'DELIVERED'
  | 'FAILURE'
  | 'IN_TRANSIT'
  | 'LABEL_PRINTED'
  | 'LABEL_PURCHASED'
  | 'OUT_FOR_DELIVERY'
  | 'READY_FOR_PICKUP';

/** A REST address as Shopify sends it; kept as given so odd shapes (string coordinates, nulls) survive. */
export interface RestAddress {
  first_name?: string | null;
  last_name?: string | null;
  name?: string | null;
  company?: string | null;
  address1?: string | null;
  address2?: string | null;
  city?: string | null;
  province?: string | null;
  province_code?: string | null;
  zip?: string | null;
  country?: string | null;
  country_code?: string | null;
  phone?: string | null;
  latitude?: number | string | null;
  longitude?: number | string | null;
  [key: string]: unknown;
}

export interface StoredLineItem {
  id: number;
  title: string;
  variantTitle: string | null;
  sku: string | null;
  vendor: string | null;
  quantity: number;
  /** Unit price in hundredths. */
  price: number;
  grams: number;
  productId: number | null;
  variantId: number | null;
  requiresShipping: boolean;
  fulfilledQuantity: number;
  /** Items removed by a cancellation no longer count in current totals. */
  removedQuantity: number;
}

export interface StoredShippingLine {
  id: number;
  title: string;
  code: string;
  /** Price before discounts, in hundredths (with tax when the order's prices include tax). */
  price: number;
  /** What a discount code took off this line (a free-shipping code takes it all), in hundredths. */
  discount: number;
  /** The discount code that took it, for `discount_codes` and `discount_applications`. */
  discountCode: string | null;
  /** Tax on the discounted price, in hundredths (part of `price` when prices include tax, added when not). */
  tax: number;
  taxTitle: string;
  taxRate: number;
}

/** A refund of shipping (Shopify's refund with `refund_shipping_lines`); goods refunds are not modelled. */
export interface StoredRefund {
  id: number;
  createdAt: number;
  note: string | null;
  shippingLines: { id: number; shippingLineId: number; subtotal: number; tax: number }[];
}

export interface StoredFulfillmentOrderLineItem {
  id: number;
  lineItemId: number;
  totalQuantity: number;
  remainingQuantity: number;
}

export interface StoredFulfillmentOrder {
  id: number;
  status: FulfillmentOrderStatus;
  createdAt: number;
  updatedAt: number;
  lineItems: StoredFulfillmentOrderLineItem[];
}

export interface TrackingInfo {
  company: string | null;
  number: string | null;
  url: string | null;
}

export interface StoredFulfillmentEvent {
  id: number;
  status: FulfillmentEventStatus;
  happenedAt: number;
  createdAt: number;
  message: string | null;
  estimatedDeliveryAt: number | null;
  address1: string | null;
  city: string | null;
  province: string | null;
  country: string | null;
  zip: string | null;
  latitude: number | null;
  longitude: number | null;
}

export interface StoredFulfillment {
  id: number;
  orderId: number;
  /** "#1001-F1": the order name and the fulfillment's rank. */
  name: string;
  status: 'SUCCESS' | 'CANCELLED';
  createdAt: number;
  updatedAt: number;
  trackingInfo: TrackingInfo[];
  events: StoredFulfillmentEvent[];
  lineItems: { lineItemId: number; fulfillmentOrderLineItemId: number; fulfillmentOrderId: number; quantity: number }[];
  fulfillmentOrderIds: number[];
  notifyCustomer: boolean;
  message: string | null;
  deliveredAt: number | null;
  inTransitAt: number | null;
  estimatedDeliveryAt: number | null;
}

export interface StoredMetafield {
  id: number;
  namespace: string;
  key: string;
  type: string;
  value: string;
  createdAt: number;
  updatedAt: number;
}

export interface StoredOrder {
  id: number;
  number: number;
  name: string;
  token: string;
  confirmationNumber: string;
  createdAt: number;
  updatedAt: number;
  processedAt: number;
  currency: string;
  presentmentCurrency: string;
  email: string | null;
  phone: string | null;
  note: string | null;
  noteAttributes: { name: string; value: string }[];
  tags: string[];
  gatewayNames: string[];
  financialStatus: FinancialStatus;
  /** Hundredths received so far (marked as paid, captured). */
  paid: number;
  cancelledAt: number | null;
  cancelReason: string | null;
  closedAt: number | null;
  lineItems: StoredLineItem[];
  shippingLines: StoredShippingLine[];
  /** Whether prices include tax (`taxes_included`); when not, the tax on shipping is added to the totals. */
  taxesIncluded: boolean;
  refunds: StoredRefund[];
  shippingAddress: RestAddress | null;
  billingAddress: RestAddress | null;
  customer: Record<string, unknown> | null;
  fulfillmentOrders: StoredFulfillmentOrder[];
  fulfillments: StoredFulfillment[];
  metafields: StoredMetafield[];
  sourceName: string;
  test: boolean;
  /** Fields the emulator does not model, merged over the rendered REST body as given. */
  restExtras: Record<string, unknown>;
}

export interface StoredWebhookSubscription {
  id: number;
  /** GraphQL enum form: ORDERS_CREATE. */
  topic: string;
  uri: string;
  format: 'JSON' | 'XML';
  includeFields: string[];
  metafieldNamespaces: string[];
  filter: string | null;
  name: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface StoredCarrierService {
  id: number;
  name: string;
  callbackUrl: string;
  active: boolean;
  supportsServiceDiscovery: boolean;
}

/** A GraphQL-style user error, as mutations return them. */
export interface UserError {
  field: string[] | null;
  message: string;
  code?: string;
  elementIndex?: number;
}

/** Something the shop did that subscribers hear about: one event per topic, with the body at that moment. */
export interface ShopEvent {
  /** REST form: orders/paid. */
  topic: string;
  payload: unknown;
  triggeredAt: number;
}

// ---- totals -------------------------------------------------------------------------------------------

export function currentQuantity(item: StoredLineItem): number {
  return item.quantity - item.removedQuantity;
}

export function lineItemsTotal(order: StoredOrder, current: boolean): number {
  return order.lineItems.reduce((sum, item) => sum + item.price * (current ? currentQuantity(item) : item.quantity), 0);
}

/** `total_shipping_price_set`: the shipping before discounts and refunds. */
export function shippingTotal(order: StoredOrder): number {
  return order.shippingLines.reduce((sum, line) => sum + line.price, 0);
}

export function shippingDiscounts(order: StoredOrder): number {
  return order.shippingLines.reduce((sum, line) => sum + line.discount, 0);
}

function refundedShipping(order: StoredOrder): { subtotal: number; tax: number } {
  const lines = order.refunds.flatMap((refund) => refund.shippingLines);
  return {
    subtotal: lines.reduce((sum, line) => sum + line.subtotal, 0),
    tax: lines.reduce((sum, line) => sum + line.tax, 0),
  };
}

/** `current_shipping_price_set`: after discounts and refunds (with tax only when prices include it). */
export function currentShipping(order: StoredOrder): number {
  return shippingTotal(order) - shippingDiscounts(order) - refundedShipping(order).subtotal;
}

/** The tax on the shipping still charged. */
export function currentShippingTax(order: StoredOrder): number {
  return order.shippingLines.reduce((sum, line) => sum + line.tax, 0) - refundedShipping(order).tax;
}

/** Tax added on top of prices: none when prices include it. */
function addedTax(order: StoredOrder, current: boolean): number {
  if (order.taxesIncluded) return 0;
  return current ? currentShippingTax(order) : order.shippingLines.reduce((sum, line) => sum + line.tax, 0);
}

/** `total_price`: after discounts, before refunds. */
export function originalTotal(order: StoredOrder): number {
  return lineItemsTotal(order, false) + shippingTotal(order) - shippingDiscounts(order) + addedTax(order, false);
}

/** After a cancellation the items are removed, and so is what they cost (shipping stays, as at Shopify). */
export function currentTotal(order: StoredOrder): number {
  if (order.cancelledAt !== null) return 0;
  return lineItemsTotal(order, true) + currentShipping(order) + addedTax(order, true);
}

export function outstanding(order: StoredOrder): number {
  if (order.financialStatus === 'voided' || order.financialStatus === 'refunded') return 0;
  return Math.max(0, currentTotal(order) - order.paid);
}

export function totalWeight(order: StoredOrder): number {
  return order.lineItems.reduce((sum, item) => sum + item.grams * item.quantity, 0);
}

export type DisplayFulfillmentStatus = 'FULFILLED' | 'PARTIALLY_FULFILLED' | 'UNFULFILLED';

export function displayFulfillmentStatus(order: StoredOrder): DisplayFulfillmentStatus {
  const shippable = order.lineItems.filter((item) => item.quantity > 0);
  const fulfilled = shippable.reduce((sum, item) => sum + item.fulfilledQuantity, 0);
  const total = shippable.reduce((sum, item) => sum + item.quantity, 0);
  if (fulfilled === 0) return 'UNFULFILLED';
  return fulfilled >= total ? 'FULFILLED' : 'PARTIALLY_FULFILLED';
}

export function canMarkAsPaid(order: StoredOrder): boolean {
  return (
    order.cancelledAt === null &&
    (order.financialStatus === 'pending' || order.financialStatus === 'partially_paid') &&
    outstanding(order) > 0
  );
}
