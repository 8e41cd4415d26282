/**
 * The README's first command, `npm run demo`, keeps working: every sample order ends as a merchant
 * would expect (delivered, held with a reason, returned after a failed delivery), its two shops connected
 * through the Shopify app install and WooCommerce app authorisation.
 */
import { describe, expect, it } from 'vitest';
import { runDemo } from '../src/main/demo.js';
import { randomHex } from './support/relais.js';

const dashboardToken = `dash_${randomHex(16)}`;

describe('npm run demo', () => {
  it('ends with each sample order in the outcome its scenario calls for', async () => {
    const lines: string[] = [];
    const demo = await runDemo({
      once: true,
      // A delivery sync writes the step the service shows when it runs: one that runs after the courier moved on
      // writes no line for the step passed over. At 250 ms a step, a freshly started test process (cold worker,
      // shop clients and token source built on first use) sometimes fell behind the courier; 600 ms leaves room, under load too.
      stepMs: 600,
      print: (l) => lines.push(l),
      logLevel: 'silent',
      redisUrl: process.env.REDIS_URL,
      dashboardToken,
    });
    try {
      const byScenario = Object.fromEntries(demo.outcomes.map((o) => [o.scenario, o]));
      expect(byScenario['Shopify, cash on delivery']?.state).toBe('delivered');
      // 17 000 F in the shop, 2 000 F of it the shop's shipping: the courier collects the goods, 15 000 F.
      expect(byScenario['Shopify, cash on delivery']?.detail).toMatch(/collect 15000 XOF/);
      expect(byScenario['Shopify, cash on delivery']?.inShop).toBe('tracking link + 4 steps + paid');
      expect(byScenario['Shopify, cash on delivery, courier cannot deliver']?.inShop).not.toMatch(/paid/);
      expect(byScenario['WooCommerce, cash on delivery']?.inShop).toMatch(/paid$/);
      expect(byScenario['Shopify, prepaid (paid a moment later)']?.state).toBe('delivered');
      expect(byScenario['Shopify, address without a neighbourhood']?.state).toBe('held');
      expect(byScenario['Shopify, address without a neighbourhood']?.detail).toMatch(/Rue 10/);
      expect(byScenario['Shopify, cash on delivery, courier cannot deliver']?.state).toBe('returned');
      expect(byScenario['WooCommerce, cash on delivery']?.state).toBe('delivered');
      expect(lines.join('\n')).toMatch(/order\s+scenario\s+outcome/);
      // The shops came in through the flows a merchant uses, not a pre-written registry.
      expect(lines).toContain(
        'Connected dakar-mode through the Shopify app install (authorization code grant, expiring token)',
      );
      expect(lines.join('\n')).toContain('Connected abidjan-tech through WooCommerce app authorisation');
      // The dashboard is served, and its token is not printed.
      expect(lines.join('\n')).toContain(`Dashboard: ${demo.dashboardUrl}`);
      expect((await fetch(`${demo.dashboardUrl}/login`)).status).toBe(200);
      // The dashboard opens on the overview, its charts holding the demo's orders of both shops.
      const auth = { headers: { authorization: `Bearer ${dashboardToken}` } };
      const first = await fetch(demo.dashboardUrl, auth);
      expect(new URL(first.url).pathname).toBe('/dashboard/overview');
      expect(await first.text()).toContain('<h1>Overview</h1>');
      const csv = await (await fetch(`${demo.dashboardUrl}/overview/outcomes.csv`, auth)).text();
      const [header, ...days] = csv
        .trim()
        .split('\r\n')
        .map((line) => line.split(','));
      const total = (column: string) => days.reduce((sum, day) => sum + Number(day[header!.indexOf(column)]), 0);
      expect(header).toEqual(['day', 'delivered', 'failed', 'cancelled', 'in_flight', 'held']);
      expect(total('delivered')).toBe(demo.outcomes.filter((o) => o.state === 'delivered').length);
      expect(total('held')).toBe(1);
      expect(header!.slice(1).reduce((sum, column) => sum + total(column), 0)).toBe(demo.outcomes.length);
    } finally {
      await demo.stop();
    }
  }, 120_000);
});
