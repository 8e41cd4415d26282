/**
 * A reconciliation run: for each shop, its orders over a window against the dispatch organisation's
 * shipments and the ledger, matched by external_order_id; findings, repairs, figures per day.
 *
 *   shop orders (paged, normalised) ─┐
 *   shipments (listShipments pages) ─┼─ by external_order_id ─▶ assess.ts ─▶ findings ─▶ repairs (--repair / job)
 *   ledger records, claims ──────────┘                                      └──▶ figures per day
 *
 * - Shipments are listed once per dispatch organisation (shops sharing a key share the listing) and shared out
 *   with parseExternalOrderId: a shipment of another shop of the organisation goes to that shop; one of no
 *   shop of the registry is reported as unknown. An order the listing did not show is looked up with
 *   getShipmentByExternalOrder before anything is called missing.
 * - Repairs go through the paths the webhooks take (a shop event, a `sync` or `cancel` delivery job), under
 *   job ids derived from what they repair, so a second run finds the first run's job instead of adding one:
 *   it repairs nothing new. The one direct call is markReady, which the service treats as idempotent.
 * - One call at a time, except claim reads (four at a time); pages of 100; retryable errors waited out
 *   as the service asks (pacing.ts). A shop that cannot be read is reported and the run goes on.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../redis.js';
import type { ShopConfig, ShopRegistry } from '../config/shops.js';
import { externalOrderId, parseExternalOrderId } from '../domain/ids.js';
import { DeliveryError, type Claim, type DeliveryService, type Shipment } from '../domain/delivery.js';
import { showsMarkedReady } from '../domain/shipment-status.js';
import { disputeView, recordClaims } from '../disputes/disputes.js';
import { withOrderLock } from '../jobs/order-lock.js';
import { decideEligibility } from '../jobs/policy.js';
import { RECONCILE_TOPIC, stableJobId, type RelaisQueues } from '../jobs/queues.js';
import { allHeldOrders, type OrderLedger, type OrderRecord, type OrderState } from '../ledger/order-ledger.js';
import type { Logger } from '../log.js';
import { normaliseOrder, orderIdOf, type ShopOrderLister } from '../stores/index.js';
import {
  assessOrder,
  isOpenClaim,
  primaryShipment,
  type Assessment,
  type OrderCase,
  type Repair,
  type ShopSide,
} from './assess.js';
import { figuresByDay, type FigureInput } from './figures.js';
import { mapLimit, withRetries, type RetryOptions } from './pacing.js';
import type { ReconcileSummaryStore } from './summary-store.js';
import type { Finding, FindingAction, ReconciliationReport, ShopReconciliation } from './types.js';

/** What reconciliation asks of a shop's delivery service (the port, src/domain/delivery.ts). */
export type ReconcileDelivery = Pick<
  DeliveryService,
  'organisation' | 'shipments' | 'shipmentForOrder' | 'markReady' | 'claims'
>;

/** Orders read from the ledger per query during a run. */
const RECORD_BATCH = 1_000;

export interface ReconcileDeps {
  shops: ShopRegistry;
  ledger: OrderLedger;
  queues: Pick<RelaisQueues, 'shopEvents' | 'deliveries'>;
  redis: RedisClient;
  prefix: string;
  now(): Date;
  logger: Logger;
  deliveryFor(shop: ShopConfig): ReconcileDelivery;
  listerFor(shop: ShopConfig): ShopOrderLister;
  /** Where each shop's latest summary is kept (the dashboard reads it); nothing is stored without it. */
  summaries?: Pick<ReconcileSummaryStore, 'save'>;
  /** A line about where the run is, for a progress indicator. */
  progress?: (line: string) => void;
  /** For tests: how to wait out a Retry-After. */
  sleep?: (ms: number) => Promise<void>;
}

export interface ReconcileOptions {
  /** Shops to reconcile; all of the registry when absent. */
  shopIds?: readonly string[];
  /** Orders created or changed from this instant (rounded down to its UTC day, so each day is whole). */
  since: Date;
  /** Orders created before this instant; now when absent. */
  until?: Date;
  /** Carry out the repairs; otherwise only say what they would be. */
  repair: boolean;
}

