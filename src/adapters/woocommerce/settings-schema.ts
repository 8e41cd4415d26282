/**
 * A WooCommerce shop's own settings in the shop registry (`"platform": "woocommerce", "woocommerce": { ... }`),
 * validated with zod when the registry is loaded (src/shops/shops.ts reads this schema through src/shops/platforms/settings.ts; the shop typed with it is in
 * ./settings.ts, apart, so the registry and this schema do not import each other).
 */
import { z } from 'zod';
import { secretRef } from '../../shops/secret.js';

export const wooSettingsSchema = z
  .object({
    url: z.string().url(),
    consumerKey: secretRef,
    consumerSecret: secretRef,
    webhookSecret: secretRef,
    /**
     * The checkout plugin's own secret (its "Secret" field): rate requests are signed with it, and then only
     * with it. Unset, the webhook secret signs them too, as before (relais doctor says to set one).
     */
    checkoutSecret: secretRef.optional(),
  })
  .strict();
