/**
 * The held page: every held order, newest hold first, with the neighbourhoods its address comes closest
 * to; and the shipments with no recorded markReady past the watchdog bound (held or not), which no courier
 * is offered whatever the service calls their state.
 */
import { unreadySince } from '../../domain/shipment-status.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import type { DashboardDeps } from '../ports.js';
import { closestNeighbourhoods } from './held-order.js';
import type { PricedNearby } from './priced-nearby.js';

export interface HeldOrders {
  held: { record: OrderRecord; suggestions: string[]; pricedNearby?: PricedNearby }[];
  unready: { record: OrderRecord; since: Date }[];
}

export async function heldOrders(
  ports: Pick<DashboardDeps, 'ledger' | 'shops' | 'resolver' | 'aliases' | 'now' | 'pricedNearby'>,
  limit: number,
): Promise<HeldOrders> {
  const [records, unreadyIds] = await Promise.all([
    ports.ledger.listHeld(limit),
    ports.ledger.listUnready(
      unreadySince(
        ports.now(),
        ports.shops.all().map((s) => s.policy.unreadyAlertMinutes),
      ),
      limit,
    ),
  ]);
  const held = await Promise.all(
    records.map(async (record) => ({
      record,
      suggestions: await closestNeighbourhoods(ports, record),
      ...(await offerPriced(ports, record)),
    })),
  );
  // One read for the whole list, not one per order.
  const unreadyRecords = await ports.ledger.getMany(unreadyIds.map((u) => u.externalOrderId));
  const unready = unreadyIds.flatMap(({ since }, i) => {
    const record = unreadyRecords[i];
    return record?.shipment ? [{ record, since }] : [];
  });
  return { held, unready };
}

/** The priced places offered as one-click aliases, for an order held because its names are not priced. */
async function offerPriced(
  ports: Pick<DashboardDeps, 'shops' | 'aliases' | 'pricedNearby'>,
  record: OrderRecord,
): Promise<{ pricedNearby?: PricedNearby }> {
  const shop = ports.shops.get(record.meta.shopId);
  if (!ports.pricedNearby || !shop || record.hold?.code !== 'neighbourhood_not_priced') return {};
  const offer = await ports.pricedNearby(shop, record, await ports.aliases.forShop(shop));
  return offer ? { pricedNearby: offer } : {};
}
