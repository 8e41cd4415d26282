/**
 * In-memory state of the emulated service: quotes, shipments, claims. Every read is scoped by
 * organisation here, so a route cannot forget the tenant check: another organisation's object is
 * simply "not found" (the service never leaks that it exists).
 */
import { CLAIM_ID_PREFIX, ID_PREFIX } from '../relais.js';
import { opaqueId, trackingCode } from './ids.js';
import type { ShipmentState } from './names.js';
import type { Price } from './pricing.js';
import type { EmulatedClaim, StatusEvent } from './types.js';

export interface QuoteRecord {
  quote_id: string;
  orgId: string;
  createdAt: number;
  expiresAt: number;
  price: Price;
  paymentMode: string;
  weightKg?: number;
}

export interface ShipmentRecord {
  /** Creation order: listShipments pages follow it, and cursors point into it. */
  seq: number;
  orgId: string;
  shipment_id: string;
  external_order_id: string;
  quote_id: string;
  /** The emulator's own name; the wire name comes from the profile (names.ts wireState). */
  status: ShipmentState;
  tracking_code: string;
  orderAmountXof?: number;
  payment_mode: string;
  total: number;
  courier_id?: string;
  createdAt: number;
  updatedAt: number;
  history: Array<StatusEvent & { status: ShipmentState }>;
  claims: EmulatedClaim[];
}

export class EmulatorStore {
  private readonly quotes = new Map<string, QuoteRecord>();
  private readonly shipments = new Map<string, ShipmentRecord>();
  /** The latest shipment per organisation and external_order_id: a lookup must not scan 100 000 shipments (flash-sale bench). */
  private readonly latestByExternalOrder = new Map<string, ShipmentRecord>();
  private readonly byTrackingCode = new Map<string, ShipmentRecord>();
  private readonly claims = new Map<string, { claim: EmulatedClaim; shipment: ShipmentRecord }>();
  private nextSeq = 1;

  addQuote(fields: Omit<QuoteRecord, 'quote_id'>): QuoteRecord {
    const quote: QuoteRecord = { quote_id: opaqueId(ID_PREFIX.quote), ...fields };
    this.quotes.set(quote.quote_id, quote);
    return quote;
  }

  /** The quote if it belongs to this organisation, expired or not (callers decide what expiry means). */
  quote(orgId: string, quoteId: string): QuoteRecord | undefined {
    const quote = this.quotes.get(quoteId);
    return quote && quote.orgId === orgId ? quote : undefined;
  }

  addShipment(
    fields: Omit<
      ShipmentRecord,
      'seq' | 'shipment_id' | 'tracking_code' | 'history' | 'claims' | 'status' | 'updatedAt'
    >,
  ): ShipmentRecord {
    let code = trackingCode();
    while (this.byTrackingCode.has(code)) code = trackingCode();
    const shipment: ShipmentRecord = {
      ...fields,
      seq: this.nextSeq++,
      shipment_id: opaqueId(ID_PREFIX.shipment),
      tracking_code: code,
      status: 'CREATED',
      updatedAt: fields.createdAt,
      history: [{ status: 'CREATED', at: new Date(fields.createdAt).toISOString() }],
      claims: [],
    };
    this.shipments.set(shipment.shipment_id, shipment);
    this.byTrackingCode.set(code, shipment);
    this.latestByExternalOrder.set(externalOrderKey(shipment.orgId, shipment.external_order_id), shipment);
    return shipment;
  }

  shipment(orgId: string, shipmentId: string): ShipmentRecord | undefined {
    const shipment = this.shipments.get(shipmentId);
    return shipment && shipment.orgId === orgId ? shipment : undefined;
  }

  /** The most recent shipment with this reference: duplicates are possible (the service does not refuse them). */
  shipmentByExternalOrder(orgId: string, externalOrderId: string): ShipmentRecord | undefined {
    return this.latestByExternalOrder.get(externalOrderKey(orgId, externalOrderId));
  }

  /** Shipments of one organisation (or all), in creation order. */
  listShipments(orgId?: string): ShipmentRecord[] {
    return [...this.shipments.values()]
      .filter((s) => orgId === undefined || s.orgId === orgId)
      .sort((a, b) => a.seq - b.seq);
  }

  byCode(code: string): ShipmentRecord | undefined {
    return this.byTrackingCode.get(code);
  }

  addClaim(
    shipment: ShipmentRecord,
    fields: Omit<EmulatedClaim, 'claim_id' | 'shipment_id' | 'status'>,
  ): EmulatedClaim {
    const claim: EmulatedClaim = {
      claim_id: opaqueId(CLAIM_ID_PREFIX),
      shipment_id: shipment.shipment_id,
      ...fields,
      status: 'OPEN',
    };
    shipment.claims.push(claim);
    this.claims.set(claim.claim_id, { claim, shipment });
    return claim;
  }

  claim(claimId: string): { claim: EmulatedClaim; shipment: ShipmentRecord } | undefined {
    return this.claims.get(claimId);
  }
}

/** Settlement is held while any claim is open (spec: "holds the settlement ... until it is decided"). */
export function settlementStatus(shipment: ShipmentRecord): 'PENDING' | 'HELD' | 'SETTLED' {
  if (shipment.claims.some((c) => c.status === 'OPEN')) return 'HELD';
  return shipment.status === 'DELIVERED' ? 'SETTLED' : 'PENDING';
}

function externalOrderKey(orgId: string, externalOrderId: string): string {
  return `${orgId}\u0000${externalOrderId}`;
}
