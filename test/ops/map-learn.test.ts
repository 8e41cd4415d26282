/**
 * `relais map learn` and `map show` (issue 24), against the dispatch emulator pricing its own list of places
 * (test/fixtures/service-maps/differently-cut.csv), with the real service map (PostgreSQL, Redis) and pacing.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { serviceId } from '../../src/orders/dispatch/tariff-guard.js';
import { learnMap, mapLearnDeps, namesToLearn, type MapLearnReport } from '../../src/ops/map-learn.js';
import { MapLearnRuns } from '../../src/ops/map-learn-runs.js';
import { describeCoverage, mapCoverage } from '../../src/ops/map-report.js';
import { dakarCashOrder, postShopify, shopifyExternalId, waitForState } from '../pipeline/helpers.js';
import { SHOPIFY_SHOP_ID, startTestRelais, WOO_SHOP_ID, type TestRelais } from '../support/relais.js';

const ZONE_FILE = fileURLToPath(new URL('../fixtures/service-maps/differently-cut.csv', import.meta.url));
const resolver = NeighbourhoodResolver.load();

let relais: TestRelais;
beforeAll(async () => {
  relais = await startTestRelais({ zoneFile: ZONE_FILE, policy: { dispatchCallsPerSecond: 1000 } });
});
afterAll(async () => {
  await relais?.stop();
});

const calls = (operation: string) => relais.emulator.calls().filter((c) => c.operation === operation).length;
function learn(limit?: number): Promise<MapLearnReport> {
  const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
  return learnMap(
    mapLearnDeps(relais.worker.runtime, relais.prefix, shop, resolver),
    limit === undefined ? {} : { limit },
  );
}

describe('learning the service map before the first order', () => {
  it('asks for every gazetteer name of the country, stops where told, and resumes without asking twice', async () => {
    const total = namesToLearn({ resolver }, 'SN').length;
    const first = await learn(50);
    expect(first).toMatchObject({ asked: 50, toAsk: 50, alreadyKnown: 0 });
    const quotes = calls('createQuote') + calls('simulatePrice');
    const rest = await learn();
    expect(rest.alreadyKnown).toBe(50);
    expect(rest.asked).toBe(total - 50);
    // One call per name not yet known, plus the fallback's and the sample's.
    expect(calls('createQuote') + calls('simulatePrice') - quotes).toBeLessThanOrEqual(total - 50 + 2 + 6 + 1);
  });

  it('uses the public simulatePrice once a sample shows it judges names as createQuote does', async () => {
    const again = await learn();
    expect(again.asked).toBe(0);
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    const known = await relais.worker.runtime.serviceMap.lookup(serviceId(shop), [
      'Les Almadies',
      'Almadies',
      'Mermoz',
    ]);
    expect(known.get('Les Almadies')?.priced).toBe(true);
    expect(known.get('Almadies')?.priced).toBe(false);
    expect(known.get('Mermoz')?.priced).toBe(false);
    expect(known.get('Les Almadies')?.quotedFor).toMatch(/simulatePrice$/);
  });

  it("then ships the first order of a place priced under the service's own spelling with one quote", async () => {
    const quotes = calls('createQuote');
    const payload = dakarCashOrder('Villa 9, Almadies');
    await postShopify(relais, 'orders/create', payload);
    const record = await waitForState(relais, shopifyExternalId(payload.id), ['held', 'ready']);
    expect(record.neighbourhood?.name).toBe('Les Almadies');
    // The order's own quote, and the fallback price for its parcel (learned once a day per weight band).
    expect(calls('createQuote') - quotes).toBeLessThanOrEqual(2);
  });

  it('shows the coverage, the spellings the service uses and when the map was learned', async () => {
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    const coverage = mapCoverage(
      resolver,
      'SN',
      await relais.worker.runtime.serviceMap.all(serviceId(shop)),
      new Date(),
    );
    expect(coverage.unknown).toBe(0);
    expect(coverage.priced).toBeGreaterThanOrEqual(5);
    expect(coverage.priced + coverage.atFallback).toBe(coverage.places);
    const text = describeCoverage(coverage, shop.dispatch);
    expect(text).toMatch(/priced: \d+, at the fallback tariff: \d+, not known: 0/);
    expect(text).toContain('- Les Almadies (Almadies)');
  });

  it('learns in the background after "Check and switch on", with its progress for the settings page', async () => {
    const shop = relais.shops.get(WOO_SHOP_ID)!;
    const runs = new MapLearnRuns(
      relais.worker.runtime.redis,
      relais.prefix,
      (s) => mapLearnDeps(relais.worker.runtime, relais.prefix, s, resolver),
      relais.worker.runtime.options.logger,
    );
    const run = runs.start(shop);
    expect(runs.start(shop)).toBe(run); // one run per shop at a time
    await run;
    const status = await runs.status(WOO_SHOP_ID);
    expect(status).toMatchObject({ state: 'learned', failed: 0 });
    // Every CI name not already known: the two shops share one service, so names both countries use were learned.
    expect(status!.asked).toBe(status!.toAsk);
    expect(status!.asked).toBeGreaterThan(namesToLearn({ resolver }, 'CI').length - 10);
    const known = await relais.worker.runtime.serviceMap.lookup(serviceId(shop), ['Les deux-Plateaux', 'Cocody']);
    expect(known.get('Les deux-Plateaux')?.priced).toBe(true);
    expect(known.get('Cocody')?.priced).toBe(false);
  });
});
