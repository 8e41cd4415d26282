/**
 * The worker process: BullMQ workers for shop events, dispatch, deliveries (./worker-queues.ts) and maintenance
 * (./worker-maintenance.ts).
 *
 * - Retryable failures are thrown and retried with backoff (Retry-After honoured); when the attempts
 *   run out, the order is held with a reason instead of vanishing into the failed set.
 * - SIGTERM/SIGINT: stop taking jobs, let active ones finish, then close connections.
 * - With metricsPort, a small HTTP server answers /metrics, /healthz and /readyz (src/observability).
 */
import type { Worker } from 'bullmq';
import { checkReadiness, databaseProbe, redisProbe, startOpsServer, workersProbe } from '../observability/health.js';
import { instrumentWorkers, RelaisMetrics } from '../observability/metrics.js';
import { createRuntime, type Runtime } from './runtime.js';
import { waitForLedger, waitForRedis } from './wait-for-services.js';
import { maintenanceWorker, scheduleMaintenance } from './worker-maintenance.js';
import { startOrderWorkers, type QueueOptions, type QueueWiring } from './worker-queues.js';
import { workerConnection } from '../redis.js';

export interface WorkerOptions extends QueueOptions {
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
  metrics.watchQueues(runtime.queues.all());
  const wiring: QueueWiring = { runtime, options, metrics, connection: workerConnection(options) };
  const { shopEvents, dispatch, deliveries } = startOrderWorkers(wiring);
  const maintenance = maintenanceWorker(wiring);
  await scheduleMaintenance(wiring);
  const all = [shopEvents, dispatch, deliveries, maintenance];
  for (const worker of all) {
    worker.on('error', (error: Error) =>
      options.logger.error({ err: error.message, queue: worker.name }, 'worker error'),
    );
  }
  // Operations: outcomes counted where BullMQ reports them (see observability/metrics.ts).
  instrumentWorkers(metrics, {
    shopEvents,
    dispatch,
    now: runtime.now,
    firstSeenAt: async (externalOrderId) => (await runtime.ledger.get(externalOrderId))?.meta.firstSeenAt,
  });
  await Promise.all(all.map((w) => w.waitUntilReady()));
  return running(wiring, all);
}

/** Serves the operations endpoints when asked, says the worker started, and gives the way to stop it. */
async function running(
  { runtime, options, metrics, connection }: QueueWiring & { options: WorkerOptions },
  all: Worker[],
): Promise<RunningWorker> {
  let closing = false;
  const ops =
    options.metricsPort === undefined
      ? undefined
      : await startOpsServer({
          host: options.metricsHost ?? '127.0.0.1',
          port: options.metricsPort,
          metrics,
          metricsToken: options.metricsToken,
          logger: options.logger,
          readiness: () =>
            checkReadiness([redisProbe(runtime.redis), databaseProbe(runtime.db), workersProbe(all)], {
              shuttingDown: closing,
            }),
        });
  options.logger.info(
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
