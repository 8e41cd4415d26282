/**
 * Request parameters, validated the way the WordPress REST server validates them against WooCommerce's
 * schemas: integers and booleans may arrive as strings, unknown parameters are ignored, and a bad value
 * gives `rest_invalid_param` with a per-parameter message in WordPress's words.
 */
import { z } from 'zod';
import type { WpError } from './auth.js';
import { ORDER_STATUSES, WEBHOOK_STATUSES } from './model.js';
import { wpList } from './php.js';

const wpInt = z.preprocess(
  (value) => (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value),
  z.number().int(),
);

const wpBool = z.preprocess((value) => {
  if (value === 'true' || value === '1' || value === 1) return true;
  if (value === 'false' || value === '0' || value === 0 || value === '') return false;
  return value;
}, z.boolean());

/** `rest_parse_date()` accepts RFC 3339 with or without a zone (then the site's timezone applies). */
const WP_DATE = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}(:?\d{2})?)?$/;
const wpDate = z.string().regex(WP_DATE, { message: 'Invalid date.' });

/** An id list: `1,2,3`, `[1,2]` or `include[]=1&include[]=2`. */
const wpIdList = z.preprocess((value) => {
  if (typeof value === 'string') return value.split(/[\s,]+/).filter((part) => part !== '');
  if (typeof value === 'number') return [value];
  return value;
}, z.array(wpInt));

/** A string list: `processing,on-hold` or `status[]=processing`. */
const wpStringList = z.preprocess((value) => {
  if (typeof value === 'string') return value.split(/[\s,]+/).filter((part) => part !== '');
  return value;
}, z.array(z.string()));

const addressSchema = z.looseObject({
  first_name: z.string().optional(),
  last_name: z.string().optional(),
  company: z.string().optional(),
  address_1: z.string().optional(),
  address_2: z.string().optional(),
  city: z.string().optional(),
  state: z.string().optional(),
  postcode: z.string().optional(),
  country: z.string().optional(),
  email: z.string().optional(),
  phone: z.string().optional(),
});
export type AddressInput = z.infer<typeof addressSchema>;

const metaSchema = z.looseObject({
  id: wpInt.nullish(),
  key: z.string(),
  value: z.unknown(),
});
export type MetaInput = z.infer<typeof metaSchema>;

const lineItemSchema = z.looseObject({
  id: wpInt.nullish(),
  name: z.string().nullish(),
  product_id: wpInt.nullish(),
  variation_id: wpInt.nullish(),
  quantity: wpInt.nullish(),
  tax_class: z.string().nullish(),
  subtotal: z.string().nullish(),
  total: z.string().nullish(),
  sku: z.string().nullish(),
  meta_data: z.array(metaSchema).nullish(),
});
export type LineItemInput = z.infer<typeof lineItemSchema>;

const shippingLineSchema = z.looseObject({
  id: wpInt.nullish(),
  method_id: z.string().nullish(),
  method_title: z.string().nullish(),
  instance_id: z.string().nullish(),
  total: z.string().nullish(),
  meta_data: z.array(metaSchema).nullish(),
});
export type ShippingLineInput = z.infer<typeof shippingLineSchema>;

const feeLineSchema = z.looseObject({
  id: wpInt.nullish(),
  name: z.string().nullish(),
  tax_class: z.string().nullish(),
  tax_status: z.string().nullish(),
  total: z.string().nullish(),
  meta_data: z.array(metaSchema).nullish(),
});
export type FeeLineInput = z.infer<typeof feeLineSchema>;

/** POST /orders and PUT /orders/{id} bodies (every writable property of the v3 order schema we model). */
export const orderWriteSchema = z.looseObject({
  parent_id: wpInt.optional(),
  status: z.enum(ORDER_STATUSES).optional(),
  currency: z.string().optional(),
  customer_id: wpInt.optional(),
  customer_note: z.string().optional(),
  billing: addressSchema.optional(),
  shipping: addressSchema.optional(),
  payment_method: z.string().optional(),
  payment_method_title: z.string().optional(),
  transaction_id: z.string().optional(),
  meta_data: z.array(metaSchema).optional(),
  line_items: z.array(lineItemSchema).optional(),
  shipping_lines: z.array(shippingLineSchema).optional(),
  fee_lines: z.array(feeLineSchema).optional(),
  set_paid: wpBool.optional(),
});
export type OrderWriteInput = z.infer<typeof orderWriteSchema>;

export const ORDER_ORDERBY = ['date', 'id', 'include', 'title', 'slug', 'modified'] as const;

