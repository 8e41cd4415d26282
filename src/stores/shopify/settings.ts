/**
 * A Shopify shop's own settings in the shop registry (`"platform": "shopify", "shopify": { ... }`), validated
 * with zod when the registry is loaded (src/config/shops.ts reads this schema through src/stores/settings.ts).
 */
import { z } from 'zod';
import type { ShopOf } from '../../config/shops.js';
import { secretRef } from '../../config/secret.js';

export const shopifySettingsSchema = z
  .object({
    domain: z.string().regex(/^[a-z0-9][a-z0-9-]*\.myshopify\.com$/, 'a *.myshopify.com domain'),
    accessToken: secretRef,
    /** The app's client secret: Shopify signs webhooks (and carrier-service calls) with it. */
    webhookSecret: secretRef,
    apiVersion: z.string().regex(/^\d{4}-\d{2}$/).default('2026-10'),
    /** Local emulator only: send Admin API calls here instead of https://<domain>. */
    adminUrl: z.string().url().optional(),
  })
  .strict();

export type ShopifyShopConfig = ShopOf<'shopify'>;
