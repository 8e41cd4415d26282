/**
 * Shopify webhook verification, done by Shopify's own library (`shopify.webhooks.validate`), so the header
 * set and the HMAC rule follow Shopify's reference implementation rather than our reading of the docs.
 *
 * How the library is fed (read in node_modules/@shopify/shopify-api/adapters/node/adapter.ts and
 * lib/webhooks/validate.ts):
 *  - the node adapter turns `rawRequest` into a normalised request by reading only `headers`, `method` and
 *    `originalUrl ?? url`; so a plain object with those three fields is a faithful `rawRequest`, and the
 *    caller (an Express route, a test) does not have to hand us its IncomingMessage;
 *  - `rawBody` must be a string: the library HMACs its UTF-8 encoding. Shopify always sends UTF-8 JSON, so we
 *    decode the raw bytes strictly; bytes that are not valid UTF-8 could not round-trip to the signed bytes
 *    and are refused as `invalid_hmac` (a lenient decode would sign different bytes from those received);
 *  - the HMAC is compared with the library's constant-time `safeCompare`;
 *  - the library checks the HMAC first and the other headers only after a valid HMAC; when the HMAC header
 *    itself is absent it only says `missing_hmac`, so we list every absent required header ourselves.
 *
 * The result exposes the topic exactly as Shopify sent it (`orders/create`), not the library's storage
 * form (`ORDERS_CREATE`).
 */
import '@shopify/shopify-api/adapters/node';
import { ApiVersion, LogSeverity, shopifyApi, type Shopify } from '@shopify/shopify-api';
import { headerValue, type IncomingHeaders } from '../common.js';

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

/**
 * The installed @shopify/shopify-api is 13.1.0 (package.json pins ^13.1.0), whose ApiVersion enum stops at
 * October26 and has no October26 (2026-10). `webhooks.validate()` never reads `apiVersion` (it checks the HMAC
 * and headers only), so the newest stable member is used; this instance makes no Admin API call.
 */
const LIBRARY_API_VERSION = ApiVersion.October26;

/** A secret maps to one library instance; bounded so a misbehaving registry cannot grow it without end. */
const MAX_CACHED_INSTANCES = 1000;
const instances = new Map<string, Shopify>();

function shopifyFor(secret: string): Shopify {
  const cached = instances.get(secret);
  if (cached) return cached;
  const shopify = shopifyApi({
    apiSecretKey: secret,
    apiKey: 'relais',
    scopes: [],
    hostName: 'relais.local',
    apiVersion: LIBRARY_API_VERSION,
    isEmbeddedApp: false,
    // Relais logs through pino; the library's console logger would print outside our redaction.
    logger: { level: LogSeverity.Error, log: () => undefined },
  });
  if (instances.size >= MAX_CACHED_INSTANCES) {
    const oldest = instances.keys().next();
    if (!oldest.done) instances.delete(oldest.value);
  }
  instances.set(secret, shopify);
  return shopify;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export async function verifyShopifyWebhook(input: {
  rawBody: Buffer;
  headers: IncomingHeaders;
  secret: string;
}): Promise<ShopifyVerification> {
  const names = headerValue(input.headers, EVENTS_HEADER.hmac) !== undefined ? EVENTS_HEADER : HEADER;
  const read = (key: keyof typeof HEADER) => headerValue(input.headers, names[key]);

  const missing = REQUIRED.filter((key) => read(key) === undefined).map((key) => names[key]);
  // Without an HMAC header there is nothing to authenticate: report every absent header at once.
  if (read('hmac') === undefined) return { ok: false, reason: 'missing_headers', missing };

  let rawBody: string;
  try {
    rawBody = strictUtf8.decode(input.rawBody);
  } catch {
    return { ok: false, reason: 'invalid_hmac' };
  }

  const result = await shopifyFor(input.secret).webhooks.validate({
    rawBody,
    rawRequest: { headers: definedHeaders(input.headers), method: 'POST', url: '/' },
  });

  if (!result.valid) {
    if (result.reason === 'missing_headers') {
      return { ok: false, reason: 'missing_headers', missing: 'missingHeaders' in result ? result.missingHeaders : missing };
    }
    // invalid_hmac, or missing_body: Shopify never sends an empty body, so an empty one is not authentic.
    return { ok: false, reason: 'invalid_hmac' };
  }

  return {
    ok: true,
    topic: read('topic') ?? result.topic,
    shopDomain: result.domain,
    webhookId: result.webhookId,
    apiVersion: result.apiVersion,
    ...optional('eventId', read('eventId')),
    ...optional('triggeredAt', read('triggeredAt')),
  };
}

/** The library's header canonicaliser does not expect undefined values; Node never produces them, tests may. */
function definedHeaders(headers: IncomingHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(headers)) if (value !== undefined) out[key] = value;
  return out;
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}
