/**
 * `relais doctor`: checks everything Relais depends on and says plainly what is wrong and what to do.
 *
 *   Configuration  the environment; the shop registry (every problem listed); each pickup neighbourhood
 *                  and each alias target known to the gazetteer
 *   Redis          reachable; persistence (AOF or RDB); maxmemory-policy noeviction (BullMQ keys must never
 *                  be evicted); managed servers that disable CONFIG are said to be unchecked
 *   Each shop      the dispatch key (one cheap authenticated call); the shop's credentials and currency
 *                  (XOF); its order webhooks pointing at RELAIS_PUBLIC_URL; for Shopify shops with checkout
 *                  rates, the carrier service
 *
 * With `fix`, missing webhooks are registered again (Shopify deletes subscriptions after repeated failed
 * deliveries; WooCommerce disables webhooks), disabled WooCommerce webhooks are re-activated, and the Shopify
 * carrier service is registered or re-pointed (src/checkout/shopify-carrier-service.ts).
 *
 * Each check is a function returning CheckResult(s); `runDoctor` runs them and `renderReport` prints them.
 * Keys, tokens and secrets never reach a result: keys are shown by Secret.hint() and where they come from;
 * every client used here already scrubs credentials from its error messages.
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { lookupEnv, readEnv, type RelaisEnv } from '../config/env.js';
import { loadShopRegistry, ShopRegistryError, type SecretSource, type ShopConfig, type ShopRegistry, type ShopifyShopConfig, type WooShopConfig } from '../config/shops.js';
import {
  CARRIER_SERVICES_QUERY, carrierServiceCallbackUrl, registerCarrierService, type CarrierServiceRegistration,
} from '../checkout/shopify-carrier-service.js';
import { DispatchClient } from '../dispatch/client.js';
import { DispatchError } from '../dispatch/errors.js';
import { normaliseText, NeighbourhoodResolver } from '../geo/resolver.js';
import { silentLogger, type Logger } from '../log.js';
import { shopifyAdminClientFor, ShopifyWriteError, type ShopifyAdminClient } from '../stores/shopify/admin.js';
import { describeShopifyToken } from '../stores/shopify/access-token.js';
import { wireProfileOf } from '../dispatch/for-shop.js';
import { createWooOperatorRest, WooApiError, type WooOperatorRest, type WooWebhookView } from '../stores/woocommerce/rest.js';
import { z } from 'zod';

export type CheckStatus = 'ok' | 'warn' | 'error';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  /** What was found, in words an operator reads. Never a secret. */
  detail: string;
  /** What to do about it. */
  fix?: string;
}

export interface ReportEntry extends CheckResult {
  /** "Configuration", "Redis", "Shop dakar-mode (Shopify, dakar-mode.myshopify.com)". */
  section: string;
}

export interface DoctorReport {
  /** No check ended in error (warnings do not fail the run). */
  ok: boolean;
  fixed: boolean;
  counts: Record<CheckStatus, number>;
  checks: ReportEntry[];
}

export interface DoctorOptions {
  /** The environment to check (the CLI passes the process environment through config/env.ts). */
  env: NodeJS.ProcessEnv;
  /** Re-register missing webhooks, re-activate disabled ones, register the Shopify carrier service. */
  fix?: boolean;
  resolver?: NeighbourhoodResolver;
  /** How secret references are read; default: variables from `env`, files from disk. */
  secrets?: SecretSource;
  /** Time budget of each remote call. Default 5 s. */
  timeoutMs?: number;
  logger?: Logger;
}

const DEFAULT_TIMEOUT_MS = 5_000;
export const CURRENCY = 'XOF';
/** The Shopify order topics Relais handles (http/routes/webhooks.ts), as Admin GraphQL names them. */
export const SHOPIFY_WEBHOOK_TOPICS = ['ORDERS_CREATE', 'ORDERS_PAID', 'ORDERS_UPDATED', 'ORDERS_CANCELLED'] as const;
export const WOO_WEBHOOK_TOPICS = ['order.created', 'order.updated'] as const;

// ---- the documents sent to Shopify (validated against the Admin schema in test/ops/doctor.test.ts) -----------

export const DOCTOR_SHOPIFY_DOCUMENTS = {
  shop: `query RelaisDoctorShop {
  shop { name currencyCode myshopifyDomain }
}`,
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

const shopSchema = z.object({ shop: z.object({ name: z.string(), currencyCode: z.string(), myshopifyDomain: z.string().optional() }) });
const subscriptionsSchema = z.object({
  webhookSubscriptions: z.object({
    nodes: z.array(z.object({ id: z.string(), topic: z.string(), uri: z.string().nullish() })),
    pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullish() }),
  }),
});
const carrierServicesSchema = z.object({
  carrierServices: z.object({
    nodes: z.array(z.object({ id: z.string(), name: z.string().nullish(), callbackUrl: z.string().nullish(), active: z.boolean() })),
  }),
});

