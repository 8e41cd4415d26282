/**
 * WooCommerce order webhooks: one URL per shop (`/webhooks/woocommerce/<shop id>`), each webhook signed with the
 * shop's own secret (verify.ts). WooCommerce pings a new webhook once, unsigned, and activates it only on a 200.
 * The topics listed here are the ones Relais acts on and the ones `relais doctor --fix` registers (doctor.ts).
 */
import type { ShopRegistry } from '../../config/shops.js';
import { malformedBody, parseJson } from '../common.js';
import type { WebhookDelivery, WebhookIntake, WebhookReceipt } from '../platform.js';
import { verifyWooWebhook } from './verify.js';

export const WOO_ORDER_TOPICS: ReadonlySet<string> = new Set([
  'order.created',
  'order.updated',
  'order.deleted',
  'order.restored',
]);
/** What `relais doctor` checks and `--fix` registers; a shop that also sends deletions and restores has them acted on. */
export const WOO_SUBSCRIBED_TOPICS = ['order.created', 'order.updated'] as const;

export const WOO_WEBHOOK_PATH = '/webhooks/woocommerce/:shopId';

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
    if (!verification.ok) {
      return {
        kind: 'rejected',
        reason: verification.reason,
        body: { error: verification.reason, missing: verification.missing },
        warn: { msg: 'rejected a WooCommerce webhook', fields: { shop: shop.id, reason: verification.reason } },
      };
    }
    // WooCommerce pings a new webhook once, unsigned: answer 200 or it will not activate it.
    if (verification.kind === 'ping')
      return { kind: 'answer', body: { status: 'pong', webhookId: verification.webhookId } };
    if (!WOO_ORDER_TOPICS.has(verification.topic))
      return { kind: 'answer', body: { status: 'ignored', topic: verification.topic } };
    const payload = parseJson(rawBody);
    if (payload === undefined || typeof payload !== 'object' || payload === null) {
      return { kind: 'rejected', reason: 'malformed_body', body: malformedBody('a JSON object') };
    }
    // WooCommerce's delivery id changes on every delivery; the order's modification date does not.
    // date_modified has one-second precision: two saves in the same second (Relais's own write-back, then
    // the merchant cancelling) differ by their status, so it is part of the key.
    const p = payload as { id?: unknown; date_modified_gmt?: unknown; date_modified?: unknown; status?: unknown };
    const eventKey = `${verification.topic}|${String(p.id)}|${String(p.date_modified_gmt ?? p.date_modified ?? '')}|${String(p.status ?? '')}`;
    return { kind: 'event', shop, topic: verification.topic, payload, eventKey };
  },
};
