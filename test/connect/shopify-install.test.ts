/**
 * Installing Relais's Shopify app over real HTTP: the web process (real Redis, real PostgreSQL) serves
 * /connect/shopify/install and /callback, the Shopify emulator plays the shop's authorize page. Begun from the
 * dashboard's Connect page or from Shopify's app URL, the install ends with the tokens sealed and the shop saved
 * switched off; a forged, replayed, foreign or unbound callback stores nothing and answers 400 saying why; with no
 * Shopify app configured the routes do not exist.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signOAuthQuery, startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { EnvError, readEnv } from '../../src/config/env.js';
import { Secret } from '../../src/shops/secret.js';
import { SecretBox } from '../../src/shops/secret-box.js';
import { PostgresShopSecretStore } from '../../src/adapters/postgres/pg-shop-secrets.js';
import { PostgresShopDirectory } from '../../src/adapters/postgres/pg-shops.js';
import { startWeb } from '../../src/main/web.js';
import { DashboardSession, type PageResponse } from '../dashboard/session.js';
import { randomHex, startTestRelais, type TestRelais } from '../support/relais.js';

const TOKEN = `dash_${randomHex(16)}`;
const KEYS = `k1:${randomBytes(32).toString('base64')}`;
const CLIENT_ID = `client_${randomHex(8)}`;
const CLIENT_SECRET = randomHex(32);
/** Where Shopify sends the browser back (a proxy in front of Relais); the test replays that path on the web process. */
const PUBLIC_URL = 'https://relais.example';
const THIES = 'thies-bazin.myshopify.com';
const KAOLACK = 'kaolack-pagne.myshopify.com';
const ZIGUINCHOR = 'ziguinchor-wax.myshopify.com';
const LOUGA = 'louga-cuir.myshopify.com';
const TOKENS = 'shopify.oauthTokens';

let shopify: ShopifyEmulator;
let relais: TestRelais;
let directory: PostgresShopDirectory;
let secrets: PostgresShopSecretStore;

beforeAll(async () => {
  shopify = await startShopifyEmulator({
    shops: [THIES, KAOLACK, ZIGUINCHOR, LOUGA].map((domain) => ({
      domain,
      accessToken: `shpat_${randomHex()}`,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    })),
  });
  relais = await startTestRelais({
    dashboardToken: TOKEN,
    secretKeys: KEYS,
    inProcessWorker: false,
    shopifyApp: {
      clientId: CLIENT_ID,
      clientSecret: new Secret(CLIENT_SECRET, 'test'),
      publicUrl: PUBLIC_URL,
      adminUrlFor: (domain) => shopify.adminUrl(domain),
    },
  });
  directory = new PostgresShopDirectory(relais.db.pool());
  secrets = new PostgresShopSecretStore(relais.db.pool(), SecretBox.fromSetting(KEYS));
}, 60_000);

afterAll(async () => {
  await relais?.stop();
  await shopify?.close();
});

async function loggedIn(): Promise<DashboardSession> {
  const session = new DashboardSession(relais.web.url);
  expect((await session.login(TOKEN)).status).toBe(303);
  return session;
}

/** The Connect page's form, then its install link opened: answers the shop's authorize URL. */
async function beginFromDashboard(browser: DashboardSession, shopId: string, domain: string): Promise<string> {
  const csrf = await browser.csrf('/dashboard/shops');
  const page = await browser.request('/dashboard/shops/connect/shopify', { form: { _csrf: csrf, shopId, domain } });
  expect(page.status).toBe(200);
  const link = /href="(\/connect\/shopify\/install\?ticket=[A-Za-z0-9_-]+)"/.exec(page.body)?.[1];
  expect(link).toBeDefined();
  const install = await browser.request(link!);
  expect(install.status).toBe(303);
  return install.location!;
}

/** The emulated shop approves: Shopify's redirect back, as a path on the web process. */
async function approve(authorizeUrl: string): Promise<string> {
  const answer = await fetch(authorizeUrl, { redirect: 'manual' });
  expect(answer.status).toBe(302);
  const back = new URL(answer.headers.get('location')!);
  expect(`${back.origin}${back.pathname}`).toBe(`${PUBLIC_URL}/connect/shopify/callback`);
  return `${back.pathname}${back.search}`;
}

/** The callback's query with `changes`, signed again with the app's secret (what only a holder of it could forge). */
function resigned(path: string, changes: Record<string, string>): string {
  const url = new URL(path, PUBLIC_URL);
  const params = { ...Object.fromEntries(url.searchParams), ...changes };
  delete (params as Record<string, string | undefined>).hmac;
  return `${url.pathname}?${new URLSearchParams({ ...params, hmac: signOAuthQuery(params, CLIENT_SECRET) }).toString()}`;
}

