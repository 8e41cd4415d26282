/**
 * The overview page (issue 29), the dashboard's first page: what happened to the orders of the window, day by
 * day, in pictures a merchant reads at a glance, each mark a link to the orders behind it, each chart followed by
 * its figures as a table (and as CSV).
 */
import type { Outcome } from '../ledger/order-insights.js';
import { OUTCOMES } from '../ledger/order-insights.js';
import { legend, lineChart, neighbourhoodMap, stackedBarChart, type MapPoint, type Series } from './charts.js';
import { formatXof, html, type SafeHtml } from './html.js';
import { ordersHref, type OrdersQuery } from './order-filters.js';
import { shopSelect, type ShopChoice } from './pages.js';
import { OVERVIEW_DAYS, type Overview } from './use-cases/overview.js';

export interface OverviewView {
  shops: ShopChoice[];
  shopId: string;
  days: number;
  /** The time zone the days are counted in, in words. */
  timeZone: string;
  overview: Overview;
}

export const OUTCOME_SERIES: Series[] = [
  { key: 'delivered', label: 'Delivered', colour: '#2e7d32' },
  { key: 'failed', label: 'Returned or failed', colour: '#c62828' },
  { key: 'cancelled', label: 'Cancelled', colour: '#9e9e9e' },
  { key: 'in_flight', label: 'In flight', colour: '#1565c0' },
  { key: 'held', label: 'Held', colour: '#f9a825' },
];

export const CASH_SERIES: Series[] = [
  { key: 'collected', label: 'Collected', colour: '#2e7d32' },
  { key: 'withCouriers', label: 'Still with couriers', colour: '#64b5f6' },
  { key: 'returned', label: 'Returned, not collected', colour: '#c62828' },
];
const BALANCE = { label: 'Collected since the window began', colour: '#14213d' };

const RATE_SERIES: Series[] = [
  { key: 'delivery', label: 'Delivery rate', colour: '#2e7d32' },
  { key: 'return', label: 'Return or failure rate', colour: '#c62828' },
];
const TIME_SERIES: Series[] = [
  { key: 'median', label: 'Median', colour: '#1565c0' },
  { key: 'p90', label: '90th percentile', colour: '#6a1b9a' },
];
const HOLD_COLOURS = ['#f9a825', '#ef6c00', '#8d6e63', '#ad1457', '#00838f', '#5e35b1', '#7cb342', '#546e7a'];

const count = (n: number) => String(Math.round(n));
const percent = (n: number) => `${Math.round(n)}%`;
const hours = (n: number) => (n >= 48 ? `${Math.round(n / 24)} d` : `${Math.round(n)} h`);
/** A share as a whole percentage, or undefined when there is nothing to divide by. */
export const share = (part: number, whole: number) => (whole > 0 ? (part / whole) * 100 : undefined);

/** Builds the links of one page: every filter carries the shop. */
function linker(view: OverviewView) {
  const shop = view.shopId;
  return (query: Partial<OrdersQuery>) => ordersHref({ shop, ...query });
}

function csvLink(view: OverviewView, chart: string): SafeHtml {
  const query = new URLSearchParams({ days: String(view.days), ...(view.shopId ? { shop: view.shopId } : {}) });
  return html`<a class="csv" href="/dashboard/overview/${chart}.csv?${query.toString()}">CSV</a>`;
}

function card(id: string, title: string, view: OverviewView, chart: SafeHtml, table: SafeHtml): SafeHtml {
  return html`<section class="card chart-card" id="${id}"><h2>${title} ${csvLink(view, id)}</h2>${chart}
    <details><summary>Table view</summary>${table}</details></section>`;
}

const cell = (href: string, text: string) => html`<td class="num"><a href="${href}">${text}</a></td>`;

