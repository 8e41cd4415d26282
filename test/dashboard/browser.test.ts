/**
 * The dashboard in a real browser (Debian's chromium, driven by playwright-core): an operator logs in, finds
 * the order Relais held because its address names no neighbourhood it knows, teaches Relais the merchant's
 * word for it, replays the order from the page, and watches it end dispatched, with its timeline.
 *
 * Screenshots go to a temporary directory (printed) so a person can look at the pages.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SHIPPING_ADDRESS, startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { shipmentsFor, shopifyExternalId, waitForState } from '../pipeline/helpers.js';
import {
  makeSecrets,
  randomHex,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  waitFor,
  type TestRelais,
} from '../support/relais.js';
import { launchChromium, type TestBrowser } from '../support/chromium.js';

const TOKEN = `dash_${randomHex(16)}`;

let shopify: ShopifyEmulator;
let relais: TestRelais;
let browser: TestBrowser;
let page: Page;
let shotsDir: string;
let heldId: string;
let heldName: string;

const { latitude: _lat, longitude: _lng, ...addressWithoutCoords } = DEFAULT_SHIPPING_ADDRESS;

beforeAll(async () => {
  const secrets = makeSecrets();
  shopify = await startShopifyEmulator({
    shops: [
      { domain: SHOPIFY_DOMAIN, accessToken: secrets.shopifyAccessToken, clientSecret: secrets.shopifyClientSecret },
    ],
  });
  relais = await startTestRelais({ secrets, shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN), dashboardToken: TOKEN });
  for (const topic of ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled']) {
    shopify.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  }
  const order = shopify.createOrder(SHOPIFY_DOMAIN, {
    shippingAddress: { ...addressWithoutCoords, address1: 'Pyrotechnie, villa 3', address2: '', city: 'Dakar' },
  });
  heldId = shopifyExternalId(order.id);
  heldName = order.name;
  await waitForState(relais, heldId, ['held']);

  shotsDir = await mkdtemp(join(tmpdir(), 'relais-dashboard-shots-'));
  browser = await launchChromium();
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await shopify?.webhooksSettled();
  await relais?.stop();
  await shopify?.close();
  if (shotsDir) process.stdout.write(`dashboard screenshots in ${shotsDir}\n`);
});

describe('fixing a held order from the dashboard', () => {
  it('logs in, adds the alias from the held order page, replays it, and the order ends dispatched with its timeline', async () => {
    // Not logged in: the held page sends the browser to the login form, which brings it back after login.
    await page.goto(`${relais.web.url}/dashboard/held`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    await page.fill('input[name="token"]', TOKEN);
    await Promise.all([page.waitForURL('**/dashboard/held'), page.click('button[type="submit"]')]);

    const card = page.locator('.card', { hasText: heldName });
    await expect
      .poll(() => card.locator('.reason').textContent())
      .toContain("no neighbourhood found in 'Pyrotechnie, villa 3");
    await page.screenshot({ path: join(shotsDir, 'held.png'), fullPage: true });

    await card.locator('input[name="text"]').fill('Pyrotechnie');
    await card.locator('input[name="neighbourhood"]').fill('Sacré-Cœur');
    await Promise.all([
      page.waitForURL('**/dashboard/orders/**'),
      card.getByRole('button', { name: 'Add alias and replay' }).click(),
    ]);
    expect(await page.locator('.flash.ok').textContent()).toContain(
      'Alias "Pyrotechnie" → Sacré Coeur added for Dakar Mode.',
    );

    // The page reloads itself until the worker has dispatched the order.
    await page.locator('h1 .badge', { hasText: 'ready' }).waitFor({ timeout: 20_000 });
    const record = (await relais.worker.runtime.ledger.get(heldId))!;
    expect(record.state).toBe('ready');
    expect(record.neighbourhood?.name).toBe('Sacré Coeur');
    const timeline = page.locator('table').last();
    for (const operation of ['hold', 'createQuote', 'createShipment', 'markReady']) {
      await expect.poll(() => timeline.textContent()).toContain(operation);
    }
    await expect.poll(() => page.textContent('main')).toContain(record.shipment!.shipmentId);
    expect(await page.textContent('main')).toContain('Sacré Coeur');
    await page.screenshot({ path: join(shotsDir, 'order.png'), fullPage: true });

    // One shipment, and the alias stays for the next customer who writes "Pyrotechnie".
    expect(shipmentsFor(relais, heldId)).toHaveLength(1);
    expect(await relais.worker.runtime.aliases.list(SHOPIFY_SHOP_ID)).toEqual({ Pyrotechnie: 'Sacré Coeur' });
    await page.goto(`${relais.web.url}/dashboard/held`);
    expect(await page.textContent('main')).toContain('No held order');
    await page.goto(`${relais.web.url}/dashboard/orders`);
    expect(await page.locator('tr', { hasText: heldName }).textContent()).toContain('Sacré Coeur');
    await page.screenshot({ path: join(shotsDir, 'orders.png'), fullPage: true });
  });

  it('opens a dispute on the dispatched order from its page, and lists it as open', async () => {
    await page.goto(`${relais.web.url}/dashboard/orders/${encodeURIComponent(heldId)}`);
    const card = page.locator('#disputes');
    await card.locator('input[name="reason"]').fill('damaged');
    await card.locator('input[name="claimantId"]').fill('ops-awa');
    await card.locator('textarea[name="description"]').fill('The box arrived crushed.\nThe customer refused it.');
    expect(await card.locator('input[name="claimantType"]').inputValue()).toBe('seller');
    await page.screenshot({ path: join(shotsDir, 'dispute-form.png'), fullPage: true });
    await Promise.all([
      page.waitForURL('**/dashboard/orders/**'),
      card.getByRole('button', { name: 'Open dispute' }).click(),
    ]);

    const [claim] = relais.emulator.shipments().find((s) => s.external_order_id === heldId)?.claims ?? [];
    expect(claim).toMatchObject({ reason: 'damaged', claimant_id: 'ops-awa', claimant_type: 'seller', status: 'OPEN' });
    expect(await page.locator('.flash.ok').textContent()).toContain(`claim ${claim!.claim_id}`);
    const row = page.locator('#disputes tr', { hasText: claim!.claim_id });
    expect(await row.textContent()).toContain('OPEN');
    await page.screenshot({ path: join(shotsDir, 'dispute-opened.png'), fullPage: true });
  });

  it("shows the queues with bull-board under the dashboard's own Content-Security-Policy", async () => {
    await page.goto(`${relais.web.url}/dashboard/queues`);
    // The overview's cards come from bull-board's JSON API, fetched by its scripts: both allowed by the policy.
    await page
      .getByText(/\d+ Jobs?$/)
      .first()
      .waitFor({ timeout: 15_000 });
    expect(await page.textContent('body')).toContain('shop-events');
    await page.screenshot({ path: join(shotsDir, 'queues.png'), fullPage: true });

    // The board is read-only: even an action from bull-board's own page (same origin, logged in) is refused.
    const status = await page.evaluate(
      async () => (await fetch('/dashboard/queues/api/queues/deliveries/pause', { method: 'PUT' })).status,
    );
    expect(status).toBe(405);
    expect(await relais.web.runtime.queues.deliveries.isPaused()).toBe(false);
  });

  it('shows the cash collected and expected for the day', async () => {
    await page.goto(`${relais.web.url}/dashboard/money`);
    await waitFor(async () => (await page.textContent('main'))?.includes('Cash on delivery, from the ledger'), {
      what: 'the money page',
    });
    const today = new Date().toISOString().slice(0, 10);
    expect(await page.locator('tr', { hasText: today }).first().textContent()).toMatch(/\d\u00a0F/);
    await page.screenshot({ path: join(shotsDir, 'money.png'), fullPage: true });
  });
});
