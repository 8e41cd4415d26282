/**
 * The dashboard over real HTTP, served by the real web process next to a real worker, with orders that went
 * through the whole pipeline: a cash-on-delivery order delivered and paid (Shopify emulator, dispatch
 * emulator's courier), and an order whose address carries markup and cannot be resolved (held).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_COURIER_STEP_MS } from '@relais/emulators/dispatch';
import { DEFAULT_SHIPPING_ADDRESS, startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { formatXof } from '../../src/dashboard/html.js';
import { startWeb, type RunningWeb } from '../../src/main/web.js';
import { shopifyExternalId, waitForState } from '../pipeline/helpers.js';
import {
  makeSecrets,
  randomHex,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  waitFor,
  WOO_SHOP_ID,
  type TestRelais,
} from '../support/relais.js';
import { DashboardSession } from './session.js';

const TOKEN = `dash_${randomHex(16)}`;
const MARKUP = '<script>alert("pwned")</script>';

let shopify: ShopifyEmulator;
let relais: TestRelais;
let deliveredId: string;
let heldId: string;

const { latitude: _lat, longitude: _lng, ...addressWithoutCoords } = DEFAULT_SHIPPING_ADDRESS;

beforeAll(async () => {
  const secrets = makeSecrets();
  shopify = await startShopifyEmulator({
    shops: [
      { domain: SHOPIFY_DOMAIN, accessToken: secrets.shopifyAccessToken, clientSecret: secrets.shopifyClientSecret },
    ],
  });
  relais = await startTestRelais({
    secrets,
    shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
    dashboardToken: TOKEN,
    pollIntervalMs: 500,
  });
  for (const topic of ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled']) {
    shopify.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  }
  relais.emulator.setOrganisationWebhook(
    'org_relais',
    `${relais.web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`,
  );

  // A cash-on-delivery order delivered by the courier, written back into the shop and marked paid.
  const delivered = shopify.createOrder(SHOPIFY_DOMAIN, {});
  deliveredId = shopifyExternalId(delivered.id);
  await waitForState(relais, deliveredId, ['ready']);
  await relais.emulator.advance(DEFAULT_COURIER_STEP_MS * 6);
  await waitFor(async () => (await relais.worker.runtime.ledger.get(deliveredId))?.delivery?.written.paid, {
    what: 'the delivered order marked paid',
  });

  // Markup in the address and the customer's name; no neighbourhood anywhere: held.
  const held = shopify.createOrder(SHOPIFY_DOMAIN, {
    shippingAddress: {
      ...addressWithoutCoords,
      name: `Awa ${MARKUP}`,
      first_name: 'Awa',
      last_name: MARKUP,
      address1: `${MARKUP} villa 3`,
      address2: '',
    },
  });
  heldId = shopifyExternalId(held.id);
  await waitForState(relais, heldId, ['held']);
}, 60_000);

afterAll(async () => {
  await shopify?.webhooksSettled();
  await relais?.stop();
  await shopify?.close();
});

const orderPath = (id: string) => `/dashboard/orders/${encodeURIComponent(id)}`;

async function loggedInAt(url: string): Promise<DashboardSession> {
  const session = new DashboardSession(url);
  const login = await session.login(TOKEN);
  expect(login.status).toBe(303);
  return session;
}

const loggedIn = () => loggedInAt(relais.web.url);

/** A wrong token makes this address wait (login-throttle.test.ts): sleeps for the Retry-After it was answered. */
async function waitAsTold(headers: Headers): Promise<void> {
  await new Promise((r) => setTimeout(r, Number(headers.get('retry-after')) * 1000));
}

