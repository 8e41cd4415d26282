import { describe, expect, it } from 'vitest';
import { shopifyOrderPayload, WITHOUT_ANY_PHONE, type JsonOverrides } from '../../../test/support/factories.js';
import { normaliseProbes } from '../../../test/support/normalise.js';
import type { NormaliseContext } from '../../shops/platforms/common.js';
import { normaliseShopifyOrder, parseShopifyOrder } from './normalise.js';

const ctx: NormaliseContext = { shopId: 'dakar-mode', codGateways: [] };

const { normalised, ordered, held, holdCode } = normaliseProbes(normaliseShopifyOrder, shopifyOrderPayload, ctx);

describe('normaliseShopifyOrder: a cash-on-delivery order in Dakar', () => {
  it('becomes a StoreOrder keyed on the numeric id, collecting the outstanding 15 000 F', () => {
    const payload = shopifyOrderPayload();
    const order = ordered(normaliseShopifyOrder(payload, ctx));
    expect(order).toMatchObject({
      platform: 'shopify',
      shopId: 'dakar-mode',
      orderId: String(payload.id),
      orderName: payload.name,
      externalOrderId: `dakar-mode:${payload.id}`,
      currency: 'XOF',
      total: 15000,
      outstanding: 15000,
      paymentFamily: 'cash_on_delivery',
      financialStatus: 'pending',
      platformStatus: 'unfulfilled',
      gatewayNames: ['Cash on Delivery (COD)'],
      cancelled: false,
      weightGrams: 600,
    });
    expect(order.dropoff).toEqual({
      name: 'Awa Ndiaye',
      phone: '+221 77 123 45 67',
      address1: 'Villa 12, Sacré Coeur 3',
      city: 'Dakar',
      province: 'Dakar',
      zip: '12000',
      countryCode: 'SN',
      coords: { lat: 14.7236, lng: -17.4694 },
    });
    expect(order.lineItems).toEqual([
      { productId: '632910392', variantId: '39072856', name: 'IPod Nano - 8gb - green', quantity: 1, unitGrams: 200 },
      { productId: '632910392', variantId: '49148385', name: 'IPod Nano - 8gb - red', quantity: 1, unitGrams: 200 },
      { productId: '632910392', variantId: '457924702', name: 'IPod Nano - 8gb - black', quantity: 1, unitGrams: 200 },
    ]);
    expect(order.createdAt).toBe(payload.created_at);
  });

  it('uses the numeric id, never the display name, for the external order id', () => {
    const order = normalised({ name: '#DK-1001' });
    expect(order.orderName).toBe('#DK-1001');
    expect(order.externalOrderId).toMatch(/^dakar-mode:\d+$/);
    expect(order.externalOrderId).not.toContain('DK');
  });

  it('derives the id from admin_graphql_api_id when id is missing', () => {
    const order = normalised({ id: undefined, admin_graphql_api_id: 'gid://shopify/Order/5923711254' });
    expect(order.orderId).toBe('5923711254');
    expect(order.externalOrderId).toBe('dakar-mode:5923711254');
  });

  it('prefers the exact gid when the numeric id is too large for a JSON number to hold exactly', () => {
    const order = normalised({ id: 2 ** 60, admin_graphql_api_id: 'gid://shopify/Order/1152921504606846977' });
    expect(order.orderId).toBe('1152921504606846977');
  });

  it('ignores fields it does not know', () => {
    expect(normalised({ brand_new_field: { nested: [1, 2] }, another: 'x' }).total).toBe(15000);
  });

  it('accepts an order wrapped as a REST read returns it ({ order: ... })', () => {
    const result = normaliseShopifyOrder({ order: shopifyOrderPayload() }, ctx);
    expect(result.ok && result.order.total).toBe(15000);
  });
});

