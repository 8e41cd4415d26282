/**
 * When is an order shipped? The merchant's policy (shop registry) applied to a normalised order.
 * Pure, so every rule is a one-line test.
 *
 * - Shopify cash on delivery: at creation (or once paid, if the merchant chose so); prepaid: once paid;
 *   deposit then balance: once the deposit is in (partially_paid); business account: at creation.
 * - WooCommerce: when the order reaches one of the merchant's dispatch statuses (default `processing`),
 *   which is where core puts COD orders and paid orders. An unpaid bank transfer sits in `on-hold` and
 *   is never shipped.
 */
import type { ShopConfig } from '../config/shops.js';
import type { StoreOrder } from '../domain/order.js';

export type Eligibility = { decision: 'dispatch' } | { decision: 'wait'; why: string } | { decision: 'cancel' };

export function decideEligibility(order: StoreOrder, shop: ShopConfig): Eligibility {
  if (order.cancelled) return { decision: 'cancel' };
  if (order.platform === 'woocommerce') {
    return shop.policy.wooDispatchStatuses.includes(order.platformStatus)
      ? { decision: 'dispatch' }
      : { decision: 'wait', why: `WooCommerce status is "${order.platformStatus}"; Relais ships at ${shop.policy.wooDispatchStatuses.join(' or ')}` };
  }
  const paid = order.financialStatus === 'paid';
  switch (order.paymentFamily) {
    case 'cash_on_delivery':
      return shop.policy.dispatchCashOnDeliveryAt === 'created' || paid
        ? { decision: 'dispatch' }
        : { decision: 'wait', why: 'cash on delivery orders are shipped once paid, by this shop\'s policy' };
    case 'business_account':
      return { decision: 'dispatch' };
    case 'deposit_then_balance':
      return paid || order.financialStatus === 'partially_paid'
        ? { decision: 'dispatch' }
        : { decision: 'wait', why: 'waiting for the deposit' };
    case 'prepaid':
      return paid ? { decision: 'dispatch' } : { decision: 'wait', why: `prepaid order not paid yet (financial status "${order.financialStatus}")` };
  }
}
