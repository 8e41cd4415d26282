/**
 * Which shop a Shopify webhook's order belongs to. The X-Shopify-Shop-Domain header is not covered by the
 * HMAC, and every shop that installs one app shares that app's secret: a signed order of shop A, replayed
 * with shop B's header, verifies. So the shop is confirmed from the signed body itself:
 *
 *   - an order's `order_status_url` (or `statusPageUrl`) lives on the shop's own domain: on its
 *     myshopify.com domain, it must be the header's; on another *.myshopify.com domain, it is another shop's;
 *   - a compliance payload names its shop in `shop_domain`;
 *   - anything else (a custom storefront domain, the field missing) is confirmed by reading the order
 *     through the header's shop's Admin API, with that shop's own token: another shop's order is not there.
 */
import { PerShop } from '../../config/served-shops.js';
import type { ShopifyShopConfig } from './settings.js';
import type { Logger } from '../../log.js';
import type { OwnershipCheck, StoreDeps } from '../platform.js';
import { sharedBudgetOf, shopifyAdminClientFor, type SharedBudget } from './admin.js';

export type OwnerCheck =
  | { kind: 'confirmed' }
  | { kind: 'other_shop'; found: string }
  /** The body cannot tell: read the order through the header's shop's Admin API before doing anything. */
  | { kind: 'ask_admin'; why: string };

const MYSHOPIFY = /\.myshopify\.com$/;

export function ownerOfShopifyPayload(headerDomain: string, payload: unknown): OwnerCheck {
  const domain = headerDomain.trim().toLowerCase();
  const fields = payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>) : {};
  if (typeof fields.shop_domain === 'string') {
    const named = fields.shop_domain.trim().toLowerCase();
    return named === domain ? { kind: 'confirmed' } : { kind: 'other_shop', found: named };
  }
  const url =
    typeof fields.order_status_url === 'string'
      ? fields.order_status_url
      : typeof fields.statusPageUrl === 'string'
        ? fields.statusPageUrl
        : undefined;
  if (url === undefined) return { kind: 'ask_admin', why: 'the order has no order_status_url' };
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return { kind: 'ask_admin', why: 'the order_status_url is not a URL' };
  }
  if (host === domain) return { kind: 'confirmed' };
  if (MYSHOPIFY.test(host)) return { kind: 'other_shop', found: host };
  return { kind: 'ask_admin', why: `the order_status_url is on ${host}, not ${domain}` };
}

/**
 * Whether the order is in the shop, read through the shop's own Admin API (its own token): the answer for
 * OwnerCheck 'ask_admin'. Throws when Shopify cannot be reached, so the job is retried rather than decided.
 */
export function shopifyOrderReader(
  logger: Logger,
  shared?: SharedBudget,
): (shop: ShopifyShopConfig, orderId: string) => Promise<boolean> {
  // Rebuilt when the shop's settings change (a reload of the served shops gives it a new config object).
  const clients = new PerShop((shop) =>
    shopifyAdminClientFor(
      shop as ShopifyShopConfig,
      { logger: logger.child({ shop: shop.id, component: 'shopify-owner' }), maxAttempts: 3, maxWaitMs: 5_000 },
      shared,
    ),
  );
  return async (shop, orderId) => (await clients.for(shop).orderState(`gid://shopify/Order/${orderId}`)) !== undefined;
}

/**
 * The shop-event job's check (StorePlatform.ownershipCheck): an order event is recorded only once its body
 * confirms the shop the header names, or the shop's Admin API has the order. The web process already refused
 * an order whose status page is on another shop's myshopify domain; this covers the rest.
 */
export function shopifyOwnershipCheck(deps: Pick<StoreDeps, 'logger'> & Partial<StoreDeps>): OwnershipCheck<'shopify'> {
  const inShop = shopifyOrderReader(deps.logger, sharedBudgetOf(deps));
  return async (shop, event, orderId) => {
    if (!event.topic.startsWith('orders/')) return undefined;
    const owner = ownerOfShopifyPayload(shop.shopify.domain, event.payload);
    if (owner.kind === 'confirmed') return undefined;
    if (owner.kind === 'ask_admin' && (await inShop(shop, orderId))) return undefined;
    return owner.kind === 'other_shop'
      ? `the order belongs to ${owner.found}, not ${shop.shopify.domain}`
      : `${owner.why}, and ${shop.shopify.domain}'s Admin API has no order ${orderId}`;
  };
}
