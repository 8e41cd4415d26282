/**
 * A WooCommerce order event made whole before the job acts on it (StorePlatform.createEventCompleter): the
 * order body lists its refunds by total only, so what they gave back of the shipping is read from the shop
 * (refunds.ts), and only for an order that has refunds.
 */
import type { OrderEventCompleter, StoreDeps } from '../platform.js';
import { withRefundedShipping } from './refunds.js';
import type { WooRest } from './rest.js';
import type { WooShopConfig } from './settings.js';
import { wooRestFor } from './writer.js';

export function wooEventCompleter(rest: Pick<WooRest, 'listOrderRefunds'>): OrderEventCompleter {
  return async ({ orderId, payload }) => ({
    kind: 'order',
    payload: await withRefundedShipping(rest, orderId, payload),
  });
}

export function createWooEventCompleter(shop: WooShopConfig, deps: StoreDeps): OrderEventCompleter {
  return wooEventCompleter(wooRestFor(shop, deps.logger.child({ shop: shop.id, component: 'woocommerce-events' })));
}
