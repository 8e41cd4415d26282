/**
 * An in-process Relais for integration tests: a private redis-server, the dispatch emulator, a shop
 * registry with one Shopify and one WooCommerce shop (secrets generated per run), the web process and
 * the worker, all over real HTTP and real Redis.
 */
import { randomBytes } from 'node:crypto';
import { buildShopRegistry, type ShopRegistry } from '../../src/config/shops.js';
import { loadWireProfile } from '../../src/dispatch/profile.js';
import { startDispatchEmulator, type DispatchEmulator, type DispatchEmulatorOptions } from '@relais/emulators/dispatch';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { createLogger, type Logger } from '../../src/log.js';
import { startWeb, type RunningWeb, type WebOptions } from '../../src/main/web.js';
import { startWorker, type RunningWorker } from '../../src/main/worker.js';
import { startTestDatabase, type TestDatabase } from './postgres.js';
import { startRedis, type TestRedis } from './redis.js';

export const SHOPIFY_SHOP_ID = 'dakar-mode';
export const SHOPIFY_DOMAIN = 'dakar-mode.myshopify.com';
export const WOO_SHOP_ID = 'abidjan-tech';

export interface TestSecrets {
  shopifyClientSecret: string;
  shopifyAccessToken: string;
  wooWebhookSecret: string;
  wooConsumerKey: string;
  wooConsumerSecret: string;
  dispatchApiKey: string;
  dispatchWebhookToken: string;
}

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

export function randomHex(bytes = 16): string {
  return randomBytes(bytes).toString('hex');
}

export function makeSecrets(): TestSecrets {
  return {
    shopifyClientSecret: randomHex(),
    shopifyAccessToken: `shpat_test_${randomHex(8)}`,
    wooWebhookSecret: randomHex(),
    wooConsumerKey: `ck_test_${randomHex(8)}`,
    wooConsumerSecret: `cs_test_${randomHex(8)}`,
    dispatchApiKey: `pk_live_${randomHex()}`,
    dispatchWebhookToken: randomHex(),
  };
}

export function registryDocument(options: {
  dispatchBaseUrl: string;
  trackingUrl?: string;
  wooUrl?: string;
  shopifyAdminUrl?: string;
  policy?: Record<string, unknown>;
  dispatchProfile?: string;
  /** Reference T_DISPATCH_SIGNING_SECRET as dispatch.webhookSigningSecret. */
  dispatchSigningSecret?: boolean;
}) {
  const dispatch = {
    ...(options.dispatchProfile ? { profile: options.dispatchProfile } : {}),
    ...(options.dispatchSigningSecret ? { webhookSigningSecret: { env: 'T_DISPATCH_SIGNING_SECRET' } } : {}),
    apiKey: { env: 'T_DISPATCH_API_KEY' },
    baseUrl: options.dispatchBaseUrl,
    ...(options.trackingUrl ? { trackingUrl: options.trackingUrl } : {}),
    webhookToken: { env: 'T_DISPATCH_WEBHOOK_TOKEN' },
    timeoutMs: 2_000,
  };
  return {
    shops: [
      {
        id: SHOPIFY_SHOP_ID,
        name: 'Dakar Mode',
        platform: 'shopify',
        country: 'SN',
        shopify: {
          domain: SHOPIFY_DOMAIN,
          accessToken: { env: 'T_SHOPIFY_ACCESS_TOKEN' },
          webhookSecret: { env: 'T_SHOPIFY_CLIENT_SECRET' },
          ...(options.shopifyAdminUrl ? { adminUrl: options.shopifyAdminUrl } : {}),
        },
        dispatch,
        pickup: {
          neighbourhood: 'Plateau',
          address: '12 avenue Léopold Sédar Senghor',
          coords: { lat: 14.6681, lng: -17.4322 },
          contactName: 'Awa Ndiaye',
          contactPhone: '+221770000001',
        },
        policy: { ...(options.policy ?? {}) },
      },
      {
        id: WOO_SHOP_ID,
        name: 'Abidjan Tech',
        platform: 'woocommerce',
        country: 'CI',
        woocommerce: {
          url: options.wooUrl ?? 'http://127.0.0.1:9/shops/abidjan-tech',
          consumerKey: { env: 'T_WOO_CONSUMER_KEY' },
          consumerSecret: { env: 'T_WOO_CONSUMER_SECRET' },
          webhookSecret: { env: 'T_WOO_WEBHOOK_SECRET' },
        },
        dispatch,
        pickup: {
          neighbourhood: 'Marcory',
          address: 'Rue de la Paix, zone 4',
          contactName: 'Koffi Yao',
          contactPhone: '+2250700000001',
        },
        policy: { ...(options.policy ?? {}) },
      },
    ],
  };
}

export function secretEnv(secrets: TestSecrets): Record<string, string> {
  return {
    T_DISPATCH_API_KEY: secrets.dispatchApiKey,
    T_DISPATCH_WEBHOOK_TOKEN: secrets.dispatchWebhookToken,
    T_SHOPIFY_ACCESS_TOKEN: secrets.shopifyAccessToken,
    T_SHOPIFY_CLIENT_SECRET: secrets.shopifyClientSecret,
    T_WOO_CONSUMER_KEY: secrets.wooConsumerKey,
    T_WOO_CONSUMER_SECRET: secrets.wooConsumerSecret,
    T_WOO_WEBHOOK_SECRET: secrets.wooWebhookSecret,
  };
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
  const redis = options.redis ?? (await startRedis());
  const db = options.db ?? (await startTestDatabase());
  const secrets = options.secrets ?? makeSecrets();
  const logger = options.logger ?? createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const emulator = await startDispatchEmulator({
    organisations: [{ id: 'org_relais', name: 'Relais test org', apiKeys: [secrets.dispatchApiKey] }],
    quoteTtlMs: options.quoteTtlMs,
    ...(options.deliveryOutcome ? { deliveryOutcome: options.deliveryOutcome } : {}),
    ...(options.emulatorProfile ? { profile: loadWireProfile(options.emulatorProfile) } : {}),
    ...(options.unpricedNeighbourhoods ? { unpricedNeighbourhoods: options.unpricedNeighbourhoods } : {}),
    ...(options.zoneFile ? { zoneFile: options.zoneFile } : {}),
  });
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
  const env: Record<string, string> = {
    ...secretEnv(secrets),
    ...db.env,
    ...(options.dispatchSigningSecret ? { T_DISPATCH_SIGNING_SECRET: options.dispatchSigningSecret } : {}),
  };
  const document = registryDocument({
    dispatchBaseUrl: emulator.baseUrl,
    trackingUrl: emulator.trackingUrl,
    wooUrl: options.wooUrl ?? woo?.siteUrl(WOO_SHOP_ID),
    shopifyAdminUrl: options.shopifyAdminUrl ?? shopify?.adminUrl(SHOPIFY_DOMAIN),
    policy: options.policy,
    ...(options.dispatchProfile ? { dispatchProfile: options.dispatchProfile } : {}),
    ...(options.dispatchSigningSecret ? { dispatchSigningSecret: true } : {}),
  });
  const shops = buildShopRegistry(document, (ref) => ('env' in ref ? env[ref.env] : undefined));
  const prefix = options.prefix ?? `{${redis.prefix}}`;
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
      await emulator.close();
      await woo?.close();
      await shopify?.close();
      await redis.stop();
      if (!options.db) await db.stop();
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
