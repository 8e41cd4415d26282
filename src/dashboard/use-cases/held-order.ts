/**
 * What the held-order actions and pages share: the order an action names (it must be held), the
 * neighbourhoods its address comes closest to, and its replay.
 */
import { resolveDeliveryAddress } from '../../geo/order-address.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import type { DashboardDeps } from '../ports.js';

export type HeldOrderLookup =
  | { kind: 'found'; record: OrderRecord }
  | { kind: 'not_found'; externalOrderId: string }
  | { kind: 'not_held'; record: OrderRecord };

/** The order, if the ledger has it and it is held: only a held order can be replayed. */
export async function findHeldOrder(
  ports: Pick<DashboardDeps, 'ledger'>,
  externalOrderId: string,
): Promise<HeldOrderLookup> {
  const record = await ports.ledger.get(externalOrderId);
  if (!record) return { kind: 'not_found', externalOrderId };
  if (record.state !== 'held') return { kind: 'not_held', record };
  return { kind: 'found', record };
}

/**
 * Neighbourhoods the order's address comes closest to, with every alias in force for its shop: the one it
 * resolves to, else the resolver's candidates, as suggestions for an alias. None without a shop or an address.
 */
export async function closestNeighbourhoods(
  ports: Pick<DashboardDeps, 'shops' | 'resolver' | 'aliases'>,
  record: OrderRecord,
): Promise<string[]> {
  const shop = ports.shops.get(record.meta.shopId);
  const d = record.order?.dropoff;
  if (!shop || !d) return [];
  const resolution = resolveDeliveryAddress(ports.resolver, d, {
    country: shop.country,
    aliases: await ports.aliases.forShop(shop),
  });
  return resolution.ok ? [resolution.neighbourhood.name] : resolution.candidates.map((c) => c.name);
}

/** `replayedAt`: just after the replay was queued; the order page reloads itself until the worker has taken it. */
export type ReplayOutcome =
  | { kind: 'replayed'; record: OrderRecord; replayedAt: Date }
  | { kind: 'not_replayed'; record: OrderRecord; why: string };

/** Replays the order (src/orders/intake/replay.ts: never a second shipment). */
export async function replay(
  ports: Pick<DashboardDeps, 'replay' | 'now'>,
  record: OrderRecord,
): Promise<ReplayOutcome> {
  const result = await ports.replay(record.meta.externalOrderId);
  return result.ok
    ? { kind: 'replayed', record, replayedAt: ports.now() }
    : { kind: 'not_replayed', record, why: result.why };
}
