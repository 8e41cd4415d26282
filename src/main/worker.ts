/**
 * The worker process: BullMQ workers for shop events and dispatch jobs.
 *
 * - Retryable failures are thrown and retried with backoff (Retry-After honoured); when the attempts
 *   run out, the order is held with a reason instead of vanishing into the failed set.
 * - SIGTERM/SIGINT: stop taking jobs, let active ones finish, then close connections.
 * - With metricsPort, a small HTTP server answers /metrics, /healthz and /readyz (src/observability).
 */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { NeighbourhoodResolver } from '../geo/resolver.js';
import { ShopRateLimiter } from '../orders/rate-limit.js';
import {
  dispatchOrder,
  dispatchUnderLock,
  type DispatchOutcome,
  type PipelineDeps,
} from '../orders/dispatch/dispatch-order.js';
import { afterDispatch, holdAfterRetriesExhausted, retriesExhausted } from '../orders/dispatch/finish.js';
import {
  jobFailure,
  QUEUE,
  retryDelayMs,
  stableJobId,
  type DeliveryJob,
  type DispatchJob,
  type MaintenanceJob,
  type ShopEventJob,
} from '../orders/queues.js';
import {
  cancelDelivery,
  recordCancelGaveUp,
  syncDelivery,
  type CancelOutcome,
  type DeliveryDeps,
  type DeliveryOutcome,
} from '../orders/delivery/sync-delivery.js';
import { handleShopEvent, type ShopEventOutcome } from '../orders/intake/shop-event.js';
import { handleUninstall } from '../shops/uninstall.js';
import { createOwnershipCheck } from '../shops/platforms/index.js';
import { checkReadiness, databaseProbe, redisProbe, startOpsServer, workersProbe } from '../observability/health.js';
import { TariffMemory } from '../orders/dispatch/tariff-guard.js';
import { instrumentWorkers, RelaisMetrics } from '../observability/metrics.js';
import { createRuntime, type Runtime, type RuntimeOptions } from './runtime.js';
import { waitForLedger, waitForRedis } from './wait-for-services.js';
import { runScheduledReconciliation } from '../orders/reconcile/index.js';
import { mapLearnDeps } from '../ops/map-learn.js';
import { MAP_REFRESH_PATTERN, refreshServiceMaps, type MapRefreshDeps } from '../ops/map-refresh.js';
import { queuePrefix, workerConnection } from '../redis.js';

export interface WorkerOptions extends RuntimeOptions {
  resolver: NeighbourhoodResolver;
  concurrency?: number;
  /** BullMQ lockDuration and stalledInterval: how soon a job of a dead worker is taken over. */
  lockMs?: number;
  /** Polling fallback for lost delivery webhooks: how often, and how many shipments per round. */
  pollIntervalMs?: number;
  pollBatch?: number;
  /** Reconciliation (src/orders/reconcile) every this many ms, repairing; absent or 0: not scheduled (and an earlier schedule is removed). */
  reconcileIntervalMs?: number;
  /** When the service maps are refreshed (src/ops/map-refresh.ts), a cron pattern; default weekly; '': not scheduled. */
  mapRefreshPattern?: string;
  // ---- operations (src/observability) ----
  /** Serve /metrics, /healthz and /readyz on this port (0: any free port); undefined: no HTTP server (tests). */
  metricsPort?: number;
  /** Where that server listens; default 127.0.0.1. */
  metricsHost?: string;
  /** GET /metrics requires `Authorization: Bearer <token>`; unset, it answers only when metricsHost is a loopback address. */
  metricsToken?: string;
}

export interface RunningWorker {
  runtime: Runtime;
  workers: Worker[];
  /** This process's metrics (outcomes, dispatch calls, queue depths). */
  metrics: RelaisMetrics;
  /** The URL of the /metrics, /healthz, /readyz server, when one was asked for. */
  opsUrl?: string;
  close(): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const metrics = new RelaisMetrics();
  const runtime = createRuntime({
    ...options,
    onRateBudgetWait: (shopId, ms) => metrics.rateBudgetWait(shopId, ms),
    onShopsReload: (outcome) => metrics.shopsReloaded(outcome),
  });
  await waitForRedis(runtime);
  await waitForLedger(runtime);
  await runtime.watchShops();
  // The live registry when connected shops are served live (src/shops/served-shops.ts), else the one given.
  const shops = runtime.options.shops;
  const rateLimiter = new ShopRateLimiter(runtime.redis, options.prefix);
  const { logger } = options;
  metrics.watchQueues(runtime.queues.all());
  const settings = {
    backoffStrategy: (attemptsMade: number, _type?: string, error?: Error) => retryDelayMs(attemptsMade, error),
  };
  const connection = workerConnection(options);
  /** The three order queues' workers share their retry pacing, concurrency and lock settings. */
  const orderWorkerOptions = (queue: string) => ({
    connection,
    prefix: queuePrefix(options.prefix, queue),
    concurrency: options.concurrency ?? 10,
    settings,
    lockDuration: options.lockMs ?? 30_000,
    stalledInterval: options.lockMs ?? 30_000,
  });

