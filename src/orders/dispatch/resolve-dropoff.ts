/**
 * The resolve-drop-off step: the order's address as the candidate names of its place, most precise first, or why
 * it names no place (src/orders/dispatch/priced-dropoff.ts resolveDropoff).
 */
import type { ShopConfig } from '../../shops/shops.js';
import type { HoldReason, StoreOrder } from '../../domain/order.js';
import type { NeighbourhoodResolver } from '../../geo/resolver.js';
import { resolveDropoff, type Dropoff } from './priced-dropoff.js';

export interface ResolveDropoffInput {
  shop: ShopConfig;
  order: StoreOrder;
  /** The shop's aliases added at run time, merged over the registry's. */
  aliases: Record<string, string>;
}

export type ResolvedDropoff = { kind: 'resolved'; dropoff: Dropoff } | { kind: 'unresolved'; reason: HoldReason };

export function resolveDropoffStep(resolver: NeighbourhoodResolver, input: ResolveDropoffInput): ResolvedDropoff {
  const dropoff = resolveDropoff(resolver, input.shop, input.order, input.aliases);
  return 'code' in dropoff ? { kind: 'unresolved', reason: dropoff } : { kind: 'resolved', dropoff };
}
