/**
 * The dashboard's pages, as functions from what the router read to HTML. No page reads Redis or a
 * request: they only render, so what a page can show is exactly what its view type holds (and no
 * view type holds a Secret or a shop configuration).
 */
import { describeDoorAmount } from '../domain/door-amount.js';
import type { DisputeView } from '../orders/disputes/index.js';
import type { OrderRecord, OrderState, TimelineEntry } from '../ledger/order-ledger.js';
import { cashFigure, type CashFigure, type OrderListing } from './use-cases/order-figures.js';
import { formatTime, formatXof, html, safeHref, type SafeHtml } from './html.js';
import { describeFilters, ORDER_DAYS, ordersHref, type OrdersQuery } from './order-filters.js';
import type { PricedNearby } from './use-cases/priced-nearby.js';

export const ORDER_STATES: readonly OrderState[] = [
  'received',
  'waiting',
  'held',
  'dispatching',
  'awaiting_ready',
  'ready',
  'in_delivery',
  'delivered',
  'delivery_failed',
  'returned',
  'cancelled',
  'cancel_refused',
];

export interface ShopChoice {
  id: string;
  name: string;
  platform: string;
}

/** The shop selector of a page's filter form: every shop Relais serves, or all of them at once (''). */
export function shopSelect(shops: readonly ShopChoice[], shopId: string): SafeHtml {
  return html`<label>Shop<select name="shop"><option value="" ${shopId === '' ? 'selected' : ''}>All shops (${shops.length})</option>${shops.map((s) => html`<option value="${s.id}" ${s.id === shopId ? 'selected' : ''}>${s.name} (${s.platform})</option>`)}</select></label>`;
}

export function orderHref(externalOrderId: string): string {
  return `/dashboard/orders/${encodeURIComponent(externalOrderId)}`;
}

const STATE_TONE: Partial<Record<string, 'ok' | 'warn' | 'bad' | 'info'>> = {
  delivered: 'ok',
  ready: 'info',
  awaiting_ready: 'info',
  in_delivery: 'info',
  dispatching: 'info',
  held: 'warn',
  delivery_failed: 'bad',
  cancel_refused: 'bad',
  returned: 'warn',
};

export function stateBadge(state: string): SafeHtml {
  return html`<span class="badge ${STATE_TONE[state] ?? ''}">${state.replace(/_/g, ' ')}</span>`;
}

const OUTCOME_TONE = (outcome: string): string =>
  /^(ok|success|created|done|2\d\d)/i.test(outcome)
    ? 'ok'
    : /(error|fail|refused|4\d\d|5\d\d)/i.test(outcome)
      ? 'bad'
      : '';

function csrfField(csrf: string | undefined): SafeHtml {
  return csrf ? html`<input type="hidden" name="_csrf" value="${csrf}">` : html``;
}

function trackingLink(record: OrderRecord): SafeHtml {
  const s = record.shipment;
  if (!s?.publicTrackingUrl) return html`<span class="muted">—</span>`;
  return html`<a href="${safeHref(s.publicTrackingUrl)}" rel="noopener noreferrer" target="_blank">${s.trackingCode ?? 'track'}</a>`;
}

// ----------------------------------------------------------------------------------------- orders

export interface OrdersView {
  shops: ShopChoice[];
  query: OrdersQuery;
  listing: OrderListing;
  /** The shop's name, for the Shop column shown when every shop is listed. */
  shopName(shopId: string): string;
}

function activeFilters(query: OrdersQuery): SafeHtml {
  const words = describeFilters(query);
  if (words.length === 0) return html``;
  return html`<p class="filters">Only orders ${words.join(', ')}. <a href="${ordersHref({ shop: query.shop, days: query.days })}">Show all</a></p>`;
}

