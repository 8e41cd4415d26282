/**
 * What a merchant would see on the order page, in one plain object: the thing tests assert on.
 */
import { gid, graphqlTime, restMoney } from './format.js';
import {
  currentTotal,
  displayFulfillmentStatus,
  originalTotal,
  outstanding,
  type StoredOrder,
  type TrackingInfo,
} from './model.js';
import type { RestOrder } from './rest.js';

export interface OrderSnapshot {
  id: number;
  gid: string;
  name: string;
  /** GraphQL display status: PENDING, PAID, VOIDED... */
  financialStatus: string;
  /** UNFULFILLED, PARTIALLY_FULFILLED or FULFILLED. */
  fulfillmentStatus: string;
  cancelled: boolean;
  cancelledAt: string | null;
  cancelReason: string | null;
  currency: string;
  totalPrice: string;
  currentTotalPrice: string;
  totalOutstanding: string;
  gatewayNames: string[];
  tags: string[];
  note: string | null;
  metafields: { namespace: string; key: string; type: string; value: string }[];
  fulfillmentOrders: {
    id: string;
    status: string;
    lineItems: { id: string; totalQuantity: number; remainingQuantity: number }[];
  }[];
  fulfillments: {
    id: string;
    name: string;
    status: string;
    trackingInfo: TrackingInfo[];
    notifyCustomer: boolean;
    /** In the order they were created. */
    events: { status: string; happenedAt: string; message: string | null }[];
    lineItems: { lineItemId: string; quantity: number }[];
  }[];
  updatedAt: string;
  /** The REST body a webhook would carry now. */
  rest: RestOrder;
}

export function snapshotOf(order: StoredOrder, rest: RestOrder): OrderSnapshot {
  return {
    id: order.id,
    gid: gid('Order', order.id),
    name: order.name,
    financialStatus: order.financialStatus.toUpperCase(),
    fulfillmentStatus: displayFulfillmentStatus(order),
    cancelled: order.cancelledAt !== null,
    cancelledAt: order.cancelledAt === null ? null : graphqlTime(order.cancelledAt),
    cancelReason: order.cancelReason,
    currency: order.currency,
    totalPrice: restMoney(originalTotal(order)),
    currentTotalPrice: restMoney(currentTotal(order)),
    totalOutstanding: restMoney(outstanding(order)),
    gatewayNames: [...order.gatewayNames],
    tags: [...order.tags],
    note: order.note,
    metafields: order.metafields.map(({ namespace, key, type, value }) => ({ namespace, key, type, value })),
    fulfillmentOrders: order.fulfillmentOrders.map((fo) => ({
      id: gid('FulfillmentOrder', fo.id),
      status: fo.status,
      lineItems: fo.lineItems.map((line) => ({
        id: gid('FulfillmentOrderLineItem', line.id),
        totalQuantity: line.totalQuantity,
        remainingQuantity: line.remainingQuantity,
      })),
    })),
    fulfillments: order.fulfillments.map((fulfillment) => ({
      id: gid('Fulfillment', fulfillment.id),
      name: fulfillment.name,
      status: fulfillment.status,
      trackingInfo: fulfillment.trackingInfo.map((info) => ({ ...info })),
      notifyCustomer: fulfillment.notifyCustomer,
      events: fulfillment.events.map((event) => ({
        status: event.status,
        happenedAt: graphqlTime(event.happenedAt),
        message: event.message,
      })),
      lineItems: fulfillment.lineItems.map((line) => ({
        lineItemId: gid('LineItem', line.lineItemId),
        quantity: line.quantity,
      })),
    })),
    updatedAt: graphqlTime(order.updatedAt),
    rest,
  };
}
