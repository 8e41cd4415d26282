/**
 * The ledger schema's versioning: `migrate` is idempotent and safe to run from several processes at once, and a
 * schema older than the code is refused. (What the ledger itself does is the OrderLedger contract, run on this
 * adapter by pg-ledger.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { perFile } from '../../../test/support/per-file.js';
import { startTestDatabase } from '../../../test/support/postgres.js';
import { assertSchemaCurrent, createPool, migrate, schemaVersion, SchemaTooOldError } from './database.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from './migrations.js';
import { PostgresOrderLedger } from './pg-ledger.js';

const db = perFile(() => startTestDatabase());

describe('schema versions', () => {
  it('applies nothing on a second migrate and says the schema is current', async () => {
    const pool = createPool({ url: db().url, schema: db().schema, poolSize: 1 });
    try {
      expect(await migrate(pool, db().schema)).toEqual({
        from: LATEST_SCHEMA_VERSION,
        to: LATEST_SCHEMA_VERSION,
        applied: [],
      });
      await expect(assertSchemaCurrent(pool)).resolves.toBeUndefined();
    } finally {
      await pool.end();
    }
  });

  it('migrates an empty database once when several processes run `relais migrate` at the same moment, none failing', async () => {
    for (let round = 0; round < 10; round += 1) {
      const schema = `${db().schema}_m${round}`;
      const pools = [0, 1, 2, 3].map(() => createPool({ url: db().url, schema, poolSize: 1 }));
      try {
        const runs = await Promise.allSettled(pools.map((pool) => migrate(pool, schema)));
        expect(runs.filter((r) => r.status === 'rejected').map((r) => String(r.reason))).toEqual([]);
        const applied = runs.flatMap((r) => (r.status === 'fulfilled' ? r.value.applied : []));
        expect(applied).toHaveLength(LATEST_SCHEMA_VERSION);
        expect(await schemaVersion(pools[0]!)).toBe(LATEST_SCHEMA_VERSION);
      } finally {
        await pools[0]!.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await Promise.all(pools.map((pool) => pool.end()));
      }
    }
  });

  it('refuses an empty or older schema with a message naming `relais migrate`, and accepts it once migrated', async () => {
    const schema = `${db().schema}_old`;
    const pool = createPool({ url: db().url, schema, poolSize: 1 });
    try {
      await pool.query(`CREATE SCHEMA ${schema}`);
      expect(await schemaVersion(pool)).toBe(0);
      await expect(assertSchemaCurrent(pool)).rejects.toThrow(/no Relais schema yet.*relais migrate/);
      // An older schema: a migrations table at a version before the code's.
      await pool.query(
        'CREATE TABLE relais_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      await pool.query("INSERT INTO relais_schema_migrations (version, name) VALUES (0, 'before the ledger')");
      const refusal = await assertSchemaCurrent(pool).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(SchemaTooOldError);
      const applied = await migrate(pool, schema);
      expect(applied.applied).toHaveLength(MIGRATIONS.length);
      await expect(assertSchemaCurrent(pool)).resolves.toBeUndefined();
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    }
  });
});

describe('upgrading a ledger', () => {
  it("reads an order stored before migration 9 with its outstanding, under the order's new name for it", async () => {
    const schema = `${db().schema}_v8`;
    const pool = createPool({ url: db().url, schema, poolSize: 1 });
    try {
      // A ledger as version 8 left it: its migrations applied, an order stored with the old key.
      await pool.query(`CREATE SCHEMA ${schema}`);
      await pool.query(
        'CREATE TABLE relais_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      for (const migration of MIGRATIONS.filter((m) => m.version <= 8)) {
        await pool.query(migration.sql);
        await pool.query('INSERT INTO relais_schema_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
      }
      const stored = (id: string, storeOrder: object | null) =>
        pool.query(
          `INSERT INTO orders (external_order_id, shop_id, platform, order_id, order_name, first_seen_at, state, state_changed_at, store_order)
           VALUES ($1, 'dakar-mode', 'shopify', $2, $3, now(), 'received', now(), $4::jsonb)`,
          [`dakar-mode:${id}`, id, `#${id}`, storeOrder === null ? null : JSON.stringify(storeOrder)],
        );
      const before = { orderName: '#1001', total: 20_000, shippingCharged: 2_000, paymentFamily: 'cash_on_delivery' };
      await stored('1001', { ...before, amountToCollect: 15_000 });
      await stored('1002', null);

      expect((await migrate(pool, schema)).applied).toEqual(['9 outstanding, by its name']);

      const ledger = new PostgresOrderLedger(pool);
      const upgraded = await ledger.get('dakar-mode:1001');
      expect(upgraded?.order).toEqual({ ...before, outstanding: 15_000 });
      expect((await ledger.get('dakar-mode:1002'))?.order).toBeUndefined();
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    }
  });
});
