/**
 * The order webhooks a newly connected store sends Relais (webhooks.ts: WOO_SUBSCRIBED_TOPICS to
 * {publicUrl}/webhooks/woocommerce/{shop}), registered with the keys it just gave. Unlike `relais doctor --fix`,
 * which only re-activates, a webhook of ours that is already there gets the shop's webhook secret too: it may date
 * from an earlier set-up with another secret, and Relais would then refuse every delivery as badly signed.
 */
import { messageOf, publicEndpoint, sameUrl } from '../../domain/checks.js';
import type { WooOperatorRest } from './rest-types.js';
import { WOO_SUBSCRIBED_TOPICS, WOO_WEBHOOK_PATH } from './webhooks.js';

/** Registers (or brings up to date) each topic's webhook; answers what was done, for the log and the return page. */
export async function registerWooWebhooks(
  rest: WooOperatorRest,
  shop: { shopId: string; publicUrl: string; webhookSecret: string },
): Promise<string> {
  const url = publicEndpoint(shop.publicUrl, WOO_WEBHOOK_PATH.replace(':shopId', encodeURIComponent(shop.shopId)));
  try {
    const hooks = await rest.listWebhooks();
    for (const topic of WOO_SUBSCRIBED_TOPICS) {
      const ours = hooks.find((hook) => hook.topic === topic && sameUrl(hook.delivery_url, url));
      if (ours) await rest.updateWebhook(ours.id, { status: 'active', secret: shop.webhookSecret });
      else await rest.createWebhook({ name: `Relais ${topic}`, topic, delivery_url: url, secret: shop.webhookSecret });
    }
    return `webhooks ${WOO_SUBSCRIBED_TOPICS.join(', ')} registered → ${url}`;
  } catch (error) {
    // The keys are stored: the Connect page's "Check and switch on" (relais doctor --fix) registers them later.
    return `webhooks not registered yet (${messageOf(error)}): "Check and switch on" registers them`;
  }
}
