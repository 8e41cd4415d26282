/**
 * The dashboard's "Service map" page (issue 24), mounted at /dashboard/service-map: for one served shop, which
 * of its country's gazetteer places its delivery service prices (under some spelling), which are at the fallback
 * tariff, which are not known yet; the spellings the service uses that the gazetteer does not put first; when the
 * map was learned; and how far a learning run started from the Connect page went. What `relais map show` prints.
 */
import { Router } from 'express';
import type { ShopConfig } from '../shops/shops.js';
import type { MapLearnStatus } from '../ops/map-learn-runs.js';
import type { MapCoverage } from '../ops/map-report.js';
import { formatTime, html, type SafeHtml } from './html.js';
import type { DashboardDeps } from './ports.js';
import type { Responses } from './responses.js';
import type { ShopScope } from './shop-scope.js';
import { shopSettingsHref } from './links.js';

export interface ServiceMapView {
  shops: { id: string; name: string }[];
  shop: ShopConfig;
  coverage: MapCoverage;
  progress?: MapLearnStatus;
  /** The shop's settings page, when it is a connected shop (file shops have none). */
  settingsHref?: string;
}

export function serviceMapRoutes(deps: DashboardDeps, scope: ShopScope, send: Responses['send']): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const requested = typeof req.query.shop === 'string' ? req.query.shop : '';
    const shop = requested ? deps.shops.get(requested) : deps.shops.all()[0];
    const [progress, connected] = await Promise.all([
      requested ? deps.connections?.mapStatus?.(requested) : undefined,
      requested ? deps.connections?.directory.list().then((all) => all.some((s) => s.id === requested)) : false,
    ]);
    const settingsHref = connected ? shopSettingsHref(requested) : undefined;
    if (!shop || !deps.serviceMapOf) {
      // A connected shop not served here yet: what its learning did, and the way to its settings.
      const body = html`<h1>Service map</h1>
        <p>${connected ? 'This shop is not served yet: its map shows here once it is switched on.' : 'No such shop is served.'}</p>
        ${progress ? progressCard(progress) : ''}${settingsHref ? html`<p><a href="${settingsHref}">The shop's settings</a></p>` : ''}`;
      send(req, res, { section: 'map', title: 'Service map' }, body);
      return;
    }
    const view: ServiceMapView = {
      shops: scope.choices(),
      shop,
      coverage: await deps.serviceMapOf(shop),
      ...(progress ? { progress } : {}),
      ...(settingsHref ? { settingsHref } : {}),
    };
    send(req, res, { section: 'map', title: `Service map · ${shop.name}` }, serviceMapBody(view));
  });
  return router;
}

const pct = (n: number, of: number) => (of === 0 ? '-' : `${((100 * n) / of).toFixed(1)}%`);

function progressCard(p: MapLearnStatus): SafeHtml {
  const state = { learning: 'Learning', learned: 'Learned', failed: 'Stopped' }[p.state];
  return html`<div class="card" id="learn-progress"><h2>Learning</h2>
    <p>${state} (${formatTime(p.at)}): ${p.asked} of ${p.toAsk} names asked, ${p.priced} priced, ${p.atFallback} at the fallback tariff${p.failed > 0 ? `, ${p.failed} refused` : ''}.</p>
    ${p.detail ? html`<p class="muted">${p.detail}</p>` : ''}</div>`;
}

export function serviceMapBody(view: ServiceMapView): SafeHtml {
  const { shop, coverage: c } = view;
  const learned = c.newest
    ? html`Learned from ${formatTime(c.oldest?.toISOString())} to ${formatTime(c.newest.toISOString())}; ${c.stale} names learned over a week ago are asked again by the next order or the weekly refresh.`
    : html`Not learned yet: switch the shop on from its settings page, or run <code>relais map learn --shop ${shop.id}</code>.`;
  return html`<h1>Service map <span class="muted">· ${shop.name}</span></h1>
  <form method="get" action="/dashboard/service-map"><label>Shop <select name="shop">${view.shops.map((s) => html`<option value="${s.id}" ${s.id === shop.id ? 'selected' : ''}>${s.name}</option>`)}</select></label><button class="secondary" type="submit">Show</button></form>
  <div class="card" id="coverage"><h2>Coverage</h2>
    <p>Of the ${c.places} gazetteer places of ${shop.country}, at ${shop.dispatch.baseUrl}:</p>
    <table><thead><tr><th>places</th><th>count</th><th>share</th></tr></thead><tbody>
      <tr><td>priced (under some spelling)</td><td>${c.priced}</td><td>${pct(c.priced, c.places)}</td></tr>
      <tr><td>at the fallback tariff (every spelling asked)</td><td>${c.atFallback}</td><td>${pct(c.atFallback, c.places)}</td></tr>
      <tr><td>not known yet</td><td>${c.unknown}</td><td>${pct(c.unknown, c.places)}</td></tr>
    </tbody></table>
    <p class="muted">${learned}</p></div>
  <div class="card" id="spellings"><h2>The service's own spellings</h2>
    ${
      c.ownSpellings.length === 0
        ? html`<p>None learned: the service prices places under the gazetteer's spelling, where it prices them.</p>`
        : html`<table><thead><tr><th>the service says</th><th>for the place</th></tr></thead><tbody>${c.ownSpellings.map((s) => html`<tr><td>${s.name}</td><td>${s.place}</td></tr>`)}</tbody></table>`
    }</div>
  ${view.progress ? progressCard(view.progress) : ''}
  ${view.settingsHref ? html`<p><a href="${view.settingsHref}">The shop's settings</a></p>` : ''}`;
}