describe('normaliseShopifyOrder: malformed payloads are held, never thrown', () => {
  it('holds a payload with neither id nor gid', () => {
    const result = held(
      normaliseShopifyOrder(shopifyOrderPayload({ id: undefined, admin_graphql_api_id: undefined }), ctx),
    );
    expect(result.hold.code).toBe('malformed_order');
    expect(result.hold.message).toMatch(/order id/);
  });

  it('holds a payload without a total, naming the order', () => {
    const payload = shopifyOrderPayload({ current_total_price: undefined, total_price: undefined, name: '#1042' });
    const result = held(normaliseShopifyOrder(payload, ctx));
    expect(result).toMatchObject({
      hold: { code: 'malformed_order' },
      orderId: String(payload.id),
      orderName: '#1042',
    });
  });

  it('holds bodies that are not orders at all', () => {
    for (const body of [null, 'orders/create', [1, 2], 42, undefined]) {
      expect(held(normaliseShopifyOrder(body, ctx)).hold.code).toBe('malformed_order');
    }
  });

  it('holds a field of the wrong type, saying which field, without echoing customer data', () => {
    const result = held(normaliseShopifyOrder(shopifyOrderPayload({ total_price: { amount: 1 } }), ctx));
    expect(result.hold.code).toBe('malformed_order');
    expect(result.hold.message).toContain('total_price');
    expect(result.hold.message).not.toContain('Ndiaye');
  });

  it('exposes parseShopifyOrder, which reports a zod error instead of throwing', () => {
    const parsed = parseShopifyOrder({ id: 'x', line_items: 'nope' });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.issues[0]?.path).toEqual(['line_items']);
  });
});

describe('normaliseShopifyOrder: currency and money', () => {
  it('holds an order in another currency with a message the merchant can act on', () => {
    const result = held(normaliseShopifyOrder(shopifyOrderPayload({ name: '#1001', currency: 'EUR' }), ctx));
    expect(result.hold).toEqual({
      code: 'currency_not_xof',
      message:
        'order #1001 is in EUR; Relais only ships orders in XOF (West African CFA franc). Change the shop currency or dispatch this order by hand.',
    });
  });

  it('ships an XOF shop order the buyer saw in EUR, collecting the shop-money XOF amount', () => {
    const order = normalised({ presentment_currency: 'EUR' });
    expect(order.currency).toBe('XOF');
    expect(order.outstanding).toBe(15000);
  });

  it('holds an order whose shop-money amounts contradict the XOF currency', () => {
    const bag = {
      shop_money: { amount: '25.00', currency_code: 'EUR' },
      presentment_money: { amount: '25.00', currency_code: 'EUR' },
    };
    expect(holdCode({ current_total_price_set: bag })).toBe('currency_not_xof');
  });

  it('converts decimal strings to whole francs exactly', () => {
    const order = normalised({ current_total_price: '9007199254740.00', total_outstanding: '9007199254740' });
    expect(order.total).toBe(9007199254740);
    expect(order.outstanding).toBe(9007199254740);
  });

  it('holds a total with a fraction of a franc', () => {
    const result = held(
      normaliseShopifyOrder(shopifyOrderPayload({ name: '#1001', current_total_price: '15000.50' }), ctx),
    );
    expect(result.hold.code).toBe('amount_has_fraction');
    expect(result.hold.message).toContain('15000.50');
  });

  it('holds an outstanding balance with a fraction of a franc', () => {
    expect(holdCode({ total_outstanding: '14999.99' })).toBe('amount_has_fraction');
  });

  it('reads current_total_price (after edits) before total_price', () => {
    expect(normalised({ total_price: '18000.00', current_total_price: '15000.00' }).total).toBe(15000);
    expect(
      normalised({ total_price: '18000.00', current_total_price: undefined, total_outstanding: '18000.00' }).total,
    ).toBe(18000);
  });
});

