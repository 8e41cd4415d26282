/**
 * Delivery webhooks from the dispatch service, read for the delivery port (DeliveryService.readWebhook). The spec
 * shows neither their shape nor how they are signed: the shop's wire profile names the signature header, its
 * prefix, encoding and algorithm, and where the ids and the state sit.
 *
 * The body is parsed as the shop routes' bodies are (parseJson, src/shops/platforms/common.ts: the same 64-level depth
 * limit; the size limit is the web process's, for all of /webhooks). The payload is only a hint: the ids are read
 * where the profile says they sit, else looked for wherever they sit, and the worker re-reads the shipment before
 * changing anything. So a forged or replayed webhook can at worst cause one extra read.
 */
import type { DeliveryWebhookReading, IncomingDeliveryWebhook } from '../../domain/delivery.js';
import { parseJson } from '../../shops/platforms/common.js';
import type { WireProfile } from './profile.js';
import { ID_PREFIX } from './wire.js';

/** Verifies (when the shop has a signing secret), parses and reads one webhook through `profile`. */
export function readDeliveryWebhook(
  profile: WireProfile,
  signingSecret: string | undefined,
  webhook: IncomingDeliveryWebhook,
): DeliveryWebhookReading {
  if (signingSecret !== undefined) {
    const given = webhook.header(profile.signatureHeader);
    if (given === undefined) return { kind: 'unsigned', header: profile.signatureHeader };
    if (!profile.verify(webhook.rawBody, given, signingSecret))
      return { kind: 'bad_signature', header: profile.signatureHeader };
  }
  const payload = parseJson(webhook.rawBody);
  if (payload === undefined) return { kind: 'malformed' };
  // Where the profile says the ids sit first; then anywhere (the service may send more than one shape).
  const { shipmentId, externalOrderId, state } = profile.webhookReference(payload);
  const found = {
    ...findShipmentReference(payload),
    ...(shipmentId ? { shipmentId } : {}),
    ...(externalOrderId ? { externalOrderId } : {}),
  };
  if (!found.shipmentId && !found.externalOrderId) return { kind: 'no_reference' };
  const step = state === undefined ? undefined : profile.stepOf(state);
  return {
    kind: 'reference',
    readByProfile: (shipmentId !== undefined || externalOrderId !== undefined) && state !== undefined,
    ...found,
    ...(state === undefined ? {} : { state }),
    ...(step === undefined ? {} : { step }),
  };
}

const SHIPMENT_KEYS = ['shipment_id', 'shipmentId', 'shipment', 'id'];
const EXTERNAL_KEYS = ['external_order_id', 'externalOrderId'];

/** Looks through any JSON shape (bounded depth) for a shp_ id and an external order id. */
export function findShipmentReference(payload: unknown, depth = 0): { shipmentId?: string; externalOrderId?: string } {
  if (depth > 5 || payload === null || typeof payload !== 'object') return {};
  const found: { shipmentId?: string; externalOrderId?: string } = {};
  const entries = Array.isArray(payload) ? payload.map((v, i) => [String(i), v] as const) : Object.entries(payload);
  for (const [key, value] of entries) {
    if (typeof value === 'string') {
      if (
        !found.shipmentId &&
        value.startsWith(ID_PREFIX.shipment) &&
        (SHIPMENT_KEYS.includes(key) || /^shp_[A-Za-z0-9_-]+$/.test(value))
      ) {
        found.shipmentId = value;
      }
      if (!found.externalOrderId && EXTERNAL_KEYS.includes(key)) found.externalOrderId = value;
    }
  }
  for (const [, value] of entries) {
    if (found.shipmentId && found.externalOrderId) break;
    if (value && typeof value === 'object') {
      const nested = findShipmentReference(value, depth + 1);
      found.shipmentId ??= nested.shipmentId;
      found.externalOrderId ??= nested.externalOrderId;
    }
  }
  return found;
}
