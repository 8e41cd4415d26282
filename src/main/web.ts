/**
 * The web process: the Express app on a port, closed gracefully (in-flight requests finish, then Redis closes).
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import { dashboardDepsFor, type DashboardWiring } from '../dashboard/wiring.js';
import { createApp } from '../http/app.js';
import { unreadySince } from '../domain/shipment-status.js';
import { RelaisMetrics } from '../observability/metrics.js';
import {
  createShopifyConnect,
  RedisWooConnectStates,
  WooConnect,
  WooConnectError,
  type ShopifyAppSettings,
  type ShopifyConnect,
} from '../shops/platforms/index.js';
import { createRuntime, type Runtime, type RuntimeOptions } from './runtime.js';
import { waitForLedger, waitForRedis } from './wait-for-services.js';
import { connectWebRedis, WEB_REDIS_COMMAND_TIMEOUT_MS } from './web-redis.js';
import type { RedisClient } from '../redis.js';

export interface WebOptions extends RuntimeOptions {
  host?: string;
  port?: number;
  /** GET /metrics requires `Authorization: Bearer <token>` (RELAIS_METRICS_TOKEN); unset, /metrics is refused. */
  metricsToken?: string;
  /** How long close() lets in-flight requests finish before cutting their connections. Default 25 s. */
  shutdownGraceMs?: number;
  /** RELAIS_DASHBOARD_TOKEN: serves the dashboard at /dashboard. Unset: the dashboard only says how to enable it. */
  dashboardToken?: string;
  /** The dashboard's optional extras (resolver, reconciliation summaries); the token above turns it on. */
  dashboard?: Omit<DashboardWiring, 'token'>;
  /** TRUST_PROXY: whose X-Forwarded-For to believe for the client's address (see src/http/app.ts). */
  trustProxy?: string;
  /**
   * The operator's Shopify app (SHOPIFY_API_KEY, SHOPIFY_API_SECRET, RELAIS_PUBLIC_URL): serves the install routes
   * and the Connect page's "Connect a Shopify shop". Needs RELAIS_SECRET_KEYS (the tokens are stored sealed).
   */
  shopifyApp?: ShopifyAppSettings;
  /** RELAIS_PUBLIC_URL: with RELAIS_SECRET_KEYS, WooCommerce stores can be connected (their callback is under it). */
  publicUrl?: string;
  /** Slow clients: how long a whole request (headers and body), its headers, and an idle keep-alive socket may take. */
  timeouts?: Partial<HttpTimeouts>;
}

export interface HttpTimeouts {
  /** A request whose headers and body have not all arrived by then is answered 408 and closed. */
  requestMs: number;
  headersMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number;
}

/**
 * Shopify gives up on a webhook after 5 s and WooCommerce after a few more: a body still trickling in after
 * 15 s is a slow-loris, not a shop. Keep-alive stays above common load balancers' idle timeouts (60 s on
 * AWS ALB is the exception: raise it there).
 */
export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { requestMs: 15_000, headersMs: 10_000, keepAliveMs: 65_000 };

export interface RunningWeb {
  runtime: Runtime;
  url: string;
  server: Server;
  /** This process's metrics (served on GET /metrics). */
  metrics: RelaisMetrics;
  close(): Promise<void>;
}

/** Runs after startWeb made sure RELAIS_SECRET_KEYS is set, so the runtime has its secret store. */
function shopifyConnectFor(runtime: Runtime, app: ShopifyAppSettings): ShopifyConnect {
  return createShopifyConnect(app, {
    redis: runtime.producer,
    prefix: runtime.options.prefix,
    directory: runtime.shopDirectory,
    secrets: runtime.shopSecrets!,
    servedShops: () => runtime.options.shops.all(),
    logger: runtime.options.logger,
  });
}

/** Under Kubernetes' default 30 s between SIGTERM and SIGKILL, with room to close Redis. */
const DEFAULT_SHUTDOWN_GRACE_MS = 25_000;

