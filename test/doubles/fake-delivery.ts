/**
 * A DeliveryService in memory, for unit tests of the use cases that call the delivery service (src/orders/...).
 *
 * It is a test double that is proven: it passes the same contract suite as the dispatch service's HTTP adapter
 * talking to the dispatch emulator (test/contracts/delivery-service.contract.ts, run by
 * test/doubles/fake-delivery.test.ts and src/adapters/dispatch-api/service.test.ts). It behaves as the emulator does where use
 * cases look: a city name or a name the service does not price is quoted at the fallback tariff, the highest; a
 * parcel over 50 kg is refused; a quote expires; createShipment does NOT refuse a second shipment for the same
 * external order id (the caller looks first); markReady twice changes nothing; a parcel picked up cannot be
 * cancelled. Refusals are DeliveryErrors with the reason, label and refusal the adapter reads from the service's
 * answer under the default wire profile.
 *
 * Time is its own manual clock (`advance`), as the emulator's: quotes expire and couriers move only when a test
 * says. `loseNextAnswer` plays a connection dropped after the service did the work (the emulator's
 * commit_then_drop fault).
 */
import { createHmac } from 'node:crypto';
import {
  DeliveryError,
  type Claim,
  type ClaimRequest,
  type DeliveryErrorReason,
  type DeliveryService,
  type DeliveryWebhookReading,
  type IncomingDeliveryWebhook,
  type PriceRequest,
  type PriceSimulation,
  type Quote,
  type QuoteRequest,
  type Shipment,
  type ShipmentPage,
  type ShipmentQuery,
  type ShipmentRequest,
  type TrackingView,
} from '../../src/domain/delivery.js';
import type { DeliveryStep } from '../../src/domain/shipment-status.js';
import { parseJson } from '../../src/shops/platforms/common.js';

/** The secret the fake signs its webhooks with (readWebhook). */
export const FAKE_WEBHOOK_SECRET = 'fake-delivery-webhook-secret';

/** The fallback tariff: what a city name, or a name the service does not price, costs. Strictly the highest. */
export const FAKE_FALLBACK_XOF = 4_000;
/** What any name the service prices costs. */
export const FAKE_ZONE_XOF = 1_500;
export const FAKE_COD_FEE_XOF = 500;
export const FAKE_QUOTE_TTL_MS = 15 * 60_000;
export const FAKE_COURIER_STEP_MS = 60_000;
const MAX_WEIGHT_KG = 50;

/** City names (priced at the fallback tariff, as the spec says of a city name). */
const CITY_NAMES = ['dakar', 'abidjan', 'bamako', 'ouagadougou', 'cotonou', 'lome', 'lomé', 'niamey'];

/** The service's state name for each step (the default wire profile's first name). */
const STATE: Record<DeliveryStep, string> = {
  created: 'CREATED',
  ready: 'READY',
  assigned: 'ASSIGNED',
  picked_up: 'PICKED_UP',
  in_transit: 'IN_TRANSIT',
  out_for_delivery: 'OUT_FOR_DELIVERY',
  delivery_failed: 'DELIVERY_FAILED',
  delivered: 'DELIVERED',
  returned: 'RETURNED',
  cancelled: 'CANCELLED',
};
/** The courier's run once a shipment is ready, one stage per FAKE_COURIER_STEP_MS. */
const RUN: DeliveryStep[] = ['ready', 'assigned', 'picked_up', 'in_transit', 'out_for_delivery', 'delivered'];
const CANCELLABLE: ReadonlySet<DeliveryStep> = new Set(['created', 'ready', 'assigned']);

export type FakeOperation = 'quote' | 'createShipment' | 'shipment' | 'shipmentForOrder' | 'markReady' | 'cancel';

export interface FakeDeliveryOptions {
  /** Names this service does not price (quoted at the fallback tariff), as the emulator's unpricedNeighbourhoods. */
  unpricedNeighbourhoods?: string[];
  /** Where its clock starts; default now. */
  startAt?: Date;
  organisation?: string;
}

interface FakeQuote {
  quoteId: string;
  expiresAt: number;
  total: number;
  cashOnDelivery: boolean;
}

interface FakeShipment {
  shipment: Shipment;
  step: DeliveryStep;
  /** When the courier's next stage falls due (ready shipments only). */
  nextStageAt?: number;
  seq: number;
}

