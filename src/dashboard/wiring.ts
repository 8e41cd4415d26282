/**
 * Builds the dashboard's dependencies from the web process's runtime: the same ledger, alias store and
 * queues the worker uses, replayOrder bound to them, sessions revoked in the same Redis.
 */
import { knownDisputes, listDisputesForOrder, openDisputeForOrder } from '../disputes/index.js';
import { NeighbourhoodResolver } from '../geo/resolver.js';
import { replayOrder } from '../jobs/replay.js';
import type { Runtime } from '../main/runtime.js';
import { reconciliationSummaries } from '../reconcile/index.js';
import { RedisSessionRevocations } from './auth.js';
import type { DashboardDeps, ReconciliationSummaryStore } from './ports.js';

export interface DashboardWiring {
  token: string;
  /** Defaults to the bundled gazetteer (the worker's own). */
  resolver?: Pick<NeighbourhoodResolver, 'resolve'>;
  reconciliation?: ReconciliationSummaryStore;
  sessionTtlMs?: number;
  /** Pages not answered by then answer 503 (Redis hung); default 10 s. */
  answerWithinMs?: number;
}

export function dashboardDepsFor(runtime: Runtime, wiring: DashboardWiring): DashboardDeps {
  return {
    token: wiring.token,
    ledger: runtime.ledger,
    aliases: runtime.aliases,
    queues: runtime.queues,
    shops: runtime.options.shops,
    resolver: wiring.resolver ?? NeighbourhoodResolver.load(),
    replay: (externalOrderId) => replayOrder(runtime, externalOrderId),
    disputes: {
      open: (externalOrderId, input) => openDisputeForOrder(runtime, externalOrderId, input),
      list: (externalOrderId) => listDisputesForOrder(runtime, externalOrderId),
      lastSeen: (externalOrderId) => knownDisputes(runtime, externalOrderId),
    },
    now: () => runtime.now(),
    revocations: new RedisSessionRevocations(runtime.redis, runtime.options.prefix),
    // The latest reconciliation run of each shop, as src/reconcile stores it (undefined until one has run).
    reconciliation: wiring.reconciliation ?? reconciliationSummaries(runtime),
    logger: runtime.options.logger.child({ component: 'dashboard' }),
    sessionTtlMs: wiring.sessionTtlMs,
    redisConnected: () => runtime.redis.status === 'ready',
    ...(wiring.answerWithinMs === undefined ? {} : { answerWithinMs: wiring.answerWithinMs }),
  };
}
