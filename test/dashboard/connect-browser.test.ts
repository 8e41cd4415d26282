/**
 * Connecting shops in a real browser (issue 17, "Done when"): Debian's chromium, driven by playwright-core, logs in
 * to the dashboard, connects an emulated Shopify shop through the app install (OAuth authorization code) and an
 * emulated WooCommerce store through its app authorisation (Approve on the store's page), fills in each shop's
 * settings and switches it on; then one order from each shop reaches Relais by the shops' own webhooks, ships, and
 * is written back. No secret shows in a page the browser saw, in the logs or in the queues' jobs.
 *
 * Relais is opened as http://localhost:PORT and the emulated shops live on http://127.0.0.1: two sites, so the
 * browser goes to the shop and comes back cross-site, as it would from Shopify or a merchant's WordPress, and the
 * cookies' SameSite rules apply as they would there.
 *
 * The web process and worker serve shops live (src/shops/served-shops.ts), the registry file's two test shops
 * plus the connected ones. Screenshots go to a temporary directory (printed).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_COD_GATEWAY, startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';
import { Secret } from '../../src/shops/secret.js';
import { SecretBox } from '../../src/shops/secret-box.js';
import { loadServedShops } from '../../src/shops/shop-directory.js';
import { defaultSecretSourceFor } from '../../src/shops/shops.js';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { PostgresShopSecretStore } from '../../src/adapters/postgres/pg-shop-secrets.js';
import { PostgresShopDirectory } from '../../src/adapters/postgres/pg-shops.js';
import { startWeb, type RunningWeb } from '../../src/main/web.js';
import { startWorker, type RunningWorker } from '../../src/main/worker.js';
import { WOO_STORED } from '../../src/adapters/woocommerce/connect.js';
import { shipmentsFor, waitForState } from '../pipeline/helpers.js';
import { launchChromium, type TestBrowser } from '../support/chromium.js';
import { ABIDJAN_ADDRESS } from '../support/factories.js';
import { capturingLogger } from '../support/log-capture.js';
import { freePort } from '../support/redis.js';
import { randomHex, startTestRelais, waitFor, type TestRelais } from '../support/relais.js';

const TOKEN = `dash_${randomHex(16)}`;
const KEYS = `k1:${randomBytes(32).toString('base64')}`;
const CLIENT_ID = `client_${randomHex(8)}`;
const CLIENT_SECRET = randomHex(32);
const SHOPIFY_ID = 'thies-bazin';
const SHOPIFY_SHOP = 'thies-bazin.myshopify.com';
const WOO_ID = 'yamoussoukro-tech';

let shopify: ShopifyEmulator;
let woo: WooEmulator;
let relais: TestRelais;
let web: RunningWeb;
let worker: RunningWorker;
/** The test's Relais seen through the live web process and worker (for the pipeline helpers). */
let live: TestRelais;
let secrets: PostgresShopSecretStore;
let browser: TestBrowser;
let page: Page;
let shotsDir: string;
let relaisUrl: string;
const { logger, lines: logLines } = capturingLogger();
/** Every HTML document the browser received, whatever the site. */
const documents: Promise<string>[] = [];

