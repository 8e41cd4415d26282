/**
 * The REST shapes Shopify sends in webhook bodies, modelled on the official `Order` resource of API 2025-10
 * (/work/shared/fixtures/shopify/order-rest-2025-10-official.json): decimal-string money, `*_set` money bags,
 * `admin_graphql_api_id`, comma-joined tags, numeric coordinates as given.
 */
import { gid, restMoney, restTime } from './format.js';
import {
  currentQuantity,
  currentShipping,
  currentShippingTax,
  currentTotal,
  displayFulfillmentStatus,
  lineItemsTotal,
  originalTotal,
  outstanding,
  shippingDiscounts,
  shippingTotal,
  totalWeight,
  type StoredFulfillment,
  type StoredFulfillmentEvent,
  type StoredLineItem,
  type StoredOrder,
  type StoredShippingLine,
} from './model.js';

export interface ShopIdentity {
  shopId: number;
  domain: string;
  currency: string;
}

/** The order body of an `orders/*` webhook. Loosely typed past the fields Relais reads. */
export interface RestOrder {
  id: number;
  admin_graphql_api_id: string;
  name: string;
  order_number: number;
  currency: string;
  presentment_currency: string;
  financial_status: string;
  fulfillment_status: string | null;
  cancelled_at: string | null;
  cancel_reason: string | null;
  created_at: string;
  updated_at: string;
  total_price: string;
  current_total_price: string;
  total_outstanding: string;
  payment_gateway_names: string[];
  tags: string;
  note: string | null;
  shipping_address: Record<string, unknown> | null;
  billing_address: Record<string, unknown> | null;
  line_items: Record<string, unknown>[];
  fulfillments: Record<string, unknown>[];
  [key: string]: unknown;
}

function moneySet(hundredths: number, shopCurrency: string, presentmentCurrency: string): Record<string, unknown> {
  return {
    shop_money: { amount: restMoney(hundredths), currency_code: shopCurrency },
    presentment_money: { amount: restMoney(hundredths), currency_code: presentmentCurrency },
  };
}

function restLineItem(order: StoredOrder, item: StoredLineItem, quantityOverride?: number): Record<string, unknown> {
  const set = (amount: number) => moneySet(amount, order.currency, order.presentmentCurrency);
  const remaining = currentQuantity(item) - item.fulfilledQuantity;
  const fulfillmentStatus =
    item.fulfilledQuantity === 0 ? null : item.fulfilledQuantity >= item.quantity ? 'fulfilled' : 'partial';
  return {
    id: item.id,
    admin_graphql_api_id: gid('LineItem', item.id),
    attributed_staffs: [],
    current_quantity: currentQuantity(item),
    fulfillable_quantity: Math.max(0, remaining),
    fulfillment_service: 'manual',
    fulfillment_status: fulfillmentStatus,
    gift_card: false,
    grams: item.grams,
    name: item.variantTitle ? `${item.title} - ${item.variantTitle}` : item.title,
    price: restMoney(item.price),
    price_set: set(item.price),
    product_exists: item.productId !== null,
    product_id: item.productId,
    properties: [],
    quantity: quantityOverride ?? item.quantity,
    requires_shipping: item.requiresShipping,
    sku: item.sku,
    taxable: false,
    title: item.title,
    total_discount: '0.00',
    total_discount_set: set(0),
    variant_id: item.variantId,
    variant_inventory_management: 'shopify',
    variant_title: item.variantTitle,
    vendor: item.vendor,
    tax_lines: [],
    duties: [],
    discount_allocations: [],
  };
}

export function renderRestFulfillment(order: StoredOrder, fulfillment: StoredFulfillment): Record<string, unknown> {
  const first = fulfillment.trackingInfo[0];
  const lastEvent = fulfillment.events.at(-1);
  return {
    id: fulfillment.id,
    admin_graphql_api_id: gid('Fulfillment', fulfillment.id),
    created_at: restTime(fulfillment.createdAt),
    location_id: null,
    name: fulfillment.name,
    order_id: order.id,
    origin_address: {},
    receipt: {},
    service: 'manual',
    shipment_status: lastEvent ? lastEvent.status.toLowerCase() : null,
    status: fulfillment.status === 'SUCCESS' ? 'success' : 'cancelled',
    tracking_company: first?.company ?? null,
    tracking_number: first?.number ?? null,
    tracking_numbers: fulfillment.trackingInfo.flatMap((t) => (t.number ? [t.number] : [])),
    tracking_url: first?.url ?? null,
    tracking_urls: fulfillment.trackingInfo.flatMap((t) => (t.url ? [t.url] : [])),
    updated_at: restTime(fulfillment.updatedAt),
    line_items: fulfillment.lineItems.flatMap((line) => {
      const item = order.lineItems.find((candidate) => candidate.id === line.lineItemId);
      return item ? [restLineItem(order, item, line.quantity)] : [];
    }),
  };
}

