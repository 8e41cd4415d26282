/**
 * Prometheus metrics (prom-client). Each web or worker process owns one RelaisMetrics, with its own
 * Registry (never prom-client's global one, so two instances in one test process never collide), and
 * serves it as text on GET /metrics.
 *
 * Labels are shop ids from the registry, hold and error codes, dispatch operation names, queue names and
 * job states: small, bounded sets. Nothing personal (names, phones, addresses, order numbers) and nothing
 * secret (keys, tokens, the secret part of a delivery-webhook URL) is ever a label: codes and route names
 * pass through `boundedLabel`, and routes are named by their pattern, never by the URL requested.
 *
 * The hooks are small on purpose: the web app times its webhook answers and counts accepted order events;
 * the worker counts outcomes when BullMQ reports a job completed or failed (`instrumentWorkers`), the
 * pipeline reports each dispatch call through `PipelineDeps.onDispatchCall`, the delivery sync each step
 * through `DeliveryDeps.onStep`; queue depths are read from BullMQ when Prometheus scrapes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { UnrecoverableError, type Job, type Worker } from 'bullmq';
import type { DispatchOutcome } from '../orders/dispatch/dispatch-order.js';
import type { DispatchJob, ShopEventJob } from '../orders/queues.js';
import type { ShopEventOutcome } from '../orders/intake/shop-event.js';
import { storePlatforms } from '../shops/platforms/index.js';
import { withTimeout } from './with-timeout.js';

/** The job states reported by relais_queue_jobs (BullMQ getJobCounts). */
export const QUEUE_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'paused',
  'failed',
  'completed',
] as const;

/** What the queue gauge needs of a BullMQ Queue. */
export interface CountableQueue {
  readonly name: string;
  getJobCounts(...types: (typeof QUEUE_STATES)[number][]): Promise<Record<string, number>>;
}

/** One dispatch call as the pipeline saw it (see PipelineDeps.onDispatchCall). */
export interface DispatchCallReport {
  operation: string;
  ms: number;
  /** The error the call ended with; absent when it succeeded. */
  error?: unknown;
}

/** A scrape must answer even when Redis does not: queue counts give up after this long. */
const QUEUE_COUNT_TIMEOUT_MS = 1_000;

const LABEL_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

/** A label value from a bounded vocabulary, or `other`: never free text that could carry data. */
export function boundedLabel(value: string | undefined): string {
  return value !== undefined && LABEL_PATTERN.test(value) ? value : 'other';
}

/** The error code a failed dispatch call is counted under: the service's code, else the HTTP status or the failure kind. */
export function dispatchErrorCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return 'error';
  const { code, kind, status } = error as { code?: unknown; kind?: unknown; status?: unknown };
  if (typeof code === 'string') return boundedLabel(code);
  if (kind === 'http' && typeof status === 'number') return `http_${status}`;
  return typeof kind === 'string' ? boundedLabel(kind) : 'error';
}

export class RelaisMetrics {
  readonly registry = new Registry();