export async function startWeb(options: WebOptions): Promise<RunningWeb> {
  if (options.shopifyApp && !options.secretKeys)
    throw new Error(
      "a Shopify app is configured (SHOPIFY_API_KEY), but installed shops' tokens are kept sealed in the database: set RELAIS_SECRET_KEYS (id:base64 of 32 random bytes; openssl rand -base64 32)",
    );
  const metrics = new RelaisMetrics();
  const runtime = createRuntime({
    ...options,
    producerCommandTimeoutMs: options.producerCommandTimeoutMs ?? WEB_REDIS_COMMAND_TIMEOUT_MS,
    onShopsReload: (outcome) => metrics.shopsReloaded(outcome),
  });
  const redis = await readyToServe(runtime);
  // The live registry when connected shops are served live (src/shops/served-shops.ts), else the one given.
  const shops = runtime.options.shops;
  // Queue depths (relais_queue_jobs) are the worker's to report: both reporting them counted every job twice.
  // The watchdog figure: shipments with no recorded markReady past the bound (the dashboard's held page lists them).
  metrics.watchUnready(() =>
    runtime.ledger.countUnready(
      unreadySince(
        runtime.now(),
        shops.all().map((s) => s.policy.unreadyAlertMinutes),
      ),
    ),
  );
  let shuttingDown = false;
  const shopifyConnect = options.shopifyApp ? shopifyConnectFor(runtime, options.shopifyApp) : undefined;
  const wooConnect = wooConnectFor(runtime, options);
  const dashboard: Omit<DashboardWiring, 'token'> = {
    announceShops: () => runtime.announceShops(),
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
    ...(wooConnect ? { beginWooCommerce: (input) => beginWooConnection(wooConnect, input) } : {}),
    ...(shopifyConnect ? { beginShopify: (input) => shopifyConnect.beginFromDashboard(input) } : {}),
    ...options.dashboard,
  };
  const app = createApp({
    shops,
    deliveryFor: (shop) => runtime.deliveryFor(shop),
    samples: runtime.firstContact,
    queues: runtime.queues,
    redis,
    prefix: options.prefix,
    logger: options.logger,
    now: runtime.now,
    aliases: runtime.aliases,
    serviceMap: runtime.serviceMap,
    database: runtime.db,
    metrics,
    metricsToken: options.metricsToken,
    shuttingDown: () => shuttingDown,
    trustProxy: options.trustProxy,
    dashboard: options.dashboardToken
      ? dashboardDepsFor(runtime, { ...dashboard, token: options.dashboardToken })
      : undefined,
    ...(shopifyConnect ? { shopifyConnect } : {}),
    ...(wooConnect ? { wooConnect } : {}),
  });
  const host = options.host ?? '127.0.0.1';
  const server = httpServerFor(app, { ...DEFAULT_HTTP_TIMEOUTS, ...options.timeouts });
  await listen(server, options.port ?? 0, host);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${host}:${String(port)}`;
  options.logger.info({ url }, 'web process listening');
  return {
    runtime,
    url,
    server,
    metrics,
    async close() {
      // Stop accepting, let in-flight requests (a webhook being read, verified, enqueued) finish, then close Redis:
      // an event is answered 200 only once stored, so nothing acknowledged is lost.
      shuttingDown = true;
      await closeGracefully(server, options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS, options.logger);
      await Promise.all([runtime.close(), redis.quit().catch(() => redis.disconnect())]);
    },
  };
}

/**
 * Waits for Redis, the ledger and the queues (the producer connection), follows the shops' changes, then opens the
 * web's own Redis connection (its routes' commands: src/main/web-redis.ts).
 */
async function readyToServe(runtime: Runtime): Promise<RedisClient> {
  await waitForRedis(runtime);
  await waitForLedger(runtime);
  await Promise.all(runtime.queues.all().map((q) => q.waitUntilReady()));
  await runtime.watchShops();
  return connectWebRedis(runtime.options);
}

/** Slow clients are cut off by the timeouts (see DEFAULT_HTTP_TIMEOUTS). */
function httpServerFor(app: RequestListener, timeouts: HttpTimeouts): Server {
  return createServer(
    {
      requestTimeout: timeouts.requestMs,
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      keepAliveTimeout: timeouts.keepAliveMs,
      // Node looks for requests past their timeout on this interval (30 s by default, longer than the timeouts).
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(timeouts.requestMs / 4))),
    },
    app,
  );
}

/** Resolves once the server listens; a port already taken rejects instead of crashing the process. */
async function listen(server: Server, port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Stops accepting and lets in-flight requests finish; those still running after the grace period are cut. */
async function closeGracefully(server: Server, graceMs: number, logger: WebOptions['logger']): Promise<void> {
  await new Promise<void>((resolve) => {
    const force = setTimeout(() => {
      logger.warn('requests still in flight after the shutdown grace period: closing their connections');
      server.closeAllConnections();
    }, graceMs);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** Connecting WooCommerce stores, when their keys can be sealed and a store can reach Relais's callback. */
function wooConnectFor(runtime: Runtime, options: WebOptions): WooConnect | undefined {
  if (!options.publicUrl || !runtime.shopSecrets) return undefined;
  try {
    return new WooConnect({
      publicUrl: options.publicUrl,
      states: new RedisWooConnectStates(runtime.redis, options.prefix),
      secrets: runtime.shopSecrets,
      directory: runtime.shopDirectory,
      logger: options.logger.child({ component: 'woo-connect' }),
      announce: () => runtime.announceShops(),
    });
  } catch (error) {
    // An http RELAIS_PUBLIC_URL off loopback: WooCommerce would refuse the callback, so the way in stays closed.
    options.logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'WooCommerce connecting is off',
    );
    return undefined;
  }
}

/** A connection begun, or the refusal the operator reads on the Connect page (never a 500 for a taken shop id). */
async function beginWooConnection(
  connect: WooConnect,
  input: { storeUrl: string; shopId: string; binding: string },
): Promise<{ url: string } | { refused: string }> {
  try {
    return { url: (await connect.begin(input)).url };
  } catch (error) {
    if (error instanceof WooConnectError) return { refused: error.message };
    throw error;
  }
}