function outcomesCard(view: OverviewView): SafeHtml {
  const to = linker(view);
  const rows = view.overview.outcomes;
  const totals = Object.fromEntries(OUTCOMES.map((o) => [o, rows.reduce((s, r) => s + r.counts[o], 0)])) as Record<
    Outcome,
    number
  >;
  const chart = stackedBarChart({
    id: 'outcomes-chart',
    title: 'Orders per day by outcome',
    description: `Orders received each day from ${view.overview.from} to ${view.overview.to}, stacked by what became of them.`,
    format: count,
    series: OUTCOME_SERIES,
    bars: rows.map((r) => ({ label: r.day, values: r.counts })),
    href: (i, key) => to({ group: key as Outcome, from: rows[i]!.day, to: rows[i]!.day }),
  });
  const table = html`<table><thead><tr><th>Day</th>${OUTCOME_SERIES.map((s) => html`<th class="num">${s.label}</th>`)}</tr></thead>
    <tbody>${rows.map((r) => html`<tr><td class="mono">${r.day}</td>${OUTCOMES.map((o) => cell(to({ group: o, from: r.day, to: r.day }), count(r.counts[o])))}</tr>`)}</tbody>
    <tfoot><tr><th>Total</th>${OUTCOMES.map((o) => cell(to({ group: o, from: view.overview.from, to: view.overview.to }), count(totals[o])))}</tr></tfoot></table>`;
  return card('outcomes', 'Orders per day by outcome', view, html`${legend(OUTCOME_SERIES)}${chart}`, table);
}

function cashCard(view: OverviewView): SafeHtml {
  const to = linker(view);
  const rows = view.overview.cash;
  const links = {
    collected: (day: string) => to({ group: 'delivered', dated: 'changed', from: day, to: day, cash: true }),
    withCouriers: (day: string) => to({ group: 'with_courier', from: day, to: day, cash: true }),
    returned: (day: string) => to({ group: 'returned', dated: 'changed', from: day, to: day, cash: true }),
  };
  const toDate = (day: string) =>
    to({ group: 'delivered', dated: 'changed', from: view.overview.from, to: day, cash: true });
  const chart = stackedBarChart({
    id: 'cash-chart',
    title: 'Cash for the goods per day',
    description:
      'Collected at the door (by delivery day), still with couriers (by order day), returned and not collected (by return day), with the running total collected.',
    format: formatXof,
    series: CASH_SERIES,
    bars: rows.map((r) => ({
      label: r.day,
      values: { collected: r.collected, withCouriers: r.withCouriers, returned: r.returned },
    })),
    href: (i, key) => links[key as keyof typeof links](rows[i]!.day),
    line: { ...BALANCE, values: rows.map((r) => r.collectedToDate), href: (i) => toDate(rows[i]!.day) },
  });
  const sum = (key: 'collected' | 'withCouriers' | 'returned') => rows.reduce((s, r) => s + r[key], 0);
  const whole = (key: keyof typeof links) =>
    key === 'withCouriers'
      ? to({ group: 'with_courier', from: view.overview.from, to: view.overview.to, cash: true })
      : to({
          group: key === 'collected' ? 'delivered' : 'returned',
          dated: 'changed',
          from: view.overview.from,
          to: view.overview.to,
          cash: true,
        });
  const table = html`<table><thead><tr><th>Day</th>${CASH_SERIES.map((s) => html`<th class="num">${s.label}</th>`)}<th class="num">${BALANCE.label}</th></tr></thead>
    <tbody>${rows.map((r) => html`<tr><td class="mono">${r.day}</td>${cell(links.collected(r.day), formatXof(r.collected))}${cell(links.withCouriers(r.day), formatXof(r.withCouriers))}${cell(links.returned(r.day), formatXof(r.returned))}${cell(toDate(r.day), formatXof(r.collectedToDate))}</tr>`)}</tbody>
    <tfoot><tr><th>Total</th>${cell(whole('collected'), formatXof(sum('collected')))}${cell(whole('withCouriers'), formatXof(sum('withCouriers')))}${cell(whole('returned'), formatXof(sum('returned')))}<td></td></tr></tfoot></table>`;
  return card(
    'cash',
    'Cash per day',
    view,
    html`${legend([...CASH_SERIES, { key: 'balance', ...BALANCE }])}${chart}`,
    table,
  );
}

