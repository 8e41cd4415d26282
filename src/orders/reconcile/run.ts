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
 *   shop of the registry is reported as unknown (gather.ts). An order the listing did not show is looked up with
 *   getShipmentByExternalOrder before anything is called missing.
 * - Repairs (repairs.ts) go through the paths the webhooks take (a shop event, a `sync` or `cancel` delivery job),
 *   under job ids derived from what they repair: a second run repairs nothing new. The one direct call is
 *   markReady, made through the delivery gateway under the order lock.
 * - One call at a time, except claim reads (four at a time); pages of 100; retryable errors waited out
 *   as the service asks (pacing.ts). A shop that cannot be read is reported and the run goes on.
 */
import type { ShopConfig } from '../../shops/shops.js';
import { parseExternalOrderId } from '../../domain/ids.js';
import type { Shipment } from '../../domain/delivery.js';
import { showsMarkedReady } from '../../domain/shipment-status.js';
import type { ShopDelivery } from '../delivery-gateway.js';
import { RECONCILE_TOPIC } from '../queues.js';
import { allHeldOrders, type OrderRecord } from '../../ledger/order-ledger.js';
import type { ShopOrderLister } from '../../shops/platforms/index.js';
import { assessOrder, isOpenClaim, primaryShipment, type ShopSide } from './assess.js';
import { figuresByDay, type FigureInput } from './figures.js';
import {
  countShipments,
  listOrders,
  orgShipments,
  readClaims,
  records,
  shouldHaveShipped,
  sideOf,
  type ListedOrder,
  type OrgShipments,
  type RunCase,
} from './gather.js';
import { settle } from './repairs.js';
import { runContext, type ReconcileDeps, type RunContext, type RunWindow } from './run-context.js';
import type { Finding, ReconciliationReport, ShopReconciliation } from './types.js';

export type { ReconcileDeps } from './run-context.js';
export { RECONCILE_ACTOR } from './repairs.js';
/** The topic of the shop events reconciliation enqueues (src/orders/queues.ts RELAIS_TOPICS). */
export { RECONCILE_TOPIC };

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

  const run = new Run(runContext(deps, { from, until, repair: options.repair, runAt }));
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

type ShopResult = Omit<ShopReconciliation, 'shopId' | 'platform' | 'runAt' | 'window' | 'repair'>;

/** What one shop's reconciliation works with once its orders and shipments are read. */
interface ShopRun {
  shop: ShopConfig;
  lister: ShopOrderLister;
  service: ShopDelivery;
  org: OrgShipments;
  /** The shop's shipments by external order id. */
  byExt: Map<string, Shipment[]>;
  /** The shop's orders as listed in the window. */
  listed: Map<string, ListedOrder>;
  /** The ledger's records of the listed orders and of the shipments' orders. */
  known: Map<string, OrderRecord>;
  now: Date;
}

class Run {
  /** Each dispatch organisation's shipments, listed once per run. */
  private readonly orgs = new Map<string, Promise<OrgShipments>>();

  constructor(private readonly ctx: RunContext) {}

