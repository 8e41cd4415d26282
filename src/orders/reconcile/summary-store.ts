/**
 * The latest reconciliation of each shop, kept in Redis for the dashboard and `relais reconcile --last`:
 * one hash `<prefix>:reconcile:latest`, a field per shop, each a JSON document with at most
 * MAX_STORED_FINDINGS findings. Memory stays bounded by the number of shops, whatever the volume.
 *
 * It also serves the dashboard's port (src/dashboard/ports.ts ReconciliationSummaryStore): the latest run of
 * every shop, merged into one summary with figures per day summed over the shops.
 */
import type { RedisClient } from '../../redis.js';
import type { ReconciliationSummary, ReconciliationSummaryStore } from '../../dashboard/ports.js';
import { emptyDay } from './figures.js';
import type { DayFigures, ShopReconciliation } from './types.js';

export const MAX_STORED_FINDINGS = 200;

export interface StoredShopReconciliation extends ShopReconciliation {
  /** How many findings the run had; `findings` keeps the first MAX_STORED_FINDINGS. */
  findingsTotal: number;
}

export class ReconcileSummaryStore implements ReconciliationSummaryStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private get key(): string {
    return `${this.prefix}:reconcile:latest`;
  }

  async save(summary: ShopReconciliation): Promise<void> {
    const stored: StoredShopReconciliation = {
      ...summary,
      findings: summary.findings.slice(0, MAX_STORED_FINDINGS),
      findingsTotal: summary.findings.length,
    };
    await this.redis.hset(this.key, summary.shopId, JSON.stringify(stored));
  }

  /** The latest run of each shop that has one, by shop id. */
  async latestByShop(): Promise<StoredShopReconciliation[]> {
    const all = await this.redis.hgetall(this.key);
    return Object.values(all)
      .map((text) => JSON.parse(text) as StoredShopReconciliation)
      .sort((a, b) => a.shopId.localeCompare(b.shopId));
  }

  async latestSummary(): Promise<ReconciliationSummary | undefined> {
    const shops = await this.latestByShop();
    if (shops.length === 0) return undefined;
    const days = new Map<string, DayFigures>();
    for (const shop of shops) {
      for (const day of shop.days) {
        const total = days.get(day.day) ?? emptyDay(day.day);
        days.set(day.day, total);
        total.codExpectedXof += day.codExpectedXof;
        total.codCollectedXof += day.codCollectedXof;
        total.heldInDisputeXof += day.heldInDisputeXof;
      }
    }
    const earliest = (values: string[]) => values.reduce((a, b) => (b < a ? b : a));
    const latest = (values: string[]) => values.reduce((a, b) => (b > a ? b : a));
    return {
      runAt: latest(shops.map((s) => s.runAt)),
      window: { from: earliest(shops.map((s) => s.window.from)), to: latest(shops.map((s) => s.window.to)) },
      shops: shops.map((shop) => ({
        shopId: shop.shopId,
        ordersChecked: shop.ordersChecked,
        shipmentsChecked: shop.shipmentsChecked,
        findings: findingsByKind(shop),
      })),
      days: [...days.values()]
        .sort((a, b) => a.day.localeCompare(b.day))
        .map((d) => ({
          day: d.day,
          codExpectedXof: d.codExpectedXof,
          codCollectedXof: d.codCollectedXof,
          heldInDisputeXof: d.heldInDisputeXof,
        })),
    };
  }
}

function findingsByKind(shop: StoredShopReconciliation): ReconciliationSummary['shops'][number]['findings'] {
  const byKind = new Map<string, { kind: string; count: number; repaired: number; note?: string }>();
  for (const finding of shop.findings) {
    const entry = byKind.get(finding.kind) ?? { kind: finding.kind, count: 0, repaired: 0 };
    byKind.set(finding.kind, entry);
    entry.count += 1;
    // A decided claim needs nothing more (its outcome is in the order's history): counted as settled, not pending.
    if (finding.action === 'repaired' || finding.action === 'already_requested' || finding.kind === 'dispute_decided')
      entry.repaired += 1;
  }
  const list = [...byKind.values()];
  if (shop.error) list.unshift({ kind: 'shop_unreadable', count: 1, repaired: 0, note: shop.error });
  if (shop.findingsTotal > shop.findings.length) {
    list.push({
      kind: 'more',
      count: shop.findingsTotal - shop.findings.length,
      repaired: 0,
      note: 'more findings than stored: run relais reconcile',
    });
  }
  return list;
}
