/**
 * The part of a WooCommerce REST v3 order (`GET /wp-json/wc/v3/orders/{id}`, which is also what `order.*`
 * webhooks deliver) that Relais reads, as zod schemas. Unknown fields are ignored; missing ones are decided
 * on in normalise.ts. A field of the wrong type fails the parse: that payload is not one we understand.
 *
 * This type never leaves src/shops/platforms/.
 */
import { z } from 'zod';

const text = z.string().nullish();
/** WooCommerce money is a decimal string; plugins and the line `price` field use numbers. */
const money = z.union([z.string(), z.number()]);
const numericId = z.union([z.number(), z.string()]).nullish();

const address = z.object({
  first_name: text,
  last_name: text,
  company: text,
  address_1: text,
  address_2: text,
  city: text,
  state: text,
  postcode: text,
  country: text,
  email: text,
  phone: text,
});
export type WooAddressPayload = z.infer<typeof address>;

const metaEntry = z.object({ key: z.string(), value: z.unknown() });

export const wooOrderSchema = z.object({
  id: numericId,
  number: z.union([z.string(), z.number()]).nullish(),
  status: text,
  currency: text,
  total: money.nullish(),
  shipping_total: money.nullish(),
  shipping_tax: money.nullish(),
  payment_method: text,
  payment_method_title: text,
  date_created: text,
  date_created_gmt: text,
  date_modified: text,
  date_modified_gmt: text,
  billing: address.nullish(),
  shipping: address.nullish(),
  meta_data: z.array(metaEntry).nullish(),
  line_items: z
    .array(
      z.object({
        id: numericId,
        name: text,
        product_id: numericId,
        variation_id: numericId,
        quantity: z.number().nullish(),
      }),
    )
    .nullish(),
  // The order body lists each refund's total only; `shipping_lines` is added from the refund itself when Relais
  // read it (refunds.ts), each line's `total` and `total_tax` negative.
  refunds: z
    .array(
      z.object({
        id: numericId,
        total: money.nullish(),
        shipping_lines: z.array(z.object({ total: money.nullish(), total_tax: money.nullish() })).nullish(),
      }),
    )
    .nullish(),
});

export type WooOrderPayload = z.infer<typeof wooOrderSchema>;

export type WooOrderParse = { ok: true; order: WooOrderPayload } | { ok: false; error: z.ZodError };

/** Parses a webhook body or a REST read of one order. Never throws. */
export function parseWooOrder(body: unknown): WooOrderParse {
  const parsed = wooOrderSchema.safeParse(body);
  return parsed.success ? { ok: true, order: parsed.data } : { ok: false, error: parsed.error };
}
