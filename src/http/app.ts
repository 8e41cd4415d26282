/**
 * The web process's Express application: shop webhooks, health (/healthz, /readyz), metrics (/metrics).
 * Bodies are read raw (signatures are computed over the exact bytes) and bounded; every error answers JSON,
 * never an HTML stack trace.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { randomUUID } from 'node:crypto';
import { logContext, type Logger } from '../log.js';
import { checkoutRoutes } from '../checkout/routes.js';
import type { ShopConfig } from '../shops/shops.js';
import type { DeliveryService } from '../domain/delivery.js';
import type { ServiceMapStore } from '../ledger/service-map.js';
import type { AliasStore } from '../ledger/alias-store.js';
import type { FirstContactStore } from '../ledger/first-contact.js';
import { dashboardRoutes, type DashboardDeps } from '../dashboard/index.js';
import { dispatchWebhookRoutes } from './routes/dispatch-webhooks.js';
import { shopifyConnectRoutes } from './routes/shopify-connect.js';
import { webhookRoutes, type WebhookDeps } from './routes/webhooks.js';
import { wooConnectRoutes, type WooConnectRouteDeps } from './routes/woo-connect.js';
import { isOrderTopic, type ShopifyConnect } from '../shops/platforms/index.js';
import type { ShopEventJob } from '../orders/queues.js';
import {
  checkReadiness,
  databaseProbe,
  queuesProbe,
  readinessBody,
  redisProbe,
  writeMetrics,
} from '../observability/health.js';
import { webhookAckTimer, type RelaisMetrics } from '../observability/metrics.js';

export const MAX_BODY_BYTES = 512 * 1024;
/** A proxy's request id kept as ours: a plain token. */
const REQUEST_ID = /^[\w.:-]{1,64}$/;
const noop = (): void => undefined;

/**
 * The body parser, behind the ack timer when metrics are kept: the timer sits before it so reading a slow body counts
 * too. The two are one layer: each layer mounted on a path rewrites the request's URL and restores it, on every
 * webhook. The timer calls its `next` at once, before returning, so the parser follows it without a closure per
 * webhook.
 */
function webhookIntake(metrics: RelaisMetrics | undefined): express.RequestHandler {
  const raw = express.raw({ type: () => true, limit: MAX_BODY_BYTES });
  if (!metrics) return raw;
  const timer = webhookAckTimer(metrics);
  return (req, res, next) => {
    timer(req, res, noop);
    raw(req, res, next);
  };
}

/**
 * A request id on the answer (X-Request-Id) and on every log line the request causes; a proxy's own id is kept when
 * it is a plain token. Entered after the body is read, so the route handlers run inside the context.
 */
function requestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', id);
  logContext.run({ requestId: id }, next);
}

export interface AppDeps extends WebhookDeps {
  logger: Logger;
  /** The shop's delivery service (built once per shop as it is loaded): it reads the shop's delivery webhooks. */
  deliveryFor(shop: ShopConfig): DeliveryService;
  /** Where refused delivery webhooks are kept as samples (the ledger's database). */
  samples?: Pick<FirstContactStore, 'keepWebhookSample'>;
  /** The operators' run-time neighbourhood aliases, read when pricing a checkout (the ledger's database). */
  aliases: Pick<AliasStore, 'list'>;
  /** Where a name priced at the fallback at checkout is recorded, for the dispatch path (the ledger's database). */
  serviceMap?: Pick<ServiceMapStore, 'record'>;
  /**
   * The ledger's database, reported by /readyz. Not required for readiness: webhooks are taken into Redis while it
   * is away (the worker, which needs it, answers 503 then).
   */
  database?: { query(sql: string): Promise<unknown> };
  // ---- operations (src/observability); optional, so tools and tests may build the app without them ----
  /** Served on GET /metrics; webhook answers are timed and accepted order events counted. */
  metrics?: RelaisMetrics;
  /** GET /metrics requires `Authorization: Bearer <token>`; without a token it is refused (401 saying how to set one). */
  metricsToken?: string;
  /** True once SIGTERM arrived: /readyz answers 503 so load balancers stop sending new work. */
  shuttingDown?(): boolean;
  /** The operator dashboard (src/dashboard). Absent: /dashboard only says how to enable it (RELAIS_DASHBOARD_TOKEN). */
  dashboard?: DashboardDeps;
  /**
   * TRUST_PROXY: which reverse proxies' X-Forwarded-For to believe (Express 'trust proxy': a hop count, or
   * addresses/subnets such as "loopback, 10.0.0.0/8"). Unset: none, and the client is the socket's address,
   * so nobody can pick their own address by sending the header.
   */
  trustProxy?: string;
  /**
   * The Shopify app install (/connect/shopify/install and /callback), when the operator configured a Shopify app
   * (SHOPIFY_API_KEY, SHOPIFY_API_SECRET). Absent: those paths do not exist (404).
   */
  shopifyConnect?: ShopifyConnect;
  /** Connecting WooCommerce stores (/connect/woocommerce/…); absent without RELAIS_PUBLIC_URL and RELAIS_SECRET_KEYS. */
  wooConnect?: WooConnectRouteDeps['connect'];
}

