/**
 * Signed Shopify `orders/create` webhooks for benchmarks, fast enough that the load generator is never
 * the bottleneck: the body is the test factory's real-sized order (the official example, ~9 kB of compact JSON, in XOF,
 * cash on delivery, Sacré-Cœur 3 in Dakar) serialised once, and each request only swaps in a fresh order
 * id and signs the bytes with the shop's client secret, as Shopify does.
 */
import { randomUUID } from 'node:crypto';
import { shopifyOrderPayload, signShopify } from '../../test/support/factories.js';
import { SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID } from '../../test/support/relais.js';
import type { RequestSpec } from './load.js';

/** A 13-digit id that appears nowhere else in the payload, replaced in every request. */
const PLACEHOLDER_ID = 8_765_432_109_876;

export class ShopifyOrderStream {
  readonly #parts: string[];
  readonly #secret: string;
  readonly #base: number;

  /** Ids start at a per-run random base, so runs against the same Redis never collide. */
  constructor(secret: string) {
    this.#secret = secret;
    const body = JSON.stringify(
      shopifyOrderPayload({
        id: PLACEHOLDER_ID,
        admin_graphql_api_id: `gid://shopify/Order/${PLACEHOLDER_ID}`,
        name: `#${PLACEHOLDER_ID}`,
        order_number: PLACEHOLDER_ID,
      }),
    );
    this.#parts = body.split(String(PLACEHOLDER_ID));
    if (this.#parts.length < 3) throw new Error('the order template lost its placeholder id');
    this.#base = 1_000_000_000_000 + Math.floor(Math.random() * 1_000_000) * 1_000_000;
  }

  /** The shop's order id of the i-th order of this stream. */
  orderId(i: number): number {
    return this.#base + i;
  }

  /** Relais's external order id for the i-th order. */
  externalOrderId(i: number): string {
    return `${SHOPIFY_SHOP_ID}:${this.orderId(i)}`;
  }

  /** The signed webhook of the i-th order; every call is a new delivery (fresh event and webhook ids). */
  request(i: number): RequestSpec {
    const body = this.#parts.join(String(this.orderId(i)));
    return {
      path: '/webhooks/shopify',
      body,
      headers: {
        'content-type': 'application/json',
        'x-shopify-topic': 'orders/create',
        'x-shopify-hmac-sha256': signShopify(body, this.#secret),
        'x-shopify-shop-domain': SHOPIFY_DOMAIN,
        'x-shopify-api-version': '2026-10',
        'x-shopify-webhook-id': randomUUID(),
        'x-shopify-event-id': randomUUID(),
        'x-shopify-triggered-at': new Date().toISOString(),
      },
    };
  }
}
