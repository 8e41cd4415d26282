/**
 * Opening a dispute (a claim) on an order's shipment from its page. Checked before the delivery service is
 * asked: the order has a shipment (the page offered no form otherwise), the form is complete (src/orders/disputes'
 * own schema), and the same claim is not already open. That last check catches the same form sent twice (a
 * double click, the back button and send again); two sent at the same moment are kept apart by src/orders/disputes
 * (one opening per order at a time).
 */
import { openDisputeInputSchema, sameOpenClaim, type DisputeView } from '../../orders/disputes/disputes.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import type { DashboardDeps } from '../ports.js';

/** The form as sent; an emptied claimant type means the default (seller). */
export interface DisputeInput {
  reason: unknown;
  description: unknown;
  claimantId: unknown;
  claimantType: unknown;
}

export type OpenDisputeOutcome =
  | { kind: 'not_found'; externalOrderId: string }
  | { kind: 'no_shipment'; record: OrderRecord }
  /** `field`: the form field each problem is about (undefined for the form as a whole). */
  | { kind: 'invalid'; record: OrderRecord; problems: { field: string | undefined; message: string }[] }
  | { kind: 'duplicate'; record: OrderRecord; claim: DisputeView }
  | { kind: 'opened'; record: OrderRecord; claimId?: string; shipmentId: string }
  /** The service refused, or could not be reached (`retryable`: it may have received the claim without answering). */
  | { kind: 'refused'; record: OrderRecord; why: string; retryable: boolean }
  /** Relais itself failed while opening it, perhaps after the claim was opened. */
  | { kind: 'unconfirmed'; record: OrderRecord; error: string };

export async function openDispute(
  ports: Pick<DashboardDeps, 'ledger' | 'disputes'>,
  externalOrderId: string,
  form: DisputeInput,
): Promise<OpenDisputeOutcome> {
  const record = await ports.ledger.get(externalOrderId);
  if (!record) return { kind: 'not_found', externalOrderId };
  if (!record.shipment) return { kind: 'no_shipment', record };
  const claimantType =
    typeof form.claimantType === 'string' && form.claimantType.trim() === '' ? undefined : form.claimantType;
  const parsed = openDisputeInputSchema.safeParse({
    reason: form.reason,
    description: form.description,
    claimantId: form.claimantId,
    claimantType,
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => ({
      field: i.path.length > 0 ? String(i.path[0]) : undefined,
      message: i.message,
    }));
    return { kind: 'invalid', record, problems };
  }
  const input = parsed.data;
  const same = sameOpenClaim(await ports.disputes.lastSeen(externalOrderId), input);
  if (same) return { kind: 'duplicate', record, claim: same };
  try {
    const result = await ports.disputes.open(externalOrderId, input);
    // Open at the service already though Relais had not seen it (an earlier answer was lost).
    if (!result.ok && result.alreadyOpen) return { kind: 'duplicate', record, claim: result.alreadyOpen };
    return result.ok
      ? {
          kind: 'opened',
          record,
          shipmentId: result.shipmentId,
          ...(result.claim.claimId === undefined ? {} : { claimId: result.claim.claimId }),
        }
      : { kind: 'refused', record, why: result.why, retryable: result.retryable };
  } catch (error) {
    // Not the service's answer (src/orders/disputes turns those into results): Relais itself failed.
    return { kind: 'unconfirmed', record, error: error instanceof Error ? error.message : String(error) };
  }
}
