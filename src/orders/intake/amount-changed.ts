/**
 * A shop event about an order whose shipment exists already, and whose amount changed: flagged, never applied.
 */
import type { ShopConfig } from '../../shops/shops.js';
import { collectsCash } from '../../domain/delivery.js';
import { goodsOwed } from '../../domain/door-amount.js';
import type { StoreOrder } from '../../domain/order.js';
import { FINAL_STATES } from '../../domain/order-state.js';
import type { OrderLedger, OrderRecord } from '../../ledger/order-ledger.js';
import type { Logger } from '../../log.js';

/**
 * An order edited in the shop once its shipment exists: a shipment's amount cannot be changed through the
 * service's API, so a new amount is never silently applied. It is flagged on the order's timeline (the
 * dashboard's order page) and in the logs, and reconciliation reports it as cod_mismatch with both figures.
 */
export async function flagAmountChangedAfterShipping(
  shop: ShopConfig,
  extId: string,
  order: StoreOrder,
  record: OrderRecord,
  deps: { ledger: Pick<OrderLedger, 'appendTimeline'>; now(): Date; logger: Logger },
): Promise<void> {
  const carried = record.shipment?.orderAmountXof;
  if (carried === undefined || !collectsCash(order.paymentFamily) || FINAL_STATES.has(record.state)) return;
  const owed = goodsOwed(order, shop.policy.deliveryFeePaidBy);
  const goods = owed.ok ? owed.goods : 0;
  if (goods === carried) return;
  const detail = `the order now owes ${goods} XOF for the goods, but shipment ${record.shipment!.shipmentId} carries ${carried} XOF and cannot be changed: settle the difference with the customer at the door, or cancel the shipment before pickup and replay the order`;
  await deps.ledger.appendTimeline(extId, {
    at: deps.now().toISOString(),
    system: 'relais',
    operation: 'amount changed after shipping',
    outcome: 'flagged',
    detail,
  });
  deps.logger.warn(
    { order: order.orderName, carried, goods },
    'order amount changed after its shipment was created; flagged, not applied',
  );
}
