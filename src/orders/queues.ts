/**
 * The queues, their job payloads and their retention, in one place.
 *
 *   shop-events   one job per shop webhook delivery (deduplicated): normalise, record, decide
 *   dispatch      one job per order and generation: quote → shipment → ready, resumable
 *   deliveries    `sync`: re-read a shipment and write its state into the shop; `cancel`: a shop
 *                 cancellation carried to the service
 *   maintenance   repeatable jobs: the polling fallback for lost delivery webhooks; reconciliation
 *
 * Job data never carries a secret: jobs name a shop by id and the worker looks its credentials up in
 * the registry. Retention is bounded by age and count so Redis memory stays flat under volume; the
 * webhook de-duplication keys outlive removed jobs (see http/routes/webhooks.ts).
 */
import { createHash } from 'node:crypto';
import { Queue, UnrecoverableError, type ConnectionOptions, type DefaultJobOptions, type JobsOptions } from 'bullmq';
import { isPermanent, RelaisError } from '../domain/errors.js';
import type { Platform } from '../domain/order.js';
import { queuePrefix } from '../redis.js';

export const QUEUE = {
  shopEvents: 'shop-events',
  dispatch: 'dispatch',
  deliveries: 'deliveries',
  maintenance: 'maintenance',
} as const;

export interface ShopEventJob {
  shopId: string;
  platform: Platform;
  /** Shopify topic (orders/create) or WooCommerce topic (order.created); RELAIS_TOPICS for our own. */
  topic: string;
  receivedAt: string;
  /** The shop's order payload as received (personal data: purged by retention and compliance webhooks). */
  payload: unknown;
}

/** An operator's replay of a held order (src/orders/intake/replay.ts). */
export const REPLAY_TOPIC = 'relais/replay';
/** Reconciliation's replay of an order the shop has and Relais missed (src/orders/reconcile/run.ts). */
export const RECONCILE_TOPIC = 'relais/reconcile';
/**
 * The topics of the shop events Relais enqueues itself: an operator's replay of a held order (its payload as the
 * ledger recorded it, confirmed as the shop's then) and reconciliation's replay of a missed order (read through
 * the shop's own API, with its own credentials). The web process never enqueues them: a platform's intake
 * enqueues only its own topics (a signed delivery naming one of these is acknowledged and ignored).
 */
export const RELAIS_TOPICS: ReadonlySet<string> = new Set([REPLAY_TOPIC, RECONCILE_TOPIC]);

export interface DispatchJob {
  shopId: string;
  externalOrderId: string;
  generation: number;
  /** Why the job exists: a shop event, an operator's replay, reconciliation. */
  trigger: string;
}

export interface DeliveryJob {
  shopId: string;
  /** At least one of the two: the webhook may carry either. */
  shipmentId?: string;
  externalOrderId?: string;
  trigger: string;
}

export interface MaintenanceJob {
  /**
   * 'reconcile': shop orders against shipments, with repairs (src/orders/reconcile). 'map-refresh': the service maps
   * asked again (src/ops/map-refresh.ts): every shop's weekly, or one shop's hold's candidates (`shopId`, `names`).
   */
  task: 'poll-deliveries' | 'reconcile' | 'map-refresh';
  shopId?: string;
  names?: string[];
}

/** Retries: exponential from 2 s, capped by the custom strategy, which honours Retry-After. */
export const DEFAULT_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 12,
  backoff: { type: 'relais' },
  removeOnComplete: { age: 24 * 3600, count: 2000 },
  removeOnFail: { age: 14 * 24 * 3600, count: 5000 },
};

/** A job id without ':' (BullMQ forbids it) that is stable for the same input. */
export function stableJobId(kind: string, ...parts: (string | number)[]): string {
  const digest = createHash('sha1').update(parts.join('\u0000')).digest('hex').slice(0, 24);
  return `${kind}-${digest}`;
}

export function dispatchJobOptions(job: DispatchJob): JobsOptions {
  return { jobId: stableJobId('dispatch', job.externalOrderId, job.generation) };
}

export interface RelaisQueues {
  shopEvents: Queue<ShopEventJob>;
  dispatch: Queue<DispatchJob>;
  deliveries: Queue<DeliveryJob>;
  maintenance: Queue<MaintenanceJob>;
  all(): Queue[];
  close(): Promise<void>;
}

export function createQueues(connection: ConnectionOptions, prefix: string): RelaisQueues {
  // Every queue is made the same way; only its name, job type and (for maintenance) job options differ.
  const queue = <Job>(name: string, defaultJobOptions: DefaultJobOptions = DEFAULT_JOB_OPTIONS) =>
    new Queue<Job>(name, { connection, prefix: queuePrefix(prefix, name), defaultJobOptions });
  const shopEvents = queue<ShopEventJob>(QUEUE.shopEvents);
  const dispatch = queue<DispatchJob>(QUEUE.dispatch);
  const deliveries = queue<DeliveryJob>(QUEUE.deliveries);
  const maintenance = queue<MaintenanceJob>(QUEUE.maintenance, {
    ...DEFAULT_JOB_OPTIONS,
    attempts: 1,
    removeOnComplete: { count: 50 },
    removeOnFail: { count: 50 },
  });
  const all = [shopEvents, dispatch, deliveries, maintenance];
  return {
    shopEvents,
    dispatch,
    deliveries,
    maintenance,
    all: () => all,
    close: async () => {
      await Promise.all(all.map((q) => q.close()));
    },
  };
}

/**
 * Backoff: exponential (2 s, 4 s, ... capped at 5 min) with jitter, or exactly what the service asked
 * for with Retry-After when the error carries it.
 */
export function retryDelayMs(attemptsMade: number, error: unknown): number {
  const asked = error instanceof RelaisError ? error.retryAfterMs : undefined;
  if (asked !== undefined && asked >= 0) return Math.min(asked, 15 * 60_000);
  const base = Math.min(2_000 * 2 ** Math.max(0, attemptsMade - 1), 5 * 60_000);
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/** A job's failed attempt, as BullMQ reports it: how many attempts it made, how many it was given, the error. */
export interface FailedAttemptCount {
  attemptsMade: number;
  /** The attempts the job was given (its options). */
  attempts: number | undefined;
  error: Error;
}

/** Whether a job gave up: its last attempt failed, or its error is one no retry can help (see jobFailure). */
export function retriesExhausted(failed: FailedAttemptCount): boolean {
  return failed.attemptsMade >= (failed.attempts ?? 1) || failed.error instanceof UnrecoverableError;
}

/**
 * The one place a failure becomes BullMQ's: a permanent error (src/domain/errors.ts: the service or the shop
 * refused, and would refuse again) becomes an UnrecoverableError, so the job fails now instead of spending its
 * attempts; anything else is thrown as it is and retried with backoff. Use in a processor's catch: `throw jobFailure(error)`.
 */
export function jobFailure(error: unknown): unknown {
  return isPermanent(error) ? new UnrecoverableError(error.message) : error;
}
