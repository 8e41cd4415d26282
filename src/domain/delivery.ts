/**
 * The delivery service as the use-cases see it: a port in Relais's own terms (quote, shipment, ready, cancel,
 * claim, tracking, price), with domain types and one domain error. The dispatch service's client and its wire
 * profile are one adapter behind it (src/adapters/dispatch-api/service.ts); a second delivery service is another adapter
 * implementing DeliveryService, chosen where the runtime builds one per shop (src/adapters/dispatch-api/index.ts).
 *
 * The answers' shapes are the ones the dispatch adapter's readers already produce (every unshown name read
 * through the wire profile, src/adapters/dispatch-api/wire.ts): camelCase, XOF integers, each state with the step it maps to.
 * No I/O here.
 */
import { RelaisError, type FailureKind } from './errors.js';
import type { Coordinates, PaymentFamily } from './order.js';
import type { DeliveryStep } from './shipment-status.js';

// ---- requests ---------------------------------------------------------------------------------------------

export interface DeliveryPlace {
  /** The NEIGHBOURHOOD, never a city name: a city name is priced at the fallback tariff, the highest. */
  neighbourhood: string;
  address: string;
  /** Sent only when both ends have them: the price then follows the real distance. */
  coords?: Coordinates;
}

export interface QuoteRequest {
  pickup: DeliveryPlace;
  dropoff: DeliveryPlace;
  /** Absent: a standard parcel (the service's own default). */
  weightKg?: number;
  payment?: PaymentFamily;
}

export interface ShipmentRequest {
  quoteId: string;
  /** Relais's own reference (src/domain/ids.ts), unique per organisation: the shipment is found by it later. */
  externalOrderId: string;
  /** The goods (door-amount.ts): whole XOF the courier collects for them; set for cash-collecting orders only. */
  orderAmountXof?: number;
}

export interface ClaimRequest {
  reason: string;
  description: string;
  /** Who reports, on the merchant's side. */
  claimantId: string;
  claimantType?: string;
}

export interface PriceRequest {
  pickupNeighbourhood: string;
  dropoffNeighbourhood: string;
  weightKg?: number;
}

export interface ShipmentQuery {
  /** The page after the one that gave this cursor; the first page without one. */
  cursor?: string;
  limit?: number;
}

export interface CallOptions {
  /** Aborts the call (a process shutting down): a transient error. */
  signal?: AbortSignal;
  /** The time budget of this one call. */
  timeoutMs?: number;
}

// ---- answers ----------------------------------------------------------------------------------------------

/** What the customer pays and how it splits, for the merchant's accounting. A type: it is stored as a plain record. */
export type QuoteBreakdown = {
  customer?: number;
  courier?: number;
  platform?: number;
  codFee?: number;
};

export interface Quote {
  quoteId: string;
  /** The price is firm until then. */
  expiresAt: string;
  total: number;
  breakdown?: QuoteBreakdown;
  currency?: string;
  pickupZone?: string;
  dropoffZone?: string;
  /** Present when the service priced by coordinates. */
  distanceKm?: number;
  /** What the service calls its pricing basis, when it says (e.g. zone, distance, fallback). */
  pricingBasis?: string;
}

export interface ShipmentEvent {
  status: string;
  at: string;
  /** The step the service's state name maps to, when it is known. */
  step?: DeliveryStep;
}

export interface Shipment {
  shipmentId: string;
  externalOrderId?: string;
  quoteId?: string;
  /** The service's own name for the state, kept as it came. */
  status: string;
  /** The step `status` maps to; undefined for a name not known (never progress). */
  step?: DeliveryStep;
  publicTrackingUrl?: string;
  trackingCode?: string;
  /** The goods (door-amount.ts): what the shipment carries for the courier to collect, as the service reads it back. */
  orderAmountXof?: number;
  courierId?: string;
  settlementStatus?: string;
  /** The settlement is held (a claim is open). */
  settlementHeld?: boolean;
  createdAt?: string;
  updatedAt?: string;
  statusHistory?: ShipmentEvent[];
}

