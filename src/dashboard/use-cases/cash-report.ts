/** The cash page: a shop's cash-on-delivery figures per day from the ledger, and the latest reconciliation run. */
import { codFigures, loadRecords, SCAN_LIMIT, type CodFigures } from './order-figures.js';
import type { ShopZone } from '../../ledger/order-insights.js';
import type { DashboardDeps, ReconciliationSummary } from '../ports.js';

export interface CashReport {
  cod: CodFigures;
  /** Undefined until a reconciliation run has been recorded. */
  reconciliation: ReconciliationSummary | undefined;
  /** Whether reconciliation summaries are wired in at all (the page then says how to run one). */
  reconciliationWired: boolean;
}

/** The orders of these shops (one, or every shop served) first seen since `since`. */
export async function cashReport(
  ports: Pick<DashboardDeps, 'ledger' | 'insights' | 'reconciliation'>,
  options: { shops: readonly ShopZone[]; since: Date },
): Promise<CashReport> {
  const found = await ports.insights.findOrders({ shops: options.shops, since: options.since, limit: SCAN_LIMIT });
  const [records, reconciliation] = await Promise.all([
    loadRecords(ports.ledger, found.ids),
    ports.reconciliation?.latestSummary() ?? Promise.resolve(undefined),
  ]);
  return { cod: codFigures(records), reconciliation, reconciliationWired: ports.reconciliation !== undefined };
}
