/**
 * The last step of an attempt that cannot ship the order: it is held with a reason from the holds catalogue
 * (src/domain/holds.ts), noted on its timeline, and the worker's log says a hold happened (never its message,
 * which may quote the customer's address).
 */
import { holdFor } from '../../domain/holds.js';
import type { HoldReason } from '../../domain/order.js';
import type { OrderLedger, OrderRecord, ShipmentProgress } from '../../ledger/order-ledger.js';
import type { Logger } from '../../log.js';
import type { Attempt, DispatchOutcome } from './deps.js';

/** What holding an order needs. */
export interface HoldPorts {
  ledger: Pick<OrderLedger, 'hold' | 'appendTimeline'>;
  now(): Date;
  logger: Logger;
  /** Called before the order is held: a shop event's job stores the payload a replay needs (replay-payload.ts). */
  beforeHold?(): Promise<unknown>;
}

export async function hold(ports: HoldPorts, record: OrderRecord, reason: HoldReason): Promise<DispatchOutcome> {
  await ports.beforeHold?.();
  // Refused when another attempt dispatched the order meanwhile (this one lost its lease while frozen).
  if (!(await ports.ledger.hold(record.meta.externalOrderId, reason, ports.now()))) {
    ports.logger.warn(
      { order: record.meta.orderName, code: reason.code },
      'not held: the order was dispatched by another attempt meanwhile',
    );
    return { kind: 'skipped', why: `already dispatched; not held for ${reason.code}` };
  }
  await ports.ledger.appendTimeline(record.meta.externalOrderId, {
    at: ports.now().toISOString(),
    system: 'relais',
    operation: 'hold',
    outcome: reason.code,
    detail: reason.message,
  });
  // The reason may quote the customer's address: it is on the order's timeline (relais held, the dashboard), not in the log.
  ports.logger.warn(
    { order: record.meta.orderName, code: reason.code },
    `order held (${reason.code}): see relais held`,
  );
  return { kind: 'held', reason };
}

/** Holds the order once this attempt's ledger writes are applied (a failed write fails the job, not the hold). */
export async function holdAfterWrites(attempt: Attempt, reason: HoldReason): Promise<DispatchOutcome> {
  await attempt.writes.settle();
  return hold(attempt.deps, attempt.record, reason);
}

/** A shipment created but not marked ready: held with its id, so the merchant knows no courier is coming. */
export function holdUnready(
  attempt: Attempt,
  shipment: ShipmentProgress,
  why: string,
  code: 'shipment_not_ready' | 'cod_amount_mismatch' = 'shipment_not_ready',
): Promise<DispatchOutcome> {
  return holdAfterWrites(attempt, holdFor(code, { shipmentId: shipment.shipmentId, why }));
}
