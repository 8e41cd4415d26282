/**
 * The in-memory ledger passes the same OrderLedger contract as the PostgreSQL adapter
 * (test/contracts/order-ledger.contract.ts): a second worker is a second ledger on the same store.
 */
import { orderLedgerContract } from '../contracts/order-ledger.contract.js';
import { MemoryLedgerStore, MemoryOrderLedger } from './memory-ledger.js';

orderLedgerContract('in memory', async (settings) => {
  const store = new MemoryLedgerStore();
  return {
    ledger: new MemoryOrderLedger(store, settings),
    sibling: () => new MemoryOrderLedger(store, settings),
    stop: async () => undefined,
  };
});
