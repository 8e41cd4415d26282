/**
 * The dispatch service's wire format as the spec shows it: paths, the key header, id prefixes, limits,
 * request bodies, and the readers of every answer.
 *
 * The spec (docs/dispatch-api-spec.md) names some fields and leaves the rest "not shown". It also
 * contradicts itself: it says every body is snake_case, yet names `expiresAt`, `publicTrackingUrl` and
 * `orderAmountXof`. The rule we follow:
 *   - when WRITING, use the spelling the spec names (`orderAmountXof`, `quote_id`, `external_order_id`, ...);
 *   - when READING, accept every spelling the shop's wire profile lists and ignore unknown fields.
 *
 * Names the spec leaves "not shown" (state names, error codes and body, the webhook's header and shape,
 * uncertain field spellings) are not here but in the wire profile (profile.ts); the emulator
 * (packages/emulators/src/dispatch) speaks whichever profile it is given, so the client and the emulator are
 * checked against more than one dialect.
 */
import { z } from 'zod';
import type {
  Claim,
  PriceSimulation,
  Quote,
  QuoteBreakdown,
  Shipment,
  ShipmentEvent,
  ShipmentPage,
  TrackingView,
} from '../../domain/delivery.js';
import { RelaisError } from '../../domain/errors.js';
import type { FieldKey, WireProfile } from './profile.js';

export const API_PREFIX = '/v1';

/** Paths, exactly as in spec section 4. */
export const paths = {
  quotes: `${API_PREFIX}/quotes`,
  quote: (quoteId: string) => `${API_PREFIX}/quotes/${encodeURIComponent(quoteId)}`,
  shipments: `${API_PREFIX}/shipments`,
  shipment: (shipmentId: string) => `${API_PREFIX}/shipments/${encodeURIComponent(shipmentId)}`,
  shipmentByExternalOrder: (externalOrderId: string) =>
    `${API_PREFIX}/shipments/by-external-order/${encodeURIComponent(externalOrderId)}`,
  markReady: (shipmentId: string) => `${API_PREFIX}/shipments/${encodeURIComponent(shipmentId)}/mark-ready`,
  cancel: (shipmentId: string) => `${API_PREFIX}/shipments/${encodeURIComponent(shipmentId)}/cancel`,
  openDispute: (shipmentId: string) => `${API_PREFIX}/shipments/${encodeURIComponent(shipmentId)}/open-dispute`,
  disputes: (shipmentId: string) => `${API_PREFIX}/shipments/${encodeURIComponent(shipmentId)}/disputes`,
  tracking: (trackingCode: string) => `${API_PREFIX}/tracking/${encodeURIComponent(trackingCode)}`,
  simulatePrice: `${API_PREFIX}/tracking/simulate-price`,
} as const;

/** The twelve operations of the service (spec section 4), by the names the client and the emulator share. */
export const OPERATIONS = [
  'createQuote',
  'getQuote',
  'createShipment',
  'getShipment',
  'listShipments',
  'getShipmentByExternalOrder',
  'markReady',
  'cancelShipment',
  'openDispute',
  'listShipmentDisputes',
  'trackByCode',
  'simulatePrice',
] as const;
export type OperationName = (typeof OPERATIONS)[number];

/** Spec section 5. */
export const API_KEY_HEADER = 'X-Api-Key';
export const LIVE_KEY_PREFIX = 'pk_live_';
export const TEST_KEY_PREFIX = 'pk_test_';

/** Spec section 2: the prefix gives the type; ids are otherwise opaque. */
export const ID_PREFIX = { quote: 'qte_', shipment: 'shp_', courier: 'drv_', user: 'usr_' } as const;
/** UNCONFIRMED: the spec does not name the claim id or its prefix; the emulator uses `claim_id: "clm_..."`. */
export const CLAIM_ID_PREFIX = 'clm_';

/** Spec section 8. */
export const LIST_DEFAULT_LIMIT = 20;
export const LIST_MAX_LIMIT = 100;
export const TRACKING_CODE_LENGTH = 10;

export const PaymentMode = {
  cashOnDelivery: 'cash_on_delivery',
  prepaid: 'prepaid',
  depositThenBalance: 'deposit_then_balance',
  businessAccount: 'business_account',
} as const;
export type PaymentMode = (typeof PaymentMode)[keyof typeof PaymentMode];

// ---------------------------------------------------------------------------------------------------
// Requests (what we WRITE: spec spellings)

