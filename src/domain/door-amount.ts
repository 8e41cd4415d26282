/**
 * What the courier collects at the door, and why: the one place that turns what the shop says is owed into
 * the goods Relais sends (the spec's `orderAmountXof`), and into the breakdown the merchant sees.
 *
 * Money words, used the same way in code, pages and messages (integer francs, XOF):
 *   outstanding     what the shop says the customer still owes (its balance). Never sent as it is: it may include
 *                   the shop's shipping. StoreOrder.outstanding holds it (in the ledger too, since migration 9).
 *   shop shipping   the shipping the shop charged that the order still owes (StoreOrder.shippingCharged).
 *   goods           the goods' value the courier collects for the merchant: what the shipment carries. Sent and read
 *                   back as `orderAmountXof`; DoorAmount.goods, DispatchInfo.goods; goodsOwed() works it out from
 *                   the outstanding, goodsCarried() says what a shipment carries.
 *   delivery        the delivery service's own price, from the quote (its total less the collection fee).
 *   collection fee  the service's fee for collecting cash (the quote breakdown's codFee).
 *   at the door     everything the customer hands the courier: goods, plus delivery and collection fee when the
 *                   customer pays the delivery (DoorAmount.atDoor).
 *
 * The spec: `orderAmountXof` is "the value of the goods"; the quote's `total` is what the customer pays for the
 * delivery, and a cash collection adds its own fee, shown in the breakdown. The service collects its own
 * delivery price at the door. So when the customer pays the delivery at the door (the default), the shipping
 * the shop already charged must come out of the outstanding, or the customer is asked for the delivery twice.
 * When the merchant pays the delivery (settled with the service), the goods are the outstanding, and the delivery
 * and the collection fee are the merchant's bill.
 *
 * Pure functions over integer francs; property-tested in test/fuzz/door-amount.property.test.ts.
 */
import { formatFrancs, formatXof, type Xof, xof } from './money.js';
import type { HoldReason, StoreOrder } from './order.js';

/** Who pays the delivery at the door: the customer (default), or the merchant, who settles it with the service. */
export type DeliveryFeePaidBy = 'customer' | 'merchant';

export interface DoorAmount {
  paidBy: DeliveryFeePaidBy;
  /** The goods' value the courier collects for the merchant: what Relais sends as orderAmountXof. */
  goods: Xof;
  /** The delivery price the customer pays at the door (0 when the merchant pays it). */
  delivery: Xof;
  /** The cash-collection fee the customer pays at the door (0 when the merchant pays it). */
  collectionFee: Xof;
  /** Everything the customer hands the courier. */
  atDoor: Xof;
  /** The quote's delivery price and collection fee, whoever pays them (for the merchant's accounting). */
  quoted: { delivery: Xof; collectionFee: Xof };
}

export type GoodsOwed = { ok: true; goods: Xof } | { ok: false; hold: HoldReason };

/**
 * The goods' value still owed, from the outstanding. With the customer paying the delivery at
 * the door, the shop's own shipping charge comes out (at most what is outstanding: an order whose goods are paid
 * and only shipping remains owes no goods).
 */
export function goodsOwed(
  order: Pick<StoreOrder, 'outstanding' | 'shippingCharged' | 'orderName'>,
  paidBy: DeliveryFeePaidBy,
): GoodsOwed {
  const outstanding = order.outstanding;
  const goods =
    paidBy === 'customer' ? Math.max(0, outstanding - Math.min(order.shippingCharged, outstanding)) : outstanding;
  if (goods <= 0) {
    return {
      ok: false,
      hold: {
        code: 'cod_only_shipping_outstanding',
        message: `order ${order.orderName} owes ${formatXof(outstanding)}, all of it the shipping the shop charged (${formatXof(order.shippingCharged)}); the delivery service collects its own delivery price at the door, so there are no goods to collect. Mark the order paid or correct it in the shop, then replay it.`,
      },
    };
  }
  return { ok: true, goods: xof(goods) };
}

/**
 * The breakdown at the door for goods and a quote. `quoteTotal` is the quote's total (delivery, collection fee
 * included when cash is collected); `codFee` the fee as the breakdown gives it (0 when absent).
 */
export function doorAmount(
  goods: Xof,
  quote: { total: number; codFee?: number } | undefined,
  paidBy: DeliveryFeePaidBy,
): DoorAmount {
  const collectionFee =
    quote?.codFee !== undefined && quote.codFee > 0 && quote.codFee <= quote.total ? quote.codFee : 0;
  const delivery = quote ? quote.total - collectionFee : 0;
  const quoted = { delivery: xof(delivery), collectionFee: xof(collectionFee) };
  if (paidBy === 'merchant') return { paidBy, goods, delivery: xof(0), collectionFee: xof(0), atDoor: goods, quoted };
  return {
    paidBy,
    goods,
    delivery: quoted.delivery,
    collectionFee: quoted.collectionFee,
    atDoor: xof(goods + delivery + collectionFee),
    quoted,
  };
}

/** "at the door: goods 15 000 + delivery 2 300 + collection fee 500 = 17 800 XOF" (what the merchant reads). */
export function describeDoorAmount(door: DoorAmount): string {
  if (door.paidBy === 'merchant') {
    return `at the door: goods ${formatFrancs(door.goods)} XOF; delivery ${formatFrancs(door.quoted.delivery)} + collection fee ${formatFrancs(door.quoted.collectionFee)} XOF billed to the merchant`;
  }
  const parts = [`goods ${formatFrancs(door.goods)}`, `delivery ${formatFrancs(door.delivery)}`];
  if (door.collectionFee > 0) parts.push(`collection fee ${formatFrancs(door.collectionFee)}`);
  return `at the door: ${parts.join(' + ')} = ${formatFrancs(door.atDoor)} XOF`;
}

/** Paid in the shop only when what the courier collected for the goods covers what the order still owes. */
export function collectedCovers(collectedGoods: number | undefined, owedGoods: number): boolean {
  return collectedGoods !== undefined && collectedGoods >= owedGoods;
}

/**
 * The goods this order's shipment carries: what the service reads back of it (`readBack`, a shipment just read),
 * else what the ledger saved of the shipment, else what Relais sent with it (the door breakdown). Undefined when
 * none is known (nothing sent yet, or a service that does not echo the amount): never the outstanding, which is
 * not what a shipment carries.
 */
export function goodsCarried(
  record: { shipment?: { orderAmountXof?: number }; door?: { goods: number } } | undefined,
  readBack?: { orderAmountXof?: number },
): number | undefined {
  return readBack?.orderAmountXof ?? record?.shipment?.orderAmountXof ?? record?.door?.goods;
}
