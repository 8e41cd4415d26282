/**
 * A dispatch client, and the delivery service over it, configured from a shop's registry entry. The one place
 * the shop's API key is revealed to build a client.
 */
import { createHash } from 'node:crypto';
import type { ShopConfig } from '../../shops/shops.js';
import type { StateSighting } from '../../domain/delivery.js';
import type { Logger } from '../../log.js';
import { DispatchClient } from './client.js';
import { loadWireProfile, type WireProfile } from './profile.js';
import { DispatchDeliveryService } from './service.js';

/** The wire profile a shop's dispatch settings name (validated when the registry was loaded). */
export function wireProfileOf(shop: ShopConfig): WireProfile {
  return loadWireProfile(shop.dispatch.profile);
}

/** The shop's client; `profile`: the one in force for the shop when it is not its settings' (a stored one). */
export function dispatchClientForShop(
  shop: ShopConfig,
  logger: Logger,
  userAgent?: string,
  profile: WireProfile = wireProfileOf(shop),
): DispatchClient {
  return new DispatchClient({
    baseUrl: shop.dispatch.baseUrl,
    trackingUrl: shop.dispatch.trackingUrl,
    apiKey: shop.dispatch.apiKey.reveal(),
    timeoutMs: shop.dispatch.timeoutMs,
    profile,
    logger,
    ...(userAgent ? { userAgent } : {}),
  });
}

/** The shop's delivery service over `client` (one of the shop's, from dispatchClientForShop). */
export function deliveryServiceOver(
  client: DispatchClient,
  shop: ShopConfig,
  onStates?: (sightings: StateSighting[]) => void,
): DispatchDeliveryService {
  // The key itself never leaves this function: only a digest names the organisation.
  const organisation = `${client.baseUrl}|${createHash('sha256').update(shop.dispatch.apiKey.reveal()).digest('hex')}`;
  return new DispatchDeliveryService(client, {
    organisation,
    carrierName: shop.dispatch.carrierName,
    ...(shop.dispatch.webhookSigningSecret ? { webhookSigningSecret: shop.dispatch.webhookSigningSecret } : {}),
    ...(onStates ? { onStates } : {}),
  });
}

/** The shop's delivery service, with a client of its own (closed by the service's close()). */
export function deliveryServiceForShop(shop: ShopConfig, logger: Logger, userAgent?: string): DispatchDeliveryService {
  return deliveryServiceOver(dispatchClientForShop(shop, logger, userAgent), shop);
}
