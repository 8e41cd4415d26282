/** The long-running processes and the schema: relais web, worker and migrate. */
import { Command } from 'commander';
import { readEnv } from '../../config/env.js';
import { NeighbourhoodResolver } from '../../geo/resolver.js';
import { createLogger } from '../../log.js';
import { Secret } from '../../shops/secret.js';
import { createPool, databaseUrlForHumans, migrate } from '../../adapters/postgres/database.js';
import { waitForDatabase } from '../wait-for-services.js';
import { startWeb } from '../web.js';
import { startWorker } from '../worker.js';
import { baseOptions, onShutdown } from './shared.js';

export function registerProcessCommands(program: Command): void {
  webCommand(program);
  workerCommand(program);
  migrateCommand(program);
}

function webCommand(program: Command): void {
  program
    .command('web')
    .description('Receive shop webhooks (Express) and enqueue them')
    .action(async () => {
      const base = await baseOptions();
      const web = await startWeb({
        ...base,
        host: base.env.RELAIS_HOST,
        port: base.env.PORT,
        dashboardToken: base.env.RELAIS_DASHBOARD_TOKEN,
        metricsToken: base.env.RELAIS_METRICS_TOKEN, // operations: /metrics behind a bearer token when set
        trustProxy: base.env.TRUST_PROXY,
        // The Shopify app install routes; env.ts made sure the four settings come together.
        ...(base.env.SHOPIFY_API_KEY && base.env.SHOPIFY_API_SECRET && base.env.RELAIS_PUBLIC_URL
          ? {
              shopifyApp: {
                clientId: base.env.SHOPIFY_API_KEY,
                clientSecret: new Secret(base.env.SHOPIFY_API_SECRET, 'env SHOPIFY_API_SECRET'),
                publicUrl: base.env.RELAIS_PUBLIC_URL,
              },
            }
          : {}),
        publicUrl: base.env.RELAIS_PUBLIC_URL,
      });
      onShutdown(() => web.close(), base.logger);
    });
}

function workerCommand(program: Command): void {
  program
    .command('worker')
    .description('Process shop events and dispatch orders (BullMQ worker)')
    .action(async () => {
      const base = await baseOptions();
      const worker = await startWorker({
        ...base,
        resolver: NeighbourhoodResolver.load(),
        concurrency: base.env.WORKER_CONCURRENCY,
        lockMs: base.env.RELAIS_WORKER_LOCK_MS,
        reconcileIntervalMs: base.env.RELAIS_RECONCILE_INTERVAL_MS,
        // operations: /metrics, /healthz, /readyz on the worker's own port
        metricsPort: base.env.RELAIS_WORKER_METRICS_PORT,
        metricsHost: base.env.RELAIS_HOST,
        metricsToken: base.env.RELAIS_METRICS_TOKEN,
      });
      onShutdown(() => worker.close(), base.logger);
    });
}

function migrateCommand(program: Command): void {
  program
    .command('migrate')
    .description(
      "Bring the ledger's PostgreSQL schema up to this version of Relais (idempotent: applies only what is missing)",
    )
    .action(async () => {
      const env = readEnv();
      const where = databaseUrlForHumans(env.DATABASE_URL);
      const pool = createPool({ url: env.DATABASE_URL, schema: env.RELAIS_DB_SCHEMA });
      try {
        await waitForDatabase(pool, {
          url: env.DATABASE_URL,
          waitMs: env.RELAIS_DB_WAIT_MS,
          logger: createLogger({ level: env.LOG_LEVEL }),
        });
        const result = await migrate(pool, env.RELAIS_DB_SCHEMA);
        process.stdout.write(
          result.applied.length === 0
            ? `schema ${env.RELAIS_DB_SCHEMA} at ${where} is current (version ${result.to}); nothing to apply\n`
            : `schema ${env.RELAIS_DB_SCHEMA} at ${where}: applied ${result.applied.join(', ')}; now at version ${result.to}\n`,
        );
      } finally {
        await pool.end();
      }
    });
}
