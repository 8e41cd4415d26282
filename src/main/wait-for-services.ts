/**
 * Start-up waits: web and worker wait a bounded time for Redis and PostgreSQL to answer, then fail loudly with
 * where they looked and how to fix it, so a process that cannot reach what it needs never hangs.
 */
import type pg from 'pg';
import { assertSchemaCurrent, databaseUrlForHumans } from '../adapters/postgres/database.js';
import type { Logger } from '../log.js';
import { isCluster, redisTargetForHumans } from '../redis.js';
import type { Runtime } from './runtime.js';
import { withTimeout } from '../observability/with-timeout.js';

/** Past this at start, `relais web` and `relais worker` stop waiting for Redis and exit non-zero. */
export const DEFAULT_REDIS_WAIT_MS = 20_000;

/**
 * Waits until `ping` succeeds, retrying each second and saying so, for at most `waitMs`; then gives up with an
 * error naming the service, where it was looked for (no password) and the last failure: a process that cannot
 * reach what it needs fails loudly, never hangs.
 */
export async function waitUntilAnswering(
  ping: () => Promise<unknown>,
  options: { service: string; where: string; waitMs: number; logger: Logger; fix: string },
): Promise<void> {
  const deadline = Date.now() + options.waitMs;
  let lastError = 'no answer';
  for (let attempt = 1; ; attempt++) {
    try {
      await withTimeout(ping(), 2_000);
      if (attempt > 1)
        options.logger.info({ service: options.service, at: options.where }, `${options.service} answers: starting`);
      return;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() + 1_000 > deadline) break;
    options.logger.warn(
      { service: options.service, at: options.where, attempt, err: lastError },
      `waiting for ${options.service} (gives up ${Math.ceil((deadline - Date.now()) / 1000)} s from now)`,
    );
    await new Promise((r) => setTimeout(r, 1_000));
  }
  throw new Error(
    `${options.service} at ${options.where} did not answer within ${Math.round(options.waitMs / 1000)} s (last error: ${lastError}). ${options.fix}`,
  );
}

/** Waits for Redis (`waitUntilAnswering`); on failure drops the runtime's Redis connections so nothing keeps the process alive. */
export async function waitForRedis(runtime: Runtime): Promise<void> {
  const { options } = runtime;
  try {
    await waitUntilAnswering(() => runtime.redis.ping(), {
      service: 'Redis',
      where: redisTargetForHumans(options),
      waitMs: options.redisWaitMs ?? DEFAULT_REDIS_WAIT_MS,
      logger: options.logger,
      fix: isCluster(options)
        ? 'Start the cluster, or correct REDIS_CLUSTER_NODES.'
        : 'Start Redis, or point REDIS_URL at it.',
    });
  } catch (error) {
    runtime.producer.disconnect();
    runtime.redis.disconnect();
    throw error;
  }
}

/** Past this at start, `relais web` and `relais worker` stop waiting for PostgreSQL and exit non-zero. */
export const DEFAULT_DATABASE_WAIT_MS = 20_000;

/** Waits for PostgreSQL (`waitUntilAnswering`). */
export async function waitForDatabase(
  db: pg.Pool,
  options: { url: string; waitMs: number; logger: Logger },
): Promise<void> {
  await waitUntilAnswering(() => db.query('SELECT 1'), {
    service: 'PostgreSQL',
    where: databaseUrlForHumans(options.url),
    waitMs: options.waitMs,
    logger: options.logger,
    fix: 'Start PostgreSQL, or point DATABASE_URL at it.',
  });
}

/**
 * Waits until PostgreSQL answers (as `waitForRedis` does for Redis), then refuses a schema older than the code
 * with a message saying to run `relais migrate`. On failure the runtime's connections are dropped, so nothing
 * keeps the process alive.
 */
export async function waitForLedger(runtime: Runtime): Promise<void> {
  const { options } = runtime;
  try {
    await waitForDatabase(runtime.db, {
      url: options.databaseUrl,
      waitMs: options.databaseWaitMs ?? DEFAULT_DATABASE_WAIT_MS,
      logger: options.logger,
    });
    await assertSchemaCurrent(runtime.db);
  } catch (error) {
    await runtime.close().catch(() => undefined);
    throw error;
  }
}
