/**
 * When a WooCommerce order ships: when it reaches one of the merchant's dispatch statuses (default
 * `processing`), which is where core puts COD orders and paid orders. An unpaid bank transfer sits in
 * `on-hold` and is never shipped. Pure, so every rule is a one-line test.
 */
import type { ShopConfig } from '../../shops/shops.js';
import type { Eligibility, StoreOrder } from '../../domain/order.js';

export function wooEligibility(order: StoreOrder, shop: ShopConfig): Eligibility {
  return shop.policy.wooDispatchStatuses.includes(order.platformStatus)
    ? { decision: 'dispatch' }
    : {
        decision: 'wait',
        why: `WooCommerce status is "${order.platformStatus}"; Relais ships at ${shop.policy.wooDispatchStatuses.join(' or ')}`,
      };
}

/** "status processing": WooCommerce's own order status. */
export function describeWooStatus(order: StoreOrder): string {
  return `status ${order.platformStatus}`;
}