describe('authentication', () => {
  it('sends a visitor without a session to the login page, remembering where they were going', async () => {
    const response = await new DashboardSession(relais.web.url).request('/dashboard/held');
    expect(response.status).toBe(303);
    expect(response.location).toBe('/dashboard/login?next=%2Fdashboard%2Fheld');
    const login = await new DashboardSession(relais.web.url).request(response.location!);
    expect(login.status).toBe(200);
    expect(login.body).toContain('name="token"');
  });

  it('answers 401 to a wrong token at login, sets no session, and takes the right token after the second it says to wait', async () => {
    const session = new DashboardSession(relais.web.url);
    const response = await session.login(`${TOKEN}x`);
    expect(response.status).toBe(401);
    expect(response.body).toContain('Wrong token. Wait 1 second before trying again.');
    expect(session.cookies.size).toBe(0);
    await waitAsTold(response.headers);
    expect((await session.login(TOKEN)).status).toBe(303);
  });

  it('logs in with the token into an HttpOnly, SameSite=Strict, expiring session cookie that is not the token', async () => {
    const session = new DashboardSession(relais.web.url);
    const response = await session.login(TOKEN);
    expect(response.status).toBe(303);
    expect(response.location).toBe('/dashboard/orders');
    const [cookie] = response.headers.getSetCookie();
    expect(cookie).toMatch(/^relais_session=/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\/dashboard/);
    expect(cookie).toMatch(/; Max-Age=28800/);
    expect(cookie).not.toContain(TOKEN);
    expect((await session.request('/dashboard/orders')).status).toBe(200);
  });

  it('refuses a session cookie whose signature was tampered with', async () => {
    const session = await loggedIn();
    const value = session.cookies.get('relais_session')!;
    session.cookies.set('relais_session', `${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`);
    const response = await session.request('/dashboard/orders');
    expect(response.status).toBe(303);
    expect(response.location).toMatch(/^\/dashboard\/login/);
  });

  it('lets scripts in with the bearer token, answers 401 to a wrong one, and lets the right one in again after the wait', async () => {
    const ok = await fetch(`${relais.web.url}/dashboard/orders`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      redirect: 'manual',
    });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('<h1>Orders</h1>');
    const wrong = await fetch(`${relais.web.url}/dashboard/orders`, {
      headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
      redirect: 'manual',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('Bearer');
    await waitAsTold(wrong.headers);
    const again = await fetch(`${relais.web.url}/dashboard/orders`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      redirect: 'manual',
    });
    expect(again.status).toBe(200);
  });

  it("refuses a form post without the CSRF token of the session (403), and with another session's token", async () => {
    const session = await loggedIn();
    const other = await loggedIn();
    const foreign = await other.csrf();
    expect((await session.request(`/dashboard/held/${encodeURIComponent(heldId)}/replay`, { form: {} })).status).toBe(
      403,
    );
    expect(
      (await session.request(`/dashboard/held/${encodeURIComponent(heldId)}/replay`, { form: { _csrf: foreign } }))
        .status,
    ).toBe(403);
    expect((await relais.worker.runtime.ledger.get(heldId))?.meta.generation).toBe(0);
  });

  it('refuses a post from another site even with a valid CSRF token', async () => {
    const session = await loggedIn();
    const csrf = await session.csrf();
    const response = await session.request(`/dashboard/held/${encodeURIComponent(heldId)}/replay`, {
      form: { _csrf: csrf },
      headers: { origin: 'http://evil.example' },
    });
    expect(response.status).toBe(403);
  });

  it('ends the session for good on logout: the old cookie no longer opens anything', async () => {
    const session = await loggedIn();
    const cookie = session.cookies.get('relais_session')!;
    const csrf = await session.csrf();
    const logout = await session.request('/dashboard/logout', { form: { _csrf: csrf } });
    expect(logout.status).toBe(303);
    expect(logout.location).toBe('/dashboard/login?bye=1');
    expect(session.cookies.has('relais_session')).toBe(false);
    const replayed = new DashboardSession(relais.web.url);
    replayed.cookies.set('relais_session', cookie);
    expect((await replayed.request('/dashboard/orders')).status).toBe(303);
  });

  it('keeps the queues page (bull-board) and its API behind the same login', async () => {
    const anonymous = new DashboardSession(relais.web.url);
    expect((await anonymous.request('/dashboard/queues')).status).toBe(303);
    expect((await anonymous.request('/dashboard/queues/api/queues')).status).toBe(303);
    const session = await loggedIn();
    const board = await session.request('/dashboard/queues');
    expect(board.status).toBe(200);
    expect(board.body).toContain('Relais queues');
    const api = await session.request('/dashboard/queues/api/queues');
    expect(api.status).toBe(200);
    const names = (JSON.parse(api.body) as { queues: { name: string }[] }).queues.map((q) => q.name);
    expect(names).toEqual(expect.arrayContaining(['shop-events', 'dispatch', 'deliveries', 'maintenance']));
  });

  it('refuses a bull-board action that does not come from the dashboard page itself', async () => {
    const session = await loggedIn();
    const response = await session.request('/dashboard/queues/api/queues/dispatch/pause', { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(await relais.web.runtime.queues.dispatch.isPaused()).toBe(false);
  });

  it('refuses to add a job through the queues board (405), even with the bearer token from the same origin, and adds nothing', async () => {
    const before = await relais.web.runtime.queues.shopEvents.getJobCounts();
    const response = await fetch(`${relais.web.url}/dashboard/queues/api/queues/shop-events/add`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        origin: relais.web.url,
        'sec-fetch-site': 'same-origin',
      },
      body: JSON.stringify({
        name: 'orders/create',
        data: {
          shopId: SHOPIFY_SHOP_ID,
          platform: 'shopify',
          topic: 'orders/create',
          receivedAt: new Date().toISOString(),
          payload: {},
        },
      }),
    });
    expect(response.status).toBe(405);
    expect(await relais.web.runtime.queues.shopEvents.getJobCounts()).toEqual(before);
  });

  it('refuses to retry jobs through the queues board (405) from a logged-in session on the same origin', async () => {
    const session = await loggedIn();
    for (const path of [
      '/dashboard/queues/api/queues/dispatch/retry/failed',
      '/dashboard/queues/api/queues/dispatch/some-job/retry',
    ]) {
      const response = await session.request(path, {
        method: 'PUT',
        headers: { origin: relais.web.url, 'sec-fetch-site': 'same-origin' },
      });
      expect(response.status, path).toBe(405);
    }
  });

  it("tells bull-board's page that every queue is read-only, so it offers no action buttons", async () => {
    const session = await loggedIn();
    const api = await session.request('/dashboard/queues/api/queues');
    const queues = (JSON.parse(api.body) as { queues: { name: string; readOnlyMode: boolean }[] }).queues;
    expect(queues.length).toBeGreaterThan(0);
    expect(queues.every((q) => q.readOnlyMode)).toBe(true);
  });
});

