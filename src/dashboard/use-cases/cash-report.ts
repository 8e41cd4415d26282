/** The cash page: a shop's cash-on-delivery figures per day from the ledger, and the latest reconciliation run. */
import { codFigures, loadRecords, SCAN_LIMIT, type CodFigures } from '../data.js';
import type { DashboardDeps, ReconciliationSummary } from '../ports.js';

export interface CashReport {
  cod: CodFigures;
  /** Undefined until a reconciliation run has been recorded. */
  reconciliation: ReconciliationSummary | undefined;
  /** Whether reconciliation summaries are wired in at all (the page then says how to run one). */
  reconciliationWired: boolean;
}

/** The orders first seen since `since`; none without a shop (a registry with no shop). */
export async function cashReport(
  ports: Pick<DashboardDeps, 'ledger' | 'reconciliation'>,
  options: { shopId: string | undefined; since: Date },
): Promise<CashReport> {
  const ids = options.shopId
    ? await ports.ledger.listShopOrders(options.shopId, { since: options.since, limit: SCAN_LIMIT })
    : [];
  const [records, reconciliation] = await Promise.all([
    loadRecords(ports.ledger, ids),
    ports.reconciliation?.latestSummary() ?? Promise.resolve(undefined),
  ]);
  return { cod: codFigures(records), reconciliation, reconciliationWired: ports.reconciliation !== undefined };
}
