/**
 * From a StoreOrder and its shop to the delivery port's requests (src/domain/delivery.ts). Pure functions: the
 * dispatch job calls them, tests read them; the adapter spells them for its service.
 */
import type { ShopConfig } from '../../shops/shops.js';
import { collectsCash, type DeliveryPlace, type QuoteRequest, type ShipmentRequest } from '../../domain/delivery.js';
import type { StoreOrder } from '../../domain/order.js';

export function dropoffAddressLine(order: StoreOrder): string {
  const a = order.dropoff;
  return [a.address1, a.address2, a.city].filter((p): p is string => Boolean(p && p.trim())).join(', ');
}

/**
 * The drop-off is the resolved NEIGHBOURHOOD (spec section 1), never the shop's city field. Coordinates
 * are sent only when both ends have them: that is when the service prices by real distance.
 */
export function quoteRequestFor(shop: ShopConfig, order: StoreOrder, dropoffNeighbourhood: string): QuoteRequest {
  const pickup: DeliveryPlace = { neighbourhood: shop.pickup.neighbourhood, address: shop.pickup.address };
  const dropoff: DeliveryPlace = {
    neighbourhood: dropoffNeighbourhood,
    address: dropoffAddressLine(order) || dropoffNeighbourhood,
  };
  if (shop.pickup.coords && order.dropoff.coords) {
    pickup.coords = { lat: shop.pickup.coords.lat, lng: shop.pickup.coords.lng };
    dropoff.coords = { lat: order.dropoff.coords.lat, lng: order.dropoff.coords.lng };
  }
  const request: QuoteRequest = { pickup, dropoff, payment: order.paymentFamily };
  // An absent weight is priced as a standard parcel; a wrong one risks an adjustment at pickup.
  if (order.weightGrams !== undefined && order.weightGrams > 0) request.weightKg = order.weightGrams / 1000;
  return request;
}

/** `goods`: the goods' value the courier collects (src/domain/door-amount.ts goodsOwed), for a cash-collecting order. */
export function shipmentRequestFor(order: StoreOrder, quoteId: string, goods: number | undefined): ShipmentRequest {
  const request: ShipmentRequest = { quoteId, externalOrderId: order.externalOrderId };
  if (collectsCash(order.paymentFamily)) {
    if (goods === undefined || goods <= 0)
      throw new RangeError(
        `order ${order.orderName}: a cash-on-delivery shipment needs a positive amount of goods to collect`,
      );
    request.orderAmountXof = goods;
  }
  return request;
}
