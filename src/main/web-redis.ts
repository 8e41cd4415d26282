/**
 * The web process's own Redis connection, for the commands its routes send themselves: webhook de-duplication
 * markers, checkout caches, the readiness probe. Enqueueing goes over the runtime's producer connection (BullMQ's).
 *
 * Why two: this one is auto-pipelined (the commands of concurrent requests leave in shared writes), and ioredis
 * copies every script defined on a connection onto each pipeline it builds there. BullMQ defines about fifty on
 * the connection it uses, so pipelining that one cost each webhook more than the shared writes saved (the receiver's
 * CPU profile, bench/receiver.bench.ts --profile). Here no script is defined (src/orders/redis-script.ts runs its
 * scripts by EVALSHA), so a pipeline is cheap.
 *
 * Like the producer it fails fast: no offline queue, one retry, and each command fails after the web's command
 * timeout, so a hung Redis ends the wait of a batch stuck behind another (src/http/redis-deadline.ts bounds the whole).
 */
import { withTimeout } from '../observability/with-timeout.js';
import { connectRedis, type RedisClient } from '../redis.js';
import type { RuntimeOptions } from './runtime.js';
import { DEFAULT_REDIS_WAIT_MS } from './wait-for-services.js';

/**
 * Every Redis command of the web process's connections (the producer, and this one) fails after this, so a hung
 * Redis (connected, never answering) gets webhooks answered 503 + Retry-After instead of holding the request forever.
 */
export const WEB_REDIS_COMMAND_TIMEOUT_MS = 1_500;

/** Connects and waits until the connection is ready (after the runtime found Redis answering). */
export async function connectWebRedis(options: RuntimeOptions): Promise<RedisClient> {
  const connection = connectRedis(options, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: options.producerCommandTimeoutMs ?? WEB_REDIS_COMMAND_TIMEOUT_MS,
    enableAutoPipelining: true,
  });
  // Errors surface through the commands that fail; without a listener ioredis would print them unbidden.
  connection.on('error', (error: Error) => options.logger.debug({ err: error.message }, 'web redis connection error'));
  try {
    await ready(connection, options.redisWaitMs ?? DEFAULT_REDIS_WAIT_MS);
  } catch (error) {
    connection.disconnect();
    throw error;
  }
  return connection;
}

/** Without an offline queue a command sent before the connection is ready fails: wait for it (Redis answered already). */
async function ready(connection: RedisClient, waitMs: number): Promise<void> {
  if (connection.status === 'ready') return;
  await withTimeout(
    // Not events.once: a connection error meanwhile is retried by ioredis, and the wait goes on until the bound.
    new Promise<void>((resolve) => connection.once('ready', () => resolve())),
    waitMs,
    () => new Error(`the web's Redis connection was not ready within ${Math.round(waitMs / 1000)} s`),
  );
}
