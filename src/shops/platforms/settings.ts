/**
 * The platforms' settings, one zod schema per platform, under the platform's name. The shop registry
 * (src/shops/shops.ts) validates each shop's `<platform>` block with its schema, and `platform` must be one
 * of these names. Kept apart from the platforms themselves (src/shops/platforms/index.ts) so that reading the
 * configuration loads no platform client.
 *
 * A new platform adds its schema here (one line); the compiler then asks for its StorePlatform in
 * src/shops/platforms/index.ts.
 */
import { shopifySettingsSchema } from '../../adapters/shopify/settings-schema.js';
import { wooSettingsSchema } from '../../adapters/woocommerce/settings-schema.js';

export const PLATFORM_SETTINGS = {
  shopify: shopifySettingsSchema,
  woocommerce: wooSettingsSchema,
} as const;

/** The name of a platform Relais serves: a key of the registry (`shop.platform`). */
export type PlatformName = keyof typeof PLATFORM_SETTINGS;

export const PLATFORM_NAMES = Object.keys(PLATFORM_SETTINGS) as PlatformName[];

export function isPlatformName(name: string): name is PlatformName {
  return Object.hasOwn(PLATFORM_SETTINGS, name);
}
