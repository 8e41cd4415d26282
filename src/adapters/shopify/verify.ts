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

export function verifyShopifyWebhook(input: {
  rawBody: Buffer;
  headers: IncomingHeaders;
  secret: string;
}): ShopifyVerification {
  const names = firstHeader(input.headers, EVENTS_HEADER.hmac) !== undefined ? EVENTS_HEADER : HEADER;
  // Each header looked up once: this runs on every webhook.
  const h = Object.fromEntries(
    Object.entries(names).map(([key, name]) => [key, firstHeader(input.headers, name)]),
  ) as Record<keyof typeof HEADER, string | undefined>;
  const missing = REQUIRED.filter((key) => h[key] === undefined).map((key) => names[key]);

  if (input.rawBody.length === 0 || !isUtf8(input.rawBody)) return { ok: false, reason: 'invalid_hmac' };
  // Without an HMAC header there is nothing to authenticate: report every absent header at once.
  if (h.hmac === undefined) return { ok: false, reason: 'missing_headers', missing };
  if (!signaturesMatch(hmacSha256Base64(input.secret, input.rawBody), h.hmac))
    return { ok: false, reason: 'invalid_hmac' };
  if (missing.length > 0) return { ok: false, reason: 'missing_headers', missing };
  return {
    ok: true,
    topic: h.topic!,
    shopDomain: h.shopDomain!,
    webhookId: h.webhookId!,
    apiVersion: h.apiVersion!,
    ...optional('eventId', h.eventId),
    ...optional('triggeredAt', h.triggeredAt),
  };
}

/**
 * The library's header lookup: the first value of the first header whose name matches case-insensitively;
 * an empty value counts as absent (the library tests `!value`).
 */
function firstHeader(headers: IncomingHeaders, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const key in headers) {
    if (key.length !== wanted.length || key.toLowerCase() !== wanted) continue;
    const value = headers[key];
    if (value === undefined) continue;
    const first = Array.isArray(value) ? value[0] : value;
    return first === '' ? undefined : first;
  }
  return undefined;
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}
