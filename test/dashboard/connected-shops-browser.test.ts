/**
 * Issue 25, item 4: a Relais that serves connected shops only (no registry file) shows them on the dashboard. The
 * web process starts with no shop at all; two shops are then connected (moved into the database as `relais shops
 * import` does, and announced), and their orders are in the ledger. In real Chromium, the operator logs in and sees
 * every shop's orders (the shop as a column) and the cash table without choosing a shop or typing ?shop=.
 */
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/shops/secret-box.js';
import { prepareImport } from '../../src/shops/shop-directory.js';
import { defaultSecretSourceFor, ShopRegistry } from '../../src/shops/shops.js';
import { PostgresShopSecretStore } from '../../src/adapters/postgres/pg-shop-secrets.js';
import { PostgresShopDirectory } from '../../src/adapters/postgres/pg-shops.js';
import { startWeb, type RunningWeb } from '../../src/main/web.js';
import { launchChromium, type TestBrowser } from '../support/chromium.js';
import { seedOrder } from '../support/order-history.js';
import {
  randomHex,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  waitFor,
  WOO_SHOP_ID,
  type TestRelais,
} from '../support/relais.js';

const TOKEN = `dash_${randomHex(16)}`;
const KEYS = `k1:${randomBytes(32).toString('base64')}`;
const HOUR = 3_600_000;

let relais: TestRelais;
let web: RunningWeb;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  relais = await startTestRelais({ inProcessWorker: false, secretKeys: KEYS });
  // A web process serving connected shops only: none when it starts.
  web = await startWeb({
    ...relais.base,
    shops: new ShopRegistry([]),
    liveShops: {},
    port: 0,
    dashboardToken: TOKEN,
  });
  expect(web.runtime.options.shops.all()).toHaveLength(0);

  const directory = new PostgresShopDirectory(relais.db.pool());
  const secrets = new PostgresShopSecretStore(relais.db.pool(), SecretBox.fromSetting(KEYS));
  for (const shop of prepareImport(
    relais.registryDocument as { shops: unknown[] },
    defaultSecretSourceFor(relais.env),
  )) {
    for (const [name, value] of shop.secrets) await secrets.put(shop.id, name, value);
    await directory.save({ id: shop.id, platform: shop.platform, document: shop.document });
  }
  await web.runtime.announceShops();
  await waitFor(async () => web.runtime.options.shops.all().length === 2, { what: 'both connected shops served' });

  const now = Date.now();
  const orders = [
    { shopId: SHOPIFY_SHOP_ID, platform: 'shopify' as const, number: 1001, goods: 15_000 },
    { shopId: SHOPIFY_SHOP_ID, platform: 'shopify' as const, number: 1002, goods: 9_000 },
    { shopId: WOO_SHOP_ID, platform: 'woocommerce' as const, number: 501, goods: 22_500 },
  ];
  for (const order of orders) {
    await seedOrder(web.runtime.ledger, {
      ...order,
      firstSeenAt: new Date(now - 30 * HOUR),
      endedAt: new Date(now - 2 * HOUR),
      end: 'delivered',
      neighbourhood: 'Plateau',
      delivery: 1_500,
    });
  }

  browser = await launchChromium();
  browser.context.setDefaultTimeout(10_000);
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await web?.close();
  await relais?.stop();
});

describe('the dashboard of a Relais serving connected shops only', () => {
  it("lists every connected shop's orders, with the shop as a column, without a shop being chosen", async () => {
    await page.goto(`${web.url}/dashboard/orders`);
    await page.fill('input[name="token"]', TOKEN);
    await Promise.all([page.waitForURL('**/dashboard/orders'), page.click('button[type="submit"]')]);

    const options = await page.locator('select[name="shop"] option').allTextContents();
    expect(options).toEqual(['All shops (2)', 'Abidjan Tech (woocommerce)', 'Dakar Mode (shopify)']);
    expect(await page.locator('select[name="shop"]').inputValue()).toBe('');
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(3);
    expect(await page.locator('tr', { hasText: '#501' }).textContent()).toContain('Abidjan Tech');
    expect(await page.locator('tr', { hasText: '#1001' }).textContent()).toContain('Dakar Mode');
  });

  it('shows the cash collected from every connected shop on the cash page', async () => {
    await page.goto(`${web.url}/dashboard/money`);
    const totals = page.locator('tr', { hasText: 'Total' }).first();
    expect(await totals.textContent()).toMatch(/46[\s\u00a0\u202f.,]?500\u00a0F/);
  });
});
