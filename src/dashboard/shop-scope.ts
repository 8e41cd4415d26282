/**
 * Which shops a page shows: the one chosen (`?shop=`), or every shop Relais serves. Read from the live registry on
 * every request, so a shop connected, switched on or off while Relais runs is listed at once (issue 25).
 */
import { shopTimeZone } from '../shops/time-zones.js';
import type { ShopConfig, ShopRegistry } from '../shops/shops.js';
import type { ShopZone } from '../ledger/order-insights.js';
import type { ShopChoice } from './pages.js';

export interface ShopScope {
  /** Every shop served, for the selectors. */
  choices(): ShopChoice[];
  /** The shop a query parameter names, or '' (every shop) when it names none served. */
  param(value: unknown): string;
  /** The shops of a choice ('' = all), each with its time zone. */
  zonesOf(shopId: string): ShopZone[];
  /** The countries of a choice's shops. */
  countriesOf(shopId: string): string[];
  name(shopId: string): string;
}

export function shopScope(shops: ShopRegistry): ShopScope {
  const chosen = (shopId: string): ShopConfig[] => {
    const shop = shopId ? shops.get(shopId) : undefined;
    return shop ? [shop] : shops.all();
  };
  return {
    choices: () => shops.all().map((s) => ({ id: s.id, name: s.name, platform: s.platform })),
    param: (value) => (typeof value === 'string' && shops.get(value) !== undefined ? value : ''),
    zonesOf: (shopId) => chosen(shopId).map((shop) => ({ shopId: shop.id, timeZone: shopTimeZone(shop) })),
    countriesOf: (shopId) => [...new Set(chosen(shopId).map((shop) => shop.country))],
    name: (shopId) => shops.get(shopId)?.name ?? shopId,
  };
}
