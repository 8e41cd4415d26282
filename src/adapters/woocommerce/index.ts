/**
 * WooCommerce as a StorePlatform (src/shops/platforms/platform.ts): every piece Relais needs from a WooCommerce shop, from
 * the modules of this folder. Named once in the registry, src/shops/platforms/index.ts.
 */
import { textField } from '../../shops/platforms/common.js';
import type { StorePlatform } from '../../shops/platforms/platform.js';
import { wooCheckoutRates } from './checkout-rates.js';
import { wooDoctor } from './doctor.js';
import { createWooEventCompleter } from './events.js';
import { normaliseWooOrder, utcIso } from './normalise.js';
import { createWooOrderLister } from './orders.js';
import { describeWooStatus, wooEligibility } from './policy.js';
import { fillWooWeights } from './weights.js';
import { wooWebhooks } from './webhooks.js';
import { createWooWriter, wooRestFor } from './writer.js';

export const wooPlatform: StorePlatform<'woocommerce'> = {
  name: 'woocommerce',
  label: 'WooCommerce',
  whereIs: (shop) => shop.woocommerce.url,
  webhooks: wooWebhooks,
  normalise: normaliseWooOrder,
  orderVersionOf: (payload) => utcIso(textField(payload, 'date_modified_gmt')) ?? textField(payload, 'date_modified'),
  // Each shop signs with its own secret and has its own URL: a verified delivery is the shop's.
  ownershipCheck: () => async () => undefined,
  eligibility: wooEligibility,
  describeStatus: describeWooStatus,
  createWriter: (shop, deps) => createWooWriter(shop, deps),
  // Order bodies list refunds by total only: what each gave back of the shipping is read from the shop.
  createEventCompleter: createWooEventCompleter,
  // WooCommerce line items carry no weight: it is read from the shop's products (cached in Redis).
  createWeightFiller(shop, deps) {
    const rest = wooRestFor(shop, deps.logger.child({ shop: shop.id }));
    // fillWooWeights binds the order's shop itself: given the parent logger, or the line would say "shop" twice.
    return (order) => fillWooWeights(order, { rest, redis: deps.redis, prefix: deps.prefix, logger: deps.logger });
  },
  createOrderLister: createWooOrderLister,
  checkoutRates: wooCheckoutRates,
  doctor: wooDoctor,
};
