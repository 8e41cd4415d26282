/**
 * A history of orders written through the ledger's own methods (recordEvent, save, hold, saveShipment, setState),
 * at the times a test chooses: what the dashboard then reads is what the pipeline would have left.
 */
import type { DoorAmount } from '../../src/domain/door-amount.js';
import { xof } from '../../src/domain/money.js';
import type { Platform } from '../../src/domain/order.js';
import type { OrderLedger } from '../../src/ledger/order-ledger.js';

export type SeededEnd = 'delivered' | 'returned' | 'delivery_failed' | 'cancelled' | 'held' | 'in_delivery';

export interface SeededOrder {
  shopId: string;
  platform: Platform;
  number: number;
  firstSeenAt: Date;
  end: SeededEnd;
  /** When the order reached its end (default: a day after it was first seen). */
  endedAt?: Date;
  neighbourhood?: string;
  /** The goods' value the courier collects (francs). */
  goods: number;
  /** The quoted delivery price the customer pays at the door (francs). */
  delivery: number;
  /** Held on the way (with this reason's code) before it went on to its end; the end 'held' stays held. */
  holdCode?: string;
}

const HOUR = 3_600_000;

function doorOf(order: SeededOrder): DoorAmount {
  return {
    paidBy: 'customer',
    goods: xof(order.goods),
    delivery: xof(order.delivery),
    collectionFee: xof(0),
    atDoor: xof(order.goods + order.delivery),
    quoted: { delivery: xof(order.delivery), collectionFee: xof(0) },
  };
}

/** Writes the order and its path to its end; answers its external id. */
export async function seedOrder(ledger: OrderLedger, order: SeededOrder): Promise<string> {
  const externalOrderId = `${order.shopId}:${order.number}`;
  const at = (hours: number) => new Date(order.firstSeenAt.getTime() + hours * HOUR);
  const endedAt = order.endedAt ?? at(24);
  await ledger.recordEvent({
    meta: {
      externalOrderId,
      shopId: order.shopId,
      platform: order.platform,
      orderId: String(order.number),
      orderName: `#${order.number}`,
    },
    payload: { id: order.number },
    now: order.firstSeenAt,
  });
  if (order.neighbourhood)
    await ledger.save(externalOrderId, 'neighbourhood', { name: order.neighbourhood, confidence: 1 });
  if (order.holdCode || order.end === 'held') {
    const code = order.holdCode ?? 'no_neighbourhood';
    await ledger.hold(externalOrderId, { code, message: `held for ${code}` }, at(0.1));
  }
  if (order.end === 'held') return externalOrderId;
  // Out of a hold only the action that resolves it moves an order (a replay, the shop's cancellation).
  if (order.end === 'cancelled') {
    await ledger.setState(externalOrderId, 'cancelled', endedAt, 'resolution');
    return externalOrderId;
  }
  await ledger.setState(externalOrderId, 'dispatching', at(0.2), 'resolution');
  await ledger.save(externalOrderId, 'door', doorOf(order));
  await ledger.saveShipment(externalOrderId, {
    shipmentId: `shp_${order.shopId}_${order.number}`,
    status: 'READY',
    orderAmountXof: order.goods,
    markedReadyAt: at(0.3).toISOString(),
    createdAt: at(0.25).toISOString(),
  });
  await ledger.setState(externalOrderId, 'ready', at(0.3));
  await ledger.setState(externalOrderId, 'in_delivery', at(1));
  if (order.end !== 'in_delivery') await ledger.setState(externalOrderId, order.end, endedAt);
  return externalOrderId;
}
