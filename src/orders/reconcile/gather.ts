/**
 * The facts of a reconciliation run, gathered for one shop: its orders as the shop lists them, the dispatch
 * organisation's shipments (listed once per organisation and shared out by shop), the ledger's records, and the
 * claims where a claim matters. run.ts turns them into cases; assess.ts judges them.
 */
import { createHash } from 'node:crypto';
import type { ShopConfig } from '../../shops/shops.js';
import { externalOrderId, parseExternalOrderId } from '../../domain/ids.js';
import type { Claim, Shipment } from '../../domain/delivery.js';
import { disputeView, recordClaims } from '../disputes/disputes.js';
import type { ShopDelivery } from '../delivery-gateway.js';
import { decideEligibility } from '../intake/policy.js';
import type { OrderRecord } from '../../ledger/order-ledger.js';
import { normaliseOrder, orderIdOf, type ShopOrderLister } from '../../shops/platforms/index.js';
import type { OrderCase, ShopSide } from './assess.js';
import { mapLimit } from './pacing.js';
import type { RunContext } from './run-context.js';

/** Orders read from the ledger per query during a run. */
const RECORD_BATCH = 1_000;
const PAGE_SIZE = 100;
const CLAIM_READS_AT_ONCE = 4;
/** Steps after which a claim is usually opened, and whose claims are read every run. */
const CLAIM_STEPS = new Set(['delivered', 'delivery_failed', 'returned']);

/** A case as the run builds it: claims filled in as they are read, and the listed order's version. */
export interface RunCase extends OrderCase {
  claims: Map<string, Claim[]>;
  /** A digest of the order as the shop listed it: changes whenever the order does (replay job ids). */
  version?: string;
}

export interface ListedOrder {
  externalOrderId: string;
  orderId: string;
  /** payloadDigest of the order as listed (RunCase.version). The payload itself is not kept: a run holds every listed order. */
  version: string;
  side: ShopSide;
}

/** The shipments of one dispatch organisation, shared out by shop. */
export interface OrgShipments {
  byShop: Map<string, Map<string, Shipment[]>>;
  unknown: Shipment[];
  /** The shop the unknown shipments are reported under (the first of the organisation reconciled). */
  reportedBy?: string;
}

/** The ledger's records of these orders, a batch of RECORD_BATCH per query. */
export async function records(ctx: RunContext, externalOrderIds: readonly string[]): Promise<Map<string, OrderRecord>> {
  const found = new Map<string, OrderRecord>();
  for (let i = 0; i < externalOrderIds.length; i += RECORD_BATCH) {
    for (const record of await ctx.deps.ledger.getMany(externalOrderIds.slice(i, i + RECORD_BATCH))) {
      if (record) found.set(record.meta.externalOrderId, record);
    }
  }
  return found;
}

/** The shop's orders changed in the window (created before its end), page by page. */
export async function listOrders(
  ctx: RunContext,
  shop: ShopConfig,
  lister: ShopOrderLister,
): Promise<Map<string, ListedOrder>> {
  const listed = new Map<string, ListedOrder>();
  let next: string | undefined;
  do {
    const cursor = next;
    const page = await ctx.call('shop orders', () => lister.page({ updatedSince: ctx.window.from }, cursor));
    for (const payload of page.payloads) {
      const orderId = orderIdOf(payload);
      if (orderId === undefined) continue;
      const side = sideOf(shop, payload);
      // Created after the window: the next run's.
      if (side.kind === 'order' && Date.parse(side.order.createdAt) >= ctx.window.until.getTime()) continue;
      const extId = externalOrderId(shop.id, orderId);
      listed.set(extId, { externalOrderId: extId, orderId, version: payloadDigest(payload), side });
    }
    next = page.next;
    ctx.deps.progress?.(`${shop.id}: ${listed.size} orders read`);
  } while (next !== undefined);
  return listed;
}

/** Lists the organisation's shipments once per run, whichever of its shops asks first. */
export function orgShipments(
  ctx: RunContext,
  orgs: Map<string, Promise<OrgShipments>>,
  service: ShopDelivery,
): Promise<OrgShipments> {
  let listing = orgs.get(service.organisation);
  if (!listing) {
    listing = listOrgShipments(ctx, service);
    orgs.set(service.organisation, listing);
  }
  return listing;
}

