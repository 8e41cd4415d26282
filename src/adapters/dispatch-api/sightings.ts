/**
 * The state names the service's answers carry, as sightings (src/domain/delivery.ts StateSighting): each state
 * of the shipment's history with the one before it, then its current state. Kept by the runtime so a shop's
 * profile can be learned from the order in which the names appeared (issue 28).
 */
import type { Shipment, ShipmentEvent, SightingSource, StateSighting } from '../../domain/delivery.js';
import type { DeliveryStep } from '../../domain/shipment-status.js';

/** Every state `events` then `current` show, each with the state before it. */
export function sightingsOf(
  events: readonly ShipmentEvent[],
  current: { status: string; step?: DeliveryStep },
  source: SightingSource,
): StateSighting[] {
  // The history as the service gave it, oldest first (a stable sort keeps equal times in the given order).
  const history = [...events].sort((a, b) => a.at.localeCompare(b.at));
  const sightings: StateSighting[] = [];
  let before: { status: string; step?: DeliveryStep } | undefined;
  for (const entry of [...history, current]) {
    if (before?.status === entry.status) continue;
    sightings.push({
      state: entry.status,
      source,
      ...(entry.step === undefined ? {} : { step: entry.step }),
      ...(before === undefined ? {} : { after: before.status }),
      ...(before?.step === undefined ? {} : { afterStep: before.step }),
    });
    before = entry;
  }
  return sightings;
}

/** The sightings of one shipment answer. */
export function shipmentSightings(shipment: Shipment, source: SightingSource): StateSighting[] {
  return sightingsOf(shipment.statusHistory ?? [], shipment, source);
}

/**
 * Remembers the names already passed on, so a busy shop's every answer does not become a write: a name is passed
 * on the first time this process sees it, and once more the first time it is seen with the state before it (a
 * webhook names a state alone; the store keeps the first sighting, completed with what came before it).
 */
export class SightingFilter {
  /** Each name passed on: true once it was passed on with the state before it. */
  readonly #passed = new Map<string, boolean>();

  constructor(private readonly onStates: (sightings: StateSighting[]) => void) {}

  note(sightings: StateSighting[]): void {
    const fresh = sightings.filter((s) => {
      const passed = this.#passed.get(s.state);
      return passed === undefined || (!passed && s.after !== undefined);
    });
    if (fresh.length === 0) return;
    for (const s of fresh) this.#passed.set(s.state, s.after !== undefined);
    this.onStates(fresh);
  }
}
