/**
 * The delivery state machine never moves an order backwards. Delivery webhooks arrive duplicated, late
 * and out of order, and carry states Relais may not know; the sync job applies a service state only when
 * `movesForward` says so (src/orders/delivery/sync-delivery.ts). Over any sequence of such states:
 *   - the step reached never goes back in the order of DELIVERY_STEPS;
 *   - once a final step (delivered, returned, cancelled) is reached, nothing changes it;
 *   - the step reached is the first final step seen, or else the furthest step seen: the order in which
 *     the webhooks arrived changes nothing else.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultWireProfile } from '../../src/adapters/dispatch-api/profile.js';
import { DELIVERY_STEPS, FINAL_STEPS, movesForward, type DeliveryStep } from '../../src/domain/shipment-status.js';

const profile = defaultWireProfile();
const stepOfServiceState = (state: string): DeliveryStep | undefined => profile.stepOf(state);

/** The oracle's own order: the position in DELIVERY_STEPS, with every final step after every other. */
function position(step: DeliveryStep): number {
  return FINAL_STEPS.has(step) ? DELIVERY_STEPS.length : DELIVERY_STEPS.indexOf(step);
}

const knownState = fc.constantFrom(...profile.knownStates().map((k) => k.state));
/** States as they may come over the wire: known ones in any case and padding, unknown ones, junk. */
const wireState = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(knownState, fc.constantFrom('', ' ', '\n'), fc.boolean())
      .map(([s, pad, lower]) => `${pad}${lower ? s.toLowerCase() : s}${pad}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('ON_HOLD', 'AT_DEPOT', 'LOST', 'RESCHEDULED', '', 'DELIVERED_PARTIALLY') },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

/** What the sync job does with each state, in arrival order. */
function apply(states: string[]): { path: DeliveryStep[]; final: DeliveryStep | undefined } {
  let current: DeliveryStep | undefined;
  const path: DeliveryStep[] = [];
  for (const state of states) {
    const step = stepOfServiceState(state);
    if (step === undefined) continue; // recorded and reported by the job; the order does not move
    if (movesForward(current, step)) current = step;
    if (current !== undefined) path.push(current);
  }
  return { path, final: current };
}

describe('the delivery state machine', () => {
  it('never moves an order backwards, whatever the order, duplicates or unknown states of the webhooks', () => {
    fc.assert(
      fc.property(fc.array(wireState, { maxLength: 40 }), (states) => {
        const { path } = apply(states);
        for (let i = 1; i < path.length; i++) {
          expect(position(path[i]!)).toBeGreaterThanOrEqual(position(path[i - 1]!));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('never changes a final step once reached', () => {
    fc.assert(
      fc.property(fc.array(wireState, { maxLength: 40 }), (states) => {
        const { path } = apply(states);
        const firstFinal = path.findIndex((step) => FINAL_STEPS.has(step));
        if (firstFinal === -1) return;
        for (const later of path.slice(firstFinal)) expect(later).toBe(path[firstFinal]);
      }),
      { numRuns: 1000 },
    );
  });

  it('ends on the first final step received, or else on the furthest step received', () => {
    fc.assert(
      fc.property(fc.array(wireState, { maxLength: 40 }), (states) => {
        const steps = states.map(stepOfServiceState).filter((s): s is DeliveryStep => s !== undefined);
        const firstFinal = steps.find((s) => FINAL_STEPS.has(s));
        const furthest = steps.reduce<DeliveryStep | undefined>(
          (best, s) => (best === undefined || position(s) > position(best) ? s : best),
          undefined,
        );
        expect(apply(states).final).toBe(firstFinal ?? furthest);
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with the step order for every pair of steps: forward only, and never out of a final step', () => {
    fc.assert(
      fc.property(fc.constantFrom(...DELIVERY_STEPS), fc.constantFrom(...DELIVERY_STEPS), (from, to) => {
        const forward = movesForward(from, to);
        if (FINAL_STEPS.has(from)) expect(forward).toBe(false);
        else expect(forward).toBe(position(to) > position(from));
      }),
      { numRuns: 300 },
    );
  });
});
