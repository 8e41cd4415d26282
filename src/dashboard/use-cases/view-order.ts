/**
 * An order's page: the record, whether the page should reload itself, the claims on its shipment, its
 * timeline, and for a held order the neighbourhoods its address comes closest to.
 */
import type { OrderRecord, OrderState, TimelineEntry } from '../../ledger/order-ledger.js';
import type { DashboardDeps } from '../ports.js';
import { closestNeighbourhoods } from './held-order.js';
import { orderDisputes, type OrderDisputes } from './order-disputes.js';

/** States an order passes through between two steps of the pipeline. */
const TRANSIENT_STATES: ReadonlySet<OrderState> = new Set(['received', 'dispatching']);

/** How long after a replay a still-held order's page keeps reloading, waiting for the worker. */
const AFTER_REPLAY_MS = 60_000;

/**
 * Whether the order page should reload itself: the order is between two steps of the pipeline, or a replay
 * was just queued and the worker has not taken it yet (still held, by the hold from before the replay).
 * `replayedAt` (the replay's time, from the redirect) only ever makes the page reload, for a minute at most.
 */
export function stillMoving(record: OrderRecord, replayedAt: number | undefined, now: Date): boolean {
  if (TRANSIENT_STATES.has(record.state)) return true;
  if (
    record.state !== 'held' ||
    replayedAt === undefined ||
    !record.hold ||
    now.getTime() - replayedAt > AFTER_REPLAY_MS
  )
    return false;
  return Date.parse(record.hold.at) < replayedAt;
}

export type ViewOrderResult =
  | { kind: 'not_found'; externalOrderId: string }
  | {
      kind: 'found';
      record: OrderRecord;
      reloading: boolean;
      /** Only for an order with a shipment: disputes are opened on a shipment. */
      disputes?: OrderDisputes;
      timeline: TimelineEntry[];
      /** For a held order: suggestions for an alias. */
      suggestions: string[];
    };

export async function viewOrder(
  ports: Pick<DashboardDeps, 'ledger' | 'disputes' | 'shops' | 'resolver' | 'aliases' | 'now'>,
  externalOrderId: string,
  options: { replayedAt?: number; askForClaims: boolean },
): Promise<ViewOrderResult> {
  const record = await ports.ledger.get(externalOrderId);
  if (!record) return { kind: 'not_found', externalOrderId };
  const reloading = stillMoving(record, options.replayedAt, ports.now());
  // Before the timeline is read: listing the claims writes its call (and any newly decided claim) there.
  const disputes = record.shipment
    ? await orderDisputes(ports, record, { reloading, ask: options.askForClaims })
    : undefined;
  const [timeline, suggestions] = await Promise.all([
    ports.ledger.timeline(record.meta.externalOrderId),
    record.state === 'held' ? closestNeighbourhoods(ports, record) : Promise.resolve([]),
  ]);
  return { kind: 'found', record, reloading, ...(disputes ? { disputes } : {}), timeline, suggestions };
}
