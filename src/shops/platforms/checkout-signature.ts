/**
 * Authentication of checkout rate requests: base64(HMAC-SHA256(secret, raw body bytes)) in a header.
 *
 * Shopify: a carrier-service callback carries the same `X-Shopify-Hmac-Sha256` header as a webhook, computed
 * the same way with the app's client secret over the raw body. What we checked:
 *  - the headers Shopify sends on a carrier-service callback, as captured by a merchant in
 *    github.com/gnikyt/laravel-shopify issue #625: `x-shopify-hmac-sha256`, `x-shopify-shop-domain`,
 *    `x-shopify-timeout: 10000`, `content-type: application/json` (no X-Shopify-Topic, no webhook id: so the
 *    webhook verifier of src/adapters/shopify, which requires those, cannot be reused here);
 *  - a carrier-service decorator verifying exactly this HMAC over the raw body with the app secret
 *    (gist gavinballard/49d56847acddc538c1fa), and the ShipRateAPI Shopify guide (shiprateapi.com/docs/guide/shopify):
 *    "Every inbound request from Shopify is verified using HMAC-SHA256 ... of the raw request body".
 *  - the Shopify emulator (packages/emulators/src/shopify) signs its requestShippingRates calls the same way.
 *
 * WooCommerce: our own plugin signs with the shop's WooCommerce webhook secret in `X-Relais-Signature`,
 * the same construction as WooCommerce's own `X-WC-Webhook-Signature`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SHOPIFY_HMAC_HEADER = 'x-shopify-hmac-sha256';
export const SHOPIFY_SHOP_DOMAIN_HEADER = 'x-shopify-shop-domain';
export const RELAIS_SIGNATURE_HEADER = 'x-relais-signature';

export type SignatureCheck = { ok: true } | { ok: false; reason: 'missing_signature' | 'invalid_signature' };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export function signBody(rawBody: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(rawBody).digest('base64');
}

/** Constant-time check of a base64 HMAC-SHA256 of the raw bytes. */
export function checkBodySignature(rawBody: Buffer, header: string | undefined, secret: string): SignatureCheck {
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing_signature' };
  const given = header.trim();
  if (!BASE64.test(given)) return { ok: false, reason: 'invalid_signature' };
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const received = Buffer.from(given, 'base64');
  // timingSafeEqual throws on different lengths; a digest of another length is simply wrong.
  if (received.length !== expected.length || !timingSafeEqual(received, expected))
    return { ok: false, reason: 'invalid_signature' };
  return { ok: true };
}
