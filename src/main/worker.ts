/**
 * The worker process: BullMQ workers for shop events and dispatch jobs.
 *
 * - Retryable failures are thrown and retried with backoff (Retry-After honoured); when the attempts
 *   run out, the order is held with a reason instead of vanishing into the failed set.
 * - SIGTERM/SIGINT: stop taking jobs, let active ones finish, then close connections.
 */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { NeighbourhoodResolver } from '../geo/resolver.js';
import { dispatchOrder, type DispatchOutcome } from '../jobs/dispatch-order.js';
import { QUEUE, retryDelayMs, type DispatchJob, type ShopEventJob } from '../jobs/queues.js';
import { handleShopEvent, type ShopEventOutcome } from '../jobs/shop-event.js';
import { DispatchError } from '../dispatch/errors.js';
import { createRuntime, type Runtime, type RuntimeOptions } from './runtime.js';

export interface WorkerOptions extends RuntimeOptions {
  resolver: NeighbourhoodResolver;
  concurrency?: number;
  /** BullMQ lockDuration and stalledInterval: how soon a job of a dead worker is taken over. */
  lockMs?: number;
}

export interface RunningWorker {
  runtime: Runtime;
  workers: Worker[];
  close(): Promise<void>;
}

export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const runtime = createRuntime(options);
  const { logger } = options;
  const settings = { backoffStrategy: (attemptsMade: number, _type?: string, error?: Error) => retryDelayMs(attemptsMade, error) };
  const connection = { url: options.redisUrl, maxRetriesPerRequest: null };

  const shopEvents = new Worker<ShopEventJob, ShopEventOutcome>(
    QUEUE.shopEvents,
    async (job) =>
      handleShopEvent(job.data, {
        ledger: runtime.ledger, shops: options.shops, dispatchQueue: runtime.queues.dispatch, redis: runtime.redis,
        prefix: options.prefix, now: runtime.now, logger: logger.child({ shop: job.data.shopId, job: job.id }),
      }),
    { connection, prefix: options.prefix, concurrency: options.concurrency ?? 10, settings, lockDuration: options.lockMs ?? 30_000, stalledInterval: options.lockMs ?? 30_000 },
  );

  const dispatch = new Worker<DispatchJob, DispatchOutcome>(
    QUEUE.dispatch,
    async (job) => {
      try {
        return await dispatchOrder(job.data, {
          ledger: runtime.ledger, shops: options.shops, dispatchClientFor: runtime.dispatchClientFor, resolver: options.resolver, aliases: runtime.aliases,
          redis: runtime.redis, prefix: options.prefix, now: runtime.now,
          logger: logger.child({ shop: job.data.shopId, job: job.id }),
        });
      } catch (error) {
        if (error instanceof DispatchError && !error.retryable) throw new UnrecoverableError(error.message);
        throw error;
      }
    },
    { connection, prefix: options.prefix, concurrency: options.concurrency ?? 10, settings, lockDuration: options.lockMs ?? 30_000, stalledInterval: options.lockMs ?? 30_000 },
  );

  dispatch.on('failed', (job: Job<DispatchJob> | undefined, error: Error) => {
    if (!job) return;
    const exhausted = job.attemptsMade >= (job.opts.attempts ?? 1) || error instanceof UnrecoverableError;
    logger.warn({ job: job.id, shop: job.data.shopId, attempt: job.attemptsMade, err: error.message, exhausted }, 'dispatch attempt failed');
    if (exhausted) {
      void runtime.ledger.hold(
        job.data.externalOrderId,
        {
          code: 'dispatch_unavailable',
          message: `the delivery service could not be reached after ${job.attemptsMade} attempts (${error.message}); replay the order once it is back`,
        },
        runtime.now(),
      );
    }
  });
  for (const worker of [shopEvents, dispatch]) {
    worker.on('error', (error: Error) => logger.error({ err: error.message, queue: worker.name }, 'worker error'));
  }
  await Promise.all([shopEvents.waitUntilReady(), dispatch.waitUntilReady()]);
  logger.info({ queues: [QUEUE.shopEvents, QUEUE.dispatch], concurrency: options.concurrency ?? 10 }, 'worker started');

  return {
    runtime,
    workers: [shopEvents, dispatch],
    async close() {
      // Worker.close() waits for active jobs to finish before resolving.
      await Promise.all([shopEvents.close(), dispatch.close()]);
      await runtime.close();
    },
  };
}