async function nothingStoredFor(shopId: string): Promise<void> {
  expect(await secrets.get(shopId, TOKENS)).toBeUndefined();
  expect((await directory.list()).map((s) => s.id)).not.toContain(shopId);
}

function expectRefusal(page: PageResponse, status: number, words: RegExp): void {
  expect(page.status).toBe(status);
  expect(page.body).toMatch(words);
  expect(page.body).toContain('Nothing was stored');
  expect(page.body).not.toContain(CLIENT_SECRET);
}

describe('Shopify app install over HTTP', () => {
  it('from the Connect page: install link → emulator authorize → callback stores the tokens sealed and saves the shop switched off, and the page says so with no secret', async () => {
    const browser = await loggedIn();
    const authorize = await beginFromDashboard(browser, 'thies-bazin', THIES);
    expect(new URL(authorize).searchParams.get('scope')).toBe(
      'read_products,write_fulfillments,write_merchant_managed_fulfillment_orders,write_orders,write_shipping',
    );
    expect(browser.cookies.has('relais_shopify_install')).toBe(true);

    const page = await browser.request(await approve(authorize));
    expect(page.status).toBe(200);
    expect(page.body).toContain(`${THIES} is connected`);
    expect(page.body).toContain('href="/dashboard/shops/thies-bazin"');
    expect(page.body).toContain('switched off until its settings');

    const tokens = JSON.parse((await secrets.get('thies-bazin', TOKENS))!.value.reveal()) as {
      accessToken: string;
      refreshToken: string;
    };
    expect(tokens.refreshToken).toMatch(/^shprt_/);
    for (const secret of [tokens.accessToken, tokens.refreshToken, CLIENT_SECRET])
      expect(page.body).not.toContain(secret);
    const { rows } = await relais.db
      .pool()
      .query<{ sealed: Buffer }>("SELECT sealed FROM shop_secrets WHERE shop_id = 'thies-bazin'");
    for (const row of rows) {
      expect(row.sealed.includes(Buffer.from(tokens.accessToken.slice(6)))).toBe(false);
      expect(row.sealed.includes(Buffer.from(CLIENT_SECRET))).toBe(false);
    }
    expect((await secrets.get('thies-bazin', 'shopify.webhookSecret'))?.value.reveal()).toBe(CLIENT_SECRET);

    const saved = (await directory.list()).find((s) => s.id === 'thies-bazin');
    expect(saved).toMatchObject({
      platform: 'shopify',
      enabled: false,
      document: {
        id: 'thies-bazin',
        platform: 'shopify',
        shopify: {
          domain: THIES,
          oauth: { grant: 'authorization_code', clientId: CLIENT_ID },
          webhookSecret: { stored: 'shopify.webhookSecret' },
        },
      },
    });
    // The settings page the connected page links to knows the shop.
    expect((await browser.request('/dashboard/shops/thies-bazin')).status).toBe(200);
  });

  it('switches on a shop just installed (not served yet): the doctor’s Shopify check reads the tokens the install sealed', async () => {
    const browser = await loggedIn();
    expect((await browser.request(await approve(await beginFromDashboard(browser, 'louga-cuir', LOUGA)))).status).toBe(
      200,
    );
    const settingsPath = '/dashboard/shops/louga-cuir';
    const saved = await browser.request(settingsPath, {
      form: {
        _csrf: await browser.csrf(settingsPath),
        name: 'Louga Cuir',
        country: 'SN',
        pickupNeighbourhood: 'Plateau',
        pickupAddress: '12 avenue Léopold Sédar Senghor',
        pickupContactName: 'Awa Ndiaye',
        pickupContactPhone: '+221770000000',
        dispatchCashOnDeliveryAt: 'created',
        dispatchBaseUrl: relais.emulator.baseUrl,
        dispatchProfile: 'default',
        dispatchApiKey: relais.secrets.dispatchApiKey,
      },
    });
    expect(saved.status).toBe(303);
    const on = await browser.request(`${settingsPath}/on`, { form: { _csrf: await browser.csrf(settingsPath) } });
    expect(on.status).toBe(303);
    expect((await browser.request(settingsPath)).body).toContain('Checks passed');
    expect((await directory.list()).find((s) => s.id === 'louga-cuir')?.enabled).toBe(true);
  });

  it("from Shopify's app URL: a request signed by Shopify begins an install saved under an id made from the shop's domain; an unsigned one is refused", async () => {
    const launch = {
      shop: KAOLACK,
      host: 'YWRtaW4uc2hvcGlmeS5jb20vc3RvcmUva2FvbGFjaw',
      timestamp: String(Math.trunc(Date.now() / 1000)),
    };
    const unsigned = await fetch(
      `${relais.web.url}/connect/shopify/install?${new URLSearchParams(launch).toString()}`,
      {
        redirect: 'manual',
      },
    );
    expect(unsigned.status).toBe(400);
    expect(await unsigned.text()).toMatch(/not signed by Shopify/);

    const browser = new DashboardSession(relais.web.url);
    const signed = new URLSearchParams({ ...launch, hmac: signOAuthQuery(launch, CLIENT_SECRET) });
    const install = await browser.request(`/connect/shopify/install?${signed.toString()}`);
    expect(install.status).toBe(303);
    const page = await browser.request(await approve(install.location!));
    expect(page.status).toBe(200);
    expect(await secrets.get('kaolack-pagne', TOKENS)).toBeDefined();
    expect((await directory.list()).find((s) => s.id === 'kaolack-pagne')?.enabled).toBe(false);
  });

  it('refuses with 400 and stores nothing: a forged hmac, a callback from another browser, a state used twice, a state begun for another shop', async () => {
    const browser = await loggedIn();
    const callback = await approve(await beginFromDashboard(browser, 'zig-forged', ZIGUINCHOR));
    const forged = new URL(callback, PUBLIC_URL);
    forged.searchParams.set('hmac', signOAuthQuery(Object.fromEntries(forged.searchParams), randomHex(32)));
    expectRefusal(await browser.request(`${forged.pathname}${forged.search}`), 400, /not signed by Shopify/);
    await nothingStoredFor('zig-forged');

    // Another browser (no install cookie) with the genuine callback: the state is spent, nothing stored.
    const stranger = await fetch(`${relais.web.url}${callback}`, { redirect: 'manual' });
    expect(stranger.status).toBe(400);
    expect(await stranger.text()).toMatch(/begun in another session/);
    await nothingStoredFor('zig-forged');

    const once = await approve(await beginFromDashboard(browser, 'zig-once', ZIGUINCHOR));
    expect((await browser.request(once)).status).toBe(200);
    await directory.remove('zig-once');
    await secrets.deleteShop('zig-once');
    expectRefusal(await browser.request(once), 400, /already used or expired/);
    await nothingStoredFor('zig-once');

    const foreign = await approve(await beginFromDashboard(browser, 'zig-foreign', ZIGUINCHOR));
    expectRefusal(await browser.request(resigned(foreign, { shop: KAOLACK })), 400, /came back for another shop/);
    await nothingStoredFor('zig-foreign');
  });

  it('refuses an install link that is unknown or already opened, and a shop id already taken by another shop', async () => {
    const browser = await loggedIn();
    expectRefusal(
      await browser.request(`/connect/shopify/install?ticket=${randomHex(32)}`),
      400,
      /unknown, already used/,
    );

    const csrf = await browser.csrf('/dashboard/shops');
    const form = { _csrf: csrf, shopId: 'thies-bazin', domain: ZIGUINCHOR };
    const link = /href="([^"]+)"/.exec(
      (await browser.request('/dashboard/shops/connect/shopify', { form })).body.split('id="continue"')[1] ?? '',
    )?.[1];
    expectRefusal(await browser.request(link!), 409, /shop id thies-bazin is already taken/);
    expectRefusal(await browser.request(link!), 400, /unknown, already used/);
  });

  it('answers 404 on both routes when no Shopify app is configured', async () => {
    const web = await startWeb({ ...relais.base, port: 0 });
    try {
      for (const path of [`/connect/shopify/install?shop=${THIES}`, '/connect/shopify/callback?code=x&state=y']) {
        const answer = await fetch(`${web.url}${path}`, { redirect: 'manual' });
        expect(answer.status).toBe(404);
      }
    } finally {
      await web.close();
    }
  });

  it('refuses an environment with half a Shopify app, or one without a public URL and secret keys, naming each missing variable', () => {
    const error = (() => {
      try {
        readEnv({ SHOPIFY_API_KEY: CLIENT_ID });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(EnvError);
    for (const name of ['SHOPIFY_API_SECRET', 'RELAIS_PUBLIC_URL', 'RELAIS_SECRET_KEYS'])
      expect((error as Error).message).toContain(name);
    expect(
      readEnv({
        SHOPIFY_API_KEY: CLIENT_ID,
        SHOPIFY_API_SECRET: CLIENT_SECRET,
        RELAIS_PUBLIC_URL: PUBLIC_URL,
        RELAIS_SECRET_KEYS: KEYS,
      }).SHOPIFY_API_KEY,
    ).toBe(CLIENT_ID);
  });
});
