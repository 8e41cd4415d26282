/**
 * `relais doctor` for a WooCommerce shop (StorePlatform.doctor): the REST key works and the shop sells in XOF;
 * the order topics Relais registers (webhooks.ts) are delivered, active, to {publicUrl}/webhooks/woocommerce/{shop}.
 * With `fix`, missing webhooks are created and disabled ones re-activated (WooCommerce disables a webhook after
 * repeated failed deliveries, and never retries). Keys never reach a result: they are shown by Secret.hint().
 */
import { silentLogger, type Logger } from '../../log.js';
import { currencyResult, messageOf, publicEndpoint, sameUrl, type CheckResult } from '../../domain/checks.js';
import type { DoctorContext } from '../../shops/platforms/platform.js';
import { createWooOperatorRest } from './rest.js';
import { WooApiError, type WooOperatorRest, type WooWebhookView } from './rest-types.js';
import type { WooShopConfig } from './settings.js';
import { WOO_SUBSCRIBED_TOPICS, WOO_WEBHOOK_PATH } from './webhooks.js';

const DEFAULT_TIMEOUT_MS = 5_000;

export function wooOperatorRestFor(
  shop: WooShopConfig,
  options: { timeoutMs?: number; logger?: Logger } = {},
): WooOperatorRest {
  return createWooOperatorRest({
    url: shop.woocommerce.url,
    consumerKey: shop.woocommerce.consumerKey,
    consumerSecret: shop.woocommerce.consumerSecret,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    logger: options.logger ?? silentLogger,
  });
}

/** The REST keys work (first result) and the shop sells in XOF (second result, only when the first is ok). */
export async function checkWooShop(shop: WooShopConfig, rest: WooOperatorRest): Promise<CheckResult[]> {
  const name = 'shop credentials';
  try {
    const setting = await rest.getSetting('general', 'woocommerce_currency');
    const currency = typeof setting.value === 'string' ? setting.value : String(setting.value);
    return [
      {
        name,
        status: 'ok',
        detail: `${shop.woocommerce.url}, REST key ${shop.woocommerce.consumerKey.hint()} accepted`,
      },
      currencyResult(currency, 'WooCommerce › Settings › General › Currency'),
    ];
  } catch (error) {
    return [{ name, ...explainWooFailure(error, shop) }];
  }
}

function explainWooFailure(error: unknown, shop: WooShopConfig): Omit<CheckResult, 'name'> {
  const key = `REST key ${shop.woocommerce.consumerKey.hint()} (from ${shop.woocommerce.consumerKey.source})`;
  if (error instanceof WooApiError) {
    if (error.status === 401) {
      return {
        status: 'error',
        detail: `WooCommerce refused the ${key} (401${error.code ? ` ${error.code}` : ''})`,
        fix: 'create a key with Read/Write permission (WooCommerce › Settings › Advanced › REST API) and put it and its secret in the referenced variables',
      };
    }
    if (error.status === 403) {
      return {
        status: 'error',
        detail: `the ${key} may not do this (403${error.code ? ` ${error.code}` : ''})`,
        fix: 'give the key Read/Write permission, on a user who can manage WooCommerce',
      };
    }
    if (error.status === 404) {
      return {
        status: 'error',
        detail: `no WooCommerce REST API at ${shop.woocommerce.url} (404)`,
        fix: 'check woocommerce.url (the site address), that WooCommerce is active and permalinks are not "Plain"',
      };
    }
    if (error.kind === 'network' || error.kind === 'timeout') {
      return {
        status: 'error',
        detail: `cannot reach ${shop.woocommerce.url}: ${error.message}`,
        fix: 'check woocommerce.url and the network between Relais and the shop',
      };
    }
    return { status: 'error', detail: error.message };
  }
  return { status: 'error', detail: messageOf(error) };
}

/** order.created and order.updated → {publicUrl}/webhooks/woocommerce/{shop}, active; with fix, created or re-activated. */
export async function checkWooWebhooks(
  shop: WooShopConfig,
  rest: WooOperatorRest,
  publicUrl: string,
  fix: boolean,
): Promise<CheckResult> {
  const name = 'webhooks';
  const url = publicEndpoint(publicUrl, WOO_WEBHOOK_PATH.replace(':shopId', encodeURIComponent(shop.id)));
  let hooks: WooWebhookView[];
  try {
    hooks = await rest.listWebhooks();
  } catch (error) {
    return { name, ...explainWooFailure(error, shop) };
  }
  const problems: { topic: string; hook?: WooWebhookView }[] = [];
  for (const topic of WOO_SUBSCRIBED_TOPICS) {
    const ours = hooks.filter((h) => h.topic === topic && sameUrl(h.delivery_url, url));
    if (ours.some((h) => h.status === 'active')) continue;
    problems.push({ topic, ...(ours[0] ? { hook: ours[0] } : {}) });
  }
  if (problems.length === 0)
    return { name, status: 'ok', detail: `${WOO_SUBSCRIBED_TOPICS.join(', ')} → ${url}, active` };
  const describe = (p: { topic: string; hook?: WooWebhookView }) =>
    p.hook
      ? `${p.topic} is ${p.hook.status}${p.hook.status === 'disabled' ? ' (WooCommerce disables a webhook after repeated failed deliveries)' : ''}`
      : `${p.topic} is missing`;
  if (!fix) {
    return {
      name,
      status: 'error',
      detail: `${problems.map(describe).join('; ')} (→ ${url}): WooCommerce never retries, so those orders never reach Relais`,
      fix: 'relais doctor --fix registers or re-activates them',
    };
  }
  const done: string[] = [];
  const failures: string[] = [];
  for (const problem of problems) {
    try {
      if (problem.hook) {
        await rest.updateWebhook(problem.hook.id, { status: 'active' });
        done.push(`re-activated ${problem.topic}`);
      } else {
        // The shop's webhook secret is what Relais verifies X-WC-Webhook-Signature with.
        await rest.createWebhook({
          name: `Relais ${problem.topic}`,
          topic: problem.topic,
          delivery_url: url,
          secret: shop.woocommerce.webhookSecret.reveal(),
        });
        done.push(`registered ${problem.topic}`);
      }
    } catch (error) {
      failures.push(`${problem.topic}: ${explainWooFailure(error, shop).detail}`);
    }
  }
  if (failures.length > 0)
    return {
      name,
      status: 'error',
      detail: `could not repair ${failures.join('; ')}`,
      fix: 'check the key has Read/Write permission, then run relais doctor --fix again',
    };
  return { name, status: 'ok', detail: `${done.join(', ')} → ${url}` };
}

/** The shop's checks, in order; with the key refused, every other call would only repeat the same refusal. */
export async function wooDoctor(shop: WooShopConfig, context: DoctorContext): Promise<CheckResult[]> {
  const rest = wooOperatorRestFor(shop, { timeoutMs: context.timeoutMs, logger: context.logger });
  const results = await checkWooShop(shop, rest);
  if (results[0]?.status !== 'ok' || !context.publicUrl) return results;
  results.push(await checkWooWebhooks(shop, rest, context.publicUrl, context.fix));
  return results;
}
