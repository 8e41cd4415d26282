/** The Money page: cash collected, owed and paid out per shop, and the last reconciliation's summary. */
import type { CodFigures } from './use-cases/order-figures.js';
import { formatTime, formatXof, html, type SafeHtml } from './html.js';
import type { ReconciliationSummary } from './ports.js';
import { type ShopChoice, shopSelect } from './pages.js';

export interface MoneyView {
  shops: ShopChoice[];
  shopId: string;
  days: number;
  cod: CodFigures;
  reconciliation: ReconciliationSummary | undefined;
  reconciliationWired: boolean;
}

function money(bucket: { orders: number; xof: number }): SafeHtml {
  return bucket.orders === 0
    ? html`<span class="muted">—</span>`
    : html`${formatXof(bucket.xof)} <span class="muted">(${bucket.orders})</span>`;
}

export function moneyBody(view: MoneyView): SafeHtml {
  const { cod } = view;
  return html`<h1>Cash on delivery &amp; reconciliation</h1>
  <form class="inline card" method="get" action="/dashboard/money">
    ${shopSelect(view.shops, view.shopId)}
    <label>Orders received in the last<select name="days">${[7, 30, 90].map((d) => html`<option value="${d}" ${d === view.days ? 'selected' : ''}>${d} days</option>`)}</select></label>
    <button class="secondary" type="submit">Show</button>
  </form>
  <h2>Cash on delivery, from the ledger</h2>
  <p class="muted">Collected: delivered orders, by delivery day. Expected: parcels with the couriers, by day received. Not dispatched: received or held orders. Returned: parcels that came back, cash not collected. Days in UTC; ${cod.ordersRead} order${cod.ordersRead === 1 ? '' : 's'} read.</p>
  <table>
    <thead><tr><th>Day</th><th class="num">Collected</th><th class="num">Expected</th><th class="num">Not dispatched</th><th class="num">Returned</th></tr></thead>
    <tbody>${
      cod.days.length > 0
        ? cod.days.map(
            (d) =>
              html`<tr><td class="mono">${d.day}</td><td class="num">${money(d.collected)}</td><td class="num">${money(d.expected)}</td><td class="num">${money(d.notDispatched)}</td><td class="num">${money(d.returned)}</td></tr>`,
          )
        : html`<tr><td colspan="5" class="empty">No cash-on-delivery order in this window.</td></tr>`
    }
    ${cod.days.length > 0 ? html`<tr><th>Total</th><th class="num">${money(cod.totals.collected)}</th><th class="num">${money(cod.totals.expected)}</th><th class="num">${money(cod.totals.notDispatched)}</th><th class="num">${money(cod.totals.returned)}</th></tr>` : ''}
    </tbody>
  </table>
  <h2>Reconciliation</h2>
  ${view.reconciliation ? reconciliationBody(view.reconciliation) : html`<div class="card empty">No reconciliation run yet.${view.reconciliationWired ? '' : ' Run relais reconcile to compare shop orders with shipments.'}</div>`}`;
}

function reconciliationBody(summary: ReconciliationSummary): SafeHtml {
  return html`<p class="muted">Last run ${formatTime(summary.runAt)}, over orders from ${formatTime(summary.window.from)} to ${formatTime(summary.window.to)}.</p>
  <table>
    <thead><tr><th>Shop</th><th class="num">Orders</th><th class="num">Shipments</th><th>Findings</th></tr></thead>
    <tbody>${summary.shops.map(
      (
        s,
      ) => html`<tr><td>${s.shopId}</td><td class="num">${s.ordersChecked}</td><td class="num">${s.shipmentsChecked}</td>
      <td>${s.findings.length === 0 ? html`<span class="badge ok">all matched</span>` : s.findings.map((f) => html`<div><span class="badge ${f.count > f.repaired ? 'warn' : 'ok'}">${f.kind.replace(/_/g, ' ')}</span> ${f.count} found, ${f.repaired} repaired${f.note ? html` <span class="muted">${f.note}</span>` : ''}</div>`)}</td></tr>`,
    )}</tbody>
  </table>
  ${
    summary.days.length > 0
      ? html`<h2>Per day (reconciliation)</h2><table>
      <thead><tr><th>Day</th><th class="num">COD expected</th><th class="num">Collected</th><th class="num">Held in dispute</th></tr></thead>
      <tbody>${[...summary.days].sort((a, b) => b.day.localeCompare(a.day)).map((d) => html`<tr><td class="mono">${d.day}</td><td class="num">${formatXof(d.codExpectedXof)}</td><td class="num">${formatXof(d.codCollectedXof)}</td><td class="num">${formatXof(d.heldInDisputeXof)}</td></tr>`)}</tbody></table>`
      : ''
  }`;
}
