/**
 * Issue 29, "Done when": the overview page in real Chromium, after a history of 300 orders over 30 days written
 * through the ledger's own methods (delivered, returned, failed, cancelled, held, held then delivered, still with
 * a courier, across Dakar's neighbourhoods). Each chart's totals, read from its SVG and its table view, are those of
 * the seeded history; a click on a mark or a figure opens the orders behind it; the CSV export carries the same
 * figures. A screenshot of the page is kept in a temporary directory (printed).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatXof } from '../../src/dashboard/html.js';
import { launchChromium, type TestBrowser } from '../support/chromium.js';
import { seedOrder, type SeededEnd, type SeededOrder } from '../support/order-history.js';
import { randomHex, SHOPIFY_SHOP_ID, startTestRelais, type TestRelais } from '../support/relais.js';

const TOKEN = `dash_${randomHex(16)}`;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NEIGHBOURHOODS = ['Plateau', 'Sacré Coeur', 'Ouakam', 'Yoff', 'Mermoz', 'Point E', 'Grand Yoff', 'Ngor'];

let relais: TestRelais;
let browser: TestBrowser;
let page: Page;
let shotsDir: string;
const history: SeededOrder[] = [];

/** A fixed pseudo-random sequence: the same history every run. */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** 300 orders over the last 30 days (Dakar is UTC+0 all year): older ones ended, the last 3 days' still open. */
function makeHistory(now: number): SeededOrder[] {
  const random = sequence(29);
  const today = Math.floor(now / DAY) * DAY;
  return Array.from({ length: 300 }, (_, i) => {
    const daysAgo = Math.floor(random() * 30);
    const firstSeenAt = new Date(today - daysAgo * DAY + (8 + random() * 10) * HOUR);
    const roll = random();
    const open = daysAgo < 3;
    let end: SeededEnd;
    if (roll < 0.1) end = 'held';
    else if (open) end = 'in_delivery';
    else
      end =
        roll < 0.6
          ? 'delivered'
          : roll < 0.72
            ? 'returned'
            : roll < 0.76
              ? 'delivery_failed'
              : roll < 0.88
                ? 'cancelled'
                : 'in_delivery';
    const heldOnTheWay = end === 'delivered' && random() < 0.1;
    return {
      shopId: SHOPIFY_SHOP_ID,
      platform: 'shopify',
      number: 5000 + i,
      firstSeenAt,
      end,
      endedAt: new Date(firstSeenAt.getTime() + (6 + random() * 34) * HOUR),
      // Skewed towards the first names: a clear top neighbourhood.
      neighbourhood: NEIGHBOURHOODS[Math.floor(random() ** 1.6 * NEIGHBOURHOODS.length)]!,
      goods: 5_000 + Math.floor(random() * 110) * 500,
      delivery: 1_000 + Math.floor(random() * 4) * 500,
      ...(end === 'held' ? { holdCode: random() < 0.5 ? 'no_neighbourhood' : 'amount_mismatch' } : {}),
      ...(heldOnTheWay ? { holdCode: 'service_unavailable' } : {}),
    };
  });
}

const ended = (...ends: SeededEnd[]) => history.filter((o) => ends.includes(o.end));
const goodsOf = (orders: SeededOrder[]) => orders.reduce((sum, o) => sum + o.goods, 0);

beforeAll(async () => {
  relais = await startTestRelais({ inProcessWorker: false, dashboardToken: TOKEN });
  history.push(...makeHistory(Date.now()));
  const ledger = relais.web.runtime.ledger;
  for (let i = 0; i < history.length; i += 10)
    await Promise.all(history.slice(i, i + 10).map((order) => seedOrder(ledger, order)));
  shotsDir = await mkdtemp(join(tmpdir(), 'relais-overview-shots-'));
  browser = await launchChromium();
  browser.context.setDefaultTimeout(10_000);
  page = browser.page;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await relais?.stop();
  if (shotsDir) process.stdout.write(`overview screenshots in ${shotsDir}\n`);
});

/** The cells of a table view's total row, by column. */
async function totalsOf(card: string): Promise<string[]> {
  return page.locator(`#${card} tfoot td, #${card} tfoot th`).allTextContents();
}

/** The values an SVG's marks carry in their <title>s for one series ("2026-11-03 · Delivered: 12"). */
async function svgSum(chart: string, series: string): Promise<number> {
  const titles = await page.locator(`#${chart} title`).allTextContents();
  return titles
    .filter((t) => t.includes(` · ${series}: `))
    .reduce((sum, t) => sum + Number(t.split(': ')[1]!.replace(/[^\d]/g, '')), 0);
}

