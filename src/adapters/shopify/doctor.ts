/**
 * `relais doctor` for a Shopify shop (StorePlatform.doctor): the access token works and the shop sells in XOF;
 * the app may read orders and sees customers' names, addresses and phones (customer-data.ts); the order topics Relais acts on (webhooks.ts) are subscribed to {publicUrl}/webhooks/shopify; with checkout
 * rates on, Relais is the shop's carrier service (carrier-service.ts). With `fix`, missing subscriptions are
 * created (Shopify deletes them after repeated failed deliveries) and the carrier service registered or re-pointed.
 *
 * The GraphQL documents sent here live here, validated against the Admin schema in test/ops/doctor.test.ts.
 * Tokens never reach a result: they are shown by Secret.hint() and where they come from.
 */
import { z } from 'zod';
import { silentLogger, type Logger } from '../../log.js';
import { currencyResult, messageOf, publicEndpoint, sameUrl, type CheckResult } from '../../domain/checks.js';
import type { DoctorContext } from '../../shops/platforms/platform.js';
import { shopifyAdminClientFor, type ShopifyAdminClient } from './admin.js';
import { ShopifyWriteError } from './admin-errors.js';
import { describeShopifyToken } from './token-sources.js';
import {
  carrierServiceCallbackUrl,
  listCarrierServices,
  registerCarrierService,
  type CarrierServiceRegistration,
} from './carrier-service.js';
import { checkShopifyCustomerData, CUSTOMER_DATA_DOCUMENTS } from './customer-data.js';
import type { ShopifyShopConfig } from './settings.js';
import { SHOPIFY_COMPLIANCE_TOPICS, shopifyWebhooks, topicName } from './webhooks.js';

const DEFAULT_TIMEOUT_MS = 5_000;
/** The topics Relais subscribes a shop to, as Admin GraphQL names them (ORDERS_CREATE). */
const SUBSCRIBED = shopifyWebhooks.subscribedTopics;

// ---- the documents sent to Shopify (validated against the Admin schema in test/ops/doctor.test.ts) -----------

export const DOCTOR_SHOPIFY_DOCUMENTS = {
  shop: `query RelaisDoctorShop {
  shop { name currencyCode myshopifyDomain }
}`,
  ...CUSTOMER_DATA_DOCUMENTS,
  webhookSubscriptions: `query RelaisDoctorWebhooks($after: String) {
  webhookSubscriptions(first: 100, after: $after) {
    nodes { id topic uri }
    pageInfo { hasNextPage endCursor }
  }
}`,
  webhookSubscriptionCreate: `mutation RelaisDoctorWebhookCreate($topic: WebhookSubscriptionTopic!, $webhookSubscription: WebhookSubscriptionInput!) {
  webhookSubscriptionCreate(topic: $topic, webhookSubscription: $webhookSubscription) {
    webhookSubscription { id topic uri }
    userErrors { field message }
  }
}`,
} as const;

const shopSchema = z.object({
  shop: z.object({ name: z.string(), currencyCode: z.string(), myshopifyDomain: z.string().optional() }),
});
const subscriptionsSchema = z.object({
  webhookSubscriptions: z.object({
    nodes: z.array(z.object({ id: z.string(), topic: z.string(), uri: z.string().nullish() })),
    pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullish() }),
  }),
});

