/**
 * A Shopify shop's own settings in the shop registry (`"platform": "shopify", "shopify": { ... }`), validated
 * with zod when the registry is loaded (src/shops/shops.ts reads this schema through src/shops/platforms/settings.ts; the shop typed with it is in
 * ./settings.ts, apart, so the registry and this schema do not import each other).
 */
import { z } from 'zod';
import { secretRef } from '../../shops/secret.js';

export const shopifySettingsSchema = z
  .object({
    domain: z.string().regex(/^[a-z0-9][a-z0-9-]*\.myshopify\.com$/, 'a *.myshopify.com domain'),
    /** A legacy custom app's static Admin API token; not used (and not needed) with `oauth`. */
    accessToken: secretRef.optional(),
    /**
     * How Relais gets its Admin API token from an app made in the Dev Dashboard (src/adapters/shopify/access-token.ts):
     * `client_credentials` for an app of the merchant's own organisation (24-hour tokens Relais renews),
     * `authorization_code` for an app installed through Relais's install link (1-hour tokens and a rotating
     * refresh token from the install). The client secret is `webhookSecret`; the tokens are kept sealed in the
     * database (RELAIS_SECRET_KEYS).
     */
    oauth: z
      .object({ grant: z.enum(['client_credentials', 'authorization_code']), clientId: z.string().min(1) })
      .strict()
      .optional(),
    /** The app's client secret: Shopify signs webhooks (and carrier-service calls) with it. */
    webhookSecret: secretRef,
    apiVersion: z
      .string()
      .regex(/^\d{4}-\d{2}$/)
      .default('2026-10'),
    /** Local emulator only: send Admin API calls here instead of https://<domain>. */
    adminUrl: z.string().url().optional(),
  })
  .strict()
  .refine((shopify) => shopify.accessToken !== undefined || shopify.oauth !== undefined, {
    message: 'set accessToken (a legacy custom app) or oauth (an app made in the Dev Dashboard)',
    path: ['accessToken'],
  });
