/**
 * A local Shopify for tests, the demo and merchants trying Relais: Admin GraphQL validated against the real
 * 2026-10 schema, per-shop access tokens, Shopify's cost-based throttling, an order store with fulfillment
 * orders, fulfillments, events, tags and metafields, and signed webhooks.
 *
 *   POST /shops/{domain}/admin/api/{version}/graphql.json   shop chosen by the path (what `fetch` and adminUrl use)
 *   POST /admin/api/{version}/graphql.json                  shop chosen by the Host header (or the only shop)
 *   GET  .../admin/api/{version}/orders/{id}.json and orders.json   REST reads (rest-api.ts)
 *   GET  [/shops/{domain}]/admin/oauth/authorize            the app install door (oauth.ts): auto-approved, back to redirect_uri
 *   POST [/shops/{domain}]/admin/oauth/access_token         authorization code, client credentials, refresh token (oauth.ts)
 *   /_emulator/...                                          control routes for demos (see handleControl)
 *
 * Only the configured API version is served; any other answers 404, so a client built for another version
 * fails loudly instead of being validated against the wrong schema.
 */
import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { Logger } from '../relais.js';
import { FaultPlan, type ActiveFault, type FaultSpec } from './faults.js';
import { OAuthServer, parseTokenRequestBody, type TokenLifetimes, type TokenRequestRecord } from './oauth.js';
import { parseGid, toHundredths } from './format.js';
import { answerRest, restBucket } from './rest-api.js';
import { GraphqlEndpoint, graphqlBodySchema, type CostExtension, type GraphqlBody } from './graphql/endpoint.js';
import type { ShopEvent, StoredOrder } from './model.js';
import type { CreateOrderInput } from './orders-input.js';
import type { RestOrder } from './rest.js';
import { DEFAULT_ADMIN_API_VERSION, loadAdminSchema, type AdminSchema } from './schema.js';
import { snapshotOf, type OrderSnapshot } from './snapshot.js';
import { IdSequence, isHttpUrl, ShopStore, type ResolvedShop } from './store.js';
import { CostBucket, DEFAULT_THROTTLE, type ThrottleConfig, type ThrottleStatus } from './throttle.js';
import { graphqlTopic, restTopic } from './topics.js';
import {
  DEFAULT_WEBHOOK_SETTINGS,
  postJson,
  signWebhookBody,
  WebhookDispatcher,
  type WebhookDeliveryRecord,
  type WebhookDeliveryResult,
  type WebhookSettings,
} from './webhooks.js';

export interface EmulatedShopifyShop {
  /** The myshopify domain, e.g. "dakar-mode.myshopify.com". */
  domain: string;
  /**
   * A static Admin API access token the app may send in X-Shopify-Access-Token (a legacy custom app's); tokens
   * obtained through /admin/oauth/access_token work as well, until they expire.
   */
  accessToken: string;
  /** The app's client secret: webhooks and OAuth redirects are signed with it, and the token endpoint checks it. */
  clientSecret: string;
  /** The app's client id (the token endpoint and the authorize page check it); default `emulated-{name}`. */
  clientId?: string;
  /** The scopes the app is granted (client credentials, and authorize without `scope`). */
  scopes?: string;
  /** Shop currency; default XOF. */
  currency?: string;
  /**
   * Whether the app has protected customer data access (Level 2: names, addresses, phones, emails); default true.
   * False plays a public app without it on a store that is not a development store: those fields come as null in
   * webhook bodies and Admin API reads (customer-data.ts).
   */
  protectedCustomerData?: boolean;
  /** Shop name; default the first label of the domain. */
  name?: string;
}

export interface ShopifyEmulatorOptions {
  shops: EmulatedShopifyShop[];
  /** Default 2026-10; the schema file for it must exist in @shopify/dev-mcp. */
  apiVersion?: string;
  /** Default Shopify's standard plan: 2000 points, 100 per second. */
  throttle?: ThrottleConfig;
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  logger?: Logger;
  webhooks?: Partial<WebhookSettings>;
  /** Where to read the Admin schema from, instead of node_modules/@shopify/dev-mcp. */
  schemaFile?: string;
  /** Time source for order timestamps and the throttle bucket (tests can make time jump). */
  clock?: () => number;
  /** Lifetimes of the tokens /admin/oauth/access_token issues (Shopify's by default: 86399 s, 3600 s, 90 days). */
  tokenLifetimes?: Partial<TokenLifetimes>;
}

