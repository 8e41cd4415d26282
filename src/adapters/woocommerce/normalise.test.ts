import { describe, expect, it } from 'vitest';
import { wooOrderPayload } from '../../../test/support/factories.js';
import { normaliseProbes } from '../../../test/support/normalise.js';
import type { NormaliseContext } from '../../shops/platforms/common.js';
import { normaliseWooOrder, parseWooOrder } from './normalise.js';

const ctx: NormaliseContext = { shopId: 'abidjan-style', codGateways: [] };

const { normalised, ordered, held, holdCode } = normaliseProbes(normaliseWooOrder, wooOrderPayload, ctx);

describe('normaliseWooOrder: a cash-on-delivery order in Abidjan', () => {
  it('becomes a StoreOrder keyed on the numeric id, collecting the 20 000 F total', () => {
    const payload = wooOrderPayload();
    const order = ordered(normaliseWooOrder(payload, ctx));
    expect(order).toMatchObject({
      platform: 'woocommerce',
      shopId: 'abidjan-style',
      orderId: String(payload.id),
      orderName: `#${payload.id}`,
      externalOrderId: `abidjan-style:${payload.id}`,
      currency: 'XOF',
      total: 20000,
      outstanding: 20000,
      paymentFamily: 'cash_on_delivery',
      financialStatus: 'processing',
      platformStatus: 'processing',
      gatewayNames: ['cod', 'Cash on delivery'],
      cancelled: false,
    });
    expect(order.dropoff).toEqual({
      name: 'Aya Kouassi',
      phone: '+225 07 08 09 10 11',
      address1: 'Villa 24, Riviera Golf',
      address2: 'Cocody',
      city: 'Abidjan',
      countryCode: 'CI',
    });
  });

  it('has no weight: lines carry product and variation ids for a later lookup, variation 0 meaning none', () => {
    const order = normalised();
    expect(order).not.toHaveProperty('weightGrams');
    expect(order.lineItems).toEqual([
      { productId: '93', name: 'Woo Single #1', quantity: 2 },
      { productId: '22', variantId: '23', name: 'Ship Your Idea &ndash; Color: Black, Size: M Test', quantity: 1 },
    ]);
  });

  it('uses the order number for the display name and the id for the external order id', () => {
    const order = normalised({ number: 'CI-2026-0042' });
    expect(order.orderName).toBe('#CI-2026-0042');
    expect(order.externalOrderId).toMatch(/^abidjan-style:\d+$/);
  });

  it('turns the UTC dates WooCommerce sends without a zone into unambiguous ISO 8601', () => {
    const order = normalised({ date_created_gmt: '2026-11-22T09:30:00', date_modified_gmt: '2026-11-22T09:45:00' });
    expect(order.createdAt).toBe('2026-11-22T09:30:00Z');
    expect(order.updatedAt).toBe('2026-11-22T09:45:00Z');
  });
});

describe('normaliseWooOrder: malformed payloads are held, never thrown', () => {
  it('holds a payload without an id', () => {
    expect(holdCode({ id: undefined })).toBe('malformed_order');
    expect(holdCode({ id: 0 })).toBe('malformed_order');
  });

  it('holds a payload without a total, naming the order', () => {
    const payload = wooOrderPayload({ total: undefined });
    expect(held(normaliseWooOrder(payload, ctx))).toMatchObject({
      hold: { code: 'malformed_order' },
      orderId: String(payload.id),
      orderName: `#${payload.id}`,
    });
  });

  it('holds bodies that are not orders, and fields of the wrong type', () => {
    for (const body of [null, 'webhook_id=1', [], true])
      expect(held(normaliseWooOrder(body, ctx)).hold.code).toBe('malformed_order');
    const wrongType = held(normaliseWooOrder(wooOrderPayload({ billing: 'Cocody' }), ctx));
    expect(wrongType.hold.message).toContain('billing');
  });

  it('exposes parseWooOrder, which ignores unknown fields', () => {
    const parsed = parseWooOrder({ ...wooOrderPayload(), some_plugin_field: { x: 1 } });
    expect(parsed.ok).toBe(true);
  });
});

describe('normaliseWooOrder: currency and money', () => {
  it('holds an order in another currency', () => {
    const payload = wooOrderPayload({ currency: 'USD' });
    expect(held(normaliseWooOrder(payload, ctx)).hold).toEqual({
      code: 'currency_not_xof',
      message: `order #${payload.id} is in USD; Relais only ships orders in XOF (West African CFA franc). Change the shop currency or dispatch this order by hand.`,
    });
  });

  it('converts the total exactly and holds a fraction of a franc', () => {
    expect(normalised({ total: '20000.00' }).total).toBe(20000);
    expect(holdCode({ total: '20000.50' })).toBe('amount_has_fraction');
  });

  it('collects the total minus refunds already made', () => {
    const order = normalised({ refunds: [{ id: 901, reason: 'article manquant', total: '-5000.00' }] });
    expect(order).toMatchObject({ total: 20000, outstanding: 15000 });
  });

  it('holds a COD order fully refunded but still processing: nothing to collect', () => {
    expect(holdCode({ refunds: [{ id: 902, total: '-20000.00' }] })).toBe('cod_nothing_to_collect');
    expect(holdCode({ total: '0.00' })).toBe('cod_nothing_to_collect');
  });

  it('holds refunds larger than the total as inconsistent', () => {
    expect(
      holdCode({
        refunds: [
          { id: 903, total: '-15000' },
          { id: 904, total: '-15000' },
        ],
      }),
    ).toBe('cod_amount_inconsistent');
  });

  it('holds a refund with a fraction of a franc', () => {
    expect(holdCode({ refunds: [{ id: 905, total: '-99.50' }] })).toBe('amount_has_fraction');
  });
});

