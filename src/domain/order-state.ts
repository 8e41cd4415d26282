/**
 * The states of an order in Relais, in one order, and the one rule for moving between them. The ledger
 * (its state-move script refuses what `canMove` refuses), the jobs and the chaos suite's history checker
 * all read them from here, so none of them can rank two states differently from the others.
 *
 *   before dispatch   received, waiting, held, dispatching: an order may go round these (held, replayed,
 *                     dispatching again) as often as it needs
 *   awaiting_ready    a shipment exists, not marked ready yet
 *   dispatched        ready → in_delivery → delivery_failed → cancel_refused → delivered | returned | cancelled,
 *                     never back before dispatch
 *   final             delivered, returned, cancelled: an order never leaves one (a late cancellation, a
 *                     refused one, a lagging webhook change nothing)
 *
 * A held order leaves `held` only by what resolves the hold, never by a poll or a repair (MoveCause).
 */
export const ORDER_STATES = [
  'received', // acknowledged, not yet evaluated
  'waiting', // not to be shipped yet (prepaid and unpaid, on-hold, ...)
  'held', // needs a person: see the record's `hold`
  'dispatching', // quote / shipment in progress
  'awaiting_ready', // shipment created; not marked ready yet
  'ready', // marked ready: a courier will be assigned
  'in_delivery',
  'delivery_failed',
  'cancel_refused', // the shop cancelled, the service refused (parcel picked up)
  'delivered', // final
  'returned', // final
  'cancelled', // final
] as const;
export type OrderState = (typeof ORDER_STATES)[number];

export const FINAL_STATES: ReadonlySet<OrderState> = new Set<OrderState>(['delivered', 'returned', 'cancelled']);

/**
 * States before dispatch: the raw payload is still kept (a replay may need it, see `jobs/replay.ts`), and an
 * order past dispatch (DISPATCHED_STATES) never moves back into one of them.
 */
export const BEFORE_DISPATCH_STATES: ReadonlySet<OrderState> = new Set<OrderState>([
  'received',
  'waiting',
  'held',
  'dispatching',
]);

/**
 * States past dispatch: the shipment is marked ready (or further), or the order ended. None of them goes
 * back before dispatch, and a dispatch job finding one has nothing to do.
 */
export const DISPATCHED_STATES: ReadonlySet<OrderState> = new Set<OrderState>([
  'ready',
  'in_delivery',
  'delivery_failed',
  'cancel_refused',
  'delivered',
  'returned',
  'cancelled',
]);

/**
 * Each state's rank: 0 for every state before the shipment is marked ready (an order may go round them), then
 * the dispatched states in the order a delivery goes through them. The final states share the top rank: none
 * of them comes after another.
 */
const RANK: Record<OrderState, number> = {
  received: 0,
  waiting: 0,
  held: 0,
  dispatching: 0,
  awaiting_ready: 0,
  ready: 1,
  in_delivery: 2,
  delivery_failed: 3,
  cancel_refused: 4,
  delivered: 5,
  returned: 5,
  cancelled: 5,
};

export function stateRank(state: OrderState): number {
  return RANK[state];
}

export function isOrderState(value: string): value is OrderState {
  return (ORDER_STATES as readonly string[]).includes(value);
}

/**
 * Who asks for a move. A hold is left only by the action that resolves it: a fresh shop event or a replay (a
 * new generation), the shop's cancellation, an operator closing the order. A delivery webhook, a poll or a
 * reconciliation repair only reports progress: it never takes an order out of `held`, whatever the service
 * says of its shipment (a held order may have one, e.g. held for a wrong cash amount), so the hold keeps its
 * reason and stays replayable.
 */
export type MoveCause = 'resolution' | 'progress';

/**
 * Whether an order in `from` (undefined: a new order) may be moved to `to`, as the ledger applies it: never
 * out of a final state (staying in it is allowed: a repeated final webhook), never out of `held` for mere
 * progress (see MoveCause), and never from a dispatched state back to one ranked before ready: neither before
 * dispatch nor awaiting_ready (a shipment marked ready never goes back to created, whatever a lagging service
 * says). Moves between dispatched states are the jobs' to order (a delivery step moves forward only:
 * domain/shipment-status.ts).
 */
export function canMove(from: OrderState | undefined, to: OrderState, cause: MoveCause = 'progress'): boolean {
  if (from === undefined || from === to) return true;
  if (FINAL_STATES.has(from)) return false;
  if (from === 'held' && cause === 'progress') return false;
  return !(DISPATCHED_STATES.has(from) && stateRank(to) === 0);
}

/** The states from which a move to `to` is refused (what the ledger's move statement is given). */
export function statesRefusingMoveTo(to: OrderState, cause: MoveCause = 'progress'): OrderState[] {
  return ORDER_STATES.filter((from) => !canMove(from, to, cause));
}
