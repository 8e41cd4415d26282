/**
 * Shopify as a StorePlatform (src/shops/platforms/platform.ts): every piece Relais needs from a Shopify shop, from the
 * modules of this folder. Named once in the registry, src/shops/platforms/index.ts.
 */
import { textField } from '../../shops/platforms/common.js';
import type { StorePlatform } from '../../shops/platforms/platform.js';
import { shopifyCheckoutRates } from './checkout-rates.js';
import { shopifyDoctor } from './doctor.js';
import { normaliseShopifyOrder } from './normalise.js';
import { createShopifyOrderLister } from './orders.js';
import { shopifyOwnershipCheck } from './owner.js';
import { describeShopifyStatus, shopifyEligibility } from './policy.js';
import { shopifyWebhooks } from './webhooks.js';
import { createShopifyWriter } from './writer.js';

export const shopifyPlatform: StorePlatform<'shopify'> = {
  name: 'shopify',
  label: 'Shopify',
  whereIs: (shop) => shop.shopify.domain,
  webhooks: shopifyWebhooks,
  normalise: normaliseShopifyOrder,
  orderVersionOf: (payload) => textField(payload, 'updated_at'),
  ownershipCheck: shopifyOwnershipCheck,
  eligibility: shopifyEligibility,
  describeStatus: describeShopifyStatus,
  createWriter: (shop, deps) => createShopifyWriter(shop, deps),
  // Shopify orders carry each line's grams already.
  // Shopify's order webhooks carry the whole order, refunds and their shipping lines included.
  createEventCompleter: () => undefined,
  createWeightFiller: () => undefined,
  createOrderLister: createShopifyOrderLister,
  checkoutRates: shopifyCheckoutRates,
  doctor: shopifyDoctor,
};
