/**
 * "Add alias and replay": teaches Relais the merchant's word for a neighbourhood (for every worker at once,
 * like `relais alias add`), then replays the held order, unless its address still does not resolve with the
 * new alias: a replay would only hold it again.
 *
 * The target must be a neighbourhood of the shop's own country; the alias is stored as the gazetteer spells it.
 */
import { z } from 'zod';
import { resolveDeliveryAddress } from '../../geo/order-address.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import type { DashboardDeps } from '../ports.js';
import {
  closestNeighbourhoods,
  findHeldOrder,
  replay,
  type HeldOrderLookup,
  type ReplayOutcome,
} from './held-order.js';

/** The form as sent; checked here. */
export interface AliasInput {
  text: unknown;
  neighbourhood: unknown;
}

const aliasInput = z.object({
  text: z.string().trim().min(1, 'say what customers write').max(120),
  neighbourhood: z.string().trim().min(1, 'name the neighbourhood').max(120),
});

/** The alias as stored: `neighbourhood` spelled as the gazetteer spells it. */
export interface AddedAlias {
  shopName: string;
  text: string;
  neighbourhood: string;
}

export type AddAliasResult =
  | Exclude<HeldOrderLookup, { kind: 'found' }>
  | { kind: 'shop_missing'; record: OrderRecord }
  | { kind: 'invalid'; record: OrderRecord; problems: string[] }
  | { kind: 'unknown_neighbourhood'; record: OrderRecord; neighbourhood: string; country: string; reason?: string }
  /** The alias was added, but the order's address still does not resolve: not replayed. */
  | { kind: 'still_unresolved'; record: OrderRecord; alias: AddedAlias; reason: string; suggestions: string[] }
  | (ReplayOutcome & { alias: AddedAlias });

export async function addAliasAndReplay(
  ports: Pick<DashboardDeps, 'ledger' | 'aliases' | 'shops' | 'resolver' | 'replay' | 'now'>,
  externalOrderId: string,
  input: AliasInput,
): Promise<AddAliasResult> {
  const found = await findHeldOrder(ports, externalOrderId);
  if (found.kind !== 'found') return found;
  const { record } = found;
  const shop = ports.shops.get(record.meta.shopId);
  if (!shop) return { kind: 'shop_missing', record };
  const parsed = aliasInput.safeParse(input);
  if (!parsed.success) return { kind: 'invalid', record, problems: parsed.error.issues.map((i) => i.message) };
  const { text, neighbourhood } = parsed.data;
  const target = ports.resolver.resolve({ country: shop.country, fields: { city: neighbourhood } });
  if (!target.ok || target.neighbourhood.country !== shop.country) {
    return {
      kind: 'unknown_neighbourhood',
      record,
      neighbourhood,
      country: shop.country,
      ...(target.ok ? {} : { reason: target.reason }),
    };
  }
  await ports.aliases.add(shop.id, text, target.neighbourhood.name);
  const alias = { shopName: shop.name, text, neighbourhood: target.neighbourhood.name };
  const d = record.order?.dropoff;
  if (d) {
    const check = resolveDeliveryAddress(ports.resolver, d, {
      country: shop.country,
      aliases: await ports.aliases.forShop(shop),
    });
    if (!check.ok)
      return {
        kind: 'still_unresolved',
        record,
        alias,
        reason: check.reason,
        suggestions: await closestNeighbourhoods(ports, record),
      };
  }
  return { ...(await replay(ports, record)), alias };
}
