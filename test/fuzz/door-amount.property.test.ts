/**
 * What the courier collects at the door never loses or invents a franc. The oracle is BigInt arithmetic on the
 * shop's figures, written apart from src/domain/door-amount.ts: with the customer paying the delivery at the
 * door, the goods are the shop's balance less the shipping it charged; with the merchant paying, the whole
 * balance; the customer hands over goods + delivery + collection fee, or the goods alone.
 *
 * The shop's shipping is the shipping the order still owes, read from each platform's order: Shopify orders and
 * WooCommerce orders are built from the shop's figures (goods, their discounts and refunds, a shipping line, a
 * discount code and a refund on it, tax on it with prices excluding tax) and the goods collected must be the
 * goods still owed, whatever the figures and whichever fields the body carries.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectedCovers, doorAmount, goodsOwed, type DeliveryFeePaidBy } from '../../src/domain/door-amount.js';
import { xof } from '../../src/domain/money.js';
import type { NormaliseResult } from '../../src/shops/platforms/common.js';
import { normaliseShopifyOrder } from '../../src/adapters/shopify/normalise.js';
import { normaliseWooOrder } from '../../src/adapters/woocommerce/normalise.js';
import { shopifyOrderPayload, wooOrderPayload } from '../support/factories.js';

const francs = fc.integer({ min: 0, max: 50_000_000 });
const paidBy = fc.constantFrom<DeliveryFeePaidBy>('customer', 'merchant');

describe('the door amount', () => {
  it("collects for the goods exactly the balance less the shop's shipping (customer pays delivery), or the whole balance (merchant pays)", () => {
    fc.assert(
      fc.property(francs, francs, paidBy, (outstanding, shipping, who) => {
        const owed = goodsOwed({ orderName: '#1', outstanding: xof(outstanding), shippingCharged: xof(shipping) }, who);
        const expected =
          who === 'customer' ? BigInt(outstanding) - BigInt(Math.min(shipping, outstanding)) : BigInt(outstanding);
        if (expected <= 0n) {
          expect(owed.ok).toBe(false);
        } else {
          expect(owed).toEqual({ ok: true, goods: Number(expected) });
          if (owed.ok) expect(Number.isSafeInteger(owed.goods)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('asks the customer for goods + delivery + collection fee (or the goods alone when the merchant pays), in whole francs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50_000_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.integer({ min: 0, max: 50_000 }),
        paidBy,
        (goods, delivery, fee, who) => {
          const door = doorAmount(xof(goods), { total: delivery + fee, codFee: fee }, who);
          const atDoor = who === 'customer' ? BigInt(goods) + BigInt(delivery) + BigInt(fee) : BigInt(goods);
          expect(BigInt(door.atDoor)).toBe(atDoor);
          expect(door.goods).toBe(goods);
          expect(door.quoted).toEqual({ delivery, collectionFee: fee });
          expect(door.goods + door.delivery + door.collectionFee).toBe(door.atDoor);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('marks an order paid only when what was collected covers what is owed', () => {
    fc.assert(
      fc.property(fc.option(francs, { nil: undefined }), francs, (collected, owed) => {
        expect(collectedCovers(collected, owed)).toBe(collected !== undefined && collected >= owed);
      }),
    );
  });
});

// ---- the shop's shipping, read from each platform's order ------------------------------------------------

const ctx = { shopId: 'fuzz-shop', codGateways: [] };
const shopifyBag = (amount: number) => ({
  shop_money: { amount: `${amount}.00`, currency_code: 'XOF' },
  presentment_money: { amount: `${amount}.00`, currency_code: 'XOF' },
});

/** A Shopify shop's figures for one COD order, in whole francs, and which fields its body carries. */
const shopifyFigures = fc
  .record({
    goods: fc.integer({ min: 1, max: 5_000_000 }),
    goodsRefundShare: fc.double({ min: 0, max: 0.99, noNaN: true }),
    shipping: fc.integer({ min: 0, max: 100_000 }),
    discountShare: fc.double({ min: 0, max: 1, noNaN: true }),
    refundShare: fc.double({ min: 0, max: 1, noNaN: true }),
    taxRate: fc.constantFrom(0, 0.18, 0.2),
    taxesIncluded: fc.boolean(),
    body: fc.constantFrom('current_shipping_price_set', 'refund_shipping_lines', 'order_adjustments'),
  })
  .map((f) => {
    const goodsRefund = Math.floor(f.goods * f.goodsRefundShare);
    const discount = Math.floor(f.shipping * f.discountShare);
    const refund = Math.floor((f.shipping - discount) * f.refundShare);
    // Tax on the discounted shipping, in whole francs; a refund returns its share of it.
    const tax = Math.round((f.shipping - discount) * f.taxRate);
    const refundedTax =
      refund === f.shipping - discount ? tax : Math.round((tax * refund) / Math.max(1, f.shipping - discount));
    return { ...f, goodsRefund, discount, refund, tax, refundedTax };
  });
type ShopifyFigures = typeof shopifyFigures extends fc.Arbitrary<infer T> ? T : never;

