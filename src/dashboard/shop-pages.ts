/**
 * The Connect page (issue 17): the shops Relais serves, the two ways to connect one, and a connected shop's
 * settings. Secrets never come back in a page: the dispatch key field is always empty, with whether one is stored.
 */
import type { MapLearnStatus } from '../ops/map-learn-runs.js';
import { serviceMapHref, shopProfileHref, shopSettingsHref } from './links.js';
import type { ConnectedShop } from '../shops/shop-directory.js';
import { formatTime, html, safeHref, type SafeHtml } from './html.js';
import { COUNTRIES, type ShopSettingsView } from './use-cases/shop-settings.js';

export interface ShopsView {
  /** Shops served from the registry file (read-only here). */
  fileShops: { id: string; name: string; platform: string }[];
  connected: ConnectedShop[] | undefined;
  /** Why connecting is not available (no RELAIS_SECRET_KEYS); undefined when it is. */
  unavailable?: string;
  shopifyConfigured: boolean;
  wooConfigured: boolean;
  csrf?: string;
}

const csrfField = (csrf: string | undefined) => (csrf ? html`<input type="hidden" name="_csrf" value="${csrf}">` : '');

const where = (shop: ConnectedShop): string => {
  const part = shop.document[shop.platform] as Record<string, unknown> | undefined;
  const value = part?.domain ?? part?.url;
  return typeof value === 'string' ? value : '';
};

function connectedTable(view: ShopsView): SafeHtml {
  if (view.connected === undefined) return html``;
  if (view.connected.length === 0) return html`<div class="card empty">No shop connected yet: connect one below.</div>`;
  return html`<table>
    <thead><tr><th>Shop</th><th>Platform</th><th>Where</th><th>Status</th><th></th></tr></thead>
    <tbody>${view.connected.map(
      (shop) =>
        html`<tr><td class="mono">${shop.id}</td><td>${shop.platform}</td><td class="mono">${where(shop)}</td>
        <td>${shop.enabled ? html`<span class="badge ok">on</span>` : html`<span class="badge warn">off</span>`}</td>
        <td><a href="${shopSettingsHref(shop.id)}">Settings</a></td></tr>`,
    )}</tbody></table>`;
}

function connectForms(view: ShopsView): SafeHtml {
  if (view.unavailable) return html`<div class="card">${view.unavailable}</div>`;
  const id = html`<label>Relais shop id<input name="shopId" required pattern="[a-z0-9][a-z0-9-]*" placeholder="dakar-mode"></label>`;
  return html`<div class="card" id="connect-shopify"><h2>Connect a Shopify shop</h2>
    ${
      view.shopifyConfigured
        ? html`<form method="post" action="/dashboard/shops/connect/shopify">${csrfField(view.csrf)}${id}
          <label>Shop domain<input name="domain" required placeholder="dakar-mode.myshopify.com"></label>
          <button type="submit">Connect a Shopify shop</button></form>
          <p class="muted">You approve Relais's app on Shopify, then come back here to fill in the shop's settings.</p>`
        : html`<p class="muted">No Shopify app is configured: set SHOPIFY_API_KEY and SHOPIFY_API_SECRET (the app's client id and secret from Shopify's Dev Dashboard).</p>`
    }
  </div>
  <div class="card" id="connect-woocommerce"><h2>Connect a WooCommerce shop</h2>
    ${
      view.wooConfigured
        ? html`<form method="post" action="/dashboard/shops/connect/woocommerce">${csrfField(view.csrf)}${id}
          <label>Store URL<input name="storeUrl" required type="url" placeholder="https://boutique.example.ci"></label>
          <button type="submit">Connect a WooCommerce shop</button></form>
          <p class="muted">You approve Relais in your WordPress admin; WooCommerce hands Relais its keys.</p>`
        : html`<p class="muted">Connecting WooCommerce stores needs RELAIS_PUBLIC_URL (where the store sends Relais its keys).</p>`
    }
  </div>`;
}

export function shopsBody(view: ShopsView): SafeHtml {
  return html`<h1>Shops</h1>
  <h2>Connected shops</h2>
  ${connectedTable(view)}
  ${connectForms(view)}
  ${
    view.fileShops.length > 0
      ? html`<h2>From the registry file</h2><p class="muted">Edited in RELAIS_SHOPS_FILE (or moved here with relais shops import).</p>
      <table><thead><tr><th>Shop</th><th>Name</th><th>Platform</th></tr></thead>
      <tbody>${view.fileShops.map((s) => html`<tr><td class="mono">${s.id}</td><td>${s.name}</td><td>${s.platform}</td></tr>`)}</tbody></table>`
      : ''
  }`;
}

