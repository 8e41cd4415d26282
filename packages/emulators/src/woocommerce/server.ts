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
import { silentLogger } from '../relais.js';
import { NonceStore, authenticate, type ApiKey, type WpError } from './auth.js';
import { ShopState, isValidWebhookTopic, toSeconds, type Order, type Product, type Variation } from './model.js';
import {
  createOrderViaCheckout,
  orderJson,
  refundOrderViaAdmin,
  setTrashed,
  updateOrderViaRest,
  type OrderEnv,
  type OrderEvent,
} from './orders.js';
import { parseStr, phpArrayToPlain, phpJsonEncode } from './php.js';
import {
  NO_ROUTE,
  createRoutes,
  createWebhookRecord,
  isCredentialParam,
  isValidDeliveryUrl,
  updateWebhookRecord,
  webhookInfo,
  wpErrorBody,
} from './routes.js';
import { orderWriteSchema, type OrderWriteInput } from './schemas.js';
import type { ApiCall, FaultMatch, FaultSpec, WooEmulator, WooEmulatorOptions } from './types.js';
import { WcAuth, type AuthorizationRecord } from './wc-auth.js';
import { WebhookDeliverer } from './webhooks.js';

export type * from './types.js';
export type { DeliveryRecord, PingResult } from './webhooks.js';
export type { OrderWriteInput } from './schemas.js';
export type { RefundInput } from './refunds.js';
export type { AuthorizationRecord, IssuedKey } from './wc-auth.js';

const shopOptionSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]+$/, 'shop ids are used in URLs: letters, digits, - and _ only'),
  consumerKey: z.string().min(1),
  consumerSecret: z.string().min(1),
  weightUnit: z.enum(['kg', 'g', 'lbs', 'oz']).optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .optional(),
  priceDecimals: z.number().int().min(0).max(6).optional(),
  utcOffsetMinutes: z
    .number()
    .int()
    .min(-14 * 60)
    .max(14 * 60)
    .optional(),
  permissions: z.enum(['read', 'write', 'read_write']).optional(),
  shippingTaxRate: z.number().min(0).max(1).optional(),
});

const optionsSchema = z.object({
  shops: z.array(shopOptionSchema).min(1),
  port: z.number().int().min(0).max(65535).optional(),
  host: z.string().optional(),
  disableAfterFailures: z.number().int().min(1).optional(),
  deliveryTimeoutMs: z.number().int().positive().optional(),
  authCallbackTimeoutMs: z.number().int().positive().optional(),
  orderUpdatedOnCreate: z.boolean().optional(),
  wooVersion: z.string().optional(),
  wordpressVersion: z.string().optional(),
  systemNoteAuthor: z.string().optional(),
});

