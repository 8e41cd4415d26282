/**
 * For an order held because the service prices none of its candidate names (`neighbourhood_not_priced`): the
 * places nearest the address that the shop's service is known to price, each offered on the held page as a
 * one-click alias from the words the customer wrote ("Mermoz" → the nearest priced place), then a replay.
 */
import type { ShopConfig } from '../../shops/shops.js';
import { resolveDeliveryAddress } from '../../geo/order-address.js';
import type { NeighbourhoodResolver } from '../../geo/resolver.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';

/** How many priced places are offered. */
const OFFERED = 3;

export interface PricedNearby {
  /** The customer's words that named the place: the alias's text. */
  text: string;
  places: { name: string; km: number }[];
}

export interface PricedNearbyDeps {
  resolver: Pick<NeighbourhoodResolver, 'resolve' | 'placeNamed' | 'nearestOf'>;
  /** The names the shop's service is known to price (its service map, recent answers only). */
  pricedNames(shop: ShopConfig): Promise<string[]>;
}

export async function pricedNearby(
  deps: PricedNearbyDeps,
  shop: ShopConfig,
  record: OrderRecord,
  aliases: Record<string, string>,
): Promise<PricedNearby | undefined> {
  const dropoff = record.order?.dropoff;
  if (record.hold?.code !== 'neighbourhood_not_priced' || !dropoff) return undefined;
  const resolution = resolveDeliveryAddress(deps.resolver, dropoff, { country: shop.country, aliases });
  if (!resolution.ok) return undefined;
  const words = resolution.evidence.find((e) => e.field !== 'coords' && e.field !== 'alias');
  const finest = resolution.level?.levels[0]?.name ?? resolution.neighbourhood.name;
  const { country } = resolution.neighbourhood;
  const point = dropoff.coords ?? deps.resolver.placeNamed(country, finest)?.place.coords;
  if (!words || !point) return undefined;
  const places = deps.resolver.nearestOf(country, point, await deps.pricedNames(shop), OFFERED);
  return places.length > 0 ? { text: words.text, places } : undefined;
}
