/**
 * The checks relais doctor runs (doctor.ts runs them and renders the report): the configuration, Redis and the
 * delivery service key. Each says what it found and what to do; keys, tokens and secrets never reach a result.
 */
import { Redis } from 'ioredis';
import { readEnv, type RelaisEnv } from '../config/env.js';
import {
  defaultSecretSourceFor,
  loadShopRegistry,
  ShopRegistryError,
  type SecretSource,
  type ShopConfig,
  type ShopRegistry,
} from '../shops/shops.js';
import { DispatchClient } from '../adapters/dispatch-api/client.js';
import { DispatchError } from '../adapters/dispatch-api/errors.js';
import { normaliseText, NeighbourhoodResolver } from '../geo/resolver.js';
import { wireProfileOf } from '../adapters/dispatch-api/for-shop.js';
import { messageOf, publicEndpoint, type CheckResult } from '../domain/checks.js';
import { parseClusterNodes, redisTargetForHumans } from '../redis.js';

export const DEFAULT_TIMEOUT_MS = 5_000;
// ---- configuration -------------------------------------------------------------------------------------------

export function checkEnvironment(source: NodeJS.ProcessEnv): { result: CheckResult; env?: RelaisEnv } {
  try {
    const env = readEnv(source);
    return {
      env,
      result: {
        name: 'environment',
        status: 'ok',
        detail: `valid (${env.REDIS_CLUSTER_NODES ? `REDIS_CLUSTER_NODES: ${redisTargetForHumans({ redisUrl: env.REDIS_URL, redisClusterNodes: parseClusterNodes(env.REDIS_CLUSTER_NODES) })}` : `REDIS_URL ${safeRedisUrl(env.REDIS_URL)}`}, shops from ${env.RELAIS_SHOPS_FILE})`,
      },
    };
  } catch (error) {
    return {
      result: {
        name: 'environment',
        status: 'error',
        detail: messageOf(error),
        fix: 'set or correct the variables listed (README, "Configuration")',
      },
    };
  }
}

