/**
 * The delivery steps Relais follows and writes into the shop, in the service's order.
 *
 * The service's own names for them are in the shop's wire profile (src/adapters/dispatch-api/profile.ts): the spec
 * names only DELIVERED. A name the profile does not know maps to no step: the caller records it, counts
 * it and reports it, and the order does not move (an unknown name is never progress).
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
  created: 0,
  ready: 1,
  assigned: 2,
  picked_up: 3,
  in_transit: 4,
  out_for_delivery: 5,
  delivery_failed: 6,
  delivered: 7,
  returned: 7,
  cancelled: 7,
};

export const FINAL_STEPS: ReadonlySet<DeliveryStep> = new Set(['delivered', 'returned', 'cancelled']);

/** True when moving from `current` to `next` goes forward. A final step never changes. */
export function movesForward(current: DeliveryStep | undefined, next: DeliveryStep): boolean {
  if (current === undefined) return true;
  if (FINAL_STEPS.has(current)) return false;
  return RANK[next] > RANK[current];
}

/**
 * The steps a shipment's history shows it went through before `current`, oldest first, each once: what a shop
 * missed while the service's names for them were unknown (the history read again with a profile that maps them).
 */
export function stepsPassedBefore(
  history: ReadonlyArray<{ step?: DeliveryStep; at: string }>,
  current: DeliveryStep,
): DeliveryStep[] {
  const passed: DeliveryStep[] = [];
  for (const entry of [...history].sort((a, b) => a.at.localeCompare(b.at))) {
    const { step } = entry;
    if (step === undefined || passed.includes(step) || FINAL_STEPS.has(step)) continue;
    if (step !== current && movesForward(step, current)) passed.push(step);
  }
  return passed;
}

/**
 * True when the service has positively shown that the shipment was marked ready: a state the profile maps
 * to a step past `created`. An unknown state (undefined) never counts: the shipment may still be unready.
 */
export function showsMarkedReady(step: DeliveryStep | undefined): boolean {
  return step !== undefined && step !== 'created';
}

/**
 * The watchdog's bound: a shipment with no recorded markReady this long after it was saved is reported
 * (relais_shipments_unready, the dashboard's held page), whatever its state is called. A shop's own
 * `policy.unreadyAlertMinutes` (reconciliation) may be shorter.
 */
export const UNREADY_WATCHDOG_MINUTES = 5;

/** Since when a shipment without a recorded markReady counts as unready: the watchdog's bound, or a shop's tighter one. */
export function unreadySince(now: Date, shopBoundsMinutes: readonly number[]): Date {
  return new Date(now.getTime() - Math.min(UNREADY_WATCHDOG_MINUTES, ...shopBoundsMinutes) * 60_000);
}
