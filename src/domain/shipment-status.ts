/**
 * Shipment states of the dispatch service, mapped to the delivery steps Relais writes into the shop.
 *
 * The spec names only DELIVERED; the other names are what the emulator uses and our best reading of
 * the service. The table is the one place to extend when the service shows a new state. An unknown
 * state maps to `undefined`: the caller records it and reports it, and the order does not move.
 *
 * Steps are ordered: a duplicate or out-of-order webhook can never move an order backwards, because
 * only a step of higher rank than the current one is applied.
 */
export const DELIVERY_STEPS = [
  'created', // shipment exists, not ready
  'ready', // in the assignment queue
  'assigned', // a courier took the run
  'picked_up',
  'in_transit',
  'out_for_delivery',
  'delivery_failed', // an attempt failed; the parcel may still be delivered later, or returned
  'delivered', // final: cash collected for COD
  'returned', // final: back to the merchant
  'cancelled', // final
] as const;
export type DeliveryStep = (typeof DELIVERY_STEPS)[number];

const RANK: Record<DeliveryStep, number> = {
  created: 0, ready: 1, assigned: 2, picked_up: 3, in_transit: 4, out_for_delivery: 5,
  delivery_failed: 6, delivered: 7, returned: 7, cancelled: 7,
};

export const FINAL_STEPS: ReadonlySet<DeliveryStep> = new Set(['delivered', 'returned', 'cancelled']);

/** Service state → step. Extend here when the service shows new states. */
export const SERVICE_STATE_TO_STEP: Readonly<Record<string, DeliveryStep>> = {
  CREATED: 'created',
  READY: 'ready',
  READY_FOR_PICKUP: 'ready',
  PENDING_ASSIGNMENT: 'ready',
  ASSIGNED: 'assigned',
  COURIER_ASSIGNED: 'assigned',
  PICKED_UP: 'picked_up',
  IN_TRANSIT: 'in_transit',
  OUT_FOR_DELIVERY: 'out_for_delivery',
  DELIVERY_FAILED: 'delivery_failed',
  FAILED: 'delivery_failed',
  ATTEMPTED: 'delivery_failed',
  DELIVERED: 'delivered',
  RETURNED: 'returned',
  RETURNED_TO_SENDER: 'returned',
  CANCELLED: 'cancelled',
  CANCELED: 'cancelled',
};

export function stepOfServiceState(state: string): DeliveryStep | undefined {
  return SERVICE_STATE_TO_STEP[state.trim().toUpperCase()];
}

/** True when moving from `current` to `next` goes forward. A final step never changes. */
export function movesForward(current: DeliveryStep | undefined, next: DeliveryStep): boolean {
  if (current === undefined) return true;
  if (FINAL_STEPS.has(current)) return false;
  return RANK[next] > RANK[current];
}
