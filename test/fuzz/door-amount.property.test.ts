/**
 * What the courier collects at the door never loses or invents a franc. The oracle is BigInt arithmetic on the
 * shop's figures, written apart from src/domain/door-amount.ts: with the customer paying the delivery at the
 * door, the goods are the shop's balance less the shipping it charged; with the merchant paying, the whole
 * balance; the customer hands over goods + delivery + collection fee, or the goods alone.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectedCovers, doorAmount, goodsOwed, type DeliveryFeePaidBy } from '../../src/domain/door-amount.js';
import { xof } from '../../src/domain/money.js';

const francs = fc.integer({ min: 0, max: 50_000_000 });
const paidBy = fc.constantFrom<DeliveryFeePaidBy>('customer', 'merchant');

describe('the door amount', () => {
  it("collects for the goods exactly the balance less the shop's shipping (customer pays delivery), or the whole balance (merchant pays)", () => {
    fc.assert(
      fc.property(francs, francs, paidBy, (outstanding, shipping, who) => {
        const owed = goodsOwed(
          { orderName: '#1', amountToCollect: xof(outstanding), shippingCharged: xof(shipping) },
          who,
        );
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
