/**
 * The worker's maintenance queue: the polling fallback for lost delivery webhooks, the retention of personal
 * data, reconciliation and the service maps' refresh, each on its schedule.
 */
import { Worker } from 'bullmq';
import { QUEUE, stableJobId, type MaintenanceJob } from '../orders/queues.js';
import { runScheduledReconciliation } from '../orders/reconcile/index.js';
import { mapLearnDeps } from '../ops/map-learn.js';
import { MAP_REFRESH_PATTERN, refreshServiceMaps, type MapRefreshDeps } from '../ops/map-refresh.js';
import { queuePrefix } from '../redis.js';
import type { Runtime } from './runtime.js';
import type { QueueWiring } from './worker-queues.js';

const DEFAULT_POLL_EVERY_MS = 5 * 60_000;

/**
 * One polling round: every shipment in flight (up to pollBatch) is read once, so a delivery whose webhooks never
 * arrive still ends right in the shop; then the personal data of orders finished longer ago than
 * RELAIS_RETENTION_DAYS is erased (a cheap indexed update).
 */
async function pollDeliveries(runtime: Runtime, pollBatch: number, pollEveryMs: number) {
  const inFlight = await runtime.ledger.listInFlight(pollBatch);
  for (const { externalOrderId, shopId, shipmentId } of inFlight) {
    await runtime.queues.deliveries.add(
      'sync',
      { shopId, shipmentId, externalOrderId, trigger: 'poll' },
      // One read per order and polling round: the id repeats within a round, so overlapping rounds collapse.
      { jobId: stableJobId('poll', externalOrderId, Math.floor(runtime.now().getTime() / pollEveryMs)) },
    );
    await runtime.ledger.touchInFlight(externalOrderId, runtime.now());
  }
  const erased = await runtime.ledger.erasePersonalDataOfFinished(
    new Date(runtime.now().getTime() - runtime.ledger.retentionDays * 86_400_000),
  );
  return { polled: inFlight.length, erased };
}

export function maintenanceWorker({ runtime, options, connection }: QueueWiring): Worker<MaintenanceJob> {
  const mapRefresh: MapRefreshDeps = {
    shops: () => runtime.options.shops.all(),
    depsFor: (shop) => mapLearnDeps(runtime, options.prefix, shop, options.resolver),
    logger: options.logger,
  };
  const pollBatch = options.pollBatch ?? 100;
  const pollEveryMs = options.pollIntervalMs ?? DEFAULT_POLL_EVERY_MS;
  return new Worker<MaintenanceJob>(
    QUEUE.maintenance,
    async (job) => {
      if (job.data.task === 'reconcile') return runScheduledReconciliation(runtime);
      if (job.data.task === 'map-refresh') return refreshServiceMaps(job.data, mapRefresh);
      return pollDeliveries(runtime, pollBatch, pollEveryMs);
    },
    // Two at a time: a long reconciliation run must not hold the polling fallback back (runs never overlap: see reconcile/index.ts).
    { connection, prefix: queuePrefix(options.prefix, QUEUE.maintenance), concurrency: 2 },
  );
}

/** The maintenance schedules, made or removed as the options say (a schedule left by an earlier start included). */
export async function scheduleMaintenance({ runtime, options }: QueueWiring): Promise<void> {
  const maintenance = runtime.queues.maintenance;
  await maintenance.upsertJobScheduler(
    'poll-deliveries',
    { every: options.pollIntervalMs ?? DEFAULT_POLL_EVERY_MS },
    {
      name: 'poll-deliveries',
      data: { task: 'poll-deliveries' },
    },
  );
  // The service maps asked again weekly (names learned over a week ago), paced by each shop's call budget. A
  // pattern, not `every`: an `every` scheduler runs at once, and each worker start would ask the whole map.
  if (options.mapRefreshPattern !== '') {
    await maintenance.upsertJobScheduler(
      'map-refresh',
      { pattern: options.mapRefreshPattern ?? MAP_REFRESH_PATTERN },
      { name: 'map-refresh', data: { task: 'map-refresh' } },
    );
  } else {
    await maintenance.removeJobScheduler('map-refresh');
  }
  // Reconciliation: shop orders of the last days against shipments, repairing what a lost webhook left undone.
  if (options.reconcileIntervalMs) {
    await maintenance.upsertJobScheduler(
      'reconcile',
      { every: options.reconcileIntervalMs },
      { name: 'reconcile', data: { task: 'reconcile' } },
    );
  } else {
    await maintenance.removeJobScheduler('reconcile');
  }
}
