/**
 * The one way a use case calls the shop's delivery service (the port, src/domain/delivery.ts). Every call is
 *
 *   paced       it waits its turn in the shop's pacing window (policy.dispatchCallsPerSecond), when a rate
 *               limiter is given; calls already taken from the window (`prepay`) do not wait again;
 *   guarded     a call that changes something at the service (createShipment, markReady, cancelShipment,
 *               openDispute) is made only after the order's lock (or the use case's own lease) is confirmed
 *               still held: one that was lost stops there, noted on the order's timeline as `lock_lost`;
 *   timed       from just before the port is called to its answer (waiting for the pacing window is not latency);
 *   noted       one line on the order's timeline: what, when, how long, how it ended (the service's label for a
 *               refusal), for calls about one order;
 *   counted     reported to `onCall` (metrics: latency and errors by operation).
 *
 * Which calls change something is decided by the method, not by a list of names: only the calls made under a
 * lock (`underLock`) offer them. The organisation the shop's account belongs to comes from the port (a stable,
 * non-secret name), so no use case compares keys.
 */
import type { ShopConfig } from '../shops/shops.js';
import {
  DeliveryError,
  type Claim,
  type ClaimRequest,
  type DeliveryService,
  type Quote,
  type QuoteRequest,
  type Shipment,
  type ShipmentPage,
  type ShipmentQuery,
  type ShipmentRequest,
} from '../domain/delivery.js';
import type { OrderLedger, TimelineEntry } from '../ledger/order-ledger.js';
import type { Logger } from '../log.js';
import { OrderLockLostError, type TakenTurns } from './order-lock.js';
import type { ShopRateLimiter } from './rate-limit.js';

/** One call as timed, for metrics (the dispatch pipeline's `onDispatchCall` has this shape). */
export interface DeliveryCallReport {
  operation: string;
  ms: number;
  error?: unknown;
}

export interface DeliveryGatewayDeps {
  deliveryFor(shop: ShopConfig): DeliveryService;
  /** Where an order's calls are noted when the use case gives no timeline of its own. */
  ledger: Pick<OrderLedger, 'appendTimeline'>;
  now(): Date;
  logger: Logger;
  /** Paces the shop's calls across every worker; absent: unpaced. */
  rateLimiter?: ShopRateLimiter;
  /** Told of every call, as timed (metrics). */
  onCall?(call: DeliveryCallReport): void;
  /**
   * How one call is tried, inside its timing (reconciliation waits out retryable errors as the service asks:
   * src/orders/reconcile/pacing.ts); absent: once.
   */
  attempt?<T>(operation: string, call: () => Promise<T>): Promise<T>;
}

/**
 * What must still hold before a call that changes something: the order lock (OrderLock is one), or a use case's
 * own lease. `confirm` resolves while it holds, and throws (OrderLockLostError) once it does not.
 */
export interface ChangeGuard {
  /** `repeatable`: the side effect may be repeated harmlessly by another holder (markReady); the guard may then skip a round trip. */
  confirm(before: string, options?: { repeatable?: boolean }): Promise<void>;
}

/** Where an order's calls are noted. */
export interface OrderTimeline {
  note(entry: TimelineEntry): void | Promise<unknown>;
  /**
   * Called before a call that changes something, ahead of its pacing wait; what it returns is waited for beside the
   * guard's confirmation, before the call leaves. The dispatch job sends what it learnt so far as one ledger step
   * there (a crash after the call never loses what came before it), and before a createShipment waits for that
   * step: it tells a later attempt that a shipment may exist.
   */
  beforeChange?(operation: string): void | Promise<void>;
}

export interface OrderCallOptions {
  /** Default: each line appended to the order's timeline in the ledger, waited for. */
  timeline?: OrderTimeline;
  /** Calls already taken from the shop's pacing window (ShopDelivery.prepay): that many calls do not wait again. */
  prepaid?: number;
}

/** Per call: the timeline line's detail for a call that succeeded. */
export interface CallNote<T> {
  detail?: (result: T) => string;
}

export class DeliveryGateway {
  constructor(private readonly deps: DeliveryGatewayDeps) {}

  forShop(shop: ShopConfig): ShopDelivery {
    return new ShopDelivery(this.deps, shop, this.deps.deliveryFor(shop));
  }
}

/** The shop's delivery service through the gateway: calls about no one order, and the order sessions. */
export class ShopDelivery {
  /** The organisation the shop's account belongs to (shipments, tariffs and claims are its): never a secret. */
  readonly organisation: string;
  /** The carrier name the shop shows with the tracking link. */
  readonly carrierName: string;
  private readonly calls: CallRunner;