export function ordersBody(view: OrdersView): SafeHtml {
  const { listing, query } = view;
  const allShops = query.shop === '';
  const rows = listing.records.map(
    (r) => html`<tr>
      <td><a href="${orderHref(r.meta.externalOrderId)}">${r.meta.orderName}</a><div class="muted mono">${r.meta.externalOrderId}</div></td>
      ${allShops ? html`<td>${view.shopName(r.meta.shopId)}</td>` : ''}
      <td class="muted nowrap">${formatTime(r.meta.firstSeenAt)}</td>
      <td>${stateBadge(r.state)}</td>
      <td>${r.neighbourhood?.name ?? html`<span class="muted">—</span>`}</td>
      <td class="num">${cashCell(cashFigure(r))}</td>
      <td>${r.shipment ? html`<span class="mono">${r.shipment.shipmentId}</span> ${stateBadge(r.shipment.status.toLowerCase())}` : html`<span class="muted">—</span>`}</td>
      <td>${trackingLink(r)}</td>
    </tr>`,
  );
  return html`<h1>Orders</h1>
  <form class="inline card" method="get" action="/dashboard/orders">
    ${shopSelect(view.shops, query.shop)}
    <label>State<select name="state"><option value="">all states</option>${ORDER_STATES.map((s) => html`<option value="${s}" ${s === query.state ? 'selected' : ''}>${s.replace(/_/g, ' ')}</option>`)}</select></label>
    <label>Received in the last<select name="days">${ORDER_DAYS.map((d) => html`<option value="${d}" ${d === query.days ? 'selected' : ''}>${d === 1 ? '24 hours' : `${d} days`}</option>`)}</select></label>
    <button class="secondary" type="submit">Show</button>
  </form>
  ${activeFilters(query)}
  <p class="muted">${listing.records.length} order${listing.records.length === 1 ? '' : 's'} shown, newest first${listing.truncated ? ' (more match: narrow the filter)' : ''}; ${listing.inWindow} in all.</p>
  <table>
    <thead><tr><th>Order</th>${allShops ? html`<th>Shop</th>` : ''}<th>Received</th><th>State</th><th>Neighbourhood</th><th class="num">Goods</th><th>Shipment</th><th>Tracking</th></tr></thead>
    <tbody>${rows.length > 0 ? rows : html`<tr><td colspan="${allShops ? 8 : 7}" class="empty">No orders${query.state ? html` in state ${query.state}` : ''} ${allShops ? 'in any shop' : 'for this shop'} in this window.</td></tr>`}</tbody>
  </table>`;
}

/** The goods a shipment carries; for an order not shipped yet, the outstanding, said so (door-amount.ts names them). */
function cashCell(figure: CashFigure) {
  return figure.is === 'outstanding'
    ? html`${formatXof(figure.xof)} <span class="muted">outstanding</span>`
    : formatXof(figure.xof);
}

function cashFact(figure: CashFigure) {
  return fact(figure.is === 'outstanding' ? 'Outstanding in the shop' : 'Goods', formatXof(figure.xof));
}

// ----------------------------------------------------------------------------------- order detail

export interface OrderDetailView {
  record: OrderRecord;
  shopName: string;
  timeline: TimelineEntry[];
  csrf?: string;
  suggestions: string[];
  /** Present only for an order with a shipment: disputes are opened on a shipment. */
  disputes?: OrderDisputesView;
}

export interface OrderDisputesView {
  claims: DisputeView[];
  /**
   * Where the claims come from: the service's list of now; the claims Relais recorded (no call made), with
   * whether the page may offer to ask the service; or those recorded because asking the service failed.
   */
  source: { kind: 'service' } | { kind: 'recorded'; canAsk: boolean } | { kind: 'unavailable'; why: string };
}

/** The order page, asking the delivery service for the shipment's claims. */
export function askForClaimsHref(externalOrderId: string): string {
  return `${orderHref(externalOrderId)}?claims=ask#disputes`;
}

/** Reasons the spec gives as examples; the operator may write any other. */
const DISPUTE_REASONS = ['damaged', 'lost', 'never delivered'];

export function disputesPath(externalOrderId: string): string {
  return `${orderHref(externalOrderId)}/disputes`;
}

function claimsSource(externalOrderId: string, source: OrderDisputesView['source']): SafeHtml {
  switch (source.kind) {
    case 'service':
      return html`<p class="muted">As the delivery service lists them now.</p>`;
    case 'recorded':
      return html`<p class="muted">As Relais recorded them: opened from Relais, or seen by a reconciliation run.
        ${source.canAsk ? html`<a href="${askForClaimsHref(externalOrderId)}">Ask the delivery service now</a>` : 'The service is asked again once the order has settled.'}</p>`;
    case 'unavailable':
      return html`<div class="reason">Could not ask the delivery service: ${source.why}. Shown as Relais recorded them.</div>`;
  }
}

function claimStatusBadge(status: string): SafeHtml {
  const upper = status.toUpperCase();
  const tone = upper === 'OPEN' ? 'warn' : upper === 'COMPENSATED' ? 'ok' : upper === 'REJECTED' ? 'bad' : 'info';
  return html`<span class="badge ${tone}">${status}</span>`;
}