describe('normaliseShopifyOrder: payment family and amount to collect', () => {
  it('recognises a COD gateway whatever its case, from payment_gateway_names or the legacy gateway field', () => {
    expect(normalised({ payment_gateway_names: ['cash on delivery (cod)'] }).paymentFamily).toBe('cash_on_delivery');
    expect(normalised({ payment_gateway_names: [], gateway: 'COD' }).paymentFamily).toBe('cash_on_delivery');
  });

  it('recognises a renamed manual method the merchant listed as COD', () => {
    const shopCtx = { ...ctx, codGateways: ['Paiement à la livraison'] };
    expect(normalised({ payment_gateway_names: ['PAIEMENT À LA LIVRAISON'] }, shopCtx).paymentFamily).toBe(
      'cash_on_delivery',
    );
    expect(normalised({ payment_gateway_names: ['Paiement à la livraison'] }).paymentFamily).toBe('prepaid');
  });

  it('treats a card-paid order as prepaid, collecting nothing', () => {
    const order = normalised({
      payment_gateway_names: ['shopify_payments'],
      financial_status: 'paid',
      total_outstanding: '0.00',
    });
    expect(order).toMatchObject({ paymentFamily: 'prepaid', outstanding: 0, financialStatus: 'paid' });
  });

  it('treats a business-account gateway as business_account, collecting nothing', () => {
    const shopCtx = { ...ctx, businessAccountGateways: ['Compte entreprise'] };
    expect(normalised({ payment_gateway_names: ['Compte entreprise'] }, shopCtx)).toMatchObject({
      paymentFamily: 'business_account',
      outstanding: 0,
    });
  });

  it('collects the balance of a deposit-gateway order', () => {
    const shopCtx = { ...ctx, depositGateways: ['Acompte Wave'] };
    const order = normalised(
      { payment_gateway_names: ['Acompte Wave'], financial_status: 'partially_paid', total_outstanding: '10000.00' },
      shopCtx,
    );
    expect(order).toMatchObject({ paymentFamily: 'deposit_then_balance', outstanding: 10000 });
  });

  it('turns a partly paid COD order into deposit-then-balance, collecting what is outstanding', () => {
    const order = normalised({ financial_status: 'partially_paid', total_outstanding: '6000.00' });
    expect(order).toMatchObject({ paymentFamily: 'deposit_then_balance', outstanding: 6000, total: 15000 });
  });

  it('collects total_outstanding rather than the total when both are given', () => {
    expect(normalised({ total_outstanding: '5000.00' }).outstanding).toBe(5000);
  });

  it('collects the total of an unpaid COD order when total_outstanding is absent', () => {
    expect(normalised({ total_outstanding: undefined }).outstanding).toBe(15000);
  });

  it('holds a partly paid order without total_outstanding: the balance cannot be told', () => {
    expect(holdCode({ total_outstanding: undefined, financial_status: 'partially_paid' })).toBe('cod_amount_unknown');
  });

  it('holds a COD order that owes more than its total', () => {
    const result = held(normaliseShopifyOrder(shopifyOrderPayload({ total_outstanding: '20000.00' }), ctx));
    expect(result.hold.code).toBe('cod_amount_inconsistent');
    expect(result.hold.message).toContain('20000');
    expect(holdCode({ total_outstanding: '-500.00' })).toBe('cod_amount_inconsistent');
  });

  it('never ships a COD order with nothing to collect', () => {
    expect(holdCode({ total_outstanding: '0.00' })).toBe('cod_nothing_to_collect');
    expect(holdCode({ total_outstanding: undefined, financial_status: 'paid' })).toBe('cod_nothing_to_collect');
    expect(holdCode({ current_total_price: '0.00', total_outstanding: undefined })).toBe('cod_nothing_to_collect');
  });
});

