/**
 * The services every integration test and bench stands Relais on, built one way: a Redis (a private
 * redis-server, or REDIS_URL), the ledger's schema of its own in PostgreSQL, secrets generated for the run, and
 * the dispatch emulator with an organisation whose key is the run's dispatch key. On top of it, the test
 * harness's shop registry (test/support/relais.ts registryDocument: one Shopify, one WooCommerce shop) points at
 * the emulator.
 *
 * Built on it: startTestRelais (test/support/relais.ts, and through it the pipeline and chaos suites), the
 * checkout stack (test/checkout/stack.ts) and the benches' stack (bench/lib/stack.ts). What a caller hands in
 * (a Redis, a database) is its own to stop; what the builder started, `stop` stops.
 */
import type { EmulatedOrganisation } from '@relais/emulators/dispatch';
import { startDispatchEmulator, type DispatchEmulator, type DispatchEmulatorOptions } from '@relais/emulators/dispatch';
import { buildShopRegistry, type ShopRegistry } from '../../src/shops/shops.js';
import { startTestDatabase, type TestDatabase } from './postgres.js';
import { startRedis, type TestRedis } from './redis.js';
import { randomBytes } from 'node:crypto';

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

/** The organisation Relais's shops belong to at the dispatch emulator. */
export const RELAIS_ORG = 'org_relais';

export type RegistryOptions = Omit<Parameters<typeof registryDocument>[0], 'dispatchBaseUrl' | 'trackingUrl'>;

export interface BackingStackOptions {
  /** A Redis the caller started (and stops); default: startRedis() with `redisArgs`. */
  redis?: TestRedis;
  /** Arguments of a private redis-server (never REDIS_URL then), e.g. a maxmemory policy. */
  redisArgs?: string[];
  /** A ledger database the caller made (and stops); default: a schema of its own on `databaseUrl` or the run's. */
  db?: TestDatabase;
  databaseUrl?: string;
  secrets?: TestSecrets;
  /** The emulator's settings (its organisations: Relais's, then `otherOrganisations`). */
  emulator?: Omit<DispatchEmulatorOptions, 'organisations'>;
  otherOrganisations?: EmulatedOrganisation[];
  /** Environment beside the secrets' and the database's (other secret references of the registry). */
  extraEnv?: Record<string, string>;
}

export interface BackingStack {
  redis: TestRedis;
  db: TestDatabase;
  secrets: TestSecrets;
  emulator: DispatchEmulator;
  /** The registry's secret references resolved, and the ledger's database: the environment of a child process. */
  env: Record<string, string>;
  /** A key prefix of the run's own, a hash tag (every key in one slot). */
  prefix: string;
  /** The harness's two shops, their dispatch settings pointing at the emulator. */
  registryDocument(options?: RegistryOptions): ReturnType<typeof registryDocument>;
  /** The shop registry of a document, its secret references read from `env`. */
  shopsFrom(document: unknown): ShopRegistry;
  /** Stops the emulator, and the Redis and database the builder started. */
  stop(): Promise<void>;
}

export async function startBackingStack(options: BackingStackOptions = {}): Promise<BackingStack> {
  const redis = options.redis ?? (await startRedis(options.redisArgs ? { extraArgs: options.redisArgs } : {}));
  const db = options.db ?? (await startTestDatabase(options.databaseUrl ? { url: options.databaseUrl } : {}));
  const secrets = options.secrets ?? makeSecrets();
  const emulator = await startDispatchEmulator({
    ...options.emulator,
    organisations: [
      { id: RELAIS_ORG, name: 'Relais test org', apiKeys: [secrets.dispatchApiKey] },
      ...(options.otherOrganisations ?? []),
    ],
  });
  const env: Record<string, string> = { ...secretEnv(secrets), ...db.env, ...options.extraEnv };
  return {
    redis,
    db,
    secrets,
    emulator,
    env,
    prefix: `{${redis.prefix}}`,
    registryDocument: (registry = {}) =>
      registryDocument({ ...registry, dispatchBaseUrl: emulator.baseUrl, trackingUrl: emulator.trackingUrl }),
    shopsFrom: (document) => buildShopRegistry(document, (ref) => ('env' in ref ? env[ref.env] : undefined)),
    async stop() {
      await emulator.close();
      if (!options.redis) await redis.stop();
      if (!options.db) await db.stop();
    },
  };
}
