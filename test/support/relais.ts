/**
 * An in-process Relais for integration tests: a private redis-server, the dispatch emulator, a shop
 * registry with one Shopify and one WooCommerce shop (secrets generated per run), the web process and
 * the worker, all over real HTTP and real Redis.
 */
import type { ShopRegistry } from '../../src/shops/shops.js';
import { loadWireProfile } from '../../src/adapters/dispatch-api/profile.js';
import type { DispatchEmulator, DispatchEmulatorOptions } from '@relais/emulators/dispatch';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { createLogger, type Logger } from '../../src/log.js';
import { startWeb, type RunningWeb, type WebOptions } from '../../src/main/web.js';
import { startWorker, type RunningWorker } from '../../src/main/worker.js';
import type { TestDatabase } from './postgres.js';
import type { TestRedis } from './redis.js';
import { SHOPIFY_DOMAIN, startBackingStack, WOO_SHOP_ID, type TestSecrets } from './stack.js';

export {
  makeSecrets,
  randomHex,
  registryDocument,
  secretEnv,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  WOO_SHOP_ID,
  type TestSecrets,
} from './stack.js';

export interface TestRelais {
  redis: TestRedis;
  /** The ledger's schema of its own, in the run's PostgreSQL. */
  db: TestDatabase;
  /** Secret references resolved for child processes: pass as their environment. */
  env: Record<string, string>;
  registryDocument: unknown;
  emulator: DispatchEmulator;
  /** The WooCommerce shop's emulator, started with the generated keys when the test gave no wooUrl. */
  woo?: WooEmulator;
  /** The Shopify shop's Admin API emulator, started with the generated token when the test gave no shopifyAdminUrl. */
  shopify?: ShopifyEmulator;
  shops: ShopRegistry;
  secrets: TestSecrets;
  web: RunningWeb;
  worker: RunningWorker;
  prefix: string;
  logger: Logger;
  /** What a web process or worker of this Relais is started with (Redis, prefix, shops, logger, the ledger's database). */
  base: {
    redisUrl: string;
    /** Set when the test runs Relais on a Redis Cluster (redisCluster option): it replaces redisUrl. */
    redisClusterNodes?: string[];
    prefix: string;
    shops: ShopRegistry;
    logger: Logger;
    databaseUrl: string;
    databaseSchema: string;
    secretKeys?: string;
  };
  /** Starts a (new) in-process worker, e.g. after stopping the first one. */
  startWorker(): Promise<RunningWorker>;
  stop(): Promise<void>;
}

export interface TestRelaisOptions {
  policy?: Record<string, unknown>;
  quoteTtlMs?: number;
  wooUrl?: string;
  /** Admin API base URL for the Shopify shop (a Shopify emulator's adminUrl(SHOPIFY_DOMAIN)). */
  shopifyAdminUrl?: string;
  lockMs?: number;
  inProcessWorker?: boolean;
  /** Secrets generated beforehand, e.g. to start a shop emulator with the same token and client secret. */
  secrets?: TestSecrets;
  /** The worker's polling fallback interval (default: the worker's own). */
  pollIntervalMs?: number;
  /** The shops' dispatch.profile (a built-in name or a file); default: the default profile. */
  dispatchProfile?: string;
  /** The dialect the dispatch emulator speaks (a built-in profile name or a file); default: the default profile. */
  emulatorProfile?: string;
  /** Sets the shops' dispatch.webhookSigningSecret (T_DISPATCH_SIGNING_SECRET), so delivery webhooks must be signed. */
  dispatchSigningSecret?: string;
  /** Gazetteer names the emulated service does not price (it quotes them at the fallback tariff). */
  unpricedNeighbourhoods?: string[];
  /** The emulated service's own priced places (a zone file: country,name,band,lat,lon,covers). */
  zoneFile?: string;
  /** The dispatch emulator's courier outcome, per shipment (default: delivered). */
  deliveryOutcome?: DispatchEmulatorOptions['deliveryOutcome'];
  /** Serves the dashboard (RELAIS_DASHBOARD_TOKEN) from the web process. */
  dashboardToken?: string;
  /** RELAIS_SECRET_KEYS of web and worker: connected shops' secrets can then be sealed and opened. */
  secretKeys?: string;
  /** Where the web process and the in-process worker log (default: silent, or TEST_LOG_LEVEL on stdout). */
  logger?: Logger;
  /** RELAIS_METRICS_TOKEN of the web process: without one its /metrics is refused. */
  metricsToken?: string;
  /** The web process's port (default: any free one), for a RELAIS_PUBLIC_URL known before it starts. */
  webPort?: number;
  /** RELAIS_PUBLIC_URL of the web process (with secretKeys, WooCommerce stores can then be connected). */
  publicUrl?: string;
  // ---- chaos suite (test/chaos): additive ----
  /** A Redis the test started itself (AOF on, a memory limit, restarted on its port); default: a private one. */
  redis?: TestRedis;
  /** Where the web process and the in-process worker reach Redis, e.g. a fault proxy in front of it; default: redis.url. */
  redisUrl?: string;
  /**
   * A Redis Cluster's nodes (test/support/redis-cluster.ts): the web process and workers use it instead of
   * `redis`, which is still started (TestRelais.redis keeps its shape) but holds nothing of Relais's.
   */
  redisClusterNodes?: string[];
  /** The key prefix; default `{<a prefix unique to the run>}`, a hash tag (every key in one slot). */
  prefix?: string;
  /** The operator's Shopify app: the web process serves the install routes (needs secretKeys). */
  shopifyApp?: WebOptions['shopifyApp'];
  /** A ledger database the test made itself (e.g. on a PostgreSQL it stops and restarts); default: a schema of its own. */
  db?: TestDatabase;
}

