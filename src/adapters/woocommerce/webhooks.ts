/**
 * WooCommerce order webhooks: one URL per shop (`/webhooks/woocommerce/<shop id>`), each webhook signed with the
 * shop's own secret (verify.ts), or, where the registry gives two stores one secret, confirmed by its body
 * (owner.ts). WooCommerce pings a new webhook once, unsigned, and activates it only on a 200. The topics listed here are the ones Relais acts on and the ones `relais doctor --fix` registers (doctor.ts).
 */
import type { ShopRegistry } from '../../shops/shops.js';
import { malformedBody, parseJson } from '../../shops/platforms/common.js';
import {
  unverifiedDelivery,
  type WebhookDelivery,
  type WebhookIntake,
  type WebhookReceipt,
} from '../../shops/platforms/platform.js';
import { ownerOfWooPayload, sharesWebhookSecret, type WooOwnerCheck } from './owner.js';
import type { WooShopConfig } from './settings.js';
import { verifyWooWebhook } from './verify.js';

export const WOO_ORDER_TOPICS: ReadonlySet<string> = new Set([
  'order.created',
  'order.updated',
  'order.deleted',
  'order.restored',
]);
/**
 * What `relais doctor` checks and `--fix` registers, and Connect registers. Core's order topics: order.deleted is
 * sent when the merchant moves an order to the trash (its body only `{"id": N}`: the worker reads the order,
 * events.ts), order.restored when it comes back from there (the whole order).
 */
export const WOO_SUBSCRIBED_TOPICS = ['order.created', 'order.updated', 'order.deleted', 'order.restored'] as const;

export const WOO_WEBHOOK_PATH = '/webhooks/woocommerce/:shopId';

/** The 401 for a body of another store, or of none, posted to a store whose secret another store shares. */
function refusal(owner: WooOwnerCheck, shop: WooShopConfig, topic: string): WebhookReceipt | undefined {
  if (owner.kind === 'confirmed') return undefined;
  const why = owner.kind === 'other_store' ? `the body belongs to the store at ${owner.found}` : owner.why;
  const reason = owner.kind === 'other_store' ? 'shop_mismatch' : 'shop_unconfirmed';
  return {
    kind: 'rejected',
    reason,
    body: {
      error: reason,
      message: `${why}, not ${shop.woocommerce.url}: another store shares this store's webhook secret, so the body must name it (give each store its own secret)`,
    },
    warn: {
      msg: "rejected a WooCommerce webhook: its body is not shown to be this store's, and its secret is shared",
      fields: { shop: shop.id, topic, why },
    },
  };
}

export const wooWebhooks: WebhookIntake = {
  path: WOO_WEBHOOK_PATH,
  orderTopics: WOO_ORDER_TOPICS,
  complianceTopics: new Set(),
  subscribedTopics: WOO_SUBSCRIBED_TOPICS,

  receive({ rawBody, headers, shopId }: WebhookDelivery, shops: ShopRegistry): WebhookReceipt {
    const shop = shopId === undefined ? undefined : shops.get(shopId);
    if (!shop || shop.platform !== 'woocommerce') {
      return {
        kind: 'rejected',
        reason: 'unknown_shop',
        body: { error: 'unknown_shop', message: `no WooCommerce shop "${String(shopId)}" in the Relais registry` },
      };
    }
    const contentType = headers['content-type'];
    const verification = verifyWooWebhook({
      rawBody,
      headers,
      secret: shop.woocommerce.webhookSecret.reveal(),
      contentType: Array.isArray(contentType) ? contentType[0] : contentType,
    });
    if (!verification.ok) return unverifiedDelivery('WooCommerce', shop.id, verification);
    // WooCommerce pings a new webhook once, unsigned: answer 200 or it will not activate it.
    if (verification.kind === 'ping')
      return { kind: 'answer', body: { status: 'pong', webhookId: verification.webhookId } };
    if (!WOO_ORDER_TOPICS.has(verification.topic))
      return { kind: 'answer', body: { status: 'ignored', topic: verification.topic } };
    const payload = parseJson(rawBody);
    if (payload === undefined || typeof payload !== 'object' || payload === null) {
      return { kind: 'rejected', reason: 'malformed_body', body: malformedBody('a JSON object') };
    }
    // Only where another store signs with the same secret (a registry file's choice) can the body be another's.
    if (sharesWebhookSecret(shops, shop)) {
      const refused = refusal(ownerOfWooPayload(shop.woocommerce.url, payload), shop, verification.topic);
      if (refused) return refused;
    }
    // WooCommerce's delivery id changes on every delivery; the order's modification date does not.
    // date_modified has one-second precision: two saves in the same second (Relais's own write-back, then
    // the merchant cancelling) differ by their status, so it is part of the key.
    // A refund in the same second changes neither: the number of refunds is part of the key too. An order.deleted
    // body is only the id: the delivery id tells a second trashing (after a restore) from the first.
    const p = payload as {
      id?: unknown;
      date_modified_gmt?: unknown;
      date_modified?: unknown;
      status?: unknown;
      refunds?: unknown;
    };
    const version = p.date_modified_gmt ?? p.date_modified ?? verification.deliveryId ?? '';
    const refunds = Array.isArray(p.refunds) ? p.refunds.length : 0;
    const eventKey = `${verification.topic}|${String(p.id)}|${String(version)}|${String(p.status ?? '')}|${refunds}`;
    return { kind: 'event', shop, topic: verification.topic, payload, eventKey };
  },
};
