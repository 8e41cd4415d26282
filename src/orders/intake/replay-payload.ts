/**
 * The raw shop payload a replay starts from (src/orders/intake/replay.ts). A shop event's job records the order
 * without it and keeps it in hand (BullMQ holds it with the job): an order the job ships and marks ready never
 * needs it, and its 9 kB would be written only to be dropped a moment later. It is stored once the job knows the
 * order may need a replay, and before a hold makes the order replayable: the order is held by this job, left waiting,
 * handed to the dispatch queue or to a cancel job. A crash before that leaves the job unfinished, and BullMQ runs it
 * again, payload and all.
 */
import type { OrderLedger } from '../../ledger/order-ledger.js';

export class ReplayPayload {
  #kept: Promise<unknown> | undefined;

  constructor(
    private readonly ledger: Pick<OrderLedger, 'keepPayload'>,
    private readonly externalOrderId: string,
    private readonly payload: unknown,
  ) {}

  /** Stores the payload in the ledger (once, however often asked); call before holding the order. */
  keep(): Promise<unknown> {
    return (this.#kept ??= this.ledger.keepPayload(this.externalOrderId, this.payload));
  }

  /** Stores it when the event's outcome may need a replay: anything but an order shipped here, or nothing changed. */
  async keepUnlessDone(outcome: { kind: string; dispatch?: { kind: string } }): Promise<void> {
    if (outcome.kind === 'ignored' || outcome.kind === 'ignored_older') return;
    if (outcome.kind === 'dispatched' && outcome.dispatch?.kind === 'ready') return;
    await this.keep();
  }
}