  const ownership = createOwnershipCheck({ ...runtime.storeDeps, logger });
  const tariffs = new TariffMemory(runtime.redis, options.prefix);
  const pipelineDeps = (shopId: string, jobId: string | undefined): PipelineDeps => ({
    ledger: runtime.ledger,
    shops,
    deliveryFor: runtime.deliveryFor,
    resolver: options.resolver,
    aliases: runtime.aliases,
    redis: runtime.redis,
    prefix: options.prefix,
    now: runtime.now,
    weightsFor: runtime.weightsFor,
    logger: logger.child({ shop: shopId, job: jobId }),
    onDispatchCall: (call) => metrics.observeDispatchCall(call),
    onUnknownState: (id, state) => metrics.unknownState(id, state),
    rateLimiter,
    tariffs,
    serviceMap: runtime.serviceMap,
  });
  /** Once an order is ready: its tracking link goes into the shop now rather than at the first delivery webhook. */
  const mapRefresh: MapRefreshDeps = {
    shops: () => shops.all(),
    depsFor: (shop) => mapLearnDeps(runtime, options.prefix, shop, options.resolver),
    logger,
  };
  const finish = (shopId: string, outcome: DispatchOutcome) => afterDispatch(shopId, outcome, runtime.queues);

  const shopEvents = new Worker<ShopEventJob, ShopEventOutcome>(
    QUEUE.shopEvents,
    async (job) => {
      const outcome = await handleShopEvent(job.data, {
        ledger: runtime.ledger,
        shops,
        dispatchQueue: runtime.queues.dispatch,
        shopEventQueue: runtime.queues.shopEvents,
        redis: runtime.redis,
        prefix: options.prefix,
        now: runtime.now,
        logger: logger.child({ shop: job.data.shopId, job: job.id }),
        completeEvent: (shop, event) => runtime.eventCompleterFor(shop)?.(event),
        onCancelled: async (shop, externalOrderId) => {
          await runtime.queues.deliveries.add('cancel', { shopId: shop.id, externalOrderId, trigger: job.data.topic });
        },
        ownership,
        pacing: rateLimiter,
        onUninstalled: (shop) =>
          handleUninstall(shop, {
            directory: runtime.shopDirectory,
            ...(runtime.shopSecrets ? { secrets: runtime.shopSecrets } : {}),
            announce: () => runtime.announceShops(),
            redis: runtime.redis,
            prefix: options.prefix,
            now: runtime.now,
            logger: logger.child({ shop: shop.id, job: job.id }),
          }),
        dispatchNow: (dispatchJob, lock, known) =>
          dispatchUnderLock(dispatchJob, pipelineDeps(dispatchJob.shopId, job.id), lock, known),
      });
      if (outcome.kind === 'dispatched') await finish(job.data.shopId, outcome.dispatch);
      return outcome;
    },
    orderWorkerOptions(QUEUE.shopEvents),
  );

  const dispatch = new Worker<DispatchJob, DispatchOutcome>(
    QUEUE.dispatch,
    async (job) => {
      try {
        const outcome = await dispatchOrder(job.data, pipelineDeps(job.data.shopId, job.id));
        await finish(job.data.shopId, outcome);
        return outcome;
      } catch (error) {
        throw jobFailure(error);
      }
    },
    orderWorkerOptions(QUEUE.dispatch),
  );

  const deliveryDeps = (job: Job<DeliveryJob>): DeliveryDeps => ({
    ledger: runtime.ledger,
    shops,
    deliveryFor: runtime.deliveryFor,
    writerFor: runtime.writerFor,
    redis: runtime.redis,
    prefix: options.prefix,
    now: runtime.now,
    logger: logger.child({ shop: job.data.shopId, job: job.id }),
    onStep: (shopId, step) => metrics.deliveryStep(shopId, step),
    onUnknownState: (shopId, state) => metrics.unknownState(shopId, state),
  });
  const deliveries = new Worker<DeliveryJob, DeliveryOutcome | CancelOutcome>(
    QUEUE.deliveries,
    async (job) => {
      try {
        return job.name === 'cancel'
          ? await cancelDelivery(job.data, deliveryDeps(job))
          : await syncDelivery(job.data, deliveryDeps(job));
      } catch (error) {
        // A shop that refused a write (userErrors, an order that is gone) answers the same on every retry.
        throw jobFailure(error);
      }
    },
    orderWorkerOptions(QUEUE.deliveries),
  );

