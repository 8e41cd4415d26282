/**
 * The demo's merchant, connecting the two emulated shops to Relais the way a merchant does (issue 17): plain HTTP
 * requests playing the merchant's browser on Relais's dashboard and on the shops' own pages, following their
 * redirects and clicking their buttons. Nothing here writes to the database or reads a secret: the shops end up
 * connected, with their settings and switched on, only through the routes a merchant uses.
 *
 *  - Shopify: the Connect page's form, its install link, Shopify's authorize page (the emulator approves at
 *    once), Shopify's redirect back to the callback.
 *  - WooCommerce: the Connect page's form, the store's /wc-auth/v1/authorize page and its Approve button (the
 *    store then posts its keys to Relais's callback), the store's redirect back to the return page.
 *  - Then each shop's settings form, and "Check and switch on" (the doctor's checks must pass).
 */
import type { ShopSettingsForm } from '../dashboard/use-cases/shop-settings.js';

interface Page {
  url: string;
  status: number;
  body: string;
}

const MAX_REDIRECTS = 10;

/**
 * A browser without a screen: cookies kept per origin (the emulators and Relais share 127.0.0.1 on different
 * ports, and a cookie for one must not be confused with the other's), redirects followed, forms posted.
 */
export class MerchantBrowser {
  readonly #cookies = new Map<string, Map<string, string>>();

  async get(url: string): Promise<Page> {
    return this.#follow(url, { method: 'GET' });
  }

  async post(url: string, form: Record<string, string>): Promise<Page> {
    return this.#follow(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
  }

  async #follow(start: string, first: RequestInit): Promise<Page> {
    let url = start;
    let init = first;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const response = await fetch(url, { ...init, headers: this.#headersFor(url, init), redirect: 'manual' });
      this.#remember(url, response.headers.getSetCookie());
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || location === null)
        return { url, status: response.status, body: await response.text() };
      await response.body?.cancel();
      // 302/303 after a POST: the browser goes on with a GET, as browsers do.
      url = new URL(location, url).toString();
      init = { method: 'GET' };
    }
    throw new Error(`more than ${String(MAX_REDIRECTS)} redirects from ${start}`);
  }

  #headersFor(url: string, init: RequestInit): Record<string, string> {
    const headers: Record<string, string> = { ...(init.headers as Record<string, string> | undefined) };
    const jar = this.#cookies.get(new URL(url).origin);
    if (jar && jar.size > 0) headers.cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    return headers;
  }

  #remember(url: string, setCookies: string[]): void {
    const origin = new URL(url).origin;
    const jar = this.#cookies.get(origin) ?? new Map<string, string>();
    this.#cookies.set(origin, jar);
    for (const cookie of setCookies) {
      const [pair = ''] = cookie.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (value === '' || /max-age=0\b/i.test(cookie)) jar.delete(name);
      else jar.set(name, value);
    }
  }
}

/** Logs in with the dashboard's token, as the login form does. */
export async function logIn(browser: MerchantBrowser, webUrl: string, token: string): Promise<void> {
  const page = await browser.post(`${webUrl}/dashboard/login`, { token, next: '/dashboard/shops' });
  expectPage(page, 200, /Connect a Shopify shop/, 'the dashboard login');
}

/** "Connect a Shopify shop": the install link, the shop's authorize page, the callback's page. */
export async function connectShopify(
  browser: MerchantBrowser,
  webUrl: string,
  shop: { shopId: string; domain: string },
): Promise<void> {
  const page = await submitConnectForm(browser, webUrl, 'shopify', { shopId: shop.shopId, domain: shop.domain });
  const done = await browser.get(new URL(continueLink(page), page.url).toString());
  expectPage(done, 200, /id="outcome"/, 'the Shopify install');
}

/** "Connect a WooCommerce shop": the store's approval page, its Approve button, the return page. */
export async function connectWooCommerce(
  browser: MerchantBrowser,
  webUrl: string,
  shop: { shopId: string; storeUrl: string },
): Promise<void> {
  const page = await submitConnectForm(browser, webUrl, 'woocommerce', {
    shopId: shop.shopId,
    storeUrl: shop.storeUrl,
  });
  const approval = await browser.get(new URL(continueLink(page), page.url).toString());
  expectPage(approval, 200, /<form method="post"/, "the store's approval page");
  const action = /<form method="post" action="([^"]+)"/.exec(approval.body)![1]!;
  const fields: Record<string, string> = {};
  for (const [, name, value] of approval.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[name!] = unescapeHtml(value!);
  const back = await browser.post(new URL(unescapeHtml(action), approval.url).toString(), {
    ...fields,
    decision: 'approve',
  });
  expectPage(back, 200, /data-outcome="connected"/, 'the WooCommerce app authorisation');
}

/** The shop's settings form, then "Check and switch on": throws with the page's message when a check fails. */
export async function fillSettingsAndSwitchOn(
  browser: MerchantBrowser,
  webUrl: string,
  shopId: string,
  settings: ShopSettingsForm,
): Promise<void> {
  const settingsUrl = `${webUrl}/dashboard/shops/${encodeURIComponent(shopId)}`;
  const saved = await browser.post(settingsUrl, { ...settings, _csrf: await csrfOf(browser, settingsUrl) });
  expectPage(saved, 200, /Settings saved/, `the settings of ${shopId}`);
  const on = await browser.post(`${settingsUrl}/on`, { _csrf: await csrfOf(browser, settingsUrl) });
  expectPage(on, 200, /Checks passed/, `switching ${shopId} on`);
}

async function submitConnectForm(
  browser: MerchantBrowser,
  webUrl: string,
  platform: 'shopify' | 'woocommerce',
  fields: Record<string, string>,
): Promise<Page> {
  const csrf = await csrfOf(browser, `${webUrl}/dashboard/shops`);
  const page = await browser.post(`${webUrl}/dashboard/shops/connect/${platform}`, { ...fields, _csrf: csrf });
  expectPage(page, 200, /id="continue"/, `the Connect page's ${platform} form`);
  return page;
}

/** The "Continue to …" link the dashboard shows (a form may not redirect off-site under its CSP). */
function continueLink(page: Page): string {
  return unescapeHtml(/id="continue" href="([^"]+)"/.exec(page.body)![1]!);
}

async function csrfOf(browser: MerchantBrowser, url: string): Promise<string> {
  const page = await browser.get(url);
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  if (!token) throw new Error(`no form on ${new URL(url).pathname} (status ${String(page.status)})`);
  return token;
}

/** Stops the demo with what the page said when a step did not land where a merchant would. */
function expectPage(page: Page, status: number, marker: RegExp, step: string): void {
  if (page.status === status && marker.test(page.body)) return;
  const said =
    /(?:id="(?:reason|outcome)"|class="flash error")[^>]*>([^<]*)</.exec(page.body)?.[1] ??
    textOf(page.body).slice(0, 300);
  throw new Error(
    `demo: ${step} did not succeed (${String(page.status)} at ${new URL(page.url).pathname}): ${said.trim()}`,
  );
}

function textOf(body: string): string {
  return unescapeHtml(body.replace(/<style[\s\S]*?<\/style>/g, '').replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');
}

function unescapeHtml(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#96;/g, '`')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
