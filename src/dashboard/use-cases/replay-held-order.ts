/** "Replay as it is": for a held order whose cause was fixed elsewhere (the address corrected in the shop, the service back). */
import type { DashboardDeps } from '../ports.js';
import { findHeldOrder, replay, type HeldOrderLookup, type ReplayOutcome } from './held-order.js';

export type ReplayHeldOrderResult = Exclude<HeldOrderLookup, { kind: 'found' }> | ReplayOutcome;

export async function replayHeldOrder(
  ports: Pick<DashboardDeps, 'ledger' | 'replay' | 'now'>,
  externalOrderId: string,
): Promise<ReplayHeldOrderResult> {
  const found = await findHeldOrder(ports, externalOrderId);
  if (found.kind !== 'found') return found;
  return replay(ports, found.record);
}