async function listOrgShipments(ctx: RunContext, service: ShopDelivery): Promise<OrgShipments> {
  const result: OrgShipments = { byShop: new Map(), unknown: [] };
  const seen = new Set<string>();
  let cursor: string | undefined;
  let count = 0;
  do {
    const page = await service.shipments({ limit: PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) });
    for (const shipment of page.shipments) shareOut(ctx, result, shipment);
    count += page.shipments.length;
    ctx.deps.progress?.(`${service.shop.id}: ${count} shipments read`);
    cursor = page.nextCursor;
    // A cursor handed out twice would make this loop forever.
    if (cursor !== undefined) {
      if (seen.has(cursor)) throw new Error('listShipments: next_cursor repeats an earlier cursor');
      seen.add(cursor);
    }
  } while (cursor !== undefined);
  return result;
}

/** A shipment goes to the shop its external_order_id names; one of no shop of the registry is unknown. */
function shareOut(ctx: RunContext, result: OrgShipments, shipment: Shipment): void {
  const owner = shipment.externalOrderId ? parseExternalOrderId(shipment.externalOrderId) : undefined;
  if (!owner || !ctx.deps.shops.get(owner.shopId)) {
    result.unknown.push(shipment);
    return;
  }
  const mine = result.byShop.get(owner.shopId) ?? new Map<string, Shipment[]>();
  result.byShop.set(owner.shopId, mine);
  const list = mine.get(shipment.externalOrderId!) ?? [];
  if (!list.some((s) => s.shipmentId === shipment.shipmentId)) list.push(shipment);
  mine.set(shipment.externalOrderId!, list);
}

/** Claims of the shipments where a claim matters: finished runs, held settlements, claims Relais opened. */
export async function readClaims(ctx: RunContext, cases: RunCase[]): Promise<void> {
  const wanted: { c: RunCase; shipment: Shipment }[] = [];
  // Orders with a claim already seen are read again whatever their step: one ledger read for the whole run.
  const withClaims = await ctx.deps.ledger.ordersWithClaims(cases.map((c) => c.externalOrderId));
  for (const c of cases) {
    const known = withClaims.has(c.externalOrderId);
    for (const shipment of c.shipments) {
      const step = shipment.step;
      if ((step !== undefined && CLAIM_STEPS.has(step)) || shipment.settlementHeld === true || known)
        wanted.push({ c, shipment });
    }
  }
  await mapLimit(wanted, CLAIM_READS_AT_ONCE, async ({ c, shipment }) => {
    const claims = await ctx.gateway.forShop(c.shop).claims(shipment.shipmentId);
    c.claims.set(shipment.shipmentId, claims);
    // A decided claim's outcome goes into the order's history the first time any run sees it.
    if (claims.length > 0) {
      await recordClaims(
        ctx.deps,
        c.externalOrderId,
        claims.map((claim) => disputeView(claim, shipment.shipmentId)),
      );
    }
  });
}

/**
 * The listed payload as one digest: it changes whenever anything in the order does. Not the order's own version
 * (stores' orderVersionOf, its updated-at), which is what the webhook path compares.
 */
function payloadDigest(payload: unknown): string {
  return createHash('sha256').update(JSON.stringify(payload)).digest('hex');
}

export function sideOf(shop: ShopConfig, payload: unknown): ShopSide {
  const normalised = normaliseOrder(shop, payload);
  return normalised.ok
    ? { kind: 'order', order: normalised.order }
    : { kind: 'unreadable', code: normalised.hold.code, message: normalised.hold.message };
}

/** The shop's policy says ship it (src/orders/intake/policy.ts, as the intake applies it). */
export function shouldHaveShipped(shop: ShopConfig, side: ShopSide): boolean {
  return side.kind === 'order' && decideEligibility(side.order, shop).decision === 'dispatch';
}

export function countShipments(byExt: Map<string, Shipment[]>): number {
  let n = 0;
  for (const list of byExt.values()) n += list.length;
  return n;
}
