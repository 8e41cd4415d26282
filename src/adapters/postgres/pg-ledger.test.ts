/**
 * The OrderLedger contract (test/contracts/order-ledger.contract.ts) on the PostgreSQL adapter: each case in a
 * schema of its own, in the run's PostgreSQL; a second worker is a second ledger with a pool of its own. Then
 * what only this adapter does: the shop's run-time aliases read with the record an event writes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderLedgerContract } from '../../../test/contracts/order-ledger.contract.js';
import { startTestDatabase, type TestDatabase } from '../../../test/support/postgres.js';
import { PostgresAliasStore } from './pg-aliases.js';
import { PostgresOrderLedger } from './pg-ledger.js';

orderLedgerContract('PostgreSQL', async (settings) => {
  const db = await startTestDatabase();
  return {
    ledger: new PostgresOrderLedger(db.pool(), settings),
    sibling: () => new PostgresOrderLedger(db.pool(), settings),
    stop: () => db.stop(),
  };
});

describe('the PostgreSQL ledger recording a shop event', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await startTestDatabase();
  });
  afterAll(async () => {
    await db?.stop();
  });

  it("answers with the shop's run-time aliases as they stand, so the attempt that ships the order reads none itself", async () => {
    const ledger = new PostgresOrderLedger(db.pool());
    const aliases = new PostgresAliasStore(db.pool());
    const record = (orderId: string) =>
      ledger.recordEvent({
        meta: {
          externalOrderId: `dakar-mode:${orderId}`,
          shopId: 'dakar-mode',
          platform: 'shopify',
          orderId,
          orderName: `#${orderId}`,
        },
        payload: { id: orderId },
        now: new Date('2026-11-28T04:00:00Z'),
      });
    expect((await record('1')).shopAliases).toEqual({});
    await aliases.add('dakar-mode', 'Sacre Coeur trois', 'Sacré-Cœur 3');
    await aliases.add('thies-shop', 'Grand Standing', 'Grand Standing');
    // Added by another process a moment ago: the next event's record carries it, and only this shop's.
    expect((await record('2')).shopAliases).toEqual({ 'Sacre Coeur trois': 'Sacré-Cœur 3' });
    expect((await record('1')).shopAliases).toEqual(await aliases.list('dakar-mode'));
  });
});
