/**
 * The shipping a Shopify order still owes the shop: what comes out of the outstanding balance when the customer
 * pays the delivery service's own price at the door (src/domain/door-amount.ts).
 *
 * `total_shipping_price_set` is the price before discounts and refunds (the Admin schema: "the total shipping
 * amount before discounts and returns"), so it cannot be used: a free-shipping code would leave 2 000 F of goods
 * uncollected. What is read, first found wins:
 *  1. `current_shipping_price_set`: "the current shipping price after applying refunds and discounts" (sent in
 *     `orders/*` webhook bodies; `currentShippingPriceSet` in GraphQL).
 *  2. The shipping lines, each at `discounted_price_set` (after its discounts), less what refunds returned of
 *     shipping (`refunds[].refund_shipping_lines[].subtotal_amount_set`, or the older
 *     `order_adjustments[]` of kind `shipping_refund`).
 *  3. `total_shipping_price_set` less those refunds (a body with neither of the above).
 * These prices include the tax when the shop's prices include it (`taxes_included: true`); otherwise they are
 * before tax, and the tax charged on the shipping (`shipping_lines[].tax_lines[]`, less the tax refunded with
 * it) is added: it is part of what the customer paid for the shop's shipping, not of the goods.
 *
 * Amounts are whole francs; an unreadable one counts as none (as before), never a reason to hold the order.
 */
import { ZERO_XOF, type Xof, xof } from '../../domain/money.js';
import { readXof } from '../../shops/platforms/common.js';
import type { ShopifyOrderPayload } from './payload.js';

type Money = string | number | null | undefined;
type MoneyBag = { shop_money?: { amount: string | number } | null } | null | undefined;

/** Whole francs of a figure, 0 when absent or unreadable; the sign is dropped (refunds come either way). */
function francs(value: Money): number {
  if (value === undefined || value === null) return 0;
  const reading = readXof(typeof value === 'string' ? value.trim().replace(/^-/, '') : Math.abs(value));
  return reading.ok ? reading.value : 0;
}

/** A money bag's shop amount, else the plain field beside it; undefined when neither is there. */
function amountOf(bag: MoneyBag, plain?: Money): number | undefined {
  const amount = bag?.shop_money?.amount;
  if (amount !== undefined) return francs(amount);
  return plain === undefined || plain === null ? undefined : francs(plain);
}

const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);

/** What refunds returned of the shipping: its price and its tax, as Shopify wrote each refund. */
function refundedShipping(p: ShopifyOrderPayload): { price: number; tax: number } {
  let price = 0;
  let tax = 0;
  for (const refund of p.refunds ?? []) {
    const lines = refund.refund_shipping_lines ?? [];
    if (lines.length > 0) {
      price += sum(lines.map((line) => amountOf(line.subtotal_amount_set) ?? 0));
      tax += sum(lines.map((line) => amountOf(line.tax_amount_set) ?? 0));
      continue;
    }
    for (const adjustment of refund.order_adjustments ?? []) {
      if (adjustment.kind !== 'shipping_refund') continue;
      price += amountOf(adjustment.amount_set, adjustment.amount) ?? 0;
      tax += amountOf(adjustment.tax_amount_set, adjustment.tax_amount) ?? 0;
    }
  }
  return { price, tax };
}

function liveShippingLines(p: ShopifyOrderPayload) {
  return (p.shipping_lines ?? []).filter((line) => line.is_removed !== true);
}

/** The shipping price still owed, after discounts and refunds (tax included only when the shop's prices include it). */
function shippingPriceOwed(p: ShopifyOrderPayload, refunded: number): number {
  const current = amountOf(p.current_shipping_price_set);
  if (current !== undefined) return current;
  const lines = liveShippingLines(p);
  const charged =
    lines.length > 0
      ? sum(
          lines.map(
            (line) =>
              amountOf(line.discounted_price_set, line.discounted_price) ?? amountOf(line.price_set, line.price) ?? 0,
          ),
        )
      : (amountOf(p.total_shipping_price_set) ?? 0);
  return Math.max(0, charged - refunded);
}

/** The tax on the shipping still owed, when the shop's prices exclude tax (0 when they include it). */
function shippingTaxOwed(p: ShopifyOrderPayload, priceOwed: number, refundedTax: number): number {
  if (p.taxes_included !== false || priceOwed === 0) return 0;
  const charged = sum(
    liveShippingLines(p).flatMap((line) =>
      (line.tax_lines ?? []).map((tax) => amountOf(tax.price_set, tax.price) ?? 0),
    ),
  );
  return Math.max(0, charged - refundedTax);
}

/** The shipping the order still owes the shop, with its tax when the shop's prices exclude it, in whole francs. */
export function shopifyShippingOwed(p: ShopifyOrderPayload): Xof {
  const refunded = refundedShipping(p);
  const price = shippingPriceOwed(p, refunded.price);
  const owed = price + shippingTaxOwed(p, price, refunded.tax);
  return owed > 0 ? xof(owed) : ZERO_XOF;
}
