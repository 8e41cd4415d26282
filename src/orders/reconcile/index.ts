/**
 * Reconciliation, wired to a Relais runtime: the `relais reconcile` command and the repeatable job of the
 * maintenance queue (every RELAIS_RECONCILE_INTERVAL_MS, the last SCHEDULED_WINDOW_DAYS days, repairing).
 */
import { randomUUID } from 'node:crypto';
import type { ShopConfig } from '../../shops/shops.js';
import type { Runtime } from '../../main/runtime.js';
import { createOrderLister, type ShopOrderLister } from '../../shops/platforms/index.js';
import { reconcile, type ReconcileDeps } from './run.js';
import { ReconcileSummaryStore } from './summary-store.js';
import type { ReconciliationReport } from './types.js';

export { reconcile, RECONCILE_ACTOR, RECONCILE_TOPIC, type ReconcileDeps, type ReconcileOptions } from './run.js';
export { ReconcileSummaryStore, type StoredShopReconciliation } from './summary-store.js';
export { reportCsv, reportJson, reportText, countActions } from './output.js';
export { terminalProgress } from './progress.js';
export type {
  DayFigures,
  Finding,
  FindingAction,
  FindingKind,
  ReconciliationReport,
  ShopReconciliation,
} from './types.js';

/** The scheduled job looks this many days back: late webhooks and slow couriers are caught on the next runs. */
export const SCHEDULED_WINDOW_DAYS = 3;
export const DEFAULT_RECONCILE_INTERVAL_MS = 60 * 60_000;

/** The dashboard's reconciliation port (src/dashboard/ports.ts), over the runtime's Redis. */
export function reconciliationSummaries(runtime: Pick<Runtime, 'redis' | 'options'>): ReconcileSummaryStore {
  return new ReconcileSummaryStore(runtime.redis, runtime.options.prefix);
}

export function reconcileDepsFor(
  runtime: Runtime,
  extras: { progress?: (line: string) => void; sleep?: (ms: number) => Promise<void> } = {},
): ReconcileDeps {
  const listers = new Map<string, ShopOrderLister>();
  const logger = runtime.options.logger.child({ component: 'reconcile' });
  return {
    shops: runtime.options.shops,
    ledger: runtime.ledger,
    queues: runtime.queues,
    redis: runtime.redis,
    prefix: runtime.options.prefix,
    now: () => runtime.now(),
    logger,
    deliveryFor: (shop: ShopConfig) => runtime.deliveryFor(shop),
    listerFor(shop) {
      let lister = listers.get(shop.id);
      if (!lister) {
        lister = createOrderLister(shop, { ...runtime.storeDeps, logger });
        listers.set(shop.id, lister);
      }
      return lister;
    },
    summaries: reconciliationSummaries(runtime),
    ...(extras.progress ? { progress: extras.progress } : {}),
    ...(extras.sleep ? { sleep: extras.sleep } : {}),
  };
}

/** How long a run may hold the reconciliation lock before another may start (a crashed run frees it by itself). */
const RUN_LOCK_MS = 30 * 60_000;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export type ScheduledRunResult =
  | { skipped: true; why: string }
  | { skipped?: false; shops: number; findings: number; repaired: number; failedShops: string[] };

/**
 * The repeatable job: every shop, the last days, repairing (as a webhook would have). Runs never overlap, in one
 * worker or across several: a run that finds another one going skips its turn.
 */
export async function runScheduledReconciliation(runtime: Runtime): Promise<ScheduledRunResult> {
  const lockKey = `${runtime.options.prefix}:lock:reconcile`;
  const token = randomUUID();
  if ((await runtime.redis.set(lockKey, token, 'PX', RUN_LOCK_MS, 'NX')) !== 'OK')
    return { skipped: true, why: 'another reconciliation run is going' };
  try {
    return await scheduledRun(runtime);
  } finally {
    await runtime.redis.eval(RELEASE, 1, lockKey, token);
  }
}

async function scheduledRun(runtime: Runtime): Promise<ScheduledRunResult> {
  const now = runtime.now();
  const report: ReconciliationReport = await reconcile(reconcileDepsFor(runtime), {
    since: new Date(now.getTime() - SCHEDULED_WINDOW_DAYS * 86_400_000),
    until: now,
    repair: true,
  });
  const findings = report.shops.flatMap((s) => s.findings);
  const summary = {
    shops: report.shops.length,
    findings: findings.length,
    repaired: findings.filter((f) => f.action === 'repaired').length,
    failedShops: report.shops.filter((s) => s.error).map((s) => s.shopId),
  };
  runtime.options.logger.info(
    { ...summary, alerts: findings.filter((f) => f.action === 'alert').length },
    'reconciliation run finished',
  );
  return summary;
}
