/**
 * The OrderLedger contract (test/contracts/order-ledger.contract.ts) on the PostgreSQL adapter: each case in a
 * schema of its own, in the run's PostgreSQL; a second worker is a second ledger with a pool of its own.
 */
import { orderLedgerContract } from '../../../test/contracts/order-ledger.contract.js';
import { startTestDatabase } from '../../../test/support/postgres.js';
import { PostgresOrderLedger } from './pg-ledger.js';

orderLedgerContract('PostgreSQL', async (settings) => {
  const db = await startTestDatabase();
  return {
    ledger: new PostgresOrderLedger(db.pool(), settings),
    sibling: () => new PostgresOrderLedger(db.pool(), settings),
    stop: () => db.stop(),
  };
});