  constructor(
    private readonly deps: DeliveryGatewayDeps,
    readonly shop: ShopConfig,
    private readonly port: DeliveryService,
  ) {
    this.organisation = port.organisation;
    this.carrierName = port.carrierName;
    this.calls = new CallRunner(deps, shop, { prepaid: 0 });
  }

  /** Whether both shops' accounts belong to the same organisation (one webhook URL, one shipment listing). */
  sameOrganisation(other: ShopDelivery): boolean {
    return other.organisation === this.organisation;
  }

  /**
   * Takes `calls` turns from the shop's pacing window at once (one round trip instead of one per call) and
   * answers how many were taken: pass it as `prepaid` to the order's session. 0 when calls are not paced. Turns
   * the order lock took with itself (`taken`) are spent instead, while still in the current window.
   */
  async prepay(calls: number, taken?: TakenTurns): Promise<number> {
    const limiter = this.deps.rateLimiter;
    if (!limiter || calls <= 0) return 0;
    const perSecond = this.shop.policy.dispatchCallsPerSecond;
    // Taken with the order lock (one command for both), in this second's window and within it: nothing to send.
    if (taken?.calls === calls && limiter.mayUse(this.shop.id, perSecond, taken)) return calls;
    await limiter.acquire(this.shop.id, perSecond, calls);
    return calls;
  }

  /** One page of the organisation's shipments (on no order's timeline). */
  shipments(query: ShipmentQuery): Promise<ShipmentPage> {
    return this.calls.run('listShipments', () => this.port.shipments(query));
  }

  /** A shipment read before its order is known (on no order's timeline). */
  shipment(shipmentId: string): Promise<Shipment> {
    return this.calls.run('getShipment', () => this.port.shipment(shipmentId));
  }

  /** The order's shipment looked up without noting it on the order's timeline (a listing's gap, a webhook). */
  shipmentForOrder(externalOrderId: string): Promise<Shipment | undefined> {
    return this.calls.run('getShipmentByExternalOrder', () => this.port.shipmentForOrder(externalOrderId));
  }

  /** A shipment's claims, on no order's timeline (a reconciliation run reads many). */
  claims(shipmentId: string): Promise<Claim[]> {
    return this.calls.run('listShipmentDisputes', () => this.port.claims(shipmentId));
  }

  /** Calls about one order that change nothing, each noted on its timeline. */
  forOrder(externalOrderId: string, options: OrderCallOptions = {}): OrderReads {
    return new OrderReads(this.port, this.orderRunner(externalOrderId, options), externalOrderId);
  }

  /** Calls about one order, those that change something included, each made only while `guard` still holds. */
  underLock(externalOrderId: string, guard: ChangeGuard, options: OrderCallOptions = {}): OrderCalls {
    return new OrderCalls(this.port, this.orderRunner(externalOrderId, options), externalOrderId, guard);
  }

  private orderRunner(externalOrderId: string, options: OrderCallOptions): CallRunner {
    const timeline = options.timeline ?? {
      note: (entry: TimelineEntry) => this.deps.ledger.appendTimeline(externalOrderId, entry),
    };
    return new CallRunner(this.deps, this.shop, { prepaid: options.prepaid ?? 0, timeline, externalOrderId });
  }
}

/** The calls about one order that change nothing at the service. */
export class OrderReads {
  constructor(
    protected readonly port: DeliveryService,
    protected readonly calls: CallRunner,
    readonly externalOrderId: string,
  ) {}

  /** Prices a delivery (creates nothing a courier or a customer sees). */
  quote(request: QuoteRequest, note?: CallNote<Quote>): Promise<Quote> {
    return this.calls.run('createQuote', () => this.port.quote(request), note);
  }

  shipment(shipmentId: string, note?: CallNote<Shipment>): Promise<Shipment> {
    return this.calls.run('getShipment', () => this.port.shipment(shipmentId), note);
  }

  /** The order's shipment by its external id (undefined only when the service has shown there is none). */
  shipmentForOrder(note?: CallNote<Shipment | undefined>): Promise<Shipment | undefined> {
    return this.calls.run('getShipmentByExternalOrder', () => this.port.shipmentForOrder(this.externalOrderId), note);
  }

  claims(shipmentId: string, note?: CallNote<Claim[]>): Promise<Claim[]> {
    return this.calls.run('listShipmentDisputes', () => this.port.claims(shipmentId), note);
  }
}

