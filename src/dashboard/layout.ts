/**
 * The page shell: navigation, flash message, the stylesheet, and the security headers of every page.
 *
 * The pages need no script at all, so the Content-Security-Policy allows none: even if some value ever
 * escaped escaping, a browser would refuse to run it. The one inline stylesheet is allowed by its hash.
 */
import { createHash } from 'node:crypto';
import type { Response } from 'express';
import type { Flash } from './auth.js';
import { html, safeHref, SafeHtml } from './html.js';

const STYLES = `
:root{--ink:#1d2430;--muted:#5c6778;--line:#dde2ea;--bg:#f5f7fa;--card:#fff;--accent:#0b6e4f;--warn:#a15c00;--bad:#b42318;--info:#1849a9}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
header{background:#14213d;color:#fff;display:flex;align-items:center;gap:24px;padding:10px 24px}
header .brand{font-weight:700;font-size:16px;letter-spacing:.02em}
header nav{display:flex;gap:4px;flex:1}
header nav a{color:#d6def0;text-decoration:none;padding:6px 10px;border-radius:6px}
header nav a.on,header nav a:hover{background:#24345c;color:#fff}
header form{margin:0}
header button{background:transparent;color:#d6def0;border:1px solid #3a4b75;border-radius:6px;padding:4px 10px;cursor:pointer}
main{padding:20px 24px;max-width:1280px}
h1{font-size:20px;margin:0 0 14px}
h2{font-size:16px;margin:22px 0 10px}
a{color:var(--info)}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin-bottom:14px}
.card>h2:first-child{margin-top:0}
table{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line);border-radius:8px}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em;background:#fafbfc}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr:last-child td{border-bottom:0}
.muted{color:var(--muted)}
.nowrap{white-space:nowrap}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;background:#eef1f6;color:var(--muted);white-space:nowrap}
.badge.ok{background:#e3f4ec;color:var(--accent)}
.badge.warn{background:#fdf0dc;color:var(--warn)}
.badge.bad{background:#fde7e5;color:var(--bad)}
.badge.info{background:#e6eefc;color:var(--info)}
.flash{padding:10px 14px;border-radius:8px;margin-bottom:14px;border:1px solid}
.flash.ok{background:#e3f4ec;border-color:#9fd8bf;color:#064e37}
.flash.error{background:#fde7e5;border-color:#f3b3ad;color:#7a1a12}
.reason{background:#fff7ea;border:1px solid #f1d3a1;border-radius:6px;padding:8px 10px;margin:8px 0}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0}
form.inline{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-end;margin:8px 0 0}
label{display:flex;flex-direction:column;gap:2px;font-size:12px;color:var(--muted)}
input,select{font:inherit;padding:6px 8px;border:1px solid #c5ccd8;border-radius:6px;min-width:180px;background:#fff}
textarea{font:inherit;padding:6px 8px;border:1px solid #c5ccd8;border-radius:6px;background:#fff;width:100%;min-height:4.5em;resize:vertical}
label.wide{flex:1 1 100%}
.pre{white-space:pre-wrap}
button.primary,button.secondary{font:inherit;padding:7px 14px;border-radius:6px;cursor:pointer;border:1px solid var(--accent)}
button.primary{background:var(--accent);color:#fff}
button.secondary{background:#fff;color:var(--accent)}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(360px,1fr));gap:14px}
.login{max-width:380px;margin:80px auto}
.login input{width:100%}
.empty{padding:18px;text-align:center;color:var(--muted)}
.filters{background:#e6eefc;border:1px solid #c4d4f5;border-radius:6px;padding:8px 10px}
svg.chart{width:100%;height:auto;display:block}
svg.map{width:100%;max-width:420px;height:auto;display:block;margin:0 auto}
svg .grid{stroke:#e6e9ef;stroke-width:1}
svg .axis{fill:#5c6778;font-size:11px}
svg .line{fill:none;stroke-width:2}
svg .map-bg{fill:#f1f5ee;stroke:#dde2ea}
svg a:hover rect,svg a:hover circle{opacity:.75}
ul.legend{display:flex;flex-wrap:wrap;gap:4px 16px;list-style:none;margin:0 0 6px;padding:0;font-size:12.5px;color:var(--muted)}
a.csv{font-size:12px;font-weight:400;margin-left:8px}
details{margin-top:8px}
summary{cursor:pointer;color:var(--info);font-size:13px}
@media print{header,.noprint,a.csv,summary{display:none}body{background:#fff}main{padding:0;max-width:none}.card{break-inside:avoid;border:0;padding:0}a{color:inherit;text-decoration:none}}
`;