describe('normaliseWooOrder: payment family', () => {
  it('recognises the cod gateway id, and a gateway title the merchant listed, whatever the case', () => {
    expect(normalised({ payment_method: 'COD', payment_method_title: 'Paiement à la livraison' }).paymentFamily).toBe(
      'cash_on_delivery',
    );
    const shopCtx = { ...ctx, codGateways: ['Paiement à la livraison'] };
    expect(
      normalised({ payment_method: 'wc_custom_cash', payment_method_title: 'paiement à la livraison' }, shopCtx)
        .paymentFamily,
    ).toBe('cash_on_delivery');
  });

  it('treats a bank transfer as prepaid, collecting nothing', () => {
    expect(normalised({ payment_method: 'bacs', payment_method_title: 'Direct Bank Transfer' })).toMatchObject({
      paymentFamily: 'prepaid',
      outstanding: 0,
    });
  });

  it('treats a business-account gateway as business_account, collecting nothing', () => {
    const shopCtx = { ...ctx, businessAccountGateways: ['b2b_invoice'] };
    expect(
      normalised({ payment_method: 'b2b_invoice', payment_method_title: 'Facture mensuelle' }, shopCtx),
    ).toMatchObject({ paymentFamily: 'business_account', outstanding: 0 });
  });

  it('holds a deposit-gateway order: WooCommerce does not say how much was paid', () => {
    const shopCtx = { ...ctx, depositGateways: ['wc_deposits'] };
    expect(holdCode({ payment_method: 'wc_deposits', payment_method_title: 'Acompte' }, shopCtx)).toBe(
      'cod_amount_unknown',
    );
  });
});

describe('normaliseWooOrder: drop-off', () => {
  it('uses the billing address when the shipping address is empty', () => {
    const empty = {
      first_name: '',
      last_name: '',
      company: '',
      address_1: '',
      address_2: '',
      city: '',
      state: '',
      postcode: '',
      country: '',
      phone: '',
    };
    const order = normalised({
      shipping: empty,
      billing: { address_1: 'Rue 12, Marcory Zone 4', address_2: '', city: 'Abidjan' },
    });
    expect(order.dropoff).toEqual({
      name: 'Aya Kouassi',
      phone: '+225 07 08 09 10 11',
      address1: 'Rue 12, Marcory Zone 4',
      city: 'Abidjan',
      countryCode: 'CI',
    });
  });

  it('holds an order with neither a shipping nor a billing address', () => {
    const blank = { address_1: '', address_2: '', city: '', state: '', postcode: '' };
    expect(holdCode({ shipping: blank, billing: blank })).toBe('no_delivery_address');
    expect(holdCode({ shipping: null, billing: null })).toBe('no_delivery_address');
  });

  it('takes the name from billing when shipping has none', () => {
    expect(
      normalised({ shipping: { first_name: '', last_name: '' }, billing: { first_name: 'Koffi', last_name: 'Yao' } })
        .dropoff.name,
    ).toBe('Koffi Yao');
  });

  it('takes the phone from billing when shipping.phone is missing (before WooCommerce 5.6)', () => {
    expect(
      normalised({ shipping: { phone: undefined }, billing: { phone: '+225 01 02 03 04 05' } }).dropoff.phone,
    ).toBe('+225 01 02 03 04 05');
  });

  it('holds an order without any phone number', () => {
    const result = held(normaliseWooOrder(wooOrderPayload({ shipping: { phone: '' }, billing: { phone: '' } }), ctx));
    expect(result.hold.code).toBe('no_phone');
  });

  it('reads coordinates a geolocation plugin left in order meta, as strings or numbers', () => {
    const meta = [
      { id: 1, key: '_shipping_lat', value: '5.3599' },
      { id: 2, key: '_shipping_lng', value: '-3.9866' },
    ];
    expect(normalised({ meta_data: meta }).dropoff.coords).toEqual({ lat: 5.3599, lng: -3.9866 });
    const long = [
      { id: 3, key: '_shipping_latitude', value: 5.36 },
      { id: 4, key: '_shipping_longitude', value: -3.98 },
    ];
    expect(normalised({ meta_data: long }).dropoff.coords).toEqual({ lat: 5.36, lng: -3.98 });
    expect(normalised().dropoff).not.toHaveProperty('coords');
  });
});

describe('normaliseWooOrder: cancellation', () => {
  it.each(['cancelled', 'refunded', 'failed', 'trash'])('marks status %s as cancelled', (status) => {
    expect(normalised({ status }).cancelled).toBe(true);
  });

  it.each([
    ['failed', 'shop_payment_failed', 'payment failed'],
    ['cancelled', 'shop_cancelled', 'cancelled in the shop'],
    ['trash', 'shop_cancelled', 'trash'],
  ])('says a %s order can come back, with why it is stopped (%s), so it is held, not ended', (status, code, why) => {
    expect(normalised({ status }).stoppedInShop).toEqual({ code, message: expect.stringContaining(why) });
  });

  it('ends a refunded order for good: nothing says it can come back', () => {
    expect(normalised({ status: 'refunded' })).not.toHaveProperty('stoppedInShop');
    expect(normalised({ status: 'processing' })).not.toHaveProperty('stoppedInShop');
  });

  it.each(['pending', 'on-hold', 'processing', 'completed'])('does not mark status %s as cancelled', (status) => {
    expect(normalised({ status })).toMatchObject({ cancelled: false, platformStatus: status });
  });

  it('still normalises a refunded order with nothing to collect, so its shipment can be cancelled', () => {
    const order = normalised({
      status: 'refunded',
      refunds: [{ id: 906, total: '-20000' }],
      shipping: { phone: '' },
      billing: { phone: '' },
    });
    expect(order).toMatchObject({ cancelled: true, outstanding: 0 });
  });
});
