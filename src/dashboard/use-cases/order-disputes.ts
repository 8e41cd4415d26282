/**
 * The claims on an order's shipment, for its page. The delivery service is asked only when there is news
 * to expect (a claim still open) or the operator asks: each call goes on the order's timeline, which keeps
 * the last 200 entries, so page views must not push the order's history out. Never while the page reloads
 * itself; otherwise the page offers to ask.
 */
import type { DisputeView } from '../../orders/disputes/disputes.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import type { DashboardDeps } from '../ports.js';

export interface OrderDisputes {
  claims: DisputeView[];
  /**
   * Where the claims come from: the service's list of now; what Relais recorded, without a call (and whether
   * the page may offer to ask); or what Relais recorded because the service could not be asked (`why`) or
   * Relais failed while asking (`error`, for the log).
   */
  source:
    | { kind: 'service' }
    | { kind: 'recorded'; canAsk: boolean }
    | { kind: 'unavailable'; why: string }
    | { kind: 'failed'; error: string };
}

export async function orderDisputes(
  ports: Pick<DashboardDeps, 'disputes'>,
  record: OrderRecord,
  options: { reloading: boolean; ask: boolean },
): Promise<OrderDisputes> {
  const id = record.meta.externalOrderId;
  const recorded = await ports.disputes.lastSeen(id);
  const waiting = recorded.some((c) => c.status.toUpperCase() === 'OPEN');
  if (options.reloading || !(waiting || options.ask))
    return { claims: recorded, source: { kind: 'recorded', canAsk: !options.reloading } };
  try {
    const listed = await ports.disputes.list(id);
    if (listed.ok) return { claims: listed.claims, source: { kind: 'service' } };
    return { claims: recorded, source: { kind: 'unavailable', why: listed.why } };
  } catch (error) {
    return {
      claims: recorded,
      source: { kind: 'failed', error: error instanceof Error ? error.message : String(error) },
    };
  }
}
