/**
 * What the web process and the worker share: Redis connections (queues, locks, caches), the PostgreSQL pool
 * behind the ledger, the queues, one dispatch client per shop. Built from explicit options (the CLI maps the environment onto them; tests pass
 * their own), so nothing here reads process.env.
 */
import type pg from 'pg';
import type { ShopConfig, ShopRegistry } from '../shops/shops.js';
import type { DispatchClient } from '../adapters/dispatch-api/client.js';
import { deliveryServiceOver, dispatchClientForShop } from '../adapters/dispatch-api/for-shop.js';
import type { DeliveryService } from '../domain/delivery.js';
import type { AliasStore } from '../ledger/alias-store.js';
import type { OrderLedger } from '../ledger/order-ledger.js';
import { createPool } from '../adapters/postgres/database.js';
import { PostgresAliasStore } from '../adapters/postgres/pg-aliases.js';
import { PostgresServiceMap } from '../adapters/postgres/pg-service-map.js';
import { CachedServiceMap } from '../ledger/service-map-cache.js';
import type { ServiceMapStore } from '../ledger/service-map.js';
import { PostgresOrderLedger } from '../adapters/postgres/pg-ledger.js';
import { PostgresOrderInsights } from '../adapters/postgres/pg-insights.js';
import type { OrderInsights } from '../ledger/order-insights.js';
import { PostgresShopSecretStore } from '../adapters/postgres/pg-shop-secrets.js';
import { PostgresShopDirectory } from '../adapters/postgres/pg-shops.js';
import { PostgresFirstContact, PostgresShopProfiles } from '../adapters/postgres/pg-first-contact.js';
import { stateNoter, type FirstContactStore, type ShopProfileStore } from '../ledger/first-contact.js';
import { followProfileAnnouncements, ShopProfiles } from '../shops/shop-profiles.js';
import { loadServedShops, type ShopDirectory } from '../shops/shop-directory.js';
import {
  announceShopsChanged,
  PerShop,
  ServedShops,
  shopsChangedChannel,
  watchShopChanges,
  type ReloadOutcome,
  type ShopsChange,
} from '../shops/served-shops.js';
import { assertWebhookTokens, type SecretSource } from '../shops/shops.js';
import type { ShopSecretStore } from '../shops/shop-secrets.js';
import { SecretBox } from '../shops/secret-box.js';
import { createQueues, type RelaisQueues } from '../orders/queues.js';
import type { Logger } from '../log.js';
import {
  configureStoredCredentials,
  forgetStoredCredentials,
  createShopWriter,
  createWeightFiller,
  createEventCompleter,
  shopsWithStoredCredentials,
  type StoreDeps,
  type OrderEventCompleter,
  type WeightFiller,
} from '../shops/platforms/index.js';
import type { ShopWriter } from '../shops/platforms/writer.js';
import { connectRedis, subscribeKept, type RedisClient, type RedisTarget } from '../redis.js';

export interface RuntimeOptions extends RedisTarget {
  /** Key prefix (RELAIS_REDIS_PREFIX); see queuePrefix in src/redis.ts for what a hash tag in it does on a cluster. */
  prefix: string;
  /** The ledger's PostgreSQL (DATABASE_URL). */
  databaseUrl: string;
  /** The schema holding Relais's tables (RELAIS_DB_SCHEMA); default `public`. */
  databaseSchema?: string;
  /** How long web and worker wait for PostgreSQL at start before giving up with a clear message; default 20 s. */
  databaseWaitMs?: number;
  shops: ShopRegistry;
  logger: Logger;
  now?: () => Date;
  /** Days a finished order's personal data is kept (RELAIS_RETENTION_DAYS); default DEFAULT_RETENTION_DAYS. */
  retentionDays?: number;
  /** How long web and worker wait for Redis at start before giving up with a clear message; default 20 s. */
  redisWaitMs?: number;
  /** When set, every command on the producer connection fails after this long (ioredis commandTimeout): the web process sets it. */
  producerCommandTimeoutMs?: number;
  /** Told each time a shop call waited for the shop's rate budget shared in Redis (the worker's metric). */
  onRateBudgetWait?: (shopId: string, ms: number) => void;
  /** RELAIS_SECRET_KEYS: required when a Shopify shop gets its token through OAuth (kept sealed in the database). */
  secretKeys?: string;
  /**
   * Serve the connected shops live (src/shops/served-shops.ts): `shops` is what was loaded at start, reloaded from
   * the database (with the registry file's shops, read once) on each announcement and every `reloadEveryMs`.
   * Needs secretKeys.
   */
  liveShops?: { fileDocument?: { shops: unknown[] }; fileSecrets?: SecretSource; reloadEveryMs?: number };
  /** Told of each reload of the live shops (the processes' relais_shop_reloads_total). */
  onShopsReload?: (outcome: ReloadOutcome) => void;
}

