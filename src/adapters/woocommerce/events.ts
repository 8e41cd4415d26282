/**
 * A WooCommerce order event made whole before the job acts on it (StorePlatform.createEventCompleter):
 *  - order.deleted (the merchant moved the order to the trash) carries only `{"id": N}` (WC_Webhook::build_payload):
 *    the order is read from the shop, where a trashed order still answers, with status `trash` (normalise.ts holds
 *    it as stopped in the shop, and its shipment is cancelled as for a cancellation). An order deleted for good
 *    answers 404: it is gone, over in the shop.
 *  - The order body lists its refunds by total only, so what they gave back of the shipping is read from the shop
 *    (refunds.ts), and only for an order that has refunds.
 */
import type { OrderEventCompleter, StoreDeps } from '../../shops/platforms/platform.js';
import { wooOrderId } from './normalise.js';
import { withRefundedShipping } from './refunds.js';
import type { WooRest } from './rest-types.js';
import type { WooShopConfig } from './settings.js';
import { wooRestFor } from './writer.js';

/** The topic whose body names the order by id only. */
export const WOO_TRASHED_TOPIC = 'order.deleted';

export function wooEventCompleter(rest: Pick<WooRest, 'getOrder' | 'listOrderRefunds'>): OrderEventCompleter {
  return async ({ topic, orderId, payload }) => {
    // An id WooCommerce cannot have (signed nonsense): nothing to read; normalise holds the body as malformed.
    if (wooOrderId({ id: orderId }) === undefined) return { kind: 'order', payload };
    let body = payload;
    if (topic === WOO_TRASHED_TOPIC) {
      try {
        body = await rest.getOrder(orderId);
      } catch (error) {
        if ((error as { notFound?: unknown }).notFound === true) return { kind: 'gone' };
        throw error;
      }
    }
    return { kind: 'order', payload: await withRefundedShipping(rest, orderId, body) };
  };
}

export function createWooEventCompleter(shop: WooShopConfig, deps: StoreDeps): OrderEventCompleter {
  return wooEventCompleter(wooRestFor(shop, deps.logger.child({ shop: shop.id, component: 'woocommerce-events' })));
}
