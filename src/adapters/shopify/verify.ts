/**
 * Shopify webhook verification: the rule of @shopify/shopify-api's `webhooks.validate()`
 * (lib/webhooks/validate.ts and lib/utils/hmac-validator.ts, version 15), done in place with node:crypto.
 *
 * Why not call the library on each request: it canonicalises every header of the request twice and signs
 * through WebCrypto, and the receiver benchmark (bench/receiver.bench.ts) showed that cost as the largest
 * share of the endpoint's CPU. The rule itself is small, and `verify.test.ts` holds this module to the
 * library's verdict on generated deliveries (a differential property test), so the two cannot drift apart
 * unnoticed when the library is upgraded.
 *
 * The rule, as the library applies it:
 *  - the newer unprefixed `shopify-*` ("events") headers are used when `shopify-hmac-sha256` is present,
 *    else the classic `X-Shopify-*` ones; header names compare case-insensitively and the first value of a
 *    repeated header counts;
 *  - an empty body is refused first (`missing_body`; Shopify never sends one, so we report it as
 *    `invalid_hmac`). Bytes that are not valid UTF-8 could not have been signed as sent (the library signs
 *    the body as a string) and are refused the same way;
 *  - the HMAC is base64(HMAC-SHA256(secret, body)), compared in constant time;
 *  - only after a valid HMAC are the other required headers checked (topic, shop domain, API version,
 *    webhook id), so a sender who cannot sign learns nothing about them. When the HMAC header itself is
 *    absent the library only says `missing_hmac`; we list every absent required header at once.
 *
 * The result exposes the topic exactly as Shopify sent it (`orders/create`), not the library's storage
 * form (`ORDERS_CREATE`).
 */
import { isUtf8 } from 'node:buffer';
import { hmacSha256Base64, signaturesMatch, type IncomingHeaders } from '../../shops/platforms/common.js';

export type ShopifyVerification =
  | {
      ok: true;
      topic: string;
      shopDomain: string;
      eventId?: string;
      webhookId: string;
      apiVersion?: string;
      triggeredAt?: string;
    }
  | { ok: false; reason: 'missing_headers' | 'invalid_hmac'; missing?: string[] };

/** Classic webhook headers. The library also knows the newer unprefixed `shopify-*` "events" headers. */
const HEADER = {
  hmac: 'X-Shopify-Hmac-Sha256',
  topic: 'X-Shopify-Topic',
  shopDomain: 'X-Shopify-Shop-Domain',
  apiVersion: 'X-Shopify-API-Version',
  webhookId: 'X-Shopify-Webhook-Id',
  eventId: 'X-Shopify-Event-Id',
  triggeredAt: 'X-Shopify-Triggered-At',
} as const;
const EVENTS_HEADER = {
  hmac: 'shopify-hmac-sha256',
  topic: 'shopify-topic',
  shopDomain: 'shopify-shop-domain',
  apiVersion: 'shopify-api-version',
  webhookId: 'shopify-webhook-id',
  eventId: 'shopify-event-id',
  triggeredAt: 'shopify-triggered-at',
} as const;
const REQUIRED = ['hmac', 'topic', 'shopDomain', 'apiVersion', 'webhookId'] as const;
type Field = keyof typeof HEADER;
const FIELDS = Object.keys(HEADER) as Field[];
/** Each field's position in FIELDS. */
const AT = Object.fromEntries(FIELDS.map((field, index) => [field, index])) as Record<Field, number>;
/**
 * Every header name either set uses, lower-cased, to its slot: the field's position in FIELDS, plus FIELDS.length
 * for the events set. Built once, so a webhook's headers are read in one pass without building a lookup of its own.
 */
const SLOT = new Map<string, number>(
  [HEADER, EVENTS_HEADER].flatMap((names, set) =>
    FIELDS.map((field, index) => [names[field].toLowerCase(), set * FIELDS.length + index] as const),
  ),
);

export function verifyShopifyWebhook(input: {
  rawBody: Buffer;
  headers: IncomingHeaders;
  secret: string;
}): ShopifyVerification {
  const found = readHeaders(input.headers);
  const events = found[FIELDS.length + AT.hmac] !== undefined;
  // Where the set in use starts in `found` (read by index, not through a closure made per webhook).
  const at = events ? FIELDS.length : 0;
  const hmac = found[at + AT.hmac];

  if (input.rawBody.length === 0 || !isUtf8(input.rawBody)) return { ok: false, reason: 'invalid_hmac' };
  // Without an HMAC header there is nothing to authenticate: report every absent header at once.
  if (hmac === undefined) return missingHeaders(found, events);
  if (!signaturesMatch(hmacSha256Base64(input.secret, input.rawBody), hmac))
    return { ok: false, reason: 'invalid_hmac' };
  const topic = found[at + AT.topic];
  const shopDomain = found[at + AT.shopDomain];
  const apiVersion = found[at + AT.apiVersion];
  const webhookId = found[at + AT.webhookId];
  if (topic === undefined || shopDomain === undefined || apiVersion === undefined || webhookId === undefined)
    return missingHeaders(found, events);
  const verified: ShopifyVerification = { ok: true, topic, shopDomain, webhookId, apiVersion };
  const eventId = found[at + AT.eventId];
  const triggeredAt = found[at + AT.triggeredAt];
  if (eventId !== undefined) verified.eventId = eventId;
  if (triggeredAt !== undefined) verified.triggeredAt = triggeredAt;
  return verified;
}

/** The refusal listing every required header of the set in use that the delivery lacks. */
function missingHeaders(found: (string | undefined)[], events: boolean): ShopifyVerification {
  const names = events ? EVENTS_HEADER : HEADER;
  const at = events ? FIELDS.length : 0;
  const missing = REQUIRED.filter((field) => found[at + AT[field]] === undefined).map((field) => names[field]);
  return { ok: false, reason: 'missing_headers', missing };
}

/**
 * The library's header lookup for every field of both sets in one pass over the request's headers: for each, the
 * first value of the first header whose name matches case-insensitively; an empty value counts as absent (the
 * library tests `!value`). Node hands the names lower-cased, so a name is lower-cased here only when it is not found
 * as it is.
 */
function readHeaders(headers: IncomingHeaders): (string | undefined)[] {
  const found: (string | undefined)[] = new Array<string | undefined>(2 * FIELDS.length).fill(undefined);
  let decided = 0;
  for (const key in headers) {
    const slot = SLOT.get(key) ?? SLOT.get(key.toLowerCase());
    if (slot === undefined || (decided & (1 << slot)) !== 0) continue;
    const value = headers[key];
    if (value === undefined) continue;
    decided |= 1 << slot;
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== '') found[slot] = first;
  }
  return found;
}
