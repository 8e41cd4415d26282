/**
 * A local WooCommerce: several shops on one HTTP server, each at `http://127.0.0.1:PORT/shops/{id}` with the
 * wc/v3 REST API under `/wp-json/wc/v3`, authenticated and answered the way WordPress and WooCommerce do
 * (status codes, error codes and messages, paging headers, PHP-style JSON), plus webhooks delivered and
 * disabled as core delivers and disables them. Helpers let tests and demos play the merchant and the
 * storefront: create products and orders, change orders, register webhooks, inspect what clients wrote.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { silentLogger, type Logger } from '../../log.js';
import { NonceStore, authenticate, type ApiKey, type AuthMethod, type WpError } from './auth.js';
import {
  ShopState,
  isValidWebhookTopic,
  newWebhookSecret,
  toSeconds,
  type Order,
  type Product,
  type Variation,
  type Webhook,
  type WebhookStatus,
  type WeightUnit,
  WEBHOOK_STATUSES,
} from './model.js';
import {
  OrderWriteError,
  addOrderNote,
  createOrderViaCheckout,
  createOrderViaRest,
  noteJson,
  orderJson,
  queryOrders,
  updateOrderViaRest,
  type OrderEnv,
  type OrderEvent,
} from './orders.js';
import { parseStr, phpArrayToPlain, phpJsonEncode } from './php.js';
import { productJson, settingJson, settingOptions, variationJson, webhookJson } from './resources.js';
import {
  contextSchema,
  deleteSchema,
  noteCreateSchema,
  noteListSchema,
  orderListSchema,
  orderWriteSchema,
  parseParams,
  webhookCreateSchema,
  webhookListSchema,
  webhookUpdateSchema,
  type OrderWriteInput,
} from './schemas.js';
import { WebhookDeliverer, type DeliveryRecord, type PingResult } from './webhooks.js';

export type { DeliveryRecord, PingResult } from './webhooks.js';
export type { OrderWriteInput } from './schemas.js';

// ---------------------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------------------

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
  date_paid_gmt: string | null;
  date_completed_gmt: string | null;
  date_modified_gmt: string;
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

interface FaultMatch {
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
  /** GET /orders/{id} as a client would see it. */
  getOrder(shopId: string, id: number): Record<string, unknown>;
  /** Registers a webhook as POST /webhooks does and waits for its ping. */
  addWebhook(shopId: string, input: WebhookInput): Promise<WebhookInfo & { ping: PingResult }>;
  /** Changes a webhook as PUT /webhooks/{id} does (a save may ping). */
  updateWebhook(shopId: string, id: number, patch: { status?: WebhookStatus; deliveryUrl?: string; secret?: string }): Promise<WebhookInfo>;
  webhooks(shopId: string): WebhookInfo[];
  orderSnapshot(shopId: string, id: number): OrderSnapshot;
  calls(): readonly ApiCall[];
  deliveries(): readonly DeliveryRecord[];
  /** Resolves once every queued webhook delivery has been attempted. */
  settled(): Promise<void>;
  readonly faults: FaultControls;
  close(): Promise<void>;
}

const shopOptionSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]+$/, 'shop ids are used in URLs: letters, digits, - and _ only'),
  consumerKey: z.string().min(1),
  consumerSecret: z.string().min(1),
  weightUnit: z.enum(['kg', 'g', 'lbs', 'oz']).optional(),
  currency: z.string().regex(/^[A-Z]{3}$/).optional(),
  priceDecimals: z.number().int().min(0).max(6).optional(),
  utcOffsetMinutes: z.number().int().min(-14 * 60).max(14 * 60).optional(),
  permissions: z.enum(['read', 'write', 'read_write']).optional(),
});

const optionsSchema = z.object({
  shops: z.array(shopOptionSchema).min(1),
  port: z.number().int().min(0).max(65535).optional(),
  host: z.string().optional(),
  disableAfterFailures: z.number().int().min(1).optional(),
  deliveryTimeoutMs: z.number().int().positive().optional(),
  orderUpdatedOnCreate: z.boolean().optional(),
  wooVersion: z.string().optional(),
  wordpressVersion: z.string().optional(),
  systemNoteAuthor: z.string().optional(),
});

const BODY_LIMIT_BYTES = 2 * 1024 * 1024;
const NO_ROUTE: WpError = { code: 'rest_no_route', message: 'No route was found matching the URL and request method.', status: 404 };

// ---------------------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------------------

interface RestRequest {
  shop: ShopState;
  method: string;
  route: string;
  params: Record<string, unknown>;
  authenticated: boolean;
}

interface RestResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Runs before the answer is sent (core pings a new webhook before answering). */
  beforeSend?: () => Promise<void>;
  /** Order events to turn into webhook deliveries once the answer is on its way. */
  events?: { orderId: number; events: readonly OrderEvent[] };
}

type RouteHandler = (req: RestRequest, match: RegExpExecArray) => RestResponse | Promise<RestResponse>;

interface Route {
  pattern: RegExp;
  methods: Record<string, { handler: RouteHandler; anonymous: WpError | 'lookup' }>;
}

const cannot = {
  list: { code: 'woocommerce_rest_cannot_view', message: 'Sorry, you cannot list resources.', status: 401 },
  view: { code: 'woocommerce_rest_cannot_view', message: 'Sorry, you cannot view this resource.', status: 401 },
  create: { code: 'woocommerce_rest_cannot_create', message: 'Sorry, you are not allowed to create resources.', status: 401 },
  edit: { code: 'woocommerce_rest_cannot_edit', message: 'Sorry, you are not allowed to edit this resource.', status: 401 },
  delete: { code: 'woocommerce_rest_cannot_delete', message: 'Sorry, you are not allowed to delete this resource.', status: 401 },
} satisfies Record<string, WpError>;

