/**
 * When a Shopify order ships, by the merchant's policy (shop registry), and how its standing reads in a
 * reconciliation finding. Pure, so every rule is a one-line test.
 *
 * Cash on delivery: at creation (or once paid, if the merchant chose so); prepaid: once paid (partly refunded
 * included; partly paid, refunded or voided it is held); deposit then balance: once the deposit is in
 * (partially_paid); business account: at creation.
 */
import type { ShopConfig } from '../../shops/shops.js';
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
      return prepaidEligibility(order);
  }
}

/**
 * A prepaid order ships once its goods are paid for. Partly refunded (a line or the shipping given back before
 * it left) the rest is still paid for, and the refunded lines are out of the parcel: it ships, as the merchant
 * expects. Partly paid, a balance is owed that nobody collects (the courier collects only for the payment
 * methods the shop declares, `depositGateways`), and refunded or voided in full nothing is paid for: no shop
 * event moves those on by themselves, so they are held saying what to do. Pending or authorized, the payment is
 * under way: the order waits for it.
 */
function prepaidEligibility(order: StoreOrder): Eligibility {
  switch (order.financialStatus) {
    case 'paid':
    case 'partially_refunded':
      return { decision: 'dispatch' };
    case 'partially_paid':
      return {
        decision: 'hold',
        hold: {
          code: 'prepaid_partially_paid',
          message: `prepaid order ${order.orderName} (paid with ${order.gatewayNames.join(', ') || 'an online payment'}) is only partly paid: a balance is still owed and Relais does not ship goods that are not paid for. Take the balance in Shopify and the order ships by itself; or, if the courier should collect the balance at the door, add this payment method to the shop's depositGateways and replay the order.`,
        },
      };
    case 'refunded':
    case 'voided':
      return {
        decision: 'hold',
        hold: {
          code: 'prepaid_refunded',
          message: `prepaid order ${order.orderName} was ${order.financialStatus === 'voided' ? 'voided (its payment cancelled)' : 'refunded in full'} but is not cancelled: nothing is paid for it, so it was not shipped. Cancel it in Shopify; if it must still go, take the payment again and the order ships by itself.`,
        },
      };
    default:
      return { decision: 'wait', why: `prepaid order not paid yet (financial status "${order.financialStatus}")` };
  }
}

/** "cash on delivery, pending": the payment family and Shopify's financial status. */
export function describeShopifyStatus(order: StoreOrder): string {
  return `${order.paymentFamily.replace(/_/g, ' ')}, ${order.financialStatus}`;
}
