/**
 * What the WooCommerce REST client (rest.ts) reads and answers: its error, the zod schemas of the shop's answers
 * and the views they give, and the two interfaces the client implements (one for orders, one for relais doctor).
 */
import { z } from 'zod';
import type { Secret } from '../../shops/secret.js';
import { failureOf, RelaisError } from '../../domain/errors.js';
import type { Logger } from '../../log.js';

export type WooErrorKind = 'network' | 'timeout' | 'http' | 'invalid_response';

export interface WooApiErrorInit {
  method: string;
  /** The endpoint without query string, e.g. `orders/123/notes`. */
  endpoint: string;
  kind: WooErrorKind;
  message: string;
  retryable: boolean;
  status?: number;
  code?: string;
  retryAfterMs?: number;
}

/** `retryAfterMs` (in the base, src/domain/errors.ts) comes from Retry-After, when the shop or its proxy sent one. */
export class WooApiError extends RelaisError {
  override readonly name = 'WooApiError';
  readonly method: string;
  readonly endpoint: string;
  readonly kind: WooErrorKind;
  readonly status?: number;
  /** WooCommerce's error code, e.g. `woocommerce_rest_product_invalid_id`. */
  readonly code?: string;

  constructor(init: WooApiErrorInit) {
    super({ failure: failureOf(init.retryable), message: init.message, retryAfterMs: init.retryAfterMs });
    this.method = init.method;
    this.endpoint = init.endpoint;
    this.kind = init.kind;
    if (init.status !== undefined) this.status = init.status;
    if (init.code !== undefined) this.code = init.code;
  }

  /** True when WooCommerce says the resource does not exist (a deleted product or order). */
  get notFound(): boolean {
    return this.status === 404 || (this.status === 400 && /invalid_id$/.test(this.code ?? ''));
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      method: this.method,
      endpoint: this.endpoint,
      kind: this.kind,
      status: this.status,
      code: this.code,
      retryable: this.retryable,
      retryAfterMs: this.retryAfterMs,
    };
  }
}

// ---------------------------------------------------------------------------------------------------
// What Relais reads (unknown fields ignored)

const metaEntrySchema = z.object({ id: z.number().optional(), key: z.string(), value: z.unknown() }).loose();

export const orderSchema = z
  .object({
    id: z.number().int(),
    status: z.string(),
    meta_data: z.array(metaEntrySchema).default([]),
  })
  .loose();
export type WooOrderView = z.infer<typeof orderSchema>;

export const noteSchema = z
  .object({
    id: z.number().int(),
    note: z.string(),
    customer_note: z.boolean(),
  })
  .loose();
export type WooNoteView = z.infer<typeof noteSchema>;

/** Products and variations: `weight` is a string in the shop's unit, "" when unset. */
export const productSchema = z
  .object({
    id: z.number().int(),
    weight: z
      .string()
      .nullish()
      .transform((w) => w ?? ''),
    virtual: z.boolean().optional(),
  })
  .loose();
export type WooProductView = z.infer<typeof productSchema>;

/** A refund: what it gave back of the shipping, each line's `total` and `total_tax` negative. */
export const refundSchema = z
  .object({
    id: z.number().int(),
    shipping_lines: z
      .array(
        z
          .object({
            total: z.union([z.string(), z.number()]).nullish(),
            total_tax: z.union([z.string(), z.number()]).nullish(),
          })
          .loose(),
      )
      .default([]),
  })
  .loose();
export type WooRefundView = z.infer<typeof refundSchema>;

export const settingSchema = z.object({ id: z.string(), value: z.unknown() }).loose();

export const wooErrorBodySchema = z.object({ code: z.string(), message: z.string() }).loose();

export interface WooOrderPatch {
  status?: string;
  set_paid?: boolean;
  /** With only `key`, WooCommerce updates the first row with that key (and drops its duplicates). */
  meta_data?: { key: string; value: string }[];
}

/** The calls Relais makes to a WooCommerce shop. */
export interface WooRest {
  getOrder(orderId: string): Promise<WooOrderView>;
  updateOrder(orderId: string, patch: WooOrderPatch): Promise<WooOrderView>;
  /** Every note of the order (the endpoint is not paged), newest first as WooCommerce lists them. */
  listOrderNotes(orderId: string): Promise<WooNoteView[]>;
  /** `customerNote: true` makes WooCommerce e-mail the note to the customer. */
  addOrderNote(orderId: string, note: string, customerNote: boolean): Promise<WooNoteView>;
  getProduct(productId: string): Promise<WooProductView>;
  getVariation(productId: string, variationId: string): Promise<WooProductView>;
  /** Every refund of the order with what it gave back (`/orders/{id}/refunds`, 100 a page), newest first. */
  listOrderRefunds(orderId: string): Promise<WooRefundView[]>;
  /** `woocommerce_weight_unit`: kg, g, lbs or oz. */
  getWeightUnit(): Promise<string>;
  /** One page of orders, as the raw REST bodies, and X-WP-TotalPages (reconciliation: woocommerce/orders.ts). */
  listOrders(query: WooOrderListQuery): Promise<WooOrderListPage>;
}

// ---- for `relais doctor`: the shop's settings and webhooks (src/ops/doctor.ts) --------------------------

/** Unknown keys are dropped: the answer to a create or update carries the webhook's `secret`. */
export const webhookSchema = z.object({
  id: z.number().int(),
  name: z.string().optional(),
  status: z.string(),
  topic: z.string(),
  delivery_url: z.string(),
});
export type WooWebhookView = z.infer<typeof webhookSchema>;
export type WooSettingView = z.infer<typeof settingSchema>;

/** What an operator tool reads and repairs in a shop; kept apart from the order calls above. */
export interface WooOperatorRest {
  /** One setting, e.g. ('general', 'woocommerce_currency'). */
  getSetting(group: string, id: string): Promise<WooSettingView>;
  /** Every webhook of the shop, whatever its status. */
  listWebhooks(): Promise<WooWebhookView[]>;
  /** POST /webhooks. The secret is the one Relais verifies X-WC-Webhook-Signature with. */
  createWebhook(input: { name: string; topic: string; delivery_url: string; secret: string }): Promise<WooWebhookView>;
  /**
   * PUT /webhooks/{id}, e.g. `{ status: 'active' }` for a webhook WooCommerce disabled after failed deliveries, or a
   * new `secret` when a shop is connected again.
   */
  updateWebhook(
    id: number,
    patch: { status?: 'active' | 'paused' | 'disabled'; delivery_url?: string; secret?: string },
  ): Promise<WooWebhookView>;
}

/** GET /orders parameters reconciliation uses (wc/v3 names in the comments). */
export interface WooOrderListQuery {
  /** `page`, from 1. */
  page: number;
  /** `per_page`, 1..100. */
  perPage: number;
  /** `modified_after`, with `dates_are_gmt=true`: an ISO 8601 instant. */
  modifiedAfter?: Date;
}

export interface WooOrderListPage {
  /** Each a REST order body (the shape `order.*` webhooks carry); normalised by the caller. */
  orders: unknown[];
  /** X-WP-TotalPages; 0 when nothing matched. */
  totalPages: number;
}

export interface WooRestOptions {
  /** The store URL as the merchant types it (`https://shop.example`); http means OAuth 1.0a, https Basic auth. */
  url: string;
  consumerKey: Secret;
  consumerSecret: Secret;
  /** Per request; default 10 s. */
  timeoutMs?: number;
  logger?: Logger;
}