/** The registry loads, or every problem in it, each as its own line (a pk_test_ key is shown as a dispatch key problem). */
export function checkShopRegistry(
  path: string,
  secrets: SecretSource,
): { results: CheckResult[]; shops?: ShopRegistry } {
  try {
    const shops = loadShopRegistry(path, secrets);
    const ids = shops.all().map((s) => s.id);
    if (ids.length === 0) {
      return {
        shops,
        results: [
          {
            name: 'shop registry',
            status: 'warn',
            detail: `${path} lists no shop: Relais will refuse every webhook`,
            fix: 'add your shops (config/shops.example.json)',
          },
        ],
      };
    }
    return {
      shops,
      results: [
        {
          name: 'shop registry',
          status: 'ok',
          detail: `${ids.length} shop${ids.length === 1 ? '' : 's'} (${ids.join(', ')})`,
        },
      ],
    };
  } catch (error) {
    if (!(error instanceof ShopRegistryError))
      return { results: [{ name: 'shop registry', status: 'error', detail: messageOf(error) }] };
    return {
      results: error.problems.map((problem) => {
        const sandbox = /^shop ([\w-]+): dispatch\.apiKey is a pk_test_ key/.exec(problem);
        return sandbox
          ? {
              name: `dispatch key of ${sandbox[1]}`,
              status: 'error' as const,
              detail: problem,
              fix: "put the organisation's pk_live_ key in the referenced variable or file",
            }
          : {
              name: 'shop registry',
              status: 'error' as const,
              detail: problem,
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
      name,
      status: 'error',
      detail: `"${given}" is not a neighbourhood Relais knows in ${shop.country}: ${resolution.reason}`,
      fix: `set pickup.neighbourhood of ${shop.id} to a listed neighbourhood (try: relais resolve "${given}" --country ${shop.country})`,
    };
  }
  const found = resolution.neighbourhood.name;
  if (normaliseText(found) !== normaliseText(given)) {
    return {
      name,
      status: 'warn',
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
    const resolution = resolver.resolve({
      country: shop.country,
      fields: { address1: text },
      aliases: { [text]: target },
    });
    if (!resolution.ok || resolution.evidence[0]?.via !== 'alias')
      broken.push(`"${text}" → "${target}": ${resolution.ok ? 'the alias is never used' : resolution.reason}`);
  }
  if (broken.length > 0) {
    return {
      name: 'neighbourhood aliases',
      status: 'error',
      detail: broken.join('; '),
      fix: `correct policy.neighbourhoodAliases of ${shop.id}: each target must be a listed neighbourhood name`,
    };
  }
  return {
    name: 'neighbourhood aliases',
    status: 'ok',
    detail: `${aliases.length} alias${aliases.length === 1 ? '' : 'es'}, each to a listed neighbourhood`,
  };
}

// ---- Redis ---------------------------------------------------------------------------------------------------

export async function checkRedis(url: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<CheckResult[]> {
  const where = safeRedisUrl(url);
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  let lastError: string | undefined;
  redis.on('error', (error: Error) => {
    lastError = error.message;
  });
  try {
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      return [
        {
          name: 'reachable',
          status: 'error',
          detail: `no answer from Redis at ${where} (${lastError ?? messageOf(error)})`,
          fix: 'start Redis (redis-server) or correct REDIS_URL; the web process answers 503 to every webhook while Redis is down',
        },
      ];
    }
    const version = /redis_version:([^\r\n]+)/.exec(await redis.info('server').catch(() => ''))?.[1];
    const results: CheckResult[] = [
      { name: 'reachable', status: 'ok', detail: `Redis${version ? ` ${version}` : ''} at ${where}` },
    ];
    let config: Record<string, string>;
    try {
      config = {
        ...configPairs(await redis.call('CONFIG', 'GET', 'appendonly')),
        ...configPairs(await redis.call('CONFIG', 'GET', 'save')),
        ...configPairs(await redis.call('CONFIG', 'GET', 'maxmemory-policy')),
      };
    } catch (error) {
      results.push({
        name: 'persistence and eviction',
        status: 'warn',
        detail: `could not be checked: CONFIG is not available on this server (${messageOf(error)}), as on most managed Redis`,
        fix: "check in your provider's console that persistence (AOF) is on and maxmemory-policy is noeviction",
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
    return {
      name,
      status: 'ok',
      detail: `RDB snapshots (save ${save}); AOF (appendonly yes) would lose less on a crash`,
    };
  }
  return {
    name,
    status: 'warn',
    detail:
      'off: no append-only file and no snapshot schedule; a Redis restart loses every queued job and the order ledger',
    fix: 'redis-cli CONFIG SET appendonly yes (and appendonly yes in redis.conf)',
  };
}

function evictionResult(policy: string | undefined): CheckResult {
  const name = 'maxmemory-policy';
  if (policy === 'noeviction') return { name, status: 'ok', detail: 'noeviction' };
  return {
    name,
    status: 'error',
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
      baseUrl: shop.dispatch.baseUrl,
      trackingUrl: shop.dispatch.trackingUrl,
      apiKey: key.reveal(),
      timeoutMs: Math.min(timeoutMs, shop.dispatch.timeoutMs),
      profile: wireProfileOf(shop),
    });
  } catch (error) {
    return {
      name,
      status: 'error',
      detail: `${shown}: ${messageOf(error)}`,
      fix: "use the organisation's pk_live_ key",
    };
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
    return {
      status: 'error',
      detail: `cannot reach ${baseUrl} (${error.message})`,
      fix: 'check dispatch.baseUrl, DNS and the firewall between Relais and the service',
    };
  }
  if (error.kind === 'timeout') {
    return {
      status: 'error',
      detail: `${baseUrl} did not answer in time`,
      fix: 'check dispatch.baseUrl; if the service is slow right now, run relais doctor again later',
    };
  }
  if (error.status === 401) {
    return {
      status: 'error',
      detail: `${shown} was refused by ${baseUrl} (401${error.code ? ` ${error.code}` : ''}): the service does not know this key`,
      fix: 'the key is mistyped, revoked or from another environment: put the current pk_live_ key in the referenced variable or file',
    };
  }
  if (error.status === 403) {
    return {
      status: 'error',
      detail: `${shown} is known but not allowed to list shipments (403${error.code ? ` ${error.code}` : ''})`,
      fix:
        error.code === 'SANDBOX_KEY_NOT_SUPPORTED'
          ? 'the service has no test keys: use a pk_live_ key'
          : 'ask the dispatch service to give this key access to the organisation',
    };
  }
  if (error.status === 404) {
    return {
      status: 'error',
      detail: `${baseUrl} has no shipments endpoint (404): not the dispatch service's API`,
      fix: 'check dispatch.baseUrl (the API root, without /v1)',
    };
  }
  if (error.retryable) {
    return {
      status: 'error',
      detail: `${baseUrl} answered ${error.status ?? error.kind}: the service is unavailable right now, the key could not be checked`,
      fix: 'run relais doctor again later',
    };
  }
  return { status: 'error', detail: `${shown}: ${error.message}` };
}

// ---- helpers -------------------------------------------------------------------------------------------------

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

export function secretsFrom(env: NodeJS.ProcessEnv): SecretSource {
  return defaultSecretSourceFor(env);
}
