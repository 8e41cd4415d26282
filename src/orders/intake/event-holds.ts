/**
 * The holds a shop event's job makes itself, before any dispatch attempt (src/orders/intake/shop-event.ts): an order
 * whose event cannot be acted on, and one the shop stopped in a way it can undo. The payload a replay needs is
 * stored before the hold (replay-payload.ts).
 */
import { stoppedInShopHold } from '../../domain/holds.js';
import type { HoldReason } from '../../domain/order.js';
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

/** What a hold says it did, in the shop event's outcomes. */
export type EventHoldOutcome =
  { kind: 'held'; externalOrderId: string; code: string } | { kind: 'ignored'; why: string };

/** An order whose event cannot be acted on, held with the reason, when it is still before dispatch. */
/** An order this event may hold: its ids, its state as recorded, and its payload for a replay. */
export interface HeldOrder {
  extId: string;
  orderName: string;
  state: OrderState;
  replayable: ReplayPayload;
}

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