/** What `by` says on a markReady Relais makes here (the service keeps it for audit). */
export const RECONCILE_ACTOR = 'Relais reconciliation';
/** The topic of the shop events reconciliation enqueues (src/jobs/queues.ts RELAIS_TOPICS). */
export { RECONCILE_TOPIC };

const PAGE_SIZE = 100;
const CLAIM_READS_AT_ONCE = 4;
/** Steps after which a claim is usually opened, and whose claims are read every run. */
const CLAIM_STEPS = new Set(['delivered', 'delivery_failed', 'returned']);
/** Ledger states in which a markReady by reconciliation moves the order to `ready`. */
const BEFORE_READY: ReadonlySet<OrderState> = new Set(['received', 'dispatching', 'awaiting_ready']);

export function startOfUtcDay(instant: Date): Date {
  return new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), instant.getUTCDate()));
}

export async function reconcile(deps: ReconcileDeps, options: ReconcileOptions): Promise<ReconciliationReport> {
  const runAt = deps.now();
  const until = options.until ?? runAt;
  const from = startOfUtcDay(options.since);
  if (!(from.getTime() < until.getTime()))
    throw new RangeError(`the window is empty: from ${from.toISOString()} to ${until.toISOString()}`);
  const selected = options.shopIds
    ? options.shopIds.map((id) => {
        const shop = deps.shops.get(id);
        if (!shop) throw new Error(`no shop "${id}" in the shop registry`);
        return shop;
      })
    : deps.shops.all();

  const run = new Run(deps, { from, until, repair: options.repair, runAt });
  const shops: ShopReconciliation[] = [];
  for (const shop of selected) {
    const result = await run.shop(shop);
    shops.push(result);
    await deps.summaries?.save(result);
  }
  return {
    runAt: runAt.toISOString(),
    window: { from: from.toISOString(), to: until.toISOString() },
    repair: options.repair,
    shops,
  };
}

interface Window {
  from: Date;
  until: Date;
  repair: boolean;
  runAt: Date;
}

/** A case as the run builds it: claims filled in as they are read, and the listed order's version. */
interface RunCase extends OrderCase {
  claims: Map<string, Claim[]>;
  /** A digest of the order as the shop listed it: changes whenever the order does (replay job ids). */
  version?: string;
}

interface ListedOrder {
  externalOrderId: string;
  orderId: string;
  /** payloadDigest of the order as listed (RunCase.version). The payload itself is not kept: a run holds every listed order. */
  version: string;
  side: ShopSide;
}

/** The shipments of one dispatch organisation, shared out by shop. */
interface OrgShipments {
  byShop: Map<string, Map<string, Shipment[]>>;
  unknown: Shipment[];
  /** The shop the unknown shipments are reported under (the first of the organisation reconciled). */
  reportedBy?: string;
}

class Run {
  private readonly orgs = new Map<string, Promise<OrgShipments>>();
  private readonly retry: RetryOptions;

