/**
 * What every part of a reconciliation run works with: its dependencies, its window, the gateway it calls the
 * delivery service through (every call retried as the service asks: pacing.ts), and the same retries for the
 * shop's own reads.
 */
import type { RedisClient } from '../../redis.js';
import type { ShopConfig, ShopRegistry } from '../../shops/shops.js';
import type { DeliveryService } from '../../domain/delivery.js';
import { DeliveryGateway } from '../delivery-gateway.js';
import type { RelaisQueues } from '../queues.js';
import type { OrderLedger } from '../../ledger/order-ledger.js';
import type { Logger } from '../../log.js';
import type { ShopOrderLister } from '../../shops/platforms/index.js';
import { withRetries, type RetryOptions } from './pacing.js';
import type { ReconcileSummaryStore } from './summary-store.js';

export interface ReconcileDeps {
  shops: ShopRegistry;
  ledger: OrderLedger;
  queues: Pick<RelaisQueues, 'shopEvents' | 'deliveries'>;
  redis: RedisClient;
  prefix: string;
  now(): Date;
  logger: Logger;
  /** The shop's delivery service (the port, src/domain/delivery.ts), called through the gateway only. */
  deliveryFor(shop: ShopConfig): DeliveryService;
  listerFor(shop: ShopConfig): ShopOrderLister;
  /** Where each shop's latest summary is kept (the dashboard reads it); nothing is stored without it. */
  summaries?: Pick<ReconcileSummaryStore, 'save'>;
  /** A line about where the run is, for a progress indicator. */
  progress?: (line: string) => void;
  /** For tests: how to wait out a Retry-After. */
  sleep?: (ms: number) => Promise<void>;
}

export interface RunWindow {
  from: Date;
  until: Date;
  repair: boolean;
  runAt: Date;
}

export interface RunContext {
  deps: ReconcileDeps;
  window: RunWindow;
  /** The delivery service, each call retried while the service says it may answer later. */
  gateway: DeliveryGateway;
  /** A shop's read, retried the same way. */
  call<T>(what: string, fn: () => Promise<T>): Promise<T>;
  /** Whether a shipment created at this instant falls in the run's window. */
  inWindow(createdAt: string | undefined): boolean;
}

export function runContext(deps: ReconcileDeps, window: RunWindow): RunContext {
  const retry: RetryOptions = {
    ...(deps.sleep ? { sleep: deps.sleep } : {}),
    onRetry: ({ what, attempt, waitMs, error }) =>
      deps.logger.info({ what, attempt, waitMs, err: error }, 'reconciliation: waiting before a retry'),
  };
  const call = <T>(what: string, fn: () => Promise<T>) => withRetries(what, fn, retry);
  return {
    deps,
    window,
    call,
    gateway: new DeliveryGateway({
      deliveryFor: (shop) => deps.deliveryFor(shop),
      ledger: deps.ledger,
      now: deps.now,
      logger: deps.logger,
      attempt: call,
    }),
    inWindow(createdAt) {
      const at = createdAt === undefined ? Number.NaN : Date.parse(createdAt);
      return !Number.isNaN(at) && at >= window.from.getTime() && at < window.until.getTime();
    },
  };
}
