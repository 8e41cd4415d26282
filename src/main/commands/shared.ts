/** What the commands share: the environment and shops they start from, and a clean stop on a signal. */
import { existsSync } from 'node:fs';
import { rawEnvironment, readEnv } from '../../config/env.js';
import { assertWebhookTokens, loadShopRegistry, readRegistryDocument, type ShopRegistry } from '../../shops/shops.js';
import { loadServedShops } from '../../shops/shop-directory.js';
import { PostgresShopDirectory } from '../../adapters/postgres/pg-shops.js';
import { createLogger } from '../../log.js';
import { SecretBox } from '../../shops/secret-box.js';
import { createPool } from '../../adapters/postgres/database.js';
import { PostgresShopSecretStore } from '../../adapters/postgres/pg-shop-secrets.js';
import { waitForDatabase } from '../wait-for-services.js';
import { connectRedis, parseClusterNodes } from '../../redis.js';
import { announceShopsChanged } from '../../shops/served-shops.js';
import { createRuntime, type Runtime, type RuntimeOptions } from '../runtime.js';

/**
 * The environment, the logger and the shops served: the registry file's, and with RELAIS_SECRET_KEYS set (the
 * key that opens connected shops' secrets) the database's connected shops too. Without the file (its default
 * path absent) the connected shops alone.
 */
export async function baseOptions() {
  const env = readEnv();
  const logger = createLogger({ level: env.LOG_LEVEL });
  const served = env.RELAIS_SECRET_KEYS ? await servedShops(env, logger) : undefined;
  const shops = served?.shops ?? loadShopRegistry(env.RELAIS_SHOPS_FILE);
  return {
    env,
    logger,
    shops,
    // With connected shops, web and worker serve them live: reloaded when one is connected, changed or switched off.
    ...(served ? { liveShops: { ...(served.fileDocument ? { fileDocument: served.fileDocument } : {}) } } : {}),
    redisUrl: env.REDIS_URL,
    redisClusterNodes: parseClusterNodes(env.REDIS_CLUSTER_NODES),
    prefix: env.RELAIS_REDIS_PREFIX,
    retentionDays: env.RELAIS_RETENTION_DAYS,
    redisWaitMs: env.RELAIS_REDIS_WAIT_MS,
    databaseUrl: env.DATABASE_URL,
    databaseSchema: env.RELAIS_DB_SCHEMA,
    databaseWaitMs: env.RELAIS_DB_WAIT_MS,
    ...(env.RELAIS_SECRET_KEYS === undefined ? {} : { secretKeys: env.RELAIS_SECRET_KEYS }),
  };
}

/**
 * Runs `work` on a runtime that logs nothing (the command speaks for itself on stdout), and closes the runtime
 * after it, failed or not: an open connection would keep the command from exiting.
 */
export async function withQuietRuntime<T>(
  base: Omit<RuntimeOptions, 'logger'>,
  work: (runtime: Runtime) => Promise<T>,
): Promise<T> {
  const runtime = createRuntime({ ...base, logger: createLogger({ level: 'silent' }) });
  try {
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}

/** Where a command's report and its complaints go. */
export function processOutput(): { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream } {
  return { stdout: process.stdout, stderr: process.stderr };
}

export async function servedShops(
  env: ReturnType<typeof readEnv>,
  logger: ReturnType<typeof createLogger>,
): Promise<{ shops: ShopRegistry; fileDocument?: { shops: unknown[] } }> {
  const fileGiven = rawEnvironment().RELAIS_SHOPS_FILE !== undefined || existsSync(env.RELAIS_SHOPS_FILE);
  const fileDocument = fileGiven ? (readRegistryDocument(env.RELAIS_SHOPS_FILE) as { shops: unknown[] }) : undefined;
  const pool = createPool({ url: env.DATABASE_URL, schema: env.RELAIS_DB_SCHEMA, poolSize: 1 });
  try {
    await waitForDatabase(pool, { url: env.DATABASE_URL, waitMs: env.RELAIS_DB_WAIT_MS, logger });
    const registry = await loadServedShops({
      ...(fileDocument ? { fileDocument } : {}),
      directory: new PostgresShopDirectory(pool),
      secrets: new PostgresShopSecretStore(pool, SecretBox.fromSetting(env.RELAIS_SECRET_KEYS!)),
    });
    return { shops: assertWebhookTokens(registry), ...(fileDocument ? { fileDocument } : {}) };
  } finally {
    await pool.end();
  }
}

/** Tells the running web processes and workers the connected shops changed; they reload within a minute anyway. */
export async function announceFromCli(env: ReturnType<typeof readEnv>): Promise<string> {
  const redis = connectRedis(
    { redisUrl: env.REDIS_URL, redisClusterNodes: parseClusterNodes(env.REDIS_CLUSTER_NODES) },
    { maxRetriesPerRequest: 1, connectTimeout: 2_000, commandTimeout: 3_000 },
  );
  redis.on('error', () => undefined);
  try {
    await announceShopsChanged(redis, env.RELAIS_REDIS_PREFIX);
    return 'Running web processes and workers were told: they serve the change now.';
  } catch {
    return 'Redis did not answer: running web processes and workers pick the change up within a minute.';
  } finally {
    redis.disconnect();
  }
}

/** Runs `close` once on SIGTERM or SIGINT, then exits. */
export function onShutdown(close: () => Promise<void>, logger: { info(msg: string): void }): void {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info(`${signal} received: finishing in-flight work, then stopping`);
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}