beforeAll(async () => {
  [shopify, woo] = await Promise.all([
    startShopifyEmulator({
      shops: [
        { domain: SHOPIFY_SHOP, accessToken: `shpat_${randomHex()}`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
      ],
    }),
    startWooEmulator({
      shops: [
        { id: WOO_ID, consumerKey: `ck_${randomHex(20)}`, consumerSecret: `cs_${randomHex(20)}`, weightUnit: 'kg' },
      ],
    }),
  ]);
  // The file-served web process of startTestRelais stays idle: the live one below, on a known port, is under test.
  relais = await startTestRelais({ inProcessWorker: false, secretKeys: KEYS, logger });
  const directory = new PostgresShopDirectory(relais.db.pool());
  secrets = new PostgresShopSecretStore(relais.db.pool(), SecretBox.fromSetting(KEYS));
  const fileDocument = relais.registryDocument as { shops: unknown[] };
  const fileSecrets = defaultSecretSourceFor(relais.env);
  const base = {
    ...relais.base,
    shops: await loadServedShops({ fileDocument, fileSecrets, directory, secrets }),
    liveShops: { fileDocument, fileSecrets },
  };
  const port = await freePort();
  relaisUrl = `http://localhost:${port}`;
  web = await startWeb({
    ...base,
    port,
    dashboardToken: TOKEN,
    publicUrl: relaisUrl,
    shopifyApp: {
      clientId: CLIENT_ID,
      clientSecret: new Secret(CLIENT_SECRET, 'test'),
      publicUrl: relaisUrl,
      adminUrlFor: (domain) => shopify.adminUrl(domain),
    },
  });
  worker = await startWorker({ ...base, resolver: NeighbourhoodResolver.load(), concurrency: 2 });
  live = { ...relais, web, worker };

  shotsDir = await mkdtemp(join(tmpdir(), 'relais-connect-shots-'));
  browser = await launchChromium();
  // A step that does not happen fails within the test's time, naming what it waited for.
  browser.context.setDefaultTimeout(10_000);
  page = browser.page;
  page.on('response', (response) => {
    if (response.request().resourceType() === 'document' && response.status() < 300)
      documents.push(response.text().catch(() => ''));
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await shopify?.webhooksSettled();
  await woo?.settled();
  await worker?.close();
  await web?.close();
  await relais?.stop();
  await shopify?.close();
  await woo?.close();
  if (shotsDir) process.stdout.write(`connect screenshots in ${shotsDir}\n`);
});

const shot = (name: string) => page.screenshot({ path: join(shotsDir, `${name}.png`), fullPage: true });

/** The settings form filled in as the merchant would, then saved; answers once the saved page is shown. */
async function fillSettings(settings: {
  name: string;
  country: string;
  neighbourhood: string;
  address: string;
  contactName: string;
  contactPhone: string;
  codGateways: string;
}): Promise<void> {
  const form = page.locator('form.settings');
  await form.locator('input[name="name"]').fill(settings.name);
  await form.locator('select[name="country"]').selectOption(settings.country);
  await form.locator('input[name="pickupNeighbourhood"]').fill(settings.neighbourhood);
  await form.locator('input[name="pickupAddress"]').fill(settings.address);
  await form.locator('input[name="pickupContactName"]').fill(settings.contactName);
  await form.locator('input[name="pickupContactPhone"]').fill(settings.contactPhone);
  await form.locator('textarea[name="codGateways"]').fill(settings.codGateways);
  await form.locator('input[name="dispatchBaseUrl"]').fill(relais.emulator.baseUrl);
  await form.locator('input[name="dispatchApiKey"]').fill(relais.secrets.dispatchApiKey);
  await form.getByRole('button', { name: 'Save settings' }).click();
  // The same URL before and after: the flash tells the new page apart (a refused form shows its problems instead).
  await page.locator('.flash, #problems').first().waitFor();
  expect(await page.locator('.flash, #problems').first().textContent()).toContain('Settings saved.');
}

/** "Check and switch on": the doctor's checks pass and the page shows the shop on. */
async function switchOn(shopId: string): Promise<void> {
  await page.getByRole('button', { name: 'Check and switch on' }).click();
  // The same URL before and after: the flash tells the new page apart. A failed check shows its words here.
  await page.locator('.flash').waitFor({ timeout: 20_000 });
  expect(new URL(page.url()).pathname).toBe(`/dashboard/shops/${shopId}`);
  expect(await page.locator('.flash').textContent()).toContain(
    "Checks passed: Relais now dispatches this shop's orders.",
  );
  expect(await page.locator('h1 .badge').textContent()).toBe('on');
}

/** The shop is served by the web process and the worker (announced on Redis, no restart). */
async function served(shopId: string): Promise<void> {
  await waitFor(async () => [web.runtime, worker.runtime].every((p) => p.options.shops.get(shopId) !== undefined), {
    what: `shop ${shopId} served by the web process and the worker`,
  });
}

describe('connecting shops from the dashboard in a real browser', () => {
  it('logs in, connects a Shopify shop through the app install, fills its settings and switches it on', async () => {
    await page.goto(`${relaisUrl}/dashboard/shops`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    await page.fill('input[name="token"]', TOKEN);
    await Promise.all([page.waitForURL('**/dashboard/shops'), page.click('button[type="submit"]')]);
    await shot('shops');

    const connect = page.locator('#connect-shopify');
    await connect.locator('input[name="shopId"]').fill(SHOPIFY_ID);
    await connect.locator('input[name="domain"]').fill(SHOPIFY_SHOP);
    // The page moves on by itself (meta refresh) to the install link, Shopify's authorize page (the emulator
    // approves at once, as an already-logged-in merchant who clicks Install), and back to Relais's callback.
    await Promise.all([
      page.waitForURL('**/connect/shopify/callback?**'),
      connect.getByRole('button', { name: 'Connect a Shopify shop' }).click(),
    ]);
    expect(await page.locator('h1').textContent()).toBe(`${SHOPIFY_SHOP} is connected`);
    expect(await page.locator('#outcome').textContent()).toContain('switched off until its settings');
    await shot('shopify-connected');

    await Promise.all([page.waitForURL(`**/dashboard/shops/${SHOPIFY_ID}`), page.click('#settings')]);
    expect(await page.locator('h1 .badge').textContent()).toBe('off');
    await fillSettings({
      name: 'Thiès Bazin',
      country: 'SN',
      neighbourhood: 'Plateau',
      address: '3 rue Carnot',
      contactName: 'Fatou Sarr',
      contactPhone: '+221770000042',
      codGateways: DEFAULT_COD_GATEWAY,
    });
    // The key typed in is stored, never shown back.
    expect(await page.locator('input[name="dispatchApiKey"]').inputValue()).toBe('');
    expect(await page.locator('form.settings').textContent()).toContain('(stored; leave empty to keep it)');
    await switchOn(SHOPIFY_ID);
    await shot('shopify-on');
    await served(SHOPIFY_ID);

    // relais doctor --fix, run by "Check and switch on", subscribed the order webhooks to the public URL.
    expect(
      shopify
        .webhookSubscriptions(SHOPIFY_SHOP)
        .filter((s) => s.uri === `${relaisUrl}/webhooks/shopify`)
        .map((s) => s.topic)
        .sort(),
    ).toEqual(['APP_UNINSTALLED', 'ORDERS_CANCELLED', 'ORDERS_CREATE', 'ORDERS_PAID', 'ORDERS_UPDATED']);
  });

  it('connects a WooCommerce store through its app authorisation (Approve on the store), fills its settings and switches it on', async () => {
    await page.goto(`${relaisUrl}/dashboard/shops`);
    const connect = page.locator('#connect-woocommerce');
    await connect.locator('input[name="shopId"]').fill(WOO_ID);
    await connect.locator('input[name="storeUrl"]').fill(woo.siteUrl(WOO_ID));
    await Promise.all([
      page.waitForURL('**/wc-auth/v1/authorize?**'),
      connect.getByRole('button', { name: 'Connect a WooCommerce shop' }).click(),
    ]);
    await shot('woo-approve');
    await Promise.all([
      page.waitForURL('**/connect/woocommerce/return?**'),
      page.getByRole('button', { name: 'Approve' }).click(),
    ]);
    expect(await page.locator('#outcome').getAttribute('data-outcome')).toBe('connected');
    await shot('woo-connected');

    await Promise.all([
      page.waitForURL(`**/dashboard/shops/${WOO_ID}`),
      page.getByRole('link', { name: "Open the shop's settings" }).click(),
    ]);
    expect(await page.locator('h1 .badge').textContent()).toBe('off');
    await fillSettings({
      name: 'Yamoussoukro Tech',
      country: 'CI',
      neighbourhood: 'Cocody',
      address: 'Boulevard Latrille, villa 8',
      contactName: 'Koffi Kouamé',
      contactPhone: '+2250700000042',
      codGateways: 'cod',
    });
    await switchOn(WOO_ID);
    await shot('woo-on');
    await served(WOO_ID);

    await page.goto(`${relaisUrl}/dashboard/shops`);
    for (const id of [SHOPIFY_ID, WOO_ID])
      expect(await page.locator('tr', { hasText: id }).locator('.badge').textContent()).toBe('on');
    await shot('shops-on');
  });

  it('ships one order from each connected shop, written back into the shop, with no secret in pages, logs or jobs', async () => {
    const shopifyOrder = shopify.createOrder(SHOPIFY_SHOP);
    const product = await woo.createProduct(WOO_ID, { name: 'Téléphone Tecno', weight: '0.45', price: '45000' });
    const wooOrder = await woo.createOrder(WOO_ID, {
      line_items: [{ product_id: product.id, quantity: 1 }],
      payment_method: 'cod',
      payment_method_title: 'Paiement à la livraison',
      billing: { ...ABIDJAN_ADDRESS, email: 'aya.kouassi@example.com', phone: '+225 07 07 12 34 56' },
      shipping: { ...ABIDJAN_ADDRESS, phone: '' },
    });
    const shopifyId = `${SHOPIFY_ID}:${shopifyOrder.id}`;
    const wooId = `${WOO_ID}:${String(wooOrder.id)}`;

    for (const id of [shopifyId, wooId]) {
      const record = await waitForState(live, id, ['ready', 'held']);
      expect(record.hold).toBeUndefined();
    }
    const [shopifyShipment] = shipmentsFor(live, shopifyId);
    const [wooShipment] = shipmentsFor(live, wooId);

    // Shopify: the fulfillment with its tracking.
    const fulfilled = await waitFor(async () => shopify.orderSnapshot(SHOPIFY_SHOP, shopifyOrder.id).fulfillments[0], {
      what: 'the fulfillment in the Shopify emulator',
    });
    expect(fulfilled.trackingInfo).toEqual([
      { company: 'Relais', number: shopifyShipment!.tracking_code, url: shopifyShipment!.publicTrackingUrl },
    ]);
    // WooCommerce: the shipment in the order's meta, the tracking link in a note to the customer.
    const wooSnapshot = () => woo.orderSnapshot(WOO_ID, Number(wooOrder.id));
    await waitFor(async () => wooSnapshot().notes.some((n) => n.customer_note), { what: 'the tracking note' });
    expect(Object.fromEntries(wooSnapshot().meta_data.map((m) => [m.key, m.value]))).toMatchObject({
      _relais_shipment_id: wooShipment!.shipment_id,
      _relais_tracking_code: wooShipment!.tracking_code,
      _relais_tracking_url: wooShipment!.publicTrackingUrl,
    });
    expect(wooSnapshot().notes.find((n) => n.customer_note)!.note).toContain(wooShipment!.publicTrackingUrl);

    // The secrets the flows handled: none in what the browser saw, what was logged, or what was queued.
    const tokens = JSON.parse((await secrets.get(SHOPIFY_ID, 'shopify.oauthTokens'))!.value.reveal()) as {
      accessToken: string;
      refreshToken: string;
    };
    const stored = async (shopId: string, name: string) => (await secrets.get(shopId, name))!.value.reveal();
    const issued = woo.issuedKeys(WOO_ID).at(-1)!;
    const named: Record<string, string> = {
      'Shopify access token': tokens.accessToken,
      'Shopify refresh token': tokens.refreshToken,
      'Shopify client secret (its webhook secret)': CLIENT_SECRET,
      'WooCommerce consumer key': issued.consumerKey,
      'WooCommerce consumer secret': issued.consumerSecret,
      'WooCommerce webhook secret': await stored(WOO_ID, WOO_STORED.webhookSecret),
      'dispatch API key': relais.secrets.dispatchApiKey,
      'Shopify shop dispatch webhook token': await stored(SHOPIFY_ID, 'dispatch.webhookToken'),
      'WooCommerce shop dispatch webhook token': await stored(WOO_ID, 'dispatch.webhookToken'),
    };
    expect(await stored(WOO_ID, WOO_STORED.consumerKey)).toBe(issued.consumerKey);

    const pages = await Promise.all(documents);
    const jobs = [];
    for (const queue of web.runtime.queues.all())
      jobs.push(...(await queue.getJobs(['active', 'waiting', 'delayed', 'prioritized', 'completed', 'failed'])));
    expect(pages.length).toBeGreaterThan(10);
    expect(logLines.length).toBeGreaterThan(0);
    expect(jobs.length).toBeGreaterThan(0);
    const seen = {
      pages: pages.join('\n'),
      logs: logLines.join(''),
      jobs: JSON.stringify(jobs.map((j) => [j.name, j.data, j.returnvalue, j.failedReason])),
    };
    const leaks = Object.entries(named).flatMap(([name, secret]) =>
      Object.entries(seen)
        .filter(([, text]) => text.includes(secret))
        .map(([where]) => `${name} in ${where}`),
    );
    expect(leaks).toEqual([]);
  });
});
