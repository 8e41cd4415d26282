/**
 * Response bodies, in the dialect of the emulator's wire profile (src/adapters/dispatch-api/profile.ts): every field
 * the profile spells is written under profile.spelling(key) (a dotted spelling makes nested objects), and
 * every state under profile.stateFor(step), the history's included. Fields no profile spells
 * (currency, zones, settlement_status, ...) keep their snake_case names.
 *
 * responseSpelling 'snake' is a second axis on top of the profile: each field is written under the first
 * of the profile's spellings that is snake_case (with the default profile, expires_at /
 * public_tracking_url / order_amount_xof instead of the spec's camelCase), which proves a client reads
 * every spelling its profile lists.
 *
 * The programmatic snapshot (shipments()) stays in the emulator's own canonical names.
 */
import { setPath, type FieldKey, type WireProfile } from '../relais.js';
import { wireState } from './names.js';
import { settlementStatus, type QuoteRecord, type ShipmentRecord } from './store.js';
import type { EmulatedClaim, EmulatedShipmentSnapshot } from './types.js';

export type ResponseSpelling = 'spec' | 'snake';

const iso = (ms: number) => new Date(ms).toISOString();
const isSnake = (name: string) => /^[a-z0-9_.]+$/.test(name);

/** Writes bodies in one profile's dialect. */
export class Dialect {
  constructor(
    readonly profile: WireProfile,
    private readonly responseSpelling: ResponseSpelling = 'spec',
  ) {}

  spelling(key: FieldKey): string {
    if (this.responseSpelling === 'snake') {
      const snake = this.profile.document.fields[key].find(isSnake);
      if (snake) return snake;
    }
    return this.profile.spelling(key);
  }

  /** `rest` first, then each profile field at its spelling (so a profile field can never be overwritten by a fixed one). */
  private body(rest: Record<string, unknown>, fields: Partial<Record<FieldKey, unknown>>): Record<string, unknown> {
    const body: Record<string, unknown> = { ...rest };
    for (const [key, value] of Object.entries(fields) as [FieldKey, unknown][]) {
      if (value !== undefined) setPath(body, this.spelling(key), value);
    }
    return body;
  }

  private history(shipment: ShipmentRecord, detailed: boolean): Array<Record<string, unknown>> {
    return shipment.history.map(({ status, ...rest }) =>
      detailed
        ? { status: wireState(this.profile, status), ...rest }
        : { status: wireState(this.profile, status), at: rest.at },
    );
  }

  quote(quote: QuoteRecord): Record<string, unknown> {
    const { price } = quote;
    const breakdown = this.body(
      {},
      {
        breakdownCustomer: price.breakdown.customer,
        breakdownCourier: price.breakdown.courier,
        breakdownPlatform: price.breakdown.platform,
        breakdownCodFee: price.breakdown.cod_fee,
      },
    );
    return this.body(
      {
        currency: 'XOF',
        pickup_zone: price.pickupZone,
        dropoff_zone: price.dropoffZone,
        pricing_basis: price.basis,
        ...(price.distanceKm === undefined ? {} : { distance_km: price.distanceKm }),
        [this.profile.document.requests.paymentModeField]: quote.paymentMode,
        ...(quote.weightKg === undefined ? {} : { weight_kg: quote.weightKg }),
        created_at: iso(quote.createdAt),
      },
      { quoteId: quote.quote_id, quoteExpiry: iso(quote.expiresAt), quoteTotal: price.total, breakdown },
    );
  }

  shipment(shipment: ShipmentRecord, trackingUrl: string): Record<string, unknown> {
    return this.body(
      {
        quote_id: shipment.quote_id,
        [this.profile.document.requests.paymentModeField]: shipment.payment_mode,
        total: shipment.total,
        currency: 'XOF',
        ...(shipment.courier_id === undefined ? {} : { courier_id: shipment.courier_id }),
        settlement_status: settlementStatus(shipment),
        created_at: iso(shipment.createdAt),
        updated_at: iso(shipment.updatedAt),
      },
      {
        shipmentId: shipment.shipment_id,
        externalOrderId: shipment.external_order_id,
        status: wireState(this.profile, shipment.status),
        trackingUrl: publicTrackingUrl(trackingUrl, shipment.tracking_code),
        trackingCode: shipment.tracking_code,
        // null, not absent: the service says "no amount" rather than leaving the field out.
        orderAmount: shipment.orderAmountXof ?? null,
        statusHistory: this.history(shipment, true),
      },
    );
  }

  /**
   * The public view: status and dated stages only. No names (the `by` of a stage is an operator),
   * no addresses, no amounts, no external_order_id: anyone holding the code may read it.
   */
  trackingView(shipment: ShipmentRecord): Record<string, unknown> {
    return this.body(
      { events: this.history(shipment, false) },
      { trackingCode: shipment.tracking_code, status: wireState(this.profile, shipment.status) },
    );
  }

  /** Indicative only: no identifier, nothing reserved. */
  priceSimulation(total: number): Record<string, unknown> {
    return this.body({ currency: 'XOF' }, { simulatedTotal: total });
  }
}

export function publicTrackingUrl(trackingUrl: string, code: string): string {
  return `${trackingUrl}/t/${code}`;
}

export function claimBody(claim: EmulatedClaim): EmulatedClaim {
  return { ...claim };
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
