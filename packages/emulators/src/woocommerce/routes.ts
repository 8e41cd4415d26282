/**
 * The wc/v3 routes the emulator serves, each answering as its WooCommerce controller does: the same status
 * codes, error codes and messages (including core's quirks, noted where they surprise), paging headers and
 * Location headers. Handlers are pure over the shop state; webhook deliveries are returned as events.
 */
import type { WpError } from './auth.js';
import {
  isValidWebhookTopic,
  newWebhookSecret,
  toSeconds,
  WEBHOOK_STATUSES,
  type ShopState,
  type Webhook,
  type WebhookStatus,
} from './model.js';
import {
  OrderWriteError,
  addOrderNote,
  createOrderViaRest,
  noteJson,
  orderJson,
  queryOrders,
  updateOrderViaRest,
  type OrderEnv,
  type OrderEvent,
} from './orders.js';
import { refundJson } from './refunds.js';
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
} from './schemas.js';
import type { WebhookInfo } from './types.js';
import type { WebhookDeliverer } from './webhooks.js';

export interface RestRequest {
  shop: ShopState;
  method: string;
  route: string;
  params: Record<string, unknown>;
  authenticated: boolean;
}

export interface RestResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Runs before the answer is sent (core pings a new webhook before answering). */
  beforeSend?: () => Promise<void>;
  /** Order events to turn into webhook deliveries once the answer is on its way. */
  events?: { orderId: number; events: readonly OrderEvent[] };
}

export type RouteHandler = (req: RestRequest, match: RegExpExecArray) => RestResponse | Promise<RestResponse>;

export interface Route {
  pattern: RegExp;
  methods: Record<string, { handler: RouteHandler; anonymous: WpError | 'lookup' }>;
}

export const cannot = {
  list: { code: 'woocommerce_rest_cannot_view', message: 'Sorry, you cannot list resources.', status: 401 },
  view: { code: 'woocommerce_rest_cannot_view', message: 'Sorry, you cannot view this resource.', status: 401 },
  create: {
    code: 'woocommerce_rest_cannot_create',
    message: 'Sorry, you are not allowed to create resources.',
    status: 401,
  },
  edit: {
    code: 'woocommerce_rest_cannot_edit',
    message: 'Sorry, you are not allowed to edit this resource.',
    status: 401,
  },
  delete: {
    code: 'woocommerce_rest_cannot_delete',
    message: 'Sorry, you are not allowed to delete this resource.',
    status: 401,
  },
} satisfies Record<string, WpError>;

export const NO_ROUTE: WpError = {
  code: 'rest_no_route',
  message: 'No route was found matching the URL and request method.',
  status: 404,
};

export interface RouteContext {
  homeUrl(shop: ShopState): string;
  envFor(shop: ShopState): OrderEnv;
  now(): Date;
  deliverer: WebhookDeliverer;
  /** The events a creation sends (order.updated may be switched off). */
  creationEvents(events: readonly OrderEvent[]): OrderEvent[];
}

