/**
 * A reconciliation report as a terminal table, JSON, or CSV.
 *
 * CSV: one file, RFC 4180 (comma separated, CRLF line ends, fields quoted when they hold a comma, a quote or a
 * line break, quotes doubled). One row per finding (`record` = finding) and one per day and shop (`record` =
 * day), with the columns of both; a spreadsheet filters on `record`. A text field beginning with = + - @ is
 * prefixed with ' so a spreadsheet never runs it as a formula (an order note is customer-controlled text).
 */
import type { DayFigures, Finding, ReconciliationReport, ShopReconciliation } from './types.js';

export function reportJson(report: ReconciliationReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

export const CSV_COLUMNS = [
  'record',
  'shop',
  'day',
  'kind',
  'action',
  'external_order_id',
  'order_name',
  'shipment_id',
  'shipment_status',
  'amount_xof',
  'detail',
  'advice',
  'orders',
  'shipped',
  'delivered',
  'cod_orders',
  'cod_expected_xof',
  'cod_collected_xof',
  'held_in_dispute_xof',
  'open_disputes',
] as const;
type CsvColumn = (typeof CSV_COLUMNS)[number];

export function csvField(value: string | number | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'number') return String(value);
  // Full-width ＝ ＋ － ＠ too: spreadsheets fold them to their ASCII forms and run the formula.
  const safe = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

function csvRow(values: Partial<Record<CsvColumn, string | number>>): string {
  return CSV_COLUMNS.map((column) => csvField(values[column])).join(',');
}

export function reportCsv(report: ReconciliationReport): string {
  const rows = [CSV_COLUMNS.join(',')];
  for (const shop of report.shops) {
    for (const f of shop.findings) {
      rows.push(
        csvRow({
          record: 'finding',
          shop: shop.shopId,
          kind: f.kind,
          action: f.action,
          external_order_id: f.externalOrderId,
          order_name: f.orderName,
          shipment_id: f.shipmentId,
          shipment_status: f.shipmentStatus,
          amount_xof: f.amountXof,
          detail: f.detail,
          advice: f.advice,
        }),
      );
    }
    if (shop.error)
      rows.push(
        csvRow({ record: 'finding', shop: shop.shopId, kind: 'shop_unreadable', action: 'alert', detail: shop.error }),
      );
    for (const d of shop.days) {
      rows.push(
        csvRow({
          record: 'day',
          shop: shop.shopId,
          day: d.day,
          orders: d.orders,
          shipped: d.shipped,
          delivered: d.delivered,
          cod_orders: d.codOrders,
          cod_expected_xof: d.codExpectedXof,
          cod_collected_xof: d.codCollectedXof,
          held_in_dispute_xof: d.heldInDisputeXof,
          open_disputes: d.openDisputes,
        }),
      );
    }
  }
  return `${rows.join('\r\n')}\r\n`;
}

// ---- terminal ----------------------------------------------------------------------------------------

const ACTION_LABEL: Record<Finding['action'], string> = {
  repaired: 'REPAIRED',
  already_requested: 'ALREADY QUEUED',
  would_repair: 'REPAIRABLE',
  alert: 'ALERT',
  info: 'info',
};

/** Columns padded to their widest cell; cells over `max` are cut with an ellipsis (the JSON keeps everything). */
export function textTable(header: string[], rows: string[][], max = 60): string {
  const cut = (cell: string) => (cell.length > max ? `${cell.slice(0, max - 1)}…` : cell);
  const all = [header, ...rows].map((row) => row.map(cut));
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(all[0] ?? []), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line)].join('\n');
}

const amount = (value: number) => value.toLocaleString('fr-FR').replace(/\u202f|\u00a0/g, ' ');

function daysTable(days: DayFigures[]): string {
  return textTable(
    ['day', 'orders', 'shipped', 'delivered', 'COD expected', 'collected', 'held in dispute', 'open claims'],
    days.map((d) => [
      d.day,
      String(d.orders),
      String(d.shipped),
      String(d.delivered),
      amount(d.codExpectedXof),
      amount(d.codCollectedXof),
      amount(d.heldInDisputeXof),
      String(d.openDisputes),
    ]),
  );
}

function shopText(shop: ShopReconciliation): string {
  const lines = [
    `== ${shop.shopId} (${shop.platform}): ${shop.ordersChecked} orders, ${shop.shipmentsChecked} shipments`,
  ];
  if (shop.error) lines.push(`   could not be reconciled: ${shop.error}`);
  if (shop.findings.length === 0 && !shop.error) lines.push('   every order matches its shipment.');
  if (shop.findings.length > 0) {
    lines.push(
      textTable(
        ['kind', 'action', 'order', 'shipment', 'what', 'advice'],
        shop.findings.map((f) => [
          f.kind,
          ACTION_LABEL[f.action],
          f.orderName ? `${f.orderName} ${f.externalOrderId ?? ''}`.trim() : (f.externalOrderId ?? ''),
          f.shipmentId ? `${f.shipmentId} ${f.shipmentStatus ?? ''}`.trim() : '',
          f.detail,
          f.advice ?? '',
        ]),
        70,
      ),
    );
  }
  if (shop.days.length > 0) lines.push('', daysTable(shop.days));
  return lines.join('\n');
}

export function reportText(report: ReconciliationReport): string {
  const header = `Reconciliation of orders from ${report.window.from} to ${report.window.to}${report.repair ? ' (repairing)' : ' (report only: --repair to fix what Relais can)'}`;
  const totals = countActions(report);
  const footer = [
    `${totals.findings} finding(s)`,
    totals.repaired > 0 ? `${totals.repaired} repaired` : undefined,
    totals.queued > 0 ? `${totals.queued} already queued by an earlier run` : undefined,
    totals.repairable > 0 ? `${totals.repairable} repairable with --repair` : undefined,
    totals.alerts > 0 ? `${totals.alerts} need a person` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
  return `${header}\n\n${report.shops.map(shopText).join('\n\n')}\n\n${footer}.\n`;
}

export function countActions(report: ReconciliationReport): {
  findings: number;
  repaired: number;
  queued: number;
  repairable: number;
  alerts: number;
} {
  const all = report.shops.flatMap((s) => s.findings);
  const count = (action: Finding['action']) => all.filter((f) => f.action === action).length;
  return {
    findings: all.length,
    repaired: count('repaired'),
    queued: count('already_requested'),
    repairable: count('would_repair'),
    alerts: count('alert') + report.shops.filter((s) => s.error).length,
  };
}
