/**
 * What the courier collects, end to end: the goods' value (the shop's balance less the shipping the shop
 * charged, when the customer pays the delivery at the door), the breakdown the merchant sees, and a shipment
 * whose amount does not match never put in front of a courier.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopifyOrderPayload } from '../support/factories.js';
import { startTestRelais, waitFor, type TestRelais } from '../support/relais.js';
import { shipmentBehindRelaisBack } from '../reconcile/helpers.js';
import { createShipmentSentEarlier, postShopify, shipmentsFor, shopifyExternalId, waitForState } from './helpers.js';

/** A COD order of 27 500 F in the shop, 2 500 F of it the shipping the shop charged. */
const codWithShipping = () =>
  shopifyOrderPayload({
    total_price: '27500.00',
    current_total_price: '27500.00',
    total_outstanding: '27500.00',
    total_shipping_price_set: {
      shop_money: { amount: '2500.00', currency_code: 'XOF' },
      presentment_money: { amount: '2500.00', currency_code: 'XOF' },
    },
    current_shipping_price_set: {
      shop_money: { amount: '2500.00', currency_code: 'XOF' },
      presentment_money: { amount: '2500.00', currency_code: 'XOF' },
    },
    shipping_lines: [{ title: 'Livraison Dakar', price: '2500.00', discounted_price: '2500.00', tax_lines: [] }],
    shipping_address: { address1: 'Villa 12, Sacré Coeur 3', city: 'Dakar', latitude: null, longitude: null },
  });

describe('the customer pays the delivery at the door (the default)', () => {
  let relais: TestRelais;
  beforeAll(async () => {
    relais = await startTestRelais();
  });
  afterAll(async () => {
    await relais?.stop();
  });

  it("sends the goods (balance less the shop's shipping) as orderAmountXof, and keeps the breakdown at the door", async () => {
    const payload = codWithShipping();
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    const record = await waitForState(relais, extId, ['ready', 'held']);
    expect(record.hold).toBeUndefined();
    expect(shipmentsFor(relais, extId).map((s) => s.orderAmountXof)).toEqual([25_000]);
    const quote = record.quote!;
    const fee = quote.breakdown?.codFee ?? 0;
    expect(fee).toBeGreaterThan(0);
    expect(record.door).toEqual({
      paidBy: 'customer',
      goods: 25_000,
      delivery: quote.total - fee,
      collectionFee: fee,
      atDoor: 25_000 + quote.total,
      quoted: { delivery: quote.total - fee, collectionFee: fee },
    });
  });

  it("flags on the order's timeline an amount edited in the shop after the shipment was made ready, and never changes the shipment", async () => {
    const payload = codWithShipping();
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    expect((await waitForState(relais, extId, ['ready', 'held'])).state).toBe('ready');
    const edited = {
      ...payload,
      total_outstanding: '30500.00',
      current_total_price: '30500.00',
      updated_at: new Date(Date.now() + 60_000).toISOString(),
    };
    await postShopify(relais, 'orders/updated', edited);
    const flagged = await waitFor(
      async () =>
        (await relais.worker.runtime.ledger.timeline(extId)).find(
          (e) => e.operation === 'amount changed after shipping',
        ),
      { what: 'the flag' },
    );
    expect(flagged.detail).toContain('the order now owes 28000 XOF for the goods, but shipment');
    expect(flagged.detail).toContain('carries 25000 XOF and cannot be changed');
    expect(shipmentsFor(relais, extId).map((s) => s.orderAmountXof)).toEqual([25_000]);
  });

  it('never marks ready a shipment found at the service carrying another amount than the goods owed, and holds the order saying both', async () => {
    const payload = codWithShipping();
    const extId = shopifyExternalId(payload.id);
    // Made by an attempt from before the order was edited, with the shop's whole balance, whose answer was lost.
    const stale = await shipmentBehindRelaisBack(relais, extId, { orderAmountXof: 27_500 });
    await createShipmentSentEarlier(relais, extId);
    await postShopify(relais, 'orders/create', payload);
    const record = await waitForState(relais, extId, ['held', 'ready']);
    expect(record.state).toBe('held');
    expect(record.hold).toMatchObject({
      code: 'cod_amount_mismatch',
      message: expect.stringContaining(`shipment ${stale.shipmentId} was created but is not marked ready`),
    });
    expect(record.hold?.message).toContain('carries 27500 XOF to collect for the goods but the order owes 25000 XOF');
    expect(shipmentsFor(relais, extId).map((s) => s.status)).toEqual(['CREATED']);
  });
});

describe('the merchant pays the delivery', () => {
  let relais: TestRelais;
  beforeAll(async () => {
    relais = await startTestRelais({ policy: { deliveryFeePaidBy: 'merchant' } });
  });
  afterAll(async () => {
    await relais?.stop();
  });

  it("sends the shop's whole balance, and the customer hands over the goods alone", async () => {
    const payload = codWithShipping();
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    const record = await waitForState(relais, extId, ['ready', 'held']);
    expect(record.hold).toBeUndefined();
    expect(shipmentsFor(relais, extId).map((s) => s.orderAmountXof)).toEqual([27_500]);
    expect(record.door).toMatchObject({
      paidBy: 'merchant',
      goods: 27_500,
      delivery: 0,
      collectionFee: 0,
      atDoor: 27_500,
    });
  });
});
