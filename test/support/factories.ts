/**
 * Test factories for shop webhooks, built from the real payloads in test/fixtures (see SOURCES.md there).
 * Each factory starts from the published example and varies it in code, so every difference from the real
 * thing is visible here: XOF money, an address in Dakar or Abidjan, a cash-on-delivery gateway, and a fresh
 * order id per call. Overrides are merged deeply (objects merge, arrays and scalars replace); an override
 * of `undefined` removes the field, to test payloads where it is absent.
 *
 * Signing helpers compute real HMACs, exactly as the platforms do, so tests go through real verification.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { DispatchInfo } from '../../src/shops/platforms/writer.js';
import { SHOPIFY_DOMAIN } from './relais.js';

export type DeepPartial<T> = T extends readonly (infer U)[]
  ? DeepPartial<U>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> | undefined }
    : T;

/** Overrides for a JSON payload: any field, at any depth. */
export type JsonOverrides = { [key: string]: unknown };

/** The fields tests usually read back; everything else of the real resource is there too. */
export interface ShopifyOrderBody {
  id: number;
  admin_graphql_api_id: string;
  name: string;
  order_number: number;
  [key: string]: unknown;
}

export interface WooOrderBody {
  id: number;
  number: string;
  [key: string]: unknown;
}

const FIXTURES = new URL('../fixtures/', import.meta.url);

function readFixture(path: string): string {
  return readFileSync(new URL(path, FIXTURES), 'utf8');
}

const shopifyOfficialOrder = (
  JSON.parse(readFixture('shopify/order-rest-2025-10-official.json')) as { order: JsonOverrides }
).order;
const wooOfficialOrder = JSON.parse(readFixture('woocommerce/order-rest-v3-docs.json')) as JsonOverrides;
const wooPingTemplate = readFixture('woocommerce/webhook-ping.body.txt');

/** Ids unique within a test run: a random base (so parallel files rarely meet) plus a counter. */
let sequence = 0;
const shopifyIdBase = 7_000_000_000_000 + randomBytes(3).readUIntBE(0, 3) * 1_000;
const wooIdBase = 10_000 + randomBytes(2).readUInt16BE(0) * 10;
function nextSequence(): number {
  sequence += 1;
  return sequence;
}

export const SHOPIFY_COD_GATEWAY = 'Cash on Delivery (COD)';

/** A Shopify shipping address in Dakar whose street names no neighbourhood: the order is held neighbourhood_not_found. */
export const DAKAR_ADDRESS_WITHOUT_NEIGHBOURHOOD = {
  first_name: 'Awa',
  last_name: 'Diop',
  address1: 'Rue 10',
  city: 'Dakar',
  province: 'Dakar',
  country_code: 'SN',
  phone: '+221 77 123 45 67',
};

/** Overrides of a Shopify order leaving no phone number anywhere Relais looks for one: it is held no_phone. */
export const WITHOUT_ANY_PHONE = {
  shipping_address: { phone: null },
  billing_address: { phone: null },
  customer: { phone: null, default_address: { phone: null } },
  phone: null,
};

/** A WooCommerce customer's address in Abidjan (Côte d'Ivoire; the test shop picks up in Marcory). */
export const ABIDJAN_ADDRESS = {
  first_name: 'Aya',
  last_name: 'Kouassi',
  company: '',
  address_1: 'Cocody Angré 7e tranche',
  address_2: '',
  city: 'Abidjan',
  state: '',
  postcode: '',
  country: 'CI',
};

/**
 * A Shopify `orders/create` webhook body (the resource without the `order` wrapper) for a fresh, unpaid
 * cash-on-delivery order in XOF: three items at 5 000 F (the official example's three iPods), free shipping,
 * total 15 000 F outstanding, 600 g, delivered to Villa 12, Sacré Coeur 3, Dakar.
 *
 * Note: `*_set` money bags mirror the top-level amounts when the payload is built; overriding `total_price`
 * does not change `total_price_set` (override both when a test reads both).
 */