export function renderRestFulfillmentEvent(
  shop: ShopIdentity,
  order: StoredOrder,
  fulfillment: StoredFulfillment,
  event: StoredFulfillmentEvent,
): Record<string, unknown> {
  return {
    id: event.id,
    admin_graphql_api_id: gid('FulfillmentEvent', event.id),
    fulfillment_id: fulfillment.id,
    order_id: order.id,
    shop_id: shop.shopId,
    status: event.status.toLowerCase(),
    message: event.message,
    happened_at: restTime(event.happenedAt),
    created_at: restTime(event.createdAt),
    updated_at: restTime(event.createdAt),
    estimated_delivery_at: event.estimatedDeliveryAt === null ? null : restTime(event.estimatedDeliveryAt),
    address1: event.address1,
    city: event.city,
    province: event.province,
    country: event.country,
    zip: event.zip,
    latitude: event.latitude,
    longitude: event.longitude,
  };
}

export function renderRestOrder(shop: ShopIdentity, order: StoredOrder): RestOrder {
  const set = (amount: number) => moneySet(amount, order.currency, order.presentmentCurrency);
  const subtotal = lineItemsTotal(order, false);
  const currentSubtotal = order.cancelledAt === null ? lineItemsTotal(order, true) : 0;
  const status = displayFulfillmentStatus(order);
  const body: RestOrder = {
    id: order.id,
    admin_graphql_api_id: gid('Order', order.id),
    app_id: null,
    browser_ip: null,
    buyer_accepts_marketing: false,
    cancel_reason: order.cancelReason,
    cancelled_at: order.cancelledAt === null ? null : restTime(order.cancelledAt),
    cart_token: null,
    checkout_id: null,
    checkout_token: null,
    client_details: null,
    closed_at: order.closedAt === null ? null : restTime(order.closedAt),
    confirmation_number: order.confirmationNumber,
    confirmed: true,
    contact_email: order.email,
    created_at: restTime(order.createdAt),
    currency: order.currency,
    current_subtotal_price: restMoney(currentSubtotal),
    current_subtotal_price_set: set(currentSubtotal),
    current_total_additional_fees_set: null,
    current_total_discounts: restMoney(shippingDiscounts(order)),
    current_total_discounts_set: set(shippingDiscounts(order)),
    current_total_duties_set: null,
    current_total_price: restMoney(currentTotal(order)),
    current_total_price_set: set(currentTotal(order)),
    current_total_tax: restMoney(currentShippingTax(order)),
    current_total_tax_set: set(currentShippingTax(order)),
    customer_locale: 'fr',
    device_id: null,
    discount_codes: discountedLines(order).map((line) => ({
      code: line.discountCode,
      amount: restMoney(line.discount),
      type: 'shipping',
    })),
    duties_included: false,
    email: order.email,
    estimated_taxes: false,
    financial_status: order.financialStatus,
    fulfillment_status: status === 'FULFILLED' ? 'fulfilled' : status === 'PARTIALLY_FULFILLED' ? 'partial' : null,
    landing_site: null,
    landing_site_ref: null,
    location_id: null,
    merchant_of_record_app_id: null,
    name: order.name,
    note: order.note,
    note_attributes: order.noteAttributes,
    number: order.number,
    order_number: order.number + 1000,
    order_status_url: `https://${shop.domain}/${shop.shopId}/orders/${order.token}/authenticate?key=emulated`,
    original_total_additional_fees_set: null,
    original_total_duties_set: null,
    payment_gateway_names: order.gatewayNames,
    phone: order.phone,
    po_number: null,
    presentment_currency: order.presentmentCurrency,
    processed_at: restTime(order.processedAt),
    reference: null,
    referring_site: null,
    source_identifier: null,
    source_name: order.sourceName,
    source_url: null,
    subtotal_price: restMoney(subtotal),
    subtotal_price_set: set(subtotal),
    tags: order.tags.join(', '),
    tax_exempt: false,
    tax_lines:
      shippingTaxTotal(order) === 0 ? [] : [restTaxLine(order, order.shippingLines[0]!, shippingTaxTotal(order))],
    taxes_included: order.taxesIncluded,
    test: order.test,
    token: order.token,
    total_cash_rounding_payment_adjustment_set: set(0),
    total_cash_rounding_refund_adjustment_set: set(0),
    total_discounts: restMoney(shippingDiscounts(order)),
    total_discounts_set: set(shippingDiscounts(order)),
    total_line_items_price: restMoney(subtotal),
    total_line_items_price_set: set(subtotal),
    total_outstanding: restMoney(outstanding(order)),
    total_price: restMoney(originalTotal(order)),
    total_price_set: set(originalTotal(order)),
    total_shipping_price_set: set(shippingTotal(order)),
    current_shipping_price_set: set(currentShipping(order)),
    total_tax: restMoney(shippingTaxTotal(order)),
    total_tax_set: set(shippingTaxTotal(order)),
    total_tip_received: '0.00',
    total_weight: totalWeight(order),
    updated_at: restTime(order.updatedAt),
    user_id: null,
    billing_address: order.billingAddress,
    customer: order.customer,
    discount_applications: discountedLines(order).map((line) => ({
      target_type: 'shipping_line',
      type: 'discount_code',
      value: restMoney(line.discount),
      value_type: 'fixed_amount',
      allocation_method: 'each',
      target_selection: 'all',
      code: line.discountCode,
    })),
    fulfillments: order.fulfillments.map((fulfillment) => renderRestFulfillment(order, fulfillment)),
    line_items: order.lineItems.map((item) => restLineItem(order, item)),
    payment_terms: null,
    refunds: order.refunds.map((refund) => ({
      id: refund.id,
      admin_graphql_api_id: gid('Refund', refund.id),
      created_at: restTime(refund.createdAt),
      processed_at: restTime(refund.createdAt),
      note: refund.note,
      order_id: order.id,
      restock: false,
      user_id: null,
      duties: [],
      order_adjustments: [],
      refund_line_items: [],
      transactions: [],
      refund_shipping_lines: refund.shippingLines.map((line) => ({
        id: line.id,
        shipping_line_id: line.shippingLineId,
        subtotal_amount_set: set(line.subtotal),
        tax_amount_set: set(line.tax),
      })),
    })),
    shipping_address: order.shippingAddress,
    shipping_lines: order.shippingLines.map((line) => restShippingLine(order, line)),
  };
  // Extras the caller asked for (legacy shapes, fields not modelled) win over the rendered values on purpose.
  return { ...body, ...order.restExtras };
}

