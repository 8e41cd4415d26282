/**
 * Replaying a held order after its cause is fixed (an alias added, the address corrected, the service
 * back up): the stored shop payload goes through the same path as a fresh webhook, under a new
 * generation, so the earlier attempt's job can never run again and the shipment lookup by
 * external_order_id still guarantees at most one shipment.
 */
import type { OrderLedger, OrderState } from '../../ledger/order-ledger.js';
import { REPLAY_TOPIC, type RelaisQueues } from '../queues.js';

/** `heldAt`: when the hold being replayed was recorded, so a new hold can be told from the old one. */
export type ReplayResult =
  { ok: true; externalOrderId: string; heldAt?: string } | { ok: false; externalOrderId: string; why: string };

export async function replayOrder(
  deps: { ledger: OrderLedger; queues: RelaisQueues; now(): Date },
  externalOrderId: string,
): Promise<ReplayResult> {
  const record = await deps.ledger.get(externalOrderId);
  if (!record) return { ok: false, externalOrderId, why: 'no such order in the ledger' };
  if (record.state !== 'held') return { ok: false, externalOrderId, why: `the order is ${record.state}, not held` };
  const payload = await deps.ledger.payload(externalOrderId);
  if (payload === undefined) {
    return {
      ok: false,
      externalOrderId,
      why: 'the shop payload is gone (redacted or expired); re-send the order from the shop',
    };
  }
  await deps.queues.shopEvents.add(REPLAY_TOPIC, {
    shopId: record.meta.shopId,
    platform: record.meta.platform,
    topic: REPLAY_TOPIC,
    receivedAt: deps.now().toISOString(),
    payload,
  });
  return { ok: true, externalOrderId, ...(record.hold ? { heldAt: record.hold.at } : {}) };
}

/** What became of a replayed order: past the hold, held again (a new hold), or not yet decided when the wait ended. */
export type ReplayOutcome =
  | { kind: 'moved_on'; state: OrderState }
  | { kind: 'held_again'; code: string; message: string }
  | { kind: 'undecided'; state: OrderState | 'missing' };

/** States an order passes through on its way out of a replay; anything else is where the replay led. */
const UNDECIDED: ReadonlySet<OrderState> = new Set(['received', 'dispatching']);

/** Polls the ledger until the replayed order leaves its old hold (or is held anew), for at most `timeoutMs`. */
export async function replayOutcome(
  deps: { ledger: Pick<OrderLedger, 'get'> },
  replayed: { externalOrderId: string; heldAt?: string },
  options: { timeoutMs: number; pollMs?: number },
): Promise<ReplayOutcome> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const record = await deps.ledger.get(replayed.externalOrderId);
    if (record?.state === 'held' && record.hold && record.hold.at !== replayed.heldAt) {
      return { kind: 'held_again', code: record.hold.code, message: record.hold.message };
    }
    if (record && record.state !== 'held' && !UNDECIDED.has(record.state))
      return { kind: 'moved_on', state: record.state };
    if (Date.now() >= deadline) return { kind: 'undecided', state: record?.state ?? 'missing' };
    await new Promise((r) => setTimeout(r, options.pollMs ?? 200));
  }
}
