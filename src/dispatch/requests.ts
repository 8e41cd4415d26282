/**
 * From a StoreOrder and its shop to the dispatch service's request bodies. Pure functions: the
 * pipeline calls them, tests read them.
 */
import type { ShopConfig } from '../config/shops.js';
import type { PaymentFamily, StoreOrder } from '../domain/order.js';
import { PaymentMode, type WireCreateShipmentRequest, type WirePlace, type WireQuoteRequest } from './wire.js';

const PAYMENT_MODE: Record<PaymentFamily, PaymentMode> = {
  cash_on_delivery: PaymentMode.cashOnDelivery,
  prepaid: PaymentMode.prepaid,
  deposit_then_balance: PaymentMode.depositThenBalance,
  business_account: PaymentMode.businessAccount,
};

/** Families in which the courier collects money at the door. */
export function collectsCash(family: PaymentFamily): boolean {
  return family === 'cash_on_delivery' || family === 'deposit_then_balance';
}

export function dropoffAddressLine(order: StoreOrder): string {
  const a = order.dropoff;
  return [a.address1, a.address2, a.city].filter((p): p is string => Boolean(p && p.trim())).join(', ');
}

/**
 * `city` carries the resolved NEIGHBOURHOOD (spec section 1), never the shop's city field. Coordinates
 * are sent only when both ends have them: that is when the service prices by real distance.
 */
export function buildQuoteRequest(shop: ShopConfig, order: StoreOrder, dropoffNeighbourhood: string): WireQuoteRequest {
  const pickup: WirePlace = { city: shop.pickup.neighbourhood, address: shop.pickup.address };
  const dropoff: WirePlace = { city: dropoffNeighbourhood, address: dropoffAddressLine(order) || dropoffNeighbourhood };
  if (shop.pickup.coords && order.dropoff.coords) {
    pickup.coords = { lat: shop.pickup.coords.lat, lng: shop.pickup.coords.lng };
    dropoff.coords = { lat: order.dropoff.coords.lat, lng: order.dropoff.coords.lng };
  }
  const request: WireQuoteRequest = { pickup, dropoff, payment_mode: PAYMENT_MODE[order.paymentFamily] };
  // An absent weight is priced as a standard parcel; a wrong one risks an adjustment at pickup.
  if (order.weightGrams !== undefined && order.weightGrams > 0) request.parcel = { weight_kg: order.weightGrams / 1000 };
  return request;
}

/** `goods`: the goods' value the courier collects (src/domain/door-amount.ts goodsOwed), for a cash-collecting order. */
export function buildCreateShipmentRequest(order: StoreOrder, quoteId: string, goods: number | undefined): WireCreateShipmentRequest {
  const request: WireCreateShipmentRequest = { quote_id: quoteId, external_order_id: order.externalOrderId };
  if (collectsCash(order.paymentFamily)) {
    if (goods === undefined || goods <= 0) throw new RangeError(`order ${order.orderName}: a cash-on-delivery shipment needs a positive amount of goods to collect`);
    request.orderAmountXof = goods;
  }
  return request;
}