describe('the overview page', () => {
  it('opens first after login, on every shop over 30 days', async () => {
    await page.goto(`${relais.web.url}/dashboard`);
    await page.fill('input[name="token"]', TOKEN);
    await Promise.all([page.waitForURL('**/dashboard/overview'), page.click('button[type="submit"]')]);
    expect(await page.locator('h1').textContent()).toBe('Overview');
    expect(await page.locator('select[name="days"]').inputValue()).toBe('30');
    await page.screenshot({ path: join(shotsDir, 'overview.png'), fullPage: true });
    // The top of the page at a narrower width: the picture the README shows.
    await page.setViewportSize({ width: 900, height: 1180 });
    await page.screenshot({ path: join(shotsDir, 'overview-top.png') });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('shows the orders per day by outcome with the seeded totals, in the SVG and in the table view', async () => {
    const expected = {
      delivered: ended('delivered').length,
      failed: ended('returned', 'delivery_failed').length,
      cancelled: ended('cancelled').length,
      inFlight: ended('in_delivery').length,
      held: ended('held').length,
    };
    expect(await totalsOf('outcomes')).toEqual(['Total', ...Object.values(expected).map(String)]);
    expect(await svgSum('outcomes-chart', 'Delivered')).toBe(expected.delivered);
    expect(await svgSum('outcomes-chart', 'Returned or failed')).toBe(expected.failed);
    expect(await svgSum('outcomes-chart', 'Held')).toBe(expected.held);
  });

  it('shows the cash collected, still with couriers and returned, and the running total', async () => {
    const collected = goodsOf(ended('delivered'));
    const withCouriers = goodsOf(ended('in_delivery', 'delivery_failed'));
    const returned = goodsOf(ended('returned'));
    expect(await totalsOf('cash')).toEqual([
      'Total',
      formatXof(collected),
      formatXof(withCouriers),
      formatXof(returned),
      '',
    ]);
    expect(await svgSum('cash-chart', 'Collected')).toBe(collected);
    const runningTotal = await page.locator('#cash tbody tr').last().locator('td').last().textContent();
    expect(runningTotal).toBe(formatXof(collected));
  });

  it('shows the weekly delivery figures, the top neighbourhoods on a map, and the holds by reason', async () => {
    const weeks = await page
      .locator('#rates tbody tr')
      .evaluateAll((rows) => rows.map((row) => Number(row.querySelectorAll('td')[2]!.textContent)));
    expect(weeks.reduce((a, b) => a + b, 0)).toBe(ended('delivered').length);

    const byName = new Map<string, number>();
    for (const o of history) byName.set(o.neighbourhood!, (byName.get(o.neighbourhood!) ?? 0) + 1);
    const [topName, topCount] = [...byName].sort((a, b) => b[1] - a[1])[0]!;
    const first = page.locator('#neighbourhoods tbody tr').first();
    expect(await first.locator('td').nth(0).textContent()).toBe(topName);
    expect(await first.locator('td').nth(1).textContent()).toBe(String(topCount));
    expect(await page.locator('#neighbourhoods svg.map circle').count()).toBe(NEIGHBOURHOODS.length);

    const holds = new Map<string, number>();
    for (const o of history) if (o.holdCode) holds.set(o.holdCode, (holds.get(o.holdCode) ?? 0) + 1);
    const rows = await page
      .locator('#holds tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [tr.children[0]!.textContent!, Number(tr.children[1]!.textContent)] as const),
      );
    expect(new Map(rows)).toEqual(holds);
  });

  it('opens the orders behind a figure: the delivered total, and one day of one bar', async () => {
    await page.locator('#outcomes summary').click();
    await Promise.all([
      page.waitForURL((url) => url.pathname === '/dashboard/orders'),
      page.locator('#outcomes tfoot a').first().click(),
    ]);
    const delivered = ended('delivered').length;
    expect(await page.locator('main').textContent()).toContain(`${delivered} in all`);
    expect(await page.locator('tbody tr .badge').first().textContent()).toBe('delivered');

    await page.goBack();
    const bar = page.locator('#outcomes-chart a', { has: page.locator('title', { hasText: '· Delivered:' }) }).last();
    const title = (await bar.locator('title').textContent())!;
    const [day, count] = [title.slice(0, 10), Number(title.split(': ')[1])];
    await Promise.all([page.waitForURL((url) => url.pathname === '/dashboard/orders'), bar.click()]);
    const onThatDay = ended('delivered').filter((o) => o.firstSeenAt.toISOString().startsWith(day));
    expect(count).toBe(onThatDay.length);
    expect(await page.locator('tbody tr').count()).toBe(onThatDay.length);
    expect(await page.locator('.filters').textContent()).toContain(`delivered, received on ${day}`);
  });

  it('exports each chart as CSV with the same figures', async () => {
    // The page's policy allows no script (so no fetch from it): the browser's own request, with its session cookie.
    const response = await browser.context.request.get(`${relais.web.url}/dashboard/overview/cash.csv?days=30`);
    expect(response.headers()['content-disposition']).toMatch(/^attachment; filename="?relais-cash-all-shops-/);
    const csv = await response.text();
    const [header, ...rows] = csv.trim().split('\r\n');
    expect(header).toBe('day,collected_xof,with_couriers_xof,returned_xof,collected_to_date_xof');
    expect(rows).toHaveLength(30);
    expect(rows.reduce((sum, row) => sum + Number(row.split(',')[1]), 0)).toBe(goodsOf(ended('delivered')));
  });
});
