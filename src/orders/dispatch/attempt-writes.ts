import type {
  OrderChange,
  OrderLedger,
  SavedField,
  ShipmentProgress,
  TimelineEntry,
} from '../../ledger/order-ledger.js';
import type { OrderState } from '../../domain/order-state.js';

/**
 * The ledger writes of one attempt, gathered step by step and sent as one write per step (OrderLedger.apply):
 * what the lookup and the quote answered, sent before createShipment when the ledger does not show yet that one may
 * have been sent; what createShipment and markReady answered, when the attempt ends. On the happy path that is one
 * statement: the shop event's own write noted the request (recordEvent `shipmentMayFollow`). A step is sent without
 * waiting for its answer (the ledger applies one order's writes in the order they were made:
 * PostgresOrderLedger.inOrder), and the attempt waits for all of them before it ends: a failed write fails the
 * attempt, and BullMQ retries it.
 * Recording progress is an optimisation of the retry, with one exception that prevents a duplicate: before a
 * createShipment leaves, the ledger shows `shipmentRequestedAt` (noted by the shop event, or by the step before the
 * call, which carries `shipmentRequested` and is applied first), so a retry that finds no saved shipment knows to
 * look the shipment up by external id before creating one.
 */
export class AttemptWrites {
  #step: Omit<OrderChange, 'now'> = {};
  readonly #sent: Promise<unknown>[] = [];

  constructor(
    private readonly ledger: Pick<OrderLedger, 'apply'>,
    private readonly externalOrderId: string,
    private readonly now: () => Date,
  ) {}

  save(field: SavedField, value: unknown): void {
    (this.#step.saved ??= {})[field] = value;
  }

  state(state: OrderState): void {
    this.#step.state = state;
  }

  shipment(progress: ShipmentProgress): void {
    this.#step.shipment = progress;
  }

  /** A createShipment is about to be sent: the step carrying this must be applied before it is (`sendNow`). */
  shipmentRequested(): void {
    this.#step.shipmentRequested = true;
  }

  note(entry: TimelineEntry): void {
    (this.#step.timeline ??= []).push(entry);
  }

  /** A write to another store that the attempt waits for with its own (the fallback-tariff memory, the write-back job). */
  add(write: Promise<unknown>): void {
    write.catch(() => undefined); // awaited in settle(); this only keeps Node from calling it unhandled meanwhile
    this.#sent.push(write);
  }

  /** Sends the step gathered so far as one write, without waiting for it. */
  send(): void {
    this.sendNow().catch(() => undefined); // a failed write fails the attempt in settle()
  }

  /**
   * Sends the step gathered so far as one write; resolves once it is applied (the attempt's earlier writes of
   * this order are applied before it: PostgresOrderLedger.inOrder).
   */
  async sendNow(): Promise<void> {
    const step = this.#step;
    this.#step = {};
    if (Object.keys(step).length === 0) return;
    const write = this.ledger.apply(this.externalOrderId, { ...step, now: this.now() });
    this.add(write);
    await write;
  }

  async settle(): Promise<void> {
    this.send();
    const failed = (await Promise.allSettled(this.#sent)).find(
      (r): r is PromiseRejectedResult => r.status === 'rejected',
    );
    if (failed) throw failed.reason;
  }
}
