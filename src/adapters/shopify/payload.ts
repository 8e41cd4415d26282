/**
 * The part of Shopify's REST `Order` resource (the body of `orders/*` webhooks) that Relais reads, as zod
 * schemas. Unknown fields are ignored, and almost every field may be missing or null: Shopify adds and
 * deprecates fields between API versions, and a missing field is decided on in normalise.ts, where it can
 * become a hold with a reason, instead of failing the parse here. What does fail the parse is a field of
 * the wrong type (an object where a price should be): that payload is not one we understand.
 *
 * This type never leaves src/shops/platforms/.
 */
import { z } from 'zod';

/** Shopify money is a decimal string ("15000.00"); some older payloads and apps send numbers. */
const money = z.union([z.string(), z.number()]);
/** Latitude/longitude: numbers in current payloads, strings in old ones, null when unknown. */
const coordinate = z.union([z.number(), z.string()]).nullish();
const text = z.string().nullish();
/** Ids are JSON numbers; a proxy or an emulator may send them as strings of digits. */
const numericId = z.union([z.number(), z.string()]).nullish();

const moneyBag = z
  .object({
    shop_money: z.object({ amount: money, currency_code: z.string() }).nullish(),
    presentment_money: z.object({ amount: money, currency_code: z.string() }).nullish(),
  })
  .nullish();

const address = z.object({
  first_name: text,
  last_name: text,
  name: text,
  company: text,
  phone: text,
  address1: text,
  address2: text,
  city: text,
  province: text,
  province_code: text,
  zip: text,
  country: text,
  country_code: text,
  latitude: coordinate,
  longitude: coordinate,
});
export type ShopifyAddressPayload = z.infer<typeof address>;

const lineItem = z.object({
  id: numericId,
  product_id: numericId,
  variant_id: numericId,
  name: text,
  title: text,
  quantity: z.number().nullish(),
  current_quantity: z.number().nullish(),
  grams: z.number().nullish(),
  requires_shipping: z.boolean().nullish(),
});

const taxLine = z.object({ price: money.nullish(), price_set: moneyBag });

/** A shipping line: its price before and after discounts, and the tax charged on it. */
const shippingLine = z.object({
  price: money.nullish(),
  price_set: moneyBag,
  discounted_price: money.nullish(),
  discounted_price_set: moneyBag,
  is_removed: z.boolean().nullish(),
  tax_lines: z.array(taxLine).nullish(),
});

/** What a refund returned of the shipping: `refund_shipping_lines`, or `order_adjustments` in older versions. */
const refund = z.object({
  refund_shipping_lines: z.array(z.object({ subtotal_amount_set: moneyBag, tax_amount_set: moneyBag })).nullish(),
  order_adjustments: z
    .array(
      z.object({
        kind: text,
        amount: money.nullish(),
        amount_set: moneyBag,
        tax_amount: money.nullish(),
        tax_amount_set: moneyBag,
      }),
    )
    .nullish(),
});

export const shopifyOrderSchema = z.object({
  id: numericId,
  admin_graphql_api_id: text,
  name: text,
  order_number: z.number().nullish(),
  currency: text,
  presentment_currency: text,
  total_price: money.nullish(),
  current_total_price: money.nullish(),
  total_outstanding: money.nullish(),
  total_price_set: moneyBag,
  current_total_price_set: moneyBag,
  total_shipping_price_set: moneyBag,
  current_shipping_price_set: moneyBag,
  taxes_included: z.boolean().nullish(),
  shipping_lines: z.array(shippingLine).nullish(),
  refunds: z.array(refund).nullish(),
  financial_status: text,
  fulfillment_status: text,
  cancelled_at: text,
  gateway: text,
  payment_gateway_names: z.array(z.string()).nullish(),
  phone: text,
  shipping_address: address.nullish(),
  billing_address: address.nullish(),
  customer: z.object({ first_name: text, last_name: text, phone: text, default_address: address.nullish() }).nullish(),
  total_weight: z.number().nullish(),
  line_items: z.array(lineItem).nullish(),
  created_at: text,
  updated_at: text,
  processed_at: text,
});

export type ShopifyOrderPayload = z.infer<typeof shopifyOrderSchema>;

export type ShopifyOrderParse = { ok: true; order: ShopifyOrderPayload } | { ok: false; error: z.ZodError };

/**
 * Parses an order. A webhook body is the resource itself; a REST read (`GET /orders/{id}.json`, used by
 * reconciliation) wraps it as `{ "order": {...} }`, so that wrapper is removed when nothing else is there.
 * Never throws.
 */
export function parseShopifyOrder(body: unknown): ShopifyOrderParse {
  const parsed = shopifyOrderSchema.safeParse(unwrapRestEnvelope(body));
  return parsed.success ? { ok: true, order: parsed.data } : { ok: false, error: parsed.error };
}

function unwrapRestEnvelope(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const keys = Object.keys(body);
  const inner = (body as { order?: unknown }).order;
  return keys.length === 1 && typeof inner === 'object' && inner !== null ? inner : body;
}
