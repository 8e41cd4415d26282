/**
 * `relais web` and `relais worker` started while Redis or PostgreSQL is down: they retry for a bounded time,
 * saying so, then exit non-zero with a message naming what did not answer and what to do, instead of hanging
 * silently; and they refuse a database whose schema is older than the code. Real processes, pointed at a port
 * where nothing listens, or at a real PostgreSQL.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION } from '../../src/adapters/postgres/migrations.js';
import { startTestDatabase, type TestDatabase } from '../support/postgres.js';
import { freePort, startRedis, type TestRedis } from '../support/redis.js';
import { makeSecrets, registryDocument, secretEnv } from '../support/relais.js';

async function runCli(
  args: string[],
  extraEnv: Record<string, string>,
  killAfterMs: number,
): Promise<{ code: number | null; stderr: string; afterMs: number }> {
  const registry = join(mkdtempSync(join(tmpdir(), 'relais-startup-')), 'shops.json');
  writeFileSync(registry, JSON.stringify(registryDocument({ dispatchBaseUrl: 'http://127.0.0.1:9' })));
  const env = {
    PATH: process.env.PATH ?? '',
    ...secretEnv(makeSecrets()),
    RELAIS_SHOPS_FILE: registry,
    REDIS_URL: `redis://127.0.0.1:${String(await freePort())}`,
    PORT: '0',
    RELAIS_WORKER_METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  const started = Date.now();
  const child = spawn(join(process.cwd(), 'node_modules/.bin/tsx'), ['src/main/cli.ts', ...args], {
    env,
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout.on('data', () => undefined);
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(killer);
  return { code, stderr, afterMs: Date.now() - started };
}

describe('starting with Redis down', () => {
  it('relais web exits 1 within 30 s, saying Redis did not answer at which URL and what to do', async () => {
    const { code, stderr, afterMs } = await runCli(['web'], {}, 40_000);
    expect(code).toBe(1);
    expect(afterMs).toBeLessThan(30_000);
    expect(stderr).toMatch(
      /relais: Redis at redis:\/\/127\.0\.0\.1:\d+\/? did not answer within 20 s .*Start Redis, or point REDIS_URL at it/,
    );
  }, 45_000);

  it('relais worker exits 1 once RELAIS_REDIS_WAIT_MS has passed, naming the wait in its message', async () => {
    const { code, stderr, afterMs } = await runCli(['worker'], { RELAIS_REDIS_WAIT_MS: '3000' }, 40_000);
    expect(code).toBe(1);
    expect(afterMs).toBeLessThan(15_000);
    expect(stderr).toContain('did not answer within 3 s');
  }, 45_000);

  it('never prints a Redis password in the message', async () => {
    const port = await freePort();
    const { stderr } = await runCli(
      ['web'],
      { REDIS_URL: `redis://relais:hunter2-secret@127.0.0.1:${String(port)}`, RELAIS_REDIS_WAIT_MS: '1000' },
      40_000,
    );
    expect(stderr).toContain('did not answer');
    expect(stderr).not.toContain('hunter2-secret');
  }, 45_000);
});

describe('starting with PostgreSQL down, or its schema older than the code', () => {
  let redis: TestRedis;
  let db: TestDatabase;
  beforeAll(async () => {
    redis = await startRedis();
    db = await startTestDatabase();
  });
  afterAll(async () => {
    await redis?.stop();
    await db?.stop();
  });

  it('relais worker exits 1 once RELAIS_DB_WAIT_MS has passed, saying PostgreSQL did not answer where (no password) and what to do', async () => {
    const port = await freePort();
    const { code, stderr, afterMs } = await runCli(
      ['worker'],
      {
        REDIS_URL: redis.url,
        DATABASE_URL: `postgres://relais:hunter2-secret@127.0.0.1:${String(port)}/relais`,
        RELAIS_DB_WAIT_MS: '3000',
      },
      40_000,
    );
    expect(code).toBe(1);
    expect(afterMs).toBeLessThan(20_000);
    expect(stderr).toMatch(
      /PostgreSQL at postgres:\/\/relais:\*\*\*@127\.0\.0\.1:\d+\/relais did not answer within 3 s .*Start PostgreSQL, or point DATABASE_URL at it/,
    );
    expect(stderr).not.toContain('hunter2-secret');
  }, 45_000);

  it('relais web refuses a database without the current schema, saying to run relais migrate; after `relais migrate` the schema is current', async () => {
    const schema = `${db.schema}_fresh`;
    const env = { REDIS_URL: redis.url, DATABASE_URL: db.url, RELAIS_DB_SCHEMA: schema };
    const refused = await runCli(['web'], env, 40_000);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/no Relais schema yet \(this code needs version \d+\): run `relais migrate` first/);
    const migrated = await runCli(['migrate'], env, 40_000);
    expect(migrated.code).toBe(0);
    const again = await runCli(['migrate'], env, 40_000);
    expect(again.code).toBe(0);
    const pool = db.pool();
    const { rows } = await pool.query<{ version: number }>(
      `SELECT max(version) AS version FROM ${schema}.relais_schema_migrations`,
    );
    expect(rows[0]!.version).toBe(LATEST_SCHEMA_VERSION);
    await pool.query(`DROP SCHEMA ${schema} CASCADE`);
  }, 90_000);
});