describe('pages', () => {
  it("lists the shop's orders newest first with state, neighbourhood, amount, shipment and tracking link", async () => {
    const session = await loggedIn();
    const page = await session.request(`/dashboard/orders?shop=${SHOPIFY_SHOP_ID}`);
    const record = (await relais.worker.runtime.ledger.get(deliveredId))!;
    expect(page.body.indexOf(orderPath(heldId))).toBeLessThan(page.body.indexOf(orderPath(deliveredId)));
    expect(page.body).toContain(record.neighbourhood!.name);
    expect(page.body).toContain(formatXof(record.shipment!.orderAmountXof));
    expect(page.body).toContain(record.shipment!.shipmentId);
    expect(page.body).toContain(`href="${record.shipment!.publicTrackingUrl}"`);

    const heldOnly = await session.request(`/dashboard/orders?shop=${SHOPIFY_SHOP_ID}&state=held`);
    expect(heldOnly.body).toContain(orderPath(heldId));
    expect(heldOnly.body).not.toContain(orderPath(deliveredId));
  });

  it("shows an order's timeline of shop, dispatch and write-back calls, and what was written into the shop", async () => {
    const session = await loggedIn();
    const page = await session.request(orderPath(deliveredId));
    expect(page.status).toBe(200);
    const timeline = await relais.worker.runtime.ledger.timeline(deliveredId);
    for (const operation of ['webhook orders/create', 'createQuote', 'createShipment'])
      expect(page.body).toContain(operation);
    const shopWrite = timeline.find((t) => t.system === 'shop' && !t.operation.startsWith('webhook'));
    expect(shopWrite).toBeDefined();
    expect(page.body).toContain(shopWrite!.operation);
    expect(page.body).toContain('Written into the shop');
    expect(page.body).toMatch(/marked paid at \d{4}-\d\d-\d\d/);
    expect(page.body).toContain('<span class="badge ok">delivered</span>');
  });

  it('renders markup from a shop payload as text on every page that shows it', async () => {
    const session = await loggedIn();
    for (const path of [orderPath(heldId), '/dashboard/held', `/dashboard/orders?shop=${SHOPIFY_SHOP_ID}&state=held`]) {
      const page = await session.request(path);
      expect(page.body, path).not.toContain('<script>');
      expect(page.body, path).not.toContain('alert("pwned")');
    }
    const detail = await session.request(orderPath(heldId));
    expect(detail.body).toContain('&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; villa 3');
  });

  it('shows a held order with its reason and the fix-and-replay forms', async () => {
    const session = await loggedIn();
    const page = await session.request('/dashboard/held');
    const record = (await relais.worker.runtime.ledger.get(heldId))!;
    expect(page.body).toContain('neighbourhood_not_found');
    expect(page.body).toContain('no neighbourhood found in');
    expect(page.body).toContain(`action="/dashboard/held/${encodeURIComponent(heldId)}/alias"`);
    expect(page.body).toContain(`action="/dashboard/held/${encodeURIComponent(heldId)}/replay"`);
    expect(page.body).toContain(record.meta.orderName);
  });

  it("refuses an alias to a neighbourhood outside the shop's country, and says why on the next page", async () => {
    const session = await loggedIn();
    const csrf = await session.csrf();
    const response = await session.request(`/dashboard/held/${encodeURIComponent(heldId)}/alias`, {
      form: { _csrf: csrf, text: 'villa 3', neighbourhood: 'Cocody' },
    });
    expect(response.status).toBe(303);
    expect(response.location).toBe('/dashboard/held');
    expect(await relais.worker.runtime.aliases.list(SHOPIFY_SHOP_ID)).toEqual({});
    const next = await session.request('/dashboard/held');
    expect(next.body).toContain('Alias not added: &quot;Cocody&quot; is not a known neighbourhood in SN');
    // The message is shown once.
    expect((await session.request('/dashboard/held')).body).not.toContain('Alias not added');
  });

  it('shows cash collected today from the delivered order, and no reconciliation figures until one has run', async () => {
    const session = await loggedIn();
    const page = await session.request(`/dashboard/money?shop=${SHOPIFY_SHOP_ID}&days=7`);
    const record = (await relais.worker.runtime.ledger.get(deliveredId))!;
    const today = record.stateChangedAt.slice(0, 10);
    const row = new RegExp(`<td class="mono">${today}</td><td class="num">([^<]*)`).exec(page.body);
    expect(row?.[1]).toBe(`${formatXof(record.shipment!.orderAmountXof)} `);
    expect(page.body).toContain('No reconciliation run yet.');
  });

  it('sends a Content-Security-Policy that allows no script on every page', async () => {
    const session = await loggedIn();
    for (const path of [
      '/dashboard/overview',
      '/dashboard/orders',
      '/dashboard/held',
      orderPath(deliveredId),
      '/dashboard/money',
      '/dashboard/login',
    ]) {
      const page = await session.request(path);
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("default-src 'none'");
      expect(csp, path).not.toContain('script-src');
      expect(page.headers.get('cache-control'), path).toBe('no-store');
    }
  });

  it("never shows an API key, token or shop secret on any page, bull-board's job data included", async () => {
    const session = await loggedIn();
    const secrets = [...Object.values(relais.secrets), ...Object.values(relais.env), TOKEN];
    const paths = [
      '/dashboard/overview',
      '/dashboard/overview/holds.csv',
      '/dashboard/orders',
      `/dashboard/orders?shop=${WOO_SHOP_ID}`,
      `/dashboard/orders?shop=${SHOPIFY_SHOP_ID}`,
      orderPath(deliveredId),
      orderPath(heldId),
      '/dashboard/held',
      `/dashboard/money?shop=${SHOPIFY_SHOP_ID}`,
      `/dashboard/money?shop=${WOO_SHOP_ID}`,
      '/dashboard/queues',
      '/dashboard/queues/api/queues',
    ];
    const queueNames = ['shop-events', 'dispatch', 'deliveries', 'maintenance'];
    for (const name of queueNames) {
      for (const status of ['latest', 'completed', 'failed', 'delayed'])
        paths.push(`/dashboard/queues/api/queues?activeQueue=${name}&status=${status}&page=1&jobsPerPage=100`);
    }
    let jobsSeen = 0;
    for (const path of paths) {
      const page = await session.request(path);
      expect(page.status, path).toBe(200);
      for (const secret of secrets) expect(page.body.includes(secret), `${path} shows a secret`).toBe(false);
      expect(page.body, path).not.toContain('pk_live_');
      if (path.includes('activeQueue')) {
        jobsSeen += (JSON.parse(page.body) as { queues: { jobs: unknown[] }[] }).queues.reduce(
          (n, q) => n + q.jobs.length,
          0,
        );
      }
    }
    // The check looked at real job data, not at empty lists.
    expect(jobsSeen).toBeGreaterThan(0);
  });
});

describe('without a token', () => {
  let web: RunningWeb;
  beforeAll(async () => {
    web = await startWeb({ ...relais.base });
  });
  afterAll(async () => {
    await web?.close();
  });

  it('is disabled, says how to enable it, and opens nothing even with a bearer header', async () => {
    for (const path of ['/dashboard', '/dashboard/orders', '/dashboard/queues', '/dashboard/login']) {
      const response = await fetch(`${web.url}${path}`, {
        redirect: 'manual',
        headers: { authorization: 'Bearer anything-at-all-here' },
      });
      expect(response.status, path).toBe(404);
      expect(await response.text(), path).toContain('RELAIS_DASHBOARD_TOKEN');
    }
  });
});
