/**
 * The fallback-tariff guard, end to end: a neighbourhood the service does not price is quoted at the fallback
 * tariff (the city name's price, the highest) with nothing else to tell it apart. Relais learns that price
 * once, checks every zone-priced quote against it, and holds an order whose neighbourhood the service does not
 * price rather than ship it at the fallback. The emulated service here leaves 'Mermoz' and the commune holding
 * it, Mermoz-Sacré-Cœur (its other candidate name), out of its zones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceId } from '../../src/orders/dispatch/tariff-guard.js';
import { SHOPIFY_SHOP_ID, startTestRelais, type TestRelais } from '../support/relais.js';
import { dakarCashOrder, postShopify, shipmentsFor, shopifyExternalId, waitForState } from './helpers.js';

let relais: TestRelais;
beforeAll(async () => {
  relais = await startTestRelais({ unpricedNeighbourhoods: ['Mermoz', 'Mermoz-Sacré-Cœur'] });
});
afterAll(async () => {
  await relais?.stop();
});

const order = dakarCashOrder;
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
        /does not price 'Mermoz' at \d+ XOF, 'Mermoz-Sacré-Cœur' at \d+ XOF: each was quoted at the fallback tariff of \d+ XOF \(its price for the city name 'Dakar'\).*alias/,
      ),
    });
    expect(shipmentsFor(relais, extId)).toEqual([]);
    const shop = relais.shops.get(SHOPIFY_SHOP_ID)!;
    const known = await relais.worker.runtime.serviceMap.lookup(serviceId(shop), ['Mermoz']);
    expect(known.get('Mermoz')?.priced).toBe(false);
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
    const name = firstRecord.neighbourhood!.name;
    expect((await relais.worker.runtime.serviceMap.lookup(serviceId(shop), [name])).get(name)?.priced).toBe(true);
  });
});

describe('which of two nested names is sent', () => {
  it('sends the sub-area the address names from the first order, once a quote shows the service prices it', async () => {
    const payload = order('Ouakam, cité Avion, villa 3');
    await postShopify(relais, 'orders/create', payload);
    const record = await waitForState(relais, shopifyExternalId(payload.id), ['held', 'ready']);
    expect(record.state).toBe('ready');
    expect(record.neighbourhood?.name).toBe('Cite Avion');
  });
});
