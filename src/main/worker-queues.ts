/**
 * The worker's three order queues (shop events, dispatch, deliveries): each BullMQ Worker with its processor, which
 * hands the job to its use case, and its failure handler, which hands a failed job to its use case (src/orders/dispatch/finish.ts,
 * src/orders/delivery/cancel-delivery.ts decide whether the job gave up and what follows). The maintenance queue
 * and its schedules are in ./worker-maintenance.ts; src/main/worker.ts starts them all and shuts them down.
 */
import { Worker, type Job } from 'bullmq';
import type { NeighbourhoodResolver } from '../geo/resolver.js';
import { ShopRateLimiter } from '../orders/rate-limit.js';
import {
  dispatchOrder,
  dispatchUnderLock,
  type DispatchOutcome,
  type PipelineDeps,
} from '../orders/dispatch/dispatch-order.js';
import { afterDispatch, afterFailedAttempt } from '../orders/dispatch/finish.js';
import {
  jobFailure,
  QUEUE,
  retriesExhausted,
  retryDelayMs,
  type DeliveryJob,
  type DispatchJob,
  type ShopEventJob,
} from '../orders/queues.js';
import {
  afterFailedCancel,
  cancelDelivery,
  syncDelivery,
  type CancelOutcome,
  type DeliveryDeps,
  type DeliveryOutcome,
} from '../orders/delivery/sync-delivery.js';
import { handleShopEvent, type ShopEventOutcome } from '../orders/intake/shop-event.js';
import { handleUninstall } from '../shops/uninstall.js';
import { createOwnershipCheck } from '../shops/platforms/index.js';
import { TariffMemory } from '../orders/dispatch/tariff-guard.js';
import type { RelaisMetrics } from '../observability/metrics.js';
import type { Runtime, RuntimeOptions } from './runtime.js';
import type { Logger } from '../log.js';
import { queuePrefix, type workerConnection } from '../redis.js';

/** The worker's options its queues use (src/main/worker.ts adds its operations server's). */
export interface QueueOptions extends RuntimeOptions {
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
}

/** What every queue's Worker is built from. */
export interface QueueWiring {
  runtime: Runtime;
  options: QueueOptions;
  metrics: RelaisMetrics;
  connection: ReturnType<typeof workerConnection>;
}

/** The pipeline's deps for a job; `logger`: the job's own, when the caller has one bound to the shop and job already. */
type PipelineDepsOf = (shopId: string, jobId: string | undefined, logger?: Logger) => PipelineDeps;

/** The three order queues' workers share their retry pacing (Retry-After honoured), concurrency and lock settings. */
function orderWorkerOptions({ options, connection }: QueueWiring, queue: string) {
  return {
    connection,
    prefix: queuePrefix(options.prefix, queue),
    concurrency: options.concurrency ?? 10,
    settings: {
      backoffStrategy: (attemptsMade: number, _type?: string, error?: Error) => retryDelayMs(attemptsMade, error),
    },
    lockDuration: options.lockMs ?? 30_000,
    stalledInterval: options.lockMs ?? 30_000,
  };
}

/** The dispatch pipeline's deps for one job; the rate limiter and tariff memory are shared by all. */
function pipelineDepsFor({ runtime, options, metrics }: QueueWiring, rateLimiter: ShopRateLimiter): PipelineDepsOf {
  const tariffs = new TariffMemory(runtime.redis, options.prefix);
  return (shopId, jobId, logger) => ({
    ledger: runtime.ledger,
    // The live registry when connected shops are served live (src/shops/served-shops.ts), else the one given.
    shops: runtime.options.shops,
    deliveryFor: runtime.deliveryFor,
    resolver: options.resolver,
    aliases: runtime.aliases,
    redis: runtime.redis,
    prefix: options.prefix,
    now: runtime.now,
    weightsFor: runtime.weightsFor,
    logger: logger ?? options.logger.child({ shop: shopId, job: jobId }),
    onDispatchCall: (call) => metrics.observeDispatchCall(call),
    onUnknownState: (id, state) => metrics.unknownState(id, state),
    rateLimiter,
    tariffs,
    serviceMap: runtime.serviceMap,
    // After an attempt (a dispatch job's, or a shop event's that dispatched at once): what follows it.
    afterAttempt: (outcome) => afterDispatch(shopId, outcome, runtime.queues),
  });
}