/** Same shape as the global fetch and as @shopify/shopify-api's AbstractFetchFunc. */
export type FetchFunction = (
  input: Parameters<typeof fetch>[0],
  init?: Parameters<typeof fetch>[1],
) => Promise<Response>;

/** A numeric order id, its string, or its gid. */
export type OrderRef = number | string;

/** One Admin API request as the emulator saw it (GraphQL, or one of the REST order reads). */
export interface GraphqlCallRecord {
  at: string;
  kind: 'graphql' | 'rest';
  /** e.g. POST /admin/api/2026-10/graphql.json, GET /admin/api/2026-10/orders.json?status=any */
  request: string;
  domain: string;
  apiVersion: string;
  httpStatus: number;
  outcome: 'ok' | 'invalid' | 'throttled' | 'max_cost_exceeded' | 'unauthorized' | 'bad_request' | 'fault';
  operationType: 'query' | 'mutation' | 'subscription' | null;
  operationName: string | null;
  rootFields: string[];
  query: string | null;
  variables: Record<string, unknown> | null;
  cost: CostExtension | null;
  response: unknown;
}

export interface DeliverWebhookInput {
  domain: string;
  /** REST (orders/create) or GraphQL (ORDERS_CREATE) form. */
  topic: string;
  /** Sent as JSON; a string is sent as the raw body, byte for byte. */
  payload: unknown;
  /** Deliver to this URL only; without it, to every subscription of the shop for the topic. */
  url?: string;
  /** Reuse an event id to play a duplicate delivery of the same change. */
  eventId?: string;
  /** Sign with this secret instead of the shop's (to check a receiver refuses it). */
  clientSecret?: string;
  /** Replace or (with null) remove headers. */
  headers?: Record<string, string | null>;
  triggeredAt?: Date;
}

export interface ShippingRatesAnswer {
  status: number | null;
  body: unknown;
  durationMs: number;
  error?: string;
}

export interface ShopifyEmulator {
  /** Base URL of the emulator, e.g. http://127.0.0.1:54321. */
  readonly url: string;
  readonly apiVersion: string;
  /** How long reading the schema took (shared by every emulator in the process after the first). */
  readonly schemaLoad: AdminSchema['loadTimings'];
  /**
   * A fetch for @shopify/shopify-api: `setAbstractFetchFunc(emulator.fetch)` (from '@shopify/shopify-api/runtime',
   * after importing '@shopify/shopify-api/adapters/node'). It takes the library's https://{shop}/admin/api/...
   * requests and sends them to this emulator over real HTTP, the shop in a path prefix. The library's fetch is
   * process-global and is read when a client is constructed: set it before building clients, and restore
   * globalThis.fetch when done if other code in the process talks to the real Shopify.
   */
  readonly fetch: FetchFunction;
  /** http://127.0.0.1:port/shops/{domain}: the origin to use instead of https://{domain} (append /admin/api/...). */
  adminUrl(domain: string): string;
  /** http://127.0.0.1:port/shops/{domain}/admin/api/{version}/graphql.json */
  graphqlUrl(domain: string): string;
  createOrder(domain: string, input?: CreateOrderInput, options?: { webhooks?: boolean }): RestOrder;
  order(domain: string, ref: OrderRef): RestOrder | undefined;
  orders(domain: string): RestOrder[];
  markPaid(domain: string, ref: OrderRef): RestOrder;
  /** Refunds `amount` (currency units) of the order's shipping, as the admin's refund does; sends orders/updated. */
  refundShipping(domain: string, ref: OrderRef, amount: string | number): RestOrder;
  cancelOrder(
    domain: string,
    ref: OrderRef,
    options?: { reason?: string; refund?: boolean; staffNote?: string },
  ): RestOrder;
  orderSnapshot(domain: string, ref: OrderRef): OrderSnapshot;
  /** Registers a webhook subscription as webhookSubscriptionCreate would; returns its gid. */
  subscribe(domain: string, topic: string, url: string, options?: { includeFields?: string[]; name?: string }): string;
  webhookSubscriptions(domain: string): { id: string; topic: string; uri: string }[];
  /** One signed delivery to `url`. */
  deliverWebhook(input: DeliverWebhookInput & { url: string }): Promise<WebhookDeliveryResult>;
  /** One signed delivery to each subscription of the topic. */
  deliverWebhook(input: DeliverWebhookInput): Promise<WebhookDeliveryResult | WebhookDeliveryResult[]>;
  webhookDeliveries(): WebhookDeliveryRecord[];
  /** Resolves when every webhook started so far (retries included) has finished. */
  webhooksSettled(): Promise<void>;
  /** Sends Shopify's rate request to the shop's carrier service callback, signed, and returns the answer. */
  requestShippingRates(
    domain: string,
    rate: unknown,
    options?: { serviceName?: string; timeoutMs?: number },
  ): Promise<ShippingRatesAnswer>;
  graphqlCalls(): GraphqlCallRecord[];
  throttleStatus(domain: string): ThrottleStatus;
  readonly faults: { add(spec: FaultSpec): number; clear(): void; pending(): ActiveFault[] };
  /** The OAuth doors (oauth.ts). */
  readonly oauth: {
    clientId(domain: string): string;
    /** The install page: http://127.0.0.1:port/shops/{domain}/admin/oauth/authorize */
    authorizeUrl(domain: string): string;
    /** Makes `ms` pass on the token clock (also POST /_emulator/oauth/advance {"ms":…}). */
    advance(ms: number): void;
    /** Revokes one issued token: the next Admin call with it gets Shopify's 401. */
    revoke(token: string): boolean;
    /** Every call to the token endpoint (grant type, status, OAuth error): no secret in them. */
    requests(): TokenRequestRecord[];
  };
  close(): Promise<void>;
}