/** The shipping lines with a discount code on them (in order of the lines: the discount application's index). */
function discountedLines(order: StoredOrder): StoredShippingLine[] {
  return order.shippingLines.filter((line) => line.discount > 0 && line.discountCode !== null);
}

function shippingTaxTotal(order: StoredOrder): number {
  return order.shippingLines.reduce((sum, line) => sum + line.tax, 0);
}

function restTaxLine(order: StoredOrder, line: StoredShippingLine, amount: number): Record<string, unknown> {
  return {
    price: restMoney(amount),
    rate: line.taxRate,
    title: line.taxTitle,
    price_set: moneySet(amount, order.currency, order.presentmentCurrency),
    channel_liable: false,
  };
}

/**
 * A shipping line as webhooks carry it: `price` before discounts, `discounted_price` after them, and
 * `current_discounted_price_set` after refunds too; its tax lines are on the discounted price, as charged.
 */
function restShippingLine(order: StoredOrder, line: StoredShippingLine): Record<string, unknown> {
  const set = (amount: number) => moneySet(amount, order.currency, order.presentmentCurrency);
  const discounted = line.price - line.discount;
  const refunded = order.refunds
    .flatMap((refund) => refund.shippingLines)
    .filter((refundLine) => refundLine.shippingLineId === line.id)
    .reduce((sum, refundLine) => sum + refundLine.subtotal, 0);
  const discountIndex = discountedLines(order).indexOf(line);
  return {
    id: line.id,
    carrier_identifier: null,
    code: line.code,
    current_discounted_price_set: set(discounted - refunded),
    discounted_price: restMoney(discounted),
    discounted_price_set: set(discounted),
    is_removed: false,
    phone: null,
    price: restMoney(line.price),
    price_set: set(line.price),
    requested_fulfillment_service_id: null,
    source: 'shopify',
    title: line.title,
    tax_lines: line.tax === 0 ? [] : [restTaxLine(order, line, line.tax)],
    discount_allocations:
      discountIndex < 0
        ? []
        : [
            {
              amount: restMoney(line.discount),
              amount_set: set(line.discount),
              discount_application_index: discountIndex,
            },
          ],
  };
}
