/**
 * The ledger's connections when PostgreSQL is stopped immediately (SIGQUIT, as `pg_ctl stop -m immediate`) and
 * restarted: a transaction in flight fails with the lost connection as its error, and nothing else happens. The
 * client would also report the loss as an 'error' event once its socket ends, which, with no listener, ends the
 * Node process (web or worker); and the pool answers again once the server is back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { createPool, inTransaction } from '../../src/adapters/postgres/database.js';
import { startPrivatePostgres, type PrivatePostgres } from '../../src/main/private-postgres.js';
import { waitFor } from '../support/relais.js';

let postgres: PrivatePostgres;
let pool: pg.Pool;
const uncaught: Error[] = [];
const record = (error: Error) => void uncaught.push(error);

beforeAll(async () => {
  postgres = await startPrivatePostgres({ crashSafe: true });
  pool = createPool({ url: postgres.url });
  process.on('uncaughtException', record);
});

afterAll(async () => {
  process.off('uncaughtException', record);
  await pool?.end();
  await postgres?.stop();
});

describe('a transaction whose connection PostgreSQL drops', () => {
  it('fails with the lost connection, leaves no uncaught error behind, and the pool answers after the restart', async () => {
    const inFlight = inTransaction(pool, async (client) => {
      await client.query('SELECT pg_sleep(60)');
    });
    const failed = inFlight.then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    // The statement is running on the server: only then is the stop "mid-transaction".
    await waitFor(
      async () =>
        (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'`)).rowCount === 1,
      { what: 'the transaction to be running' },
    );
    await postgres.crash();
    expect((await failed)?.message).toMatch(/terminat/i);

    await postgres.restart();
    const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
    expect(rows).toEqual([{ one: 1 }]);
    // Once the transaction has failed, the lost connection has reported everything it will.
    expect(uncaught.map((e) => e.message)).toEqual([]);
  });
});