export function createRoutes(ctx: RouteContext): Route[] {
  const { homeUrl, envFor, deliverer, creationEvents } = ctx;
  const createWebhook = (
    shop: ShopState,
    input: { name?: string; topic: string; deliveryUrl: string; secret?: string },
  ) => createWebhookRecord(shop, input, ctx.now());
  const applyWebhookUpdate = (shop: ShopState, webhook: Webhook, patch: WebhookPatch) =>
    updateWebhookRecord(deliverer, shop, webhook, patch);

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
      pattern: /^\/wc\/v3\/orders\/(\d+)\/refunds$/,
      methods: { GET: { anonymous: cannot.list, handler: listRefunds } },
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
    if (!order)
      return errorResponse({ code: 'woocommerce_rest_shop_order_invalid_id', message: 'Invalid ID.', status: 404 });
    const context = parseParams(contextSchema, req.params);
    if (!context.ok) return errorResponse(context.error);
    return { status: 200, body: orderJson(envFor(req.shop), order, homeUrl(req.shop), context.value.dp) };
  }

  /** GET /orders/{id}/refunds: every refund, newest first (core's default `order=desc`, `orderby=date`). */
  function listRefunds(req: RestRequest, match: RegExpExecArray): RestResponse {
    const order = req.shop.orders.get(orderIdOf(match));
    if (!order)
      return errorResponse({ code: 'woocommerce_rest_invalid_order_id', message: 'Invalid order ID.', status: 404 });
    const context = parseParams(contextSchema, req.params);
    if (!context.ok) return errorResponse(context.error);
    const home = homeUrl(req.shop);
    const refunds = [...order.refunds].reverse();
    return {
      status: 200,
      body: refunds.map((refund) => refundJson(order, refund, req.shop.settings, home, context.value.dp)),
      headers: { 'X-WP-Total': String(refunds.length), 'X-WP-TotalPages': refunds.length === 0 ? '0' : '1' },
    };
  }

  function createOrderRoute(req: RestRequest): RestResponse {
    if (req.params.id !== undefined && req.params.id !== null && req.params.id !== 0 && req.params.id !== '') {
      return errorResponse({
        code: 'woocommerce_rest_shop_order_exists',
        message: 'Cannot create existing shop_order.',
        status: 400,
      });
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
    if (!order)
      return errorResponse({ code: 'woocommerce_rest_shop_order_invalid_id', message: 'Invalid ID.', status: 400 });
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
    if (!order)
      return errorResponse({
        code: 'woocommerce_rest_shop_order_invalid_id',
        message: 'Invalid order ID.',
        status: 404,
      });
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
    if (!order)
      return errorResponse({ code: 'woocommerce_rest_order_invalid_id', message: 'Invalid order ID.', status: 404 });
    if (params.value.note === '') {
      return errorResponse({
        code: 'woocommerce_api_cannot_create_order_note',
        message: 'Cannot create order note, please try again.',
        status: 500,
      });
    }
    const env = envFor(req.shop);
    const note = addOrderNote(
      env,
      order,
      params.value.note,
      params.value.customer_note ?? false,
      params.value.added_by_user ?? false,
    );
    const home = homeUrl(req.shop);
    return {
      status: 201,
      body: noteJson(env, order, note, home),
      headers: { Location: `${home}/wp-json/wc/v3/orders/${order.id}/notes/${note.id}` },
    };
  }

  function getNote(req: RestRequest, match: RegExpExecArray): RestResponse {
    const order = req.shop.orders.get(orderIdOf(match));
    if (!order)
      return errorResponse({ code: 'woocommerce_rest_order_invalid_id', message: 'Invalid order ID.', status: 404 });
    const note = order.notes.find((candidate) => candidate.id === Number(match[2]));
    if (!note)
      return errorResponse({ code: 'woocommerce_rest_invalid_id', message: 'Invalid resource ID.', status: 404 });
    return { status: 200, body: noteJson(envFor(req.shop), order, note, homeUrl(req.shop)) };
  }

  function getProduct(req: RestRequest, match: RegExpExecArray): RestResponse {
    const product = req.shop.products.get(Number(match[1]));
    if (!product)
      return errorResponse({ code: 'woocommerce_rest_product_invalid_id', message: 'Invalid ID.', status: 404 });
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
      return errorResponse({
        code: 'woocommerce_rest_product_variation_invalid_id',
        message: 'Invalid ID.',
        status: 404,
      });
    }
    if (!req.authenticated) return errorResponse(cannot.view);
    return { status: 200, body: variationJson(req.shop, variation, parent, homeUrl(req.shop)) };
  }

  function listSettings(req: RestRequest, match: RegExpExecArray): RestResponse {
    const group = match[1] ?? '';
    const options = settingOptions(req.shop)[group];
    if (!options)
      return errorResponse({
        code: 'rest_setting_setting_group_invalid',
        message: 'Invalid setting group.',
        status: 404,
      });
    const home = homeUrl(req.shop);
    return { status: 200, body: options.map((option) => settingJson(group, option, home)) };
  }

  function getSetting(req: RestRequest, match: RegExpExecArray): RestResponse {
    const group = match[1] ?? '';
    const options = settingOptions(req.shop)[group];
    if (!options)
      return errorResponse({
        code: 'rest_setting_setting_group_invalid',
        message: 'Invalid setting group.',
        status: 404,
      });
    const option = options.find((candidate) => candidate.id === match[2]);
    if (!option)
      return errorResponse({ code: 'rest_setting_setting_invalid', message: 'Invalid setting.', status: 404 });
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
        const primary =
          orderby === 'title'
            ? a.name.localeCompare(b.name)
            : orderby === 'id'
              ? a.id - b.id
              : a.dateCreated.getTime() - b.dateCreated.getTime();
        return direction * (primary !== 0 ? primary : a.id - b.id);
      });
    const slice = all.slice((page - 1) * perPage, page * perPage);
    const home = homeUrl(req.shop);
    return {
      status: 200,
      body: slice.map((webhook) => webhookJson(req.shop, webhook, home, 'view')),
      headers: pagingHeaders(
        `${home}/wp-json${req.route}`,
        req.params,
        page,
        all.length,
        perPage > 1 ? Math.ceil(all.length / perPage) : 1,
      ),
    };
  }

  function createWebhookRoute(req: RestRequest): RestResponse {
    const params = parseParams(webhookCreateSchema, req.params, ['topic', 'delivery_url']);
    if (!params.ok) return errorResponse(params.error);
    if (req.params.id !== undefined && req.params.id !== null && req.params.id !== 0 && req.params.id !== '') {
      return errorResponse({
        code: 'woocommerce_rest_shop_webhook_exists',
        message: 'Cannot create existing shop_webhook.',
        status: 400,
      });
    }
    const { topic, delivery_url: deliveryUrl, secret, name } = params.value;
    if (topic === '' || !isValidWebhookTopic(topic.toLowerCase())) {
      return errorResponse({
        code: 'woocommerce_rest_shop_webhook_invalid_topic',
        message: 'Webhook topic is required and must be valid.',
        status: 400,
      });
    }
    if (!isValidDeliveryUrl(deliveryUrl)) {
      return errorResponse({
        code: 'woocommerce_rest_shop_webhook_invalid_delivery_url',
        message: 'Webhook delivery URL must be a valid URL starting with http:// or https://.',
        status: 400,
      });
    }
    // Core ignores a posted status here: a webhook created through the API is always active.
    const webhook = createWebhook(req.shop, {
      topic,
      deliveryUrl,
      ...(secret !== undefined ? { secret } : {}),
      ...(name ? { name } : {}),
    });
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
    if (!webhook)
      return errorResponse({
        code: 'woocommerce_rest_shop_webhook_invalid_id',
        message: 'ID is invalid.',
        status: 400,
      });
    return { status: 200, body: webhookJson(req.shop, webhook, homeUrl(req.shop), 'view') };
  }

  async function updateWebhookRoute(req: RestRequest, match: RegExpExecArray): Promise<RestResponse> {
    const webhook = req.shop.webhooks.get(Number(match[1]));
    if (!webhook)
      return errorResponse({
        code: 'woocommerce_rest_shop_webhook_invalid_id',
        message: 'ID is invalid.',
        status: 400,
      });
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
      return errorResponse({
        code: 'woocommerce_rest_trash_not_supported',
        message: 'Webhooks do not support trashing.',
        status: 501,
      });
    }
    const webhook = req.shop.webhooks.get(Number(match[1]));
    if (!webhook)
      return errorResponse({ code: 'woocommerce_rest_shop_webhook_invalid_id', message: 'Invalid ID.', status: 404 });
    const body = webhookJson(req.shop, webhook, homeUrl(req.shop), 'edit');
    req.shop.webhooks.delete(webhook.id);
    return { status: 200, body };
  }

  return routes;
}

