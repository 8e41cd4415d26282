/**
 * App authorisation, as `WC_Auth` does it (plugins/woocommerce/includes/class-wc-auth.php): an app sends the
 * merchant's browser to `{site}/wc-auth/v1/authorize?app_name&scope&user_id&return_url&callback_url`; once the
 * merchant approves, WooCommerce creates a REST key pair with that scope, POSTs it as JSON
 * `{key_id, user_id, consumer_key, consumer_secret, key_permissions}` to callback_url, and only when that answers
 * exactly 200 redirects the browser to return_url with `success=1&user_id=…`; otherwise it deletes the key and
 * shows "Error: …" (401). Denying sends the browser to return_url with `success=0&user_id=…`.
 *
 * Where the emulator differs, on purpose:
 *  - The merchant is always logged in as an administrator: no login step (core's `login` route).
 *  - The approval page is one HTML form that POSTs back to `/wc-auth/v1/authorize` with an "Approve" and a "Deny"
 *    button (core shows two links: `access_granted` with a nonce, and return_url with success=0), so a headless
 *    browser clicks a button either way. Its nonce is single-use (core's lasts a day).
 *  - callback_url must be https, as in core, except on a loopback host (127.0.0.0/8, localhost, ::1), so a Relais
 *    on this machine can be the app. Core also refuses loopback and private addresses (wp_safe_remote_post).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiKey } from './auth.js';
import type { ShopState } from './model.js';
import { parseStr, phpArrayToPlain } from './php.js';

export interface IssuedKey extends ApiKey {
  keyId: number;
  /** Core's description: "{app_name} - API ({date})". */
  description: string;
}

/** One decision taken on an approval page, for tests to inspect. */
export interface AuthorizationRecord {
  shopId: string;
  appName: string;
  userId: string;
  scope: string;
  decision: 'approved' | 'denied';
  /** The callback's HTTP status (approved only); null when it never answered. */
  callbackStatus: number | null;
  /** The key created and kept (approved, callback answered 200); deleted keys are not listed. */
  keyId: number | null;
  at: Date;
}

export interface WcAuthContext {
  homeUrl(shop: ShopState): string;
  now(): Date;
  callbackTimeoutMs: number;
  record(entry: AuthorizationRecord): void;
}

const PARAMS = ['app_name', 'user_id', 'return_url', 'callback_url', 'scope'] as const;
type Handshake = Record<(typeof PARAMS)[number], string>;
const SCOPE_LABELS: Record<string, string> = { read: 'Read', write: 'Write', read_write: 'Read/Write' };
const LOOPBACK = /^(127(\.\d{1,3}){3}|localhost|\[::1\])$/i;

class AuthFailure extends Error {}

/** `get_formatted_url()`: urldecoded, and https:// put in front of a URL without a scheme. */
function formattedUrl(url: string): string {
  let decoded = url;
  try {
    decoded = decodeURIComponent(url.replace(/\+/g, ' '));
  } catch {
    // PHP's urldecode leaves a malformed escape as it is.
  }
  return decoded.includes('://') ? decoded : `https://${decoded}`;
}

/** `make_validation()`, with the loopback exception for callback_url. */
function validate(params: Record<string, unknown>): Handshake {
  const data: Partial<Handshake> = {};
  for (const name of PARAMS) {
    const value = params[name];
    if (value === undefined || value === '' || value === '0') throw new AuthFailure(`Missing parameter ${name}`);
    if (typeof value !== 'string') throw new AuthFailure(`Invalid parameter ${name}`);
    data[name] = value;
  }
  const handshake = data as Handshake;
  if (!(handshake.scope in SCOPE_LABELS)) throw new AuthFailure(`Invalid scope ${handshake.scope}`);
  for (const name of ['return_url', 'callback_url'] as const) {
    const url = formattedUrl(handshake[name]);
    if (!URL.canParse(url)) throw new AuthFailure(`The ${url} is not a valid URL`);
  }
  const callback = new URL(formattedUrl(handshake.callback_url));
  const loopbackHttp = callback.protocol === 'http:' && LOOPBACK.test(callback.hostname);
  if (callback.protocol !== 'https:' && !loopbackHttp) throw new AuthFailure('The callback_url needs to be over SSL');
  return handshake;
}

/** `add_query_arg()`: the pairs appended to the URL's query. */
function withQuery(url: string, pairs: Record<string, string>): string {
  const target = new URL(formattedUrl(url));
  for (const [key, value] of Object.entries(pairs)) target.searchParams.set(key, value);
  return target.toString();
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function sendHtml(res: ServerResponse, status: number, title: string, body: string): void {
  const page = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=UTF-8',
    'Cache-Control': 'no-store',
    'Content-Length': String(Buffer.byteLength(page)),
  });
  res.end(page);
}

/** `wp_die()` as `auth_endpoint` calls it: "Error: {message}." with status 401. */
function deny(res: ServerResponse, message: string): void {
  sendHtml(res, 401, 'Access denied', `<div class="wp-die-message">Error: ${escapeHtml(message)}.</div>`);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { Location: location, 'Content-Length': '0' });
  res.end();
}

