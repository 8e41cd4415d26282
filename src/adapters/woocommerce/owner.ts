/**
 * Which store a signed WooCommerce order webhook comes from. Each store delivers to its own URL
 * (`/webhooks/woocommerce/<shop id>`) and signs with its own webhook secret: a store connected through the Connect
 * page gets 32 random bytes of its own (connect.ts), so its signature alone proves the store. But the registry
 * file lets an operator give two stores the same secret (one variable for both); then a delivery of store A,
 * posted to store B's URL, verifies. WooCommerce signs only the body (X-WC-Webhook-Source, the store's address,
 * is an unsigned header), so for a store whose secret another store shares, the store is confirmed from the body:
 * the REST links an order carries (`_links.self[0].href`, https://store/wp-json/wc/v3/orders/727, built by the
 * store from its own address) must lead to the shop's `url`. A body without them (order.deleted carries only the
 * id) is refused: give each store its own secret.
 */
import { createHash } from 'node:crypto';
import type { ShopRegistry } from '../../shops/shops.js';
import type { WooShopConfig } from './settings.js';

export type WooOwnerCheck =
  { kind: 'confirmed' } | { kind: 'other_store'; found: string } | { kind: 'unnamed'; why: string };

/** The shops of a registry snapshot whose webhook secret another WooCommerce shop shares (a snapshot never changes). */
const sharing = new WeakMap<ShopRegistry, ReadonlySet<string>>();

function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('base64');
}

/** Whether another WooCommerce shop of the registry signs with the same webhook secret as `shop`. */
export function sharesWebhookSecret(shops: ShopRegistry, shop: WooShopConfig): boolean {
  const snapshot = shops.snapshot();
  let shared = sharing.get(snapshot);
  if (!shared) {
    const bySecret = new Map<string, string[]>();
    for (const each of snapshot.all()) {
      if (each.platform !== 'woocommerce') continue;
      const key = digest(each.woocommerce.webhookSecret.reveal());
      bySecret.set(key, [...(bySecret.get(key) ?? []), each.id]);
    }
    shared = new Set([...bySecret.values()].filter((ids) => ids.length > 1).flat());
    sharing.set(snapshot, shared);
  }
  return shared.has(shop.id);
}

/**
 * A store's address as one comparable string: host (lowercase, without `www.`), port and path, without the scheme
 * (a store behind a proxy may call itself http) or a trailing slash.
 */
export function storeKey(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname.toLowerCase().replace(/^www\./, '');
    return `${host}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return undefined;
  }
}

/** The store an order body's REST link names: `https://store/wp-json/wc/v3/orders/727` (or `/?rest_route=…`) → the store. */
function storeOfLinks(body: Record<string, unknown>): string | undefined {
  const links = body._links as { self?: Array<{ href?: unknown }> } | undefined;
  const href = Array.isArray(links?.self) ? links.self[0]?.href : undefined;
  if (typeof href !== 'string') return undefined;
  const restAt = href.search(/\/wp-json\/|\/\?rest_route=/);
  return restAt < 0 ? undefined : storeKey(href.slice(0, restAt));
}

/** Whose the signed order body is, against the address (`woocommerce.url`) of the shop it was posted to. */
export function ownerOfWooPayload(storeUrl: string, payload: unknown): WooOwnerCheck {
  const body = payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>) : {};
  const found = storeOfLinks(body);
  if (found === undefined) return { kind: 'unnamed', why: 'the body has no REST link naming its store' };
  return found === storeKey(storeUrl) ? { kind: 'confirmed' } : { kind: 'other_store', found };
}
