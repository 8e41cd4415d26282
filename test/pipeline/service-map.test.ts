/**
 * Issue 24, end to end (real PostgreSQL, Redis, HTTP and the dispatch emulator): the emulated service prices only
 * the places of its own list (test/fixtures/service-maps/differently-cut.csv), spelled and cut otherwise than the
 * gazetteer. Relais sends each order under the most precise name the service prices, learns the map as it goes,
 * holds only when no candidate is priced, and never ships at the fallback tariff or under a city name.
 */
import { fileURLToPath } from 'node:url';
import { COD_FEE_XOF, FALLBACK_TARIFF_XOF, ZONE_TARIFF_XOF } from '@relais/emulators/dispatch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldBody } from '../../src/dashboard/pages.js';
import { addAliasAndReplay } from '../../src/dashboard/use-cases/add-alias-and-replay.js';
import { heldOrders } from '../../src/dashboard/use-cases/held-orders.js';
import { dashboardDepsFor } from '../../src/dashboard/wiring.js';
import { candidatesOf } from '../../src/geo/candidates.js';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { learnMap, mapLearnDeps } from '../../src/ops/map-learn.js';
import { MAP_REFRESH_PATTERN, refreshServiceMaps } from '../../src/ops/map-refresh.js';
import { MAP_FRESH_MS } from '../../src/orders/dispatch/name-choice.js';
import { serviceId } from '../../src/orders/dispatch/tariff-guard.js';
import { randomHex, SHOPIFY_SHOP_ID, startTestRelais, type TestRelais } from '../support/relais.js';
import { dakarCashOrder, postShopify, shipmentsFor, shopifyExternalId, waitForState } from './helpers.js';

const ZONE_FILE = fileURLToPath(new URL('../fixtures/service-maps/differently-cut.csv', import.meta.url));
/** The parcels below weigh 1.5 kg (a 300 XOF surcharge) and are cash on delivery (the COD fee). */
const priceAt = (delivery: number) => delivery + 300 + COD_FEE_XOF;
const FALLBACK_TOTAL = priceAt(FALLBACK_TARIFF_XOF);

let relais: TestRelais;
const resolver = NeighbourhoodResolver.load();
beforeAll(async () => {
  relais = await startTestRelais({ zoneFile: ZONE_FILE });
});
afterAll(async () => {
  await relais?.stop();
});

const order = dakarCashOrder;
const placed: Awaited<ReturnType<typeof waitForState>>[] = [];
const calls = (operation: string) => relais.emulator.calls().filter((c) => c.operation === operation).length;

async function place(address1: string) {
  const payload = order(address1);
  expect((await postShopify(relais, 'orders/create', payload)).status).toBe(200);
  const externalOrderId = shopifyExternalId(payload.id);
  const record = await waitForState(relais, externalOrderId, ['held', 'ready']);
  placed.push(record);
  return { record, shipments: shipmentsFor(relais, externalOrderId) };
}

