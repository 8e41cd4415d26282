/**
 * The read-back step: what the shipment will collect, as the service said it, against what the order owes. A
 * shipment carrying another amount than the goods owed is never put in front of a courier (a shipment's amount
 * cannot be changed through the service's API).
 */
import type { PaymentFamily } from '../../domain/order.js';
import type { ShipmentProgress } from '../../ledger/order-ledger.js';

/** What the shipment is checked against. */
export interface ReadBackInput {
  /** The goods' value the courier collects; undefined for an order that collects no cash. */
  goods: number | undefined;
  paymentFamily: PaymentFamily;
  shipment: Pick<ShipmentProgress, 'orderAmountXof'>;
}

/**
 * Why the shipment must not go to a courier with the amount it carries, or undefined when it may: the
 * service's answer names another amount than Relais sent, or the order was edited since and now owes
 * another amount of goods. An answer that does not echo the amount cannot be checked (the spec does not
 * show the field in a Shipment), and goes on.
 */
export function wrongAmount({ goods, paymentFamily, shipment }: ReadBackInput): string | undefined {
  const carried = shipment.orderAmountXof;
  if (goods === undefined) {
    // Not a cash-collecting order (goods are set for those only): nothing may be collected.
    return carried !== undefined && carried > 0
      ? `it carries ${carried} XOF to collect but the order is ${paymentFamily.replace(/_/g, ' ')}, with nothing to collect; cancel it with the delivery service`
      : undefined;
  }
  if (carried === undefined || carried === goods) return undefined;
  return `it carries ${carried} XOF to collect for the goods but the order owes ${goods} XOF (the order was edited, or the service changed the amount); a shipment's amount cannot be changed, so cancel it with the delivery service and replay the order`;
}
