/**
 * Refunds as WooCommerce core makes them (`wc_create_refund`): a `shop_order_refund` child of the order, its
 * amount stored positive, the lines it gave back stored as negative line items pointing at the order's
 * (`_refunded_item_id`). The order itself keeps its `total` and `shipping_total`; its REST body lists each
 * refund by `{id, reason, total}` only (total negative), newest first. What a refund gave back, its shipping
 * lines among them, is read at GET /orders/{id}/refunds (`WC_REST_Order_Refunds_V2_Controller`), each line's
 * `total` and `total_tax` negative. A refund of the whole remaining total makes the order `refunded`
 * (`wc_order_fully_refunded`); the order is saved either way, which fires `order.updated`
 * (`woocommerce_order_refunded`).
 */
import {
  formatDecimal,
  formatWpDate,
  taxOnShipping,
  toSeconds,
  type Order,
  type Refund,
  type ShopSettings,
} from './model.js';

export interface RefundInput {
  /** The goods refunded, before the shipping (whole francs in an XOF shop). */
  goods?: number;
  /** The shipping price refunded (before tax); the tax on it at the shop's rate goes back with it. */
  shipping?: number;
  reason?: string;
}

/** Adds the refund to the order; the caller saves the order (and so fires its update). */
export function addRefund(
  order: Order,
  input: RefundInput,
  context: { settings: ShopSettings; newId: () => number; now: Date },
): Refund {
  const shippingLines: Refund['shippingLines'] = [];
  const shipping = input.shipping ?? 0;
  if (shipping > 0) {
    const line = order.shippingLines[0];
    if (!line) throw new Error(`order ${order.id} has no shipping line to refund`);
    const alreadyRefunded = order.refunds
      .flatMap((refund) => refund.shippingLines)
      .filter((refunded) => refunded.refundedItemId === line.id)
      .reduce((sum, refunded) => sum + refunded.total, 0);
    if (shipping > line.total - alreadyRefunded)
      throw new Error(`order ${order.id}: cannot refund ${shipping} of shipping, ${line.total - alreadyRefunded} left`);
    shippingLines.push({
      id: context.newId(),
      refundedItemId: line.id,
      methodId: line.methodId,
      methodTitle: line.methodTitle,
      total: shipping,
      tax: taxOnShipping(shipping, context.settings),
    });
  }
  const amount = (input.goods ?? 0) + shippingLines.reduce((sum, line) => sum + line.total + line.tax, 0);
  const refunded = order.refunds.reduce((sum, refund) => sum + refund.amount, 0);
  if (amount <= 0 || amount > order.total - refunded)
    throw new Error(`order ${order.id}: a refund of ${amount} is not between 0 and ${order.total - refunded}`);
  const refund: Refund = {
    id: context.newId(),
    amount,
    reason: input.reason ?? '',
    dateCreated: toSeconds(context.now),
    shippingLines,
  };
  order.refunds.push(refund);
  return refund;
}

/** Whether the refunds now cover the whole total (core then moves the order to `refunded`). */
export function fullyRefunded(order: Order): boolean {
  return order.refunds.reduce((sum, refund) => sum + refund.amount, 0) >= order.total;
}

/** One refund as GET /orders/{id}/refunds answers it. */
export function refundJson(
  order: Order,
  refund: Refund,
  settings: ShopSettings,
  homeUrl: string,
  dp?: number,
): Record<string, unknown> {
  const money = (value: number) => formatDecimal(value, dp ?? settings.priceDecimals);
  const base = `${homeUrl}/wp-json/wc/v3/orders/${order.id}/refunds`;
  return {
    id: refund.id,
    date_created: formatWpDate(refund.dateCreated, settings.utcOffsetMinutes, false),
    date_created_gmt: formatWpDate(refund.dateCreated, settings.utcOffsetMinutes, true),
    amount: money(refund.amount),
    reason: refund.reason,
    refunded_by: 1,
    refunded_payment: false,
    meta_data: [],
    line_items: [],
    shipping_lines: refund.shippingLines.map((line) => ({
      id: line.id,
      method_title: line.methodTitle,
      method_id: line.methodId,
      instance_id: '0',
      total: money(-line.total),
      total_tax: money(-line.tax),
      taxes: line.tax === 0 ? [] : [{ id: 1, total: String(-line.tax), subtotal: '' }],
      meta_data: [{ id: line.id * 10, key: '_refunded_item_id', value: String(line.refundedItemId) }],
    })),
    fee_lines: [],
    _links: {
      self: [{ href: `${base}/${refund.id}` }],
      collection: [{ href: base }],
      up: [{ href: `${homeUrl}/wp-json/wc/v3/orders/${order.id}` }],
    },
  };
}
