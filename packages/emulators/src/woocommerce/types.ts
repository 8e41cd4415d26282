/**
 * The emulator's public API: options, helper inputs and outputs, the call log and fault controls.
 */
import type { Logger } from '../relais.js';
import type { ApiKey, AuthMethod } from './auth.js';
import type { WebhookStatus, WeightUnit } from './model.js';
import type { OrderWriteInput } from './schemas.js';
import type { RefundInput } from './refunds.js';
import type { AuthorizationRecord, IssuedKey } from './wc-auth.js';
import type { DeliveryRecord, PingResult } from './webhooks.js';

export interface EmulatedWooShop {
  /** URL-safe shop id: the site lives at `/shops/{id}`. */
  id: string;
  consumerKey: string;
  consumerSecret: string;
  weightUnit?: WeightUnit;
  /** ISO 4217 code; default XOF. */
  currency?: string;
  /** `woocommerce_price_num_decimals`; default 2, WooCommerce's default ("15000.00"). */
  priceDecimals?: number;
  /** Site timezone offset from UTC in minutes; default 0 (Dakar, Abidjan). */
  utcOffsetMinutes?: number;
  /** Taxes enabled with this standard rate, applied to shipping (0.18: Senegal's VAT); default 0, taxes off. */
  shippingTaxRate?: number;
  /** The API key's permissions; default read_write. */
  permissions?: ApiKey['permissions'];
}

export interface WooEmulatorOptions {
  shops: EmulatedWooShop[];
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** The consecutive failed delivery that disables a webhook. Default 6: core disables when a failure comes after five recorded ones (`$failures > 5`). */
  disableAfterFailures?: number;
  /** Default 60 000 ms, core's `MINUTE_IN_SECONDS` delivery timeout. */
  deliveryTimeoutMs?: number;
  /** How long app authorisation waits for the app's callback_url; default 60 000 ms, as `post_consumer_data`. */
  authCallbackTimeoutMs?: number;
  /** Core sends order.updated right after order.created for a new order (woocommerce/woocommerce#43019). Default true. */
  orderUpdatedOnCreate?: boolean;
  /** Clock for order, note and webhook dates (not for OAuth timestamps). Default: the system clock. */
  now?: () => Date;
  wooVersion?: string;
  wordpressVersion?: string;
  /** Author stored on system notes; core stores "WooCommerce" (notes stored as "woocommerce" read "system"). */
  systemNoteAuthor?: string;
  logger?: Logger;
}

export interface ProductInput {
  name: string;
  /** In the shop's weight unit; "" or absent means no weight. */
  weight?: string;
  /** Regular price as WooCommerce stores it, e.g. "12500"; default "10000". */
  price?: string;
  sku?: string;
  variations?: { weight?: string; price?: string; sku?: string; option?: string }[];
}

export interface EmulatedProduct {
  id: number;
  variationIds: number[];
}

export interface WebhookInput {
  topic: string;
  deliveryUrl: string;
  secret: string;
  name?: string;
}

export interface WebhookInfo {
  id: number;
  name: string;
  topic: string;
  status: WebhookStatus;
  deliveryUrl: string;
  failureCount: number;
  pendingDelivery: boolean;
}

export interface OrderSnapshot {
  id: number;
  status: string;
  total: string;
  payment_method: string;
  transaction_id: string;
  meta_data: { id: number; key: string; value: unknown }[];
  /** Oldest first. */
  notes: { id: number; note: string; customer_note: boolean; author: string; date_created_gmt: string }[];
  /** GMT, formatted as the API's `date_paid_gmt`; null until paid (for COD: until completed). */
  date_paid: string | null;
  /** GMT, as `date_completed_gmt`. */
  date_completed: string | null;
  /** GMT, as `date_modified_gmt`. */
  date_modified: string;
  /** True when any create or update request carried `set_paid: true` (WooCommerce itself does not store it). */
  set_paid: boolean;
}

export interface ApiCall {
  shopId: string;
  method: string;
  /** REST route, e.g. `/wc/v3/orders/123`. */
  route: string;
  /** Query parameters without credentials and OAuth parameters. */
  query: Record<string, unknown>;
  body: unknown;
  status: number;
  auth: AuthMethod;
  /** Set when an injected fault answered instead of the emulator. */
  fault?: 'status';
  at: Date;
}

export interface FaultMatch {
  shopId?: string;
  method?: string;
  /** Substring of the REST route, or a pattern. */
  route?: string | RegExp;
}

export type FaultSpec =
  | ({ kind: 'status'; status: number; times?: number } & FaultMatch)
  | ({ kind: 'latency'; ms: number; times?: number } & FaultMatch);

export interface FaultControls {
  /** `status`: answer the next `times` (default 1) matching requests with that status. `latency`: delay matching requests (default: all of them). */
  add(fault: FaultSpec): void;
  clear(): void;
  active(): readonly FaultSpec[];
}

export interface WooEmulator {
  readonly port: number;
  /** `http://127.0.0.1:PORT/shops/{id}`: what a merchant types as the store URL. */
  siteUrl(shopId: string): string;
  createProduct(shopId: string, input: ProductInput): Promise<EmulatedProduct>;
  /** Places an order as the storefront checkout does (order.created, then order.updated); resolves once its webhooks were attempted. */
  createOrder(shopId: string, overrides?: Partial<OrderWriteInput>): Promise<Record<string, unknown>>;
  /** Changes an order as PUT /orders/{id} does (order.updated); resolves once its webhooks were attempted. */
  updateOrder(shopId: string, id: number, patch: Partial<OrderWriteInput>): Promise<Record<string, unknown>>;
  /**
   * Refunds part of an order as the merchant does from its admin page (goods, shipping and the tax on it); the
   * order keeps its totals and lists the refund (order.updated). Resolves once its webhooks were attempted.
   */
  refundOrder(shopId: string, id: number, refund: RefundInput): Promise<Record<string, unknown>>;
  /**
   * The merchant moves the order to the trash (order.deleted, whose body is only `{"id": N}`), brings it back from
   * there (order.restored, the whole order) or deletes it for good (no webhook; GET then answers 404).
   * Each resolves once its webhooks were attempted.
   */
  trashOrder(shopId: string, id: number): Promise<void>;
  restoreOrder(shopId: string, id: number): Promise<Record<string, unknown>>;
  deleteOrderForGood(shopId: string, id: number): Promise<void>;
  /** GET /orders/{id} as a client would see it. */
  getOrder(shopId: string, id: number): Record<string, unknown>;
  /** Registers a webhook as POST /webhooks does and waits for its ping. */
  addWebhook(shopId: string, input: WebhookInput): Promise<WebhookInfo & { ping: PingResult }>;
  /** Changes a webhook as PUT /webhooks/{id} does (a save may ping). */
  updateWebhook(
    shopId: string,
    id: number,
    patch: { status?: WebhookStatus; deliveryUrl?: string; secret?: string },
  ): Promise<WebhookInfo>;
  webhooks(shopId: string): WebhookInfo[];
  /** REST keys made by app authorisation (`/wc-auth/v1/authorize`) and kept; they authenticate like the configured key. */
  issuedKeys(shopId: string): IssuedKey[];
  /** Every approval page answered (approved or denied), oldest first. */
  authorizations(): readonly AuthorizationRecord[];
  orderSnapshot(shopId: string, id: number): OrderSnapshot;
  calls(): readonly ApiCall[];
  deliveries(): readonly DeliveryRecord[];
  /** Resolves once every queued webhook delivery has been attempted. */
  settled(): Promise<void>;
  readonly faults: FaultControls;
  close(): Promise<void>;
}
