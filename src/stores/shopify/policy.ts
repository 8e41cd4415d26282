/**
 * When a Shopify order ships, by the merchant's policy (shop registry), and how its standing reads in a
 * reconciliation finding. Pure, so every rule is a one-line test.
 *
 * Cash on delivery: at creation (or once paid, if the merchant chose so); prepaid: once paid; deposit then
 * balance: once the deposit is in (partially_paid); business account: at creation.
 */
import type { ShopConfig } from '../../config/shops.js';
import type { Eligibility, StoreOrder } from '../../domain/order.js';

export function shopifyEligibility(order: StoreOrder, shop: ShopConfig): Eligibility {
  const paid = order.financialStatus === 'paid';
  switch (order.paymentFamily) {
    case 'cash_on_delivery':
      return shop.policy.dispatchCashOnDeliveryAt === 'created' || paid
        ? { decision: 'dispatch' }
        : { decision: 'wait', why: "cash on delivery orders are shipped once paid, by this shop's policy" };
    case 'business_account':
      return { decision: 'dispatch' };
    case 'deposit_then_balance':
      return paid || order.financialStatus === 'partially_paid'
        ? { decision: 'dispatch' }
        : { decision: 'wait', why: 'waiting for the deposit' };
    case 'prepaid':
      return paid
        ? { decision: 'dispatch' }
        : { decision: 'wait', why: `prepaid order not paid yet (financial status "${order.financialStatus}")` };
  }
}

/** "cash on delivery, pending": the payment family and Shopify's financial status. */
export function describeShopifyStatus(order: StoreOrder): string {
  return `${order.paymentFamily.replace(/_/g, ' ')}, ${order.financialStatus}`;
}