const BODY_LIMIT_BYTES = 2 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------------------

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
    shops.set(
      shop.id,
      new ShopState({
        id: shop.id,
        apiKey: {
          consumerKey: shop.consumerKey,
          consumerSecret: shop.consumerSecret,
          permissions: shop.permissions ?? 'read_write',
        },
        weightUnit: shop.weightUnit ?? 'kg',
        dimensionUnit: 'cm',
        currency: shop.currency ?? 'XOF',
        priceDecimals: shop.priceDecimals ?? 2,
        utcOffsetMinutes: shop.utcOffsetMinutes ?? 0,
        apiUserDisplayName: 'admin',
        shippingTaxRate: shop.shippingTaxRate ?? 0,
      }),
    );
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

  const createWebhook = (
    shop: ShopState,
    input: { name?: string; topic: string; deliveryUrl: string; secret?: string },
  ) => createWebhookRecord(shop, input, now());

  const creationEvents = (events: readonly OrderEvent[]): OrderEvent[] =>
    orderUpdatedOnCreate ? [...events] : events.filter((event) => event === 'created');

  const routes = createRoutes({ homeUrl, envFor, now, deliverer, creationEvents });
  const authorizationLog: AuthorizationRecord[] = [];
  const wcAuth = new WcAuth({
    homeUrl,
    now,
    callbackTimeoutMs: parsed.authCallbackTimeoutMs ?? 60_000,
    record: (entry) => authorizationLog.push(entry),
  });

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
    const authMatch = /^\/wc-auth\/v1\/([^/]*)\/?$/.exec(sitePath);
    if (authMatch) {
      const body = await readBody(req).catch(() => undefined);
      if (body === undefined) sendText(res, 413, 'Request Entity Too Large');
      else await wcAuth.handle(shop, safeDecode(authMatch[1] ?? ''), req, res, body);
      return;
    }
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
      sendJson(
        res,
        shop,
        413,
        wpErrorBody({ code: 'rest_request_too_large', message: 'Request body too large.', status: 413 }),
      );
      return;
    }
    const queryParams = phpArrayToPlain(parseStr(rawQuery));
    let method = (req.method ?? 'GET').toUpperCase();
    const override =
      typeof queryParams._method === 'string' ? queryParams._method : req.headers['x-http-method-override'];
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
          if (parsedBody !== null && typeof parsedBody === 'object' && !Array.isArray(parsedBody))
            bodyParams = parsedBody as Record<string, unknown>;
        } catch (error) {
          call.status = 400;
          sendJson(
            res,
            shop,
            400,
            wpErrorBody({
              code: 'rest_invalid_json',
              message: 'Invalid JSON body passed.',
              status: 400,
              data: { json_error_code: 4, json_error_message: error instanceof Error ? error.message : 'Syntax error' },
            }),
          );
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
        findKey: (consumerKey) => shop.findKey(consumerKey),
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

    const found = routes
      .map((candidate) => ({ candidate, match: candidate.pattern.exec(route) }))
      .find((entry) => entry.match);
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
    logger.debug(
      { shop: shop.settings.id, method, route, status: response.status, auth: call.auth },
      'woo emulator: request',
    );
    if (response.events) fireOrderEvents(shop, response.events.orderId, response.events.events);
  }

  function sendJson(
    res: ServerResponse,
    shop: ShopState,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
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
      sendJson(
        res,
        shop,
        500,
        wpErrorBody({
          code: 'internal_server_error',
          message:
            '<p>There has been a critical error on this website.</p><p><a href="https://wordpress.org/documentation/article/faq-troubleshooting/">Learn more about troubleshooting WordPress.</a></p>',
          status: 500,
        }),
      );
      return;
    }
    // Anything else comes from the web server or proxy in front of PHP: an HTML page, not JSON.
    const body = `<html>\r\n<head><title>${status}</title></head>\r\n<body>\r\n<center><h1>${status}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
    res.writeHead(status, {
      'Content-Type': 'text/html',
      'Content-Length': String(Buffer.byteLength(body)),
      ...(status === 429 || status === 503 ? { 'Retry-After': '1' } : {}),
    });
    res.end(body);
  }

  async function applyLatency(shopId: string, method: string, route: string): Promise<void> {
    for (const fault of faultList) {
      if (fault.kind !== 'latency' || fault.remaining <= 0 || !faultMatches(fault, shopId, method, route)) continue;
      fault.remaining -= 1;
      await new Promise<void>((resolve) => {
        const entry = {
          timer: setTimeout(() => {
            latencyTimers.delete(entry);
            resolve();
          }, fault.ms),
          resolve,
        };
        latencyTimers.add(entry);
      });
    }
    for (let i = faultList.length - 1; i >= 0; i--) if ((faultList[i]?.remaining ?? 0) <= 0) faultList.splice(i, 1);
  }

  function takeStatusFault(shopId: string, method: string, route: string): number | undefined {
    const fault = faultList.find(
      (candidate) =>
        candidate.kind === 'status' && candidate.remaining > 0 && faultMatches(candidate, shopId, method, route),
    );
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

    async refundOrder(shopId, id, refund) {
      const shop = requireShop(shopId);
      const order = requireOrder(shop, id);
      const env = envFor(shop);
      const { events } = refundOrderViaAdmin(env, order, refund);
      fireOrderEvents(shop, order.id, events);
      await deliverer.settled();
      return orderJson(env, order, homeUrl(shop));
    },

    async trashOrder(shopId, id) {
      const shop = requireShop(shopId);
      setTrashed(envFor(shop), requireOrder(shop, id), true);
      deliverer.enqueue(shop, 'order.deleted', id);
      await deliverer.settled();
    },

    async restoreOrder(shopId, id) {
      const shop = requireShop(shopId);
      const order = requireOrder(shop, id);
      setTrashed(envFor(shop), order, false);
      deliverer.enqueue(shop, 'order.restored', id);
      await deliverer.settled();
      return orderJson(envFor(shop), order, homeUrl(shop));
    },

    async deleteOrderForGood(shopId, id) {
      const shop = requireShop(shopId);
      requireOrder(shop, id);
      shop.orders.delete(id);
      await deliverer.settled();
    },

    getOrder(shopId, id) {
      const shop = requireShop(shopId);
      return orderJson(envFor(shop), requireOrder(shop, id), homeUrl(shop));
    },

    async addWebhook(shopId, input) {
      const shop = requireShop(shopId);
      if (!isValidWebhookTopic(input.topic.toLowerCase()))
        throw new Error(`"${input.topic}" is not a WooCommerce webhook topic`);
      if (!isValidDeliveryUrl(input.deliveryUrl))
        throw new Error('the delivery URL must start with http:// or https://');
      const webhook = createWebhook(shop, input);
      const ping = await deliverer.ping(shop, webhook);
      return { ...webhookInfo(webhook), ping };
    },

    async updateWebhook(shopId, id, patch) {
      const shop = requireShop(shopId);
      const webhook = shop.webhooks.get(id);
      if (!webhook) throw new Error(`shop "${shopId}" has no webhook ${id}`);
      const result = await updateWebhookRecord(deliverer, shop, webhook, {
        ...(patch.status !== undefined ? { status: patch.status } : {}),
        ...(patch.deliveryUrl !== undefined ? { delivery_url: patch.deliveryUrl } : {}),
        ...(patch.secret !== undefined ? { secret: patch.secret } : {}),
      });
      if (!result.ok) throw new Error(result.error.message);
      return webhookInfo(webhook);
    },

    webhooks: (shopId) => [...requireShop(shopId).webhooks.values()].map(webhookInfo),
    issuedKeys: (shopId) => [...requireShop(shopId).issuedKeys.values()].map((key) => ({ ...key })),
    authorizations: () => authorizationLog,

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
        date_paid: order.datePaid ? order.datePaid.toISOString().slice(0, 19) : null,
        date_completed: order.dateCompleted ? order.dateCompleted.toISOString().slice(0, 19) : null,
        date_modified: order.dateModified.toISOString().slice(0, 19),
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
        first_name: 'Awa',
        last_name: 'Diop',
        company: '',
        address_1: 'Rue 10 x Rue 11, Médina',
        address_2: '',
        city: 'Dakar',
        state: '',
        postcode: '',
        country: 'SN',
        email: 'awa.diop@example.com',
        phone: '+221 77 123 45 67',
      },
      shipping: {
        first_name: 'Awa',
        last_name: 'Diop',
        company: '',
        address_1: 'Rue 10 x Rue 11, Médina',
        address_2: '',
        city: 'Dakar',
        state: '',
        postcode: '',
        country: 'SN',
        phone: '',
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
      const product = await emulator.createProduct(shop.settings.id, {
        name: 'Boubou wax',
        price: '12500',
        weight: '0.8',
      });
      input.line_items = [{ product_id: product.id, quantity: 1 }];
    }
    for (const line of input.line_items) {
      const id = line.variation_id || line.product_id;
      if (id && !shop.products.has(id) && !shop.variations.has(id)) {
        throw new Error(
          `createOrder: shop "${shop.settings.id}" has no product or variation ${id}; create it with createProduct first`,
        );
      }
    }
    return input;
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
  variations: z
    .array(
      z.object({
        weight: z.string().optional(),
        price: z.string().optional(),
        sku: z.string().optional(),
        option: z.string().optional(),
      }),
    )
    .optional(),
});

/** `check_permissions()`: read keys may only GET, write keys only write. */
function keyPermissionError(key: ApiKey, method: string): WpError | undefined {
  if (method === 'GET' || method === 'HEAD') {
    if (key.permissions === 'write') {
      return {
        code: 'woocommerce_rest_authentication_error',
        message: 'The API key provided does not have read permissions.',
        status: 401,
      };
    }
    return undefined;
  }
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) {
    if (key.permissions === 'read') {
      return {
        code: 'woocommerce_rest_authentication_error',
        message: 'The API key provided does not have write permissions.',
        status: 401,
      };
    }
    return undefined;
  }
  if (method === 'OPTIONS') return undefined;
  return { code: 'woocommerce_rest_authentication_error', message: 'Unknown request method.', status: 401 };
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

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=UTF-8',
    'Content-Length': String(Buffer.byteLength(text)),
  });
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
  return (
    name
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'product'
  );
}