function ratesCard(view: OverviewView): SafeHtml {
  const to = linker(view);
  const weeks = view.overview.weeks;
  const { from, to: last } = view.overview;
  // A week's orders, within the window (its first and last week may be cut by it).
  const weekOrders = (week: string, group: 'delivered' | 'failed') => {
    const end = new Date(Date.parse(`${week}T00:00:00Z`) + 6 * 86_400_000).toISOString().slice(0, 10);
    return to({ group, from: week < from ? from : week, to: end > last ? last : end });
  };
  const xs = weeks.map((w) => `week of ${w.week}`);
  const rates = lineChart({
    id: 'rates-chart',
    title: 'Delivery and return rate per week',
    description: "Of each week's orders handed to a courier, the share delivered, and the share returned or failed.",
    format: percent,
    max: 100,
    series: RATE_SERIES,
    xs,
    values: {
      delivery: weeks.map((w) => share(w.delivered, w.shipped)),
      return: weeks.map((w) => share(w.failed, w.shipped)),
    },
    href: (i, key) => weekOrders(weeks[i]!.week, key === 'delivery' ? 'delivered' : 'failed'),
  });
  const times = lineChart({
    id: 'times-chart',
    title: 'Time from order to delivery per week',
    description:
      "The median and the 90th percentile of the time from an order to its delivery, over each week's delivered orders.",
    format: hours,
    series: TIME_SERIES,
    xs,
    values: { median: weeks.map((w) => w.medianHours), p90: weeks.map((w) => w.p90Hours) },
    href: (i) => weekOrders(weeks[i]!.week, 'delivered'),
  });
  const optional = (n: number | undefined, format: (n: number) => string) => (n === undefined ? '—' : format(n));
  const table = html`<table><thead><tr><th>Week of</th><th class="num">Shipped</th><th class="num">Delivered</th><th class="num">Returned or failed</th><th class="num">Delivery rate</th><th class="num">Return rate</th><th class="num">Median time</th><th class="num">90th percentile</th></tr></thead>
    <tbody>${weeks.map((w) => html`<tr><td class="mono">${w.week}</td><td class="num">${w.shipped}</td>${cell(weekOrders(w.week, 'delivered'), count(w.delivered))}${cell(weekOrders(w.week, 'failed'), count(w.failed))}<td class="num">${optional(share(w.delivered, w.shipped), percent)}</td><td class="num">${optional(share(w.failed, w.shipped), percent)}</td><td class="num">${optional(w.medianHours, hours)}</td><td class="num">${optional(w.p90Hours, hours)}</td></tr>`)}</tbody></table>`;
  return card(
    'rates',
    'Delivery and return rate, time to delivery',
    view,
    html`<div class="grid2"><div>${legend(RATE_SERIES)}${rates}</div><div>${legend(TIME_SERIES)}${times}</div></div>`,
    table,
  );
}

