/**
 * What a test, the demo or a merchant passes to `createOrder`. Validated with zod because it also arrives
 * over HTTP (the emulator's control routes). Defaults describe a typical cash-on-delivery order in Dakar.
 */
import { z } from 'zod';

const money = z.union([z.string(), z.number()]);
const address = z.record(z.string(), z.unknown());

export const lineItemInputSchema = z.object({
  title: z.string().min(1),
  quantity: z.number().int().positive().default(1),
  /** Unit price as a decimal string or number ("15000", "15000.00", 15000). */
  price: money,
  grams: z.number().int().nonnegative().default(0),
  sku: z.string().nullable().default(null),
  variantTitle: z.string().nullable().default(null),
  vendor: z.string().nullable().default(null),
  productId: z.number().int().positive().nullable().default(null),
  variantId: z.number().int().positive().nullable().default(null),
  requiresShipping: z.boolean().default(true),
});

export const shippingLineInputSchema = z.object({
  title: z.string().min(1),
  price: money,
  code: z.string().optional(),
  /** A discount code on the shipping: what it takes off ("2000" for a free-shipping code on 2 000 F). */
  discount: z.object({ code: z.string().min(1), amount: money }).optional(),
  /** The tax rate on shipping (0.18: Senegal's VAT), charged on the discounted price in whole units. */
  taxRate: z.number().min(0).max(1).optional(),
});

const financialStatus = z.enum([
  'pending',
  'authorized',
  'partially_paid',
  'paid',
  'partially_refunded',
  'refunded',
  'voided',
]);

export const createOrderInputSchema = z.object({
  /** Fixed numeric id; generated when absent. */
  id: z.number().int().positive().optional(),
  createdAt: z.union([z.string(), z.date()]).optional(),
  updatedAt: z.union([z.string(), z.date()]).optional(),
  currency: z.string().length(3).optional(),
  presentmentCurrency: z.string().length(3).optional(),
  email: z.string().nullable().optional(),
  phone: z.string().nullable().optional(),
  note: z.string().nullable().optional(),
  noteAttributes: z.array(z.object({ name: z.string(), value: z.string() })).optional(),
  tags: z.array(z.string()).optional(),
  /** payment_gateway_names; one name or several. */
  gateway: z.union([z.string(), z.array(z.string())]).optional(),
  financialStatus: financialStatus.optional(),
  /** For partially_paid: how much was received, in currency units. */
  amountPaid: money.optional(),
  lineItems: z.array(lineItemInputSchema).min(1).optional(),
  shippingLines: z.array(shippingLineInputSchema).optional(),
  /** `taxes_included`; false (the default) adds the tax on shipping to the totals. */
  taxesIncluded: z.boolean().optional(),
  shippingAddress: address.nullable().optional(),
  billingAddress: address.nullable().optional(),
  customer: z.record(z.string(), z.unknown()).nullable().optional(),
  sourceName: z.string().optional(),
  test: z.boolean().optional(),
  /** Raw REST fields merged over the rendered webhook body (legacy shapes, fields the emulator does not model). */
  rest: z.record(z.string(), z.unknown()).optional(),
});

export type CreateOrderInput = z.input<typeof createOrderInputSchema>;
export type ParsedCreateOrderInput = z.output<typeof createOrderInputSchema>;

/** A Dakar delivery address with numeric coordinates, as new Shopify payloads carry them. */
export const DEFAULT_SHIPPING_ADDRESS = {
  first_name: 'Awa',
  last_name: 'Diop',
  name: 'Awa Diop',
  company: null,
  address1: 'Villa 12, Sicap Liberté 2',
  address2: '',
  city: 'Dakar',
  province: 'Dakar',
  province_code: 'DK',
  zip: '',
  country: 'Senegal',
  country_code: 'SN',
  phone: '+221 77 123 45 67',
  latitude: 14.7137,
  longitude: -17.4564,
};

export const DEFAULT_COD_GATEWAY = 'Cash on Delivery (COD)';