export function shopifyOrderPayload(overrides: JsonOverrides = {}): ShopifyOrderBody {
  const n = nextSequence();
  const id = shopifyIdBase + n;
  const orderNumber = 1000 + n;
  const now = new Date().toISOString();
  const order = structuredClone(shopifyOfficialOrder);

  const dakar = {
    first_name: 'Awa',
    last_name: 'Ndiaye',
    name: 'Awa Ndiaye',
    company: null,
    address1: 'Villa 12, Sacré Coeur 3',
    address2: '',
    city: 'Dakar',
    province: 'Dakar',
    province_code: 'DK',
    zip: '12000',
    country: 'Senegal',
    country_code: 'SN',
    phone: '+221 77 123 45 67',
    latitude: 14.7236,
    longitude: -17.4694,
  };
  const lineItems = (order.line_items as JsonOverrides[]).map((line) => ({
    ...line,
    price: '5000.00',
    quantity: 1,
    current_quantity: 1,
    fulfillable_quantity: 1,
    grams: 200,
    total_discount: '0.00',
    tax_lines: [],
    discount_allocations: [],
  }));

  Object.assign(order, {
    id,
    admin_graphql_api_id: `gid://shopify/Order/${id}`,
    name: `#${orderNumber}`,
    number: n,
    order_number: orderNumber,
    created_at: now,
    updated_at: now,
    processed_at: now,
    currency: 'XOF',
    presentment_currency: 'XOF',
    financial_status: 'pending',
    fulfillment_status: null,
    cancelled_at: null,
    cancel_reason: null,
    closed_at: null,
    payment_gateway_names: [SHOPIFY_COD_GATEWAY],
    // On the test shop's own domain, as Shopify serves it: Relais checks the signed body names the header's shop.
    order_status_url: `https://${SHOPIFY_DOMAIN}/548380009/orders/${randomBytes(16).toString('hex')}/authenticate?key=${randomBytes(8).toString('hex')}`,
    phone: null,
    email: 'awa.ndiaye@example.com',
    contact_email: 'awa.ndiaye@example.com',
    discount_codes: [],
    discount_applications: [],
    tax_lines: [],
    taxes_included: false,
    fulfillments: [],
    refunds: [],
    line_items: lineItems,
    subtotal_price: '15000.00',
    current_subtotal_price: '15000.00',
    total_line_items_price: '15000.00',
    total_discounts: '0.00',
    current_total_discounts: '0.00',
    total_tax: '0.00',
    current_total_tax: '0.00',
    total_tip_received: '0.00',
    total_price: '15000.00',
    current_total_price: '15000.00',
    total_outstanding: '15000.00',
    total_weight: 600,
    shipping_address: { ...dakar },
    billing_address: { ...dakar },
    customer: {
      ...(order.customer as JsonOverrides),
      email: 'awa.ndiaye@example.com',
      first_name: 'Awa',
      last_name: 'Ndiaye',
      phone: '+221771234567',
      currency: 'XOF',
      tags: '',
      default_address: { ...((order.customer as JsonOverrides).default_address as JsonOverrides), ...dakar },
    },
    shipping_lines: (order.shipping_lines as JsonOverrides[]).map((line) => ({
      ...line,
      price: '0.00',
      discounted_price: '0.00',
    })),
  });
  toXofMoneyBags(order);
  return deepMerge(order, overrides) as ShopifyOrderBody;
}

/**
 * A WooCommerce `order.created` webhook body for a fresh cash-on-delivery order in XOF, status processing:
 * the official example's two lines (2 × 3 000 F and 1 × 12 000 F) plus 2 000 F flat-rate delivery, total
 * 20 000 F, delivered to Villa 24, Riviera Golf, Cocody, Abidjan. Line items carry no weight, as in WooCommerce.
 */
