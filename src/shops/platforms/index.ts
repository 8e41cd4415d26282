/**
 * The one door into the stores: the registry of shop platforms, and the functions the rest of Relais calls
 * with a shop, which find the shop's platform here. Nothing outside src/shops/platforms/ imports a platform module
 * directly, or branches on a platform's name (eslint.config.js enforces the first).
 *
 * A new platform is a folder (src/shops/platforms/<name>/ exporting its StorePlatform, src/shops/platforms/platform.ts) plus its
 * settings schema in src/shops/platforms/settings.ts and one line in STORE_PLATFORMS below; the compiler asks for the
 * line once the settings are there, and for every member of StorePlatform the folder leaves out.
 */
import type { ShopConfig } from '../shops.js';
import { shopifyPlatform } from '../../adapters/shopify/index.js';
import { wooPlatform } from '../../adapters/woocommerce/index.js';
import { isPlatformName, type PlatformName } from './settings.js';
import type { NormaliseContext, NormaliseResult } from './common.js';
import type {
  OrderEventCompleter,
  OwnershipCheck,
  ShopOrderLister,
  StorePlatform,
  WeightFiller,
  StoreDeps,
} from './platform.js';
import type { ShopWriter } from './writer.js';

export type { NormaliseResult };
export type {
  CheckoutRatesEndpoint,
  DoctorContext,
  OrderWindow,
  OwnershipCheck,
  ShopOrderLister,
  ShopOrderPage,
  StorePlatform,
  VerificationFailure,
  WebhookReceipt,
  WeightFiller,
  StoreDeps,
  CompletedOrderEvent,
  OrderEventCompleter,
} from './platform.js';
export { PLATFORM_NAMES, type PlatformName } from './settings.js';
/** Shops whose platform credentials Relais keeps sealed in the database (Shopify OAuth tokens), and their set-up. */
export {
  configureShopifyAccessTokens as configureStoredCredentials,
  ensureShopifyAccessTokens as ensureStoredCredentials,
  forgetShopifyAccessTokens as forgetStoredCredentials,
  shopifyOAuthShops as shopsWithStoredCredentials,
} from '../../adapters/shopify/token-sources.js';

/** Connecting a shop through Relais's Shopify app (the install routes, the Connect page's Shopify way in). */
export {
  createShopifyConnect,
  SHOPIFY_CALLBACK_PATH,
  SHOPIFY_INSTALL_PATH,
  type ShopifyAppSettings,
  type ShopifyConnect,
} from '../../adapters/shopify/connect.js';
export { ShopifyInstallError, type InstallRefusal } from '../../adapters/shopify/oauth.js';
/** Connecting a WooCommerce store through its app authorisation (issue 17): the flow, and its Redis records. */
export {
  WOO_CONNECT_CALLBACK_PATH,
  WOO_CONNECT_RETURN_PATH,
  WooConnect,
  WooConnectError,
  type WooConnectOptions,
  type WooReturn,
} from '../../adapters/woocommerce/connect.js';
export { RedisConnectStates as RedisWooConnectStates } from '../../adapters/woocommerce/connect-states.js';

export const STORE_PLATFORMS: { readonly [P in PlatformName]: StorePlatform<P> } = {
  shopify: shopifyPlatform,
  woocommerce: wooPlatform,
};

/** Every platform, in the registry's order (routes are mounted for each). */
export function storePlatforms(): StorePlatform[] {
  return Object.values(STORE_PLATFORMS) as StorePlatform[];
}

/**
 * The shop's platform. Its members take any shop: the one given is of this platform, since it was looked up by
 * the shop's own `platform` (the one cast that lets a union of shops meet the union of platforms).
 */
export function platformOf(shop: ShopConfig): StorePlatform {
  return STORE_PLATFORMS[shop.platform] as unknown as StorePlatform;
}

export function normaliseContext(shop: ShopConfig): NormaliseContext {
  return {
    shopId: shop.id,
    codGateways: shop.policy.codGateways,
    depositGateways: shop.policy.depositGateways,
    businessAccountGateways: shop.policy.businessAccountGateways,
  };
}

export function normaliseOrder(shop: ShopConfig, payload: unknown): NormaliseResult {
  return platformOf(shop).normalise(payload, normaliseContext(shop));
}

/** The platform's order id in a payload, even one too broken to normalise (for holding it visibly). */
export function orderIdOf(payload: unknown): string | undefined {
  if (!payload || typeof payload !== 'object') return undefined;
  const id = (payload as { id?: unknown }).id;
  if (typeof id === 'number' && Number.isSafeInteger(id)) return String(id);
  if (typeof id === 'string' && /^\d+$/.test(id)) return id;
  const gid = (payload as { admin_graphql_api_id?: unknown }).admin_graphql_api_id;
  if (typeof gid === 'string') return /\/(\d+)$/.exec(gid)?.[1];
  return undefined;
}

/**
 * The order's own last-modified time in a payload (Shopify updated_at, WooCommerce date_modified_gmt, else
 * date_modified), even one too broken to normalise; undefined when it carries none. Normalised orders carry
 * the same value as `updatedAt`.
 */
export function orderVersionOf(shop: ShopConfig, payload: unknown): string | undefined {
  return platformOf(shop).orderVersionOf(payload);
}

/** Whether a shop event's topic is one of its platform's order topics (the web process counts received orders). */
export function isOrderTopic(platform: string, topic: string): boolean {
  return isPlatformName(platform) && STORE_PLATFORMS[platform].webhooks.orderTopics.has(topic);
}

/** Whether a shop event's topic says the merchant removed the app from the shop (Shopify's app/uninstalled). */
export function isUninstallTopic(platform: string, topic: string): boolean {
  return isPlatformName(platform) && STORE_PLATFORMS[platform].webhooks.uninstallTopic === topic;
}

/** The data-protection topics of every platform (src/orders/intake/compliance.ts acts on them). */
export function complianceTopics(): ReadonlySet<string> {
  return new Set(storePlatforms().flatMap((platform) => [...platform.webhooks.complianceTopics]));
}

/** Whether a verified order event is the shop's, for every platform; each platform's check is built on first use. */
export function createOwnershipCheck(deps: StoreDeps): OwnershipCheck {
  const checks = new Map<PlatformName, OwnershipCheck>();
  return (shop, event, orderId) => {
    let check = checks.get(shop.platform);
    if (!check) {
      check = platformOf(shop).ownershipCheck(deps);
      checks.set(shop.platform, check);
    }
    return check(shop, event, orderId);
  };
}

/** The write-back client for a shop; undefined for a platform whose writer has not landed (nothing is written back). */
export function createShopWriter(shop: ShopConfig, deps: StoreDeps): ShopWriter | undefined {
  return platformOf(shop).createWriter(shop, deps);
}

/** Completes the shop's order events where its platform's webhooks leave parts out; undefined when they carry all. */
export function createEventCompleter(shop: ShopConfig, deps: StoreDeps): OrderEventCompleter | undefined {
  return platformOf(shop).createEventCompleter(shop, deps);
}

/** Fills in the weights the shop's platform leaves off its orders; undefined when its orders carry them. */
export function createWeightFiller(shop: ShopConfig, deps: StoreDeps): WeightFiller | undefined {
  return platformOf(shop).createWeightFiller(shop, deps);
}

export function createOrderLister(shop: ShopConfig, deps: StoreDeps): ShopOrderLister {
  return platformOf(shop).createOrderLister(shop, deps);
}