function shopEventsWorker(
  wiring: QueueWiring,
  pipelineDeps: PipelineDepsOf,
  pacing: ShopRateLimiter,
): Worker<ShopEventJob, ShopEventOutcome> {
  const { runtime, options } = wiring;
  const { logger } = options;
  const ownership = createOwnershipCheck({ ...runtime.storeDeps, logger });
  const processor = async (job: Job<ShopEventJob>): Promise<ShopEventOutcome> => {
    const jobLogger = logger.child({ shop: job.data.shopId, job: job.id });
    const outcome = await handleShopEvent(job.data, {
      ledger: runtime.ledger,
      shops: runtime.options.shops,
      dispatchQueue: runtime.queues.dispatch,
      shopEventQueue: runtime.queues.shopEvents,
      redis: runtime.redis,
      prefix: options.prefix,
      now: runtime.now,
      logger: jobLogger,
      completeEvent: (shop, event) => runtime.eventCompleterFor(shop)?.(event),
      onCancelled: async (shop, externalOrderId) => {
        await runtime.queues.deliveries.add('cancel', { shopId: shop.id, externalOrderId, trigger: job.data.topic });
      },
      ownership,
      pacing,
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
      dispatchNow: (dispatchJob, lock, known, beforeHold) =>
        dispatchUnderLock(
          dispatchJob,
          { ...pipelineDeps(dispatchJob.shopId, job.id, jobLogger), beforeHold },
          lock,
          known,
        ),
    });
    return outcome;
  };
  const worker = new Worker(QUEUE.shopEvents, processor, orderWorkerOptions(wiring, QUEUE.shopEvents));
  // Each failed attempt is said, with its cause (never the payload); BullMQ retries the event with backoff until its last.
  worker.on('failed', (job: Job<ShopEventJob> | undefined, error: Error) => {
    if (!job) return;
    const { attemptsMade, data } = job;
    const gaveUp = retriesExhausted({ attemptsMade, attempts: job.opts.attempts, error });
    const fields = { shop: data.shopId, job: job.id, topic: data.topic, attempt: attemptsMade, err: error.message };
    if (gaveUp)
      logger.error(
        fields,
        'shop event failed for good: no attempt left (reconciliation reads the order back from the shop)',
      );
    else logger.warn(fields, 'shop event attempt failed; retried with backoff');
  });
  return worker;
}

function dispatchWorker(wiring: QueueWiring, pipelineDeps: PipelineDepsOf): Worker<DispatchJob, DispatchOutcome> {
  const { runtime, options } = wiring;
  const worker = new Worker<DispatchJob, DispatchOutcome>(
    QUEUE.dispatch,
    async (job) => {
      try {
        return await dispatchOrder(job.data, pipelineDeps(job.data.shopId, job.id));
      } catch (error) {
        throw jobFailure(error);
      }
    },
    orderWorkerOptions(wiring, QUEUE.dispatch),
  );
  worker.on('failed', (job: Job<DispatchJob> | undefined, error: Error) => {
    if (!job) return;
    const failed = { job: job.data, jobId: job.id, attemptsMade: job.attemptsMade, attempts: job.opts.attempts, error };
    void afterFailedAttempt(failed, { ledger: runtime.ledger, now: runtime.now, logger: options.logger });
  });
  return worker;
}

function deliveriesWorker(wiring: QueueWiring): Worker<DeliveryJob, DeliveryOutcome | CancelOutcome> {
  const { runtime, options, metrics } = wiring;
  const deliveryDeps = (job: Job<DeliveryJob>): DeliveryDeps => ({
    ledger: runtime.ledger,
    shops: runtime.options.shops,
    deliveryFor: runtime.deliveryFor,
    writerFor: runtime.writerFor,
    redis: runtime.redis,
    prefix: options.prefix,
    now: runtime.now,
    logger: options.logger.child({ shop: job.data.shopId, job: job.id }),
    onStep: (shopId, step) => metrics.deliveryStep(shopId, step),
    onUnknownState: (shopId, state) => metrics.unknownState(shopId, state),
  });
  const worker = new Worker<DeliveryJob, DeliveryOutcome | CancelOutcome>(
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
    orderWorkerOptions(wiring, QUEUE.deliveries),
  );
  worker.on('failed', (job: Job<DeliveryJob> | undefined, error: Error) => {
    if (!job || job.name !== 'cancel') return;
    const failed = { attemptsMade: job.attemptsMade, attempts: job.opts.attempts, error };
    void afterFailedCancel(job.data, failed, deliveryDeps(job));
  });
  return worker;
}

/** The three order queues' workers, running from now on. */
export function startOrderWorkers(wiring: QueueWiring) {
  // One pacing for a shop's dispatch calls, whether a shop event's job or a dispatch job makes them.
  const rateLimiter = new ShopRateLimiter(wiring.runtime.redis, wiring.options.prefix);
  const pipelineDeps = pipelineDepsFor(wiring, rateLimiter);
  return {
    shopEvents: shopEventsWorker(wiring, pipelineDeps, rateLimiter),
    dispatch: dispatchWorker(wiring, pipelineDeps),
    deliveries: deliveriesWorker(wiring),
  };
}
