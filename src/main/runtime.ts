/**
 * What the web process and the worker share: Redis connections, the ledger, the queues, one dispatch
 * client per shop. Built from explicit options (the CLI maps the environment onto them; tests pass
 * their own), so nothing here reads process.env.
 */
import { Redis } from 'ioredis';
import type { ShopConfig, ShopRegistry } from '../config/shops.js';
import type { DispatchClient } from '../dispatch/client.js';
import { dispatchClientForShop } from '../dispatch/for-shop.js';
import { AliasStore } from '../ledger/alias-store.js';
import { OrderLedger } from '../ledger/order-ledger.js';
import { createQueues, type RelaisQueues } from '../jobs/queues.js';
import type { Logger } from '../log.js';
import { createShopWriter, createWeightFiller, type WeightFiller } from '../stores/index.js';
import type { ShopWriter } from '../stores/writer.js';

export interface RuntimeOptions {
  redisUrl: string;
  prefix: string;
  shops: ShopRegistry;
  logger: Logger;
  now?: () => Date;
  /** When set, every command on the producer connection fails after this long (ioredis commandTimeout): the web process sets it. */
  producerCommandTimeoutMs?: number;
}

export interface Runtime {
  options: RuntimeOptions;
  /** Producer connection: fails fast when Redis is down (enableOfflineQueue: false), for the web process. */
  producer: Redis;
  /** General-purpose connection for the ledger and locks (commands wait for a reconnect). */
  redis: Redis;
  queues: RelaisQueues;
  ledger: OrderLedger;
  aliases: AliasStore;
  now(): Date;
  dispatchClientFor(shop: ShopConfig): DispatchClient;
  /** The shop's write-back client, or undefined when none can be built for it. */
  writerFor(shop: ShopConfig): ShopWriter | undefined;
  /** Fills the weights the shop's platform leaves off its orders (WooCommerce); undefined when not needed. */
  weightsFor(shop: ShopConfig): WeightFiller | undefined;
  close(): Promise<void>;
}

export function createRuntime(options: RuntimeOptions): Runtime {
  const producer = new Redis(options.redisUrl, {
    enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000,
    ...(options.producerCommandTimeoutMs ? { commandTimeout: options.producerCommandTimeoutMs } : {}),
  });
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  // Errors surface through the commands that fail; without listeners ioredis would print them unbidden.
  producer.on('error', (error: Error) => options.logger.debug({ err: error.message }, 'producer redis connection error'));
  redis.on('error', (error: Error) => options.logger.debug({ err: error.message }, 'redis connection error'));
  const queues = createQueues(producer, options.prefix);
  // Without an 'error' listener BullMQ prints every Redis error raw on stderr (found by test/chaos): into the log instead.
  for (const queue of queues.all()) queue.on('error', (error: Error) => options.logger.debug({ err: error.message, queue: queue.name }, 'queue redis error'));
  const ledger = new OrderLedger(redis, options.prefix);
  const clients = new Map<string, DispatchClient>();
  const writers = new Map<string, ShopWriter | undefined>();
  const weightFillers = new Map<string, WeightFiller | undefined>();
  return {
    options,
    producer,
    redis,
    queues,
    ledger,
    aliases: new AliasStore(redis, options.prefix),
    now: options.now ?? (() => new Date()),
    dispatchClientFor(shop) {
      let client = clients.get(shop.id);
      if (!client) {
        client = dispatchClientForShop(shop, options.logger.child({ shop: shop.id }));
        clients.set(shop.id, client);
      }
      return client;
    },
    writerFor(shop) {
      if (!writers.has(shop.id)) writers.set(shop.id, createShopWriter(shop, { redis, prefix: options.prefix, logger: options.logger }));
      return writers.get(shop.id);
    },
    weightsFor(shop) {
      if (!weightFillers.has(shop.id)) weightFillers.set(shop.id, createWeightFiller(shop, { redis, prefix: options.prefix, logger: options.logger }));
      return weightFillers.get(shop.id);
    },
    async close() {
      await queues.close();
      await Promise.all([...clients.values()].map((c) => c.close()));
      await Promise.all([producer.quit().catch(() => producer.disconnect()), redis.quit().catch(() => redis.disconnect())]);
    },
  };
}