function neighbourhoodsCard(view: OverviewView): SafeHtml {
  const to = linker(view);
  const { from, to: last, neighbourhoods } = view.overview;
  const href = (name: string) => to({ neighbourhood: name, from, to: last });
  const rate = (delivered: number, shipped: number) => share(delivered, shipped);
  const points: MapPoint[] = neighbourhoods.flatMap((n) =>
    n.point
      ? [
          {
            name: n.name,
            ...n.point,
            orders: n.orders,
            deliveryRate: n.shipped > 0 ? n.delivered / n.shipped : undefined,
            href: href(n.name),
          },
        ]
      : [],
  );
  // One city's neighbourhoods: a map of several cities would be dots at its corners.
  const lats = points.map((p) => p.lat);
  const oneCity = points.length >= 2 && Math.max(...lats) - Math.min(...lats) < 1.5;
  const table = html`<table><thead><tr><th>Neighbourhood</th><th class="num">Orders</th><th class="num">Delivery rate</th><th class="num">Return rate</th><th class="num">Average delivery price</th></tr></thead>
    <tbody>${
      neighbourhoods.length > 0
        ? neighbourhoods.map((n) => {
            const delivered = rate(n.delivered, n.shipped);
            const failed = rate(n.failed, n.shipped);
            return html`<tr><td><a href="${href(n.name)}">${n.name}</a></td>${cell(href(n.name), count(n.orders))}<td class="num">${delivered === undefined ? '—' : html`<a href="${to({ neighbourhood: n.name, group: 'delivered', from, to: last })}">${percent(delivered)}</a>`}</td><td class="num">${failed === undefined ? '—' : html`<a href="${to({ neighbourhood: n.name, group: 'failed', from, to: last })}">${percent(failed)}</a>`}</td><td class="num">${formatXof(n.averageDeliveryPrice)}</td></tr>`;
          })
        : html`<tr><td colspan="5" class="empty">No order with a neighbourhood in this window.</td></tr>`
    }</tbody></table>`;
  return html`<section class="card chart-card" id="neighbourhoods"><h2>Neighbourhoods with the most orders ${csvLink(view, 'neighbourhoods')}</h2>
    <div class="grid2"><div>${table}</div><div>${oneCity ? neighbourhoodMap('neighbourhood-map', points) : html`<p class="muted">${points.length < 2 ? 'No map: too few of these neighbourhoods have coordinates in the gazetteer.' : 'No map across several cities: choose a shop to see its city.'}</p>`}</div></div></section>`;
}

function holdsCard(view: OverviewView): SafeHtml {
  const to = linker(view);
  const { codes, days } = view.overview.holds;
  const series = codes.map((code, i) => ({
    key: code,
    label: code.replace(/_/g, ' '),
    colour: HOLD_COLOURS[i % HOLD_COLOURS.length]!,
  }));
  const chart = stackedBarChart({
    id: 'holds-chart',
    title: 'Holds by reason per day',
    description:
      'Orders Relais held for a person, by the day they were held and the reason, whether or not they were released since.',
    format: count,
    series,
    bars: days.map((d) => ({ label: d.day, values: d.counts })),
    href: (i, code) => to({ hold: code, from: days[i]!.day, to: days[i]!.day }),
  });
  const total = (code: string) => days.reduce((s, d) => s + (d.counts[code] ?? 0), 0);
  const table = html`<table><thead><tr><th>Reason</th><th class="num">Orders held</th></tr></thead>
    <tbody>${codes.length > 0 ? codes.map((code) => html`<tr><td class="mono">${code}</td>${cell(to({ hold: code, from: view.overview.from, to: view.overview.to }), count(total(code)))}</tr>`) : html`<tr><td colspan="2" class="empty">No order held in this window.</td></tr>`}</tbody></table>`;
  return card('holds', 'Holds by reason', view, html`${legend(series)}${chart}`, table);
}

export function overviewBody(view: OverviewView): SafeHtml {
  return html`<h1>Overview</h1>
  <form class="inline card noprint" method="get" action="/dashboard/overview">
    ${shopSelect(view.shops, view.shopId)}
    <label>Window<select name="days">${OVERVIEW_DAYS.map((d) => html`<option value="${d}" ${d === view.days ? 'selected' : ''}>last ${d} days</option>`)}</select></label>
    <button class="secondary" type="submit">Show</button>
  </form>
  <p class="muted">${view.overview.from} to ${view.overview.to}, days in ${view.timeZone}. Amounts are the goods' value the courier collects at the door, in francs CFA. Every bar, point and figure opens the orders behind it.</p>
  ${outcomesCard(view)}${cashCard(view)}${ratesCard(view)}${neighbourhoodsCard(view)}${holdsCard(view)}`;
}