export interface WireCoords {
  lat: number;
  lng: number;
}
export interface WirePlace {
  /** The NEIGHBOURHOOD, never the city name (spec section 1). */
  city: string;
  address: string;
  coords?: WireCoords;
}
export interface WireQuoteRequest {
  pickup: WirePlace;
  dropoff: WirePlace;
  parcel?: { weight_kg?: number };
  payment_mode?: PaymentMode; // UNCONFIRMED name
}
export interface WireCreateShipmentRequest {
  quote_id: string;
  external_order_id: string;
  /** Spelled as the spec names it. Must be set for cash on delivery. */
  orderAmountXof?: number;
}
export interface WireMarkReadyRequest {
  by: string;
}
export interface WireCancelRequest {
  reason: string;
  by: string;
}
export interface WireOpenDisputeRequest {
  reason: string;
  description: string;
  claimant_id: string;
  claimant_type?: string;
}
export interface WireSimulatePriceRequest {
  pickup_city: string;
  dropoff_city: string;
  weight_kg?: number;
}

// ---------------------------------------------------------------------------------------------------
// Responses (what we READ). The spellings come from the shop's wire profile (src/adapters/dispatch-api/profile.ts):
// unknown extra fields are ignored, an optional field that is missing or of an unexpected type is left
// out, and a reader fails only when a field Relais needs is missing, naming it and the spellings tried.

// The readers produce the port's own shapes (src/domain/delivery.ts): the use-cases read those, never these names.
export type WireBreakdown = QuoteBreakdown;
export type WireQuote = Quote;
export type WireShipment = Shipment;
export type WireHistoryEntry = ShipmentEvent;
export type WireShipmentList = ShipmentPage;
export type WireClaim = Claim;
export type WireTrackingView = TrackingView;
export type WirePriceSimulation = PriceSimulation;

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const whole = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);
const finite = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const record = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** Leaves out the keys whose value is undefined, so records compare and serialise cleanly. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Called by a reader when a field Relais needs is absent; never returns. */
type Missing = (field: string) => never;
type Body = Record<string, unknown>;

/** A reader over the profile: a zod type, so the transport reports a failure the same way for every resource. */
function reader<T>(what: string, read: (body: Body, missing: Missing) => T): z.ZodType<T> {
  return z.unknown().transform((value, ctx): T => {
    const body = record(value);
    if (!body) {
      ctx.addIssue({ code: 'custom', message: `${what}: the body is not a JSON object` });
      return z.NEVER;
    }
    try {
      return read(body, (field) => {
        throw new MissingField(field);
      });
    } catch (error) {
      if (!(error instanceof MissingField)) throw error;
      ctx.addIssue({ code: 'custom', message: `${what} without ${error.field}` });
      return z.NEVER;
    }
  }) as unknown as z.ZodType<T>;
}

/** A needed field absent from a 2xx body, turned into a zod issue by `reader`: the same body fails again. */
class MissingField extends RelaisError {
  override readonly name = 'MissingField';
  constructor(readonly field: string) {
    super({ failure: 'permanent', message: field });
  }
}

function spellings(profile: WireProfile, key: FieldKey): string {
  return profile.document.fields[key].join(' or ');
}

function readHistory(value: unknown, profile: WireProfile): WireHistoryEntry[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.flatMap((entry) => {
    const e = record(entry);
    const status = text(e?.status) ?? text(e?.state);
    const at = text(e?.at) ?? text(e?.occurred_at);
    if (!status || !at) return [];
    const step = profile.stepOf(status);
    return [step === undefined ? { status, at } : { status, at, step }];
  });
}

export interface WireReaders {
  quote: z.ZodType<WireQuote>;
  shipment: z.ZodType<WireShipment>;
  shipmentList: z.ZodType<WireShipmentList>;
  claim: z.ZodType<WireClaim>;
  claimList: z.ZodType<WireClaim[]>;
  trackingView: z.ZodType<WireTrackingView>;
  priceSimulation: z.ZodType<WirePriceSimulation>;
}