function claimRow(claim: DisputeView): SafeHtml {
  const open = claim.status.toUpperCase() === 'OPEN';
  return html`<tr>
    <td class="muted mono nowrap">${formatTime(claim.createdAt)}<div>${claim.claimId ?? ''}</div></td>
    <td><strong>${claim.reason}</strong>${claim.description ? html`<div class="muted pre">${claim.description}</div>` : ''}</td>
    <td>${claim.claimantId ?? html`<span class="muted">—</span>`}<div class="muted">${claim.claimantType ?? ''}</div></td>
    <td>${claimStatusBadge(claim.status)}</td>
    <td>${
      open
        ? html`<span class="muted">settlement held until the service decides</span>`
        : html`${claim.outcome ?? html`<span class="muted">no outcome given</span>`}${claim.decidedAt ? html`<div class="muted nowrap">decided ${formatTime(claim.decidedAt)}</div>` : ''}`
    }</td>
  </tr>`;
}

export function disputesCard(record: OrderRecord, view: OrderDisputesView, csrf: string | undefined): SafeHtml {
  const id = record.meta.externalOrderId;
  return html`<div class="card" id="disputes"><h2>Disputes</h2>
    ${claimsSource(id, view.source)}
    <table>
      <thead><tr><th>Opened</th><th>Reason</th><th>Claimant</th><th>Status</th><th>Outcome</th></tr></thead>
      <tbody>${view.claims.length > 0 ? view.claims.map(claimRow) : html`<tr><td colspan="5" class="empty">No dispute on this shipment.</td></tr>`}</tbody>
    </table>
    <h2>Open a dispute</h2>
    <form class="inline" method="post" action="${disputesPath(id)}">
      ${csrfField(csrf)}
      <label>Reason<input name="reason" required maxlength="200" list="dispute-reasons" placeholder="e.g. damaged"></label>
      <datalist id="dispute-reasons">${DISPUTE_REASONS.map((r) => html`<option value="${r}">`)}</datalist>
      <label>Claimant id<input name="claimantId" required maxlength="200" placeholder="who reports, e.g. a staff id"></label>
      <label>Claimant type<input name="claimantType" maxlength="100" list="claimant-types" value="seller"></label>
      <datalist id="claimant-types"><option value="seller"></datalist>
      <label class="wide">Description<textarea name="description" required maxlength="4000" rows="3" placeholder="What happened, what the customer said, what you expect"></textarea></label>
      <button class="primary" type="submit">Open dispute</button>
      <span class="muted">The service holds the shipment's cash settlement until it decides the claim.</span>
    </form>
  </div>`;
}

function fact(label: string, value: SafeHtml | string | number | undefined): SafeHtml {
  return html`<dt>${label}</dt><dd>${value === undefined || value === '' ? html`<span class="muted">—</span>` : value}</dd>`;
}

/** One button per priced place near the address: the alias from the customer's words to it, then a replay. */
function pricedAliasForms(record: OrderRecord, csrf: string | undefined, offer: PricedNearby): SafeHtml {
  const action = `/dashboard/held/${encodeURIComponent(record.meta.externalOrderId)}/alias`;
  return html`<div class="priced-nearby"><span class="muted">Places near the address the service prices:</span>
    ${offer.places.map(
      (p) => html`<form class="inline" method="post" action="${action}">
      ${csrfField(csrf)}<input type="hidden" name="text" value="${offer.text}"><input type="hidden" name="neighbourhood" value="${p.name}">
      <button class="primary" type="submit">Send "${offer.text}" as ${p.name} (${p.km} km)</button></form>`,
    )}</div>`;
}

