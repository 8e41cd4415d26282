/**
 * The first step of an attempt: whether the order is to be shipped by this job at all, and what with. An order
 * this job has nothing to do with (unknown, replayed since, already dispatched, cancelled) is skipped; one that
 * cannot be shipped as it stands is held; otherwise the attempt goes on with the shop, the order and the goods
 * the courier collects.
 */
import type { ShopConfig, ShopRegistry } from '../../shops/shops.js';
import { collectsCash } from '../../domain/delivery.js';
import { goodsOwed } from '../../domain/door-amount.js';
import { holdFor } from '../../domain/holds.js';
import type { HoldReason, StoreOrder } from '../../domain/order.js';
import { DISPATCHED_STATES } from '../../domain/order-state.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import type { DispatchJob } from '../queues.js';

/** What admission decides from. */
export interface AdmitInput {
  job: DispatchJob;
  /** The order's record, as just read (undefined: unknown order). */
  record: OrderRecord | undefined;
  shops: Pick<ShopRegistry, 'get' | 'notServed'>;
}

export type Admission =
  | { kind: 'skip'; why: string }
  | { kind: 'hold'; record: OrderRecord; reason: HoldReason }
  | {
      kind: 'ship';
      shop: ShopConfig;
      record: OrderRecord;
      order: StoreOrder;
      /** The goods' value the courier collects (orderAmountXof), for a cash-collecting order. */
      goods: number | undefined;
    };

export function admit({ job, record, shops }: AdmitInput): Admission {
  if (!record) return { kind: 'skip', why: 'unknown order' };
  if (record.meta.generation !== job.generation) return { kind: 'skip', why: 'superseded by a replay' };
  if (DISPATCHED_STATES.has(record.state)) return { kind: 'skip', why: `already ${record.state}` };
  const shop = shops.get(job.shopId);
  if (!shop) {
    // A job that was waiting when its shop stopped being served (switched off, uninstalled) ends held, saying why.
    const notServed = shops.notServed(job.shopId);
    const reason = notServed
      ? holdFor('shop_not_served', { shopId: job.shopId, reason: notServed.reason })
      : holdFor('unknown_shop', { shopId: job.shopId });
    return { kind: 'hold', record, reason };
  }
  const order = record.order;
  if (!order) return { kind: 'hold', record, reason: holdFor('no_order_data', {}) };
  if (order.cancelled) return { kind: 'skip', why: 'order cancelled' };
  const goods = goodsToCollect(shop, order);
  if (goods.kind === 'hold') return { kind: 'hold', record, reason: goods.reason };
  return { kind: 'ship', shop, record, order, goods: goods.goods };
}

/**
 * What the courier collects for the goods (door-amount.ts): never 0 for cash on delivery, never the shop's
 * shipping on top of the service's own delivery price. Undefined for an order that collects no cash.
 */
function goodsToCollect(
  shop: ShopConfig,
  order: StoreOrder,
): { kind: 'goods'; goods: number | undefined } | { kind: 'hold'; reason: HoldReason } {
  if (!collectsCash(order.paymentFamily)) return { kind: 'goods', goods: undefined };
  if (order.outstanding <= 0)
    return { kind: 'hold', reason: holdFor('cod_nothing_to_collect', { orderName: order.orderName }) };
  const owed = goodsOwed(order, shop.policy.deliveryFeePaidBy);
  return owed.ok ? { kind: 'goods', goods: owed.goods } : { kind: 'hold', reason: owed.hold };
}
