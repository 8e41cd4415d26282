/**
 * `relais doctor`: checks everything Relais depends on and says plainly what is wrong and what to do.
 *
 *   Configuration  the environment; the shop registry (every problem listed); each pickup neighbourhood
 *                  and each alias target known to the gazetteer
 *   Redis          reachable; persistence (AOF or RDB); maxmemory-policy noeviction (BullMQ keys must never
 *                  be evicted); managed servers that disable CONFIG are said to be unchecked
 *   Each shop      the dispatch key (one cheap authenticated call); the delivery-webhook URL; then the
 *                  shop platform's own checks (StorePlatform.doctor, src/shops/platforms/<platform>/doctor.ts): the
 *                  shop's credentials and currency (XOF), its order webhooks pointing at RELAIS_PUBLIC_URL,
 *                  and for Shopify shops with checkout rates, the carrier service
 *
 * With `fix`, each platform repairs what it can: missing webhooks registered again (Shopify deletes
 * subscriptions after repeated failed deliveries; WooCommerce disables webhooks), disabled WooCommerce webhooks
 * re-activated, the Shopify carrier service registered or re-pointed. The documents and topic lists those checks
 * send are the platforms' own, next to the code that receives the webhooks.
 *
 * Each check is a function returning CheckResult(s); `runDoctor` runs them and `renderReport` prints them.
 * Keys, tokens and secrets never reach a result: keys are shown by Secret.hint() and where they come from;
 * every client used here already scrubs credentials from its error messages.
 */
import type { SecretSource, ShopConfig } from '../shops/shops.js';
import { NeighbourhoodResolver } from '../geo/resolver.js';
import { silentLogger, type Logger } from '../log.js';
import { platformOf } from '../shops/platforms/index.js';
import type { CheckResult, CheckStatus } from '../domain/checks.js';
import { checkRedisCluster } from './redis-cluster-check.js';
import { checkUninstalled } from './uninstalled-check.js';
import { parseClusterNodes } from '../redis.js';
import {
  checkEnvironment,
  checkShopRegistry,
  checkPickup,
  checkAliases,
  checkRedis,
  checkDispatchKey,
  checkDeliveryWebhook,
  DEFAULT_TIMEOUT_MS,
  secretsFrom,
} from './doctor-checks.js';

export { CURRENCY, publicEndpoint, type CheckResult, type CheckStatus } from '../domain/checks.js';

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
      name: 'RELAIS_PUBLIC_URL',
      status: 'warn',
      detail:
        "not set: the shops' webhook subscriptions (and the Shopify carrier service) cannot be checked without it",
      fix: 'set RELAIS_PUBLIC_URL to the https URL at which shops reach the web process',
    });
  }

  // Redis and the shops are independent: checked at once, reported in a fixed order.
  const [redis, ...perShop] = await Promise.all([
    env.REDIS_CLUSTER_NODES
      ? checkRedisCluster(parseClusterNodes(env.REDIS_CLUSTER_NODES), timeoutMs, checkRedis)
      : checkRedis(env.REDIS_URL, timeoutMs),
    ...shops.map((shop) => checkShop(shop, { resolver, publicUrl, fix, timeoutMs, logger })),
  ]);
  add('Redis', redis);
  const uninstalled = env.REDIS_CLUSTER_NODES
    ? new Map<string, CheckResult>()
    : await checkUninstalled({
        redisUrl: env.REDIS_URL,
        prefix: env.RELAIS_REDIS_PREFIX,
        shops: shops.map((shop, i) => ({ id: shop.id, passing: !perShop[i]?.some((r) => r.status === 'error') })),
        fix,
        timeoutMs,
      });
  shops.forEach((shop, i) => {
    const mark = uninstalled.get(shop.id);
    add(sectionOf(shop), [...(perShop[i] ?? []), ...(mark ? [mark] : [])]);
  });
  return finish(entries, fix);
}

/** One shop's checks, as `relais doctor` runs them: also what the Connect page runs before switching a shop on. */
export async function checkShop(
  shop: ShopConfig,
  context: {
    resolver: NeighbourhoodResolver;
    publicUrl: string | undefined;
    fix: boolean;
    timeoutMs: number;
    logger: Logger;
  },
): Promise<CheckResult[]> {
  const results: CheckResult[] = [
    checkPickup(shop, context.resolver),
    checkAliases(shop, context.resolver),
    await checkDispatchKey(shop, context.timeoutMs),
  ];
  if (context.publicUrl) results.push(checkDeliveryWebhook(shop, context.publicUrl));
  // The platform's own checks: credentials, currency, webhook subscriptions (src/shops/platforms/<platform>/doctor.ts).
  results.push(...(await platformOf(shop).doctor(shop, context)));
  return results;
}

function sectionOf(shop: ShopConfig): string {
  const platform = platformOf(shop);
  return `Shop ${shop.id} (${platform.label}, ${platform.whereIs(shop)})`;
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
  lines.push(
    '',
    report.ok
      ? `All good: ${ok} check${ok === 1 ? '' : 's'} passed${warn > 0 ? `, ${warn} warning${warn === 1 ? '' : 's'}` : ''}.`
      : `${error} problem${error === 1 ? '' : 's'} to fix${warn > 0 ? `, ${warn} warning${warn === 1 ? '' : 's'}` : ''} (${ok} check${ok === 1 ? '' : 's'} passed).`,
  );
  return `${lines.join('\n')}\n`;
}

/** The report for machines (`relais doctor --json`). */
export function reportJson(report: DoctorReport): string {
  return JSON.stringify(report, null, 2);
}