  private get window(): RunWindow {
    return this.ctx.window;
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
      this.ctx.deps.logger.error({ shop: shop.id, err: message }, 'reconciliation of a shop failed');
      return { ...base, ordersChecked: 0, shipmentsChecked: 0, findings: [], days: [], error: message };
    }
  }

  private async reconcileShop(shop: ShopConfig): Promise<ShopResult> {
    const { ctx } = this;
    const lister = ctx.deps.listerFor(shop);
    const service = ctx.gateway.forShop(shop);
    const listed = await listOrders(ctx, shop, lister);
    const org = await orgShipments(ctx, this.orgs, service);
    const byExt = org.byShop.get(shop.id) ?? new Map<string, Shipment[]>();
    ctx.deps.progress?.(`${shop.id}: ${listed.size} orders, ${countShipments(byExt)} shipments; matching`);
    // The shop's listed orders and the shipments' orders, read from the ledger in batches (never one query per order).
    const known = await records(ctx, [...listed.keys(), ...[...byExt.keys()].filter((extId) => !listed.has(extId))]);
    const at: ShopRun = { shop, lister, service, org, byExt, listed, known, now: ctx.deps.now() };
    const cases = await this.listedCases(at);
    cases.push(...(await this.unlistedShipmentCases(at)));
    cases.push(...(await this.heldCases(at, cases)));
    await readClaims(ctx, cases);

    const findings = await this.findings(at, cases);
    const shipmentsChecked = new Set(cases.flatMap((c) => c.shipments.map((s) => s.shipmentId))).size;
    ctx.deps.progress?.(`${shop.id}: done, ${findings.length} finding(s)`);
    return {
      ordersChecked: listed.size,
      shipmentsChecked,
      findings,
      days: figuresByDay(figureInputs(cases), this.window),
    };
  }

  /** The shop's listed orders, each with its shipments (the service's own lookup for one the listing missed). */
  private async listedCases(at: ShopRun): Promise<RunCase[]> {
    const cases: RunCase[] = [];
    for (const order of at.listed.values()) {
      const record = at.known.get(order.externalOrderId);
      let shipments = at.byExt.get(order.externalOrderId) ?? [];
      if (shipments.length === 0 && (record?.shipment !== undefined || shouldHaveShipped(at.shop, order.side))) {
        // Not in the listing (created since, or a listing that lags): the service's own lookup decides.
        const found = await at.service.shipmentForOrder(order.externalOrderId);
        if (found) shipments = [found];
      }
      cases.push({
        ...this.caseOf(at, order.externalOrderId, order.side, record, shipments),
        orderId: order.orderId,
        version: order.version,
      });
    }
    return cases;
  }

  /** Shipments of this shop created in the window whose order the listing did not show (not changed since). */
  private async unlistedShipmentCases(at: ShopRun): Promise<RunCase[]> {
    const cases: RunCase[] = [];
    for (const [extId, shipments] of at.byExt) {
      if (at.listed.has(extId) || !shipments.some((s) => this.ctx.inWindow(s.createdAt))) continue;
      const orderId = parseExternalOrderId(extId)?.orderId;
      let side: ShopSide = { kind: 'not_read' };
      // Before marking a shipment ready, make sure its order still stands in the shop.
      if (orderId !== undefined && shipments.some((s) => !showsMarkedReady(s.step))) {
        const payload = await this.ctx.call('shop order', () => at.lister.order(orderId));
        side = payload === undefined ? { kind: 'missing' } : sideOf(at.shop, payload);
      }
      const c = this.caseOf(at, extId, side, at.known.get(extId), shipments);
      cases.push(orderId === undefined ? c : { ...c, orderId });
    }
    return cases;
  }

  /** Held orders the window did not bring up (the shop has not changed them since): still waiting for a person. */
  private async heldCases(at: ShopRun, covering: readonly RunCase[]): Promise<RunCase[]> {
    const covered = new Set(covering.map((c) => c.externalOrderId));
    const cases: RunCase[] = [];
    // Every one of the shop's held orders, page by page: however many are held, none is left out.
    for (const record of await allHeldOrders(this.ctx.deps.ledger, { shopId: at.shop.id })) {
      const extId = record.meta.externalOrderId;
      if (covered.has(extId)) continue;
      const c = this.caseOf(at, extId, { kind: 'not_read' }, record, at.byExt.get(extId) ?? []);
      cases.push({ ...c, orderId: record.meta.orderId });
    }
    return cases;
  }

  private caseOf(
    at: ShopRun,
    externalOrderId: string,
    shopSide: ShopSide,
    record: OrderRecord | undefined,
    shipments: Shipment[],
  ): RunCase {
    return { shop: at.shop, externalOrderId, shopSide, record, shipments, claims: new Map(), now: at.now };
  }

  /** Every case assessed (repairs carried out when the run repairs), and the organisation's unknown shipments. */
  private async findings(at: ShopRun, cases: readonly RunCase[]): Promise<Finding[]> {
    const { shop, org } = at;
    const findings: Finding[] = [];
    let done = 0;
    for (const c of cases) {
      for (const assessment of assessOrder(c)) findings.push(await settle(this.ctx, shop, at.lister, c, assessment));
      done += 1;
      if (done % 25 === 0) this.ctx.deps.progress?.(`${shop.id}: ${done}/${cases.length} orders checked`);
    }
    if (org.reportedBy === undefined) org.reportedBy = shop.id;
    if (org.reportedBy !== shop.id) return findings;
    for (const shipment of org.unknown.filter((s) => this.ctx.inWindow(s.createdAt))) {
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
    return findings;
  }
}

/** What the figures per day are made of: each case with an order, its shipment and its open claims. */
function figureInputs(cases: readonly RunCase[]): FigureInput[] {
  const inputs: FigureInput[] = [];
  for (const c of cases) {
    // A delivered cash-on-delivery order, once marked paid, no longer reads as one to ship (nothing left to
    // collect): its figures come from the order as Relais shipped it.
    const order =
      c.shopSide.kind === 'order' ? c.shopSide.order : c.shopSide.kind === 'unreadable' ? c.record?.order : undefined;
    if (!order) continue;
    const shipment = primaryShipment(c.shipments, c.record);
    const openClaims = shipment ? (c.claims.get(shipment.shipmentId) ?? []).filter(isOpenClaim).length : 0;
    inputs.push({
      order,
      ...(c.record ? { record: c.record } : {}),
      ...(shipment ? { shipment } : {}),
      openClaims,
      paidBy: c.shop.policy.deliveryFeePaidBy,
    });
  }
  return inputs;
}
