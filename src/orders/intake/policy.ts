/**
 * When is an order shipped? The merchant's policy (shop registry) applied to a normalised order: a
 * cancelled order is cancelled, whatever the platform; otherwise each platform says (its folder's policy.ts:
 * Shopify by payment family and financial status, WooCommerce by the order's status).
 * Pure, so every rule is a one-line test.
 */
import type { ShopConfig } from '../../shops/shops.js';
import type { Eligibility, StoreOrder } from '../../domain/order.js';
import { platformOf } from '../../shops/platforms/index.js';

export type { Eligibility } from '../../domain/order.js';

export function decideEligibility(order: StoreOrder, shop: ShopConfig): Eligibility {
  if (order.cancelled) return { decision: 'cancel' };
  return platformOf(shop).eligibility(order, shop);
}