/** The calls about one order, with those that change something: each confirms the guard first. */
export class OrderCalls extends OrderReads {
  constructor(
    port: DeliveryService,
    calls: CallRunner,
    externalOrderId: string,
    private readonly guard: ChangeGuard,
  ) {
    super(port, calls, externalOrderId);
  }

  createShipment(request: ShipmentRequest, note?: CallNote<Shipment>): Promise<Shipment> {
    return this.calls.run('createShipment', () => this.port.createShipment(request), note, { guard: this.guard });
  }

  markReady(shipmentId: string, by: string, note?: CallNote<Shipment>): Promise<Shipment> {
    // Repeatable: a second markReady is answered "already ready" (mark-ready.ts), never a second shipment.
    return this.calls.run('markReady', () => this.port.markReady(shipmentId, by), note, {
      guard: this.guard,
      repeatable: true,
    });
  }

  cancel(shipmentId: string, request: { reason: string; by: string }, note?: CallNote<Shipment>): Promise<Shipment> {
    return this.calls.run('cancelShipment', () => this.port.cancel(shipmentId, request), note, { guard: this.guard });
  }

  openClaim(shipmentId: string, request: ClaimRequest, note?: CallNote<Claim>): Promise<Claim> {
    return this.calls.run('openDispute', () => this.port.openClaim(shipmentId, request), note, { guard: this.guard });
  }
}

/** Paces, guards, times, notes and counts one call at a time, for a shop (and an order, when it has a timeline). */
class CallRunner {
  private prepaid: number;

  constructor(
    private readonly deps: DeliveryGatewayDeps,
    private readonly shop: ShopConfig,
    private readonly order: { prepaid: number; timeline?: OrderTimeline; externalOrderId?: string },
  ) {
    this.prepaid = order.prepaid;
  }

  async run<T>(
    operation: string,
    call: () => Promise<T>,
    note?: CallNote<T>,
    change?: { guard: ChangeGuard; repeatable?: boolean },
  ): Promise<T> {
    const guard = change?.guard;
    // Started before the pacing wait, so the call leaves as soon after its turn as a call that changes nothing.
    const prepared = guard ? this.order.timeline?.beforeChange?.(operation) : undefined;
    prepared?.catch(() => undefined); // awaited in confirm(); this only keeps Node from calling it unhandled meanwhile
    // Waiting for the shop's pacing window is not part of the call's latency.
    if (this.prepaid > 0) this.prepaid -= 1;
    else await this.deps.rateLimiter?.acquire(this.shop.id, this.shop.policy.dispatchCallsPerSecond);
    if (change) await this.confirm(operation, change, prepared);
    const started = Date.now();
    let result: T;
    try {
      result = await (this.deps.attempt ? this.deps.attempt(operation, call) : call());
    } catch (error) {
      const ms = Date.now() - started;
      this.deps.onCall?.({ operation, ms, error });
      await this.note({
        at: this.deps.now().toISOString(),
        system: 'dispatch',
        operation,
        outcome: error instanceof DeliveryError ? error.label : 'error',
        ms,
        detail: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
    const ms = Date.now() - started;
    this.deps.onCall?.({ operation, ms });
    const detail = note?.detail?.(result);
    await this.note({
      at: this.deps.now().toISOString(),
      system: 'dispatch',
      operation,
      outcome: 'ok',
      ms,
      ...(detail === undefined ? {} : { detail }),
    });
    return result;
  }

  /**
   * A call that changes something is made only while the guard holds, once what the timeline prepared for it
   * (`prepared`: OrderTimeline.beforeChange) is done; a lost guard is noted, then thrown.
   */
  private async confirm(
    operation: string,
    { guard, repeatable }: { guard: ChangeGuard; repeatable?: boolean },
    prepared: void | Promise<void>,
  ): Promise<void> {
    try {
      await Promise.all([guard.confirm(operation, repeatable ? { repeatable } : undefined), prepared]);
    } catch (error) {
      if (error instanceof OrderLockLostError) {
        await this.note({
          at: this.deps.now().toISOString(),
          system: 'relais',
          operation,
          outcome: 'lock_lost',
          detail: error.message,
        });
        this.deps.logger.warn(
          { externalOrderId: this.order.externalOrderId, operation },
          'order lock lost; stopped before a side effect, to be retried',
        );
      }
      throw error;
    }
  }

  private async note(entry: TimelineEntry): Promise<void> {
    await this.order.timeline?.note(entry);
  }
}