  constructor(
    private readonly deps: ReconcileDeps,
    private readonly window: Window,
  ) {
    this.retry = {
      ...(deps.sleep ? { sleep: deps.sleep } : {}),
      onRetry: ({ what, attempt, waitMs, error }) =>
        deps.logger.info({ what, attempt, waitMs, err: error }, 'reconciliation: waiting before a retry'),
    };
  }

  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return withRetries(what, fn, this.retry);
  }

  async shop(shop: ShopConfig): Promise<ShopReconciliation> {
    const base = {
      shopId: shop.id,
      platform: shop.platform,
      runAt: this.window.runAt.toISOString(),
      window: { from: this.window.from.toISOString(), to: this.window.until.toISOString() },
      repair: this.window.repair,
    };
    try {
      return { ...base, ...(await this.reconcileShop(shop)) };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.deps.logger.error({ shop: shop.id, err: message }, 'reconciliation of a shop failed');
      return { ...base, ordersChecked: 0, shipmentsChecked: 0, findings: [], days: [], error: message };
    }
  }

  private async reconcileShop(
    shop: ShopConfig,
  ): Promise<Omit<ShopReconciliation, 'shopId' | 'platform' | 'runAt' | 'window' | 'repair'>> {
    const { deps } = this;
    const lister = deps.listerFor(shop);
    const delivery = deps.deliveryFor(shop);
    const listed = await this.listOrders(shop, lister);
    const org = await this.orgShipments(shop, delivery);
    const byExt = org.byShop.get(shop.id) ?? new Map<string, Shipment[]>();
    deps.progress?.(`${shop.id}: ${listed.size} orders, ${countShipments(byExt)} shipments; matching`);

    const cases: RunCase[] = [];
    const now = deps.now();
    // The shop's listed orders and the shipments' orders, read from the ledger in batches (never one query per order).
    const records = await this.records([...listed.keys(), ...[...byExt.keys()].filter((extId) => !listed.has(extId))]);
    for (const order of listed.values()) {
      const record = records.get(order.externalOrderId);
      let shipments = byExt.get(order.externalOrderId) ?? [];
      if (shipments.length === 0 && (record?.shipment !== undefined || shouldHaveShipped(shop, order.side))) {
        // Not in the listing (created since, or a listing that lags): the service's own lookup decides.
        const found = await this.call('getShipmentByExternalOrder', () =>
          delivery.shipmentForOrder(order.externalOrderId),
        );
        if (found) shipments = [found];
      }
      cases.push({
        shop,
        externalOrderId: order.externalOrderId,
        orderId: order.orderId,
        shopSide: order.side,
        record,
        shipments,
        claims: new Map(),
        now,
        version: order.version,
      });
    }

    // Shipments of this shop created in the window whose order the listing did not show (not changed since).
    for (const [extId, shipments] of byExt) {
      if (listed.has(extId) || !shipments.some((s) => this.inWindow(s.createdAt))) continue;
      const record = records.get(extId);
      const orderId = parseExternalOrderId(extId)?.orderId;
      let side: ShopSide = { kind: 'not_read' };
      // Before marking a shipment ready, make sure its order still stands in the shop.
      if (orderId !== undefined && shipments.some((s) => !showsMarkedReady(s.step))) {
        const payload = await this.call('shop order', () => lister.order(orderId));
        side = payload === undefined ? { kind: 'missing' } : sideOf(shop, payload);
      }
      cases.push({
        shop,
        externalOrderId: extId,
        ...(orderId === undefined ? {} : { orderId }),
        shopSide: side,
        record,
        shipments,
        claims: new Map(),
        now,
      });
    }

    // Held orders the window did not bring up (the shop has not changed them since): still waiting for a person.
    const covered = new Set(cases.map((c) => c.externalOrderId));
    // Every one of the shop's held orders, page by page: however many are held, none is left out.
    for (const record of await allHeldOrders(deps.ledger, { shopId: shop.id })) {
      const extId = record.meta.externalOrderId;
      if (covered.has(extId)) continue;
      cases.push({
        shop,
        externalOrderId: extId,
        orderId: record.meta.orderId,
        shopSide: { kind: 'not_read' },
        record,
        shipments: byExt.get(extId) ?? [],
        claims: new Map(),
        now,
      });
    }

    await this.readClaims(cases);

    const findings: Finding[] = [];
    let done = 0;
    for (const c of cases) {
      for (const assessment of assessOrder(c)) findings.push(await this.settle(shop, lister, c, assessment));
      done += 1;
      if (done % 25 === 0) deps.progress?.(`${shop.id}: ${done}/${cases.length} orders checked`);
    }
    if (org.reportedBy === undefined) org.reportedBy = shop.id;
    if (org.reportedBy === shop.id) {
      for (const shipment of org.unknown.filter((s) => this.inWindow(s.createdAt))) {
        findings.push({
          kind: 'unknown_shipment',
          shopId: shop.id,
          ...(shipment.externalOrderId ? { externalOrderId: shipment.externalOrderId } : {}),
          shipmentId: shipment.shipmentId,
          shipmentStatus: shipment.status,
          action: 'info',
          detail: `a shipment of this delivery account whose external_order_id (${shipment.externalOrderId ?? 'none'}) belongs to no shop Relais serves`,
          advice: 'created outside Relais (by hand, or by another integration using the same key)',
        });
      }
    }

    const figureInputs: FigureInput[] = [];
    for (const c of cases) {
      // A delivered cash-on-delivery order, once marked paid, no longer reads as one to ship (nothing left to
      // collect): its figures come from the order as Relais shipped it.
      const order =
        c.shopSide.kind === 'order' ? c.shopSide.order : c.shopSide.kind === 'unreadable' ? c.record?.order : undefined;
      if (!order) continue;
      const shipment = primaryShipment(c.shipments, c.record);
      const openClaims = shipment ? (c.claims.get(shipment.shipmentId) ?? []).filter(isOpenClaim).length : 0;
      figureInputs.push({
        order,
        ...(c.record ? { record: c.record } : {}),
        ...(shipment ? { shipment } : {}),
        openClaims,
      });
    }
    const shipmentsChecked = new Set(cases.flatMap((c) => c.shipments.map((s) => s.shipmentId))).size;
    deps.progress?.(`${shop.id}: done, ${findings.length} finding(s)`);
    return { ordersChecked: listed.size, shipmentsChecked, findings, days: figuresByDay(figureInputs, this.window) };
  }

  /** The ledger's records of these orders, a batch of RECORD_BATCH per query. */
  private async records(externalOrderIds: readonly string[]): Promise<Map<string, OrderRecord>> {
    const found = new Map<string, OrderRecord>();
    for (let i = 0; i < externalOrderIds.length; i += RECORD_BATCH) {
      for (const record of await this.deps.ledger.getMany(externalOrderIds.slice(i, i + RECORD_BATCH))) {
        if (record) found.set(record.meta.externalOrderId, record);
      }
    }
    return found;
  }

  private inWindow(createdAt: string | undefined): boolean {
    const at = createdAt === undefined ? Number.NaN : Date.parse(createdAt);
    return !Number.isNaN(at) && at >= this.window.from.getTime() && at < this.window.until.getTime();
  }

  private async listOrders(shop: ShopConfig, lister: ShopOrderLister): Promise<Map<string, ListedOrder>> {
    const listed = new Map<string, ListedOrder>();
    let next: string | undefined;
    do {
      const cursor = next;
      const page = await this.call('shop orders', () => lister.page({ updatedSince: this.window.from }, cursor));
      for (const payload of page.payloads) {
        const orderId = orderIdOf(payload);
        if (orderId === undefined) continue;
        const side = sideOf(shop, payload);
        // Created after the window: the next run's.
        if (side.kind === 'order' && Date.parse(side.order.createdAt) >= this.window.until.getTime()) continue;
        const extId = externalOrderId(shop.id, orderId);
        listed.set(extId, { externalOrderId: extId, orderId, version: payloadDigest(payload), side });
      }
      next = page.next;
      this.deps.progress?.(`${shop.id}: ${listed.size} orders read`);
    } while (next !== undefined);
    return listed;
  }

  /** Lists the organisation's shipments once per run, whichever of its shops asks first. */
  private orgShipments(shop: ShopConfig, delivery: ReconcileDelivery): Promise<OrgShipments> {
    let listing = this.orgs.get(delivery.organisation);
    if (!listing) {
      listing = this.listOrgShipments(shop, delivery);
      this.orgs.set(delivery.organisation, listing);
    }
    return listing;
  }

  private async listOrgShipments(shop: ShopConfig, delivery: ReconcileDelivery): Promise<OrgShipments> {
    const result: OrgShipments = { byShop: new Map(), unknown: [] };
    const seen = new Set<string>();
    let cursor: string | undefined;
    let count = 0;
    do {
      const after = cursor;
      const page = await this.call('listShipments', () =>
        delivery.shipments({ limit: PAGE_SIZE, ...(after === undefined ? {} : { cursor: after }) }),
      );
      for (const shipment of page.shipments) {
        const owner = shipment.externalOrderId ? parseExternalOrderId(shipment.externalOrderId) : undefined;
        if (!owner || !this.deps.shops.get(owner.shopId)) {
          result.unknown.push(shipment);
          continue;
        }
        const mine = result.byShop.get(owner.shopId) ?? new Map<string, Shipment[]>();
        result.byShop.set(owner.shopId, mine);
        const list = mine.get(shipment.externalOrderId!) ?? [];
        if (!list.some((s) => s.shipmentId === shipment.shipmentId)) list.push(shipment);
        mine.set(shipment.externalOrderId!, list);
      }
      count += page.shipments.length;
      this.deps.progress?.(`${shop.id}: ${count} shipments read`);
      cursor = page.nextCursor;
      // A cursor handed out twice would make this loop forever.
      if (cursor !== undefined) {
        if (seen.has(cursor)) throw new Error('listShipments: next_cursor repeats an earlier cursor');
        seen.add(cursor);
      }
    } while (cursor !== undefined);
    return result;
  }

  /** Claims of the shipments where a claim matters: finished runs, held settlements, claims Relais opened. */
  private async readClaims(cases: RunCase[]): Promise<void> {
    const wanted: { c: RunCase; shipment: Shipment }[] = [];
    // Orders with a claim already seen are read again whatever their step: one ledger read for the whole run.
    const withClaims = await this.deps.ledger.ordersWithClaims(cases.map((c) => c.externalOrderId));
    for (const c of cases) {
      const known = withClaims.has(c.externalOrderId);
      for (const shipment of c.shipments) {
        const step = shipment.step;
        if ((step !== undefined && CLAIM_STEPS.has(step)) || shipment.settlementHeld === true || known)
          wanted.push({ c, shipment });
      }
    }
    await mapLimit(wanted, CLAIM_READS_AT_ONCE, async ({ c, shipment }) => {
      const delivery = this.deps.deliveryFor(c.shop);
      const claims: Claim[] = await this.call('listShipmentDisputes', () => delivery.claims(shipment.shipmentId));
      c.claims.set(shipment.shipmentId, claims);
      // A decided claim's outcome goes into the order's history the first time any run sees it.
      if (claims.length > 0) {
        await recordClaims(
          this.deps,
          c.externalOrderId,
          claims.map((claim) => disputeView(claim, shipment.shipmentId)),
        );
      }
    });
  }

  /** Turns an assessment into a finding, carrying out its repair when the run repairs. */
  private async settle(shop: ShopConfig, lister: ShopOrderLister, c: RunCase, a: Assessment): Promise<Finding> {
    const orderName = c.shopSide.kind === 'order' ? c.shopSide.order.orderName : c.record?.meta.orderName;
    const finding: Finding = {
      kind: a.kind,
      shopId: shop.id,
      externalOrderId: c.externalOrderId,
      ...(orderName === undefined ? {} : { orderName }),
      ...(a.shipment ? { shipmentId: a.shipment.shipmentId, shipmentStatus: a.shipment.status } : {}),
      ...(a.amountXof === undefined ? {} : { amountXof: a.amountXof }),
      action: a.severity,
      detail: a.detail,
      ...(a.advice ? { advice: a.advice } : {}),
    };
    if (!a.repair) return finding;
    if (!this.window.repair) {
      return {
        ...finding,
        action: 'would_repair',
        advice: a.advice ?? `run with --repair to ${describeRepair(a.repair)}`,
      };
    }
    try {
      const outcome = await this.carryOut(shop, lister, c, a.repair);
      return { ...finding, action: outcome.action, detail: `${finding.detail}; ${outcome.note}` };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.deps.logger.warn(
        { shop: shop.id, order: c.externalOrderId, repair: a.repair.type, err: message },
        'reconciliation repair failed',
      );
      return {
        ...finding,
        action: 'alert',
        detail: `${finding.detail}; the repair failed: ${message}`,
        advice: 'run again later, or fix it by hand',
      };
    }
  }

  private async carryOut(
    shop: ShopConfig,
    lister: ShopOrderLister,
    c: RunCase,
    repair: Repair,
  ): Promise<{ action: FindingAction; note: string }> {
    const { deps } = this;
    const extId = c.externalOrderId;
    switch (repair.type) {
      case 'enqueue_order': {
        // The whole order (Shopify line items are not in the listing), as its webhook would have carried it.
        const payload = await this.call('shop order', () => lister.order(repair.orderId));
        if (payload === undefined)
          return { action: 'alert', note: 'the shop no longer has the order; nothing replayed' };
        // One replay per version of the order: a second run finds this job instead of adding one.
        const jobId = stableJobId('reconcile', extId, c.version ?? 'unlisted');
        if (await deps.queues.shopEvents.getJob(jobId))
          return { action: 'already_requested', note: 'an earlier run already replayed it' };
        await deps.queues.shopEvents.add(
          RECONCILE_TOPIC,
          {
            shopId: shop.id,
            platform: shop.platform,
            topic: RECONCILE_TOPIC,
            receivedAt: deps.now().toISOString(),
            payload,
          },
          { jobId },
        );
        const unnoted = await this.note(extId, 'replay missed webhook', 'enqueued');
        return { action: 'repaired', note: `replayed as a shop event (the path a webhook takes)${unnoted}` };
      }
      case 'mark_ready':
        return this.markReady(shop, extId, repair.shipmentId);
      case 'sync': {
        const queued = await this.enqueueDelivery('sync', shop, extId, repair.shipmentId, repair.status);
        if (!queued) return { action: 'already_requested', note: 'an earlier run already asked for this sync' };
        const unnoted = await this.note(extId, 'sync delivery', 'enqueued');
        return { action: 'repaired', note: `a sync delivery job re-reads the shipment and writes the shop${unnoted}` };
      }
      case 'cancel': {
        const queued = await this.enqueueDelivery('cancel', shop, extId, repair.shipmentId, 'cancel');
        if (!queued) return { action: 'already_requested', note: 'an earlier run already asked to cancel it' };
        const unnoted = await this.note(extId, 'cancel shipment', 'enqueued');
        return {
          action: 'repaired',
          note: `a cancel delivery job cancels the shipment (refused once picked up: then written on the order)${unnoted}`,
        };
      }
    }
  }

  /**
   * markReady, under the order lock, on an order that is not held: the record is read again there, as the run's
   * read may be minutes old (an order held since keeps its hold: reconciliation repairs no held order).
   */
  private async markReady(
    shop: ShopConfig,
    extId: string,
    shipmentId: string,
  ): Promise<{ action: FindingAction; note: string }> {
    const { deps } = this;
    const marked = await withOrderLock(deps.redis, deps.prefix, extId, async (lock) => {
      const fresh = await deps.ledger.get(extId);
      if (fresh?.state === 'held') return { heldFor: fresh.hold?.code ?? 'unknown' };
      await lock.confirm('markReady');
      const status = await this.callMarkReady(shop, extId, shipmentId);
      const ours = fresh?.shipment?.shipmentId === shipmentId;
      if (ours && fresh?.shipment) {
        await deps.ledger.saveShipment(extId, { ...fresh.shipment, status, markedReadyAt: deps.now().toISOString() });
        if (BEFORE_READY.has(fresh.state)) await deps.ledger.setState(extId, 'ready', deps.now());
      }
      return { status, ours };
    });
    if ('heldFor' in marked)
      return { action: 'alert', note: `not marked ready: the order is held (${marked.heldFor}) since the run read it` };
    // The tracking link goes to the shop as after any markReady (worker.ts does the same).
    if (marked.ours) await this.enqueueDelivery('sync', shop, extId, shipmentId, marked.status);
    return { action: 'repaired', note: `marked ready by "${RECONCILE_ACTOR}" (now ${marked.status})` };
  }

  /** The markReady call, noted on the order's timeline whatever its outcome; answers the shipment's new status. */
  private async callMarkReady(shop: ShopConfig, extId: string, shipmentId: string): Promise<string> {
    const { deps } = this;
    const delivery = deps.deliveryFor(shop);
    const started = Date.now();
    let status: string;
    try {
      status = (await this.call('markReady', () => delivery.markReady(shipmentId, RECONCILE_ACTOR))).status;
    } catch (error) {
      await deps.ledger.appendTimeline(extId, {
        at: deps.now().toISOString(),
        system: 'dispatch',
        operation: 'markReady',
        ms: Date.now() - started,
        outcome: error instanceof DeliveryError ? error.label : 'error',
        detail: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
    await deps.ledger.appendTimeline(extId, {
      at: deps.now().toISOString(),
      system: 'dispatch',
      operation: 'markReady',
      outcome: 'ok',
      ms: Date.now() - started,
      detail: `by ${RECONCILE_ACTOR}`,
    });
    return status;
  }

  /** A delivery job under an id made of what it repairs; false when that job already exists and has not failed. */
  private async enqueueDelivery(
    name: 'sync' | 'cancel',
    shop: ShopConfig,
    extId: string,
    shipmentId: string,
    what: string,
  ): Promise<boolean> {
    const jobId = stableJobId(`reconcile-${name}`, extId, shipmentId, what);
    const earlier = await this.deps.queues.deliveries.getJob(jobId);
    // A job that spent its attempts repaired nothing: it is asked again, not reported as already requested.
    if (earlier && !(await earlier.isFailed())) return false;
    await earlier?.remove();
    await this.deps.queues.deliveries.add(
      name,
      { shopId: shop.id, shipmentId, externalOrderId: extId, trigger: RECONCILE_TOPIC },
      { jobId },
    );
    return true;
  }

  /**
   * The order's timeline entry for a repair already carried out (its job is enqueued). A ledger that cannot take
   * it (PostgreSQL away while Redis answers) does not undo the repair, and reporting the repair as failed would
   * send the operator after something done: the gap is logged and said in the finding instead ('' when noted).
   */
  private async note(extId: string, operation: string, outcome: string): Promise<string> {
    try {
      await this.deps.ledger.appendTimeline(extId, {
        at: this.deps.now().toISOString(),
        system: 'relais',
        operation: `reconciliation: ${operation}`,
        outcome,
      });
      return '';
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.deps.logger.warn(
        { order: extId, operation, err: message },
        'reconciliation: repair done, but its timeline entry could not be written',
      );
      return ` (not noted on the order's timeline: ${message})`;
    }
  }
}

/**
 * The listed payload as one digest: it changes whenever anything in the order does. Not the order's own version
 * (stores' orderVersionOf, its updated-at), which is what the webhook path compares.
 */
function payloadDigest(payload: unknown): string {
  return createHash('sha256').update(JSON.stringify(payload)).digest('hex');
}

function sideOf(shop: ShopConfig, payload: unknown): ShopSide {
  const normalised = normaliseOrder(shop, payload);
  return normalised.ok
    ? { kind: 'order', order: normalised.order }
    : { kind: 'unreadable', code: normalised.hold.code, message: normalised.hold.message };
}

/** The shop's policy says ship it (src/jobs/policy.ts, as the intake applies it). */
function shouldHaveShipped(shop: ShopConfig, side: ShopSide): boolean {
  return side.kind === 'order' && decideEligibility(side.order, shop).decision === 'dispatch';
}

function countShipments(byExt: Map<string, Shipment[]>): number {
  let n = 0;
  for (const list of byExt.values()) n += list.length;
  return n;
}

function describeRepair(repair: Repair): string {
  switch (repair.type) {
    case 'enqueue_order':
      return 'replay the order as a shop event';
    case 'mark_ready':
      return `mark ${repair.shipmentId} ready`;
    case 'sync':
      return `sync ${repair.shipmentId} into the ledger and the shop`;
    case 'cancel':
      return `cancel ${repair.shipmentId}`;
  }
}