// ---- configuration -------------------------------------------------------------------------------------------

export function checkEnvironment(source: NodeJS.ProcessEnv): { result: CheckResult; env?: RelaisEnv } {
  try {
    const env = readEnv(source);
    return {
      env,
      result: { name: 'environment', status: 'ok', detail: `valid (REDIS_URL ${safeRedisUrl(env.REDIS_URL)}, shops from ${env.RELAIS_SHOPS_FILE})` },
    };
  } catch (error) {
    return {
      result: {
        name: 'environment', status: 'error', detail: messageOf(error),
        fix: 'set or correct the variables listed (README, "Configuration")',
      },
    };
  }
}

/** The registry loads, or every problem in it, each as its own line (a pk_test_ key is shown as a dispatch key problem). */
export function checkShopRegistry(path: string, secrets: SecretSource): { results: CheckResult[]; shops?: ShopRegistry } {
  try {
    const shops = loadShopRegistry(path, secrets);
    const ids = shops.all().map((s) => s.id);
    if (ids.length === 0) {
      return { shops, results: [{ name: 'shop registry', status: 'warn', detail: `${path} lists no shop: Relais will refuse every webhook`, fix: 'add your shops (config/shops.example.json)' }] };
    }
    return { shops, results: [{ name: 'shop registry', status: 'ok', detail: `${ids.length} shop${ids.length === 1 ? '' : 's'} (${ids.join(', ')})` }] };
  } catch (error) {
    if (!(error instanceof ShopRegistryError)) return { results: [{ name: 'shop registry', status: 'error', detail: messageOf(error) }] };
    return {
      results: error.problems.map((problem) => {
        const sandbox = /^shop ([\w-]+): dispatch\.apiKey is a pk_test_ key/.exec(problem);
        return sandbox
          ? { name: `dispatch key of ${sandbox[1]}`, status: 'error' as const, detail: problem, fix: 'put the organisation\'s pk_live_ key in the referenced variable or file' }
          : {
            name: 'shop registry', status: 'error' as const, detail: problem,
            fix: problem.startsWith('cannot read')
              ? `create ${path} from config/shops.example.json, or point RELAIS_SHOPS_FILE at your registry`
              : `correct ${path} (config/shops.example.json shows every field)`,
          };
      }),
    };
  }
}

/** The pickup neighbourhood is sent as the quote's pickup `city`: it must be a listed neighbourhood, written as listed. */
export function checkPickup(shop: ShopConfig, resolver: NeighbourhoodResolver): CheckResult {
  const name = 'pickup neighbourhood';
  const given = shop.pickup.neighbourhood;
  const resolution = resolver.resolve({ country: shop.country, fields: { city: given } });
  if (!resolution.ok) {
    return {
      name, status: 'error',
      detail: `"${given}" is not a neighbourhood Relais knows in ${shop.country}: ${resolution.reason}`,
      fix: `set pickup.neighbourhood of ${shop.id} to a listed neighbourhood (try: relais resolve "${given}" --country ${shop.country})`,
    };
  }
  const found = resolution.neighbourhood.name;
  if (normaliseText(found) !== normaliseText(given)) {
    return {
      name, status: 'warn',
      detail: `"${given}" resolves to ${found} (confidence ${resolution.confidence}); the service receives "${given}" as written and may price it as a city`,
      fix: `write pickup.neighbourhood of ${shop.id} as "${found}"`,
    };
  }
  return { name, status: 'ok', detail: `${found} (${shop.country})` };
}

/** Each registry alias points at a listed neighbourhood (run-time aliases are checked when added). */
export function checkAliases(shop: ShopConfig, resolver: NeighbourhoodResolver): CheckResult {
  const aliases = Object.entries(shop.policy.neighbourhoodAliases);
  if (aliases.length === 0) return { name: 'neighbourhood aliases', status: 'ok', detail: 'none in the registry' };
  const broken: string[] = [];
  for (const [text, target] of aliases) {
    // Resolved exactly as an order would be: the alias's words as the address, the alias alone as the table.
    const resolution = resolver.resolve({ country: shop.country, fields: { address1: text }, aliases: { [text]: target } });
    if (!resolution.ok || resolution.evidence[0]?.via !== 'alias') broken.push(`"${text}" → "${target}": ${resolution.ok ? 'the alias is never used' : resolution.reason}`);
  }
  if (broken.length > 0) {
    return {
      name: 'neighbourhood aliases', status: 'error', detail: broken.join('; '),
      fix: `correct policy.neighbourhoodAliases of ${shop.id}: each target must be a listed neighbourhood name`,
    };
  }
  return { name: 'neighbourhood aliases', status: 'ok', detail: `${aliases.length} alias${aliases.length === 1 ? '' : 'es'}, each to a listed neighbourhood` };
}

