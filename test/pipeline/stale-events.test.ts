/**
 * Order events carry their version: the order's own last-modified time, inside the signed body (Shopify
 * updated_at, WooCommerce date_modified). An update delivered late, older than the one applied, is noted on
 * the order's timeline and changes nothing. Real HTTP, a real Redis, the dispatch emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopifyOrderPayload, wooOrderPayload } from '../support/factories.js';
import { startTestRelais, type TestRelais } from '../support/relais.js';
import { postShopify, postWoo, shopifyExternalId, waitForIdle, waitForState, wooExternalId } from './helpers.js';

let relais: TestRelais;
beforeAll(async () => {
  relais = await startTestRelais();
});
afterAll(async () => {
  await relais?.stop();
});

const digits = (phone: string | undefined) => (phone ?? '').replace(/\D/g, '');
const minutesAfter = (iso: string, minutes: number) =>
  new Date(Date.parse(iso.endsWith('Z') ? iso : `${iso}Z`) + minutes * 60_000).toISOString();

/**
 * Posts `newer`, then `older` (both update events of one order already shipped), and answers the phone on
 * the record after each, and the timeline entries of ignored events.
 */
async function newerThenOlder(
  extId: string,
  post: (payload: unknown) => Promise<{ status: number }>,
  newer: unknown,
  older: unknown,
) {
  expect((await post(newer)).status).toBe(200);
  await waitForIdle(relais);
  const afterNewer = await relais.worker.runtime.ledger.get(extId);
  expect((await post(older)).status).toBe(200);
  await waitForIdle(relais);
  const afterOlder = await relais.worker.runtime.ledger.get(extId);
  const ignored = (await relais.worker.runtime.ledger.timeline(extId)).filter((e) => e.outcome === 'ignored_older');
  return { afterNewer: digits(afterNewer?.order?.dropoff.phone), afterOlder: afterOlder!, ignored };
}

describe('an order event older than the one applied is recorded and ignored', () => {
  it('Shopify: an orders/updated delivered after a newer one leaves the newer phone on the record and is noted as ignored', async () => {
    const created = shopifyOrderPayload();
    const extId = shopifyExternalId(created.id);
    expect((await postShopify(relais, 'orders/create', created)).status).toBe(200);
    await waitForState(relais, extId, ['ready']);

    const shippingAddress = created.shipping_address as Record<string, unknown>;
    const newer = {
      ...created,
      updated_at: minutesAfter(created.updated_at as string, 2),
      shipping_address: { ...shippingAddress, phone: '+221 77 222 22 22' },
    };
    const older = {
      ...created,
      updated_at: minutesAfter(created.updated_at as string, 1),
      shipping_address: { ...shippingAddress, phone: '+221 77 111 11 11' },
    };
    const seen = await newerThenOlder(extId, (payload) => postShopify(relais, 'orders/updated', payload), newer, older);

    expect(seen.afterNewer).toMatch(/772222222$/);
    expect(digits(seen.afterOlder.order?.dropoff.phone)).toMatch(/772222222$/);
    expect(seen.afterOlder.order?.updatedAt).toBe(newer.updated_at);
    expect(seen.ignored.map((e) => e.operation)).toEqual(['webhook orders/updated']);
    expect(seen.ignored[0]!.detail).toContain(older.updated_at);
  });

  it('WooCommerce: an order.updated delivered after a newer one leaves the newer phone on the record and is noted as ignored', async () => {
    const created = wooOrderPayload();
    const extId = wooExternalId(created.id);
    expect((await postWoo(relais, 'order.created', created)).status).toBe(200);
    await waitForState(relais, extId, ['ready']);

    const shipping = created.shipping as Record<string, unknown>;
    // WooCommerce writes its dates without a zone (date_modified_gmt is UTC); the factory's are UTC.
    const at = (minutes: number) => minutesAfter(created.date_modified_gmt as string, minutes).slice(0, 19);
    const newer = {
      ...created,
      date_modified: at(2),
      date_modified_gmt: at(2),
      shipping: { ...shipping, phone: '+225 07 22 22 22 22' },
    };
    const older = {
      ...created,
      date_modified: at(1),
      date_modified_gmt: at(1),
      shipping: { ...shipping, phone: '+225 07 11 11 11 11' },
    };
    const seen = await newerThenOlder(extId, (payload) => postWoo(relais, 'order.updated', payload), newer, older);

    expect(seen.afterNewer).toMatch(/0722222222$/);
    expect(digits(seen.afterOlder.order?.dropoff.phone)).toMatch(/0722222222$/);
    expect(seen.ignored.map((e) => e.operation)).toEqual(['webhook order.updated']);
  });
});