// ---------------------------------------------------------------------------------------------------------
// Webhook records (shared by the REST routes and the test helpers)
// ---------------------------------------------------------------------------------------------------------

export type WebhookPatch = { name?: string; status?: string; topic?: string; delivery_url?: string; secret?: string };

/** `WC_Webhook::save()` for a new webhook: active, pending its first ping, secret generated when none given. */
export function createWebhookRecord(
  shop: ShopState,
  input: { name?: string; topic: string; deliveryUrl: string; secret?: string },
  now: Date,
): Webhook {
  const created = toSeconds(now);
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
}

export function webhookInfo(webhook: Webhook): WebhookInfo {
  return {
    id: webhook.id,
    name: webhook.name,
    topic: webhook.topic,
    status: webhook.status,
    deliveryUrl: webhook.deliveryUrl,
    failureCount: webhook.failureCount,
    pendingDelivery: webhook.pendingDelivery,
  };
}

/** `WC_REST_Webhooks_V1_Controller::update_item` then `save()`. */
export async function updateWebhookRecord(
  deliverer: WebhookDeliverer,
  shop: ShopState,
  webhook: Webhook,
  patch: WebhookPatch,
): Promise<{ ok: true } | { ok: false; error: WpError }> {
  const next = { ...webhook };
  if (patch.topic) {
    if (!isValidWebhookTopic(patch.topic.toLowerCase())) {
      return {
        ok: false,
        error: {
          code: 'woocommerce_rest_shop_webhook_invalid_topic',
          message: 'Webhook topic must be valid.',
          status: 400,
        },
      };
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
      return {
        ok: false,
        error: {
          code: 'woocommerce_rest_shop_webhook_invalid_status',
          message: 'Webhook status must be valid.',
          status: 400,
        },
      };
    }
    next.status = status as WebhookStatus;
  }
  if (patch.name) next.name = patch.name;
  const deliveryUrlChanged = next.deliveryUrl !== webhook.deliveryUrl;
  Object.assign(webhook, next);
  await deliverer.afterSave(shop, webhook, deliveryUrlChanged);
  return { ok: true };
}

// ---------------------------------------------------------------------------------------------------------
// Shared answers
// ---------------------------------------------------------------------------------------------------------

export function pagingHeaders(
  base: string,
  params: Record<string, unknown>,
  page: number,
  total: number,
  totalPages: number,
): Record<string, string> {
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

export function wpErrorBody(error: WpError): Record<string, unknown> {
  return { code: error.code, message: error.message, data: { status: error.status, ...error.data } };
}

export function errorResponse(error: WpError): RestResponse {
  return { status: error.status, body: wpErrorBody(error), ...(error.headers ? { headers: error.headers } : {}) };
}

export function isCredentialParam(key: string): boolean {
  return key.startsWith('oauth_') || key === 'consumer_key' || key === 'consumer_secret';
}

/** `wc_is_valid_url()` as the webhook controller uses it: http(s) scheme and a host. */
export function isValidDeliveryUrl(url: string): boolean {
  try {
    const parsedUrl = new URL(url);
    return (parsedUrl.protocol === 'http:' || parsedUrl.protocol === 'https:') && parsedUrl.hostname !== '';
  } catch {
    return false;
  }
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