export interface ShipmentPage {
  shipments: Shipment[];
  /** Absent on the last page. */
  nextCursor?: string;
}

export interface Claim {
  claimId?: string;
  shipmentId?: string;
  reason: string;
  description?: string;
  claimantId?: string;
  claimantType?: string;
  /** Open until decided; the service's own words. */
  status?: string;
  outcome?: string;
  createdAt?: string;
  decidedAt?: string;
}

export interface TrackingView {
  trackingCode?: string;
  status: string;
  events: ShipmentEvent[];
}

export interface PriceSimulation {
  total: number;
  currency: string;
}

// ---- delivery webhooks ------------------------------------------------------------------------------------

/** A delivery webhook that reached the shop's secret URL (the route already checked the URL's token). */
export interface IncomingDeliveryWebhook {
  /** The body's bytes, as sent (signatures are over these). */
  rawBody: Buffer;
  /** The first value of a request header, whatever the case of its name. */
  header(name: string): string | undefined;
}

/**
 * What a delivery webhook says, read by the shop's adapter:
 *  - `reference`: the shipment it is about (its id, or the order's external id, or both) and the state it names;
 *  - `no_reference`: well signed and well formed, but about no shipment Relais can find (ignored);
 *  - `unsigned` / `bad_signature`: the header the shop's service signs with is absent, or does not verify;
 *  - `malformed`: not JSON, or nested deeper than the shop webhooks' limit.
 */
export type DeliveryWebhookReading =
  | {
      kind: 'reference';
      shipmentId?: string;
      externalOrderId?: string;
      state?: string;
      step?: DeliveryStep;
      /** False when the profile's paths found no id or no state: the ids were looked for wherever they sit. */
      readByProfile: boolean;
    }
  | { kind: 'no_reference' }
  | { kind: 'unsigned'; header: string }
  | { kind: 'bad_signature'; header: string }
  | { kind: 'malformed' };

/** Where a state name was read: the operation whose answer carried it, or a delivery webhook. */
export type SightingSource =
  | 'createShipment'
  | 'markReady'
  | 'getShipment'
  | 'getShipmentByExternalOrder'
  | 'listShipments'
  | 'cancelShipment'
  | 'trackByCode'
  | 'webhook';

/** A state name the service used, and where (kept so a shop's profile can be learned: issue 28). */
export interface StateSighting {
  state: string;
  source: SightingSource;
  /** The step the profile in force mapped it to then; absent when it knew no such name. */
  step?: DeliveryStep;
  /** The state the shipment was in just before it (its history), and the step Relais knew that one as. */
  after?: string;
  afterStep?: DeliveryStep;
}

// ---- the port ---------------------------------------------------------------------------------------------

/**
 * One delivery service, for one shop. Every call either answers or throws a DeliveryError (below), or a
 * RelaisError of the runtime's own (a pacing wait). Nothing is retried here: the use-case decides, on the error.
 */
export interface DeliveryService {
  /** A stable name for the organisation the shop's account belongs to (shipments, tariffs and claims are its), never a secret. */
  readonly organisation: string;
  /** The carrier name the shop shows with the tracking link. */
  readonly carrierName: string;