export function shopifyAdminFor(
  shop: ShopifyShopConfig,
  options: { timeoutMs?: number; logger?: Logger } = {},
): ShopifyAdminClient {
  return shopifyAdminClientFor(shop, {
    logger: options.logger ?? silentLogger,
    // A doctor answers fast: one retry, short waits.
    maxAttempts: 2,
    maxWaitMs: 1_000,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
}

/**
 * The access token works (first result) and the shop sells in XOF (second result, only when the first is ok).
 * Credentials refused make every later call of the shop pointless: the caller stops there.
 */
export async function checkShopifyShop(shop: ShopifyShopConfig, admin: ShopifyAdminClient): Promise<CheckResult[]> {
  const name = 'shop credentials';
  try {
    const { shop: info } = shopSchema.parse(await admin.query(DOCTOR_SHOPIFY_DOCUMENTS.shop, {}, 'RelaisDoctorShop'));
    return [
      {
        name,
        status: 'ok',
        detail: `"${info.name}" (${shop.shopify.domain}), ${describeShopifyToken(shop, { withSource: false })} accepted`,
      },
      currencyResult(info.currencyCode, 'Shopify admin › Settings › Store details › Store currency'),
    ];
  } catch (error) {
    return [{ name, ...explainShopifyFailure(error, shop) }];
  }
}

function explainShopifyFailure(error: unknown, shop: ShopifyShopConfig): Omit<CheckResult, 'name'> {
  const token = describeShopifyToken(shop);
  if (error instanceof ShopifyWriteError) {
    switch (error.status) {
      case 401:
        return {
          status: 'error',
          detail: `Shopify refused the ${token} (401)`,
          fix: 'the app was uninstalled or the token rotated: reinstall the app and put the new Admin API token in the referenced variable',
        };
      case 402:
        return {
          status: 'error',
          detail: `the shop ${shop.shopify.domain} is frozen (402 Payment Required)`,
          fix: 'the merchant must settle their Shopify bill',
        };
      case 403:
        return {
          status: 'error',
          detail: `the ${token} lacks an access scope (403)`,
          fix: 'grant the app read_orders, write_orders, write_fulfillments, write_shipping and reinstall',
        };
      case 404:
        return {
          status: 'error',
          detail: `no shop at ${shop.shopify.domain} (404)`,
          fix: 'check shopify.domain (the *.myshopify.com name)',
        };
      case 423:
        return {
          status: 'error',
          detail: `the shop ${shop.shopify.domain} is locked (423)`,
          fix: 'Shopify locked the shop; the merchant must contact Shopify',
        };
      default:
        break;
    }
    if (error.retryable)
      return {
        status: 'error',
        detail: `Shopify did not answer usefully: ${error.message}`,
        fix: 'check the network to Shopify, then run relais doctor again',
      };
    return { status: 'error', detail: error.message };
  }
  if (error instanceof z.ZodError)
    return { status: 'error', detail: 'Shopify answered something that is not the expected shape' };
  return { status: 'error', detail: messageOf(error) };
}

interface ShopifySubscription {
  id: string;
  topic: string;
  uri?: string | null;
}

async function listShopifySubscriptions(admin: ShopifyAdminClient): Promise<ShopifySubscription[]> {
  const all: ShopifySubscription[] = [];
  let after: string | null = null;
  for (let page = 0; page < 20; page++) {
    const parsed: z.output<typeof subscriptionsSchema> = subscriptionsSchema.parse(
      await admin.query(DOCTOR_SHOPIFY_DOCUMENTS.webhookSubscriptions, { after }, 'RelaisDoctorWebhooks'),
    );
    all.push(...parsed.webhookSubscriptions.nodes);
    const { hasNextPage, endCursor } = parsed.webhookSubscriptions.pageInfo;
    if (!hasNextPage || !endCursor) break;
    after = endCursor;
  }
  return all;
}

const COMPLIANCE_NOTE = `the compliance topics (${[...SHOPIFY_COMPLIANCE_TOPICS].join(', ')}) of a public app are set in its shopify.app.toml, not through the API, and are not checked here`;

/** orders/create, paid, updated, cancelled → {publicUrl}/webhooks/shopify; with fix, the missing ones are created. */
export async function checkShopifyWebhooks(
  shop: ShopifyShopConfig,
  admin: ShopifyAdminClient,
  publicUrl: string,
  fix: boolean,
): Promise<CheckResult> {
  const name = 'webhook subscriptions';
  const uri = publicEndpoint(publicUrl, shopifyWebhooks.path);
  let subscriptions: ShopifySubscription[];
  try {
    subscriptions = await listShopifySubscriptions(admin);
  } catch (error) {
    return { name, ...explainShopifyFailure(error, shop) };
  }
  const missing = SUBSCRIBED.filter((topic) => !subscriptions.some((s) => s.topic === topic && sameUrl(s.uri, uri)));
  const elsewhere = subscriptions.filter((s) => SUBSCRIBED.includes(s.topic) && !sameUrl(s.uri, uri));
  const strays =
    elsewhere.length > 0
      ? ` Also subscribed elsewhere: ${elsewhere.map((s) => `${topicName(s.topic)} → ${s.uri ?? '?'}`).join(', ')} (an earlier public URL?).`
      : '';
  if (missing.length === 0) {
    return {
      name,
      status: 'ok',
      detail: `${SUBSCRIBED.map(topicName).join(', ')} → ${uri}.${strays} Note: ${COMPLIANCE_NOTE}.`,
    };
  }
  if (!fix) {
    return {
      name,
      status: 'error',
      detail: `missing ${missing.map(topicName).join(', ')} → ${uri}: Relais never hears of those order events (Shopify deletes subscriptions after repeated failed deliveries).${strays}`,
      fix: 'relais doctor --fix registers them',
    };
  }
  const failures: string[] = [];
  for (const topic of missing) {
    try {
      await admin.mutate(
        DOCTOR_SHOPIFY_DOCUMENTS.webhookSubscriptionCreate,
        { topic, webhookSubscription: { uri, format: 'JSON' } },
        'RelaisDoctorWebhookCreate',
      );
    } catch (error) {
      failures.push(`${topicName(topic)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (failures.length > 0) {
    return {
      name,
      status: 'error',
      detail: `could not register ${failures.join('; ')}`,
      fix: "check the app's access scopes (read_orders), then run relais doctor --fix again",
    };
  }
  return {
    name,
    status: 'ok',
    detail: `registered ${missing.map(topicName).join(', ')} → ${uri} (were missing).${strays}`,
  };
}

/** With checkout rates on, Shopify must know Relais as a carrier service calling {publicUrl}/checkout/shopify/{shop}/rates. */
export async function checkShopifyCarrierService(
  shop: ShopifyShopConfig,
  admin: ShopifyAdminClient,
  publicUrl: string,
  fix: boolean,
): Promise<CheckResult> {
  const name = 'carrier service (checkout rates)';
  const callbackUrl = carrierServiceCallbackUrl(shop, publicUrl);
  if (fix) {
    const outcome = await registerCarrierService(shop, {
      request: (query, variables) => sendDocument(admin, query, variables),
      publicUrl,
    });
    return carrierResult(name, outcome);
  }
  try {
    const services = await listCarrierServices((query, variables) =>
      admin.query(query, variables, 'RelaisCarrierServices'),
    );
    const ours = services.find((s) => s.callbackUrl === callbackUrl);
    if (!ours) {
      return {
        name,
        status: 'warn',
        detail: `no carrier service calls ${callbackUrl}: checkout shows no Relais delivery price`,
        fix: 'relais doctor --fix registers it (needs the write_shipping scope and carrier-calculated shipping on the plan), or set policy.checkoutRates.enabled to false',
      };
    }
    if (!ours.active)
      return {
        name,
        status: 'warn',
        detail: `"${ours.name ?? ''}" calls ${callbackUrl} but is inactive: the merchant turned it off`,
        fix: 'the merchant re-activates it in Shopify (Settings › Shipping)',
      };
    return { name, status: 'ok', detail: `"${ours.name ?? ''}" → ${callbackUrl}` };
  } catch (error) {
    return { name, ...explainShopifyFailure(error, shop) };
  }
}

function carrierResult(name: string, outcome: CarrierServiceRegistration): CheckResult {
  switch (outcome.status) {
    case 'present':
      return { name, status: 'ok', detail: `registered → ${outcome.callbackUrl}` };
    case 'created':
      return { name, status: 'ok', detail: `registered → ${outcome.callbackUrl} (was missing)` };
    case 'updated':
      return {
        name,
        status: 'ok',
        detail: `re-pointed from ${outcome.previousCallbackUrl ?? '?'} to ${outcome.callbackUrl}`,
      };
    case 'inactive':
      return {
        name,
        status: 'warn',
        detail: outcome.message,
        fix: 'the merchant re-activates it in Shopify (Settings › Shipping)',
      };
    case 'failed':
      return {
        name,
        status: 'error',
        detail: outcome.message,
        fix: 'needs the write_shipping scope and carrier-calculated shipping on the plan; or set policy.checkoutRates.enabled to false',
      };
  }
}

/** registerCarrierService brings its own documents: queries are read, mutations are sent once. */
function sendDocument(
  admin: ShopifyAdminClient,
  document: string,
  variables: Record<string, unknown>,
): Promise<unknown> {
  const [, kind, operation] = /^\s*(query|mutation)\s+(\w+)/.exec(document) ?? [];
  return kind === 'mutation'
    ? admin.mutate(document, variables, operation ?? 'mutation')
    : admin.query(document, variables, operation ?? 'query');
}

/** The shop's checks, in order; with credentials refused, every other call would only repeat the same refusal. */
export async function shopifyDoctor(shop: ShopifyShopConfig, context: DoctorContext): Promise<CheckResult[]> {
  const admin = shopifyAdminFor(shop, { timeoutMs: context.timeoutMs, logger: context.logger });
  const results = await checkShopifyShop(shop, admin);
  if (results[0]?.status !== 'ok') return results;
  results.push(await checkShopifyCustomerData(admin));
  if (!context.publicUrl) return results;
  results.push(await checkShopifyWebhooks(shop, admin, context.publicUrl, context.fix));
  if (shop.policy.checkoutRates.enabled)
    results.push(await checkShopifyCarrierService(shop, admin, context.publicUrl, context.fix));
  return results;
}
