/**
 * WooCommerce webhook verification (WC_Webhook::deliver and ::deliver_ping in WooCommerce core).
 *
 * Two kinds of request reach a WooCommerce webhook URL:
 *  - the creation ping: `webhook_id=<id>` form-urlencoded, with no X-WC-Webhook-* header and NO signature.
 *    WooCommerce only activates the webhook if it gets a 200, so it must be accepted unsigned. Because anyone
 *    can send it, a ping proves nothing: the receiver answers 200 and does nothing else with it;
 *  - a delivery: the JSON body signed with `X-WC-Webhook-Signature` = base64(HMAC-SHA256(key, raw body)),
 *    where WooCommerce's key is `wp_specialchars_decode(secret, ENT_QUOTES)` (see wooSigningKey).
 */
import { headerValue, hmacSha256Base64, signaturesMatch, type IncomingHeaders } from '../../shops/platforms/common.js';

export type WooVerification =
  | { ok: true; kind: 'ping'; webhookId: string }
  | {
      ok: true;
      kind: 'delivery';
      topic: string;
      resource: string;
      event: string;
      webhookId?: string;
      deliveryId?: string;
      source?: string;
    }
  | { ok: false; reason: 'missing_headers' | 'invalid_signature' | 'malformed_ping'; missing?: string[] };

const HEADER = {
  signature: 'X-WC-Webhook-Signature',
  topic: 'X-WC-Webhook-Topic',
  resource: 'X-WC-Webhook-Resource',
  event: 'X-WC-Webhook-Event',
  webhookId: 'X-WC-Webhook-ID',
  deliveryId: 'X-WC-Webhook-Delivery-ID',
  source: 'X-WC-Webhook-Source',
} as const;
/** WooCommerce always sends all seven; resource and event can be derived from the topic, the rest cannot. */
const REQUIRED = ['signature', 'topic'] as const;

const PING_BODY = /^webhook_id=(\d{1,20})$/;

export function verifyWooWebhook(input: {
  rawBody: Buffer;
  headers: IncomingHeaders;
  secret: string;
  contentType?: string;
}): WooVerification {
  const read = (key: keyof typeof HEADER) => headerValue(input.headers, HEADER[key]);
  const hasAnyWooHeader = Object.keys(input.headers).some((name) => name.toLowerCase().startsWith('x-wc-webhook-'));

  if (!hasAnyWooHeader && startsWithPingField(input.rawBody)) return readPing(input.rawBody, input.contentType);

  const missing = REQUIRED.filter((key) => read(key) === undefined).map((key) => HEADER[key]);
  if (missing.length > 0) return { ok: false, reason: 'missing_headers', missing };

  const expected = hmacSha256Base64(wooSigningKey(input.secret), input.rawBody);
  if (!signaturesMatch(expected, read('signature') ?? '')) return { ok: false, reason: 'invalid_signature' };

  const topic = read('topic') ?? '';
  const [topicResource = '', topicEvent = ''] = splitTopic(topic);
  const webhookId = read('webhookId');
  const deliveryId = read('deliveryId');
  const source = read('source');
  return {
    ok: true,
    kind: 'delivery',
    topic,
    resource: read('resource') ?? topicResource,
    event: read('event') ?? topicEvent,
    ...(webhookId === undefined ? {} : { webhookId }),
    ...(deliveryId === undefined ? {} : { deliveryId }),
    ...(source === undefined ? {} : { source }),
  };
}

function startsWithPingField(rawBody: Buffer): boolean {
  return rawBody.subarray(0, 'webhook_id='.length).toString('latin1') === 'webhook_id=';
}

/**
 * WordPress posts the ping body as a string, which curl sends as application/x-www-form-urlencoded; a filter
 * may drop the content type, so its absence is accepted, but a different one (JSON, multipart) is not a ping.
 */
function readPing(rawBody: Buffer, contentType: string | undefined): WooVerification {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== undefined && mediaType !== '' && mediaType !== 'application/x-www-form-urlencoded') {
    return { ok: false, reason: 'malformed_ping' };
  }
  const match = PING_BODY.exec(rawBody.toString('latin1').trim());
  const webhookId = match?.[1];
  if (webhookId === undefined || /^0+$/.test(webhookId)) return { ok: false, reason: 'malformed_ping' };
  return { ok: true, kind: 'ping', webhookId: String(BigInt(webhookId)) };
}

function splitTopic(topic: string): [string, string] | [] {
  const dot = topic.indexOf('.');
  return dot <= 0 ? [] : [topic.slice(0, dot), topic.slice(dot + 1)];
}

/**
 * WooCommerce signs with `wp_specialchars_decode($secret, ENT_QUOTES)`, not the stored secret: a secret typed
 * with `&amp;` or `&#039;` is signed with `&` or `'`. This decodes the same entities in one pass, as WordPress's
 * `strtr` does (so `&amp;lt;` becomes `&lt;`, not `<`); a secret without `&` is unchanged.
 */
const WP_SPECIALCHARS = /&(#0*39|#[xX]0*27|quot|#0*34|#[xX]0*22|lt|#0*60|gt|#0*62|amp|#0*38|#[xX]0*26);/g;

export function wooSigningKey(secret: string): string {
  if (!secret.includes('&')) return secret;
  return secret.replace(WP_SPECIALCHARS, (_entity, name: string) => {
    if (name === 'quot') return '"';
    if (name === 'lt') return '<';
    if (name === 'gt') return '>';
    if (name === 'amp') return '&';
    const code =
      name.startsWith('#x') || name.startsWith('#X') ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
    return String.fromCharCode(code);
  });
}
