/**
 * Issue 24: the dashboard's Service map page over real HTTP (web process, PostgreSQL service map, Redis): a
 * shop's coverage of its country's gazetteer places, the spellings its service uses, when the map was learned,
 * and the page in the dashboard's navigation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceId } from '../../src/orders/dispatch/tariff-guard.js';
import { randomHex, SHOPIFY_SHOP_ID, startTestRelais, WOO_SHOP_ID, type TestRelais } from '../support/relais.js';

const TOKEN = `dash_${randomHex(16)}`;
let relais: TestRelais;

beforeAll(async () => {
  relais = await startTestRelais({ dashboardToken: TOKEN });
});
afterAll(async () => {
  await relais?.stop();
});

async function get(path: string): Promise<{ status: number; body: string }> {
  const answer = await fetch(`${relais.web.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: answer.status, body: await answer.text() };
}

describe('the Service map page', () => {
  it('says the map is not learned yet, every place unknown, before anything was asked', async () => {
    const page = await get(`/dashboard/service-map?shop=${WOO_SHOP_ID}`);
    expect(page.status).toBe(200);
    expect(page.body).toMatch(/Of the (\d+) gazetteer places of CI/);
    const places = Number(/Of the (\d+) gazetteer places/.exec(page.body)![1]);
    expect(page.body).toContain(`<td>not known yet</td><td>${places}</td><td>100.0%</td>`);
    expect(page.body).toContain('Not learned yet');
  });

  it("shows places priced, at the fallback and unknown, the service's own spellings and when it was learned", async () => {
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    const learnedAt = new Date('2026-11-20T09:30:00Z');
    const quotedFor = 'Plateau|0-1kg|prepaid';
    await relais.worker.runtime.serviceMap.record({ id: serviceId(shop), baseUrl: shop.dispatch.baseUrl }, [
      { name: 'Les Almadies', priced: true, totalXof: 2_000, quotedFor, learnedAt },
      { name: 'Ouakam', priced: true, totalXof: 2_300, quotedFor, learnedAt },
    ]);
    const page = await get(`/dashboard/service-map?shop=${SHOPIFY_SHOP_ID}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<td>priced (under some spelling)</td><td>2</td>');
    expect(page.body).toContain('<td>at the fallback tariff (every spelling asked)</td><td>0</td>');
    expect(page.body).toMatch(/<tr><td>Les Almadies<\/td><td>Almadies<\/td><\/tr>/);
    expect(page.body).toMatch(/Learned from .*2026.* to .*2026/);
  });

  it('is in the navigation of every dashboard page', async () => {
    const orders = await get('/dashboard/orders');
    expect(orders.body).toContain('href="/dashboard/service-map"');
  });
});