/** `wc_rand_hash()`: 40 hex characters. */
const randHash = () => randomBytes(20).toString('hex');

export class WcAuth {
  /** Approval pages shown and not yet answered: nonce → shop id. */
  readonly #nonces = new Map<string, string>();

  constructor(private readonly ctx: WcAuthContext) {}

  /** `/wc-auth/v1/{route}` of a shop; body is the raw request body. */
  async handle(shop: ShopState, route: string, req: IncomingMessage, res: ServerResponse, body: string) {
    const method = (req.method ?? 'GET').toUpperCase();
    const rawQuery = (req.url ?? '').split('?')[1] ?? '';
    const query = phpArrayToPlain(parseStr(rawQuery));
    const form = method === 'POST' ? phpArrayToPlain(parseStr(body)) : {};
    try {
      if (route.toLowerCase() !== 'authorize' || (method !== 'GET' && method !== 'POST'))
        throw new AuthFailure('You do not have permission to access this page');
      // $_REQUEST: the form's fields over the query's.
      const handshake = validate({ ...query, ...form });
      if (method === 'GET') this.#approvalPage(shop, handshake, res);
      else await this.#decide(shop, handshake, form, res);
    } catch (error) {
      if (!(error instanceof AuthFailure)) throw error;
      deny(res, error.message);
    }
  }

  #approvalPage(shop: ShopState, handshake: Handshake, res: ServerResponse): void {
    const nonce = randHash();
    this.#nonces.set(nonce, shop.settings.id);
    const hidden = [...PARAMS.map((name) => [name, handshake[name]] as const), ['wc_auth_nonce', nonce] as const]
      .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
      .join('');
    const app = escapeHtml(handshake.app_name);
    sendHtml(
      res,
      200,
      `${handshake.app_name} would like to connect to your store`,
      `<h1>${app} would like to connect to your store</h1>
<p>This will give "${app}" <strong>${SCOPE_LABELS[handshake.scope]}</strong> access which will allow it to:</p>
<p>Logged in as ${escapeHtml(shop.settings.apiUserDisplayName)}</p>
<form method="post" action="${escapeHtml(`${this.ctx.homeUrl(shop)}/wc-auth/v1/authorize`)}">${hidden}
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button></form>`,
    );
  }

  async #decide(shop: ShopState, handshake: Handshake, form: Record<string, unknown>, res: ServerResponse) {
    const nonce = typeof form.wc_auth_nonce === 'string' ? form.wc_auth_nonce : '';
    if (this.#nonces.get(nonce) !== shop.settings.id) throw new AuthFailure('Invalid nonce verification');
    this.#nonces.delete(nonce);
    const record = (decision: AuthorizationRecord['decision'], callbackStatus: number | null, keyId: number | null) =>
      this.ctx.record({
        shopId: shop.settings.id,
        appName: handshake.app_name,
        userId: handshake.user_id,
        scope: handshake.scope,
        decision,
        callbackStatus,
        keyId,
        at: this.ctx.now(),
      });
    if (form.decision !== 'approve') {
      record('denied', null, null);
      redirect(res, withQuery(handshake.return_url, { success: '0', user_id: handshake.user_id }));
      return;
    }
    const key = this.#createKey(shop, handshake);
    const status = await this.#postConsumerData(key, handshake);
    if (status !== 200) {
      // maybe_delete_key(): the key the app never received is deleted.
      shop.issuedKeys.delete(key.consumerKey);
      record('approved', status, null);
      throw new AuthFailure('An error occurred in the request and at the time were unable to send the consumer data');
    }
    record('approved', status, key.keyId);
    redirect(res, withQuery(handshake.return_url, { success: '1', user_id: handshake.user_id }));
  }

  #createKey(shop: ShopState, handshake: Handshake): IssuedKey {
    const key: IssuedKey = {
      keyId: shop.newKeyId(),
      description: `${handshake.app_name.slice(0, 170)} - API (${this.ctx.now().toISOString().slice(0, 19).replace('T', ' ')})`,
      permissions: handshake.scope as ApiKey['permissions'],
      consumerKey: `ck_${randHash()}`,
      consumerSecret: `cs_${randHash()}`,
    };
    shop.issuedKeys.set(key.consumerKey, key);
    return key;
  }

  /** `post_consumer_data()`: JSON, 60 s; the status, or null when nothing answered. */
  async #postConsumerData(key: IssuedKey, handshake: Handshake): Promise<number | null> {
    try {
      const response = await fetch(formattedUrl(handshake.callback_url), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json;charset=UTF-8' },
        body: JSON.stringify({
          key_id: key.keyId,
          user_id: handshake.user_id,
          consumer_key: key.consumerKey,
          consumer_secret: key.consumerSecret,
          key_permissions: key.permissions,
        }),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.ctx.callbackTimeoutMs),
      });
      await response.arrayBuffer().catch(() => undefined);
      return response.status;
    } catch {
      return null;
    }
  }
}
