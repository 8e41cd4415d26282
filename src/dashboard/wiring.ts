/**
 * Builds the dashboard's dependencies from the web process's runtime: the same ledger, alias store and
 * queues the worker uses, replayOrder bound to them, sessions revoked in the same Redis.
 */
import { knownDisputes, listDisputesForOrder, openDisputeForOrder } from '../orders/disputes/index.js';
import { NeighbourhoodResolver } from '../geo/resolver.js';
import { freshKnowledge } from '../orders/dispatch/name-choice.js';
import { replayOrder } from '../orders/intake/replay.js';
import { serviceId } from '../orders/dispatch/tariff-guard.js';
import { pricedNearby } from './use-cases/priced-nearby.js';
import { MapLearnRuns } from '../ops/map-learn-runs.js';
import { mapLearnDeps } from '../ops/map-learn.js';
import { mapCoverage } from '../ops/map-report.js';
import type { Runtime } from '../main/runtime.js';
import { learnDepsOf } from '../main/commands/profile.js';
import { reconciliationSummaries } from '../orders/reconcile/index.js';
import { RedisSessionRevocations } from './auth.js';
import { FallbackLoginThrottle, MemoryLoginThrottle, RedisLoginThrottle } from './login-throttle.js';
import { checkShop } from '../ops/doctor.js';
import { ensureStoredCredentials } from '../shops/platforms/index.js';
import type { DashboardDeps, ReconciliationSummaryStore, ShopConnectionsPort } from './ports.js';

export interface DashboardWiring {
  token: string;
  /** Defaults to the bundled gazetteer (the worker's own). */
  resolver?: Pick<NeighbourhoodResolver, 'resolve' | 'whereIs'>;
  reconciliation?: ReconciliationSummaryStore;
  sessionTtlMs?: number;
  /** Pages not answered by then answer 503 (Redis hung); default 10 s. */
  answerWithinMs?: number;
  /** RELAIS_PUBLIC_URL: the Connect page's doctor checks then also check (and make) the shop's webhooks. */
  publicUrl?: string;
  /** Tells every process the served shops changed (after a shop is switched on or off). */
  announceShops?: () => Promise<void>;
  /** The ways in of the Connect page (issue 17), when configured. */
  beginShopify?: ShopConnectionsPort['beginShopify'];
  beginWooCommerce?: ShopConnectionsPort['beginWooCommerce'];
}

/** The Connect page's port, when shops' secrets can be sealed (RELAIS_SECRET_KEYS). */
function connectionsFor(runtime: Runtime, wiring: DashboardWiring): ShopConnectionsPort | undefined {
  if (!runtime.shopSecrets) return undefined;
  const resolver = NeighbourhoodResolver.load();
  const logger = runtime.options.logger.child({ component: 'connect' });
  const prefix = runtime.options.prefix;
  const maps = new MapLearnRuns(runtime.redis, prefix, (shop) => mapLearnDeps(runtime, prefix, shop, resolver), logger);
  return {
    directory: runtime.shopDirectory,
    secrets: runtime.shopSecrets,
    check: (shop) => {
      // The shop is not served yet: its Admin API client needs a token source over its stored tokens.
      ensureStoredCredentials([shop], { secrets: runtime.shopSecrets!, logger });
      return checkShop(shop, { resolver, publicUrl: wiring.publicUrl, fix: true, timeoutMs: 10_000, logger });
    },
    announce: wiring.announceShops ?? (async () => undefined),
    learnMap: (shop) => void maps.start(shop),
    mapStatus: (shopId) => maps.status(shopId),
    ...(wiring.beginShopify ? { beginShopify: wiring.beginShopify } : {}),
    ...(wiring.beginWooCommerce ? { beginWooCommerce: wiring.beginWooCommerce } : {}),
  };
}

export function dashboardDepsFor(runtime: Runtime, wiring: DashboardWiring): DashboardDeps {
  const connections = connectionsFor(runtime, wiring);
  // The whole gazetteer, for the Service map page: loaded on its first view.
  let gazetteer: NeighbourhoodResolver | undefined;
  return {
    token: wiring.token,
    profileLearn: learnDepsOf(runtime),
    ledger: runtime.ledger,
    insights: runtime.insights,
    aliases: runtime.aliases,
    queues: runtime.queues,
    shops: runtime.options.shops,
    resolver: wiring.resolver ?? NeighbourhoodResolver.load(),
    pricedNearby: (shop, record, aliases) =>
      pricedNearby(
        {
          resolver: NeighbourhoodResolver.load(),
          pricedNames: async (s) =>
            [
              ...freshKnowledge(
                new Map((await runtime.serviceMap.all(serviceId(s))).map((p) => [p.name, p])),
                runtime.now(),
              ).values(),
            ]
              .filter((p) => p.priced)
              .map((p) => p.name),
        },
        shop,
        record,
        aliases,
      ),
    serviceMapOf: async (shop) =>
      mapCoverage(
        (gazetteer ??= NeighbourhoodResolver.load()),
        shop.country,
        await runtime.serviceMap.all(serviceId(shop)),
        runtime.now(),
      ),
    replay: (externalOrderId) => replayOrder(runtime, externalOrderId),
    disputes: {
      open: (externalOrderId, input) => openDisputeForOrder(runtime, externalOrderId, input),
      list: (externalOrderId) => listDisputesForOrder(runtime, externalOrderId),
      lastSeen: (externalOrderId) => knownDisputes(runtime, externalOrderId),
    },
    now: () => runtime.now(),
    revocations: new RedisSessionRevocations(runtime.redis, runtime.options.prefix),
    loginThrottle: new FallbackLoginThrottle(
      new RedisLoginThrottle(runtime.redis, runtime.options.prefix),
      new MemoryLoginThrottle(),
    ),
    // The latest reconciliation run of each shop, as src/orders/reconcile stores it (undefined until one has run).
    reconciliation: wiring.reconciliation ?? reconciliationSummaries(runtime),
    logger: runtime.options.logger.child({ component: 'dashboard' }),
    sessionTtlMs: wiring.sessionTtlMs,
    redisConnected: () => runtime.redis.status === 'ready',
    ...(connections ? { connections } : {}),
    ...(wiring.answerWithinMs === undefined ? {} : { answerWithinMs: wiring.answerWithinMs }),
  };
}