// ---- Redis ---------------------------------------------------------------------------------------------------

export async function checkRedis(url: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<CheckResult[]> {
  const where = safeRedisUrl(url);
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, commandTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  let lastError: string | undefined;
  redis.on('error', (error: Error) => {
    lastError = error.message;
  });
  try {
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      return [{
        name: 'reachable', status: 'error', detail: `no answer from Redis at ${where} (${lastError ?? messageOf(error)})`,
        fix: 'start Redis (redis-server) or correct REDIS_URL; the web process answers 503 to every webhook while Redis is down',
      }];
    }
    const version = /redis_version:([^\r\n]+)/.exec(await redis.info('server').catch(() => ''))?.[1];
    const results: CheckResult[] = [{ name: 'reachable', status: 'ok', detail: `Redis${version ? ` ${version}` : ''} at ${where}` }];
    let config: Record<string, string>;
    try {
      config = {
        ...configPairs(await redis.call('CONFIG', 'GET', 'appendonly')),
        ...configPairs(await redis.call('CONFIG', 'GET', 'save')),
        ...configPairs(await redis.call('CONFIG', 'GET', 'maxmemory-policy')),
      };
    } catch (error) {
      results.push({
        name: 'persistence and eviction', status: 'warn',
        detail: `could not be checked: CONFIG is not available on this server (${messageOf(error)}), as on most managed Redis`,
        fix: 'check in your provider\'s console that persistence (AOF) is on and maxmemory-policy is noeviction',
      });
      return results;
    }
    results.push(persistenceResult(config));
    results.push(evictionResult(config['maxmemory-policy']));
    return results;
  } finally {
    redis.disconnect();
  }
}

function persistenceResult(config: Record<string, string>): CheckResult {
  const name = 'persistence';
  if (config.appendonly === 'yes') return { name, status: 'ok', detail: 'append-only file on (appendonly yes)' };
  const save = (config.save ?? '').trim();
  if (save !== '') {
    return { name, status: 'ok', detail: `RDB snapshots (save ${save}); AOF (appendonly yes) would lose less on a crash` };
  }
  return {
    name, status: 'warn', detail: 'off: no append-only file and no snapshot schedule; a Redis restart loses every queued job and the order ledger',
    fix: 'redis-cli CONFIG SET appendonly yes (and appendonly yes in redis.conf)',
  };
}

function evictionResult(policy: string | undefined): CheckResult {
  const name = 'maxmemory-policy';
  if (policy === 'noeviction') return { name, status: 'ok', detail: 'noeviction' };
  return {
    name, status: 'error',
    detail: `${policy ?? 'unknown'}: Redis may evict keys when memory runs short, and a BullMQ key evicted is a job (an order) lost or corrupted`,
    fix: 'redis-cli CONFIG SET maxmemory-policy noeviction (and maxmemory-policy noeviction in redis.conf)',
  };
}

function configPairs(reply: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(reply)) return out;
  for (let i = 0; i + 1 < reply.length; i += 2) out[String(reply[i])] = String(reply[i + 1]);
  return out;
}

// ---- the dispatch key ----------------------------------------------------------------------------------------