  readonly ordersReceived = this.#counter('relais_orders_received_total', ['shop', 'platform'], {
    help: 'Order webhooks accepted and enqueued (duplicates and pings excluded)',
  });
  readonly ordersDispatched = this.#counter('relais_orders_dispatched_total', ['shop'], {
    help: 'Orders whose shipment was created and marked ready',
  });
  readonly ordersHeld = this.#counter('relais_orders_held_total', ['shop', 'code'], {
    help: 'Orders held for review, by hold code',
  });
  readonly ordersDelivered = this.#counter('relais_orders_delivered_total', ['shop'], {
    help: 'Orders the courier delivered (counted once, when Relais learns it)',
  });
  readonly dispatchErrors = this.#counter('relais_dispatch_errors_total', ['operation', 'code'], {
    help: 'Failed calls to the dispatch service, by operation and error code',
  });
  readonly webhookAck = this.#histogram('relais_webhook_ack_seconds', ['route', 'status'], {
    help: 'Time to answer a webhook (shop or delivery), by route pattern and HTTP status',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  });
  readonly dispatchCall = this.#histogram('relais_dispatch_call_seconds', ['operation', 'outcome'], {
    help: 'Duration of dispatch service calls made by the pipeline, by operation and outcome (ok or error)',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });
  readonly orderDispatch = this.#histogram('relais_order_dispatch_seconds', [], {
    help: 'From the first event of an order seen by the worker to its shipment marked ready (first dispatch only, not replays)',
    buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600],
  });
  readonly unknownStates = this.#counter('relais_dispatch_unknown_states_total', ['shop', 'state'], {
    help: "Shipment states the shop's wire profile does not map, by shop and state as the service named it (never counted as progress)",
  });
  readonly checkoutRatesWithheld = this.#counter('relais_checkout_rates_withheld_total', ['shop', 'reason'], {
    help: "Checkout delivery prices not offered, by shop and reason (fallback_tariff: the service does not price the neighbourhood; above_maximum: above the shop's maxRateXof)",
  });
  readonly rateBudgetWaits = this.#counter('relais_shopify_budget_wait_seconds_total', ['shop'], {
    help: "Time Shopify calls waited for the shop's rate budget shared by every worker (in Redis), by shop",
  });
  readonly shopReloads = this.#counter('relais_shop_reloads_total', ['outcome'], {
    help: 'Reloads of the served shops after a change of the connected shops (or the periodic one), by outcome: changed, unchanged, or failed (the shops loaded before are still served)',
  });
  readonly queueJobs: Gauge<'queue' | 'state'>;
  readonly unready: Gauge;
  #countUnready: (() => Promise<number>) | undefined;

  readonly #queues: CountableQueue[] = [];

  constructor(options: { defaultMetrics?: boolean } = {}) {
    const queues = this.#queues;
    this.queueJobs = new Gauge({
      name: 'relais_queue_jobs',
      help: 'Jobs per queue and state, read from BullMQ at scrape time (absent when Redis does not answer)',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        // Stale depths would hide an outage: start from nothing and fill in what Redis answers now.
        this.reset();
        await Promise.all(
          queues.map(async (queue) => {
            const counts = await withTimeout(queue.getJobCounts(...QUEUE_STATES), QUEUE_COUNT_TIMEOUT_MS).catch(
              () => undefined,
            );
            if (!counts) return;
            for (const state of QUEUE_STATES) this.set({ queue: boundedLabel(queue.name), state }, counts[state] ?? 0);
          }),
        );
      },
    });
    const countUnready = () => this.#countUnready?.();
    this.unready = new Gauge({
      name: 'relais_shipments_unready',
      help: 'Shipments with no recorded markReady past the watchdog bound, whatever the service calls their state (read from the ledger at scrape time)',
      registers: [this.registry],
      async collect() {
        this.reset();
        const pending = countUnready();
        const count = pending ? await withTimeout(pending, QUEUE_COUNT_TIMEOUT_MS).catch(() => undefined) : undefined;
        if (count !== undefined) this.set(count);
      },
    });
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** A counter of this registry (never prom-client's global one). */
  #counter<L extends string>(name: string, labelNames: readonly L[], options: { help: string }): Counter<L> {
    return new Counter({ name, labelNames, ...options, registers: [this.registry] });
  }

  /** A histogram of this registry, in seconds. */
  #histogram<L extends string>(
    name: string,
    labelNames: readonly L[],
    options: { help: string; buckets: number[] },
  ): Histogram<L> {
    return new Histogram({ name, labelNames, ...options, registers: [this.registry] });
  }

  /** The watchdog's count, read at each scrape (one process per deployment serves it: the web). */
  watchUnready(count: () => Promise<number>): void {
    this.#countUnready = count;
  }

  /** For PipelineDeps/DeliveryDeps.onUnknownState. */
  unknownState(shopId: string, state: string): void {
    this.unknownStates.inc({ shop: boundedLabel(shopId), state: boundedLabel(state) });
  }

  /** For RuntimeOptions.onShopsReload. */
  shopsReloaded(outcome: 'changed' | 'unchanged' | 'failed'): void {
    this.shopReloads.inc({ outcome });
  }

  rateBudgetWait(shopId: string, ms: number): void {
    this.rateBudgetWaits.inc({ shop: boundedLabel(shopId) }, ms / 1000);
  }

  /** Reports these queues' depths on every scrape. */
  watchQueues(queues: readonly CountableQueue[]): void {
    this.#queues.push(...queues);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text Prometheus scrapes. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** For PipelineDeps.onDispatchCall: one observation per call, one error count per failed call. */
  observeDispatchCall(call: DispatchCallReport): void {
    const operation = boundedLabel(call.operation);
    this.dispatchCall.observe({ operation, outcome: call.error === undefined ? 'ok' : 'error' }, call.ms / 1000);
    if (call.error !== undefined) this.dispatchErrors.inc({ operation, code: dispatchErrorCode(call.error) });
  }

  /** An order webhook durably enqueued by the web process. */
  orderReceived(shopId: string, platform: string): void {
    this.ordersReceived.inc({ shop: boundedLabel(shopId), platform: boundedLabel(platform) });
  }

  held(shopId: string, code: string): void {
    this.ordersHeld.inc({ shop: boundedLabel(shopId), code: boundedLabel(code) });
  }

  /** For DeliveryDeps.onStep: called once per order and step, when the ledger moves it (a retried write does not count twice). */
  deliveryStep(shopId: string, step: string): void {
    if (step === 'delivered') this.ordersDelivered.inc({ shop: boundedLabel(shopId) });
  }
}