function quoteReader(profile: WireProfile): (body: Body, missing: Missing) => WireQuote {
  const f = (body: unknown, key: FieldKey) => profile.field(body, key);
  return (body, missing) => {
    const breakdownBody = record(f(body, 'breakdown'));
    const breakdown = breakdownBody
      ? defined({
          customer: whole(f(breakdownBody, 'breakdownCustomer')),
          courier: whole(f(breakdownBody, 'breakdownCourier')),
          platform: whole(f(breakdownBody, 'breakdownPlatform')),
          codFee: whole(f(breakdownBody, 'breakdownCodFee')),
        })
      : undefined;
    return defined({
      quoteId: text(f(body, 'quoteId')) ?? missing(spellings(profile, 'quoteId')),
      expiresAt: text(f(body, 'quoteExpiry')) ?? missing(spellings(profile, 'quoteExpiry')),
      total: whole(f(body, 'quoteTotal')) ?? missing(`${spellings(profile, 'quoteTotal')} (whole XOF)`),
      breakdown,
      currency: text(body.currency),
      pickupZone: text(body.pickup_zone),
      dropoffZone: text(body.dropoff_zone),
      distanceKm: finite(body.distance_km),
      pricingBasis: text(body.pricing_basis),
    });
  };
}

function shipmentReader(profile: WireProfile): (body: Body, missing: Missing) => WireShipment {
  const f = (body: unknown, key: FieldKey) => profile.field(body, key);
  return (body, missing) => {
    const shipmentId = text(f(body, 'shipmentId')) ?? missing(spellings(profile, 'shipmentId'));
    const status = text(f(body, 'status')) ?? missing(spellings(profile, 'status'));
    return defined({
      shipmentId,
      externalOrderId: text(f(body, 'externalOrderId')),
      quoteId: text(body.quote_id) ?? text(body.quoteId),
      status,
      step: profile.stepOf(status),
      publicTrackingUrl: text(f(body, 'trackingUrl')),
      trackingCode: text(f(body, 'trackingCode')),
      orderAmountXof: whole(f(body, 'orderAmount')),
      courierId: text(body.courier_id),
      settlementStatus: text(body.settlement_status),
      settlementHeld: profile.settlementHeld(text(body.settlement_status)) || undefined,
      createdAt: text(body.created_at),
      updatedAt: text(body.updated_at),
      statusHistory: readHistory(f(body, 'statusHistory'), profile),
    });
  };
}

/** Claims are spelled as the emulator answers them; the profile names none of their fields. */
function readClaim(body: Body, missing: Missing): WireClaim {
  return defined({
    claimId: text(body.claim_id) ?? text(body.id),
    shipmentId: text(body.shipment_id),
    reason: text(body.reason) ?? missing('reason'),
    description: text(body.description),
    claimantId: text(body.claimant_id),
    claimantType: text(body.claimant_type),
    status: text(body.status),
    outcome: text(body.outcome),
    createdAt: text(body.created_at),
    decidedAt: text(body.decided_at),
  });
}

const readersByProfile = new WeakMap<WireProfile, WireReaders>();

/** The readers of every resource, spelled as `profile` says (built once per profile). */
export function wireReaders(profile: WireProfile): WireReaders {
  const cached = readersByProfile.get(profile);
  if (cached) return cached;
  const f = (body: unknown, key: FieldKey) => profile.field(body, key);
  const readShipment = shipmentReader(profile);

  const readers: WireReaders = {
    quote: reader('quote', quoteReader(profile)),
    shipment: reader('shipment', readShipment),
    shipmentList: reader('shipment list', (body, missing) => {
      if (!Array.isArray(body.shipments)) missing('shipments');
      const shipments = (body.shipments as unknown[]).map((item, i) => {
        const entry = record(item) ?? missing(`shipments.${i}`);
        return readShipment(entry, (field) => missing(`shipments.${i}: ${field}`));
      });
      return defined({ shipments, nextCursor: text(f(body, 'nextCursor')) });
    }),
    claim: reader('claim', readClaim),
    claimList: reader('claim list', (body, missing) => {
      if (!Array.isArray(body.data)) missing('data');
      return (body.data as unknown[]).flatMap((item) => {
        const entry = record(item);
        return entry && text(entry.reason) ? [readClaim(entry, missing)] : [];
      });
    }),
    trackingView: reader('tracking view', (body, missing) => ({
      ...defined({ trackingCode: text(f(body, 'trackingCode')) }),
      status: text(f(body, 'status')) ?? missing(spellings(profile, 'status')),
      events: readHistory(body.events, profile) ?? readHistory(f(body, 'statusHistory'), profile) ?? [],
    })),
    priceSimulation: reader('price simulation', (body, missing) => ({
      total: whole(f(body, 'simulatedTotal')) ?? missing(`${spellings(profile, 'simulatedTotal')} (whole XOF)`),
      currency: text(body.currency) ?? 'XOF',
    })),
  };
  readersByProfile.set(profile, readers);
  return readers;
}