export interface Runtime {
  options: RuntimeOptions;
  /** Producer connection: fails fast when Redis is down (enableOfflineQueue: false), for the web process. */
  producer: RedisClient;
  /** General-purpose connection for locks, de-duplication markers and caches (commands wait for a reconnect). */
  redis: RedisClient;
  /** The ledger's connections. */
  db: pg.Pool;
  /** What the shops' clients are built with (stores/index.ts): this runtime's Redis, prefix and logger. */
  storeDeps: StoreDeps;
  queues: RelaisQueues;
  ledger: OrderLedger;
  /** The dashboard's aggregate reads of the ledger (orders by filters, the overview's figures). */
  insights: OrderInsights;
  aliases: AliasStore;
  /** Which names each delivery service prices (PostgreSQL, read through Redis). */
  serviceMap: ServiceMapStore;
  /** The shops connected through the Connect page or `relais shops import` (PostgreSQL). */
  shopDirectory: ShopDirectory;
  /** Their sealed secrets; absent without RELAIS_SECRET_KEYS (nothing can be sealed or opened then). */
  shopSecrets?: ShopSecretStore;
  /** What the delivery service showed of its dialect (refused webhooks, state names), for `relais profile learn`. */
  firstContact: FirstContactStore;
  /** The shops' stored wire profiles; the newest of a shop's is in force in every process (reloaded on announceShops). */
  shopProfiles: ShopProfileStore;
  /** The profile in force for each shop. */
  profiles: ShopProfiles;
  now(): Date;
  /** Reads the stored profiles and starts following the announced changes (shops, when live; stored profiles). */
  watchShops(): Promise<void>;
  /** Tells every process (this one too) the connected shops changed: they reload the shops they serve. */
  announceShops(): Promise<void>;
  dispatchClientFor(shop: ShopConfig): DispatchClient;
  /** The shop's delivery service (the port the use-cases call), over the shop's dispatch client. */
  deliveryFor(shop: ShopConfig): DeliveryService;
  /** The shop's write-back client, or undefined when none can be built for it. */
  writerFor(shop: ShopConfig): ShopWriter | undefined;
  /** Fills the weights the shop's platform leaves off its orders (WooCommerce); undefined when not needed. */
  weightsFor(shop: ShopConfig): WeightFiller | undefined;
  /** Reads from the shop what its order webhooks leave out (WooCommerce refunds); undefined when they carry all. */
  eventCompleterFor(shop: ShopConfig): OrderEventCompleter | undefined;
  close(): Promise<void>;
}