export function wooOrderPayload(overrides: JsonOverrides = {}): WooOrderBody {
  const n = nextSequence();
  const id = wooIdBase + n;
  const local = new Date().toISOString().slice(0, 19);
  const order = structuredClone(wooOfficialOrder);
  const abidjan = {
    first_name: 'Aya',
    last_name: 'Kouassi',
    company: '',
    address_1: 'Villa 24, Riviera Golf',
    address_2: 'Cocody',
    city: 'Abidjan',
    state: '',
    postcode: '',
    country: 'CI',
    phone: '+225 07 08 09 10 11',
  };
  const [single, variation] = order.line_items as [JsonOverrides, JsonOverrides];

  Object.assign(order, {
    id,
    number: String(id),
    order_key: `wc_order_${randomBytes(6).toString('hex')}`,
    status: 'processing',
    currency: 'XOF',
    date_created: local,
    date_created_gmt: local,
    date_modified: local,
    date_modified_gmt: local,
    date_paid: null,
    date_paid_gmt: null,
    discount_total: '0',
    discount_tax: '0',
    shipping_total: '2000',
    shipping_tax: '0',
    cart_tax: '0',
    total: '20000',
    total_tax: '0',
    billing: { ...abidjan, email: 'aya.kouassi@example.com' },
    shipping: { ...abidjan },
    payment_method: 'cod',
    payment_method_title: 'Cash on delivery',
    transaction_id: '',
    line_items: [
      { ...single, subtotal: '6000', subtotal_tax: '0', total: '6000', total_tax: '0', taxes: [], price: 3000 },
      { ...variation, subtotal: '12000', subtotal_tax: '0', total: '12000', total_tax: '0', taxes: [], price: 12000 },
    ],
    tax_lines: [],
    shipping_lines: (order.shipping_lines as JsonOverrides[]).map((line) => ({
      ...line,
      total: '2000',
      total_tax: '0',
    })),
    refunds: [],
    _links: {
      self: [{ href: `https://boutique.example.ci/wp-json/wc/v3/orders/${id}` }],
      collection: [{ href: 'https://boutique.example.ci/wp-json/wc/v3/orders' }],
    },
  });
  return deepMerge(order, overrides) as WooOrderBody;
}

/** base64(HMAC-SHA256(secret, raw bytes)), Shopify's `X-Shopify-Hmac-Sha256`. */
export function signShopify(rawBody: string | Buffer, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('base64');
}

/**
 * base64(HMAC-SHA256(secret, raw bytes)), WooCommerce's `X-WC-Webhook-Signature`. WooCommerce first decodes
 * HTML entities in the secret (wp_specialchars_decode); randomSecret() never produces any, and a test about
 * such a secret signs with the decoded key itself.
 */
export function signWoo(rawBody: string | Buffer, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('base64');
}

/** The headers Shopify sends with a webhook, signed over `body` exactly as it will be sent. */
export function shopifyWebhookHeaders(input: {
  topic: string;
  shopDomain: string;
  body: string | Buffer;
  secret: string;
  eventId?: string;
  webhookId?: string;
  apiVersion?: string;
  triggeredAt?: string;
}): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'X-Shopify-Topic': input.topic,
    'X-Shopify-Hmac-Sha256': signShopify(input.body, input.secret),
    'X-Shopify-Shop-Domain': input.shopDomain,
    'X-Shopify-API-Version': input.apiVersion ?? '2026-10',
    'X-Shopify-Webhook-Id': input.webhookId ?? randomUuid(),
    'X-Shopify-Event-Id': input.eventId ?? randomUuid(),
    'X-Shopify-Triggered-At': input.triggeredAt ?? new Date().toISOString(),
  };
}

/** The headers WooCommerce sends with a delivery (WC_Webhook::deliver), signed over `body`. */
export function wooWebhookHeaders(input: {
  topic: string;
  body: string | Buffer;
  secret: string;
  webhookId?: string;
  deliveryId?: string;
  source?: string;
}): Record<string, string> {
  const [resource = '', event = ''] = input.topic.split('.', 2);
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'WooCommerce/10.3.0 Hookshot (WordPress/6.8.3)',
    'X-WC-Webhook-Source': input.source ?? 'https://boutique.example.ci/',
    'X-WC-Webhook-Topic': input.topic,
    'X-WC-Webhook-Resource': resource,
    'X-WC-Webhook-Event': event,
    'X-WC-Webhook-Signature': signWoo(input.body, input.secret),
    'X-WC-Webhook-ID': input.webhookId ?? '7',
    // WooCommerce's delivery id is wp_hash(id . time): 32 hex characters, different for every delivery.
    'X-WC-Webhook-Delivery-ID': input.deliveryId ?? randomBytes(16).toString('hex'),
  };
}

