/**
 * The PostgreSQL connection of the ledger: the pool, the schema it works in, the migrations (`relais migrate`)
 * and the checks web and worker make at start (the database answers; its schema is not older than the code).
 *
 * One schema holds Relais's tables: `public` unless RELAIS_DB_SCHEMA names another (the tests give each file its
 * own). Every statement runs with the schema as its search_path, so no SQL names it.
 */
import pg from 'pg';
import { urlForHumans, type Logger } from '../../log.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from './migrations.js';
import { RelaisError } from '../../domain/errors.js';

export interface DatabaseOptions {
  url: string;
  /** The schema holding Relais's tables; default `public`. */
  schema?: string;
  /** Connections kept at most (default 10). */
  poolSize?: number;
  logger?: Logger;
}

/** Past this, a query waiting for a connection fails instead of hanging (a stopped database fails loudly). */
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * Past this, a query sent and never answered (a database connected but silent) fails: the job retries, the page
 * says so. Far above any ledger statement's time (all are single-row or indexed), so it only fires on an outage.
 */
const QUERY_TIMEOUT_MS = 20_000;
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const MIGRATIONS_TABLE = 'relais_schema_migrations';
/**
 * The advisory lock `migrate` holds for its whole run, with the schema's hash as its second key, so processes
 * migrating one schema at once take turns: the first applies each migration, the others find them applied.
 */
const MIGRATION_LOCK = 7_411_531;

export function createPool(options: DatabaseOptions): pg.Pool {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name "${schema}" (lower-case letters, digits and _)`);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    idleTimeoutMillis: 30_000,
    application_name: 'relais',
    options: `-c search_path=${schema}`,
  });
  // An idle connection dropped by the server (a restart) is replaced on the next query; without a listener
  // the pool's 'error' event would end the process.
  pool.on('error', (error: Error) =>
    options.logger?.warn({ err: error.message }, 'postgresql connection lost; reconnecting on next query'),
  );
  return pool;
}

/**
 * Runs `work` on a connection of its own (several statements on one session: a transaction, a migration) and
 * hands it back. While checked out, a connection is not the pool's: the pool's 'error' listener is off it, and
 * when the server drops it (an immediate stop or a crash of PostgreSQL) the client still emits 'error' once its
 * socket ends, after the statement in flight has already failed with that error. With no listener Node ends the
 * process; here that second report is dropped (the work's own error says it) and the connection is destroyed,
 * never handed back to the pool.
 */
export async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error) => {
    lost = error;
  };
  client.on('error', onError);
  try {
    return await work(client);
  } finally {
    client.off('error', onError);
    client.release(lost);
  }
}

/** `work` in BEGIN … COMMIT on a connection of its own (withClient), rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    await client.query('BEGIN');
    try {
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

/** The URL without its password, for messages. */
export function databaseUrlForHumans(url: string): string {
  return urlForHumans(url, 'DATABASE_URL');
}

/** The schema version applied (0 for an empty database). */
export async function schemaVersion(pool: pg.Pool): Promise<number> {
  const table = await pool.query<{ found: string | null }>(`SELECT to_regclass('${MIGRATIONS_TABLE}')::text AS found`);
  if (table.rows[0]?.found === null || table.rows[0]?.found === undefined) return 0;
  const applied = await pool.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${MIGRATIONS_TABLE}`,
  );
  return applied.rows[0]?.version ?? 0;
}

/**
 * Applies the migrations the database lacks, each in its own transaction, under an advisory lock so two
 * processes migrating at once apply each once. Idempotent: on a current schema it applies nothing. The lock is
 * taken before anything else, the `IF NOT EXISTS` statements included: PostgreSQL does not make those safe
 * against a concurrent twin (the loser fails on a duplicate key of its catalogue).
 */
export async function migrate(
  pool: pg.Pool,
  schema = 'public',
): Promise<{ from: number; to: number; applied: string[] }> {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name "${schema}" (lower-case letters, digits and _)`);
  const result = { from: 0, to: LATEST_SCHEMA_VERSION, applied: [] as string[] };
  await withClient(pool, async (client) => {
    await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [MIGRATION_LOCK, schema]);
    try {
      await applyMigrations(client, schema, result);
    } finally {
      // A lost connection has released it already: a session's advisory locks end with it.
      await client
        .query('SELECT pg_advisory_unlock($1, hashtext($2))', [MIGRATION_LOCK, schema])
        .catch(() => undefined);
    }
  });
  return result;
}

/** What `migrate` does under its lock: the schema, the versions table, then each migration not applied yet. */
async function applyMigrations(
  client: pg.PoolClient,
  schema: string,
  result: { from: number; applied: string[] },
): Promise<void> {
  await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  for (const migration of MIGRATIONS) {
    await client.query('BEGIN');
    try {
      const done = await client.query(`SELECT 1 FROM ${MIGRATIONS_TABLE} WHERE version = $1`, [migration.version]);
      if (done.rowCount === 0) {
        await client.query(migration.sql);
        await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version, name) VALUES ($1, $2)`, [
          migration.version,
          migration.name,
        ]);
        result.applied.push(`${migration.version} ${migration.name}`);
      } else result.from = migration.version;
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}

/** Thrown when the database's schema is older than the code: the operator runs `relais migrate`. */
export class SchemaTooOldError extends RelaisError {
  override readonly name = 'SchemaTooOldError';
  constructor(
    readonly found: number,
    readonly needed: number,
  ) {
    super({
      failure: 'permanent',
      message:
        found === 0
          ? `the database has no Relais schema yet (this code needs version ${needed}): run \`relais migrate\` first`
          : `the database schema is at version ${found}, older than this code's ${needed}: run \`relais migrate\` first`,
    });
  }
}

/** Refuses a schema older than the code (a newer one is allowed: migrations only add). */
export async function assertSchemaCurrent(pool: pg.Pool): Promise<void> {
  const found = await schemaVersion(pool);
  if (found < LATEST_SCHEMA_VERSION) throw new SchemaTooOldError(found, LATEST_SCHEMA_VERSION);
}
