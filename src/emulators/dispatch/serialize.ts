/**
 * Response bodies. Field names follow src/dispatch/wire.ts: snake_case, except the three names the
 * spec spells in camelCase (expiresAt, publicTrackingUrl, orderAmountXof). With responseSpelling
 * 'snake' those three come out as expires_at / public_tracking_url / order_amount_xof instead, which
 * proves a client reads both spellings.
 */
import { settlementStatus, type QuoteRecord, type ShipmentRecord } from './store.js';
import type { EmulatedClaim, EmulatedShipmentSnapshot } from './types.js';

export type ResponseSpelling = 'spec' | 'snake';

const iso = (ms: number) => new Date(ms).toISOString();

function spelled(spelling: ResponseSpelling, specName: string, snakeName: string): string {
  return spelling === 'spec' ? specName : snakeName;
}

export function quoteBody(quote: QuoteRecord, spelling: ResponseSpelling): Record<string, unknown> {
  const { price } = quote;
  return {
    quote_id: quote.quote_id,
    [spelled(spelling, 'expiresAt', 'expires_at')]: iso(quote.expiresAt),
    total: price.total,
    currency: 'XOF',
    breakdown: { ...price.breakdown },
    pickup_zone: price.pickupZone,
    dropoff_zone: price.dropoffZone,
    pricing_basis: price.basis,
    ...(price.distanceKm === undefined ? {} : { distance_km: price.distanceKm }),
    payment_mode: quote.paymentMode,
    ...(quote.weightKg === undefined ? {} : { weight_kg: quote.weightKg }),
    created_at: iso(quote.createdAt),
  };
}

export function publicTrackingUrl(trackingUrl: string, code: string): string {
  return `${trackingUrl}/t/${code}`;
}

export function claimBody(claim: EmulatedClaim): EmulatedClaim {
  return { ...claim };
}

export function shipmentBody(
  shipment: ShipmentRecord,
  trackingUrl: string,
  spelling: ResponseSpelling,
): Record<string, unknown> {
  return {
    shipment_id: shipment.shipment_id,
    external_order_id: shipment.external_order_id,
    quote_id: shipment.quote_id,
    status: shipment.status,
    [spelled(spelling, 'publicTrackingUrl', 'public_tracking_url')]: publicTrackingUrl(trackingUrl, shipment.tracking_code),
    tracking_code: shipment.tracking_code,
    [spelled(spelling, 'orderAmountXof', 'order_amount_xof')]: shipment.orderAmountXof ?? null,
    payment_mode: shipment.payment_mode,
    total: shipment.total,
    currency: 'XOF',
    ...(shipment.courier_id === undefined ? {} : { courier_id: shipment.courier_id }),
    settlement_status: settlementStatus(shipment),
    created_at: iso(shipment.createdAt),
    updated_at: iso(shipment.updatedAt),
    status_history: shipment.history.map((h) => ({ ...h })),
  };
}

/**
 * The public view: status and dated stages only. No names (the `by` of a stage is an operator),
 * no addresses, no amounts, no external_order_id: anyone holding the code may read it.
 */
export function trackingViewBody(shipment: ShipmentRecord): Record<string, unknown> {
  return {
    tracking_code: shipment.tracking_code,
    status: shipment.status,
    events: shipment.history.map((h) => ({ status: h.status, at: h.at })),
  };
}

export function snapshot(shipment: ShipmentRecord, trackingUrl: string): EmulatedShipmentSnapshot {
  return {
    orgId: shipment.orgId,
    shipment_id: shipment.shipment_id,
    external_order_id: shipment.external_order_id,
    quote_id: shipment.quote_id,
    status: shipment.status,
    tracking_code: shipment.tracking_code,
    publicTrackingUrl: publicTrackingUrl(trackingUrl, shipment.tracking_code),
    ...(shipment.orderAmountXof === undefined ? {} : { orderAmountXof: shipment.orderAmountXof }),
    payment_mode: shipment.payment_mode,
    total: shipment.total,
    ...(shipment.courier_id === undefined ? {} : { courier_id: shipment.courier_id }),
    settlement_status: settlementStatus(shipment),
    created_at: iso(shipment.createdAt),
    updated_at: iso(shipment.updatedAt),
    status_history: shipment.history.map((h) => ({ ...h })),
    claims: shipment.claims.map(claimBody),
  };
}
