/**
 * Issue 28, item 3, in real Chromium: the first-contact loop of test/firstcontact/learn-loop.test.ts run from the
 * dashboard instead of a terminal. Relais starts on the default profile against a service speaking a dialect it is
 * never given; the operator saves the shop's Service names page once (what the probe learns), the first orders'
 * delivery webhooks are refused and their states unknown; the page then names the header that verifies them and
 * the unmapped states; the operator picks a step for each and saves; later webhooks are accepted and every order's
 * steps are written to the shop.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type TestBrowser } from '../support/chromium.js';
import { randomHex, SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, waitFor, type TestRelais } from '../support/relais.js';
import {
  deliverEverything,
  EVERY_STEP,
  placeOrders,
  startDialectLoop,
  type DialectLoop,
} from '../firstcontact/dialect-loop.js';

const TOKEN = `dash_${randomHex(16)}`;

let loop: DialectLoop;
let relais: TestRelais;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  loop = await startDialectLoop({ dashboardToken: TOKEN });
  relais = loop.relais;
  browser = await launchChromium();
  browser.context.setDefaultTimeout(20_000);
  page = browser.page;
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await loop?.stop();
});

const pageUrl = () => `${relais.web.url}/dashboard/shops/${SHOPIFY_SHOP_ID}/profile`;
const record = (extId: string) => relais.worker.runtime.ledger.get(extId);

/** Saves the page's form; waits until the web process and the worker both use the version it reports. */
async function saveAndWaitInForce(): Promise<void> {
  await Promise.all([page.waitForURL('**/profile'), page.click('button:has-text("Save the shop\'s profile")')]);
  const flash = (await page.locator('body').textContent()) ?? '';
  const version = Number(/Stored as version (\d+)/.exec(flash)?.[1]);
  expect(version, flash).toBeGreaterThan(0);
  for (const process of [relais.worker.runtime, relais.web.runtime])
    await waitFor(async () => process.profiles.versionOf(SHOPIFY_SHOP_ID) === version, {
      what: `profile version ${version} in force`,
    });
}

async function expectPaidWithEveryStep(orders: Array<{ id: number; extId: string }>): Promise<void> {
  for (const { id, extId } of orders) {
    await waitFor(async () => (await record(extId))?.delivery?.written.paid, {
      what: `${extId} paid`,
      timeoutMs: 20_000,
    });
    const shop = loop.shopify.orderSnapshot(SHOPIFY_DOMAIN, id);
    expect(shop.financialStatus).toBe('PAID');
    expect(shop.fulfillments[0]!.events.map((e) => e.status)).toEqual(EVERY_STEP);
  }
}

describe("learning a new service's names from the dashboard, in Chromium", () => {
  let first: Array<{ id: number; extId: string }>;

  it("stores what the probe learns from the shop's Service names page, reached from nothing but a login", async () => {
    await page.goto(pageUrl());
    await page.fill('input[name="token"]', TOKEN);
    await Promise.all([page.waitForURL('**/profile'), page.click('button[type="submit"]')]);
    await saveAndWaitInForce();
    first = await placeOrders(loop, 2);
  });

  it('shows the header the refused webhooks verify with and every unmapped state, never a secret', async () => {
    await deliverEverything(loop);
    await waitFor(
      async () =>
        (await relais.worker.runtime.firstContact.seenStates(SHOPIFY_SHOP_ID)).some((s) => s.state === 'handed_over'),
      { what: 'the delivered state read by polling', timeoutMs: 15_000 },
    );
    expect(relais.emulator.webhookDeliveries().some((d) => d.status === 401)).toBe(true);
    await page.goto(pageUrl());
    expect((await page.locator('#signature-header').textContent())?.toLowerCase()).toBe('x-courier-mac');
    expect(await page.locator('#signature').textContent()).toContain('verifies with your secret: use it');
    const states = await page.locator('#states tbody td:first-child').allTextContents();
    expect(states).toEqual(expect.arrayContaining(['courier_bound', 'parcel_in_hand', 'handed_over']));
    const html = await page.content();
    expect(html).not.toContain(loop.signingSecret);
    expect(html).not.toContain(relais.secrets.dispatchWebhookToken);
    for (const { extId } of first) expect(html).not.toContain(extId);
  });

  it("stores the steps picked; the first orders' missed steps and later orders' webhooks are then written", async () => {
    const states = await page.locator('#states tbody td:first-child').allTextContents();
    for (const state of states) {
      const select = page.getByLabel(`Step for ${state}`);
      await select.selectOption(loop.service.stepOf(state)!);
    }
    await saveAndWaitInForce();
    await expectPaidWithEveryStep(first);
    await page.goto(pageUrl());
    expect(await page.locator('#states').count(), 'every state mapped').toBe(0);

    const second = await placeOrders(loop, 1);
    await deliverEverything(loop);
    await expectPaidWithEveryStep(second);
    const theirs = relais.emulator
      .webhookDeliveries()
      .filter((d) => second.some((o) => JSON.stringify(d.body).includes(o.extId)));
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.filter((d) => d.status !== 200)).toEqual([]);
  });
});
