/**
 * Every wire name of the dispatch service, in one module.
 *
 * The spec (docs/dispatch-api-spec.md) names some fields and leaves the rest "not shown". It also
 * contradicts itself: it says every body is snake_case, yet names `expiresAt`, `publicTrackingUrl` and
 * `orderAmountXof`. The rule we follow:
 *   - when WRITING, use the spelling the spec names (`orderAmountXof`, `quote_id`, `external_order_id`, ...);
 *   - when READING, accept both spellings (`expiresAt` or `expires_at`, ...) and ignore unknown fields;
 *   - every name the spec does not confirm is marked UNCONFIRMED here, so that when the real service
 *     shows its hand, this is the only file to change.
 *
 * The emulator (src/emulators/dispatch) writes responses with the same names, so the two can never
 * silently disagree. It can also answer in the "other" spelling to prove the client reads both.
 */
import { z } from 'zod';

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

/** Error codes. Only SANDBOX_KEY_NOT_SUPPORTED is confirmed by the spec; the rest are UNCONFIRMED. */
export const ErrorCode = {
  SANDBOX_KEY_NOT_SUPPORTED: 'SANDBOX_KEY_NOT_SUPPORTED',
  UNAUTHORIZED: 'UNAUTHORIZED', // UNCONFIRMED
  QUOTE_NOT_FOUND: 'QUOTE_NOT_FOUND', // UNCONFIRMED (spec: 404, code not shown)
  QUOTE_EXPIRED: 'QUOTE_EXPIRED', // UNCONFIRMED (spec: "refused", status and code not shown)
  SHIPMENT_NOT_FOUND: 'SHIPMENT_NOT_FOUND', // UNCONFIRMED
  CANCEL_NOT_ALLOWED: 'CANCEL_NOT_ALLOWED', // UNCONFIRMED (spec: "refused" after pickup)
  INVALID_STATE: 'INVALID_STATE', // UNCONFIRMED: e.g. markReady on a cancelled shipment
  VALIDATION_ERROR: 'VALIDATION_ERROR', // UNCONFIRMED
  MALFORMED_JSON: 'MALFORMED_JSON', // UNCONFIRMED
  RATE_LIMITED: 'RATE_LIMITED', // UNCONFIRMED (429)
  INTERNAL_ERROR: 'INTERNAL_ERROR', // UNCONFIRMED (5xx)
  NOT_FOUND: 'NOT_FOUND', // UNCONFIRMED (unknown route)
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE', // UNCONFIRMED (413: body over the size limit)
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE', // UNCONFIRMED (415: body not JSON / unknown charset)
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * UNCONFIRMED error body: `{ "code": "...", "message": "..." }`. Readers also accept
 * `{ "error": { "code", "message" } }` and `{ "error": "CODE" }`.
 */
export const errorBodySchema = z
  .object({
    code: z.string().optional(),
    message: z.string().optional(),
    error: z.union([z.string(), z.object({ code: z.string().optional(), message: z.string().optional() }).loose()]).optional(),
  })
  .loose()
  .transform((b) => {
    const nested = typeof b.error === 'object' ? b.error : undefined;
    return {
      code: b.code ?? nested?.code ?? (typeof b.error === 'string' ? b.error : undefined),
      message: b.message ?? nested?.message,
    };
  });

/**
 * Shipment states. The spec names only DELIVERED; the rest are UNCONFIRMED and are what the emulator
 * uses. Relais maps states through an extendable table (src/domain/shipment-status.ts) and keeps an
 * unknown state as it came, so this list is informative, not a closed set.
 */
export const KNOWN_SHIPMENT_STATES = [
  'CREATED', // created, not marked ready: no courier is offered the run
  'READY', // marked ready: in the assignment queue
  'ASSIGNED', // a courier accepted the run
  'PICKED_UP', // the parcel left the pickup point: cancel is refused from here on
  'IN_TRANSIT',
  'OUT_FOR_DELIVERY',
  'DELIVERED', // confirmed by the spec
  'DELIVERY_FAILED', // an attempt failed; the courier brings it back
  'RETURNED', // back at the pickup point
  'CANCELLED',
] as const;

/** UNCONFIRMED: the field that carries the payment mode in a quote request ("not shown" in the spec). */
export const PAYMENT_MODE_FIELD = 'payment_mode';
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
// Responses (what we READ: both spellings, unknown fields ignored)

const int = z.number().int();
const optionalString = z.string().nullish().transform((v) => v ?? undefined);

/** UNCONFIRMED breakdown names: customer, courier, platform, cod_fee (camelCase read too). */
const breakdownSchema = z
  .object({
    customer: int.optional(),
    courier: int.optional(),
    platform: int.optional(),
    cod_fee: int.optional(),
    codFee: int.optional(),
  })
  .loose()
  .transform((b) => ({ customer: b.customer, courier: b.courier, platform: b.platform, codFee: b.cod_fee ?? b.codFee }));

export const quoteSchema = z
  .object({
    quote_id: z.string().optional(),
    quoteId: z.string().optional(),
    expiresAt: z.string().optional(), // spec spelling
    expires_at: z.string().optional(),
    total: int.optional(), // UNCONFIRMED
    total_xof: int.optional(),
    breakdown: breakdownSchema.optional(),
    currency: optionalString, // UNCONFIRMED ("XOF")
    pickup_zone: optionalString, // UNCONFIRMED: the tariff zone the pickup neighbourhood fell in
    dropoff_zone: optionalString, // UNCONFIRMED
    distance_km: z.number().nullish(), // UNCONFIRMED: present when priced by coordinates
  })
  .loose()
  .transform((q, ctx) => {
    const quoteId = q.quote_id ?? q.quoteId;
    const expiresAt = q.expiresAt ?? q.expires_at;
    const total = q.total ?? q.total_xof;
    if (!quoteId || !expiresAt || total === undefined) {
      ctx.addIssue({ code: 'custom', message: 'quote without quote_id, expiry or total' });
      return z.NEVER;
    }
    return {
      quoteId,
      expiresAt,
      total,
      breakdown: q.breakdown,
      currency: q.currency,
      pickupZone: q.pickup_zone,
      dropoffZone: q.dropoff_zone,
      distanceKm: q.distance_km ?? undefined,
    };
  });

export const shipmentSchema = z
  .object({
    shipment_id: z.string().optional(),
    shipmentId: z.string().optional(),
    external_order_id: optionalString,
    externalOrderId: optionalString,
    quote_id: optionalString,
    quoteId: optionalString,
    status: z.string(),
    publicTrackingUrl: optionalString, // spec spelling
    public_tracking_url: optionalString,
    tracking_code: optionalString, // UNCONFIRMED ("tracking code" in the spec)
    trackingCode: optionalString,
    orderAmountXof: int.nullish(),
    order_amount_xof: int.nullish(),
    courier_id: optionalString, // UNCONFIRMED
    settlement_status: optionalString, // UNCONFIRMED: e.g. HELD while a claim is open (spec 3.4)
    created_at: optionalString, // UNCONFIRMED
    updated_at: optionalString, // UNCONFIRMED
    status_history: z
      .array(z.object({ status: z.string(), at: z.string() }).loose())
      .optional(), // UNCONFIRMED
  })
  .loose()
  .transform((s, ctx) => {
    const shipmentId = s.shipment_id ?? s.shipmentId;
    if (!shipmentId) {
      ctx.addIssue({ code: 'custom', message: 'shipment without shipment_id' });
      return z.NEVER;
    }
    return {
      shipmentId,
      externalOrderId: s.external_order_id ?? s.externalOrderId,
      quoteId: s.quote_id ?? s.quoteId,
      status: s.status,
      publicTrackingUrl: s.publicTrackingUrl ?? s.public_tracking_url,
      trackingCode: s.tracking_code ?? s.trackingCode,
      orderAmountXof: s.orderAmountXof ?? s.order_amount_xof ?? undefined,
      courierId: s.courier_id,
      settlementStatus: s.settlement_status,
      createdAt: s.created_at,
      updatedAt: s.updated_at,
      statusHistory: s.status_history?.map((h) => ({ status: h.status, at: h.at })),
    };
  });

export const shipmentListSchema = z
  .object({
    shipments: z.array(shipmentSchema),
    next_cursor: z.string().nullish(),
    nextCursor: z.string().nullish(),
  })
  .loose()
  .transform((l) => ({ shipments: l.shipments, nextCursor: l.next_cursor ?? l.nextCursor ?? undefined }));

/** Claim: the request fields are confirmed; claim_id, status, outcome and created_at are UNCONFIRMED. */
export const claimSchema = z
  .object({
    claim_id: optionalString,
    id: optionalString,
    shipment_id: optionalString,
    reason: z.string(),
    description: z.string().optional(),
    claimant_id: optionalString,
    claimant_type: optionalString,
    status: optionalString, // UNCONFIRMED: OPEN | COMPENSATED | REJECTED
    outcome: optionalString, // UNCONFIRMED: free text of the decision
    created_at: optionalString,
    decided_at: optionalString,
  })
  .loose()
  .transform((c) => ({
    claimId: c.claim_id ?? c.id,
    shipmentId: c.shipment_id,
    reason: c.reason,
    description: c.description,
    claimantId: c.claimant_id,
    claimantType: c.claimant_type,
    status: c.status,
    outcome: c.outcome,
    createdAt: c.created_at,
    decidedAt: c.decided_at,
  }));

export const claimListSchema = z.object({ data: z.array(claimSchema) }).loose().transform((l) => l.data);

/** TrackingView: fields not shown by the spec; everything here is UNCONFIRMED. No personal data. */
export const trackingViewSchema = z
  .object({
    tracking_code: optionalString,
    trackingCode: optionalString,
    status: z.string(),
    events: z.array(z.object({ status: z.string(), at: z.string() }).loose()).optional(),
  })
  .loose()
  .transform((t) => ({ trackingCode: t.tracking_code ?? t.trackingCode, status: t.status, events: t.events ?? [] }));

/** PriceSimulation: fields not shown; `total` (or `price`) in XOF is UNCONFIRMED. No identifier. */
export const priceSimulationSchema = z
  .object({ total: int.optional(), price: int.optional(), currency: z.string().optional() })
  .loose()
  .transform((p, ctx) => {
    const total = p.total ?? p.price;
    if (total === undefined) {
      ctx.addIssue({ code: 'custom', message: 'price simulation without total' });
      return z.NEVER;
    }
    return { total, currency: p.currency ?? 'XOF' };
  });

export type WireQuote = z.output<typeof quoteSchema>;
export type WireShipment = z.output<typeof shipmentSchema>;
export type WireShipmentList = z.output<typeof shipmentListSchema>;
export type WireClaim = z.output<typeof claimSchema>;
export type WireTrackingView = z.output<typeof trackingViewSchema>;
export type WirePriceSimulation = z.output<typeof priceSimulationSchema>;

// ---------------------------------------------------------------------------------------------------
// Delivery webhooks (spec section 6: kinds, payload, signing and retries are all "not shown").
// Relais treats a webhook as a hint and re-reads the shipment; the emulator sends this UNCONFIRMED shape:
//   POST <org webhook url>  { "event": "shipment.status_changed", "shipment_id", "external_order_id",
//                             "status", "occurred_at" }
//   header X-Dispatch-Signature: sha256=<hex HMAC-SHA256 of the raw body with the org's webhook secret>
export const WEBHOOK_SIGNATURE_HEADER = 'X-Dispatch-Signature'; // UNCONFIRMED
export const WEBHOOK_EVENT_STATUS_CHANGED = 'shipment.status_changed'; // UNCONFIRMED
