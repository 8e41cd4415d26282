/**
 * The fallback-tariff guard, end to end: a neighbourhood the service does not price is quoted at the fallback
 * tariff (the city name's price, the highest) with nothing else to tell it apart. Relais learns that price
 * once, checks every zone-priced quote against it, and holds an order whose neighbourhood the service does not
 * price rather than ship it at the fallback. The emulated service here leaves 'Mermoz' out of its zones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceId, TariffMemory } from '../../src/jobs/tariff-guard.js';
import { shopifyOrderPayload } from '../support/factories.js';
import { SHOPIFY_SHOP_ID, startTestRelais, type TestRelais } from '../support/relais.js';
import { postShopify, shipmentsFor, shopifyExternalId, waitForState } from './helpers.js';

let relais: TestRelais;
beforeAll(async () => {
  relais = await startTestRelais({ unpricedNeighbourhoods: ['Mermoz'] });
});
afterAll(async () => {
  await relais?.stop();
});

const order = (address1: string) =>
  shopifyOrderPayload({
    total_price: '12000.00',
    current_total_price: '12000.00',
    total_outstanding: '12000.00',
    total_weight: 1500,
    shipping_address: { address1, city: 'Dakar', latitude: null, longitude: null },
  });
const quoteCalls = () => relais.emulator.calls().filter((c) => c.operation === 'createQuote').length;

describe('the fallback-tariff guard', () => {
  it('holds an order whose neighbourhood the service prices at the fallback, naming the name and the price, and creates no shipment', async () => {
    const payload = order('Villa 40, Mermoz');
    expect((await postShopify(relais, 'orders/create', payload)).status).toBe(200);
    const extId = shopifyExternalId(payload.id);
    const record = await waitForState(relais, extId, ['held', 'ready']);
    expect(record.state).toBe('held');
    expect(record.hold).toMatchObject({
      code: 'neighbourhood_not_priced',
      message: expect.stringMatching(
        /does not price 'Mermoz': quoted at the fallback tariff of \d+ XOF \(its price for the city name 'Dakar'\).*alias/,
      ),
    });
    expect(shipmentsFor(relais, extId)).toEqual([]);
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    const names = await new TariffMemory(relais.worker.runtime.redis, relais.prefix).names(serviceId(shop));
    expect(names.unpriced).toContain('Mermoz');
  });

  it('ships a neighbourhood the service prices, and once the fallback is learned makes no extra quote for it', async () => {
    const first = order('Villa 12, Sacré Coeur 3');
    await postShopify(relais, 'orders/create', first);
    const firstRecord = await waitForState(relais, shopifyExternalId(first.id), ['held', 'ready']);
    expect(firstRecord.hold).toBeUndefined();
    expect(firstRecord.state).toBe('ready');

    const before = quoteCalls();
    const second = order('Villa 14, Sacré Coeur 3');
    await postShopify(relais, 'orders/create', second);
    const secondRecord = await waitForState(relais, shopifyExternalId(second.id), ['held', 'ready']);
    expect(secondRecord.state).toBe('ready');
    // One quote for the order itself: the fallback price (same pickup, city, weight, payment mode) was cached.
    expect(quoteCalls() - before).toBe(1);
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    const names = await new TariffMemory(relais.worker.runtime.redis, relais.prefix).names(serviceId(shop));
    expect(names.priced).toContain(firstRecord.neighbourhood!.name);
  });
});

describe('which of two nested names is sent', () => {
  it('sends the area while the service is not known to price the sub-area, and the sub-area once an order showed it priced', async () => {
    const areaFirst = order('Ouakam, cité Avion, villa 3');
    await postShopify(relais, 'orders/create', areaFirst);
    expect((await waitForState(relais, shopifyExternalId(areaFirst.id), ['held', 'ready'])).neighbourhood?.name).toBe(
      'Ouakam',
    );

    // An address naming the sub-area alone: sent as it is, priced by the service, remembered.
    const subAreaOnly = order('Cité Avion, villa 8');
    await postShopify(relais, 'orders/create', subAreaOnly);
    expect((await waitForState(relais, shopifyExternalId(subAreaOnly.id), ['held', 'ready'])).neighbourhood?.name).toBe(
      'Cite Avion',
    );

    const afterwards = order('Ouakam, cité Avion, villa 5');
    await postShopify(relais, 'orders/create', afterwards);
    const record = await waitForState(relais, shopifyExternalId(afterwards.id), ['held', 'ready']);
    expect(record.state).toBe('ready');
    expect(record.neighbourhood?.name).toBe('Cite Avion');
  });
});