/** A fresh webhook secret, generated at run time (never a literal in the repo). */
export function randomSecret(): string {
  return randomBytes(32).toString('hex');
}

/** The body of WooCommerce's creation ping (`webhook_id=<id>`), from the fixture. */
export function wooPingBody(webhookId: number | string): string {
  return wooPingTemplate.replace(/\d+/, String(webhookId));
}

function randomUuid(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * Every Shopify money bag (`*_set`: shop_money and presentment_money) becomes XOF, with the amount of its
 * top-level twin (`price` for `price_set`, `total_price` for `total_price_set`, ...) or 0 when it has none;
 * every `currency` / `presentment_currency` string becomes XOF.
 */
function toXofMoneyBags(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) toXofMoneyBags(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as JsonOverrides;
  for (const [key, value] of Object.entries(record)) {
    if ((key === 'currency' || key === 'presentment_currency') && typeof value === 'string') record[key] = 'XOF';
    if (key.endsWith('_set') && isMoneyBag(value)) {
      const twin = record[key.slice(0, -'_set'.length)];
      const amount = typeof twin === 'string' || typeof twin === 'number' ? String(twin) : '0.00';
      record[key] = {
        shop_money: { amount, currency_code: 'XOF' },
        presentment_money: { amount, currency_code: 'XOF' },
      };
      continue;
    }
    toXofMoneyBags(value);
  }
}

function isMoneyBag(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'shop_money' in value;
}

function isPlainObject(value: unknown): value is JsonOverrides {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepMerge(base: JsonOverrides, overrides: JsonOverrides): JsonOverrides {
  const out: JsonOverrides = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) {
      delete out[key];
    } else if (isPlainObject(value) && isPlainObject(out[key])) {
      out[key] = deepMerge(out[key], value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** What a shop writer is told once an order's shipment exists: fresh ids, a 17 000 F cash-on-delivery shipment in Dakar. */
export function dispatchInfo(overrides: Partial<DispatchInfo> = {}): DispatchInfo {
  const hex = (bytes: number) => randomBytes(bytes).toString('hex');
  const code = hex(5).toUpperCase();
  return {
    shipmentId: `shp_${hex(8)}`,
    trackingCode: code,
    publicTrackingUrl: `http://127.0.0.1:4011/t/${code}`,
    goods: 17000,
    cashOnDelivery: true,
    neighbourhood: 'Sicap Liberté 2',
    quote: { quoteId: `qt_${hex(6)}`, total: 2500, breakdown: { base: 2000, codFee: 500, weightSurcharge: undefined } },
    carrierName: 'Relais',
    notifyCustomer: true,
    ...overrides,
  };
}

/**
 * A shop registry document with one Shopify shop, Dakar Mode, picking up at the Plateau. Its API key is read from
 * the env reference `K`, every other secret from `T`. `dispatch` and `policy` are merged into the shop's own.
 */
export function dakarModeShopsDocument(dispatch: Record<string, unknown> = {}, policy: Record<string, unknown> = {}) {
  return {
    shops: [
      {
        id: 'dakar-mode',
        name: 'Dakar Mode',
        platform: 'shopify',
        country: 'SN',
        shopify: { domain: 'dakar-mode.myshopify.com', accessToken: { env: 'T' }, webhookSecret: { env: 'T' } },
        dispatch: { apiKey: { env: 'K' }, baseUrl: 'https://api.example.com', webhookToken: { env: 'T' }, ...dispatch },
        pickup: {
          neighbourhood: 'Plateau',
          address: '12 avenue Senghor',
          contactName: 'Awa',
          contactPhone: '+221770000001',
        },
        policy,
      },
    ],
  };
}