export function createRuntime(given: RuntimeOptions): Runtime {
  const db = createPool({ url: given.databaseUrl, schema: given.databaseSchema, logger: given.logger });
  const shopSecrets = given.secretKeys
    ? new PostgresShopSecretStore(db, SecretBox.fromSetting(given.secretKeys))
    : undefined;
  const shopDirectory = new PostgresShopDirectory(db);
  const served = liveShopsOf(given, shopDirectory, shopSecrets);
  // Everyone handed runtime.options.shops (routes, jobs, dashboard) reads the live registry when there is one.
  const options: RuntimeOptions = served ? { ...given, shops: served } : given;
  const { producer, redis, queues } = connectQueues(options);
  const ledger = new PostgresOrderLedger(db, { retentionDays: options.retentionDays });
  configureOAuthShops(options, shopSecrets);
  const firstContact = new PostgresFirstContact(db);
  const shopProfiles = new PostgresShopProfiles(db);
  const profiles = new ShopProfiles(() => shopProfiles.latest(), options.logger.child({ component: 'profiles' }));
  const { clients, dispatchClientFor, deliveries } = dispatchCaches(options, profiles, firstContact);
  const reloadProfiles = async () => {
    const changed = await profiles.reload();
    clients.forget(changed);
    deliveries.forget(changed);
  };
  const storeDeps: StoreDeps = {
    redis,
    prefix: options.prefix,
    logger: options.logger,
    ...(options.onRateBudgetWait ? { onRateBudgetWait: options.onRateBudgetWait } : {}),
  };
  const writers = new PerShop<ShopWriter | undefined>((shop) => createShopWriter(shop, storeDeps));
  const weightFillers = new PerShop<WeightFiller | undefined>((shop) => createWeightFiller(shop, storeDeps));
  const eventCompleters = new PerShop<OrderEventCompleter | undefined>((shop) => createEventCompleter(shop, storeDeps));
  served?.onChange((change) =>
    forgetChangedShops(change, [clients, deliveries, writers, weightFillers, eventCompleters], options, shopSecrets),
  );
  let watcher: { close(): Promise<void> } | undefined;
  return {
    options,
    producer,
    redis,
    db,
    storeDeps,
    queues,
    ledger,
    insights: new PostgresOrderInsights(db),
    aliases: new PostgresAliasStore(db),
    serviceMap: new CachedServiceMap(new PostgresServiceMap(db), redis, options.prefix),
    shopDirectory,
    ...(shopSecrets ? { shopSecrets } : {}),
    firstContact,
    shopProfiles,
    profiles,
    now: options.now ?? (() => new Date()),
    async watchShops() {
      if (watcher) return;
      await reloadProfiles();
      watcher = await followShopChanges(options, served, reloadProfiles);
    },
    announceShops: () => announceShopsChanged(redis, options.prefix),
    dispatchClientFor,
    deliveryFor: (shop) => deliveries.for(shop),
    writerFor: (shop) => writers.for(shop),
    weightsFor: (shop) => weightFillers.for(shop),
    eventCompleterFor: (shop) => eventCompleters.for(shop),
    async close() {
      await watcher?.close();
      // A queue still connecting when it is closed (a short CLI command that never used it) has BullMQ's connection
      // reject its pending INFO and emit 'error' after the queue stopped listening: the process then crashed with
      // exit 1 after printing its answer. Let every queue finish connecting (or fail) first.
      await Promise.all(queues.all().map((queue) => queue.waitUntilReady().catch(() => undefined)));
      await queues.close();
      await Promise.all(clients.values().map((c) => c.close()));
      await Promise.all([
        producer.quit().catch(() => producer.disconnect()),
        redis.quit().catch(() => redis.disconnect()),
        db.end().catch(() => undefined),
      ]);
    },
  };
}

/** The live registry, when the options ask for one (liveShops): reloaded from the directory and the sealed secrets. */
function liveShopsOf(
  options: RuntimeOptions,
  directory: ShopDirectory,
  secrets: ShopSecretStore | undefined,
): ServedShops | undefined {
  const live = options.liveShops;
  if (!live) return undefined;
  if (!secrets) throw new Error('serving connected shops needs RELAIS_SECRET_KEYS: their secrets are sealed with it');
  const load = async () =>
    assertWebhookTokens(
      await loadServedShops({
        ...(live.fileDocument ? { fileDocument: live.fileDocument } : {}),
        ...(live.fileSecrets ? { fileSecrets: live.fileSecrets } : {}),
        directory,
        secrets,
      }),
    );
  return new ServedShops(options.shops, load, {
    logger: options.logger.child({ component: 'served-shops' }),
    ...(options.onShopsReload ? { onReload: options.onShopsReload } : {}),
  });
}

/** The Redis connections (producer and general) and the queues over the producer, with their errors logged. */
function connectQueues(options: RuntimeOptions): { producer: RedisClient; redis: RedisClient; queues: RelaisQueues } {
  const producer = connectRedis(options, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    // The web process: a hung Redis fails each enqueue after the timeout. Not auto-pipelined: ioredis copies every
    // script defined on a connection (BullMQ's) onto each pipeline it builds, which cost a webhook more than the
    // shared writes saved; the web's own commands go over a pipelined connection of their own (src/main/web.ts).
    ...(options.producerCommandTimeoutMs ? { commandTimeout: options.producerCommandTimeoutMs } : {}),
  });
  const redis = connectRedis(options, { maxRetriesPerRequest: null });
  // Errors surface through the commands that fail; without listeners ioredis would print them unbidden.
  producer.on('error', (error: Error) =>
    options.logger.debug({ err: error.message }, 'producer redis connection error'),
  );
  redis.on('error', (error: Error) => options.logger.debug({ err: error.message }, 'redis connection error'));
  const queues = createQueues(producer, options.prefix);
  // Without an 'error' listener BullMQ prints every Redis error raw on stderr (found by test/chaos): into the log instead.
  for (const queue of queues.all())
    queue.on('error', (error: Error) =>
      options.logger.debug({ err: error.message, queue: queue.name }, 'queue redis error'),
    );
  return { producer, redis, queues };
}