const normalise = (name: string) => name.trim().toLowerCase();

export class FakeDeliveryService implements DeliveryService {
  readonly organisation: string;
  readonly carrierName = 'Fake delivery';
  /** Every call made, by operation, in order: what a use case asked of the service. */
  readonly calls: FakeOperation[] = [];
  #now: number;
  #ids = 0;
  readonly #unpriced: Set<string>;
  readonly #quotes = new Map<string, FakeQuote>();
  readonly #shipments = new Map<string, FakeShipment>();
  readonly #lost = new Set<FakeOperation>();

  constructor(options: FakeDeliveryOptions = {}) {
    this.organisation = options.organisation ?? 'fake-organisation';
    this.#now = (options.startAt ?? new Date()).getTime();
    this.#unpriced = new Set((options.unpricedNeighbourhoods ?? []).map(normalise));
  }

  /** The service's clock. */
  now(): Date {
    return new Date(this.#now);
  }

  /** Moves the clock: quotes expire, couriers move one stage per FAKE_COURIER_STEP_MS. */
  advance(ms: number): void {
    this.#now += ms;
    for (const kept of this.#shipments.values()) {
      while (kept.nextStageAt !== undefined && kept.nextStageAt <= this.#now) {
        const next = RUN[RUN.indexOf(kept.step) + 1];
        if (!next) break;
        this.move(kept, next, kept.nextStageAt);
        kept.nextStageAt = next === 'delivered' ? undefined : kept.nextStageAt + FAKE_COURIER_STEP_MS;
      }
    }
  }

  /** The next call of `operation` does its work, then its answer is lost: the caller gets no answer. */
  loseNextAnswer(operation: FakeOperation): void {
    this.#lost.add(operation);
  }

  /** Every shipment made for this external order id, oldest first. */
  shipmentsFor(externalOrderId: string): Shipment[] {
    return [...this.#shipments.values()]
      .filter((kept) => kept.shipment.externalOrderId === externalOrderId)
      .sort((a, b) => a.seq - b.seq)
      .map((kept) => structuredClone(kept.shipment));
  }

  async quote(request: QuoteRequest): Promise<Quote> {
    return this.answer('quote', () => {
      const weightKg = request.weightKg;
      if (weightKg !== undefined && !(weightKg > 0 && weightKg <= MAX_WEIGHT_KG))
        throw refusal(
          'createQuote',
          400,
          'VALIDATION_ERROR',
          'validation',
          `parcel.weight_kg: at most ${MAX_WEIGHT_KG}`,
        );
      const fallback = !this.prices(request.pickup.neighbourhood) || !this.prices(request.dropoff.neighbourhood);
      const cashOnDelivery = request.payment === 'cash_on_delivery' || request.payment === 'deposit_then_balance';
      const delivery = fallback ? FAKE_FALLBACK_XOF : FAKE_ZONE_XOF;
      const codFee = cashOnDelivery ? FAKE_COD_FEE_XOF : undefined;
      const platform = Math.round(delivery * 0.2);
      const quote: FakeQuote = {
        quoteId: this.id('qt'),
        expiresAt: this.#now + FAKE_QUOTE_TTL_MS,
        total: delivery + (codFee ?? 0),
        cashOnDelivery,
      };
      this.#quotes.set(quote.quoteId, quote);
      return {
        quoteId: quote.quoteId,
        expiresAt: new Date(quote.expiresAt).toISOString(),
        total: quote.total,
        breakdown: { customer: quote.total, courier: delivery - platform, platform, ...(codFee ? { codFee } : {}) },
        currency: 'XOF',
        pricingBasis: fallback ? 'fallback' : 'zone',
      };
    });
  }

  async createShipment(request: ShipmentRequest): Promise<Shipment> {
    return this.answer('createShipment', () => {
      const quote = this.#quotes.get(request.quoteId);
      if (!quote) throw refusal('createShipment', 404, 'QUOTE_NOT_FOUND', 'quote_not_found', 'quote not found');
      if (this.#now >= quote.expiresAt)
        throw refusal('createShipment', 409, 'QUOTE_EXPIRED', 'quote_expired', 'quote expired: request a new quote');
      const amount = request.orderAmountXof;
      if (quote.cashOnDelivery && !(amount !== undefined && amount > 0)) {
        const message = 'orderAmountXof: a positive integer amount is required for cash on delivery';
        throw refusal('createShipment', 400, 'VALIDATION_ERROR', 'validation', message);
      }
      const at = new Date(this.#now).toISOString();
      const trackingCode = this.id('TRK').replace(/_/g, '').toUpperCase().slice(0, 10).padEnd(10, '0');
      const shipment: Shipment = {
        shipmentId: this.id('shp'),
        externalOrderId: request.externalOrderId,
        quoteId: quote.quoteId,
        status: STATE.created,
        step: 'created',
        trackingCode,
        publicTrackingUrl: `https://track.fake.example/t/${trackingCode}`,
        ...(amount === undefined ? {} : { orderAmountXof: amount }),
        createdAt: at,
        updatedAt: at,
        statusHistory: [{ status: STATE.created, at, step: 'created' }],
      };
      this.#shipments.set(shipment.shipmentId, { shipment, step: 'created', seq: this.#ids });
      return structuredClone(shipment);
    });
  }

  async shipment(shipmentId: string): Promise<Shipment> {
    return this.answer('shipment', () => structuredClone(this.own('getShipment', shipmentId).shipment));
  }

  async shipmentForOrder(externalOrderId: string): Promise<Shipment | undefined> {
    return this.answer('shipmentForOrder', () => this.shipmentsFor(externalOrderId).at(-1));
  }

  async shipments(query: ShipmentQuery): Promise<ShipmentPage> {
    const all = [...this.#shipments.values()].sort((a, b) => a.seq - b.seq);
    const after = query.cursor === undefined ? 0 : Number(query.cursor);
    const matching = all.filter((kept) => kept.seq > after);
    const page = matching.slice(0, query.limit ?? 20);
    const last = page.at(-1);
    return {
      shipments: page.map((kept) => structuredClone(kept.shipment)),
      ...(matching.length > page.length && last ? { nextCursor: String(last.seq) } : {}),
    };
  }

  async markReady(shipmentId: string): Promise<Shipment> {
    return this.answer('markReady', () => {
      const kept = this.own('markReady', shipmentId);
      if (kept.step === 'cancelled')
        throw refusal(
          'markReady',
          409,
          'INVALID_STATE',
          'invalid_state',
          'a cancelled shipment cannot be marked ready',
        );
      if (kept.step === 'created') {
        this.move(kept, 'ready', this.#now);
        kept.nextStageAt = this.#now + FAKE_COURIER_STEP_MS;
      }
      return structuredClone(kept.shipment);
    });
  }

  async cancel(shipmentId: string): Promise<Shipment> {
    return this.answer('cancel', () => {
      const kept = this.own('cancelShipment', shipmentId);
      if (kept.step === 'cancelled') return structuredClone(kept.shipment);
      if (!CANCELLABLE.has(kept.step)) {
        const message = `cannot cancel: the shipment is ${STATE[kept.step]}`;
        throw refusal('cancelShipment', 409, 'CANCEL_NOT_ALLOWED', 'cancel_refused', message);
      }
      this.move(kept, 'cancelled', this.#now);
      delete kept.nextStageAt;
      return structuredClone(kept.shipment);
    });
  }

  async openClaim(shipmentId: string, request: ClaimRequest): Promise<Claim> {
    this.own('openDispute', shipmentId);
    return {
      claimId: this.id('clm'),
      shipmentId,
      reason: request.reason,
      description: request.description,
      status: 'OPEN',
    };
  }

  async claims(shipmentId: string): Promise<Claim[]> {
    this.own('listShipmentDisputes', shipmentId);
    return [];
  }

  async track(trackingCode: string): Promise<TrackingView> {
    const kept = [...this.#shipments.values()].find((s) => s.shipment.trackingCode === trackingCode);
    if (!kept) throw refusal('trackByCode', 404, 'SHIPMENT_NOT_FOUND', 'shipment_not_found', 'unknown tracking code');
    return { trackingCode, status: kept.shipment.status, events: structuredClone(kept.shipment.statusHistory ?? []) };
  }

  async price(request: PriceRequest): Promise<PriceSimulation> {
    const priced = this.prices(request.pickupNeighbourhood) && this.prices(request.dropoffNeighbourhood);
    return { total: priced ? FAKE_ZONE_XOF : FAKE_FALLBACK_XOF, currency: 'XOF' };
  }

  /**
   * A webhook as this fake would send one: `{ "shipmentId", "state" }`, signed by the hex HMAC-SHA256 of the body
   * under the fake's webhook secret in `x-fake-signature`. Outside the contract, as the real adapter reads each
   * service's own dialect (its tests are test/pipeline/dialects*.test.ts and test/firstcontact).
   */
  readWebhook(webhook: IncomingDeliveryWebhook): DeliveryWebhookReading {
    const signature = webhook.header('x-fake-signature');
    if (signature === undefined) return { kind: 'unsigned', header: 'x-fake-signature' };
    const expected = createHmac('sha256', FAKE_WEBHOOK_SECRET).update(webhook.rawBody).digest('hex');
    if (signature !== expected) return { kind: 'bad_signature', header: 'x-fake-signature' };
    const body = parseJson(webhook.rawBody) as { shipmentId?: unknown; state?: unknown } | undefined;
    if (typeof body !== 'object' || body === null) return { kind: 'malformed' };
    const kept = typeof body.shipmentId === 'string' ? this.#shipments.get(body.shipmentId) : undefined;
    if (!kept) return { kind: 'no_reference' };
    const state = typeof body.state === 'string' ? body.state : undefined;
    const step = (Object.keys(STATE) as DeliveryStep[]).find((key) => STATE[key] === state);
    return {
      kind: 'reference',
      shipmentId: kept.shipment.shipmentId,
      externalOrderId: kept.shipment.externalOrderId,
      ...(state === undefined ? {} : { state }),
      ...(step === undefined ? {} : { step }),
      readByProfile: true,
    };
  }

  /** Whether the service prices this name at its zone tariff (not a city name, not one it was told it does not price). */
  private prices(name: string): boolean {
    const key = normalise(name);
    return key !== '' && !CITY_NAMES.includes(key) && !this.#unpriced.has(key);
  }

  private own(operation: string, shipmentId: string): FakeShipment {
    const kept = this.#shipments.get(shipmentId);
    if (!kept) throw refusal(operation, 404, 'SHIPMENT_NOT_FOUND', 'shipment_not_found', 'shipment not found');
    return kept;
  }

  private move(kept: FakeShipment, step: DeliveryStep, at: number): void {
    const when = new Date(at).toISOString();
    kept.step = step;
    Object.assign(kept.shipment, { status: STATE[step], step, updatedAt: when });
    kept.shipment.statusHistory = [...(kept.shipment.statusHistory ?? []), { status: STATE[step], at: when, step }];
  }

  /** Runs the call; when its answer is to be lost, the work is done and the caller gets no answer. */
  private answer<T>(operation: FakeOperation, work: () => T): T {
    this.calls.push(operation);
    const result = work();
    if (this.#lost.delete(operation)) {
      throw new DeliveryError({
        failure: 'transient',
        message: `fake ${operation}: the connection dropped before the answer`,
        operation: operationName(operation),
        answer: 'none',
        label: 'network',
        refusal: 'http_error',
      });
    }
    return result;
  }

  private id(prefix: string): string {
    this.#ids += 1;
    return `${prefix}_fake${String(this.#ids).padStart(6, '0')}`;
  }
}

/** The service's name for an operation (what timelines and metrics show). */
function operationName(operation: FakeOperation): string {
  const names: Record<FakeOperation, string> = {
    quote: 'createQuote',
    createShipment: 'createShipment',
    shipment: 'getShipment',
    shipmentForOrder: 'getShipmentByExternalOrder',
    markReady: 'markReady',
    cancel: 'cancelShipment',
  };
  return names[operation];
}

/** A refusal as the adapter reads it from the service's error answer (its code, its meaning under the profile). */
function refusal(
  operation: string,
  status: number,
  code: string,
  reason: DeliveryErrorReason,
  message: string,
): DeliveryError {
  return new DeliveryError({
    failure: 'permanent',
    message: `dispatch ${operation}: ${status} ${code}: ${message}`,
    operation,
    answer: 'refused',
    notFound: status === 404,
    reason,
    label: code,
    refusal: reason,
  });
}