describe('normaliseShopifyOrder: drop-off', () => {
  it('falls back to the billing address when shipping_address is null', () => {
    const billing = {
      first_name: 'Moussa',
      last_name: 'Diop',
      address1: 'Rue 10, Médina',
      city: 'Dakar',
      country_code: 'SN',
      phone: '+221 70 000 00 01',
      latitude: '14.6833',
      longitude: '-17.45',
    };
    const order = normalised({ shipping_address: null, billing_address: billing });
    expect(order.dropoff).toEqual({
      name: 'Moussa Diop',
      phone: '+221 70 000 00 01',
      address1: 'Rue 10, Médina',
      city: 'Dakar',
      province: 'Dakar',
      zip: '12000',
      countryCode: 'SN',
      coords: { lat: 14.6833, lng: -17.45 },
    });
  });

  it('holds an order with neither a shipping nor a billing address', () => {
    expect(holdCode({ shipping_address: null, billing_address: null })).toBe('no_delivery_address');
  });

  it('takes the name from billing when the shipping address has none', () => {
    expect(normalised({ shipping_address: { first_name: '', last_name: null, name: '' } }).dropoff.name).toBe(
      'Awa Ndiaye',
    );
  });

  it('takes the phone from billing, then the customer, when the shipping address has none', () => {
    expect(
      normalised({ shipping_address: { phone: null }, billing_address: { phone: '+221 76 111 11 11' } }).dropoff.phone,
    ).toBe('+221 76 111 11 11');
    expect(normalised({ shipping_address: { phone: '' }, billing_address: { phone: null } }).dropoff.phone).toBe(
      '+221771234567',
    );
  });

  it('holds an order without any phone number', () => {
    expect(holdCode(WITHOUT_ANY_PHONE)).toBe('no_phone');
  });

  it('reads coordinates sent as strings and leaves them out when null or absent', () => {
    expect(normalised({ shipping_address: { latitude: '14.7236', longitude: '-17.4694' } }).dropoff.coords).toEqual({
      lat: 14.7236,
      lng: -17.4694,
    });
    expect(normalised({ shipping_address: { latitude: null, longitude: null } }).dropoff.coords).toBeUndefined();
    expect(normalised({ shipping_address: { latitude: undefined, longitude: undefined } }).dropoff).not.toHaveProperty(
      'coords',
    );
  });
});

describe('normaliseShopifyOrder: weight, lines, status', () => {
  it('leaves the weight undefined (standard parcel) when total_weight is 0 or absent', () => {
    expect(normalised({ total_weight: 0 }).weightGrams).toBeUndefined();
    expect(normalised({ total_weight: undefined }).weightGrams).toBeUndefined();
    expect(normalised({ total_weight: 1250 }).weightGrams).toBe(1250);
  });

  it('keeps per-line grams, leaving unitGrams out when a line has none', () => {
    const base = shopifyOrderPayload();
    const lines = (base.line_items as JsonOverrides[]).map((line, i) =>
      i === 0 ? { ...line, grams: undefined } : line,
    );
    const order = normalised({ line_items: lines });
    expect(order.lineItems[0]).not.toHaveProperty('unitGrams');
    expect(order.lineItems[1]?.unitGrams).toBe(200);
  });

  it('leaves out lines removed by an edit or a refund (current_quantity 0)', () => {
    const base = shopifyOrderPayload();
    const lines = (base.line_items as JsonOverrides[]).map((line, i) =>
      i === 1 ? { ...line, current_quantity: 0 } : line,
    );
    expect(normalised({ line_items: lines }).lineItems.map((line) => line.name)).toEqual([
      'IPod Nano - 8gb - green',
      'IPod Nano - 8gb - black',
    ]);
  });

  it('keeps the raw financial and fulfilment statuses', () => {
    const order = normalised({ financial_status: 'authorized', fulfillment_status: 'partial' });
    expect(order).toMatchObject({ financialStatus: 'authorized', platformStatus: 'partial' });
  });

  it('marks an order with cancelled_at as cancelled', () => {
    expect(normalised({ cancelled_at: '2026-11-22T11:00:00+00:00' }).cancelled).toBe(true);
    expect(normalised({ cancelled_at: null }).cancelled).toBe(false);
  });

  it('still normalises a cancelled order with nothing to collect and no phone, so its shipment can be cancelled', () => {
    const order = normalised({
      cancelled_at: '2026-11-22T11:00:00+00:00',
      financial_status: 'voided',
      current_total_price: '0.00',
      total_outstanding: '0.00',
      shipping_address: { phone: null },
      billing_address: { phone: null },
      customer: null,
    });
    expect(order).toMatchObject({ cancelled: true, outstanding: 0, total: 0 });
  });
});
