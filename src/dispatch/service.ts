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
  PriceRequest,
  PriceSimulation,
  Quote,
  QuoteRequest,
  Shipment,
  ShipmentPage,
  ShipmentQuery,
  ShipmentRequest,
  TrackingView,
} from '../domain/delivery.js';
import type { PaymentFamily } from '../domain/order.js';
import type { DispatchClient } from './client.js';
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
  }

  quote(request: QuoteRequest, options?: CallOptions): Promise<Quote> {
    return this.client.createQuote(wireQuoteRequest(request), options);
  }

  createShipment(request: ShipmentRequest, options?: CallOptions): Promise<Shipment> {
    return this.client.createShipment(
      {
        quote_id: request.quoteId,
        external_order_id: request.externalOrderId,
        ...(request.orderAmountXof === undefined ? {} : { orderAmountXof: request.orderAmountXof }),
      },
      options,
    );
  }

  shipment(shipmentId: string, options?: CallOptions): Promise<Shipment> {
    return this.client.getShipment(shipmentId, options);
  }

  shipmentForOrder(externalOrderId: string, options?: CallOptions): Promise<Shipment | undefined> {
    return this.client.getShipmentByExternalOrder(externalOrderId, options);
  }

  shipments(query: ShipmentQuery, options?: CallOptions): Promise<ShipmentPage> {
    return this.client.listShipments(query, options);
  }

  markReady(shipmentId: string, by: string, options?: CallOptions): Promise<Shipment> {
    return this.client.markReady(shipmentId, by, options);
  }

  cancel(shipmentId: string, request: { reason: string; by: string }, options?: CallOptions): Promise<Shipment> {
    return this.client.cancelShipment(shipmentId, request, options);
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

  track(trackingCode: string, options?: CallOptions): Promise<TrackingView> {
    return this.client.trackByCode(trackingCode, options);
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