/** The scopes an app is granted when the shop's configuration names none. */
const DEFAULT_SCOPES = 'read_orders,write_orders,write_fulfillments,write_merchant_managed_fulfillment_orders';
const INVALID_TOKEN = '[API] Invalid API key or access token (unrecognized login or wrong password)';
const MAX_BODY_BYTES = 1_000_000;

interface ShopRuntime {
  shop: ResolvedShop;
  store: ShopStore;
  bucket: CostBucket;
  restBucket: CostBucket;
}

const optionsSchema = z.object({
  shops: z
    .array(
      z.object({
        domain: z.string().regex(/^[a-z0-9][a-z0-9.-]*$/i, 'a shop domain like dakar-mode.myshopify.com'),
        accessToken: z.string().min(1),
        clientSecret: z.string().min(1),
        clientId: z.string().min(1).optional(),
        scopes: z.string().optional(),
        currency: z.string().length(3).optional(),
        name: z.string().min(1).optional(),
        protectedCustomerData: z.boolean().optional(),
      }),
    )
    .min(1),
  apiVersion: z
    .string()
    .regex(/^(\d{4}-\d{2}|unstable)$/)
    .optional(),
  throttle: z.object({ maximumAvailable: z.number().positive(), restoreRate: z.number().positive() }).optional(),
  port: z.number().int().min(0).max(65535).optional(),
  host: z.string().optional(),
});