function shopifyBody(f: ShopifyFigures) {
  const shippingNow = f.shipping - f.discount - f.refund;
  const taxAdded = f.taxesIncluded ? 0 : f.tax - f.refundedTax;
  const outstanding = f.goods - f.goodsRefund + shippingNow + taxAdded;
  const refundOfShipping =
    f.body === 'order_adjustments'
      ? {
          refund_shipping_lines: [],
          order_adjustments: [
            { kind: 'shipping_refund', amount: `-${f.refund}.00`, tax_amount: `-${f.refundedTax}.00` },
          ],
        }
      : {
          refund_shipping_lines: [
            { subtotal_amount_set: shopifyBag(f.refund), tax_amount_set: shopifyBag(f.refundedTax) },
          ],
        };
  return shopifyOrderPayload({
    total_price: `${f.goods + f.shipping - f.discount + (f.taxesIncluded ? 0 : f.tax)}.00`,
    current_total_price: `${outstanding}.00`,
    total_outstanding: `${outstanding}.00`,
    financial_status: 'pending',
    taxes_included: f.taxesIncluded,
    total_shipping_price_set: shopifyBag(f.shipping),
    ...(f.body === 'current_shipping_price_set' ? { current_shipping_price_set: shopifyBag(shippingNow) } : {}),
    shipping_lines: [
      {
        title: 'Livraison',
        price: `${f.shipping}.00`,
        price_set: shopifyBag(f.shipping),
        discounted_price: `${f.shipping - f.discount}.00`,
        discounted_price_set: shopifyBag(f.shipping - f.discount),
        tax_lines: f.tax === 0 ? [] : [{ price: `${f.tax}.00`, rate: f.taxRate, price_set: shopifyBag(f.tax) }],
      },
    ],
    refunds: f.refund === 0 ? [] : [refundOfShipping],
  });
}

/**
 * A WooCommerce shop's figures for one COD order: a coupon on the goods, 18 % (or none) on the shipping, a refund of
 * goods and one of shipping (with the tax on it). `refundLinesRead`: whether the goods refund was read from the shop
 * (then it lists no shipping line) or is known by its total only.
 */
const wooFigures = fc
  .record({
    goods: fc.integer({ min: 1, max: 5_000_000 }),
    couponShare: fc.double({ min: 0, max: 0.9, noNaN: true }),
    refundShare: fc.double({ min: 0, max: 0.9, noNaN: true }),
    shipping: fc.integer({ min: 0, max: 100_000 }),
    shippingRefundShare: fc.constantFrom(0, 1, 0.5, 0.25),
    taxRate: fc.constantFrom(0, 0.18),
    refundLinesRead: fc.boolean(),
  })
  .map((f) => {
    const coupon = Math.floor(f.goods * f.couponShare);
    const refund = Math.floor((f.goods - coupon) * f.refundShare);
    const shippingRefund = Math.floor(f.shipping * f.shippingRefundShare);
    return {
      ...f,
      coupon,
      refund,
      shippingTax: Math.round(f.shipping * f.taxRate),
      shippingRefund,
      shippingRefundTax: Math.round(shippingRefund * f.taxRate),
    };
  });

type WooFigures = typeof wooFigures extends fc.Arbitrary<infer F> ? F : never;

/** The order's refunds as Relais reads them: the body's `{id, total}`, with the shipping lines each refund gave back. */
function wooRefunds(f: WooFigures) {
  const refunds: Record<string, unknown>[] = [];
  if (f.refund > 0)
    refunds.push({ id: 1, total: `-${f.refund}.00`, ...(f.refundLinesRead ? { shipping_lines: [] } : {}) });
  if (f.shippingRefund > 0)
    refunds.push({
      id: 2,
      total: `-${f.shippingRefund + f.shippingRefundTax}.00`,
      shipping_lines: [{ total: `-${f.shippingRefund}.00`, total_tax: `-${f.shippingRefundTax}.00` }],
    });
  return refunds;
}

function goodsCollected(normalised: NormaliseResult, who: DeliveryFeePaidBy): bigint {
  if (!normalised.ok) throw new Error(`held: ${normalised.hold.message}`);
  const owed = goodsOwed(normalised.order, who);
  if (!owed.ok) throw new Error(`held: ${owed.hold.message}`);
  return BigInt(owed.goods);
}

describe("the shop's shipping that comes out of what is owed", () => {
  it('is, for a Shopify order, the shipping still owed after its discount and refund, with its tax when prices exclude tax', () => {
    fc.assert(
      fc.property(shopifyFigures, paidBy, (f, who) => {
        const normalised = normaliseShopifyOrder(shopifyBody(f), ctx);
        const goodsStillOwed = BigInt(f.goods) - BigInt(f.goodsRefund);
        const shippingStillOwed =
          BigInt(f.shipping - f.discount - f.refund) + (f.taxesIncluded ? 0n : BigInt(f.tax - f.refundedTax));
        expect(goodsCollected(normalised, who)).toBe(
          who === 'customer' ? goodsStillOwed : goodsStillOwed + shippingStillOwed,
        );
      }),
      { numRuns: 1000 },
    );
  });

  it('is, for a WooCommerce order, its shipping with the tax on it less what refunds gave back of both, whatever coupon and refunds of goods', () => {
    fc.assert(
      fc.property(wooFigures, paidBy, (f, who) => {
        const payload = wooOrderPayload({
          discount_total: `${f.coupon}`,
          shipping_total: `${f.shipping}`,
          shipping_tax: `${f.shippingTax}`,
          total: `${f.goods - f.coupon + f.shipping + f.shippingTax}`,
          refunds: wooRefunds(f),
        });
        const goodsStillOwed = BigInt(f.goods) - BigInt(f.coupon) - BigInt(f.refund);
        const shippingStillOwed =
          BigInt(f.shipping) + BigInt(f.shippingTax) - BigInt(f.shippingRefund) - BigInt(f.shippingRefundTax);
        expect(goodsCollected(normaliseWooOrder(payload, ctx), who)).toBe(
          who === 'customer' ? goodsStillOwed : goodsStillOwed + shippingStillOwed,
        );
      }),
      { numRuns: 1000 },
    );
  });
});