export function fixForms(record: OrderRecord, csrf: string | undefined, suggestions: string[]): SafeHtml {
  const id = record.meta.externalOrderId;
  const listId = `suggest-${id.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  return html`<form class="inline" method="post" action="/dashboard/held/${encodeURIComponent(id)}/alias">
      ${csrfField(csrf)}
      <label>Customers write<input name="text" required maxlength="120" placeholder="e.g. Pyrotechnie"></label>
      <label>which means the neighbourhood<input name="neighbourhood" required maxlength="120" list="${listId}" placeholder="e.g. Sacré-Cœur"></label>
      <datalist id="${listId}">${suggestions.map((s) => html`<option value="${s}">`)}</datalist>
      <button class="primary" type="submit">Add alias and replay</button>
    </form>
    <form class="inline" method="post" action="/dashboard/held/${encodeURIComponent(id)}/replay">
      ${csrfField(csrf)}
      <button class="secondary" type="submit">Replay as it is</button>
      <span class="muted">(after correcting the address in the shop, or once the service is back)</span>
    </form>`;
}

function dropoffLines(record: OrderRecord): SafeHtml | undefined {
  const d = record.order?.dropoff;
  if (!d) return undefined;
  const present = (p: string | undefined): p is string => Boolean(p && p.trim());
  const who = [d.name, d.company].filter(present);
  // City and province are often the same word ("Dakar, Dakar"): said once.
  const where = [d.address1, d.address2, d.city, d.province, d.countryCode]
    .filter(present)
    .filter((p, i, all) => all.indexOf(p) === i);
  return html`${who.join(', ')}${who.length > 0 && where.length > 0 ? html`<br>` : ''}${where.join(', ')}`;
}

export function orderDetailBody(view: OrderDetailView): SafeHtml {
  const { record } = view;
  const { meta, order, shipment, quote, delivery } = record;
  const writtenSteps = Object.entries(delivery?.written.steps ?? {});
  return html`<h1>${meta.orderName} ${stateBadge(record.state)}</h1>
  <p class="muted">${view.shopName} · ${meta.platform} · <span class="mono">${meta.externalOrderId}</span> · ${record.state} since ${formatTime(record.stateChangedAt)}</p>
  ${
    record.hold
      ? html`<div class="card"><h2>Held</h2>
        <div class="reason"><strong>${record.hold.code}</strong>: ${record.hold.message}<div class="muted">since ${formatTime(record.hold.at)}</div></div>
        ${record.state === 'held' ? fixForms(record, view.csrf, view.suggestions) : ''}</div>`
      : ''
  }
  <div class="grid2">
    <div class="card"><h2>Order</h2><dl class="facts">
      ${fact('Shop order id', meta.orderId)}
      ${fact('Received', formatTime(meta.firstSeenAt))}
      ${fact('Payment', order?.paymentFamily.replace(/_/g, ' '))}
      ${fact('Total', order ? formatXof(order.total) : undefined)}
      ${cashFact(cashFigure(record))}
      ${fact('At the door', record.door ? describeDoorAmount(record.door) : undefined)}
      ${fact('Deliver to', dropoffLines(record) ?? html`<span class="muted">personal data removed or not received</span>`)}
      ${fact('Neighbourhood', record.neighbourhood ? `${record.neighbourhood.name} (confidence ${record.neighbourhood.confidence})` : undefined)}
      ${fact('Items', order ? order.lineItems.map((l) => `${l.quantity} × ${l.name}`).join(', ') : undefined)}
      ${fact('Replays', meta.generation)}
    </dl></div>
    <div class="card"><h2>Shipment</h2><dl class="facts">
      ${fact('Shipment', shipment ? html`<span class="mono">${shipment.shipmentId}</span>` : undefined)}
      ${fact('Status', shipment ? stateBadge(shipment.status.toLowerCase()) : undefined)}
      ${fact('Tracking', shipment?.publicTrackingUrl ? trackingLink(record) : shipment?.trackingCode)}
      ${fact('Goods it carries', shipment?.orderAmountXof !== undefined ? formatXof(shipment.orderAmountXof) : undefined)}
      ${fact('Created', shipment ? formatTime(shipment.createdAt) : undefined)}
      ${fact('Marked ready', shipment?.markedReadyAt ? formatTime(shipment.markedReadyAt) : undefined)}
      ${fact('Quote', quote ? html`<span class="mono">${quote.quoteId}</span> · ${formatXof(quote.total)} · expires ${formatTime(quote.expiresAt)}` : undefined)}
    </dl></div>
  </div>
  <div class="card"><h2>Delivery progress</h2>
  ${
    delivery
      ? html`<dl class="facts">
        ${fact('Step', stateBadge(delivery.step))}
        ${fact('Service status', delivery.serviceStatus)}
        ${fact('Updated', formatTime(delivery.updatedAt))}
        ${fact('Written into the shop', html`${delivery.written.dispatch ? html`dispatch (tracking) at ${formatTime(delivery.written.dispatch)}<br>` : ''}${writtenSteps.map(([step, at]) => html`${step.replace(/_/g, ' ')} at ${formatTime(at)}<br>`)}${delivery.written.paid ? html`marked paid at ${formatTime(delivery.written.paid)}` : ''}${!delivery.written.dispatch && writtenSteps.length === 0 && !delivery.written.paid ? html`<span class="muted">nothing yet</span>` : ''}`)}
        ${fact('Problem written on the order', delivery.problem)}
        ${fact('Unknown service states seen', delivery.unknownStates?.join(', '))}
      </dl>`
      : html`<p class="muted">No delivery news yet${shipment ? ': the courier has not moved the parcel' : ''}.</p>`
  }
  </div>
  ${view.disputes ? disputesCard(record, view.disputes, view.csrf) : ''}
  <h2>Timeline</h2>
  <table>
    <thead><tr><th>Time</th><th>System</th><th>Operation</th><th>Outcome</th><th class="num">ms</th><th>Detail</th></tr></thead>
    <tbody>${
      view.timeline.length > 0
        ? view.timeline.map(
            (t) => html`<tr>
          <td class="muted mono nowrap">${formatTime(t.at)}</td><td>${t.system}</td><td class="mono">${t.operation}</td>
          <td><span class="badge ${OUTCOME_TONE(t.outcome)}">${t.outcome}</span></td>
          <td class="num">${t.ms ?? ''}</td><td>${t.detail ?? ''}</td></tr>`,
          )
        : html`<tr><td colspan="6" class="empty">No call made for this order yet.</td></tr>`
    }</tbody>
  </table>`;
}

// ----------------------------------------------------------------------------------------- held

export interface HeldView {
  held: { record: OrderRecord; shopName: string; suggestions: string[]; pricedNearby?: PricedNearby }[];
  /** Shipments with no recorded markReady past the watchdog bound (held or not). */
  unready?: { record: OrderRecord; shopName: string; since: Date }[];
  csrf?: string;
}

function unreadyCard(unready: NonNullable<HeldView['unready']>): SafeHtml {
  if (unready.length === 0) return html``;
  return html`<div class="card" id="unready"><h2>Shipments not marked ready <span class="badge bad">${unready.length}</span></h2>
    <p class="muted">No courier is offered these: Relais has no markReady answer for them, whatever the service calls their state. Replay a held one to try markReady again, or mark it ready in the delivery service's console.</p>
    <table><thead><tr><th>Order</th><th>Shop</th><th>Shipment</th><th>Service state</th><th>Unready since</th><th>Order state</th></tr></thead>
    <tbody>${unready.map(({ record, shopName, since }) => html`<tr><td><a href="${orderHref(record.meta.externalOrderId)}">${record.meta.orderName}</a></td><td>${shopName}</td><td class="mono">${record.shipment?.shipmentId ?? ''}</td><td class="mono">${record.shipment?.status ?? ''}</td><td>${formatTime(since.toISOString())}</td><td>${stateBadge(record.state)}</td></tr>`)}</tbody></table></div>`;
}

export function heldBody(view: HeldView): SafeHtml {
  if (view.held.length === 0) {
    return html`<h1>Held orders</h1>${unreadyCard(view.unready ?? [])}<div class="card empty">No held order. Everything received was dispatched or is waiting for the shop.</div>`;
  }
  return html`<h1>Held orders <span class="badge warn">${view.held.length}</span></h1>
  ${unreadyCard(view.unready ?? [])}
  <p class="muted">Each order waits for a person. Fix the cause, then replay it: the replay never creates a second shipment.</p>
  ${view.held.map(
    ({
      record,
      shopName,
      suggestions,
      pricedNearby,
    }) => html`<div class="card" id="${`held-${record.meta.externalOrderId.replace(/[^A-Za-z0-9_-]/g, '-')}`}">
      <h2><a href="${orderHref(record.meta.externalOrderId)}">${record.meta.orderName}</a> <span class="muted">· ${shopName} · held since ${formatTime(record.hold?.at)}</span></h2>
      <div class="reason"><strong>${record.hold?.code ?? 'held'}</strong>: ${record.hold?.message ?? 'no reason recorded'}</div>
      <dl class="facts">
        ${fact('Deliver to', dropoffLines(record))}
        ${cashFact(cashFigure(record))}
        ${suggestions.length > 0 ? fact('Closest neighbourhoods', suggestions.join(', ')) : ''}
      </dl>
      ${pricedNearby ? pricedAliasForms(record, view.csrf, pricedNearby) : ''}
      ${fixForms(record, view.csrf, suggestions)}
    </div>`,
  )}`;
}

export function notFoundBody(what: string): SafeHtml {
  return html`<h1>Not found</h1><div class="card">${what}</div>`;
}
