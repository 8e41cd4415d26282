/**
 * Resolving a shop order's delivery address: the one way the pipeline, the dashboard and the
 * operator's tools ask "which neighbourhood is this?", so they can never disagree.
 */
import type { StoreAddress } from '../domain/order.js';
import type { NeighbourhoodResolver, PricedNames, Resolution } from './resolver.js';

/**
 * `context.pricing`, when the fallback-tariff guard knows which names the service prices, picks which of
 * two nested names is sent (issue 18); without it the area is sent and the sub-area stays in address1.
 */
export function resolveDeliveryAddress(
  resolver: Pick<NeighbourhoodResolver, 'resolve'>,
  address: StoreAddress,
  context: { country: string; aliases: Record<string, string>; pricing?: PricedNames },
): Resolution {
  return resolver.resolve({
    // The address's own country wins: a shop may deliver beyond its home country.
    country: address.countryCode ?? context.country,
    fields: {
      address1: address.address1,
      address2: address.address2,
      city: address.city,
      province: address.province,
      zip: address.zip,
      company: address.company,
    },
    coords: address.coords,
    aliases: context.aliases,
    ...(context.pricing ? { pricing: context.pricing } : {}),
  });
}