/** The page that sends the merchant on to approve Relais (a form may not redirect off-site under our CSP). */
export function continueBody(platform: string, url: string): SafeHtml {
  return html`<h1>Approve Relais on ${platform}</h1>
  <div class="card"><p>Relais is waiting for your approval. <a id="continue" href="${safeHref(url)}">Continue to ${platform}</a>.</p>
  <p class="muted">The link works for 10 minutes, in this browser only.</p></div>`;
}

const input = (label: string, name: string, value: string, extra: SafeHtml | string = '') =>
  html`<label>${label}<input name="${name}" value="${value}" ${extra}></label>`;

/** How far learning the service map went after "Check and switch on" (`relais map show` for the whole map). */
function serviceMapCard(s: MapLearnStatus): SafeHtml {
  const counts = `${s.asked} of ${s.toAsk} names asked: ${s.priced} priced, ${s.atFallback} at the fallback tariff${s.failed > 0 ? `, ${s.failed} refused` : ''}`;
  const state = { learning: 'Learning', learned: 'Learned', failed: 'Stopped' }[s.state];
  return html`<div class="card" id="service-map"><h2>Service map</h2>
    <p>${state} (${formatTime(s.at)}): ${counts}.</p>${s.detail ? html`<p class="muted">${s.detail}</p>` : ''}
    <p class="muted">Which names the delivery service prices, asked for every neighbourhood of the shop's country; <code>relais map learn --shop &lt;id&gt;</code> resumes it, <code>relais map show --shop &lt;id&gt;</code> shows it.</p></div>`;
}

export function shopSettingsBody(view: ShopSettingsView & { csrf?: string; problems?: string[] }): SafeHtml {
  const { shop, form } = view;
  const action = shopSettingsHref(shop.id);
  return html`<h1>${form.name || shop.id} <span class="muted">· ${shop.platform}</span> ${shop.enabled ? html`<span class="badge ok">on</span>` : html`<span class="badge warn">off</span>`}</h1>
  ${
    view.problems && view.problems.length > 0
      ? html`<div class="card" id="problems"><h2>Not saved</h2><ul>${view.problems.map((p) => html`<li>${p}</li>`)}</ul></div>`
      : ''
  }
  <form class="card settings" method="post" action="${action}">${csrfField(view.csrf)}
    <h2>Shop</h2>
    ${input('Name', 'name', form.name, 'required')}
    <label>Country<select name="country">${COUNTRIES.map((c) => html`<option value="${c}" ${c === form.country ? 'selected' : ''}>${c}</option>`)}</select></label>
    <h2>Pickup</h2>
    ${input('Neighbourhood', 'pickupNeighbourhood', form.pickupNeighbourhood, 'required')}
    ${input('Address', 'pickupAddress', form.pickupAddress, 'required')}
    ${input('Contact name', 'pickupContactName', form.pickupContactName, 'required')}
    ${input('Contact phone', 'pickupContactPhone', form.pickupContactPhone, 'required')}
    <h2>Policy</h2>
    <label>Cash-on-delivery payment methods (one per line)<textarea name="codGateways" rows="3">${form.codGateways}</textarea></label>
    <label>Dispatch cash-on-delivery orders<select name="dispatchCashOnDeliveryAt">
      <option value="created" ${form.dispatchCashOnDeliveryAt === 'created' ? 'selected' : ''}>when created</option>
      <option value="paid" ${form.dispatchCashOnDeliveryAt === 'paid' ? 'selected' : ''}>once paid</option>
    </select></label>
    <h2>Delivery service</h2>
    ${input('Service URL', 'dispatchBaseUrl', form.dispatchBaseUrl, 'required type="url"')}
    ${input('Tracking URL (optional)', 'dispatchTrackingUrl', form.dispatchTrackingUrl, 'type="url"')}
    ${input('Wire profile', 'dispatchProfile', form.dispatchProfile)}
    <label>API key ${view.hasApiKey ? html`<span class="muted">(stored; leave empty to keep it)</span>` : ''}<input name="dispatchApiKey" type="password" autocomplete="off" value=""></label>
    <button type="submit">Save settings</button>
  </form>
  <form class="card" method="post" action="${action}/${shop.enabled ? 'off' : 'on'}">${csrfField(view.csrf)}
    ${
      shop.enabled
        ? html`<p>Relais dispatches this shop's orders.</p><button class="secondary" type="submit">Switch off</button>`
        : html`<p>Relais runs <code>relais doctor</code>'s checks for this shop (dispatch key, pickup, the shop's credentials and webhooks) before it starts dispatching its orders.</p><button type="submit">Check and switch on</button>`
    }
  </form>
  ${view.serviceMap ? serviceMapCard(view.serviceMap) : ''}
  <p><a href="${serviceMapHref(shop.id)}">The shop's service map</a>: which neighbourhoods its delivery service prices.</p>
  <p><a id="service-names" href="${shopProfileHref(shop.id)}">The service's names</a>: webhooks refused and service states not mapped, learned from what the delivery service showed.</p>`;
}