export async function startWooEmulator(options: WooEmulatorOptions): Promise<WooEmulator> {
  const parsed = optionsSchema.parse(options);
  const logger = (options.logger ?? silentLogger).child({ component: 'woo-emulator' });
  const now = options.now ?? (() => new Date());
  const host = parsed.host ?? '127.0.0.1';
  const wooVersion = parsed.wooVersion ?? '10.3.5';
  const wordpressVersion = parsed.wordpressVersion ?? '6.8.3';
  const orderUpdatedOnCreate = parsed.orderUpdatedOnCreate ?? true;
  const systemNoteAuthor = parsed.systemNoteAuthor ?? 'WooCommerce';

  const shops = new Map<string, ShopState>();
  for (const shop of parsed.shops) {
    if (shops.has(shop.id)) throw new Error(`duplicate shop id "${shop.id}"`);
    shops.set(shop.id, new ShopState({
      id: shop.id,
      apiKey: { consumerKey: shop.consumerKey, consumerSecret: shop.consumerSecret, permissions: shop.permissions ?? 'read_write' },
      weightUnit: shop.weightUnit ?? 'kg',
      dimensionUnit: 'cm',
      currency: shop.currency ?? 'XOF',
      priceDecimals: shop.priceDecimals ?? 2,
      utcOffsetMinutes: shop.utcOffsetMinutes ?? 0,
      apiUserDisplayName: 'admin',
    }));
  }
  const nonces = new NonceStore();
  const apiCalls: ApiCall[] = [];
  const faultList: (FaultSpec & { remaining: number })[] = [];
  const latencyTimers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let port = 0;
  let closed = false;

  const homeUrl = (shop: ShopState) => `http://${host}:${port}/shops/${shop.settings.id}`;
  const envFor = (shop: ShopState): OrderEnv => ({ shop, now, wcVersion: wooVersion, systemNoteAuthor });

  const deliverer = new WebhookDeliverer({
    userAgent: `WooCommerce/${wooVersion} Hookshot (WordPress/${wordpressVersion})`,
    timeoutMs: parsed.deliveryTimeoutMs ?? 60_000,
    disableAfterFailures: parsed.disableAfterFailures ?? 6,
    now,
    logger,
    homeUrl,
    buildPayload: (shop, webhook, resourceId) => {
      const order = shop.orders.get(resourceId);
      if (webhook.topic.startsWith('order.') && order) return orderJson(envFor(shop), order, homeUrl(shop));
      return { id: resourceId };
    },
  });

  /** Turns one request's order events into deliveries, once per webhook and order (`is_already_processed`). */
  const fireOrderEvents = (shop: ShopState, orderId: number, events: readonly OrderEvent[]) => {
    const unique = new Set(events);
    if (unique.has('created')) deliverer.enqueue(shop, 'order.created', orderId);
    if (unique.has('updated')) deliverer.enqueue(shop, 'order.updated', orderId);
  };

  const requireShop = (shopId: string): ShopState => {
    const shop = shops.get(shopId);
    if (!shop) throw new Error(`no emulated WooCommerce shop "${shopId}"`);
    return shop;
  };
  const requireOrder = (shop: ShopState, id: number): Order => {
    const order = shop.orders.get(id);
    if (!order) throw new Error(`shop "${shop.settings.id}" has no order ${id}`);
    return order;
  };

  // ------------------------------------------------------------------ webhooks (shared by REST and helpers)

  const createWebhook = (shop: ShopState, input: { name?: string; topic: string; deliveryUrl: string; secret?: string }): Webhook => {
    const created = toSeconds(now());
    const webhook: Webhook = {
      id: shop.newWebhookId(),
      name: input.name ?? `Webhook created on ${strftimeWebhookDate(created, shop.settings.utcOffsetMinutes)}`,
      status: 'active',
      topic: input.topic.toLowerCase(),
      deliveryUrl: input.deliveryUrl,
      secret: input.secret !== undefined && input.secret !== '' ? input.secret : newWebhookSecret(),
      apiVersion: 3,
      failureCount: 0,
      pendingDelivery: true,
      dateCreated: created,
      dateModified: null,
    };
    shop.webhooks.set(webhook.id, webhook);
    return webhook;
  };

  const webhookInfo = (webhook: Webhook): WebhookInfo => ({
    id: webhook.id,
    name: webhook.name,
    topic: webhook.topic,
    status: webhook.status,
    deliveryUrl: webhook.deliveryUrl,
    failureCount: webhook.failureCount,
    pendingDelivery: webhook.pendingDelivery,
  });

  // ------------------------------------------------------------------ routes

  const orderIdOf = (match: RegExpExecArray, index = 1) => Number(match[index]);

  const routes: Route[] = [
    {
      pattern: /^\/wc\/v3\/orders$/,
      methods: {
        GET: { anonymous: cannot.list, handler: listOrders },
        POST: { anonymous: cannot.create, handler: createOrderRoute },
      },
    },
    {
      pattern: /^\/wc\/v3\/orders\/(\d+)$/,
      methods: {
        GET: { anonymous: cannot.view, handler: getOrderRoute },
        POST: { anonymous: cannot.edit, handler: updateOrderRoute },
        PUT: { anonymous: cannot.edit, handler: updateOrderRoute },
        PATCH: { anonymous: cannot.edit, handler: updateOrderRoute },
      },
    },
    {
      pattern: /^\/wc\/v3\/orders\/(\d+)\/notes$/,
      methods: {
        GET: { anonymous: cannot.list, handler: listNotes },
        POST: { anonymous: cannot.create, handler: createNote },
      },
    },
    {
      pattern: /^\/wc\/v3\/orders\/(\d+)\/notes\/(\d+)$/,
      methods: { GET: { anonymous: cannot.view, handler: getNote } },
    },
    {
      pattern: /^\/wc\/v3\/products\/(\d+)$/,
      methods: { GET: { anonymous: 'lookup', handler: getProduct } },
    },
    {
      pattern: /^\/wc\/v3\/products\/(\d+)\/variations$/,
      methods: { GET: { anonymous: cannot.list, handler: listVariations } },
    },
    {
      pattern: /^\/wc\/v3\/products\/(\d+)\/variations\/(\d+)$/,
      methods: { GET: { anonymous: 'lookup', handler: getVariation } },
    },
    {
      pattern: /^\/wc\/v3\/settings\/([\w-]+)$/,
      methods: { GET: { anonymous: cannot.list, handler: listSettings } },
    },
    {
      pattern: /^\/wc\/v3\/settings\/([\w-]+)\/([\w-]+)$/,
      methods: { GET: { anonymous: cannot.list, handler: getSetting } },
    },
    {
      pattern: /^\/wc\/v3\/webhooks$/,
      methods: {
        GET: { anonymous: cannot.list, handler: listWebhooks },
        POST: { anonymous: cannot.create, handler: createWebhookRoute },
      },
    },
    {
      pattern: /^\/wc\/v3\/webhooks\/(\d+)$/,
      methods: {
        GET: { anonymous: cannot.view, handler: getWebhookRoute },
        POST: { anonymous: cannot.edit, handler: updateWebhookRoute },
        PUT: { anonymous: cannot.edit, handler: updateWebhookRoute },
        PATCH: { anonymous: cannot.edit, handler: updateWebhookRoute },
        DELETE: { anonymous: cannot.delete, handler: deleteWebhookRoute },
      },
    },
  ];

  function listOrders(req: RestRequest): RestResponse {
    const parsedParams = parseParams(orderListSchema, req.params);
    if (!parsedParams.ok) return errorResponse(parsedParams.error);
    const params = parsedParams.value;
    const env = envFor(req.shop);
    const all = queryOrders(env, params);
    const perPage = params.per_page ?? 10;
    const page = params.page ?? 1;
    const start = params.offset ?? (page - 1) * perPage;
    const slice = all.slice(start, start + perPage);
    const totalPages = Math.ceil(all.length / perPage);
    const home = homeUrl(req.shop);
    return {
      status: 200,
      body: slice.map((order) => orderJson(env, order, home, params.dp)),
      headers: pagingHeaders(`${home}/wp-json${req.route}`, req.params, page, all.length, totalPages),
    };
  }

  function getOrderRoute(req: RestRequest, match: RegExpExecArray): RestResponse {
    const order = req.shop.orders.get(orderIdOf(match));
    if (!order) return errorResponse({ code: 'woocommerce_rest_shop_order_invalid_id', message: 'Invalid ID.', status: 404 });
    const context = parseParams(contextSchema, req.params);
    if (!context.ok) return errorResponse(context.error);
    return { status: 200, body: orderJson(envFor(req.shop), order, homeUrl(req.shop), context.value.dp) };
  }

  function createOrderRoute(req: RestRequest): RestResponse {
    if (req.params.id !== undefined && req.params.id !== null && req.params.id !== 0 && req.params.id !== '') {
      return errorResponse({ code: 'woocommerce_rest_shop_order_exists', message: 'Cannot create existing shop_order.', status: 400 });
    }
    const input = parseParams(orderWriteSchema, req.params);
    if (!input.ok) return errorResponse(input.error);
    try {
      const { order, events } = createOrderViaRest(envFor(req.shop), input.value);
      const home = homeUrl(req.shop);
      return {
        status: 201,
        body: orderJson(envFor(req.shop), order, home),
        headers: { Location: `${home}/wp-json/wc/v3/orders/${order.id}` },
        events: { orderId: order.id, events: creationEvents(events) },
      };
    } catch (error) {
      if (error instanceof OrderWriteError) return errorResponse(error.wpError);
      throw error;
    }
  }

  function updateOrderRoute(req: RestRequest, match: RegExpExecArray): RestResponse {
    const order = req.shop.orders.get(orderIdOf(match));
    if (!order) return errorResponse({ code: 'woocommerce_rest_shop_order_invalid_id', message: 'Invalid ID.', status: 400 });
    const input = parseParams(orderWriteSchema, req.params);
    if (!input.ok) return errorResponse(input.error);
    try {
      const { events } = updateOrderViaRest(envFor(req.shop), order, input.value);
      return {
        status: 200,
        body: orderJson(envFor(req.shop), order, homeUrl(req.shop)),
        events: { orderId: order.id, events },
      };
    } catch (error) {
      if (error instanceof OrderWriteError) return errorResponse(error.wpError);
      throw error;
    }
  }

  function listNotes(req: RestRequest, match: RegExpExecArray): RestResponse {
    const order = req.shop.orders.get(orderIdOf(match));
    if (!order) return errorResponse({ code: 'woocommerce_rest_shop_order_invalid_id', message: 'Invalid order ID.', status: 404 });
    const params = parseParams(noteListSchema, req.params);
    if (!params.ok) return errorResponse(params.error);
    const type = params.value.type ?? 'any';
    const notes = order.notes
      .filter((note) => type === 'any' || (type === 'customer') === note.customerNote)
      // get_comments(): newest first, ties broken by comment id.
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id);
    const home = homeUrl(req.shop);
    return { status: 200, body: notes.map((note) => noteJson(envFor(req.shop), order, note, home)) };
  }

  function createNote(req: RestRequest, match: RegExpExecArray): RestResponse {
    const params = parseParams(noteCreateSchema, req.params, ['note']);
    if (!params.ok) return errorResponse(params.error);
    const order = req.shop.orders.get(orderIdOf(match));
    if (!order) return errorResponse({ code: 'woocommerce_rest_order_invalid_id', message: 'Invalid order ID.', status: 404 });
    if (params.value.note === '') {
      return errorResponse({ code: 'woocommerce_api_cannot_create_order_note', message: 'Cannot create order note, please try again.', status: 500 });
    }
    const env = envFor(req.shop);
    const note = addOrderNote(env, order, params.value.note, params.value.customer_note ?? false, params.value.added_by_user ?? false);
    const home = homeUrl(req.shop);
    return {
      status: 201,
      body: noteJson(env, order, note, home),
      headers: { Location: `${home}/wp-json/wc/v3/orders/${order.id}/notes/${note.id}` },
    };
  }

  function getNote(req: RestRequest, match: RegExpExecArray): RestResponse {
    const order = req.shop.orders.get(orderIdOf(match));
    if (!order) return errorResponse({ code: 'woocommerce_rest_order_invalid_id', message: 'Invalid order ID.', status: 404 });
    const note = order.notes.find((candidate) => candidate.id === Number(match[2]));
    if (!note) return errorResponse({ code: 'woocommerce_rest_invalid_id', message: 'Invalid resource ID.', status: 404 });
    return { status: 200, body: noteJson(envFor(req.shop), order, note, homeUrl(req.shop)) };
  }

  function getProduct(req: RestRequest, match: RegExpExecArray): RestResponse {
    const product = req.shop.products.get(Number(match[1]));
    if (!product) return errorResponse({ code: 'woocommerce_rest_product_invalid_id', message: 'Invalid ID.', status: 404 });
    if (!req.authenticated) return errorResponse(cannot.view);
    return { status: 200, body: productJson(req.shop, product, homeUrl(req.shop)) };
  }

  function listVariations(req: RestRequest, match: RegExpExecArray): RestResponse {
    const product = req.shop.products.get(Number(match[1]));
    const variations = product ? product.variationIds.flatMap((id) => req.shop.variations.get(id) ?? []) : [];
    const home = homeUrl(req.shop);
    return {
      status: 200,
      body: product ? variations.map((variation) => variationJson(req.shop, variation, product, home)) : [],
      headers: { 'X-WP-Total': String(variations.length), 'X-WP-TotalPages': variations.length > 0 ? '1' : '0' },
    };
  }

  function getVariation(req: RestRequest, match: RegExpExecArray): RestResponse {
    const variation = req.shop.variations.get(Number(match[2]));
    const parent = variation ? req.shop.products.get(variation.parentId) : undefined;
    if (!variation || !parent || parent.id !== Number(match[1])) {
      return errorResponse({ code: 'woocommerce_rest_product_variation_invalid_id', message: 'Invalid ID.', status: 404 });
    }
    if (!req.authenticated) return errorResponse(cannot.view);
    return { status: 200, body: variationJson(req.shop, variation, parent, homeUrl(req.shop)) };
  }

  function listSettings(req: RestRequest, match: RegExpExecArray): RestResponse {
    const group = match[1] ?? '';
    const options = settingOptions(req.shop)[group];
    if (!options) return errorResponse({ code: 'rest_setting_setting_group_invalid', message: 'Invalid setting group.', status: 404 });
    const home = homeUrl(req.shop);
    return { status: 200, body: options.map((option) => settingJson(group, option, home)) };
  }

  function getSetting(req: RestRequest, match: RegExpExecArray): RestResponse {
    const group = match[1] ?? '';
    const options = settingOptions(req.shop)[group];
    if (!options) return errorResponse({ code: 'rest_setting_setting_group_invalid', message: 'Invalid setting group.', status: 404 });
    const option = options.find((candidate) => candidate.id === match[2]);
    if (!option) return errorResponse({ code: 'rest_setting_setting_invalid', message: 'Invalid setting.', status: 404 });
    return { status: 200, body: settingJson(group, option, homeUrl(req.shop)) };
  }

  function listWebhooks(req: RestRequest): RestResponse {
    const params = parseParams(webhookListSchema, req.params);
    if (!params.ok) return errorResponse(params.error);
    const { status = 'all', order = 'desc', orderby = 'date', per_page: perPage = 10, page = 1 } = params.value;
    const direction = order === 'asc' ? 1 : -1;
    const all = [...req.shop.webhooks.values()]
      .filter((webhook) => status === 'all' || webhook.status === status)
      .sort((a, b) => {
        const primary = orderby === 'title' ? a.name.localeCompare(b.name)
          : orderby === 'id' ? a.id - b.id
            : a.dateCreated.getTime() - b.dateCreated.getTime();
        return direction * (primary !== 0 ? primary : a.id - b.id);
      });
    const slice = all.slice((page - 1) * perPage, page * perPage);
    const home = homeUrl(req.shop);
    return {
      status: 200,
      body: slice.map((webhook) => webhookJson(req.shop, webhook, home, 'view')),
      headers: pagingHeaders(`${home}/wp-json${req.route}`, req.params, page, all.length, perPage > 1 ? Math.ceil(all.length / perPage) : 1),
    };
  }

  function createWebhookRoute(req: RestRequest): RestResponse {
    const params = parseParams(webhookCreateSchema, req.params, ['topic', 'delivery_url']);
    if (!params.ok) return errorResponse(params.error);
    if (req.params.id !== undefined && req.params.id !== null && req.params.id !== 0 && req.params.id !== '') {
      return errorResponse({ code: 'woocommerce_rest_shop_webhook_exists', message: 'Cannot create existing shop_webhook.', status: 400 });
    }
    const { topic, delivery_url: deliveryUrl, secret, name } = params.value;
    if (topic === '' || !isValidWebhookTopic(topic.toLowerCase())) {
      return errorResponse({ code: 'woocommerce_rest_shop_webhook_invalid_topic', message: 'Webhook topic is required and must be valid.', status: 400 });
    }
    if (!isValidDeliveryUrl(deliveryUrl)) {
      return errorResponse({
        code: 'woocommerce_rest_shop_webhook_invalid_delivery_url',
        message: 'Webhook delivery URL must be a valid URL starting with http:// or https://.',
        status: 400,
      });
    }
    // Core ignores a posted status here: a webhook created through the API is always active.
    const webhook = createWebhook(req.shop, { topic, deliveryUrl, ...(secret !== undefined ? { secret } : {}), ...(name ? { name } : {}) });
    const home = homeUrl(req.shop);
    return {
      status: 201,
      body: webhookJson(req.shop, webhook, home, 'edit'),
      headers: { Location: `${home}/wp-json/wc/v3/webhooks/${webhook.id}` },
      beforeSend: async () => {
        await deliverer.ping(req.shop, webhook);
      },
    };
  }

  function getWebhookRoute(req: RestRequest, match: RegExpExecArray): RestResponse {
    const webhook = req.shop.webhooks.get(Number(match[1]));
    if (!webhook) return errorResponse({ code: 'woocommerce_rest_shop_webhook_invalid_id', message: 'ID is invalid.', status: 400 });
    return { status: 200, body: webhookJson(req.shop, webhook, homeUrl(req.shop), 'view') };
  }

  async function updateWebhookRoute(req: RestRequest, match: RegExpExecArray): Promise<RestResponse> {
    const webhook = req.shop.webhooks.get(Number(match[1]));
    if (!webhook) return errorResponse({ code: 'woocommerce_rest_shop_webhook_invalid_id', message: 'ID is invalid.', status: 400 });
    const params = parseParams(webhookUpdateSchema, req.params);
    if (!params.ok) return errorResponse(params.error);
    const result = await applyWebhookUpdate(req.shop, webhook, params.value);
    if (!result.ok) return errorResponse(result.error);
    return { status: 200, body: webhookJson(req.shop, webhook, homeUrl(req.shop), 'edit') };
  }

  function deleteWebhookRoute(req: RestRequest, match: RegExpExecArray): RestResponse {
    const params = parseParams(deleteSchema, req.params);
    if (!params.ok) return errorResponse(params.error);
    if (params.value.force !== true) {
      return errorResponse({ code: 'woocommerce_rest_trash_not_supported', message: 'Webhooks do not support trashing.', status: 501 });
    }
    const webhook = req.shop.webhooks.get(Number(match[1]));
    if (!webhook) return errorResponse({ code: 'woocommerce_rest_shop_webhook_invalid_id', message: 'Invalid ID.', status: 404 });
    const body = webhookJson(req.shop, webhook, homeUrl(req.shop), 'edit');
    req.shop.webhooks.delete(webhook.id);
    return { status: 200, body };
  }

  /** `WC_REST_Webhooks_V1_Controller::update_item` then `save()`. */
  async function applyWebhookUpdate(
    shop: ShopState,
    webhook: Webhook,
    patch: { name?: string; status?: string; topic?: string; delivery_url?: string; secret?: string },
  ): Promise<{ ok: true } | { ok: false; error: WpError }> {
    const next = { ...webhook };
    if (patch.topic) {
      if (!isValidWebhookTopic(patch.topic.toLowerCase())) {
        return { ok: false, error: { code: 'woocommerce_rest_shop_webhook_invalid_topic', message: 'Webhook topic must be valid.', status: 400 } };
      }
      next.topic = patch.topic.toLowerCase();
    }
    if (patch.delivery_url) {
      if (!isValidDeliveryUrl(patch.delivery_url)) {
        return {
          ok: false,
          error: {
            code: 'woocommerce_rest_shop_webhook_invalid_delivery_url',
            message: 'Webhook delivery URL must be a valid URL starting with http:// or https://.',
            status: 400,
          },
        };
      }
      next.deliveryUrl = patch.delivery_url;
    }
    if (patch.secret) next.secret = patch.secret;
    if (patch.status) {
      const status = patch.status.toLowerCase();
      if (!(WEBHOOK_STATUSES as readonly string[]).includes(status)) {
        return { ok: false, error: { code: 'woocommerce_rest_shop_webhook_invalid_status', message: 'Webhook status must be valid.', status: 400 } };
      }
      next.status = status as WebhookStatus;
    }
    if (patch.name) next.name = patch.name;
    const deliveryUrlChanged = next.deliveryUrl !== webhook.deliveryUrl;
    Object.assign(webhook, next);
    await deliverer.afterSave(shop, webhook, deliveryUrlChanged);
    return { ok: true };
  }

  // ------------------------------------------------------------------ HTTP plumbing

  function pagingHeaders(base: string, params: Record<string, unknown>, page: number, total: number, totalPages: number): Record<string, string> {
    const headers: Record<string, string> = { 'X-WP-Total': String(total), 'X-WP-TotalPages': String(totalPages) };
    const links: string[] = [];
    const linkTo = (target: number) => {
      const url = new URL(base);
      for (const [key, value] of Object.entries(params)) {
        if (isCredentialParam(key) || typeof value !== 'string') continue;
        url.searchParams.set(key, value);
      }
      url.searchParams.set('page', String(target));
      return url.toString();
    };
    if (page > 1) links.push(`<${linkTo(Math.min(page - 1, Math.max(totalPages, 1)))}>; rel="prev"`);
    if (totalPages > page) links.push(`<${linkTo(page + 1)}>; rel="next"`);
    if (links.length > 0) headers.Link = links.join(', ');
    return headers;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawUrl = req.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const rawPath = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
    const rawQuery = queryAt === -1 ? '' : rawUrl.slice(queryAt + 1);
    const site = /^\/shops\/([^/?#]+)(\/.*)?$/.exec(rawPath);
    const shop = site?.[1] ? shops.get(safeDecode(site[1])) : undefined;
    if (!site || !shop) {
      sendText(res, 404, 'Not Found');
      return;
    }
    const sitePath = site[2] ?? '/';
    const restMatch = /^\/wp-json(\/.*)?$/.exec(sitePath);
    if (!restMatch) {
      sendText(res, 404, 'Not Found');
      return;
    }
    const route = safeDecode((restMatch[1] ?? '/').replace(/\/+$/, '')) || '/';

    let bodyText: string;
    try {
      bodyText = await readBody(req);
    } catch {
      sendJson(res, shop, 413, wpErrorBody({ code: 'rest_request_too_large', message: 'Request body too large.', status: 413 }));
      return;
    }
    const queryParams = phpArrayToPlain(parseStr(rawQuery));
    let method = (req.method ?? 'GET').toUpperCase();
    const override = typeof queryParams._method === 'string' ? queryParams._method : req.headers['x-http-method-override'];
    if (method === 'POST' && typeof override === 'string' && override !== '') method = override.toUpperCase();

    const call: ApiCall = {
      shopId: shop.settings.id,
      method,
      route,
      query: withoutCredentials(queryParams),
      body: undefined,
      status: 0,
      auth: 'none',
      at: new Date(),
    };
    apiCalls.push(call);

    // Injected faults act like the network or the host in front of WordPress: before anything else.
    await applyLatency(shop.settings.id, method, route);
    const statusFault = takeStatusFault(shop.settings.id, method, route);
    if (statusFault !== undefined) {
      call.status = statusFault;
      call.fault = 'status';
      sendFault(res, shop, statusFault);
      return;
    }

    const contentType = String(req.headers['content-type'] ?? '');
    let bodyParams: Record<string, unknown> = {};
    let formBody: string | undefined;
    if (bodyText !== '') {
      if (contentType.includes('application/json')) {
        try {
          const parsedBody: unknown = JSON.parse(bodyText);
          if (parsedBody !== null && typeof parsedBody === 'object' && !Array.isArray(parsedBody)) bodyParams = parsedBody as Record<string, unknown>;
        } catch (error) {
          call.status = 400;
          sendJson(res, shop, 400, wpErrorBody({
            code: 'rest_invalid_json',
            message: 'Invalid JSON body passed.',
            status: 400,
            data: { json_error_code: 4, json_error_message: error instanceof Error ? error.message : 'Syntax error' },
          }));
          return;
        }
      } else if (contentType.includes('application/x-www-form-urlencoded')) {
        formBody = bodyText;
        bodyParams = phpArrayToPlain(parseStr(bodyText));
      }
    }
    call.body = Object.keys(bodyParams).length > 0 ? withoutCredentials(bodyParams) : undefined;

    const outcome = authenticate(
      {
        method: req.method ?? 'GET',
        rawPath,
        rawQuery,
        ...(formBody !== undefined ? { formBody } : {}),
        ...(typeof req.headers.authorization === 'string' ? { authorization: req.headers.authorization } : {}),
      },
      {
        homeUrl: homeUrl(shop),
        findKey: (consumerKey) => (consumerKey === shop.settings.apiKey.consumerKey ? shop.settings.apiKey : undefined),
        nonces,
        nowSeconds: () => Math.floor(Date.now() / 1000),
      },
    );
    if (outcome.kind !== 'anonymous') call.auth = outcome.method;
    if (outcome.kind === 'rejected') {
      call.status = outcome.error.status;
      sendJson(res, shop, outcome.error.status, wpErrorBody(outcome.error), outcome.error.headers);
      return;
    }
    if (outcome.kind === 'authenticated') {
      const denied = keyPermissionError(outcome.key, method);
      if (denied) {
        call.status = denied.status;
        sendJson(res, shop, denied.status, wpErrorBody(denied));
        return;
      }
    }

    const found = routes.map((candidate) => ({ candidate, match: candidate.pattern.exec(route) })).find((entry) => entry.match);
    const endpoint = found?.candidate.methods[method];
    if (!found?.match || !endpoint) {
      call.status = 404;
      sendJson(res, shop, 404, wpErrorBody(NO_ROUTE));
      return;
    }
    const authenticated = outcome.kind === 'authenticated';
    if (!authenticated && endpoint.anonymous !== 'lookup') {
      call.status = endpoint.anonymous.status;
      sendJson(res, shop, endpoint.anonymous.status, wpErrorBody(endpoint.anonymous));
      return;
    }

    const response = await endpoint.handler(
      { shop, method, route, params: { ...queryParams, ...bodyParams }, authenticated },
      found.match,
    );
    if (response.beforeSend) await response.beforeSend();
    call.status = response.status;
    sendJson(res, shop, response.status, response.body, {
      ...response.headers,
      Allow: Object.keys(found.candidate.methods).join(', '),
    });
    logger.debug({ shop: shop.settings.id, method, route, status: response.status, auth: call.auth }, 'woo emulator: request');
    if (response.events) fireOrderEvents(shop, response.events.orderId, response.events.events);
  }

  function sendJson(res: ServerResponse, shop: ShopState, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const payload = phpJsonEncode(body);
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=UTF-8',
      'X-Robots-Tag': 'noindex',
      Link: `<${homeUrl(shop)}/wp-json/>; rel="https://api.w.org/"`,
      'X-Content-Type-Options': 'nosniff',
      'Access-Control-Expose-Headers': 'X-WP-Total, X-WP-TotalPages, Link',
      'Access-Control-Allow-Headers': 'Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type',
      ...headers,
      'Content-Length': String(Buffer.byteLength(payload)),
    });
    res.end(payload);
  }

  function sendFault(res: ServerResponse, shop: ShopState, status: number): void {
    if (status === 500) {
      // What WordPress answers on a PHP fatal error during a REST request.
      sendJson(res, shop, 500, wpErrorBody({
        code: 'internal_server_error',
        message: '<p>There has been a critical error on this website.</p><p><a href="https://wordpress.org/documentation/article/faq-troubleshooting/">Learn more about troubleshooting WordPress.</a></p>',
        status: 500,
      }));
      return;
    }
    // Anything else comes from the web server or proxy in front of PHP: an HTML page, not JSON.
    const body = `<html>\r\n<head><title>${status}</title></head>\r\n<body>\r\n<center><h1>${status}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
    res.writeHead(status, { 'Content-Type': 'text/html', 'Content-Length': String(Buffer.byteLength(body)), ...(status === 429 || status === 503 ? { 'Retry-After': '1' } : {}) });
    res.end(body);
  }

  async function applyLatency(shopId: string, method: string, route: string): Promise<void> {
    for (const fault of faultList) {
      if (fault.kind !== 'latency' || fault.remaining <= 0 || !faultMatches(fault, shopId, method, route)) continue;
      fault.remaining -= 1;
      await new Promise<void>((resolve) => {
        const entry = { timer: setTimeout(() => { latencyTimers.delete(entry); resolve(); }, fault.ms), resolve };
        latencyTimers.add(entry);
      });
    }
    for (let i = faultList.length - 1; i >= 0; i--) if ((faultList[i]?.remaining ?? 0) <= 0) faultList.splice(i, 1);
  }

  function takeStatusFault(shopId: string, method: string, route: string): number | undefined {
    const fault = faultList.find((candidate) => candidate.kind === 'status' && candidate.remaining > 0 && faultMatches(candidate, shopId, method, route));
    if (!fault || fault.kind !== 'status') return undefined;
    fault.remaining -= 1;
    if (fault.remaining <= 0) faultList.splice(faultList.indexOf(fault), 1);
    return fault.status;
  }

  // ------------------------------------------------------------------ start

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error({ err: error }, 'woo emulator: request crashed');
      if (!res.headersSent) sendText(res, 500, 'Internal Server Error');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(parsed.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  logger.info({ port, shops: [...shops.keys()] }, 'woo emulator: listening');

  // ------------------------------------------------------------------ helpers

  const emulator: WooEmulator = {
    get port() {
      return port;
    },
    siteUrl: (shopId) => homeUrl(requireShop(shopId)),

    async createProduct(shopId, input) {
      const shop = requireShop(shopId);
      const product = ProductInputSchema.parse(input);
      const created = toSeconds(now());
      const record: Product = {
        id: shop.newPostId(),
        name: product.name,
        slug: slugify(product.name),
        sku: product.sku ?? '',
        regularPrice: product.variations && product.variations.length > 0 ? '' : (product.price ?? '10000'),
        weight: product.weight ?? '',
        dateCreated: created,
        dateModified: created,
        variationIds: [],
      };
      shop.products.set(record.id, record);
      (product.variations ?? []).forEach((variation, index) => {
        const entry: Variation = {
          id: shop.newPostId(),
          parentId: record.id,
          sku: variation.sku ?? '',
          regularPrice: variation.price ?? product.price ?? '10000',
          weight: variation.weight ?? '',
          attributes: [{ name: 'Variante', option: variation.option ?? `Option ${index + 1}` }],
          dateCreated: created,
          dateModified: created,
        };
        shop.variations.set(entry.id, entry);
        record.variationIds.push(entry.id);
      });
      return { id: record.id, variationIds: [...record.variationIds] };
    },

    async createOrder(shopId, overrides = {}) {
      const shop = requireShop(shopId);
      const input = await checkoutInput(shop, overrides);
      const env = envFor(shop);
      const { order, events } = createOrderViaCheckout(env, input);
      fireOrderEvents(shop, order.id, creationEvents(events));
      await deliverer.settled();
      return orderJson(env, order, homeUrl(shop));
    },

    async updateOrder(shopId, id, patch) {
      const shop = requireShop(shopId);
      const order = requireOrder(shop, id);
      const input = orderWriteSchema.parse(patch);
      const env = envFor(shop);
      const { events } = updateOrderViaRest(env, order, input);
      fireOrderEvents(shop, order.id, events);
      await deliverer.settled();
      return orderJson(env, order, homeUrl(shop));
    },

    getOrder(shopId, id) {
      const shop = requireShop(shopId);
      return orderJson(envFor(shop), requireOrder(shop, id), homeUrl(shop));
    },

    async addWebhook(shopId, input) {
      const shop = requireShop(shopId);
      if (!isValidWebhookTopic(input.topic.toLowerCase())) throw new Error(`"${input.topic}" is not a WooCommerce webhook topic`);
      if (!isValidDeliveryUrl(input.deliveryUrl)) throw new Error('the delivery URL must start with http:// or https://');
      const webhook = createWebhook(shop, input);
      const ping = await deliverer.ping(shop, webhook);
      return { ...webhookInfo(webhook), ping };
    },

    async updateWebhook(shopId, id, patch) {
      const shop = requireShop(shopId);
      const webhook = shop.webhooks.get(id);
      if (!webhook) throw new Error(`shop "${shopId}" has no webhook ${id}`);
      const result = await applyWebhookUpdate(shop, webhook, {
        ...(patch.status !== undefined ? { status: patch.status } : {}),
        ...(patch.deliveryUrl !== undefined ? { delivery_url: patch.deliveryUrl } : {}),
        ...(patch.secret !== undefined ? { secret: patch.secret } : {}),
      });
      if (!result.ok) throw new Error(result.error.message);
      return webhookInfo(webhook);
    },

    webhooks: (shopId) => [...requireShop(shopId).webhooks.values()].map(webhookInfo),

    orderSnapshot(shopId, id) {
      const shop = requireShop(shopId);
      const order = requireOrder(shop, id);
      const json = orderJson(envFor(shop), order, homeUrl(shop));
      return {
        id: order.id,
        status: order.status,
        total: String(json.total),
        payment_method: order.paymentMethod,
        transaction_id: order.transactionId,
        meta_data: order.meta.map((entry) => ({ id: entry.id, key: entry.key, value: structuredClone(entry.value) })),
        notes: [...order.notes]
          .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id - b.id)
          .map((note) => ({
            id: note.id,
            note: note.note,
            customer_note: note.customerNote,
            author: note.author,
            date_created_gmt: note.createdAt.toISOString().slice(0, 19),
          })),
        date_paid_gmt: order.datePaid ? order.datePaid.toISOString().slice(0, 19) : null,
        date_completed_gmt: order.dateCompleted ? order.dateCompleted.toISOString().slice(0, 19) : null,
        date_modified_gmt: order.dateModified.toISOString().slice(0, 19),
        set_paid: order.setPaidRequested,
      };
    },

    calls: () => apiCalls,
    deliveries: () => deliverer.deliveries(),
    settled: () => deliverer.settled(),

    faults: {
      add(fault) {
        const remaining = fault.times ?? (fault.kind === 'status' ? 1 : Number.POSITIVE_INFINITY);
        faultList.push({ ...fault, remaining });
      },
      clear() {
        faultList.length = 0;
      },
      active: () => faultList.map(({ remaining: _remaining, ...fault }) => fault as FaultSpec),
    },

    async close() {
      if (closed) return;
      closed = true;
      faultList.length = 0;
      for (const entry of latencyTimers) {
        clearTimeout(entry.timer);
        entry.resolve();
      }
      latencyTimers.clear();
      await deliverer.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };

  /** The checkout's defaults: a cash-on-delivery order in Dakar, with a product created when none is named. */
  async function checkoutInput(shop: ShopState, overrides: Partial<OrderWriteInput>): Promise<OrderWriteInput> {
    const defaults = {
      payment_method: 'cod',
      payment_method_title: 'Cash on delivery',
      billing: {
        first_name: 'Awa', last_name: 'Diop', company: '', address_1: 'Rue 10 x Rue 11, Médina', address_2: '', city: 'Dakar',
        state: '', postcode: '', country: 'SN', email: 'awa.diop@example.com', phone: '+221 77 123 45 67',
      },
      shipping: {
        first_name: 'Awa', last_name: 'Diop', company: '', address_1: 'Rue 10 x Rue 11, Médina', address_2: '', city: 'Dakar',
        state: '', postcode: '', country: 'SN', phone: '',
      },
      shipping_lines: [{ method_id: 'flat_rate', method_title: 'Livraison Dakar', total: '1500' }],
    };
    const input = orderWriteSchema.parse({
      ...defaults,
      ...overrides,
      billing: { ...defaults.billing, ...overrides.billing },
      shipping: { ...defaults.shipping, ...overrides.shipping },
    });
    if (!input.line_items) {
      const product = await emulator.createProduct(shop.settings.id, { name: 'Boubou wax', price: '12500', weight: '0.8' });
      input.line_items = [{ product_id: product.id, quantity: 1 }];
    }
    for (const line of input.line_items) {
      const id = line.variation_id || line.product_id;
      if (id && !shop.products.has(id) && !shop.variations.has(id)) {
        throw new Error(`createOrder: shop "${shop.settings.id}" has no product or variation ${id}; create it with createProduct first`);
      }
    }
    return input;
  }

  function creationEvents(events: readonly OrderEvent[]): OrderEvent[] {
    return orderUpdatedOnCreate ? [...events] : events.filter((event) => event === 'created');
  }

  return emulator;
}

// ---------------------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------------------

const ProductInputSchema = z.object({
  name: z.string().min(1),
  weight: z.string().optional(),
  price: z.string().optional(),
  sku: z.string().optional(),
  variations: z.array(z.object({
    weight: z.string().optional(),
    price: z.string().optional(),
    sku: z.string().optional(),
    option: z.string().optional(),
  })).optional(),
});

function wpErrorBody(error: WpError): Record<string, unknown> {
  return { code: error.code, message: error.message, data: { status: error.status, ...error.data } };
}

function errorResponse(error: WpError): RestResponse {
  return { status: error.status, body: wpErrorBody(error), ...(error.headers ? { headers: error.headers } : {}) };
}

/** `check_permissions()`: read keys may only GET, write keys only write. */
function keyPermissionError(key: ApiKey, method: string): WpError | undefined {
  if (method === 'GET' || method === 'HEAD') {
    if (key.permissions === 'write') {
      return { code: 'woocommerce_rest_authentication_error', message: 'The API key provided does not have read permissions.', status: 401 };
    }
    return undefined;
  }
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) {
    if (key.permissions === 'read') {
      return { code: 'woocommerce_rest_authentication_error', message: 'The API key provided does not have write permissions.', status: 401 };
    }
    return undefined;
  }
  if (method === 'OPTIONS') return undefined;
  return { code: 'woocommerce_rest_authentication_error', message: 'Unknown request method.', status: 401 };
}

function isCredentialParam(key: string): boolean {
  return key.startsWith('oauth_') || key === 'consumer_key' || key === 'consumer_secret';
}

function withoutCredentials(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([key]) => !isCredentialParam(key)));
}

function faultMatches(fault: FaultMatch, shopId: string, method: string, route: string): boolean {
  if (fault.shopId !== undefined && fault.shopId !== shopId) return false;
  if (fault.method !== undefined && fault.method.toUpperCase() !== method) return false;
  if (fault.route !== undefined) {
    if (typeof fault.route === 'string' ? !route.includes(fault.route) : !fault.route.test(route)) return false;
  }
  return true;
}

/** `wc_is_valid_url()` as the webhook controller uses it: http(s) scheme and a host. */
function isValidDeliveryUrl(url: string): boolean {
  try {
    const parsedUrl = new URL(url);
    return (parsedUrl.protocol === 'http:' || parsedUrl.protocol === 'https:') && parsedUrl.hostname !== '';
  } catch {
    return false;
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=UTF-8', 'Content-Length': String(Buffer.byteLength(text)) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function slugify(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'product';
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** strftime('%b %d, %Y @ %I:%M %p') in the site's timezone, as core names webhooks created without a name. */
function strftimeWebhookDate(date: Date, utcOffsetMinutes: number): string {
  const local = new Date(date.getTime() + utcOffsetMinutes * 60_000);
  const hours = local.getUTCHours();
  const twelve = hours % 12 === 0 ? 12 : hours % 12;
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${MONTHS[local.getUTCMonth()]} ${pad(local.getUTCDate())}, ${local.getUTCFullYear()} @ ${pad(twelve)}:${pad(local.getUTCMinutes())} ${hours < 12 ? 'AM' : 'PM'}`;
}