const STYLE_HASH = createHash('sha256').update(STYLES).digest('base64');
/** A trusted constant, inserted as it is: escaping would change the bytes the CSP hash covers. */
const STYLE_TAG = new SafeHtml(`<style>${STYLES}</style>`);
/** What every full page's <head> starts with: not indexed by search engines, no favicon request. */
const HEAD_META = new SafeHtml(`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">`);

/** No script, no plugin, no framing, forms only back to us; the stylesheet by hash. */
export const PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${STYLE_HASH}'`,
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/**
 * bull-board's own single-page app: its scripts and stylesheet are files served from the same path,
 * its markup carries style attributes, and it calls its JSON API with fetch.
 */
export const QUEUES_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
].join('; ');

export function securityHeaders(res: Response, csp: string): void {
  res.setHeader('Content-Security-Policy', csp);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'same-origin');
  // Pages show personal data and order state: never kept by a shared cache or the browser's history cache.
  res.setHeader('Cache-Control', 'no-store');
}

export type Section = 'overview' | 'orders' | 'held' | 'money' | 'map' | 'shops' | 'queues' | 'none';

export interface PageContext {
  section: Section;
  title: string;
  /** Present for cookie sessions (a logout button needs it); absent for bearer requests. */
  csrf?: string;
  flash?: Flash;
  heldCount?: number;
  /** Seconds after which the browser reloads the page (an order still moving through the pipeline). */
  refreshSeconds?: number;
  /** Where the browser goes on at once (the Connect page's way to a shop's approval screen: see shop-routes.ts). */
  refreshUrl?: string;
}

export function page(ctx: PageContext, body: SafeHtml): string {
  const link = (section: Section, href: string, label: string, extra?: string) =>
    html`<a href="${href}" class="${ctx.section === section ? 'on' : ''}">${label}${extra ? html` <span class="badge warn">${extra}</span>` : ''}</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
${HEAD_META}
${ctx.refreshSeconds ? html`<meta http-equiv="refresh" content="${ctx.refreshSeconds}">` : ''}
${ctx.refreshUrl ? html`<meta http-equiv="refresh" content="${`0;url=${safeHref(ctx.refreshUrl)}`}">` : ''}
<title>${ctx.title} · Relais</title>
${STYLE_TAG}
</head>
<body>
<header>
  <span class="brand">Relais</span>
  <nav>
    ${link('overview', '/dashboard/overview', 'Overview')}
    ${link('orders', '/dashboard/orders', 'Orders')}
    ${link('held', '/dashboard/held', 'Held orders', ctx.heldCount ? String(ctx.heldCount) : undefined)}
    ${link('money', '/dashboard/money', 'Cash & reconciliation')}
    ${link('map', '/dashboard/service-map', 'Service map')}
    ${link('shops', '/dashboard/shops', 'Shops')}
    ${link('queues', '/dashboard/queues', 'Queues')}
  </nav>
  ${ctx.csrf ? html`<form method="post" action="/dashboard/logout"><input type="hidden" name="_csrf" value="${ctx.csrf}"><button type="submit">Log out</button></form>` : ''}
</header>
<main>
${ctx.flash ? html`<div class="flash ${ctx.flash.kind}" role="status">${ctx.flash.message}</div>` : ''}
${body}
</main>
</body>
</html>`.value;
}

/** The login page has no navigation: nothing behind it is reachable yet. */
export function loginPage(options: { next: string; error?: string; notice?: string }): string {
  return html`<!doctype html>
<html lang="en">
<head>
${HEAD_META}
<title>Log in · Relais</title>
${STYLE_TAG}
</head>
<body>
<main class="login">
  <div class="card">
    <h1>Relais dashboard</h1>
    ${options.notice ? html`<div class="flash ok" role="status">${options.notice}</div>` : ''}
    ${options.error ? html`<div class="flash error" role="alert">${options.error}</div>` : ''}
    <form method="post" action="/dashboard/login">
      <input type="hidden" name="next" value="${options.next}">
      <label>Dashboard token<input type="password" name="token" autocomplete="current-password" required autofocus></label>
      <p><button class="primary" type="submit">Log in</button></p>
    </form>
    <p class="muted">The token is the web process's RELAIS_DASHBOARD_TOKEN.</p>
  </div>
</main>
</body>
</html>`.value;
}

/** What an unconfigured dashboard answers: how to turn it on, never an open door. */
export function disabledPage(): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Dashboard disabled · Relais</title>${STYLE_TAG}</head>
<body><main class="login"><div class="card">
<h1>The dashboard is disabled</h1>
<p>Set <span class="mono">RELAIS_DASHBOARD_TOKEN</span> (a random value of at least 32 characters, e.g.
<span class="mono">openssl rand -hex 32</span>) in the environment of the web process and restart it.
Then log in here with that token.</p>
</div></main></body></html>`.value;
}
