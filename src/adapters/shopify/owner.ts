/**
 * Which shop a signed Shopify webhook belongs to. The X-Shopify-Shop-Domain header is not covered by the HMAC,
 * and every shop that installs one app shares that app's secret: a signed delivery of shop A, replayed with shop
 * B's header, verifies. So before anything is done, the shop is confirmed from the signed body itself, each topic
 * by its own field, as SHOPIFY_OWNER_RULES says (the one table: the web process refuses with it, the worker checks
 * each job with it again, and the README's security section lists it):
 *
 *   orders/*                 the order's `order_status_url` (or `statusPageUrl`) lives on the shop's own domain:
 *                            on its myshopify.com domain it must be the header's, on another *.myshopify.com domain
 *                            it is another shop's; on a custom domain, or missing (protected customer data withheld),
 *                            the worker reads the order through the header's shop's Admin API with that shop's own
 *                            token: another shop's order is not there
 *   app/uninstalled          the shop resource's `myshopify_domain` (else `domain`, when it is a myshopify domain)
 *   customers/data_request,  `shop_domain`. Relais keeps no shop's numeric id, so `shop_id` alone cannot be
 *   customers/redact,        checked, and the Admin API cannot answer for shop/redact (it comes 48 hours after
 *   shop/redact              the uninstall, the token gone): a body without `shop_domain` is refused
 *
 * A topic the table has no rule for is not acted on. A body that names no shop where its topic's must is refused.
 */
import { PerShop } from '../../shops/served-shops.js';
import type { ShopifyShopConfig } from './settings.js';
import type { Logger } from '../../log.js';
import type { OwnershipCheck, StoreDeps } from '../../shops/platforms/platform.js';
import { sharedBudgetOf, shopifyAdminClientFor, type SharedBudget } from './admin.js';

export type OwnerCheck =
  | { kind: 'confirmed' }
  | { kind: 'other_shop'; found: string }
  /** The body cannot tell: read the order through the header's shop's Admin API before doing anything. */
  | { kind: 'ask_admin'; why: string }
  /** The body does not name its shop where its topic's must: refused, nothing done. */
  | { kind: 'unnamed'; why: string };

/** How one topic's body names its shop. */
export interface OwnerRule {
  /** The signed field(s) the shop is confirmed from, in words (the README's security section lists the same). */
  readonly confirmedBy: string;
  check(headerDomain: string, body: Record<string, unknown>): OwnerCheck;
}

const MYSHOPIFY = /\.myshopify\.com$/;

/** Compares a domain the body names with the header's: confirmed when they are the same shop. */
function sameShop(headerDomain: string, named: string): OwnerCheck {
  const found = named.trim().toLowerCase();
  return found === headerDomain ? { kind: 'confirmed' } : { kind: 'other_shop', found };
}

const byOrderStatusPage: OwnerRule = {
  confirmedBy:
    "the host of the order's `order_status_url`: this shop's myshopify domain, else (a custom domain, or no URL) the order read through this shop's Admin API",
  check(headerDomain, body) {
    const url =
      typeof body.order_status_url === 'string'
        ? body.order_status_url
        : typeof body.statusPageUrl === 'string'
          ? body.statusPageUrl
          : undefined;
    if (url === undefined) return { kind: 'ask_admin', why: 'the order has no order_status_url' };
    let host: string;
    try {
      host = new URL(url).hostname.toLowerCase();
    } catch {
      return { kind: 'ask_admin', why: 'the order_status_url is not a URL' };
    }
    if (host === headerDomain) return { kind: 'confirmed' };
    if (MYSHOPIFY.test(host)) return { kind: 'other_shop', found: host };
    return { kind: 'ask_admin', why: `the order_status_url is on ${host}, not ${headerDomain}` };
  },
};

const byShopResource: OwnerRule = {
  confirmedBy: "the shop resource's `myshopify_domain` (else its `domain`, when that is a myshopify domain)",
  check(headerDomain, body) {
    if (typeof body.myshopify_domain === 'string') return sameShop(headerDomain, body.myshopify_domain);
    // `domain` is the shop's primary domain: its myshopify domain unless the merchant set a custom one.
    if (typeof body.domain === 'string' && MYSHOPIFY.test(body.domain.trim().toLowerCase()))
      return sameShop(headerDomain, body.domain);
    return { kind: 'unnamed', why: 'the shop resource has no myshopify_domain' };
  },
};

const byShopDomain: OwnerRule = {
  confirmedBy: '`shop_domain` (a body without it is refused: Relais keeps no numeric `shop_id` to compare)',
  check(headerDomain, body) {
    if (typeof body.shop_domain === 'string') return sameShop(headerDomain, body.shop_domain);
    return { kind: 'unnamed', why: 'the body has no shop_domain' };
  },
};

/**
 * Per topic Relais acts on, how the signed body confirms the shop the header names. The web process answers 401
 * to a body of another shop or of none (webhooks.ts), the worker checks each job again before acting on it
 * (shopifyOwnershipCheck): the same rules on both sides. A topic missing here is not acted on.
 */
export const SHOPIFY_OWNER_RULES: ReadonlyMap<string, OwnerRule> = new Map([
  ['orders/create', byOrderStatusPage],
  ['orders/paid', byOrderStatusPage],
  ['orders/updated', byOrderStatusPage],
  ['orders/cancelled', byOrderStatusPage],
  ['app/uninstalled', byShopResource],
  ['customers/data_request', byShopDomain],
  ['customers/redact', byShopDomain],
  ['shop/redact', byShopDomain],
]);

/** Whose the signed body of a delivery of `topic` is, against the shop the header names. */
export function ownerOfShopifyEvent(headerDomain: string, topic: string, payload: unknown): OwnerCheck {
  const rule = SHOPIFY_OWNER_RULES.get(topic);
  if (!rule) return { kind: 'unnamed', why: `Relais does not act on ${topic}` };
  const body = payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>) : {};
  return rule.check(headerDomain.trim().toLowerCase(), body);
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
 * The shop-event job's check (StorePlatform.ownershipCheck), for every topic, before anything is done: the event
 * is acted on only once its body confirms the shop the header named (SHOPIFY_OWNER_RULES), or, for an order the
 * body cannot place, the shop's Admin API has it. The web process already refused what the body shows to be
 * another shop's or no shop's; this covers a job enqueued before that check, and the Admin API's answer.
 */
export function shopifyOwnershipCheck(deps: Pick<StoreDeps, 'logger'> & Partial<StoreDeps>): OwnershipCheck<'shopify'> {
  const inShop = shopifyOrderReader(deps.logger, sharedBudgetOf(deps));
  return async (shop, event, orderId) => {
    const { domain } = shop.shopify;
    const owner = ownerOfShopifyEvent(domain, event.topic, event.payload);
    switch (owner.kind) {
      case 'confirmed':
        return undefined;
      case 'other_shop':
        return `the body belongs to ${owner.found}, not ${domain}`;
      case 'unnamed':
        return `${owner.why}: it cannot be confirmed as ${domain}'s`;
      case 'ask_admin':
        if (orderId === undefined) return `${owner.why}, and the body has no order id to look up`;
        if (await inShop(shop, orderId)) return undefined;
        return `${owner.why}, and ${domain}'s Admin API has no order ${orderId}`;
    }
  };
}