/** Shops whose Shopify token came through OAuth read it sealed from the database: that needs RELAIS_SECRET_KEYS. */
function configureOAuthShops(options: RuntimeOptions, shopSecrets: ShopSecretStore | undefined): void {
  const oauthShops = shopsWithStoredCredentials(options.shops.all());
  if (oauthShops.length > 0) {
    if (!options.secretKeys) {
      throw new Error(
        `shop ${oauthShops.map((s) => s.id).join(', ')} gets its Shopify token through OAuth, which Relais keeps sealed in the database: set RELAIS_SECRET_KEYS (id:base64 of 32 random bytes; openssl rand -base64 32)`,
      );
    }
    configureStoredCredentials(oauthShops, { secrets: shopSecrets!, logger: options.logger });
  }
}

/**
 * The dispatch client and delivery service of each shop, built on first use and rebuilt when its settings or its
 * stored profile change (PerShop): its profile is resolved once, here, never per call or per webhook.
 */
function dispatchCaches(options: RuntimeOptions, profiles: ShopProfiles, firstContact: FirstContactStore) {
  const clients = new PerShop<DispatchClient>(
    (shop) =>
      dispatchClientForShop(shop, options.logger.child({ shop: shop.id }), undefined, profiles.profileFor(shop)),
    (client) => void client.close().catch(() => undefined),
  );
  const dispatchClientFor = (shop: ShopConfig): DispatchClient => clients.for(shop);
  const noteStates = stateNoter(firstContact, options.logger, () => options.now?.() ?? new Date());
  const deliveries = new PerShop<DeliveryService>((shop) =>
    deliveryServiceOver(dispatchClientFor(shop), shop, noteStates(shop.id)),
  );
  return { clients, dispatchClientFor, deliveries };
}

/** A changed or removed shop's cached clients are dropped (rebuilt on next use) and its token source made again. */
function forgetChangedShops(
  change: ShopsChange,
  caches: { forget(shopIds: string[]): void }[],
  options: RuntimeOptions,
  shopSecrets: ShopSecretStore | undefined,
): void {
  const gone = [...change.removed, ...change.changed.map((shop) => shop.id)];
  for (const cache of caches) cache.forget(gone);
  // A token source reads the shop's stored tokens: a removed shop's is dropped, a new or changed one's made.
  forgetStoredCredentials(gone);
  configureStoredCredentials(shopsWithStoredCredentials([...change.added, ...change.changed]), {
    secrets: shopSecrets!,
    logger: options.logger,
  });
}

/**
 * Follows the announced changes on a subscriber connection of its own: stored profiles always, and the connected
 * shops when they are served live. The returned handle stops following.
 */
async function followShopChanges(
  options: RuntimeOptions,
  served: ServedShops | undefined,
  reloadProfiles: () => Promise<void>,
): Promise<{ close(): Promise<void> }> {
  // Subscribed again by Relais on each reconnection, its failure handled (subscribeKept), not by ioredis.
  const subscriber = connectRedis(options, { maxRetriesPerRequest: null, autoResubscribe: false });
  subscriber.on('error', (error: Error) =>
    options.logger.debug({ err: error.message }, 'shop changes redis connection error'),
  );
  // A stored profile is announced as a change of the shops: every process reads the stored profiles again.
  const following = followProfileAnnouncements(subscriber, options.prefix, reloadProfiles);
  const handle = served
    ? watchShopChanges({
        served,
        subscriber,
        prefix: options.prefix,
        ...(options.liveShops?.reloadEveryMs === undefined ? {} : { everyMs: options.liveShops.reloadEveryMs }),
        logger: options.logger,
      })
    : following;
  await subscribeKept(subscriber, shopsChangedChannel(options.prefix), (error) =>
    options.logger.debug(
      { err: error.message },
      'could not subscribe to shop changes again; tried at the next reconnection',
    ),
  );
  return handle;
}