  /** Prices a delivery; firm until the quote's expiry. Creates nothing a courier or a customer sees. */
  quote(request: QuoteRequest, options?: CallOptions): Promise<Quote>;
  /** A shipment from a firm quote, carrying the amount to collect. */
  createShipment(request: ShipmentRequest, options?: CallOptions): Promise<Shipment>;
  shipment(shipmentId: string, options?: CallOptions): Promise<Shipment>;
  /** The order's shipment, or undefined only when the service has shown there is none (a doubt is a transient error). */
  shipmentForOrder(externalOrderId: string, options?: CallOptions): Promise<Shipment | undefined>;
  /** One page of the organisation's shipments. */
  shipments(query: ShipmentQuery, options?: CallOptions): Promise<ShipmentPage>;
  /** Puts the run in front of couriers: until then no courier is ever offered it. */
  markReady(shipmentId: string, by: string, options?: CallOptions): Promise<Shipment>;
  /** Accepted only before pickup; refused after (DeliveryError reason `cancel_refused`). */
  cancel(shipmentId: string, request: { reason: string; by: string }, options?: CallOptions): Promise<Shipment>;
  /** Opens a claim; the shipment's settlement is held until it is decided. */
  openClaim(shipmentId: string, request: ClaimRequest, options?: CallOptions): Promise<Claim>;
  /** The shipment's claims, decided ones included. */
  claims(shipmentId: string, options?: CallOptions): Promise<Claim[]>;
  /** The public tracking view behind a tracking code. */
  track(trackingCode: string, options?: CallOptions): Promise<TrackingView>;
  /** An indicative public price by neighbourhood; nothing is reserved. */
  price(request: PriceRequest, options?: CallOptions): Promise<PriceSimulation>;
  /** Verifies and reads a delivery webhook the service sent for this shop (no I/O: a forged one costs nothing). */
  readWebhook(webhook: IncomingDeliveryWebhook): DeliveryWebhookReading;
}

// ---- the error --------------------------------------------------------------------------------------------

/**
 * What a refusal means to Relais, whatever the service calls it (the dispatch adapter reads it through the
 * shop's wire profile). The use-cases act on these, never on a code: `already_ready` counts as success for
 * markReady, `quote_expired`/`quote_not_found` re-quote, `cancel_refused` is written on the order, and so on.
 */
export const DELIVERY_ERROR_REASONS = [
  'sandbox_key',
  'unauthorized',
  'quote_not_found',
  'quote_expired',
  'shipment_not_found',
  'route_not_found',
  'cancel_refused',
  'already_ready',
  'invalid_state',
  'validation',
  'malformed_body',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'service_error',
] as const;
export type DeliveryErrorReason = (typeof DELIVERY_ERROR_REASONS)[number];

/**
 * How the call ended:
 *  - `none`: no answer (refused, reset, timed out, aborted). The operation MAY have happened: look before repeating a write.
 *  - `refused`: the service answered no (`notFound` when it does not know what was asked for).
 *  - `unreadable`: an answer that is not the resource asked for (the wire profile does not read it).
 */
export type DeliveryAnswer = 'none' | 'refused' | 'unreadable';

export interface DeliveryErrorInit {
  failure: FailureKind;
  message: string;
  retryAfterMs?: number;
  cause?: unknown;
  /** The operation, as the service names it (createShipment): timelines and metrics show it. */
  operation: string;
  answer: DeliveryAnswer;
  notFound?: boolean;
  reason?: DeliveryErrorReason;
  /** How the call ended in the service's words (its error code), else how it failed: the order's timeline shows it. */
  label: string;
  /** A stable name for the refusal, for hold codes: what it means to Relais, else the service's code, else its status. */
  refusal: string;
}

export class DeliveryError extends RelaisError {
  override readonly name: string = 'DeliveryError';
  readonly operation: string;
  readonly answer: DeliveryAnswer;
  readonly notFound: boolean;
  readonly reason?: DeliveryErrorReason;
  readonly label: string;
  readonly refusal: string;

  constructor(init: DeliveryErrorInit) {
    super(init);
    this.operation = init.operation;
    this.answer = init.answer;
    this.notFound = init.notFound ?? false;
    if (init.reason !== undefined) this.reason = init.reason;
    this.label = init.label;
    this.refusal = init.refusal;
  }

  /** Structured form for logs: never a header or a key. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      operation: this.operation,
      answer: this.answer,
      reason: this.reason,
      label: this.label,
      failure: this.failure,
      retryAfterMs: this.retryAfterMs,
    };
  }
}

// ---- rules ------------------------------------------------------------------------------------------------

/** Families in which the courier collects money at the door. */
export function collectsCash(family: PaymentFamily): boolean {
  return family === 'cash_on_delivery' || family === 'deposit_then_balance';
}