export const orderListSchema = z.looseObject({
  page: wpInt.pipe(z.number().min(1)).optional(),
  per_page: wpInt.pipe(z.number().min(1).max(100)).optional(),
  offset: wpInt.pipe(z.number().min(0)).optional(),
  order: z.enum(['asc', 'desc']).optional(),
  orderby: z.enum(ORDER_ORDERBY).optional(),
  status: wpStringList.pipe(z.array(z.enum(['any', 'trash', ...ORDER_STATUSES]))).optional(),
  after: wpDate.optional(),
  before: wpDate.optional(),
  modified_after: wpDate.optional(),
  modified_before: wpDate.optional(),
  dates_are_gmt: wpBool.optional(),
  include: wpIdList.optional(),
  exclude: wpIdList.optional(),
  customer: wpInt.optional(),
  product: wpInt.optional(),
  dp: wpInt.pipe(z.number().min(0)).optional(),
});
export type OrderListParams = z.infer<typeof orderListSchema>;

export const noteListSchema = z.looseObject({
  type: z.enum(['any', 'customer', 'internal']).optional(),
});

export const noteCreateSchema = z.looseObject({
  note: z.string(),
  customer_note: wpBool.optional(),
  added_by_user: wpBool.optional(),
});

export const webhookCreateSchema = z.looseObject({
  name: z.string().optional(),
  status: z.enum(WEBHOOK_STATUSES).optional(),
  topic: z.string(),
  delivery_url: z.string(),
  secret: z.string().optional(),
});

export const webhookUpdateSchema = z.looseObject({
  name: z.string().optional(),
  status: z.string().optional(),
  topic: z.string().optional(),
  delivery_url: z.string().optional(),
  secret: z.string().optional(),
});

export const webhookListSchema = z.looseObject({
  page: wpInt.pipe(z.number().min(1)).optional(),
  per_page: wpInt.pipe(z.number().min(1).max(100)).optional(),
  status: z.enum(['all', 'active', 'paused', 'disabled']).optional(),
  order: z.enum(['asc', 'desc']).optional(),
  orderby: z.enum(['date', 'id', 'title']).optional(),
});

export const deleteSchema = z.looseObject({ force: wpBool.optional() });

export const contextSchema = z.looseObject({
  dp: wpInt.pipe(z.number().min(0)).optional(),
});

/** Parses request parameters; a failure is the WP_Error WordPress would answer with. */
export function parseParams<T extends z.ZodType>(
  schema: T,
  params: Record<string, unknown>,
  required: readonly string[] = [],
): { ok: true; value: z.infer<T> } | { ok: false; error: WpError } {
  const missing = required.filter((name) => params[name] === undefined);
  if (missing.length > 0) {
    return {
      ok: false,
      error: {
        code: 'rest_missing_callback_param',
        message: `Missing parameter(s): ${missing.join(', ')}`,
        status: 400,
        data: { params: missing },
      },
    };
  }
  const result = schema.safeParse(params);
  if (result.success) return { ok: true, value: result.data };
  const messages: Record<string, string> = {};
  const details: Record<string, unknown> = {};
  for (const issue of result.error.issues) {
    const top = String(issue.path[0] ?? 'body');
    if (top in messages) continue;
    const path = issue.path.map((part, index) => (index === 0 ? String(part) : `[${String(part)}]`)).join('');
    const { code, message } = wpMessage(issue, path || top);
    messages[top] = message;
    details[top] = { code, message, data: null };
  }
  return {
    ok: false,
    error: {
      code: 'rest_invalid_param',
      message: `Invalid parameter(s): ${Object.keys(messages).join(', ')}`,
      status: 400,
      data: { params: messages, details },
    },
  };
}

function wpMessage(issue: z.core.$ZodIssue, path: string): { code: string; message: string } {
  switch (issue.code) {
    case 'invalid_type': {
      const expected = issue.expected === 'int' || issue.expected === 'number' ? 'integer' : issue.expected;
      return { code: 'rest_invalid_type', message: `${path} is not of type ${expected}.` };
    }
    case 'invalid_value':
      return { code: 'rest_not_in_enum', message: `${path} is not one of ${wpList(issue.values.map(String))}.` };
    case 'too_small':
    case 'too_big':
      if (path.endsWith('per_page')) {
        return { code: 'rest_out_of_bounds', message: `${path} must be between 1 (inclusive) and 100 (inclusive)` };
      }
      return {
        code: 'rest_out_of_bounds',
        message: `${path} must be ${issue.code === 'too_small' ? 'greater' : 'less'} than or equal to ${String(issue.code === 'too_small' ? issue.minimum : issue.maximum)}`,
      };
    case 'invalid_format':
      return { code: 'rest_invalid_date', message: 'Invalid date.' };
    default:
      return { code: 'rest_invalid_param', message: issue.message };
  }
}
