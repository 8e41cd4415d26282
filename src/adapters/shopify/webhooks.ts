/**
 * Shopify webhooks: one URL for every shop of the app (`/webhooks/shopify`), the shop named by the
 * X-Shopify-Shop-Domain header and confirmed by the signed body, per topic (owner.ts), the delivery verified as
 * shopify-api does (verify.ts). The topics listed here are the ones Relais acts on and the ones
 * `relais doctor --fix` subscribes a shop to (doctor.ts), so the two lists cannot drift apart.
 */
import type { ShopRegistry } from '../../shops/shops.js';
import { malformedBody, parseJson } from '../../shops/platforms/common.js';
import {
  unverifiedDelivery,
  type WebhookDelivery,
  type WebhookIntake,
  type WebhookReceipt,
} from '../../shops/platforms/platform.js';
import { ownerOfShopifyEvent, SHOPIFY_OWNER_RULES, type OwnerCheck } from './owner.js';
import type { ShopifyShopConfig } from './settings.js';
import { verifyShopifyWebhook } from './verify.js';

export const SHOPIFY_ORDER_TOPICS: ReadonlySet<string> = new Set([
  'orders/create',
  'orders/paid',
  'orders/updated',
  'orders/cancelled',
]);
/** The mandatory compliance topics of a public app; set in its shopify.app.toml, not through the API. */
export const SHOPIFY_COMPLIANCE_TOPICS: ReadonlySet<string> = new Set([
  'customers/data_request',
  'customers/redact',
  'shop/redact',
]);

/** orders/create → ORDERS_CREATE, as Admin GraphQL names a WebhookSubscriptionTopic. */
export function graphqlTopic(topic: string): string {
  return topic.toUpperCase().replace('/', '_');
}

/** ORDERS_CREATE → orders/create, as merchants see topics in Shopify's admin. */
export function topicName(topic: string): string {
  return topic.toLowerCase().replace('_', '/');
}

/** Sent when a merchant uninstalls the app: Relais stops work for the shop (src/shops/uninstall.ts). */
export const SHOPIFY_UNINSTALL_TOPIC = 'app/uninstalled';

interface DomainIndex {
  served: Map<string, ShopifyShopConfig>;
  /** Shops not served (switched off, uninstalled) whose data-protection webhooks are still answered. */
  notServed: Map<string, ShopifyShopConfig>;
}

/**
 * The shops of a registry by myshopify domain, indexed once per registry snapshot (a snapshot never changes; a
 * live registry answers a new one after each reload).
 */
const byDomain = new WeakMap<ShopRegistry, DomainIndex>();

function indexOf(shops: ShopRegistry): DomainIndex {
  const snapshot = shops.snapshot();
  let index = byDomain.get(snapshot);
  if (!index) {
    index = { served: new Map(), notServed: new Map() };
    for (const shop of snapshot.all()) if (shop.platform === 'shopify') index.served.set(shop.shopify.domain, shop);
    for (const { shop } of snapshot.allNotServed())
      if (shop?.platform === 'shopify' && shop.shopify.webhookSecret.reveal() !== '')
        index.notServed.set(shop.shopify.domain, shop);
    byDomain.set(snapshot, index);
  }
  return index;
}

/** The 401 for a body that belongs to another shop or names none; undefined when it may go on to the worker. */
function refusal(owner: OwnerCheck, shop: ShopifyShopConfig, topic: string): WebhookReceipt | undefined {
  const { domain } = shop.shopify;
  if (owner.kind === 'other_shop')
    return {
      kind: 'rejected',
      reason: 'shop_mismatch',
      body: { error: 'shop_mismatch', message: `the body belongs to ${owner.found}, not ${domain}` },
      warn: {
        msg: 'rejected a Shopify webhook: its body belongs to another shop',
        fields: { shop: shop.id, topic, found: owner.found },
      },
    };
  if (owner.kind === 'unnamed')
    return {
      kind: 'rejected',
      reason: 'shop_unconfirmed',
      body: { error: 'shop_unconfirmed', message: `${owner.why}: it cannot be confirmed as ${domain}'s` },
      warn: {
        msg: 'rejected a Shopify webhook: its body does not name its shop',
        fields: { shop: shop.id, topic, why: owner.why },
      },
    };
  return undefined;
}

export const shopifyWebhooks: WebhookIntake = {
  path: '/webhooks/shopify',
  orderTopics: SHOPIFY_ORDER_TOPICS,
  complianceTopics: SHOPIFY_COMPLIANCE_TOPICS,
  uninstallTopic: SHOPIFY_UNINSTALL_TOPIC,
  subscribedTopics: [...SHOPIFY_ORDER_TOPICS, SHOPIFY_UNINSTALL_TOPIC].map(graphqlTopic),

  receive({ rawBody, headers }: WebhookDelivery, shops: ShopRegistry): WebhookReceipt {
    const value = headers['x-shopify-shop-domain'];
    const domain = Array.isArray(value) ? value[0] : value;
    if (!domain)
      return {
        kind: 'rejected',
        reason: 'missing_headers',
        body: { error: 'missing_headers', missing: ['X-Shopify-Shop-Domain'] },
      };
    const index = indexOf(shops);
    const served = index.served.get(domain.toLowerCase());
    const shop = served ?? index.notServed.get(domain.toLowerCase());
    if (!shop)
      return {
        kind: 'rejected',
        reason: 'unknown_shop',
        body: { error: 'unknown_shop', message: `no shop ${domain} in the Relais registry` },
      };
    const verification = verifyShopifyWebhook({ rawBody, headers, secret: shop.shopify.webhookSecret.reveal() });
    if (!verification.ok) return unverifiedDelivery('Shopify', shop.id, verification);
    const { topic } = verification;
    // A shop no longer served answers its data-protection topics only (shop/redact comes 48 hours after an uninstall).
    if (!served && !SHOPIFY_COMPLIANCE_TOPICS.has(topic)) {
      if (topic === SHOPIFY_UNINSTALL_TOPIC) return { kind: 'answer', body: { status: 'ignored', topic } };
      return {
        kind: 'rejected',
        reason: 'unknown_shop',
        body: { error: 'unknown_shop', message: `shop ${domain} is not served by Relais` },
      };
    }
    // The topics Relais acts on are those whose body names its shop (owner.ts); any other is acknowledged.
    if (!SHOPIFY_OWNER_RULES.has(topic)) return { kind: 'answer', body: { status: 'ignored', topic } };
    const payload = parseJson(rawBody);
    if (payload === undefined) return { kind: 'rejected', reason: 'malformed_body', body: malformedBody('JSON') };
    // The shop header is not signed and shops of one app share its secret: the signed body must name this shop
    // (the worker asks the shop's Admin API about an order whose body cannot tell). Checked on the one parse.
    const refused = refusal(ownerOfShopifyEvent(shop.shopify.domain, topic, payload), shop, topic);
    if (refused) return refused;
    return {
      kind: 'event',
      shop,
      topic,
      payload,
      eventKey: `${topic}|${verification.eventId ?? verification.webhookId}`,
    };
  },
};