export async function startTestRelais(options: TestRelaisOptions = {}): Promise<TestRelais> {
  const backing = await startBackingStack({
    ...(options.redis ? { redis: options.redis } : {}),
    ...(options.db ? { db: options.db } : {}),
    ...(options.secrets ? { secrets: options.secrets } : {}),
    emulator: {
      quoteTtlMs: options.quoteTtlMs,
      ...(options.deliveryOutcome ? { deliveryOutcome: options.deliveryOutcome } : {}),
      ...(options.emulatorProfile ? { profile: loadWireProfile(options.emulatorProfile) } : {}),
      ...(options.unpricedNeighbourhoods ? { unpricedNeighbourhoods: options.unpricedNeighbourhoods } : {}),
      ...(options.zoneFile ? { zoneFile: options.zoneFile } : {}),
    },
    ...(options.dispatchSigningSecret
      ? { extraEnv: { T_DISPATCH_SIGNING_SECRET: options.dispatchSigningSecret } }
      : {}),
  });
  const { redis, db, secrets, emulator, env } = backing;
  const logger = options.logger ?? createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  // Relais reads WooCommerce products (weights) and writes orders back: without a wooUrl of its own, the
  // test's WooCommerce shop gets an emulated REST API (unknown orders and products answer 404 there).
  const woo = options.wooUrl
    ? undefined
    : await startWooEmulator({
        shops: [{ id: WOO_SHOP_ID, consumerKey: secrets.wooConsumerKey, consumerSecret: secrets.wooConsumerSecret }],
      });
  // Relais writes delivery status back into Shopify: without an adminUrl of its own, the test's Shopify shop
  // gets the Admin API emulator (an order it never created reads as null there, a write-back refused for good),
  // never the real https://{shop}.
  const shopify = options.shopifyAdminUrl
    ? undefined
    : await startShopifyEmulator({
        shops: [
          {
            domain: SHOPIFY_DOMAIN,
            accessToken: secrets.shopifyAccessToken,
            clientSecret: secrets.shopifyClientSecret,
          },
        ],
      });
  const document = backing.registryDocument({
    wooUrl: options.wooUrl ?? woo?.siteUrl(WOO_SHOP_ID),
    shopifyAdminUrl: options.shopifyAdminUrl ?? shopify?.adminUrl(SHOPIFY_DOMAIN),
    policy: options.policy,
    ...(options.dispatchProfile ? { dispatchProfile: options.dispatchProfile } : {}),
    ...(options.dispatchSigningSecret ? { dispatchSigningSecret: true } : {}),
  });
  const shops = backing.shopsFrom(document);
  const prefix = options.prefix ?? backing.prefix;
  const resolver = NeighbourhoodResolver.load();
  const base = {
    redisUrl: options.redisUrl ?? redis.url,
    ...(options.redisClusterNodes ? { redisClusterNodes: options.redisClusterNodes } : {}),
    prefix,
    shops,
    logger,
    databaseUrl: db.url,
    databaseSchema: db.schema,
    ...(options.secretKeys ? { secretKeys: options.secretKeys } : {}),
  };
  const web = await startWeb({
    ...base,
    port: options.webPort ?? 0,
    dashboardToken: options.dashboardToken,
    metricsToken: options.metricsToken,
    ...(options.shopifyApp ? { shopifyApp: options.shopifyApp } : {}),
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
  });
  const launchWorker = () =>
    startWorker({ ...base, resolver, concurrency: 4, lockMs: options.lockMs, pollIntervalMs: options.pollIntervalMs });
  const started: RunningWorker[] = [];
  const worker = options.inProcessWorker === false ? (undefined as unknown as RunningWorker) : await launchWorker();
  if (worker) started.push(worker);
  return {
    redis,
    db,
    base,
    env,
    registryDocument: document,
    emulator,
    woo,
    shopify,
    shops,
    secrets,
    web,
    worker,
    prefix,
    logger,
    async startWorker() {
      const w = await launchWorker();
      started.push(w);
      return w;
    },
    async stop() {
      await Promise.allSettled(started.map((w) => w.close()));
      await web.close().catch(() => undefined);
      await woo?.close();
      await shopify?.close();
      await backing.stop();
      // A Redis the test handed in is stopped with Relais all the same (the chaos suite relies on it).
      if (options.redis) await redis.stop();
    },
  };
}

/** Polls until `check` returns a value other than undefined/false, or fails with the last value seen. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  options: { timeoutMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${options.what ?? 'a condition'}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
