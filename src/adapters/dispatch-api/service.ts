/**
 * The dispatch service as a DeliveryService (src/domain/delivery.ts): the port's calls in Relais's terms, turned
 * into the twelve operations of the client (client.ts) and their request bodies as the spec spells them. The
 * answers are already the port's shapes (the client's readers, wire.ts), and its errors are the port's
 * (DispatchError is a DeliveryError), so both pass through unchanged.
 */
import type {
  CallOptions,
  Claim,
  ClaimRequest,
  DeliveryPlace,
  DeliveryService,
  DeliveryWebhookReading,
  IncomingDeliveryWebhook,
  PriceRequest,
  PriceSimulation,
  Quote,
  QuoteRequest,
  Shipment,
  ShipmentPage,
  ShipmentQuery,
  ShipmentRequest,
  SightingSource,
  StateSighting,
  TrackingView,
} from '../../domain/delivery.js';
import type { PaymentFamily } from '../../domain/order.js';
import type { DispatchClient } from './client.js';
import { shipmentSightings, SightingFilter, sightingsOf } from './sightings.js';
import { readDeliveryWebhook } from './webhook.js';
import { PaymentMode, type WirePlace, type WireQuoteRequest } from './wire.js';

const PAYMENT_MODE: Record<PaymentFamily, PaymentMode> = {
  cash_on_delivery: PaymentMode.cashOnDelivery,
  prepaid: PaymentMode.prepaid,
  deposit_then_balance: PaymentMode.depositThenBalance,
  business_account: PaymentMode.businessAccount,
};

/** `city` carries the NEIGHBOURHOOD (spec section 1). */
function wirePlace(place: DeliveryPlace): WirePlace {
  return {
    city: place.neighbourhood,
    address: place.address,
    ...(place.coords ? { coords: { lat: place.coords.lat, lng: place.coords.lng } } : {}),
  };
}

export function wireQuoteRequest(request: QuoteRequest): WireQuoteRequest {
  return {
    pickup: wirePlace(request.pickup),
    dropoff: wirePlace(request.dropoff),
    ...(request.weightKg === undefined ? {} : { parcel: { weight_kg: request.weightKg } }),
    ...(request.payment === undefined ? {} : { payment_mode: PAYMENT_MODE[request.payment] }),
  };
}

export interface DispatchDeliveryOptions {
  /** A stable, non-secret name of the organisation the key belongs to. */
  organisation: string;
  carrierName: string;
  /** When the service signs its webhooks: the shop's signing secret (revealed only to verify one). */
  webhookSigningSecret?: { reveal(): string };
  /** Told the state names the service uses, each the first time this service sees it (kept for `profile learn`). */
  onStates?: (sightings: StateSighting[]) => void;
}

export class DispatchDeliveryService implements DeliveryService {
  readonly organisation: string;
  readonly carrierName: string;

  constructor(
    private readonly client: DispatchClient,
    options: DispatchDeliveryOptions,
  ) {
    this.organisation = options.organisation;
    this.carrierName = options.carrierName;
    this.#signingSecret = options.webhookSigningSecret;
    this.#sightings = options.onStates ? new SightingFilter(options.onStates) : undefined;
  }

  readonly #signingSecret: { reveal(): string } | undefined;
  readonly #sightings: SightingFilter | undefined;

  /** Read with the client's profile: the one resolved when the shop was loaded, never looked up per request. */
  readWebhook(webhook: IncomingDeliveryWebhook): DeliveryWebhookReading {
    const reading = readDeliveryWebhook(this.client.profile, this.#signingSecret?.reveal(), webhook);
    if (reading.kind === 'reference' && reading.state !== undefined) {
      const step = reading.step;
      this.#sightings?.note([{ state: reading.state, source: 'webhook', ...(step ? { step } : {}) }]);
    }
    return reading;
  }

  /** Passes on the states a shipment answer shows, then the answer. */
  async #observed<T extends Shipment | undefined>(source: SightingSource, answer: Promise<T>): Promise<T> {
    const shipment = await answer;
    if (shipment) this.#sightings?.note(shipmentSightings(shipment, source));
    return shipment;
  }

  quote(request: QuoteRequest, options?: CallOptions): Promise<Quote> {
    return this.client.createQuote(wireQuoteRequest(request), options);
  }

  createShipment(request: ShipmentRequest, options?: CallOptions): Promise<Shipment> {
    return this.#observed(
      'createShipment',
      this.client.createShipment(
        {
          quote_id: request.quoteId,
          external_order_id: request.externalOrderId,
          ...(request.orderAmountXof === undefined ? {} : { orderAmountXof: request.orderAmountXof }),
        },
        options,
      ),
    );
  }

  shipment(shipmentId: string, options?: CallOptions): Promise<Shipment> {
    return this.#observed('getShipment', this.client.getShipment(shipmentId, options));
  }

  shipmentForOrder(externalOrderId: string, options?: CallOptions): Promise<Shipment | undefined> {
    return this.#observed(
      'getShipmentByExternalOrder',
      this.client.getShipmentByExternalOrder(externalOrderId, options),
    );
  }

  async shipments(query: ShipmentQuery, options?: CallOptions): Promise<ShipmentPage> {
    const page = await this.client.listShipments(query, options);
    for (const shipment of page.shipments) this.#sightings?.note(shipmentSightings(shipment, 'listShipments'));
    return page;
  }

  markReady(shipmentId: string, by: string, options?: CallOptions): Promise<Shipment> {
    return this.#observed('markReady', this.client.markReady(shipmentId, by, options));
  }

  cancel(shipmentId: string, request: { reason: string; by: string }, options?: CallOptions): Promise<Shipment> {
    return this.#observed('cancelShipment', this.client.cancelShipment(shipmentId, request, options));
  }

  openClaim(shipmentId: string, request: ClaimRequest, options?: CallOptions): Promise<Claim> {
    return this.client.openDispute(
      shipmentId,
      {
        reason: request.reason,
        description: request.description,
        claimant_id: request.claimantId,
        ...(request.claimantType === undefined ? {} : { claimant_type: request.claimantType }),
      },
      options,
    );
  }

  claims(shipmentId: string, options?: CallOptions): Promise<Claim[]> {
    return this.client.listShipmentDisputes(shipmentId, options);
  }

  async track(trackingCode: string, options?: CallOptions): Promise<TrackingView> {
    const view = await this.client.trackByCode(trackingCode, options);
    this.#sightings?.note(sightingsOf(view.events, { status: view.status }, 'trackByCode'));
    return view;
  }

  price(request: PriceRequest, options?: CallOptions): Promise<PriceSimulation> {
    return this.client.simulatePrice(
      {
        pickup_city: request.pickupNeighbourhood,
        dropoff_city: request.dropoffNeighbourhood,
        ...(request.weightKg === undefined ? {} : { weight_kg: request.weightKg }),
      },
      options,
    );
  }

  /** Closes the client's keep-alive connections. */
  close(): Promise<void> {
    return this.client.close();
  }
}