export async function checkDispatchKey(shop: ShopConfig, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<CheckResult> {
  const name = 'dispatch key';
  const key = shop.dispatch.apiKey;
  const shown = `${key.hint()} (from ${key.source})`;
  let client: DispatchClient;
  try {
    client = new DispatchClient({
      baseUrl: shop.dispatch.baseUrl, trackingUrl: shop.dispatch.trackingUrl, apiKey: key.reveal(),
      timeoutMs: Math.min(timeoutMs, shop.dispatch.timeoutMs),
      profile: wireProfileOf(shop),
    });
  } catch (error) {
    return { name, status: 'error', detail: `${shown}: ${messageOf(error)}`, fix: 'use the organisation\'s pk_live_ key' };
  }
  try {
    await client.listShipments({ limit: 1 });
    return { name, status: 'ok', detail: `${shown} accepted by ${client.baseUrl}` };
  } catch (error) {
    return { name, ...explainDispatchFailure(error, shown, client.baseUrl) };
  } finally {
    await client.close();
  }
}

function explainDispatchFailure(error: unknown, shown: string, baseUrl: string): Omit<CheckResult, 'name'> {
  if (!(error instanceof DispatchError)) return { status: 'error', detail: `${shown}: ${messageOf(error)}` };
  if (error.kind === 'network') {
    return { status: 'error', detail: `cannot reach ${baseUrl} (${error.message})`, fix: 'check dispatch.baseUrl, DNS and the firewall between Relais and the service' };
  }
  if (error.kind === 'timeout') {
    return { status: 'error', detail: `${baseUrl} did not answer in time`, fix: 'check dispatch.baseUrl; if the service is slow right now, run relais doctor again later' };
  }
  if (error.status === 401) {
    return {
      status: 'error', detail: `${shown} was refused by ${baseUrl} (401${error.code ? ` ${error.code}` : ''}): the service does not know this key`,
      fix: 'the key is mistyped, revoked or from another environment: put the current pk_live_ key in the referenced variable or file',
    };
  }
  if (error.status === 403) {
    return {
      status: 'error', detail: `${shown} is known but not allowed to list shipments (403${error.code ? ` ${error.code}` : ''})`,
      fix: error.code === 'SANDBOX_KEY_NOT_SUPPORTED' ? 'the service has no test keys: use a pk_live_ key' : 'ask the dispatch service to give this key access to the organisation',
    };
  }
  if (error.status === 404) {
    return { status: 'error', detail: `${baseUrl} has no shipments endpoint (404): not the dispatch service's API`, fix: 'check dispatch.baseUrl (the API root, without /v1)' };
  }
  if (error.retryable) {
    return { status: 'error', detail: `${baseUrl} answered ${error.status ?? error.kind}: the service is unavailable right now, the key could not be checked`, fix: 'run relais doctor again later' };
  }
  return { status: 'error', detail: `${shown}: ${error.message}` };
}

// ---- Shopify -------------------------------------------------------------------------------------------------

export function shopifyAdminFor(shop: ShopifyShopConfig, options: { timeoutMs?: number; logger?: Logger } = {}): ShopifyAdminClient {
  return shopifyAdminClientFor(shop, {
    logger: options.logger ?? silentLogger,
    // A doctor answers fast: one retry, short waits.
    maxAttempts: 2, maxWaitMs: 1_000, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
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
      { name, status: 'ok', detail: `"${info.name}" (${shop.shopify.domain}), ${describeShopifyToken(shop, { withSource: false })} accepted` },
      currencyResult(info.currencyCode, 'Shopify admin › Settings › Store details › Store currency'),
    ];
  } catch (error) {
    return [{ name, ...explainShopifyFailure(error, shop) }];
  }
}

function currencyResult(currency: string, where: string): CheckResult {
  const name = 'currency';
  if (currency.toUpperCase() === CURRENCY) return { name, status: 'ok', detail: CURRENCY };
  return {
    name, status: 'error',
    detail: `the shop sells in ${currency}: the delivery service collects XOF only, so Relais holds every order of this shop`,
    fix: `set the store currency to ${CURRENCY} (${where}), or remove the shop from the registry`,
  };
}

function explainShopifyFailure(error: unknown, shop: ShopifyShopConfig): Omit<CheckResult, 'name'> {
  const token = describeShopifyToken(shop);
  if (error instanceof ShopifyWriteError) {
    switch (error.status) {
      case 401:
        return { status: 'error', detail: `Shopify refused the ${token} (401)`, fix: 'the app was uninstalled or the token rotated: reinstall the app and put the new Admin API token in the referenced variable' };
      case 402:
        return { status: 'error', detail: `the shop ${shop.shopify.domain} is frozen (402 Payment Required)`, fix: 'the merchant must settle their Shopify bill' };
      case 403:
        return { status: 'error', detail: `the ${token} lacks an access scope (403)`, fix: 'grant the app read_orders, write_orders, write_fulfillments, write_shipping and reinstall' };
      case 404:
        return { status: 'error', detail: `no shop at ${shop.shopify.domain} (404)`, fix: 'check shopify.domain (the *.myshopify.com name)' };
      case 423:
        return { status: 'error', detail: `the shop ${shop.shopify.domain} is locked (423)`, fix: 'Shopify locked the shop; the merchant must contact Shopify' };
      default:
        break;
    }
    if (error.retryable) return { status: 'error', detail: `Shopify did not answer usefully: ${error.message}`, fix: 'check the network to Shopify, then run relais doctor again' };
    return { status: 'error', detail: error.message };
  }
  if (error instanceof z.ZodError) return { status: 'error', detail: 'Shopify answered something that is not the expected shape' };
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
    const parsed: z.output<typeof subscriptionsSchema> = subscriptionsSchema.parse(await admin.query(DOCTOR_SHOPIFY_DOCUMENTS.webhookSubscriptions, { after }, 'RelaisDoctorWebhooks'));
    all.push(...parsed.webhookSubscriptions.nodes);
    const { hasNextPage, endCursor } = parsed.webhookSubscriptions.pageInfo;
    if (!hasNextPage || !endCursor) break;
    after = endCursor;
  }
  return all;
}

