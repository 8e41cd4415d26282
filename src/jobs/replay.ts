/**
 * Replaying a held order after its cause is fixed (an alias added, the address corrected, the service
 * back up): the stored shop payload goes through the same path as a fresh webhook, under a new
 * generation, so the earlier attempt's job can never run again and the shipment lookup by
 * external_order_id still guarantees at most one shipment.
 */
import type { OrderLedger } from '../ledger/order-ledger.js';
import type { RelaisQueues } from './queues.js';

export type ReplayResult = { ok: true; externalOrderId: string } | { ok: false; externalOrderId: string; why: string };

export async function replayOrder(
  deps: { ledger: OrderLedger; queues: RelaisQueues; now(): Date },
  externalOrderId: string,
): Promise<ReplayResult> {
  const record = await deps.ledger.get(externalOrderId);
  if (!record) return { ok: false, externalOrderId, why: 'no such order in the ledger' };
  if (record.state !== 'held') return { ok: false, externalOrderId, why: `the order is ${record.state}, not held` };
  const payload = await deps.ledger.payload(externalOrderId);
  if (payload === undefined) {
    return { ok: false, externalOrderId, why: 'the shop payload is gone (redacted or expired); re-send the order from the shop' };
  }
  await deps.queues.shopEvents.add('relais/replay', {
    shopId: record.meta.shopId,
    platform: record.meta.platform,
    topic: 'relais/replay',
    receivedAt: deps.now().toISOString(),
    payload,
  });
  return { ok: true, externalOrderId };
}
