/**
 * How a shop event's job ends an order itself, before any dispatch attempt (src/orders/intake/shop-event.ts): a hold
 * for an order whose event cannot be acted on, or one the shop stopped in a way it can undo (the payload a replay
 * needs is stored before: replay-payload.ts); the end of an order the shop deleted for good.
 */
import { stoppedInShopHold } from '../../domain/holds.js';
import type { HoldReason } from '../../domain/order.js';
import { FINAL_STATES } from '../../domain/order-state.js';
import type { ShopConfig } from '../../shops/shops.js';
import { platformOf } from '../../shops/platforms/index.js';
import type { OrderLedger, OrderState } from '../../ledger/order-ledger.js';
import type { Logger } from '../../log.js';
import type { ReplayPayload } from './replay-payload.js';

/** States in which a new shop event may (re)start dispatch. */
export const MAY_START_DISPATCH: ReadonlySet<OrderState> = new Set(['received', 'waiting', 'held']);

/** What the holds need. */
export interface EventHoldPorts {
  ledger: Pick<OrderLedger, 'hold' | 'appendTimeline'>;
  now(): Date;
  logger: Logger;
}

/** What ending an order gone from the shop needs: the cancel job for a live shipment (`onCancelled`). */
export interface GoneOrderPorts extends Omit<EventHoldPorts, 'ledger'> {
  ledger: Pick<OrderLedger, 'get' | 'appendTimeline' | 'setState'>;
  onCancelled?(shop: ShopConfig, externalOrderId: string): Promise<void>;
}

/** What a hold says it did, in the shop event's outcomes. */
export type EventHoldOutcome =
  { kind: 'held'; externalOrderId: string; code: string } | { kind: 'ignored'; why: string };

/** An order this event may hold: its ids, its state as recorded, and its payload for a replay. */
export interface HeldOrder {
  extId: string;
  orderName: string;
  state: OrderState;
  replayable: ReplayPayload;
}

/** An order whose event cannot be acted on, held with the reason, when it is still before dispatch. */
export async function holdAsRecorded(
  { extId, orderName, state, replayable }: HeldOrder,
  hold: HoldReason,
  deps: EventHoldPorts,
): Promise<EventHoldOutcome> {
  if (!MAY_START_DISPATCH.has(state)) {
    deps.logger.warn({ order: orderName, code: hold.code }, `order not held, already ${state}: ${hold.message}`);
    return { kind: 'ignored', why: `already ${state}` };
  }
  await replayable.keep();
  await deps.ledger.hold(extId, hold, deps.now());
  deps.logger.warn({ order: orderName, code: hold.code }, `order held: ${hold.message}`);
  return { kind: 'held', externalOrderId: extId, code: hold.code };
}

/**
 * The shop stopped the order in a way it can undo (a failed payment, a cancellation the merchant may restore):
 * not over, so held with the shop's reason rather than cancelled. The next shop event that says ship it moves it
 * on (MAY_START_DISPATCH), a replay is accepted, and reconciliation reports it until then.
 */
export async function holdStoppedInShop(
  { extId, orderName, state, replayable }: HeldOrder,
  stopped: HoldReason,
  deps: EventHoldPorts,
): Promise<EventHoldOutcome> {
  const now = deps.now();
  const reason = stoppedInShopHold(stopped);
  await replayable.keep();
  if (!(await deps.ledger.hold(extId, reason, now))) return { kind: 'ignored', why: `already ${state}` };
  await deps.ledger.appendTimeline(extId, {
    at: now.toISOString(),
    system: 'relais',
    operation: 'hold',
    outcome: reason.code,
    detail: reason.message,
  });
  deps.logger.info({ order: orderName, code: stopped.code }, 'order stopped in the shop; held until the shop ships it');
  return { kind: 'held', externalOrderId: extId, code: stopped.code };
}

/**
 * The shop no longer has the order (deleted for good): over in the shop, so stopped as a cancellation is. A live
 * shipment is cancelled first by the cancel job, which then ends the order; without one, an order not yet shipped
 * ends cancelled. An order already past dispatch without a shipment, or already final, is left as it is.
 */
export async function endOrderGoneFromShop(
  event: { topic: string },
  shop: ShopConfig,
  extId: string,
  deps: GoneOrderPorts,
): Promise<EventHoldOutcome | { kind: 'cancelled'; externalOrderId: string }> {
  const record = await deps.ledger.get(extId);
  if (!record) return { kind: 'ignored', why: 'deleted in the shop before Relais recorded it' };
  if (FINAL_STATES.has(record.state)) return { kind: 'ignored', why: `already ${record.state}` };
  const now = deps.now();
  await deps.ledger.appendTimeline(extId, {
    at: now.toISOString(),
    system: 'shop',
    operation: `webhook ${event.topic}`,
    outcome: 'deleted',
    detail: `${platformOf(shop).label} no longer has the order: it was deleted for good in the shop.`,
  });
  deps.logger.info({ order: record.meta.orderName, topic: event.topic }, 'order deleted for good in the shop');
  if (record.shipment) {
    await deps.onCancelled?.(shop, extId);
    return { kind: 'cancelled', externalOrderId: extId };
  }
  if (!MAY_START_DISPATCH.has(record.state)) return { kind: 'ignored', why: `already ${record.state}` };
  await deps.ledger.setState(extId, 'cancelled', now, 'resolution');
  return { kind: 'cancelled', externalOrderId: extId };
}