describe('an order sent under the name the service prices', () => {
  it('ships a place the service prices only under another spelling under that spelling', async () => {
    const { record, shipments } = await place('Villa 5, Almadies');
    expect(record.state).toBe('ready');
    expect(record.neighbourhood?.name).toBe('Les Almadies');
    expect(shipments).toHaveLength(1);
    expect(shipments[0]!.total).toBe(priceAt(ZONE_TARIFF_XOF[3]!));
  });

  it('ships a sub-area priced cheaper than its area under the sub-area, from the first order', async () => {
    const { record, shipments } = await place('Ouakam, cité Avion, villa 3');
    expect(record.neighbourhood?.name).toBe('Cite Avion');
    // Cité Avion is band 2 at this service, Ouakam band 4: the customer pays the sub-area's price.
    expect(shipments[0]!.total).toBe(priceAt(ZONE_TARIFF_XOF[2]!));
    expect(shipments[0]!.total).toBeLessThan(priceAt(ZONE_TARIFF_XOF[4]!));
  });

  it('ships a numbered quartier the service prices only as its area under the area, learning both names', async () => {
    const quotes = calls('createQuote');
    const { record, shipments } = await place('Villa 12, Sacré Coeur 3');
    expect(record.state).toBe('ready');
    // Not in the map yet: the order's own quote and at most 3 more (the fallback price is already known today).
    const extra = calls('createQuote') - quotes - 1;
    expect(extra).toBeGreaterThan(0);
    expect(extra).toBeLessThanOrEqual(3);
    expect(record.neighbourhood?.name).toBe('Sacré Coeur');
    expect(shipments[0]!.total).toBe(priceAt(ZONE_TARIFF_XOF[2]!));
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    const known = await relais.worker.runtime.serviceMap.lookup(serviceId(shop), ['Sacré-Cœur 3', 'Sacré Coeur']);
    expect(known.get('Sacré-Cœur 3')).toMatchObject({ priced: false, totalXof: FALLBACK_TOTAL });
    expect(known.get('Sacré Coeur')).toMatchObject({ priced: true, totalXof: priceAt(ZONE_TARIFF_XOF[2]!) });
  });

  it('with the map learned, a new order of a known place makes three calls at the service: quote, create, mark ready', async () => {
    const seen = relais.emulator.calls().length;
    const { record } = await place('Villa 14, Sacré Coeur 3');
    expect(record.neighbourhood?.name).toBe('Sacré Coeur');
    // No lookup by external order id: no createShipment was ever sent for this order, so none can be found.
    // (The delivery sync's getShipment, once the service reports the shipment ready, is not the dispatch's.)
    const made = relais.emulator
      .calls()
      .slice(seen)
      .map((c) => c.operation)
      .filter((operation) => operation !== 'getShipment');
    expect(made).toEqual(['createQuote', 'createShipment', 'markReady']);
  });
});

describe('an order for a place the service prices under a spelling of its own that no rule of ours derives', () => {
  it('ships under that spelling once the map knows it priced, not under the wider area priced dearer', async () => {
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    // The service's list names "Parcelles U15" (the gazetteer's Unité 15); map learn asks it as it asks every name.
    const deps = mapLearnDeps(relais.worker.runtime, relais.prefix, shop, resolver);
    expect((await learnMap(deps, { names: ['Parcelles U15'] })).priced).toBe(1);
    const { record, shipments } = await place('Unité 15, villa 8');
    expect(record.state).toBe('ready');
    expect(record.neighbourhood?.name).toBe('Parcelles U15');
    // Band 2, where "Les Parcelles Assainies", the area holding it, is band 4.
    expect(shipments[0]!.total).toBe(priceAt(ZONE_TARIFF_XOF[2]!));
  });
});

