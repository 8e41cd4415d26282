/**
 * What the dispatch use case works with: its ports and hooks (PipelineDeps), what one attempt carries from step to
 * step (Attempt), and how an attempt ends (DispatchOutcome). The steps themselves are the other files of this folder;
 * src/orders/dispatch/dispatch-order.ts runs them in order.
 */
import type { RedisClient } from '../../redis.js';
import type { ShopConfig, ShopRegistry } from '../../shops/shops.js';
import type { HoldReason, StoreOrder } from '../../domain/order.js';
import type { DeliveryService } from '../../domain/delivery.js';
import type { NeighbourhoodResolver } from '../../geo/resolver.js';
import type { AliasStore } from '../../ledger/alias-store.js';
import type { OrderLedger, OrderRecord } from '../../ledger/order-ledger.js';
import type { Logger } from '../../log.js';
import type { ShopRateLimiter } from '../rate-limit.js';
import type { ServiceMapStore } from '../../ledger/service-map.js';
import type { TariffMemory } from './tariff-guard.js';
import type { AttemptWrites } from './attempt-writes.js';
import type { OrderCalls } from '../delivery-gateway.js';

export interface PipelineDeps {
  ledger: OrderLedger;
  shops: ShopRegistry;
  /** The shop's delivery service, called through the gateway (src/orders/delivery-gateway.ts). */
  deliveryFor(shop: ShopConfig): DeliveryService;
  resolver: NeighbourhoodResolver;
  /** Aliases operators added at run time, merged over the registry's. */
  aliases: AliasStore;
  redis: RedisClient;
  prefix: string;
  now(): Date;
  logger: Logger;
  /**
   * Fills the weights a platform leaves off its orders (WooCommerce reads them from its products) before
   * a quote; undefined when the platform's orders already carry them (Shopify).
   * A retryable failure throws (the job retries); see src/adapters/woocommerce/weights.ts.
   */
  weightsFor?(shop: ShopConfig): ((order: StoreOrder) => Promise<StoreOrder>) | undefined;
  /** Told of every dispatch call the pipeline makes, as timed for the timeline (metrics: latency, errors by code). */
  onDispatchCall?(call: { operation: string; ms: number; error?: unknown }): void;
  /** Told of a shipment state the shop's wire profile does not know (metrics: relais_dispatch_unknown_states_total). */
  onUnknownState?(shopId: string, state: string): void;
  /** Paces this shop's dispatch calls (policy.dispatchCallsPerSecond) across every worker; absent: unpaced. */
  rateLimiter?: ShopRateLimiter;
  /** The fallback tariff's memory (tariff-guard.ts); absent: quotes are not checked against the fallback. */
  tariffs?: TariffMemory;
  /** Which names each service prices (priced-dropoff.ts); absent: nothing is learned from one order to the next. */
  serviceMap?: ServiceMapStore;
  /** Called before the attempt holds the order (hold.ts): the shop event's job stores the payload a replay needs. */
  beforeHold?(): Promise<unknown>;
  /**
   * What follows an attempt's outcome (finish.ts afterDispatch: the write-back job of a ready order), sent beside the
   * attempt's last ledger write rather than after the order lock's release: dispatch-order.ts dispatchUnderLock.
   */
  afterAttempt?(outcome: DispatchOutcome): Promise<void>;
}

export type DispatchOutcome =
  | { kind: 'ready'; shipmentId: string; adopted: boolean }
  | { kind: 'awaiting_ready'; shipmentId: string }
  | { kind: 'held'; reason: HoldReason; /** not priced: the candidate names, for the map's refresh */ names?: string[] }
  | { kind: 'skipped'; why: string };

/** What one attempt at one order works with, once the order is admitted (admit.ts). */
export interface Attempt {
  deps: PipelineDeps;
  shop: ShopConfig;
  /** The record as the attempt found it: its meta (ids, names) is what a hold needs. */
  record: OrderRecord;
  order: StoreOrder;
  /** The goods' value the courier collects (orderAmountXof), for a cash-collecting order. */
  goods: number | undefined;
  /** The order's calls to the delivery service: paced, made only while the order lock holds, noted with `writes`. */
  calls: OrderCalls;
  writes: AttemptWrites;
  log: Logger;
}
