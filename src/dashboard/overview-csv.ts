/**
 * Each overview chart's figures as CSV (RFC 4180), with reconciliation's escaping: text a spreadsheet would run
 * as a formula is prefixed with ' (a neighbourhood or a hold reason comes, in the end, from customer text).
 */
import { csvField } from '../orders/reconcile/output.js';
import { OUTCOMES } from '../ledger/order-insights.js';
import { share } from './overview-page.js';
import type { Overview } from './use-cases/overview.js';

export const OVERVIEW_CHARTS = ['outcomes', 'cash', 'rates', 'neighbourhoods', 'holds'] as const;
export type OverviewChart = (typeof OVERVIEW_CHARTS)[number];

type Row = Array<string | number | undefined>;

const rounded = (n: number | undefined) => (n === undefined ? undefined : Math.round(n * 10) / 10);

function rowsOf(chart: OverviewChart, o: Overview): Row[] {
  switch (chart) {
    case 'outcomes':
      return [['day', ...OUTCOMES], ...o.outcomes.map((d) => [d.day, ...OUTCOMES.map((k) => d.counts[k])])];
    case 'cash':
      return [
        ['day', 'collected_xof', 'with_couriers_xof', 'returned_xof', 'collected_to_date_xof'],
        ...o.cash.map((d) => [d.day, d.collected, d.withCouriers, d.returned, d.collectedToDate]),
      ];
    case 'rates':
      return [
        [
          'week',
          'shipped',
          'delivered',
          'returned_or_failed',
          'delivery_rate_pct',
          'return_rate_pct',
          'median_hours',
          'p90_hours',
        ],
        ...o.weeks.map((w) => [
          w.week,
          w.shipped,
          w.delivered,
          w.failed,
          rounded(share(w.delivered, w.shipped)),
          rounded(share(w.failed, w.shipped)),
          rounded(w.medianHours),
          rounded(w.p90Hours),
        ]),
      ];
    case 'neighbourhoods':
      return [
        ['neighbourhood', 'orders', 'shipped', 'delivered', 'returned_or_failed', 'average_delivery_price_xof'],
        ...o.neighbourhoods.map((n) => [n.name, n.orders, n.shipped, n.delivered, n.failed, n.averageDeliveryPrice]),
      ];
    case 'holds':
      return [
        ['day', 'reason', 'orders'],
        ...o.holds.days.flatMap((d) => Object.entries(d.counts).map(([code, orders]) => [d.day, code, orders])),
      ];
  }
}

export function overviewCsv(chart: OverviewChart, overview: Overview): string {
  return rowsOf(chart, overview)
    .map((row) => row.map(csvField).join(','))
    .join('\r\n')
    .concat('\r\n');
}
