/**
 * Shipment state changes and the simulated courier.
 *
 * Every change goes through transition(): it dates the stage on the emulator clock, appends it to the
 * history and sends the webhook, so the history, the tracking view and the webhooks can never disagree.
 *
 * The courier only ever sees READY shipments (spec: "no courier run starts until markReady"). From READY
 * it moves one stage per courierStepMs:
 *   READY → ASSIGNED → PICKED_UP → IN_TRANSIT → OUT_FOR_DELIVERY → DELIVERED
 *                                                                └→ DELIVERY_FAILED → RETURNED
 * Each scheduled stage checks that the shipment is still where it left it, so a cancellation between
 * two stages simply ends the run. The names here are the emulator's own (names.ts); the webhook sender
 * and the bodies translate them into the wire profile's.
 */
import { ID_PREFIX, type Logger } from '../relais.js';
import type { EmulatorClock } from './clock.js';
import { opaqueId } from './ids.js';
import type { ShipmentState } from './names.js';
import type { ShipmentRecord } from './store.js';
import type { DeliveryOutcome } from './types.js';
import type { WebhookSender } from './webhooks.js';

/** Spec: cancel only while the parcel has not been picked up. */
export const CANCELLABLE_STATES: ReadonlySet<ShipmentState> = new Set<ShipmentState>(['CREATED', 'READY', 'ASSIGNED']);
export const TERMINAL_STATES: ReadonlySet<ShipmentState> = new Set<ShipmentState>([
  'DELIVERED',
  'RETURNED',
  'CANCELLED',
]);

export type ChangeResult = 'changed' | 'unchanged' | 'refused';

export class ShipmentLifecycle {
  constructor(
    private readonly clock: EmulatorClock,
    private readonly webhooks: WebhookSender,
    private readonly courierStepMs: number,
    private readonly deliveryOutcome: (s: { externalOrderId: string; shipmentId: string }) => DeliveryOutcome,
    private readonly logger: Logger,
  ) {}

  markReady(shipment: ShipmentRecord, by: string): ChangeResult {
    if (shipment.status === 'CANCELLED') return 'refused';
    // READY or later: already in (or past) the assignment queue; repeating the call changes nothing.
    if (shipment.status !== 'CREATED') return 'unchanged';
    this.transition(shipment, 'READY', { by });
    this.scheduleNextStage(shipment);
    return 'changed';
  }

  cancel(shipment: ShipmentRecord, request: { reason: string; by: string }): ChangeResult {
    if (shipment.status === 'CANCELLED') return 'unchanged';
    if (!CANCELLABLE_STATES.has(shipment.status)) return 'refused';
    this.transition(shipment, 'CANCELLED', request);
    return 'changed';
  }

  transition(shipment: ShipmentRecord, status: ShipmentState, details: { by?: string; reason?: string } = {}): void {
    const now = this.clock.now();
    const at = new Date(now).toISOString();
    shipment.status = status;
    shipment.updatedAt = now;
    shipment.history.push({ status, at, ...details });
    this.webhooks.notifyStatusChanged(shipment.orgId, {
      shipmentId: shipment.shipment_id,
      externalOrderId: shipment.external_order_id,
      status,
      occurredAt: at,
    });
  }

  private scheduleNextStage(shipment: ShipmentRecord): void {
    const expected = shipment.status;
    this.clock.schedule(this.courierStepMs, () => {
      if (shipment.status !== expected) return; // cancelled (or otherwise moved) meanwhile: the run ends
      const next = this.nextStage(shipment);
      if (!next) return;
      if (next === 'ASSIGNED') shipment.courier_id = opaqueId(ID_PREFIX.courier);
      this.transition(shipment, next);
      if (!TERMINAL_STATES.has(next)) this.scheduleNextStage(shipment);
    });
  }

  private nextStage(shipment: ShipmentRecord): ShipmentState | undefined {
    switch (shipment.status) {
      case 'READY':
        return 'ASSIGNED';
      case 'ASSIGNED':
        return 'PICKED_UP';
      case 'PICKED_UP':
        return 'IN_TRANSIT';
      case 'IN_TRANSIT':
        return 'OUT_FOR_DELIVERY';
      case 'OUT_FOR_DELIVERY':
        return this.outcomeFor(shipment) === 'fail' ? 'DELIVERY_FAILED' : 'DELIVERED';
      case 'DELIVERY_FAILED':
        return 'RETURNED';
      default:
        return undefined;
    }
  }

  private outcomeFor(shipment: ShipmentRecord): DeliveryOutcome {
    try {
      return this.deliveryOutcome({ externalOrderId: shipment.external_order_id, shipmentId: shipment.shipment_id });
    } catch (error) {
      this.logger.warn({ err: error, shipment: shipment.shipment_id }, 'deliveryOutcome threw; delivering');
      return 'deliver';
    }
  }
}
