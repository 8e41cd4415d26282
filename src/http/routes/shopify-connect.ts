/**
 * The Shopify app's install routes (issue 17), mounted by createApp only when the operator configured a Shopify
 * app (SHOPIFY_API_KEY and SHOPIFY_API_SECRET): without one they do not exist and answer 404 like any unknown path.
 *
 *   GET /connect/shopify/install?ticket=…        the dashboard Connect page's one-time link
 *   GET /connect/shopify/install?shop=…&hmac=…   Shopify's app URL, opened from the shop's admin
 *        → 303 to the shop's authorize page, with a cookie holding the browser key the install is bound to
 *   GET /connect/shopify/callback?code=…&hmac=…&shop=…&state=…&timestamp=…
 *        → the tokens stored sealed and the shop saved switched off, then a page saying so and where its settings
 *          are; a refused callback stores nothing and answers a page saying why (400), never a secret.
 *
 * The cookie is SameSite=Lax (Shopify's redirect back is a cross-site top-level GET, which Lax lets through and
 * Strict would not), HttpOnly, on /connect/shopify only, and lasts as long as an install state.
 * Query strings are read raw: the hmac is computed over the parameters exactly as Shopify sent them.
 */
import { Router, type Request, type Response } from 'express';
import { isHttps, readCookie } from '../../dashboard/auth.js';
import { html, type SafeHtml } from '../../dashboard/html.js';
import type { Logger } from '../../log.js';
import { sendStandalonePage } from './standalone-page.js';
import {
  SHOPIFY_CALLBACK_PATH,
  SHOPIFY_INSTALL_PATH,
  ShopifyInstallError,
  type InstallRefusal,
  type ShopifyConnect,
} from '../../shops/platforms/index.js';

const BROWSER_COOKIE = 'relais_shopify_install';
const COOKIE_PATH = '/connect/shopify';
const COOKIE_MAX_AGE_S = 600;

const STATUS: Record<InstallRefusal, number> = {
  invalid_shop: 400,
  invalid_hmac: 400,
  unknown_state: 400,
  state_mismatch: 400,
  unknown_ticket: 400,
  shop_taken: 409,
  exchange_failed: 502,
};

function rawQuery(req: Request): URLSearchParams {
  const at = req.originalUrl.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : req.originalUrl.slice(at + 1));
}

function browserCookie(req: Request, res: Response, value: string, maxAgeS: number): void {
  const parts = [
    `${BROWSER_COOKIE}=${value}`,
    `Path=${COOKIE_PATH}`,
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${String(maxAgeS)}`,
  ];
  if (isHttps(req)) parts.push('Secure');
  res.append('Set-Cookie', parts.join('; '));
}

/** A small page of its own: no script, no style from elsewhere, and the code in the URL never sent on as a referrer. */
function page(res: Response, status: number, title: string, body: SafeHtml): void {
  sendStandalonePage(
    res,
    status,
    "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
    html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title} · Relais</title></head><body>${body}</body></html>`,
  );
}

function refused(res: Response, error: unknown): void {
  if (!(error instanceof ShopifyInstallError)) throw error;
  page(
    res,
    STATUS[error.reason],
    'Shopify shop not connected',
    html`<h1>The Shopify shop was not connected</h1><p id="reason">${error.message}.</p><p>Nothing was stored.</p>`,
  );
}

export function shopifyConnectRoutes(connect: ShopifyConnect, logger: Logger): Router {
  const router = Router();

  router.get(SHOPIFY_INSTALL_PATH, async (req, res) => {
    const query = rawQuery(req);
    try {
      const ticket = query.get('ticket');
      const begun = ticket === null ? await connect.beginFromShopify(query) : await connect.beginFromTicket(ticket);
      browserCookie(req, res, begun.browserKey, COOKIE_MAX_AGE_S);
      res.setHeader('Referrer-Policy', 'no-referrer');
      res.redirect(303, begun.url);
    } catch (error) {
      refused(res, error);
    }
  });

  router.get(SHOPIFY_CALLBACK_PATH, async (req, res) => {
    const browserKey = readCookie(req, BROWSER_COOKIE);
    // Single use, like the state it stands beside.
    if (browserKey !== undefined) browserCookie(req, res, '', 0);
    try {
      const shop = await connect.finish(rawQuery(req), browserKey);
      const settings = `/dashboard/shops/${shop.shopId}`;
      logger.info({ shop: shop.shopId, created: shop.created }, 'Shopify install finished');
      page(
        res,
        200,
        'Shopify shop connected',
        html`<h1>${shop.domain} is connected</h1>
<p id="outcome">Relais has its access, kept encrypted, as shop <strong>${shop.shopId}</strong>. ${
          shop.enabled
            ? 'The shop was already switched on and stays on.'
            : 'It stays switched off until its settings (pickup, cash on delivery, the delivery service key) are filled in.'
        }</p>
<p><a id="settings" href="${settings}">Open its settings in Relais's dashboard</a></p>`,
      );
    } catch (error) {
      refused(res, error);
    }
  });

  return router;
}
