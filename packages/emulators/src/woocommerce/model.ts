/**
 * In-memory state of the emulated WooCommerce sites: orders, products, notes, meta and webhooks, with the
 * id sequences WordPress gives them (orders, products and variations share the posts sequence; notes are
 * comments; meta rows, order items and webhooks each have their own table sequence).
 */
import { randomBytes } from 'node:crypto';
import type { ApiKey } from './auth.js';
import type { IssuedKey } from './wc-auth.js';

export const ORDER_STATUSES = [
  'pending',
  'processing',
  'on-hold',
  'completed',
  'cancelled',
  'refunded',
  'failed',
  'checkout-draft',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** `wc_get_order_status_name()`: the labels used in "Order status changed from X to Y." notes. */
export const ORDER_STATUS_LABELS: Record<OrderStatus, string> = {
  pending: 'Pending payment',
  processing: 'Processing',
  'on-hold': 'On hold',
  completed: 'Completed',
  cancelled: 'Cancelled',
  refunded: 'Refunded',
  failed: 'Failed',
  'checkout-draft': 'Draft',
};

export const WEBHOOK_STATUSES = ['active', 'paused', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** `WC_Webhook::get_default_topic_hooks()` keys: the topics core accepts (plus `action.woocommerce_*`). */
export const WEBHOOK_TOPIC_HOOKS: Record<string, readonly string[]> = {
  'coupon.created': ['woocommerce_process_shop_coupon_meta', 'woocommerce_new_coupon'],
  'coupon.updated': ['woocommerce_process_shop_coupon_meta', 'woocommerce_update_coupon'],
  'coupon.deleted': ['wp_trash_post'],
  'coupon.restored': ['untrashed_post'],
  'customer.created': ['user_register', 'woocommerce_created_customer', 'woocommerce_new_customer'],
  'customer.updated': ['profile_update', 'woocommerce_update_customer'],
  'customer.deleted': ['delete_user'],
  'order.created': ['woocommerce_new_order'],
  'order.updated': ['woocommerce_update_order', 'woocommerce_order_refunded', 'woocommerce_delete_order_refund'],
  'order.deleted': ['wp_trash_post', 'woocommerce_trash_order'],
  'order.restored': ['untrashed_post', 'woocommerce_untrash_order'],
  'product.created': [
    'woocommerce_process_product_meta',
    'woocommerce_new_product',
    'woocommerce_new_product_variation',
  ],
  'product.updated': [
    'woocommerce_process_product_meta',
    'woocommerce_update_product',
    'woocommerce_update_product_variation',
  ],
  'product.deleted': ['wp_trash_post'],
  'product.restored': ['untrashed_post'],
  'product.published': ['woocommerce_product_published'],
};

export function isValidWebhookTopic(topic: string): boolean {
  if (topic in WEBHOOK_TOPIC_HOOKS) return true;
  return /^action\.(woocommerce_|wc_)\w+$/.test(topic);
}

export function webhookHooks(topic: string): readonly string[] {
  if (topic.startsWith('action.')) return [topic.slice('action.'.length)];
  return WEBHOOK_TOPIC_HOOKS[topic] ?? [];
}

export interface MetaEntry {
  id: number;
  key: string;
  value: unknown;
}

export interface Address {
  first_name: string;
  last_name: string;
  company: string;
  address_1: string;
  address_2: string;
  city: string;
  state: string;
  postcode: string;
  country: string;
  email?: string;
  phone: string;
}

export interface LineItem {
  id: number;
  name: string;
  productId: number;
  variationId: number;
  quantity: number;
  subtotal: number;
  total: number;
  taxClass: string;
  meta: MetaEntry[];
}

export interface ShippingLine {
  id: number;
  methodId: string;
  methodTitle: string;
  instanceId: string;
  total: number;
  meta: MetaEntry[];
}

/** A refund: its amount (positive, as stored) and the shipping it gave back, each line against the order's. */
export interface Refund {
  id: number;
  amount: number;
  reason: string;
  dateCreated: Date;
  shippingLines: {
    id: number;
    refundedItemId: number;
    methodId: string;
    methodTitle: string;
    total: number;
    tax: number;
  }[];
}

export interface FeeLine {
  id: number;
  name: string;
  total: number;
  taxClass: string;
  taxStatus: string;
  meta: MetaEntry[];
}

export interface OrderNote {
  id: number;
  note: string;
  customerNote: boolean;
  author: string;
  createdAt: Date;
}

export interface Order {
  id: number;
  parentId: number;
  status: OrderStatus;
  currency: string;
  version: string;
  dateCreated: Date;
  dateModified: Date;
  dateCompleted: Date | null;
  datePaid: Date | null;
  discountTotal: number;
  shippingTotal: number;
  /** Tax on the shipping (`shipping_tax`), from the shop's rate; WooCommerce keeps shipping costs before tax. */
  shippingTax: number;
  total: number;
  customerId: number;
  orderKey: string;
  billing: Address;
  shipping: Address;
  paymentMethod: string;
  paymentMethodTitle: string;
  transactionId: string;
  customerIpAddress: string;
  customerUserAgent: string;
  createdVia: string;
  customerNote: string;
  meta: MetaEntry[];
  lineItems: LineItem[];
  shippingLines: ShippingLine[];
  feeLines: FeeLine[];
  notes: OrderNote[];
  /** In the trash: the REST body says `trash`, `status` keeps what it is restored to (`_wp_trash_meta_status`). */
  trashed: boolean;
  /** Refunds made (`shop_order_refund` children), oldest first; the order's `total` stays as it was. */
  refunds: Refund[];
  /** Not stored by WooCommerce (set_paid is write-only); kept so a test can see a client asked for it. */
  setPaidRequested: boolean;
}

export interface Product {
  id: number;
  name: string;
  slug: string;
  sku: string;
  regularPrice: string;
  weight: string;
  dateCreated: Date;
  dateModified: Date;
  variationIds: number[];
}

export interface Variation {
  id: number;
  parentId: number;
  sku: string;
  regularPrice: string;
  weight: string;
  attributes: { name: string; option: string }[];
  dateCreated: Date;
  dateModified: Date;
}

export interface Webhook {
  id: number;
  name: string;
  status: WebhookStatus;
  topic: string;
  deliveryUrl: string;
  secret: string;
  /** 3 means `wp_api_v3`: payloads are built from the wc/v3 endpoints. */
  apiVersion: number;
  failureCount: number;
  pendingDelivery: boolean;
  dateCreated: Date;
  dateModified: Date | null;
}

export type WeightUnit = 'kg' | 'g' | 'lbs' | 'oz';

export interface ShopSettings {
  id: string;
  apiKey: ApiKey;
  weightUnit: WeightUnit;
  dimensionUnit: string;
  currency: string;
  priceDecimals: number;
  /** Site timezone offset from UTC in minutes (Dakar and Abidjan: 0). */
  utcOffsetMinutes: number;
  /** Display name of the API key's user, used for notes posted with added_by_user. */
  apiUserDisplayName: string;
  /** The standard tax rate applied to shipping (0.18 in Senegal); 0: taxes are off, as in a new shop. */
  shippingTaxRate: number;
}

export class ShopState {
  readonly orders = new Map<number, Order>();
  readonly products = new Map<number, Product>();
  readonly variations = new Map<number, Variation>();
  readonly webhooks = new Map<number, Webhook>();
  /** Keys made by app authorisation (wc-auth.ts), by consumer key; they authenticate like the configured one. */
  readonly issuedKeys = new Map<string, IssuedKey>();
  private nextPostId = 100;
  private nextCommentId = 1;
  private nextMetaId = 1;
  private nextItemId = 1;
  private nextWebhookId = 1;
  /** The configured key is key 1. */
  private nextKeyId = 2;

  constructor(readonly settings: ShopSettings) {}

  /** The configured key or one issued by app authorisation. */
  findKey(consumerKey: string): ApiKey | undefined {
    if (consumerKey === this.settings.apiKey.consumerKey) return this.settings.apiKey;
    return this.issuedKeys.get(consumerKey);
  }
  newKeyId(): number {
    return this.nextKeyId++;
  }

  newPostId(): number {
    return this.nextPostId++;
  }
  newCommentId(): number {
    return this.nextCommentId++;
  }
  newMetaId(): number {
    return this.nextMetaId++;
  }
  newItemId(): number {
    return this.nextItemId++;
  }
  newWebhookId(): number {
    return this.nextWebhookId++;
  }
}

/** `wc_generate_order_key()`: `wc_order_` and 13 random alphanumerics. */
export function newOrderKey(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const bytes = randomBytes(13);
  let key = 'wc_order_';
  for (const byte of bytes) key += alphabet[byte % alphabet.length];
  return key;
}

/** `wp_generate_password(50, true, true)`-like default secret when a webhook is created without one. */
export function newWebhookSecret(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*()-_ []{}<>~`+=,.;:/?|';
  let secret = '';
  for (const byte of randomBytes(50)) secret += alphabet[byte % alphabet.length];
  return secret;
}

export function emptyAddress(withEmail: boolean): Address {
  const address: Address = {
    first_name: '',
    last_name: '',
    company: '',
    address_1: '',
    address_2: '',
    city: '',
    state: '',
    postcode: '',
    country: '',
    phone: '',
  };
  if (withEmail) address.email = '';
  return address;
}

/** WordPress REST date format: site-local or GMT wall clock, seconds, no zone designator. */
export function formatWpDate(date: Date | null, utcOffsetMinutes: number, gmt: boolean): string | null {
  if (!date) return null;
  const shifted = gmt ? date : new Date(date.getTime() + utcOffsetMinutes * 60_000);
  return shifted.toISOString().slice(0, 19);
}

/** Truncates to whole seconds, as MySQL DATETIME columns store them. */
export function toSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

/** PHP `floatval` on a price string: the leading number, or 0. */
export function floatval(value: unknown): number {
  if (typeof value === 'number') return Number.isFinite(value) ? value : 0;
  if (typeof value !== 'string') return 0;
  const match = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(value);
  return match ? Number(match[0]) : 0;
}

/** `wc_format_decimal($value, $dp)`: rounded half away from zero to `dp` places, as a string. */
export function formatDecimal(value: number, dp: number): string {
  const factor = 10 ** dp;
  const rounded = (Math.sign(value) * Math.round(Math.abs(value) * factor + 1e-9)) / factor;
  return (Object.is(rounded, -0) ? 0 : rounded).toFixed(dp);
}

/** A price as WooCommerce stores it (`wc_format_decimal` with no dp: trailing zeros trimmed). */
/** The tax on a shipping price at the shop's one rate, rounded to its decimals (a refund gives back the same). */
export function taxOnShipping(price: number, settings: ShopSettings): number {
  if (settings.shippingTaxRate === 0) return 0;
  const factor = 10 ** settings.priceDecimals;
  return Math.round(price * settings.shippingTaxRate * factor) / factor;
}

export function storedDecimal(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toFixed(6)));
}
