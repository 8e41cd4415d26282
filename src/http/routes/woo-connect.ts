/**
 * A WooCommerce store's app authorisation, its two doors into Relais (src/adapters/woocommerce/connect.ts):
 *
 *   POST /connect/woocommerce/callback  the store's server posts the keys as JSON. 200 only once they are checked
 *                                       and stored; 400 (with the reason, never a secret) otherwise, and WooCommerce
 *                                       then deletes the key it made and shows the merchant an error.
 *   GET  /connect/woocommerce/return    the merchant's browser, sent back by the store with success and user_id:
 *                                       a page saying what happened and where to go next.
 *
 * Neither is behind the dashboard's login: the store's server has no session, and the browser comes back from
 * another site, which the dashboard's SameSite=Strict cookie does not follow. The return page reveals only the
 * Relais shop id and what was done, to whoever holds the user_id (a 256-bit single-use value).
 */
import express, { Router, type Request, type Response } from 'express';
import { html, type SafeHtml } from '../../dashboard/html.js';
import type { Logger } from '../../log.js';
import { sendStandalonePage } from './standalone-page.js';
import {
  WOO_CONNECT_CALLBACK_PATH,
  WOO_CONNECT_RETURN_PATH,
  WooConnectError,
  type WooConnect,
  type WooReturn,
} from '../../shops/platforms/index.js';

export interface WooConnectRouteDeps {
  connect: Pick<WooConnect, 'callback' | 'finish' | 'callbackUrl'>;
  logger: Logger;
  /** The browser session the return page is for, when this process can see it (then a foreign one is refused). */
  bindingOf?: (req: Request) => string | undefined;
}

const CALLBACK_LIMIT = '16kb';
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'";

export function wooConnectRoutes(deps: WooConnectRouteDeps): Router {
  const router = Router();
  router.post(
    WOO_CONNECT_CALLBACK_PATH,
    express.text({ type: () => true, limit: CALLBACK_LIMIT }),
    async (req: Request, res: Response) => {
      let body: unknown;
      try {
        body = JSON.parse(typeof req.body === 'string' ? req.body : '');
      } catch {
        res.status(400).json({ error: 'malformed', message: 'the callback body is not JSON' });
        return;
      }
      try {
        const connected = await deps.connect.callback(body);
        res.status(200).json({ status: 'connected', shopId: connected.shopId });
      } catch (error) {
        if (!(error instanceof WooConnectError)) throw error;
        res.status(400).json({ error: error.reason, message: error.message });
      }
    },
  );

  router.get(WOO_CONNECT_RETURN_PATH, async (req: Request, res: Response) => {
    const userId = typeof req.query.user_id === 'string' ? req.query.user_id : '';
    const binding = deps.bindingOf?.(req);
    const outcome = await deps.connect.finish({
      userId,
      success: req.query.success === '1',
      ...(binding === undefined ? {} : { binding }),
    });
    const { status, title, body } = returnPage(outcome, deps.connect.callbackUrl);
    // The user_id is in this page's URL: the page sends no Referer that would carry it anywhere.
    sendStandalonePage(
      res,
      status,
      PAGE_CSP,
      html`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto"><h1>${title}</h1>${body}</body></html>`,
    );
  });
  return router;
}

const shopsLink = html`<p><a href="/dashboard/shops">Back to the Connect page</a></p>`;

function returnPage(outcome: WooReturn, callbackUrl: string): { status: number; title: string; body: SafeHtml } {
  switch (outcome.kind) {
    case 'connected':
      return {
        status: 200,
        title: 'WooCommerce store connected',
        body: html`<p id="outcome" data-outcome="connected">Shop <code>${outcome.shopId}</code>: ${outcome.message}.</p>
<p>Next: fill in the shop's settings (pickup, cash-on-delivery gateways, the delivery service's key), then switch it on.</p>
<p><a href="/dashboard/shops/${encodeURIComponent(outcome.shopId)}">Open the shop's settings</a></p>`,
      };
    case 'failed':
      return {
        status: 200,
        title: 'The WooCommerce store was not connected',
        body: html`<p id="outcome" data-outcome="failed">Shop <code>${outcome.shopId}</code>: ${outcome.message}. Nothing was stored.</p>${shopsLink}`,
      };
    case 'denied':
      return {
        status: 200,
        title: 'Connection cancelled',
        body: html`<p id="outcome" data-outcome="denied">Access was denied on the store: Relais received no keys and stored nothing.</p>${shopsLink}`,
      };
    case 'keys_not_received':
      return {
        status: 200,
        title: 'The WooCommerce store was not connected',
        body: html`<p id="outcome" data-outcome="keys_not_received">The store reported your approval, but its keys never reached Relais, so nothing was stored. The store must be able to reach ${callbackUrl} over https; then connect again.</p>${shopsLink}`,
      };
    case 'other_session':
      return {
        status: 403,
        title: 'Begun in another session',
        body: html`<p id="outcome" data-outcome="other_session">This connection was begun in another browser session: finish it there.</p>${shopsLink}`,
      };
    case 'unknown':
      return {
        status: 400,
        title: 'Unknown or expired connection',
        body: html`<p id="outcome" data-outcome="unknown">Relais knows no connection with this id: it expired (after 10 minutes) or was never begun here. Connect the store again.</p>${shopsLink}`,
      };
  }
}