/** TRUST_PROXY as Express takes it: a number of hops, true/false, or a list of addresses and subnets. */
export function trustProxySetting(value: string): number | boolean | string {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  if (trimmed === 'true' || trimmed === 'false') return trimmed === 'true';
  return trimmed;
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // req.ip (the dashboard's login throttle keys on it) is the client behind the configured proxies only.
  if (deps.trustProxy !== undefined) app.set('trust proxy', trustProxySetting(deps.trustProxy));
  const { metrics } = deps;
  // While draining after SIGTERM, answers carry `Connection: close` so keep-alive clients open a new socket elsewhere.
  if (deps.shuttingDown) {
    const draining = deps.shuttingDown;
    app.use((_req, res, next) => {
      if (draining()) res.setHeader('Connection', 'close');
      next();
    });
  }
  app.use('/webhooks', webhookIntake(metrics));
  app.use(requestId);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Ready when Redis answers PING and the queues answer, each within a short bound; 503 with the reasons otherwise.
  app.get('/readyz', async (_req, res) => {
    const probes = [
      redisProbe(deps.redis),
      queuesProbe(deps.queues.all()),
      ...(deps.database ? [databaseProbe(deps.database, { required: false })] : []),
    ];
    const readiness = await checkReadiness(probes, { shuttingDown: deps.shuttingDown?.() });
    const { status, body } = readinessBody(readiness);
    res.status(status).json(body);
  });
  if (metrics) {
    app.get('/metrics', async (req, res) => {
      await writeMetrics(metrics, req, res, deps.metricsToken);
    });
  }

  const countReceived = metrics
    ? (job: ShopEventJob) => {
        if (isOrderTopic(job.platform, job.topic)) metrics.orderReceived(job.shopId, job.platform);
        deps.onEnqueued?.(job);
      }
    : deps.onEnqueued;
  // On the app itself, not a router of their own: one router less to walk on every shop webhook.
  webhookRoutes({ ...deps, onEnqueued: countReceived }, app);
  app.use(dispatchWebhookRoutes(deps));
  app.use(checkoutRoutes(deps));
  if (deps.wooConnect) app.use(wooConnectRoutes({ connect: deps.wooConnect, logger: deps.logger }));
  // The operator dashboard: its own auth, HTML pages and bull-board under /dashboard (src/dashboard/router.ts).
  app.use('/dashboard', dashboardRoutes(deps.dashboard));
  if (deps.shopifyConnect) app.use(shopifyConnectRoutes(deps.shopifyConnect, deps.logger));

  app.use((_req: Request, res: Response) => {
    res.status(404).json({ error: 'not_found' });
  });
  app.use((error: Error & { status?: number; type?: string }, _req: Request, res: Response, _next: NextFunction) => {
    if (error.type === 'entity.too.large') {
      res.status(413).json({ error: 'body_too_large', message: `bodies are limited to ${MAX_BODY_BYTES} bytes` });
      return;
    }
    const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status === 500) deps.logger.error({ err: error.message }, 'unhandled error in the web process');
    res.status(status).json({
      error: status === 500 ? 'internal_error' : 'bad_request',
      message: status === 500 ? 'internal error' : error.message,
    });
  });
  return app;
}
