/**
 * What the dashboard reads and does, as narrow interfaces. The web process passes the real objects
 * (the ledger, the alias store, the queues, the registry, the resolver, replayOrder); the dashboard
 * never builds its own connections, so it sees exactly what the worker sees.
 */
import type { Queue } from 'bullmq';
import type { ShopDirectory } from '../shops/shop-directory.js';
import type { ShopSecretStore } from '../shops/shop-secrets.js';
import type { ShopConfig, ShopRegistry } from '../shops/shops.js';
import type { DisputeView, ListDisputesResult, OpenDisputeInput, OpenDisputeResult } from '../orders/disputes/index.js';
import type { NeighbourhoodResolver } from '../geo/resolver.js';
import type { ReplayResult } from '../orders/intake/replay.js';
import type { AliasStore } from '../ledger/alias-store.js';
import type { OrderInsights } from '../ledger/order-insights.js';
import type { OrderLedger, OrderRecord } from '../ledger/order-ledger.js';
import type { PricedNearby } from './use-cases/priced-nearby.js';
import type { Logger } from '../log.js';
import type { CheckResult } from '../domain/checks.js';
import type { MapLearnStatus } from '../ops/map-learn-runs.js';
import type { MapCoverage } from '../ops/map-report.js';
import type { LoginThrottle } from './login-throttle.js';
import type { ProfileLearnDeps } from './use-cases/learn-shop-profile.js';

/**
 * The latest reconciliation run, as the reconciliation job (src/orders/reconcile) records it. The dashboard
 * only reads it; until a run has been recorded the page says so instead of showing made-up figures.
 */
export interface ReconciliationSummary {
  /** When the run finished (ISO instant). */
  runAt: string;
  /** The window of shop orders it compared (ISO instants). */
  window: { from: string; to: string };
  shops: ReconciliationShopSummary[];
  /** Figures per day (YYYY-MM-DD, UTC), all in francs. */
  days: ReconciliationDay[];
}

export interface ReconciliationShopSummary {
  shopId: string;
  ordersChecked: number;
  shipmentsChecked: number;
  /** One line per kind of discrepancy found (missing_shipment, never_ready, status_drift, cod_mismatch, ...). */
  findings: { kind: string; count: number; repaired: number; note?: string }[];
}

export interface ReconciliationDay {
  day: string;
  codExpectedXof: number;
  codCollectedXof: number;
  heldInDisputeXof: number;
}

export interface ReconciliationSummaryStore {
  latestSummary(): Promise<ReconciliationSummary | undefined>;
}

/** Logged-out sessions, remembered until they would have expired anyway (shared by every web process). */
export interface SessionRevocations {
  revoke(sessionId: string, expiresAtMs: number): Promise<void>;
  isRevoked(sessionId: string): Promise<boolean>;
}

/**
 * Disputes (claims) on an order's shipment: src/orders/disputes bound to the runtime. Every call to the delivery
 * service goes on the order's timeline; `lastSeen` reads only what Relais kept, without calling the service.
 */
export interface DisputesPort {
  open(externalOrderId: string, input: OpenDisputeInput): Promise<OpenDisputeResult>;
  list(externalOrderId: string): Promise<ListDisputesResult>;
  lastSeen(externalOrderId: string): Promise<DisputeView[]>;
}

/**
 * Connecting merchants' shops (issue 17): the shops kept in the database, their sealed secrets, the checks
 * `relais doctor` makes of a shop, and the two ways in. Present only when RELAIS_SECRET_KEYS is set (nothing
 * secret can be stored without it).
 */
export interface ShopConnectionsPort {
  directory: ShopDirectory;
  secrets: ShopSecretStore;
  /** One shop's doctor checks (and repairs: webhook subscriptions), before it is switched on. */
  check(shop: ShopConfig): Promise<CheckResult[]>;
  /** Tells every web process and worker that the shops they serve changed. */
  announce(): Promise<void>;
  /** The URL to send the merchant to, to install Relais's Shopify app; absent when no Shopify app is configured. */
  beginShopify?(input: { domain: string; shopId: string; binding: string }): Promise<string>;
  /**
   * The URL to send the merchant to, to authorise Relais on a WooCommerce store; or why it cannot begin (the shop
   * id names another shop, the store URL is not one), in words for the operator.
   */
  beginWooCommerce?(input: {
    storeUrl: string;
    shopId: string;
    binding: string;
  }): Promise<{ url: string } | { refused: string }>;
  /** Starts learning the shop's service map in the background (src/ops/map-learn-runs.ts), once switched on. */
  learnMap?(shop: ShopConfig): void;
  /** How far that learning went, for the shop's settings page. */
  mapStatus?(shopId: string): Promise<MapLearnStatus | undefined>;
}

export interface DashboardDeps {
  /** What `relais profile learn` needs, for the shop's Service names page (absent: the page says so). */
  profileLearn?: ProfileLearnDeps;
  /** The shop's service map against its country's gazetteer places (src/ops/map-report.ts), for the Service map page. */
  serviceMapOf?(shop: ShopConfig): Promise<MapCoverage>;
  /** RELAIS_DASHBOARD_TOKEN: what an operator types to log in, and what scripts send as a bearer token. */
  token: string;
  ledger: Pick<OrderLedger, 'get' | 'getMany' | 'listShopOrders' | 'listHeld' | 'listUnready' | 'timeline'>;
  /** Orders found by filters across shops, and the overview's figures (SQL aggregates). */
  insights: OrderInsights;
  aliases: Pick<AliasStore, 'add' | 'list' | 'forShop'>;
  /** Every queue, for bull-board. */
  queues: { all(): Queue[] };
  shops: ShopRegistry;
  resolver: Pick<NeighbourhoodResolver, 'resolve' | 'whereIs'>;
  /** The held page's one-click aliases to places the shop's service prices (use-cases/priced-nearby.ts). */
  pricedNearby?(
    shop: ShopConfig,
    record: OrderRecord,
    aliases: Record<string, string>,
  ): Promise<PricedNearby | undefined>;
  /** src/orders/intake/replay.ts replayOrder, bound to the runtime. */
  replay(externalOrderId: string): Promise<ReplayResult>;
  disputes: DisputesPort;
  now(): Date;
  revocations: SessionRevocations;
  /** Wrong tokens per client, shared by every web process (./login-throttle.ts). */
  loginThrottle: LoginThrottle;
  /** The Connect page; absent without RELAIS_SECRET_KEYS (the page then says how to turn it on). */
  connections?: ShopConnectionsPort;
  /** Absent until the reconciliation job is wired in: the page then says no run has happened yet. */
  reconciliation?: ReconciliationSummaryStore;
  logger: Logger;
  /** How long a login lasts (default 8 hours). */
  sessionTtlMs?: number;
  /** Whether the Redis connection is up: when it is not, pages answer 503 at once instead of waiting for it. */
  redisConnected?(): boolean;
  /** A page (GET) not answered by then (Redis connected but silent) answers 503 instead (default 10 s). */
  answerWithinMs?: number;
}