/** Each shop platform's webhook route (StorePlatform.webhooks.path), its `:params` matching one path segment each. */
let shopRoutes: { label: string; pattern: RegExp }[] | undefined;
function shopWebhookRoutes(): { label: string; pattern: RegExp }[] {
  shopRoutes ??= storePlatforms().map(({ webhooks: { path } }) => ({
    label: path,
    pattern: new RegExp(`^${path.replace(/:\w+/g, '[^/]+')}/?$`),
  }));
  return shopRoutes;
}

/** The route pattern a webhook URL belongs to. Never the URL itself: the delivery-webhook path carries a secret token. */
export function webhookRouteLabel(path: string): string {
  for (const route of shopWebhookRoutes()) if (route.pattern.test(path)) return route.label;
  if (/^\/webhooks\/dispatch\/[^/]+\/[^/]+\/?$/.test(path)) return '/webhooks/dispatch/:shopId/:token';
  return 'other';
}

/** Middleware timing each webhook from arrival to the last byte of the answer (mount it before the body parser). */
export function webhookAckTimer(
  metrics: RelaisMetrics,
): (req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, next: () => void) => void {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const route = webhookRouteLabel((req.originalUrl ?? req.url ?? '').split('?')[0] ?? '');
      metrics.webhookAck.observe(
        { route, status: String(res.statusCode) },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    });
    next();
  };
}

export interface InstrumentedWorkers {
  shopEvents: Worker<ShopEventJob, ShopEventOutcome>;
  dispatch: Worker<DispatchJob, DispatchOutcome>;
  /** When the order was first seen (OrderMeta.firstSeenAt), for relais_order_dispatch_seconds. */
  firstSeenAt(externalOrderId: string): Promise<string | undefined>;
  now(): Date;
}

/**
 * Counts outcomes where BullMQ already reports them, so the use-case functions stay free of metrics:
 * a completed dispatch job says ready or held, a completed shop event may say held, a dispatch job
 * that ran out of attempts is held by the worker. (Deliveries are counted through DeliveryDeps.onStep.)
 */
export function instrumentWorkers(metrics: RelaisMetrics, workers: InstrumentedWorkers): void {
  /** A dispatch attempt's outcome, made by a dispatch job or by the shop event that recorded the order. */
  const dispatched = (
    shopId: string,
    externalOrderId: string,
    generation: number,
    outcome: DispatchOutcome,
    firstSeenAt: () => Promise<string | undefined>,
  ): void => {
    if (outcome.kind === 'held') metrics.held(shopId, outcome.reason.code);
    if (outcome.kind !== 'ready') return;
    metrics.ordersDispatched.inc({ shop: boundedLabel(shopId) });
    // Replays start from an old first sighting: their time to ready says nothing about the pipeline.
    if (generation !== 0) return;
    firstSeenAt().then(
      (seen) => {
        const started = seen === undefined ? Number.NaN : Date.parse(seen);
        if (Number.isFinite(started))
          metrics.orderDispatch.observe(Math.max(0, workers.now().getTime() - started) / 1000);
      },
      () => undefined,
    );
  };
  workers.shopEvents.on('completed', (job: Job<ShopEventJob>, outcome: ShopEventOutcome) => {
    if (outcome.kind === 'held') metrics.held(job.data.shopId, outcome.code);
    if (outcome.kind === 'dispatched') {
      const { externalOrderId, generation, dispatch, firstSeenAt } = outcome;
      dispatched(job.data.shopId, externalOrderId, generation, dispatch, () => Promise.resolve(firstSeenAt));
    }
  });
  workers.dispatch.on('completed', (job: Job<DispatchJob>, outcome: DispatchOutcome) => {
    const { shopId, externalOrderId, generation } = job.data;
    dispatched(shopId, externalOrderId, generation, outcome, () => workers.firstSeenAt(externalOrderId));
  });
  workers.dispatch.on('failed', (job: Job<DispatchJob> | undefined, error: Error) => {
    // Mirrors the worker's own rule: out of attempts (or unrecoverable) means the order is held.
    if (!job) return;
    const exhausted = job.attemptsMade >= (job.opts.attempts ?? 1) || error instanceof UnrecoverableError;
    if (exhausted) metrics.held(job.data.shopId, 'dispatch_unavailable');
  });
}