export async function startShopifyEmulator(options: ShopifyEmulatorOptions): Promise<ShopifyEmulator> {
  optionsSchema.parse(options);
  const apiVersion = options.apiVersion ?? DEFAULT_ADMIN_API_VERSION;
  const admin = await loadAdminSchema(apiVersion, options.schemaFile);
  const clock = options.clock ?? Date.now;
  const logger = options.logger;
  const endpoint = new GraphqlEndpoint(admin.schema, apiVersion);
  const dispatcher = new WebhookDispatcher(apiVersion, { ...DEFAULT_WEBHOOK_SETTINGS, ...options.webhooks }, logger);
  const faults = new FaultPlan();
  const calls: GraphqlCallRecord[] = [];
  const ids = new IdSequence();

  const shops = new Map<string, ShopRuntime>();
  const clientIds = new Map<string, string>();
  for (const [index, config] of options.shops.entries()) {
    const domain = config.domain.toLowerCase();
    if (shops.has(domain)) throw new Error(`shop ${domain} is configured twice`);
    const name = config.name ?? domain.split('.')[0] ?? domain;
    const shop: ResolvedShop = {
      domain,
      name,
      email: `contact@${name}.example`,
      shopId: 80_100_000_000 + index + 1,
      currency: config.currency ?? 'XOF',
      accessToken: config.accessToken,
      clientSecret: config.clientSecret,
      scopes: (config.scopes ?? DEFAULT_SCOPES).split(',').map((scope) => scope.trim()),
      protectedCustomerData: config.protectedCustomerData ?? true,
    };
    clientIds.set(domain, config.clientId ?? `emulated-${name}`);
    shops.set(domain, {
      shop,
      store: new ShopStore(shop, ids, clock),
      bucket: new CostBucket(options.throttle ?? DEFAULT_THROTTLE, clock),
      restBucket: restBucket(clock),
    });
  }

  const oauth = new OAuthServer(
    [...shops.values()].map(({ shop }) => ({
      domain: shop.domain,
      name: shop.name,
      clientId: clientIds.get(shop.domain)!,
      clientSecret: shop.clientSecret,
      scopes: shop.scopes.join(','),
    })),
    options.tokenLifetimes,
  );

  const runtime = (domain: string): ShopRuntime => {
    const found = shops.get(domain.toLowerCase());
    if (!found) throw new Error(`the Shopify emulator has no shop ${domain} (it has ${[...shops.keys()].join(', ')})`);
    return found;
  };

  const publish = (rt: ShopRuntime, events: ShopEvent[]) => {
    if (events.length > 0) dispatcher.publish(rt.shop, rt.store.webhookSubscriptions.values(), events);
  };

  const findOrder = (rt: ShopRuntime, ref: OrderRef): StoredOrder | undefined => {
    let id: number;
    if (typeof ref === 'number') id = ref;
    else if (/^\d+$/.test(ref)) id = Number(ref);
    else {
      const parsed = parseGid(ref);
      if (parsed.type !== 'Order') return undefined;
      id = parsed.id;
    }
    return rt.store.order(id);
  };

  const requireOrder = (rt: ShopRuntime, ref: OrderRef): StoredOrder => {
    const order = findOrder(rt, ref);
    if (!order) throw new Error(`order ${String(ref)} does not exist in ${rt.shop.domain}`);
    return order;
  };

  // ---- HTTP ---------------------------------------------------------------------------------------

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(text)),
      'X-Shopify-API-Version': apiVersion,
      'X-Request-Id': randomUUID(),
      ...headers,
    });
    res.end(text);
  };

  const record = (req: IncomingMessage, entry: Omit<GraphqlCallRecord, 'at' | 'apiVersion' | 'kind' | 'request'>) => {
    const request = `${req.method ?? 'GET'} ${(req.url ?? '/').replace(/^\/shops\/[^/]+/, '')}`;
    calls.push({
      at: new Date(clock()).toISOString(),
      kind: request.includes('/graphql.json') ? 'graphql' : 'rest',
      request,
      apiVersion,
      ...entry,
    });
  };

  const blank: Pick<
    GraphqlCallRecord,
    'operationType' | 'operationName' | 'rootFields' | 'query' | 'variables' | 'cost'
  > = {
    operationType: null,
    operationName: null,
    rootFields: [],
    query: null,
    variables: null,
    cost: null,
  };

  /** Version and access token, checked the same way for GraphQL and REST. False when already answered. */
  function admit(req: IncomingMessage, res: ServerResponse, rt: ShopRuntime, version: string): boolean {
    if (version !== apiVersion) {
      logger?.warn(
        { shop: rt.shop.domain, requested: version, served: apiVersion },
        'shopify emulator: API version not served',
      );
      send(res, 404, { errors: 'Not Found' });
      return false;
    }
    const token = req.headers['x-shopify-access-token'];
    if (typeof token !== 'string' || (token !== rt.shop.accessToken && !oauth.accepts(rt.shop.domain, token))) {
      const body = { errors: INVALID_TOKEN };
      record(req, { domain: rt.shop.domain, httpStatus: 401, outcome: 'unauthorized', ...blank, response: body });
      send(res, 401, body);
      return false;
    }
    return true;
  }

  function answerStatusFault(
    req: IncomingMessage,
    res: ServerResponse,
    domain: string,
    fault: FaultSpec,
    details: Partial<GraphqlCallRecord>,
  ): void {
    const status = fault.status ?? 500;
    const body = { errors: STATUS_CODES[status] ?? 'Error' };
    const headers: Record<string, string> = {};
    if (fault.retryAfterSeconds !== undefined) headers['Retry-After'] = String(fault.retryAfterSeconds);
    else if (status === 429) headers['Retry-After'] = '2.0';
    record(req, { domain, httpStatus: status, outcome: 'fault', ...blank, ...details, response: body });
    send(res, status, body, headers);
  }

  async function handleRest(
    req: IncomingMessage,
    res: ServerResponse,
    rt: ShopRuntime,
    version: string,
    path: string,
    query: URLSearchParams,
  ): Promise<void> {
    if (!admit(req, res, rt, version)) return;
    const fault = faults.take(rt.shop.domain, ['rest']);
    if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.delayMs ?? 1000));
    if (fault?.kind === 'status' || fault?.kind === 'throttle') {
      // A REST "throttle" is a 429, which is how Shopify throttles REST calls.
      answerStatusFault(req, res, rt.shop.domain, fault.kind === 'throttle' ? { ...fault, status: 429 } : fault, {
        rootFields: ['rest'],
      });
      return;
    }
    const answer = answerRest(req.method ?? 'GET', path, query, rt.store, rt.restBucket, apiVersion);
    record(req, {
      domain: rt.shop.domain,
      httpStatus: answer.status,
      outcome: answer.status === 429 ? 'throttled' : 'ok',
      ...blank,
      rootFields: ['rest'],
      response: answer.body,
    });
    send(res, answer.status, answer.body, answer.headers);
  }

  async function handleGraphql(
    req: IncomingMessage,
    res: ServerResponse,
    rt: ShopRuntime,
    version: string,
  ): Promise<void> {
    const domain = rt.shop.domain;
    if (!admit(req, res, rt, version)) return;
    if (req.method !== 'POST') {
      send(res, 405, { errors: 'Method Not Allowed' }, { Allow: 'POST' });
      return;
    }
    const raw = await readBody(req);
    const parsedBody = raw === undefined ? undefined : parseGraphqlBody(raw, req.headers['content-type']);
    if (!parsedBody) {
      const body = { errors: { query: 'Required parameter missing or invalid' } };
      record(req, { domain, httpStatus: 400, outcome: 'bad_request', ...blank, response: body });
      send(res, 400, body);
      return;
    }
    const { operation } = endpoint.describe(parsedBody);
    const rootFields = operation
      ? operation.selectionSet.selections.flatMap((s) => (s.kind === 'Field' ? [s.name.value] : []))
      : [];
    const fault = faults.take(domain, rootFields);
    if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.delayMs ?? 1000));
    if (fault?.kind === 'status') {
      answerStatusFault(req, res, domain, fault, {
        operationType: operation?.operation ?? null,
        rootFields,
        query: parsedBody.query,
        variables: parsedBody.variables ?? null,
      });
      return;
    }
    const forceThrottle = fault?.kind === 'throttle';
    const answer = await endpoint.answer(parsedBody, rt.store, rt.bucket, { forceThrottle });
    record(req, {
      domain,
      httpStatus: answer.status,
      outcome: answer.outcome,
      operationType: answer.operationType,
      operationName: answer.operationName,
      rootFields: answer.rootFields,
      query: parsedBody.query,
      variables: parsedBody.variables ?? null,
      cost: answer.cost,
      response: answer.body,
    });
    send(res, answer.status, answer.body);
    // Shopify announces changes after committing them: the caller has its answer before any webhook leaves.
    publish(rt, answer.events);
  }

  async function handleControl(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (path === '/_emulator/health' && req.method === 'GET') {
      send(res, 200, { ok: true, apiVersion, shops: [...shops.keys()] });
      return;
    }
    if (path === '/_emulator/oauth/advance' && req.method === 'POST') {
      const raw = await readBody(req);
      const parsed = z.object({ ms: z.number().min(0) }).safeParse(raw ? JSON.parse(raw.toString('utf8') || '{}') : {});
      if (!parsed.success) {
        send(res, 400, { errors: 'body must be {"ms": number}' });
        return;
      }
      oauth.advance(parsed.data.ms);
      send(res, 200, { ok: true, tokenClock: new Date(oauth.now()).toISOString() });
      return;
    }
    const match =
      /^\/_emulator\/shops\/([^/]+)\/(orders|webhook-deliveries)(?:\/([^/]+))?(?:\/(mark-paid|cancel))?$/.exec(path);
    const rt = match?.[1] ? shops.get(decodeURIComponent(match[1]).toLowerCase()) : undefined;
    if (!match || !rt) {
      send(res, 404, { errors: 'Not Found' });
      return;
    }
    const [, , collection, id, action] = match;
    try {
      if (collection === 'webhook-deliveries' && req.method === 'GET') {
        send(
          res,
          200,
          dispatcher.deliveries().filter((d) => d.domain === rt.shop.domain),
        );
      } else if (collection === 'orders' && !id && req.method === 'POST') {
        const raw = await readBody(req);
        const input: unknown = raw ? JSON.parse(raw.toString('utf8')) : {};
        send(res, 201, emulator.createOrder(rt.shop.domain, input as CreateOrderInput));
      } else if (collection === 'orders' && id && !action && req.method === 'GET') {
        const order = findOrder(rt, decodeURIComponent(id));
        if (order) send(res, 200, snapshotOf(order, rt.store.rest(order)));
        else send(res, 404, { errors: 'Not Found' });
      } else if (collection === 'orders' && id && action === 'mark-paid' && req.method === 'POST') {
        send(res, 200, emulator.markPaid(rt.shop.domain, decodeURIComponent(id)));
      } else if (collection === 'orders' && id && action === 'cancel' && req.method === 'POST') {
        const raw = await readBody(req);
        const body = z
          .object({ reason: z.string().optional(), refund: z.boolean().optional(), staffNote: z.string().optional() })
          .parse(raw && raw.length > 0 ? JSON.parse(raw.toString('utf8')) : {});
        send(res, 200, emulator.cancelOrder(rt.shop.domain, decodeURIComponent(id), body));
      } else {
        send(res, 404, { errors: 'Not Found' });
      }
    } catch (error) {
      send(res, 400, { errors: error instanceof Error ? error.message : String(error) });
    }
  }

  /**
   * Without a path prefix: the Host header (what a client calling https://{shop} sends), then the
   * X-Shopify-Shop-Domain header, then the only shop when there is just one (a client pointed at the
   * emulator's bare URL).
   */
  const shopOfRequest = (req: IncomingMessage): ShopRuntime | undefined => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const header = req.headers['x-shopify-shop-domain'];
    const named = typeof header === 'string' ? header.toLowerCase() : undefined;
    return (
      shops.get(host) ??
      (named ? shops.get(named) : undefined) ??
      (shops.size === 1 ? [...shops.values()][0] : undefined)
    );
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    let path = url.pathname;
    if (path.startsWith('/_emulator/')) {
      await handleControl(req, res, path);
      return;
    }
    let rt: ShopRuntime | undefined;
    const prefixed = /^\/shops\/([^/]+)(\/.*)$/.exec(path);
    if (prefixed?.[1] && prefixed[2]) {
      rt = shops.get(decodeURIComponent(prefixed[1]).toLowerCase());
      path = prefixed[2];
    } else {
      rt = shopOfRequest(req);
    }
    if (rt && path === '/admin/oauth/authorize' && req.method === 'GET') {
      const answer = oauth.authorize(rt.shop.domain, url.searchParams);
      if (answer.status === 302) {
        res.writeHead(302, answer.headers).end();
      } else {
        res.writeHead(answer.status, { 'Content-Type': 'text/plain; charset=utf-8' }).end(String(answer.body));
      }
      return;
    }
    if (rt && path === '/admin/oauth/access_token') {
      if (req.method !== 'POST') {
        send(res, 405, { errors: 'Method Not Allowed' }, { Allow: 'POST' });
        return;
      }
      const raw = await readBody(req);
      const body = raw === undefined ? undefined : parseTokenRequestBody(raw, req.headers['content-type']);
      const answer =
        body === undefined
          ? { status: 400, body: { error: 'invalid_request', error_description: 'The body must be JSON or a form' } }
          : oauth.token(rt.shop.domain, body);
      send(res, answer.status, answer.body, { 'Cache-Control': 'no-store' });
      return;
    }
    const admin = /^\/admin\/api\/([^/]+)(\/.+)$/.exec(path);
    if (!rt || !admin?.[1] || !admin[2]) {
      send(res, 404, { errors: 'Not Found' });
      return;
    }
    if (admin[2] === '/graphql.json') await handleGraphql(req, res, rt, admin[1]);
    else await handleRest(req, res, rt, admin[1], admin[2], url.searchParams);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger?.error({ err: error }, 'shopify emulator: request failed');
      if (!res.headersSent) send(res, 500, { errors: 'Internal Server Error' });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const base = `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;

  const emulatorFetch: FetchFunction = async (input, init) => {
    const request = new Request(input, init);
    const target = new URL(request.url);
    const domain = target.hostname.toLowerCase();
    if (!shops.has(domain)) {
      throw new TypeError(
        `fetch failed: ${domain} is not a shop of the Shopify emulator (it has ${[...shops.keys()].join(', ')})`,
      );
    }
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
    return fetch(`${base}/shops/${domain}${target.pathname}${target.search}`, {
      method: request.method,
      headers: request.headers,
      body,
      signal: request.signal,
      redirect: 'manual',
    });
  };

  let closed = false;
  const emulator: ShopifyEmulator = {
    url: base,
    apiVersion,
    schemaLoad: admin.loadTimings,
    fetch: emulatorFetch,
    adminUrl: (domain) => `${base}/shops/${runtime(domain).shop.domain}`,
    graphqlUrl: (domain) => `${base}/shops/${runtime(domain).shop.domain}/admin/api/${apiVersion}/graphql.json`,

    createOrder(domain, input = {}, createOptions = {}) {
      const rt = runtime(domain);
      const { order, events } = rt.store.createOrder(input);
      if (createOptions.webhooks !== false) publish(rt, events);
      return rt.store.rest(order);
    },
    order(domain, ref) {
      const rt = runtime(domain);
      const order = findOrder(rt, ref);
      return order ? rt.store.rest(order) : undefined;
    },
    orders(domain) {
      const rt = runtime(domain);
      return [...rt.store.orders.values()].map((order) => rt.store.rest(order));
    },
    markPaid(domain, ref) {
      const rt = runtime(domain);
      const result = rt.store.markAsPaid(requireOrder(rt, ref).id);
      if (!result.ok) throw new Error(`markPaid: ${result.userErrors.map((e) => e.message).join('; ')}`);
      publish(rt, result.events);
      return rt.store.rest(result.value);
    },
    refundShipping(domain, ref, amount) {
      const rt = runtime(domain);
      const result = rt.store.refundShipping(requireOrder(rt, ref).id, toHundredths(amount));
      if (!result.ok) throw new Error(`refundShipping: ${result.userErrors.map((e) => e.message).join('; ')}`);
      publish(rt, result.events);
      return rt.store.rest(result.value);
    },
    cancelOrder(domain, ref, cancelOptions = {}) {
      const rt = runtime(domain);
      const result = rt.store.cancel(requireOrder(rt, ref).id, {
        reason: cancelOptions.reason ?? 'CUSTOMER',
        refund: cancelOptions.refund ?? false,
        restock: true,
        staffNote: cancelOptions.staffNote ?? null,
      });
      if (!result.ok) throw new Error(`cancelOrder: ${result.userErrors.map((e) => e.message).join('; ')}`);
      publish(rt, result.events);
      return rt.store.rest(result.value);
    },
    orderSnapshot(domain, ref) {
      const rt = runtime(domain);
      const order = requireOrder(rt, ref);
      return snapshotOf(order, rt.store.rest(order));
    },
    subscribe(domain, topic, url, subscribeOptions = {}) {
      const rt = runtime(domain);
      const result = rt.store.createWebhookSubscription({
        topic: graphqlTopic(topic),
        uri: url,
        includeFields: subscribeOptions.includeFields ?? null,
        name: subscribeOptions.name ?? null,
      });
      if (!result.ok) throw new Error(`subscribe: ${result.userErrors.map((e) => e.message).join('; ')}`);
      return `gid://shopify/WebhookSubscription/${result.value.id}`;
    },
    webhookSubscriptions(domain) {
      return [...runtime(domain).store.webhookSubscriptions.values()].map((s) => ({
        id: `gid://shopify/WebhookSubscription/${s.id}`,
        topic: s.topic,
        uri: s.uri,
      }));
    },
    deliverWebhook: (async (input: DeliverWebhookInput) => {
      const rt = runtime(input.domain);
      const body = typeof input.payload === 'string' ? input.payload : JSON.stringify(input.payload);
      const eventId = input.eventId ?? randomUUID();
      const triggeredAt = (input.triggeredAt ?? new Date(clock())).getTime();
      const topic = graphqlTopic(input.topic);
      const sendTo = (url: string) =>
        dispatcher.send({
          shop: rt.shop,
          topic: restTopic(input.topic),
          body,
          url,
          eventId,
          triggeredAt,
          attempt: 1,
          ...(input.clientSecret === undefined ? {} : { clientSecret: input.clientSecret }),
          ...(input.headers === undefined ? {} : { headers: input.headers }),
        });
      if (input.url !== undefined) return sendTo(input.url);
      const targets = [...rt.store.webhookSubscriptions.values()].filter((s) => s.topic === topic).map((s) => s.uri);
      return Promise.all(targets.map(sendTo));
    }) as ShopifyEmulator['deliverWebhook'],
    webhookDeliveries: () => dispatcher.deliveries(),
    webhooksSettled: () => dispatcher.settled(),

    async requestShippingRates(domain, rate, rateOptions = {}) {
      const rt = runtime(domain);
      const services = [...rt.store.carrierServices.values()].filter(
        (s) => s.active && (rateOptions.serviceName === undefined || s.name === rateOptions.serviceName),
      );
      const service = services[0];
      if (!service)
        throw new Error(
          `requestShippingRates: ${domain} has no active carrier service${rateOptions.serviceName ? ` named ${rateOptions.serviceName}` : ''}`,
        );
      if (!isHttpUrl(service.callbackUrl))
        throw new Error(`requestShippingRates: invalid callback url ${service.callbackUrl}`);
      const body = JSON.stringify(rate);
      const started = performance.now();
      const answer = await postJson(
        service.callbackUrl,
        body,
        {
          'Content-Type': 'application/json',
          'X-Shopify-Shop-Domain': rt.shop.domain,
          'X-Shopify-Hmac-Sha256': signWebhookBody(rt.shop.clientSecret, body),
        },
        rateOptions.timeoutMs ?? 10_000,
      );
      let parsed: unknown = answer.body;
      try {
        parsed = answer.body === undefined ? undefined : (JSON.parse(answer.body) as unknown);
      } catch {
        // keep the text: a non-JSON answer is something the caller wants to see
      }
      return {
        status: answer.status,
        body: parsed,
        durationMs: Math.round(performance.now() - started),
        ...(answer.error ? { error: answer.error } : {}),
      };
    },

    graphqlCalls: () => calls.map((call) => ({ ...call })),
    throttleStatus: (domain) => runtime(domain).bucket.status(),
    faults: {
      add: (spec) => faults.add(spec),
      clear: () => faults.clear(),
      pending: () => faults.pending(),
    },
    oauth: {
      clientId: (domain) => clientIds.get(runtime(domain).shop.domain)!,
      authorizeUrl: (domain) => `${base}/shops/${runtime(domain).shop.domain}/admin/oauth/authorize`,
      advance: (ms) => oauth.advance(ms),
      revoke: (token) => oauth.revoke(token),
      requests: () => oauth.requests(),
    },
    async close() {
      if (closed) return;
      closed = true;
      await dispatcher.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  logger?.info(
    { url: base, apiVersion, shops: [...shops.keys()], schemaLoadMs: admin.loadTimings.totalMs },
    'shopify emulator listening',
  );
  return emulator;
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** JSON bodies ({query, variables, operationName}) and, as Shopify also accepts, raw application/graphql. */
function parseGraphqlBody(raw: Buffer, contentType: string | undefined): GraphqlBody | undefined {
  const text = raw.toString('utf8');
  if (contentType?.includes('application/graphql')) return text.trim() ? { query: text } : undefined;
  try {
    const parsed = graphqlBodySchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