  // The polling fallback: a delivery whose webhooks never arrive still ends right in the shop.
  const pollBatch = options.pollBatch ?? 100;
  const pollEveryMs = options.pollIntervalMs ?? 5 * 60_000;
  const maintenance = new Worker<MaintenanceJob>(
    QUEUE.maintenance,
    async (job) => {
      if (job.data.task === 'reconcile') return runScheduledReconciliation(runtime);
      if (job.data.task === 'map-refresh') return refreshServiceMaps(job.data, mapRefresh);
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
      // Retention: the personal data of orders finished longer ago than RELAIS_RETENTION_DAYS (a cheap indexed update).
      const erased = await runtime.ledger.erasePersonalDataOfFinished(
        new Date(runtime.now().getTime() - runtime.ledger.retentionDays * 86_400_000),
      );
      return { polled: inFlight.length, erased };
    },
    // Two at a time: a long reconciliation run must not hold the polling fallback back (runs never overlap: see reconcile/index.ts).
    { connection, prefix: queuePrefix(options.prefix, QUEUE.maintenance), concurrency: 2 },
  );
  await runtime.queues.maintenance.upsertJobScheduler(
    'poll-deliveries',
    { every: pollEveryMs },
    {
      name: 'poll-deliveries',
      data: { task: 'poll-deliveries' },
    },
  );
  // The service maps asked again weekly (names learned over a week ago), paced by each shop's call budget. A
  // pattern, not `every`: an `every` scheduler runs at once, and each worker start would ask the whole map.
  if (options.mapRefreshPattern !== '') {
    await runtime.queues.maintenance.upsertJobScheduler(
      'map-refresh',
      { pattern: options.mapRefreshPattern ?? MAP_REFRESH_PATTERN },
      { name: 'map-refresh', data: { task: 'map-refresh' } },
    );
  } else {
    await runtime.queues.maintenance.removeJobScheduler('map-refresh');
  }
  // Reconciliation: shop orders of the last days against shipments, repairing what a lost webhook left undone.
  if (options.reconcileIntervalMs) {
    await runtime.queues.maintenance.upsertJobScheduler(
      'reconcile',
      { every: options.reconcileIntervalMs },
      { name: 'reconcile', data: { task: 'reconcile' } },
    );
  } else {
    await runtime.queues.maintenance.removeJobScheduler('reconcile');
  }

  dispatch.on('failed', (job: Job<DispatchJob> | undefined, error: Error) => {
    if (!job) return;
    const failed = { job: job.data, jobId: job.id, attemptsMade: job.attemptsMade, attempts: job.opts.attempts, error };
    const exhausted = retriesExhausted(failed);
    logger.warn(
      { job: job.id, shop: job.data.shopId, attempt: job.attemptsMade, err: error.message, exhausted },
      'dispatch attempt failed',
    );
    if (exhausted) void holdAfterRetriesExhausted(failed, { ledger: runtime.ledger, now: runtime.now, logger });
  });
  deliveries.on('failed', (job: Job<DeliveryJob> | undefined, error: Error) => {
    if (!job || job.name !== 'cancel') return;
    if (!(job.attemptsMade >= (job.opts.attempts ?? 1) || error instanceof UnrecoverableError)) return;
    // A shop cancellation the service never took: recorded on the order, never left in the failed set unseen.
    void recordCancelGaveUp(job.data, error, deliveryDeps(job)).catch((recordError: unknown) =>
      logger.error(
        { job: job.id, err: (recordError as Error).message },
        'could not record a cancellation that gave up; reconciliation still reports the live shipment',
      ),
    );
  });
  const all = [shopEvents, dispatch, deliveries, maintenance];
  for (const worker of all) {
    worker.on('error', (error: Error) => logger.error({ err: error.message, queue: worker.name }, 'worker error'));
  }
  // Operations: outcomes counted where BullMQ reports them (see observability/metrics.ts).
  instrumentWorkers(metrics, {
    shopEvents,
    dispatch,
    now: runtime.now,
    firstSeenAt: async (externalOrderId) => (await runtime.ledger.get(externalOrderId))?.meta.firstSeenAt,
  });
  await Promise.all(all.map((w) => w.waitUntilReady()));
  let closing = false;
  const ops =
    options.metricsPort === undefined
      ? undefined
      : await startOpsServer({
          host: options.metricsHost ?? '127.0.0.1',
          port: options.metricsPort,
          metrics,
          metricsToken: options.metricsToken,
          logger,
          readiness: () =>
            checkReadiness([redisProbe(runtime.redis), databaseProbe(runtime.db), workersProbe(all)], {
              shuttingDown: closing,
            }),
        });
  logger.info(
    { queues: all.map((w) => w.name), concurrency: options.concurrency ?? 10, ops: ops?.url },
    'worker started',
  );

  return {
    runtime,
    workers: all,
    metrics,
    ...(ops ? { opsUrl: ops.url } : {}),
    async close() {
      closing = true;
      // Worker.close() stops taking jobs and waits for the active ones to finish (their locks still renewed),
      // so a SIGTERM never abandons a job half done; only then do the connections close.
      await Promise.all(all.map((w) => w.close()));
      await ops?.close();
      // A cluster's Worker connection is ours to close (a single server's, BullMQ's: see workerConnection).
      if ('quit' in connection) await connection.quit().catch(() => connection.disconnect());
      await runtime.close();
    },
  };
}