const COMPLIANCE_NOTE = 'the compliance topics (customers/data_request, customers/redact, shop/redact) of a public app are set in its shopify.app.toml, not through the API, and are not checked here';

/** orders/create, paid, updated, cancelled → {publicUrl}/webhooks/shopify; with fix, the missing ones are created. */
export async function checkShopifyWebhooks(shop: ShopifyShopConfig, admin: ShopifyAdminClient, publicUrl: string, fix: boolean): Promise<CheckResult> {
  const name = 'webhook subscriptions';
  const uri = publicEndpoint(publicUrl, '/webhooks/shopify');
  let subscriptions: ShopifySubscription[];
  try {
    subscriptions = await listShopifySubscriptions(admin);
  } catch (error) {
    return { name, ...explainShopifyFailure(error, shop) };
  }
  const missing = SHOPIFY_WEBHOOK_TOPICS.filter((topic) => !subscriptions.some((s) => s.topic === topic && sameUrl(s.uri, uri)));
  const elsewhere = subscriptions.filter((s) => (SHOPIFY_WEBHOOK_TOPICS as readonly string[]).includes(s.topic) && !sameUrl(s.uri, uri));
  const strays = elsewhere.length > 0 ? ` Also subscribed elsewhere: ${elsewhere.map((s) => `${topicName(s.topic)} → ${s.uri ?? '?'}`).join(', ')} (an earlier public URL?).` : '';
  if (missing.length === 0) {
    return { name, status: 'ok', detail: `${SHOPIFY_WEBHOOK_TOPICS.map(topicName).join(', ')} → ${uri}.${strays} Note: ${COMPLIANCE_NOTE}.` };
  }
  if (!fix) {
    return {
      name, status: 'error',
      detail: `missing ${missing.map(topicName).join(', ')} → ${uri}: Relais never hears of those order events (Shopify deletes subscriptions after repeated failed deliveries).${strays}`,
      fix: 'relais doctor --fix registers them',
    };
  }
  const failures: string[] = [];
  for (const topic of missing) {
    try {
      await admin.mutate(DOCTOR_SHOPIFY_DOCUMENTS.webhookSubscriptionCreate, { topic, webhookSubscription: { uri, format: 'JSON' } }, 'RelaisDoctorWebhookCreate');
    } catch (error) {
      failures.push(`${topicName(topic)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (failures.length > 0) {
    return { name, status: 'error', detail: `could not register ${failures.join('; ')}`, fix: 'check the app\'s access scopes (read_orders), then run relais doctor --fix again' };
  }
  return { name, status: 'ok', detail: `registered ${missing.map(topicName).join(', ')} → ${uri} (were missing).${strays}` };
}

/** With checkout rates on, Shopify must know Relais as a carrier service calling {publicUrl}/checkout/shopify/{shop}/rates. */
export async function checkShopifyCarrierService(shop: ShopifyShopConfig, admin: ShopifyAdminClient, publicUrl: string, fix: boolean): Promise<CheckResult> {
  const name = 'carrier service (checkout rates)';
  const callbackUrl = carrierServiceCallbackUrl(shop, publicUrl);
  if (fix) {
    const outcome = await registerCarrierService(shop, { request: (query, variables) => sendDocument(admin, query, variables), publicUrl });
    return carrierResult(name, outcome);
  }
  try {
    const { carrierServices } = carrierServicesSchema.parse(await admin.query(CARRIER_SERVICES_QUERY, { after: null }, 'RelaisCarrierServices'));
    const ours = carrierServices.nodes.find((s) => s.callbackUrl === callbackUrl);
    if (!ours) {
      return {
        name, status: 'warn', detail: `no carrier service calls ${callbackUrl}: checkout shows no Relais delivery price`,
        fix: 'relais doctor --fix registers it (needs the write_shipping scope and carrier-calculated shipping on the plan), or set policy.checkoutRates.enabled to false',
      };
    }
    if (!ours.active) return { name, status: 'warn', detail: `"${ours.name ?? ''}" calls ${callbackUrl} but is inactive: the merchant turned it off`, fix: 'the merchant re-activates it in Shopify (Settings › Shipping)' };
    return { name, status: 'ok', detail: `"${ours.name ?? ''}" → ${callbackUrl}` };
  } catch (error) {
    return { name, ...explainShopifyFailure(error, shop) };
  }
}

function carrierResult(name: string, outcome: CarrierServiceRegistration): CheckResult {
  switch (outcome.status) {
    case 'present': return { name, status: 'ok', detail: `registered → ${outcome.callbackUrl}` };
    case 'created': return { name, status: 'ok', detail: `registered → ${outcome.callbackUrl} (was missing)` };
    case 'updated': return { name, status: 'ok', detail: `re-pointed from ${outcome.previousCallbackUrl ?? '?'} to ${outcome.callbackUrl}` };
    case 'inactive': return { name, status: 'warn', detail: outcome.message, fix: 'the merchant re-activates it in Shopify (Settings › Shipping)' };
    case 'failed': return { name, status: 'error', detail: outcome.message, fix: 'needs the write_shipping scope and carrier-calculated shipping on the plan; or set policy.checkoutRates.enabled to false' };
  }
}

/** registerCarrierService brings its own documents: queries are read, mutations are sent once. */
function sendDocument(admin: ShopifyAdminClient, document: string, variables: Record<string, unknown>): Promise<unknown> {
  const [, kind, operation] = /^\s*(query|mutation)\s+(\w+)/.exec(document) ?? [];
  return kind === 'mutation' ? admin.mutate(document, variables, operation ?? 'mutation') : admin.query(document, variables, operation ?? 'query');
}

// ---- WooCommerce ---------------------------------------------------------------------------------------------

export function wooOperatorRestFor(shop: WooShopConfig, options: { timeoutMs?: number; logger?: Logger } = {}): WooOperatorRest {
  return createWooOperatorRest({
    url: shop.woocommerce.url, consumerKey: shop.woocommerce.consumerKey, consumerSecret: shop.woocommerce.consumerSecret,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, logger: options.logger ?? silentLogger,
  });
}

/** The REST keys work (first result) and the shop sells in XOF (second result, only when the first is ok). */
export async function checkWooShop(shop: WooShopConfig, rest: WooOperatorRest): Promise<CheckResult[]> {
  const name = 'shop credentials';
  try {
    const setting = await rest.getSetting('general', 'woocommerce_currency');
    const currency = typeof setting.value === 'string' ? setting.value : String(setting.value);
    return [
      { name, status: 'ok', detail: `${shop.woocommerce.url}, REST key ${shop.woocommerce.consumerKey.hint()} accepted` },
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
        status: 'error', detail: `WooCommerce refused the ${key} (401${error.code ? ` ${error.code}` : ''})`,
        fix: 'create a key with Read/Write permission (WooCommerce › Settings › Advanced › REST API) and put it and its secret in the referenced variables',
      };
    }
    if (error.status === 403) {
      return { status: 'error', detail: `the ${key} may not do this (403${error.code ? ` ${error.code}` : ''})`, fix: 'give the key Read/Write permission, on a user who can manage WooCommerce' };
    }
    if (error.status === 404) {
      return { status: 'error', detail: `no WooCommerce REST API at ${shop.woocommerce.url} (404)`, fix: 'check woocommerce.url (the site address), that WooCommerce is active and permalinks are not "Plain"' };
    }
    if (error.kind === 'network' || error.kind === 'timeout') {
      return { status: 'error', detail: `cannot reach ${shop.woocommerce.url}: ${error.message}`, fix: 'check woocommerce.url and the network between Relais and the shop' };
    }
    return { status: 'error', detail: error.message };
  }
  return { status: 'error', detail: messageOf(error) };
}

/** order.created and order.updated → {publicUrl}/webhooks/woocommerce/{shop}, active; with fix, created or re-activated. */
export async function checkWooWebhooks(shop: WooShopConfig, rest: WooOperatorRest, publicUrl: string, fix: boolean): Promise<CheckResult> {
  const name = 'webhooks';
  const url = publicEndpoint(publicUrl, `/webhooks/woocommerce/${encodeURIComponent(shop.id)}`);
  let hooks: WooWebhookView[];
  try {
    hooks = await rest.listWebhooks();
  } catch (error) {
    return { name, ...explainWooFailure(error, shop) };
  }
  const problems: { topic: string; hook?: WooWebhookView }[] = [];
  for (const topic of WOO_WEBHOOK_TOPICS) {
    const ours = hooks.filter((h) => h.topic === topic && sameUrl(h.delivery_url, url));
    if (ours.some((h) => h.status === 'active')) continue;
    problems.push({ topic, ...(ours[0] ? { hook: ours[0] } : {}) });
  }
  if (problems.length === 0) return { name, status: 'ok', detail: `${WOO_WEBHOOK_TOPICS.join(', ')} → ${url}, active` };
  const describe = (p: { topic: string; hook?: WooWebhookView }) =>
    p.hook ? `${p.topic} is ${p.hook.status}${p.hook.status === 'disabled' ? ' (WooCommerce disables a webhook after repeated failed deliveries)' : ''}` : `${p.topic} is missing`;
  if (!fix) {
    return { name, status: 'error', detail: `${problems.map(describe).join('; ')} (→ ${url}): WooCommerce never retries, so those orders never reach Relais`, fix: 'relais doctor --fix registers or re-activates them' };
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
        await rest.createWebhook({ name: `Relais ${problem.topic}`, topic: problem.topic, delivery_url: url, secret: shop.woocommerce.webhookSecret.reveal() });
        done.push(`registered ${problem.topic}`);
      }
    } catch (error) {
      failures.push(`${problem.topic}: ${explainWooFailure(error, shop).detail}`);
    }
  }
  if (failures.length > 0) return { name, status: 'error', detail: `could not repair ${failures.join('; ')}`, fix: 'check the key has Read/Write permission, then run relais doctor --fix again' };
  return { name, status: 'ok', detail: `${done.join(', ')} → ${url}` };
}

// ---- the run -------------------------------------------------------------------------------------------------

export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const fix = options.fix === true;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const logger = options.logger ?? silentLogger;
  const entries: ReportEntry[] = [];
  const add = (section: string, results: CheckResult | CheckResult[]) => {
    for (const result of Array.isArray(results) ? results : [results]) entries.push({ section, ...result });
  };

  const environment = checkEnvironment(options.env);
  add('Configuration', environment.result);
  const env = environment.env;
  if (!env) return finish(entries, fix);

  const secrets = options.secrets ?? secretsFrom(options.env);
  const registry = checkShopRegistry(env.RELAIS_SHOPS_FILE, secrets);
  add('Configuration', registry.results);

  const resolver = options.resolver ?? NeighbourhoodResolver.load();
  const shops = registry.shops?.all() ?? [];
  const publicUrl = env.RELAIS_PUBLIC_URL;
  if (!publicUrl && shops.length > 0) {
    add('Configuration', {
      name: 'RELAIS_PUBLIC_URL', status: 'warn', detail: 'not set: the shops\' webhook subscriptions (and the Shopify carrier service) cannot be checked without it',
      fix: 'set RELAIS_PUBLIC_URL to the https URL at which shops reach the web process',
    });
  }

  // Redis and the shops are independent: checked at once, reported in a fixed order.
  const [redis, ...perShop] = await Promise.all([
    checkRedis(env.REDIS_URL, timeoutMs),
    ...shops.map((shop) => checkShop(shop, { resolver, publicUrl, fix, timeoutMs, logger })),
  ]);
  add('Redis', redis);
  shops.forEach((shop, i) => add(sectionOf(shop), perShop[i] ?? []));
  return finish(entries, fix);
}

async function checkShop(
  shop: ShopConfig,
  context: { resolver: NeighbourhoodResolver; publicUrl: string | undefined; fix: boolean; timeoutMs: number; logger: Logger },
): Promise<CheckResult[]> {
  const results: CheckResult[] = [checkPickup(shop, context.resolver), checkAliases(shop, context.resolver), await checkDispatchKey(shop, context.timeoutMs)];
  if (context.publicUrl) results.push(checkDeliveryWebhook(shop, context.publicUrl));
  const clientOptions = { timeoutMs: context.timeoutMs, logger: context.logger };
  if (shop.platform === 'shopify') {
    const admin = shopifyAdminFor(shop, clientOptions);
    const credentials = await checkShopifyShop(shop, admin);
    results.push(...credentials);
    // With credentials refused, every other call would only repeat the same refusal.
    if (credentials[0]?.status !== 'ok') return results;
    if (context.publicUrl) {
      results.push(await checkShopifyWebhooks(shop, admin, context.publicUrl, context.fix));
      if (shop.policy.checkoutRates.enabled) results.push(await checkShopifyCarrierService(shop, admin, context.publicUrl, context.fix));
    }
  } else {
    const rest = wooOperatorRestFor(shop, clientOptions);
    const credentials = await checkWooShop(shop, rest);
    results.push(...credentials);
    if (credentials[0]?.status !== 'ok') return results;
    if (context.publicUrl) results.push(await checkWooWebhooks(shop, rest, context.publicUrl, context.fix));
  }
  return results;
}

function sectionOf(shop: ShopConfig): string {
  return shop.platform === 'shopify' ? `Shop ${shop.id} (Shopify, ${shop.shopify.domain})` : `Shop ${shop.id} (WooCommerce, ${shop.woocommerce.url})`;
}

function finish(checks: ReportEntry[], fixed: boolean): DoctorReport {
  const counts: Record<CheckStatus, number> = { ok: 0, warn: 0, error: 0 };
  for (const check of checks) counts[check.status] += 1;
  return { ok: counts.error === 0, fixed, counts, checks };
}

// ---- rendering -----------------------------------------------------------------------------------------------

const MARK: Record<CheckStatus, string> = { ok: '✔', warn: '⚠', error: '✖' };

/** The plain report: one line per check under its section, what to do under each problem, a summary. */
export function renderReport(report: DoctorReport): string {
  const lines: string[] = [`Relais doctor${report.fixed ? ' --fix' : ''}`];
  let section: string | undefined;
  for (const check of report.checks) {
    if (check.section !== section) {
      section = check.section;
      lines.push('', section);
    }
    lines.push(`  ${MARK[check.status]} ${check.name}: ${check.detail}`);
    if (check.fix && check.status !== 'ok') lines.push(`      → ${check.fix}`);
  }
  const { ok, warn, error } = report.counts;
  lines.push('', report.ok
    ? `All good: ${ok} check${ok === 1 ? '' : 's'} passed${warn > 0 ? `, ${warn} warning${warn === 1 ? '' : 's'}` : ''}.`
    : `${error} problem${error === 1 ? '' : 's'} to fix${warn > 0 ? `, ${warn} warning${warn === 1 ? '' : 's'}` : ''} (${ok} check${ok === 1 ? '' : 's'} passed).`);
  return `${lines.join('\n')}\n`;
}

/** The report for machines (`relais doctor --json`). */
export function reportJson(report: DoctorReport): string {
  return JSON.stringify(report, null, 2);
}

// ---- helpers -------------------------------------------------------------------------------------------------

/** publicUrl + path, keeping a path prefix the public URL may have (https://example.com/relais). */
/**
 * Where the dispatch service must send this shop's delivery webhooks, and the signature Relais checks there
 * (the wire profile's header): what the merchant copies into the service's console. The token in the URL is
 * a secret and stays out of the output: it is named by where it comes from.
 */
export function checkDeliveryWebhook(shop: ShopConfig, publicUrl: string): CheckResult {
  const name = 'delivery webhook';
  const profile = wireProfileOf(shop);
  const base = publicEndpoint(publicUrl, `/webhooks/dispatch/${encodeURIComponent(shop.id)}/`);
  const url = `${base}<dispatch.webhookToken from ${shop.dispatch.webhookToken.source}>`;
  const signature = shop.dispatch.webhookSigningSecret
    ? `signature checked in header ${profile.signatureHeader} (${profile.document.webhook.signature.prefix || 'no prefix'}, ${profile.document.webhook.signature.encoding} HMAC-${profile.document.webhook.signature.algorithm.toUpperCase()}) with dispatch.webhookSigningSecret`
    : `no signature checked (set dispatch.webhookSigningSecret to check header ${profile.signatureHeader})`;
  return { name, status: 'ok', detail: `${url}; wire profile "${profile.name}"; ${signature}` };
}

export function publicEndpoint(publicUrl: string, path: string): string {
  const url = new URL(publicUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  url.search = '';
  url.hash = '';
  return url.href;
}

function sameUrl(a: string | null | undefined, b: string): boolean {
  return typeof a === 'string' && a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/** ORDERS_CREATE → orders/create, as merchants see topics in Shopify's admin. */
function topicName(topic: string): string {
  return topic.toLowerCase().replace('_', '/');
}

/** The Redis URL without its password. */
function safeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href.replace(/\/$/, '');
  } catch {
    return 'an unreadable URL';
  }
}

function secretsFrom(env: NodeJS.ProcessEnv): SecretSource {
  return (ref) => {
    if ('env' in ref) return lookupEnv(ref.env, env);
    try {
      return readFileSync(ref.file, 'utf8').trim() || undefined;
    } catch {
      return undefined;
    }
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
