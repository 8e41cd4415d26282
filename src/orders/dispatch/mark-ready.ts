/**
 * The mark-ready step, and the markReady invariant (spec: a shipment never declared ready waits forever, and
 * nothing signals it). Relais calls markReady on every shipment it created or adopted, unless the service has
 * positively shown the shipment is past ready: a state the shop's wire profile maps to a step after `created`. An
 * unknown state name proves nothing, so the call is made. "Marked ready" is recorded only from a 2xx answer, from
 * such a mapped state, or from a refusal the profile reads as "already ready"; any other refusal holds the order
 * with the shipment's id, and a replay tries markReady again (the shipment is never re-created).
 */
import { DeliveryError, type Shipment } from '../../domain/delivery.js';
import { holdFor } from '../../domain/holds.js';
import { showsMarkedReady } from '../../domain/shipment-status.js';
import type { ShipmentProgress } from '../../ledger/order-ledger.js';
import { saveShipment } from './create-or-adopt.js';
import type { Attempt, DispatchOutcome } from './deps.js';
import { holdAfterWrites, holdUnready } from './hold.js';
import { wrongAmount } from './read-back.js';

/** The order's shipment, created or adopted by this attempt or saved by an earlier one. */
export interface MarkReadyInput {
  shipment: ShipmentProgress;
  /** Found at the service rather than created by this attempt. */
  adopted: boolean;
}

export async function markReady(attempt: Attempt, { shipment, adopted }: MarkReadyInput): Promise<DispatchOutcome> {
  const { deps, shop, calls, writes } = attempt;
  if (shipment.markedReadyAt !== undefined || showsMarkedReady(shipment.step)) {
    return alreadyPastReady(attempt, { shipment, adopted });
  }
  const amountProblem = wrongAmount({ goods: attempt.goods, paymentFamily: attempt.order.paymentFamily, shipment });
  if (amountProblem) return holdUnready(attempt, shipment, amountProblem, 'cod_amount_mismatch');
  let ready: Shipment | ShipmentProgress;
  try {
    ready = await calls.markReady(shipment.shipmentId, `Relais (automatic) for ${shop.name}`);
  } catch (error) {
    if (!(error instanceof DeliveryError) || error.retryable) throw error;
    if (error.reason !== 'already_ready') {
      return holdUnready(attempt, shipment, `the delivery service refused to mark it ready: ${error.message}`);
    }
    attempt.log.info({ shipment: shipment.shipmentId }, 'markReady answered "already ready"');
    ready = shipment;
  }
  saveShipment(attempt, ready, shipment, deps.now().toISOString());
  writes.state('ready');
  return { kind: 'ready', shipmentId: shipment.shipmentId, adopted };
}

/** A shipment recorded as marked ready, or shown by the service past ready: nothing to call. */
async function alreadyPastReady(attempt: Attempt, { shipment, adopted }: MarkReadyInput): Promise<DispatchOutcome> {
  // The service shows the order's shipment as cancelled: never marked ready, never silently re-created.
  if (shipment.step === 'cancelled') {
    return holdAfterWrites(
      attempt,
      holdFor('shipment_cancelled', { shipmentId: shipment.shipmentId, status: shipment.status }),
    );
  }
  if (shipment.markedReadyAt === undefined)
    saveShipment(attempt, { ...shipment, status: shipment.status }, shipment, attempt.deps.now().toISOString());
  attempt.writes.state('ready');
  return { kind: 'ready', shipmentId: shipment.shipmentId, adopted };
}
