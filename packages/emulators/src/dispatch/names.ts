/**
 * The emulator's own, canonical names, and their translation into a wire profile's dialect.
 *
 * Inside, the emulator always thinks in these names (one state per delivery step, one code per kind of
 * refusal): the store, the courier, the history and the programmatic API (shipments(), the admin
 * endpoints) use them. On the wire it speaks whatever profile it was given (src/adapters/dispatch-api/profile.ts):
 * state names through stateFor(step), error codes through codeFor(meaning), the webhook's header and
 * body through the profile. The translation happens at the edges only (serialize.ts, http-errors.ts,
 * webhooks.ts, the status filter of listShipments), through the helpers below.
 *
 * These names happen to be today's guesses (config/dispatch-profiles/default.json): with the default
 * profile the emulator answers exactly what it answered before profiles existed.
 */
import type { DeliveryStep, ErrorMeaning, WireProfile } from '../relais.js';

/** The emulator's kinds of refusal. Only SANDBOX_KEY_NOT_SUPPORTED is confirmed by the spec. */
export const ErrorCode = {
  SANDBOX_KEY_NOT_SUPPORTED: 'SANDBOX_KEY_NOT_SUPPORTED',
  UNAUTHORIZED: 'UNAUTHORIZED',
  QUOTE_NOT_FOUND: 'QUOTE_NOT_FOUND', // spec: 404, code not shown
  QUOTE_EXPIRED: 'QUOTE_EXPIRED', // spec: "refused", status and code not shown
  SHIPMENT_NOT_FOUND: 'SHIPMENT_NOT_FOUND',
  CANCEL_NOT_ALLOWED: 'CANCEL_NOT_ALLOWED', // spec: "refused" after pickup
  INVALID_STATE: 'INVALID_STATE', // e.g. markReady on a cancelled shipment
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  MALFORMED_JSON: 'MALFORMED_JSON',
  RATE_LIMITED: 'RATE_LIMITED', // 429
  INTERNAL_ERROR: 'INTERNAL_ERROR', // 5xx
  NOT_FOUND: 'NOT_FOUND', // unknown route
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE', // 413: body over the size limit
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE', // 415: body not JSON / unknown charset
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** What each refusal means, so that the profile can name it in its own words. */
export const ERROR_MEANING: Readonly<Record<ErrorCode, ErrorMeaning>> = {
  SANDBOX_KEY_NOT_SUPPORTED: 'sandbox_key',
  UNAUTHORIZED: 'unauthorized',
  QUOTE_NOT_FOUND: 'quote_not_found',
  QUOTE_EXPIRED: 'quote_expired',
  SHIPMENT_NOT_FOUND: 'shipment_not_found',
  NOT_FOUND: 'route_not_found',
  CANCEL_NOT_ALLOWED: 'cancel_refused',
  INVALID_STATE: 'invalid_state',
  VALIDATION_ERROR: 'validation',
  MALFORMED_JSON: 'malformed_body',
  PAYLOAD_TOO_LARGE: 'payload_too_large',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
  RATE_LIMITED: 'rate_limited',
  INTERNAL_ERROR: 'service_error',
};

/** The code a profile answers for one of the emulator's refusals; the canonical code when the profile names none. */
export function wireErrorCode(profile: WireProfile, code: ErrorCode): string {
  return profile.codeFor(ERROR_MEANING[code]) ?? code;
}

/** The emulator's shipment states, one per delivery step (src/domain/shipment-status.ts DELIVERY_STEPS). */
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
export type ShipmentState = (typeof KNOWN_SHIPMENT_STATES)[number];

const STEP_OF_STATE: Readonly<Record<ShipmentState, DeliveryStep>> = {
  CREATED: 'created',
  READY: 'ready',
  ASSIGNED: 'assigned',
  PICKED_UP: 'picked_up',
  IN_TRANSIT: 'in_transit',
  OUT_FOR_DELIVERY: 'out_for_delivery',
  DELIVERED: 'delivered',
  DELIVERY_FAILED: 'delivery_failed',
  RETURNED: 'returned',
  CANCELLED: 'cancelled',
};
const STATE_OF_STEP = new Map<DeliveryStep, ShipmentState>(
  Object.entries(STEP_OF_STATE).map(([state, step]) => [step, state as ShipmentState]),
);

/** The name a profile gives one of the emulator's states. */
export function wireState(profile: WireProfile, state: ShipmentState): string {
  return profile.stateFor(STEP_OF_STATE[state]);
}

/** The emulator's state for a name in the profile's dialect (any of its names for a step), or undefined. */
export function stateFromWire(profile: WireProfile, name: string): ShipmentState | undefined {
  const step = profile.stepOf(name);
  return step === undefined ? undefined : STATE_OF_STEP.get(step);
}

/** The default profile's webhook signature header (read profile.signatureHeader for any other). */
export const WEBHOOK_SIGNATURE_HEADER = 'X-Dispatch-Signature';
/** The default profile's event name of a status change (the profile's webhook.event for any other). */
export const WEBHOOK_EVENT_STATUS_CHANGED = 'shipment.status_changed';
/** The default profile's field carrying the payment mode in a quote request (profile.document.requests.paymentModeField). */
export const PAYMENT_MODE_FIELD = 'payment_mode';