describe('an order whose place the service does not price', () => {
  it('is held with every candidate tried and its price, and the priced places nearest the address, and ships nothing', async () => {
    const { record, shipments } = await place('Villa 40, Mermoz');
    expect(record.state).toBe('held');
    expect(shipments).toEqual([]);
    expect(record.hold?.code).toBe('neighbourhood_not_priced');
    expect(record.hold?.message).toContain(`does not price 'Mermoz' at ${FALLBACK_TOTAL} XOF`);
    expect(record.hold?.message).toMatch(/Places near the address it prices: Sacré Coeur \(\d+(\.\d)? km\)/);
    expect(record.hold?.message).toMatch(/alias/);
  });

  it('has the service asked, in the background, about the candidates of the hold it was not asked yet', async () => {
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    const resolution = resolver.resolve({ country: 'SN', fields: { address1: 'Villa 40, Mermoz', city: 'Dakar' } });
    if (!resolution.ok) throw new Error(resolution.reason);
    const names = candidatesOf(resolver, resolution, {}).map((c) => c.name);
    // Enqueued once the dispatch job has held the order: just after the hold the test saw.
    const deadline = Date.now() + 30_000;
    let refresh: Awaited<ReturnType<typeof relais.worker.runtime.queues.maintenance.getJobs>>[number] | undefined;
    while (!refresh && Date.now() < deadline) {
      const jobs = await relais.worker.runtime.queues.maintenance.getJobs([
        'waiting',
        'active',
        'completed',
        'delayed',
      ]);
      refresh = jobs.find((j) => j.name === 'map-refresh' && j.data.shopId === SHOPIFY_SHOP_ID);
      if (!refresh) await new Promise((r) => setTimeout(r, 50));
    }
    expect(refresh?.data.names).toEqual(names);
    while ((await refresh!.getState()) !== 'completed') {
      if (Date.now() > deadline) throw new Error(`map-refresh job ${refresh!.id} not completed in 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const known = await relais.worker.runtime.serviceMap.lookup(serviceId(shop), names);
    expect([...known.keys()].sort()).toEqual([...names].sort());
  });

  it('is held again without a quote once the map knows its candidates are at the fallback', async () => {
    const quotes = calls('createQuote');
    const { record } = await place('Villa 41, Mermoz');
    expect(record.hold?.code).toBe('neighbourhood_not_priced');
    expect(record.hold?.message).toMatch(/'Mermoz' at \d+ XOF \(quoted \d{4}-\d{2}-\d{2}\)/);
    expect(calls('createQuote')).toBe(quotes);
  });

  it('never shipped anything at the fallback tariff or under a city name', async () => {
    const { record } = await place('Rue 10, Dakar');
    expect(record.hold?.code).toBe('neighbourhood_not_found');
    const shipped = relais.emulator.shipments();
    expect(shipped.length).toBeGreaterThanOrEqual(4);
    for (const shipment of shipped) expect(shipment.total).toBeLessThan(FALLBACK_TOTAL);
    const names = placed.filter((r) => r.state === 'ready').map((r) => r.neighbourhood?.name ?? '');
    expect(names.length).toBe(shipped.length);
    for (const name of names) expect(resolver.isCityRegionOrCountry('SN', name), name).toBe(false);
  });
});

describe("the service map's refresh", () => {
  it('is scheduled weekly on the maintenance queue', async () => {
    const schedulers = await relais.worker.runtime.queues.maintenance.getJobSchedulers();
    const refresh = schedulers.find((s) => s.key === 'map-refresh');
    expect(refresh?.pattern).toBe(MAP_REFRESH_PATTERN);
  });

  it('asks again a name learned over a week ago, and not one learned this week', async () => {
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    const service = { id: serviceId(shop), baseUrl: shop.dispatch.baseUrl };
    const now = relais.worker.runtime.now();
    const weekAgo = new Date(now.getTime() - MAP_FRESH_MS - 3_600_000);
    await relais.worker.runtime.serviceMap.record(service, [
      { name: 'Ouakam', priced: true, totalXof: 1, quotedFor: 'old', learnedAt: weekAgo },
      { name: 'Castors', priced: true, totalXof: 1, quotedFor: 'fresh', learnedAt: now },
    ]);
    const result = await refreshServiceMaps(
      { task: 'map-refresh', shopId: SHOPIFY_SHOP_ID, names: ['Ouakam', 'Castors'] },
      {
        shops: () => [shop],
        depsFor: (s) => mapLearnDeps(relais.worker.runtime, relais.prefix, s, resolver),
        logger: relais.worker.runtime.options.logger,
      },
    );
    expect(result).toEqual({ shops: 1, asked: 1, failed: [] });
    const known = await relais.worker.runtime.serviceMap.lookup(service.id, ['Ouakam', 'Castors']);
    expect(known.get('Ouakam')?.learnedAt.getTime()).toBeGreaterThan(weekAgo.getTime());
    expect(known.get('Ouakam')?.totalXof).not.toBe(1);
    expect(known.get('Castors')?.quotedFor).toBe('fresh');
  });
});

describe('the held page of an order whose place the service does not price', () => {
  it('offers the priced places nearest the address as one-click aliases, and one click ships the order', async () => {
    const ports = dashboardDepsFor(relais.web.runtime, { token: `dash_${randomHex(16)}` });
    const { held } = await heldOrders(ports, 50);
    const mermoz = held.find((h) => h.record.order?.dropoff.address1 === 'Villa 40, Mermoz');
    expect(mermoz?.pricedNearby?.text).toBe('Mermoz');
    expect(mermoz?.pricedNearby?.places.map((p) => p.name)).toContain('Sacré Coeur');
    const page = String(heldBody({ held: held.map((h) => ({ ...h, shopName: 'Dakar Mode' })), csrf: 'token' }));
    expect(page).toContain('Send "Mermoz" as Sacré Coeur');

    const id = mermoz!.record.meta.externalOrderId;
    const result = await addAliasAndReplay(ports, id, { text: 'Mermoz', neighbourhood: 'Sacré Coeur' });
    expect(result.kind).toBe('replayed');
    const record = await waitForState(relais, id, ['ready']);
    expect(record.neighbourhood?.name).toBe('Sacré Coeur');
  });
});
