/**
 * Two workers racing on one order, as PostgreSQL sees them: separate pools (separate connections, like two
 * processes), statements sent at the same moment in shuffled orders. Whatever order the database applies them
 * in, an order never moves backwards and a recorded markReady is never replaced by a shipment saved without it.
 * Also the schema's versioning: `migrate` is idempotent, and a schema older than the code is refused.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDatabase, type TestDatabase } from '../../../test/support/postgres.js';
import { DISPATCHED_STATES, FINAL_STATES, ORDER_STATES } from '../../domain/order-state.js';
import { assertSchemaCurrent, createPool, migrate, schemaVersion, SchemaTooOldError } from './database.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from './migrations.js';
import { PostgresOrderLedger } from './pg-ledger.js';

let db: TestDatabase;
let first: PostgresOrderLedger;
let second: PostgresOrderLedger;
beforeAll(async () => {
  db = await startTestDatabase();
  first = new PostgresOrderLedger(db.pool());
  second = new PostgresOrderLedger(db.pool());
});
afterAll(async () => {
  await db.stop();
});

let orders = 0;
async function newOrder(ledger: PostgresOrderLedger): Promise<string> {
  orders += 1;
  const orderId = `race${orders}`;
  await ledger.recordEvent({
    meta: {
      externalOrderId: `dakar-mode:${orderId}`,
      shopId: 'dakar-mode',
      platform: 'shopify',
      orderId,
      orderName: `#${orderId}`,
    },
    payload: { id: orderId },
    now: new Date('2026-11-01T10:00:00Z'),
  });
  return `dakar-mode:${orderId}`;
}

describe('two workers racing on one order', () => {
  it("never takes a dispatched order back to a state before ready (not even awaiting_ready), nor a finished one out of its final state, whatever order two workers' moves land in", async () => {
    const move = fc.record({ worker: fc.constantFrom(0, 1), state: fc.constantFrom(...ORDER_STATES) });
    await fc.assert(
      fc.asyncProperty(fc.array(move, { minLength: 2, maxLength: 8 }), async (moves) => {
        const id = await newOrder(first);
        const ledgers = [first, second];
        const at = new Date('2026-11-01T11:00:00Z');
        // All sent at once: the database decides their order. Each answer says whether that move was applied.
        const applied = await Promise.all(moves.map((m) => ledgers[m.worker]!.setState(id, m.state, at)));
        const appliedStates = moves.filter((_, i) => applied[i]).map((m) => m.state);
        const kept = (await first.get(id))!.state;
        // What is kept is the last move applied, so one of them.
        expect(appliedStates.length === 0 ? ['received'] : appliedStates).toContain(kept);
        // Once a dispatched state was applied, the order never ended before dispatch.
        if (appliedStates.some((s) => DISPATCHED_STATES.has(s))) expect(DISPATCHED_STATES.has(kept)).toBe(true);
        // At most one final state was ever applied, and the order is still in it.
        const finals = new Set(appliedStates.filter((s) => FINAL_STATES.has(s)));
        expect(finals.size).toBeLessThanOrEqual(1);
        if (finals.size === 1) expect(kept).toBe([...finals][0]);
      }),
      { numRuns: 60 },
    );
  });

  it('keeps the markReady one worker recorded when the other saves its late createShipment answer at the same moment', async () => {
    for (let round = 0; round < 40; round += 1) {
      const id = await newOrder(first);
      const created = { shipmentId: `shp_${round}`, status: 'CREATED', createdAt: '2026-11-01T10:00:01Z' };
      await first.saveShipment(id, created);
      const ready = { ...created, status: 'READY', markedReadyAt: '2026-11-01T10:00:02Z' };
      // Sent at the same moment, in alternating order of sending.
      const [late, marked] =
        round % 2 === 0
          ? await Promise.all([second.saveShipment(id, created), first.saveShipment(id, ready)])
          : (await Promise.all([first.saveShipment(id, ready), second.saveShipment(id, created)])).reverse();
      expect(marked).toBe(true);
      const saved = (await first.get(id))!.shipment!;
      // Either order of arrival ends with the markReady kept: the late save was refused, or it landed first.
      expect(saved.markedReadyAt).toBe('2026-11-01T10:00:02Z');
      expect(typeof late).toBe('boolean');
      expect(await first.countUnready(new Date(Date.now() + 60_000))).toBe(0);
    }
  });

  it("keeps an order ready with its markReady when another worker's late step (created shipment, dispatching) is applied at the same moment", async () => {
    for (let round = 0; round < 30; round += 1) {
      const id = await newOrder(first);
      const created = { shipmentId: `shp_step_${round}`, status: 'CREATED', createdAt: '2026-11-01T10:00:01Z' };
      const ready = { ...created, status: 'READY', markedReadyAt: '2026-11-01T10:00:02Z' };
      const now = new Date('2026-11-01T10:00:02Z');
      const marking = () => first.apply(id, { now, shipment: ready, state: 'ready' });
      const late = () => second.apply(id, { now, shipment: created, state: 'dispatching' });
      // Sent at the same moment, in alternating order of sending.
      await Promise.all((round % 2 === 0 ? [marking, late] : [late, marking]).map((send) => send()));
      const record = (await first.get(id))!;
      expect(record.state).toBe('ready');
      expect(record.shipment?.markedReadyAt).toBe('2026-11-01T10:00:02Z');
    }
  });

  it('moves an order to ready once when two workers ask at the same moment, and the loser is told', async () => {
    for (let round = 0; round < 20; round += 1) {
      const id = await newOrder(first);
      await first.setState(id, 'dispatching', new Date('2026-11-01T10:00:01Z'));
      const [a, b] = await Promise.all([
        // The dispatch attempt's move, which may leave a (stale) hold: see OrderLedger.apply.
        first.setState(id, 'ready', new Date('2026-11-01T10:00:02Z'), 'resolution'),
        second.hold(id, { code: 'x', message: 'late' }, new Date('2026-11-01T10:00:02Z')),
      ]);
      const record = (await first.get(id))!;
      // The hold can win only if it landed before "ready"; then "ready" still applies after it. Never held after ready.
      expect(a).toBe(true);
      expect(record.state).toBe('ready');
      expect(record.hold).toBeUndefined();
      expect(typeof b).toBe('boolean');
    }
  });
});

describe('schema versions', () => {
  it('applies nothing on a second migrate and says the schema is current', async () => {
    const pool = createPool({ url: db.url, schema: db.schema, poolSize: 1 });
    try {
      expect(await migrate(pool, db.schema)).toEqual({
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
      const schema = `${db.schema}_m${round}`;
      const pools = [0, 1, 2, 3].map(() => createPool({ url: db.url, schema, poolSize: 1 }));
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
    const schema = `${db.schema}_old`;
    const pool = createPool({ url: db.url, schema, poolSize: 1 });
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

describe('claims', () => {
  it('reports a claim newly decided exactly once, whether its saves come one after another or at the same moment', async () => {
    const now = new Date('2026-11-01T12:00:00Z');
    const open = { key: 'clm_1', claim: { status: 'OPEN' }, decided: false };
    const decided = { key: 'clm_1', claim: { status: 'COMPENSATED' }, decided: true };
    expect(await first.saveClaim('dakar-mode:c1', open, now)).toEqual({ newlyDecided: false });
    expect(await first.saveClaim('dakar-mode:c1', decided, now)).toEqual({ newlyDecided: true });
    expect(await second.saveClaim('dakar-mode:c1', decided, now)).toEqual({ newlyDecided: false });
    // First seen already decided, by two workers at once.
    const both = await Promise.all([
      first.saveClaim('dakar-mode:c2', { ...decided, key: 'clm_2' }, now),
      second.saveClaim('dakar-mode:c2', { ...decided, key: 'clm_2' }, now),
    ]);
    expect(both.filter((r) => r.newlyDecided)).toHaveLength(1);
    expect((await first.knownClaims('dakar-mode:c1')).map((k) => [k.key, k.decided, k.claim])).toEqual([
      ['clm_1', true, { status: 'COMPENSATED' }],
    ]);
  });
});
