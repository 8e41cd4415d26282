/**
 * A schema of its own for each test file (or each caller), in the run's PostgreSQL (global-postgres.ts), with the
 * ledger's migrations applied; dropped afterwards. A file run outside vitest's global set-up starts its own
 * private server.
 */
import type pg from 'pg';
import { createPool, migrate } from '../../src/adapters/postgres/database.js';
import { startPrivatePostgres, type PrivatePostgres } from '../../src/main/private-postgres.js';

export interface TestDatabase {
  url: string;
  schema: string;
  /** A pool on the schema (closed by `stop`). */
  pool(): pg.Pool;
  /** Environment for a child process (RELAIS_DB_SCHEMA, DATABASE_URL). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

let ownServer: Promise<PrivatePostgres> | undefined;

async function runDatabaseUrl(): Promise<string> {
  const shared = process.env.RELAIS_TEST_DATABASE_URL;
  if (shared) return shared;
  ownServer ??= startPrivatePostgres();
  return (await ownServer).url;
}

/**
 * Stops the private server this process started for lack of RELAIS_TEST_DATABASE_URL (a bench or script run outside
 * vitest, which has no global teardown): left running, its output pipes keep the process from exiting.
 */
export async function stopOwnServer(): Promise<void> {
  const server = ownServer;
  ownServer = undefined;
  if (server) await (await server).stop();
}

export interface TestDatabaseOptions {
  /** A PostgreSQL of the test's own (the chaos suite crashes and restarts it); default: the run's. */
  url?: string;
}

export async function startTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const url = options.url ?? (await runDatabaseUrl());
  const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const pools: pg.Pool[] = [];
  const open = (): pg.Pool => {
    const pool = createPool({ url, schema, poolSize: 4 });
    pools.push(pool);
    return pool;
  };
  const admin = open();
  await migrate(admin, schema);
  return {
    url,
    schema,
    pool: open,
    env: { DATABASE_URL: url, RELAIS_DB_SCHEMA: schema },
    stop: async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await Promise.all(pools.map((pool) => pool.end().catch(() => undefined)));
    },
  };
}
