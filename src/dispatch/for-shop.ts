/**
 * A dispatch client configured from a shop's registry entry. The one place the shop's API key is
 * revealed to build a client.
 */
import type { ShopConfig } from '../config/shops.js';
import type { Logger } from '../log.js';
import { DispatchClient } from './client.js';
import { loadWireProfile, type WireProfile } from './profile.js';

/** The wire profile a shop's dispatch settings name (validated when the registry was loaded). */
export function wireProfileOf(shop: ShopConfig): WireProfile {
  return loadWireProfile(shop.dispatch.profile);
}

export function dispatchClientForShop(shop: ShopConfig, logger: Logger, userAgent?: string): DispatchClient {
  return new DispatchClient({
    baseUrl: shop.dispatch.baseUrl,
    trackingUrl: shop.dispatch.trackingUrl,
    apiKey: shop.dispatch.apiKey.reveal(),
    timeoutMs: shop.dispatch.timeoutMs,
    profile: wireProfileOf(shop),
    logger,
    ...(userAgent ? { userAgent } : {}),
  });
}
