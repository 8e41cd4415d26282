/**
 * Disputes (claims) on an order's shipment: open one, list them, and keep every decided claim's outcome in
 * the order's history.
 *
 * - The order is named by its external_order_id; its shop comes from the ledger (or the id itself), its
 *   shipment from the ledger (or getShipmentByExternalOrder, for a shipment Relais did not record).
 * - Every call is appended to the order's timeline (what, when, how long, how it ended).
 * - Claims seen are kept per order in the ledger (`knownClaims`, `saveClaim`), so a decided claim's outcome
 *   stays readable as long as the order; a decision is written on the timeline once, the first time Relais
 *   sees it (here, or in a reconciliation run).
 * - Business refusals come back as `{ ok: false, why }`; so does an unreachable service (retryable: true),
 *   because the callers are a person at a terminal or a page, not a queue.
 * - Opening a claim changes something at the service, so, as for createShipment, the shipment's claims are
 *   looked up first (an earlier opening whose answer was lost is found there, not opened twice), and looked up
 *   again after an opening that got no answer.
 * - Only the reason goes on the timeline: the description is the merchant's free text and stays with the claim.
 */
import type { RedisClient } from '../../redis.js';
import { z } from 'zod';
import type { ShopConfig, ShopRegistry } from '../../shops/shops.js';
import { parseExternalOrderId } from '../../domain/ids.js';
import { OrderBusyError, OrderLockLostError, tryLease, type Lease } from '../order-lock.js';
import { DeliveryError, type Claim, type DeliveryService } from '../../domain/delivery.js';
import { DeliveryGateway, type ChangeGuard, type OrderReads } from '../delivery-gateway.js';
import type { OrderLedger } from '../../ledger/order-ledger.js';
import type { Logger } from '../../log.js';

/** What the dispute functions need; a Runtime (src/main/runtime.ts) is one. */
export interface DisputeRuntime {
  options: { shops: ShopRegistry; prefix: string; logger: Logger };
  redis: RedisClient;
  ledger: Pick<OrderLedger, 'get' | 'appendTimeline' | 'knownClaims' | 'saveClaim'>;
  now(): Date;
  /** The shop's delivery service (the port, src/domain/delivery.ts), called through the gateway only. */
  deliveryFor(shop: ShopConfig): DeliveryService;
}

/** The order's calls to its shop's delivery service, each noted on the order's timeline (src/orders/delivery-gateway.ts). */
function orderReads(runtime: DisputeRuntime, shop: ShopConfig, externalOrderId: string): OrderReads {
  return gatewayOf(runtime).forShop(shop).forOrder(externalOrderId);
}

function gatewayOf(runtime: DisputeRuntime): DeliveryGateway {
  return new DeliveryGateway({
    deliveryFor: (shop) => runtime.deliveryFor(shop),
    ledger: runtime.ledger,
    now: () => runtime.now(),
    logger: runtime.options.logger,
  });
}

/**
 * The opening guard, as what the gateway confirms before openDispute: renewed there, so an opening whose guard
 * lapsed (another opening may be under way) stops before it reaches the service.
 */
function openingGuard(lease: Lease, externalOrderId: string): ChangeGuard {
  return {
    async confirm(before) {
      if (await lease.renew().catch(() => false)) return;
      throw new OrderLockLostError(
        `order ${externalOrderId}: the dispute opening guard lapsed; stopped before ${before}`,
      );
    },
  };
}

export const DEFAULT_CLAIMANT_TYPE = 'seller';

export const openDisputeInputSchema = z.object({
  reason: z.string().trim().min(1, 'a reason is required (damaged, lost, never delivered...)').max(200),
  description: z.string().trim().min(1, 'a description is required').max(4000),
  claimantId: z.string().trim().min(1, "a claimant id is required (who reports, on the merchant's side)").max(200),
  claimantType: z.string().trim().min(1).max(100).optional(),
});
export type OpenDisputeInput = z.input<typeof openDisputeInputSchema>;

/** A claim as Relais shows and keeps it. */
export interface DisputeView {
  claimId?: string;
  shipmentId: string;
  reason: string;
  description?: string;
  claimantId?: string;
  claimantType?: string;
  /** OPEN until decided (the service's names; COMPENSATED or REJECTED in the emulator). */
  status: string;
  outcome?: string;
  createdAt?: string;
  decidedAt?: string;
}

export type OpenDisputeResult =
  | { ok: true; externalOrderId: string; shipmentId: string; claim: DisputeView }
  | { ok: false; externalOrderId: string; why: string; retryable: boolean; alreadyOpen?: DisputeView };

export type ListDisputesResult =
  | { ok: true; externalOrderId: string; shipmentId: string; claims: DisputeView[] }
  | { ok: false; externalOrderId: string; why: string; retryable: boolean };

export function disputeView(claim: Claim, shipmentId: string): DisputeView {
  const view: DisputeView = {
    shipmentId: claim.shipmentId ?? shipmentId,
    reason: claim.reason,
    status: claim.status ?? 'OPEN',
  };
  if (claim.claimId !== undefined) view.claimId = claim.claimId;
  if (claim.description !== undefined) view.description = claim.description;
  if (claim.claimantId !== undefined) view.claimantId = claim.claimantId;
  if (claim.claimantType !== undefined) view.claimantType = claim.claimantType;
  if (claim.outcome !== undefined) view.outcome = claim.outcome;
  if (claim.createdAt !== undefined) view.createdAt = claim.createdAt;
  if (claim.decidedAt !== undefined) view.decidedAt = claim.decidedAt;
  return view;
}

const isDecided = (view: DisputeView): boolean => view.status.toUpperCase() !== 'OPEN';

/** Which claim it is within the order: the service's id, else what it was opened with. */
function claimKey(claim: DisputeView): string {
  return claim.claimId ?? `${claim.shipmentId}:${claim.createdAt ?? claim.reason}`;
}

/** The claims Relais has seen for the order, decided ones included, oldest first. */
export async function knownDisputes(
  deps: { ledger: Pick<OrderLedger, 'knownClaims'> },
  externalOrderId: string,
): Promise<DisputeView[]> {
  const known = await deps.ledger.knownClaims<DisputeView>(externalOrderId);
  return known.map((k) => k.claim).sort((a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? ''));
}

/**
 * Keeps the claims read from the service, and writes each newly decided one on the order's timeline (once: the
 * ledger answers whether this save is the first to see it decided). Returns the claims decided since last seen.
 */
export async function recordClaims(
  deps: { ledger: Pick<OrderLedger, 'appendTimeline' | 'saveClaim'>; now(): Date },
  externalOrderId: string,
  claims: readonly DisputeView[],
): Promise<DisputeView[]> {
  const newlyDecided: DisputeView[] = [];
  for (const claim of claims) {
    const saved = await deps.ledger.saveClaim(
      externalOrderId,
      { key: claimKey(claim), claim, decided: isDecided(claim) },
      deps.now(),
    );
    if (saved.newlyDecided) newlyDecided.push(claim);
  }
  for (const claim of newlyDecided) {
    await deps.ledger.appendTimeline(externalOrderId, {
      at: deps.now().toISOString(),
      system: 'dispatch',
      operation: 'dispute decided',
      outcome: claim.status,
      detail: `claim ${claim.claimId ?? '?'} on ${claim.shipmentId} (${claim.reason}): ${claim.outcome ?? 'no outcome given'}`,
    });
  }
  return newlyDecided;
}

type Located = { ok: true; shop: ShopConfig; shipmentId: string } | { ok: false; why: string; retryable: boolean };

/** The order's shop and shipment: the ledger's, else the id's shop and the service's lookup. */
async function locate(runtime: DisputeRuntime, externalOrderId: string): Promise<Located> {
  const record = await runtime.ledger.get(externalOrderId);
  const shopId = record?.meta.shopId ?? parseExternalOrderId(externalOrderId)?.shopId;
  if (shopId === undefined)
    return { ok: false, why: `"${externalOrderId}" is not an external order id (shop-id:order-id)`, retryable: false };
  const shop = runtime.options.shops.get(shopId);
  if (!shop) return { ok: false, why: `shop "${shopId}" is not in the shop registry`, retryable: false };
  if (record?.shipment) return { ok: true, shop, shipmentId: record.shipment.shipmentId };
  try {
    const shipment = await orderReads(runtime, shop, externalOrderId).shipmentForOrder();
    if (!shipment)
      return {
        ok: false,
        why: `order ${externalOrderId} has no shipment: there is nothing to dispute`,
        retryable: false,
      };
    return { ok: true, shop, shipmentId: shipment.shipmentId };
  } catch (error) {
    return refusal(error, 'getShipmentByExternalOrder');
  }
}

export async function openDisputeForOrder(
  runtime: DisputeRuntime,
  externalOrderId: string,
  input: OpenDisputeInput,
): Promise<OpenDisputeResult> {
  const parsed = openDisputeInputSchema.safeParse(input);
  if (!parsed.success) {
    return {
      ok: false,
      externalOrderId,
      why: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
      retryable: false,
    };
  }
  const located = await locate(runtime, externalOrderId);
  if (!located.ok) return { ...located, externalOrderId };
  const { reason, description, claimantId } = parsed.data;
  const claimantType = parsed.data.claimantType ?? DEFAULT_CLAIMANT_TYPE;
  // One opening at a time per order, across every web process and the CLI: the same form sent twice
  // (a double click, two operators) would otherwise open two claims, and the service does not refuse that.
  const guard = await tryLease(
    runtime.redis,
    `${runtime.options.prefix}:disputes:opening:${externalOrderId}`,
    OPENING_GUARD_MS,
  );
  if (!guard) {
    return {
      ok: false,
      externalOrderId,
      why: 'a dispute for this order is being opened right now (a second submission, or another operator); look at its claims in a moment',
      retryable: true,
    };
  }
  try {
    const wanted = { reason, description, claimantId };
    // The same claim again (the command run twice, a form re-sent after a reload, an earlier opening whose
    // answer was lost): the service would open a second one. Its own list of the shipment's claims is looked
    // up first, as createShipment's lookup is, and kept: Relais's record alone misses a claim whose answer
    // never came back.
    const same = sameOpenClaim(await claimsBeforeOpening(runtime, externalOrderId, located), wanted);
    if (same) return alreadyOpen(externalOrderId, same);
    try {
      const claim = await gatewayOf(runtime)
        .forShop(located.shop)
        .underLock(externalOrderId, openingGuard(guard, externalOrderId))
        .openClaim(
          located.shipmentId,
          { reason, description, claimantId, claimantType },
          { detail: (c) => `claim ${c.claimId ?? '?'} on ${located.shipmentId}: ${reason} (by ${claimantType})` },
        );
      const view = disputeView(claim, located.shipmentId);
      await recordClaims(runtime, externalOrderId, [view]);
      return { ok: true, externalOrderId, shipmentId: located.shipmentId, claim: view };
    } catch (error) {
      const found = await claimOpenedWithoutAnswer(runtime, externalOrderId, located, wanted, error);
      if (found) return { ok: true, externalOrderId, shipmentId: located.shipmentId, claim: found };
      throw error;
    }
  } catch (error) {
    return { ...refusal(error, 'openDispute'), externalOrderId };
  } finally {
    await guard.release();
  }
}

/** The same claim: still open, with the same reason, description and claimant. */
export function sameOpenClaim(
  claims: readonly DisputeView[],
  input: { reason: string; description: string; claimantId: string },
): DisputeView | undefined {
  return claims.find(
    (c) =>
      c.status.toUpperCase() === 'OPEN' &&
      c.reason === input.reason &&
      c.description === input.description &&
      c.claimantId === input.claimantId,
  );
}

function alreadyOpen(externalOrderId: string, same: DisputeView): OpenDisputeResult {
  return {
    ok: false,
    externalOrderId,
    retryable: false,
    alreadyOpen: same,
    why: `the order already has this open claim (${same.claimId ?? 'no id'}${same.createdAt ? `, opened ${same.createdAt}` : ''}): not opened twice`,
  };
}

/**
 * The order's claims before a new one is opened: those Relais recorded and those the service lists for the
 * shipment now (recorded in passing). A service that cannot list them stops the opening: opening blind could
 * make a second claim of one whose answer was lost.
 */
async function claimsBeforeOpening(
  runtime: DisputeRuntime,
  externalOrderId: string,
  located: { shop: ShopConfig; shipmentId: string },
): Promise<DisputeView[]> {
  const listed = await orderReads(runtime, located.shop, externalOrderId).claims(located.shipmentId, {
    detail: (list) => `${list.length} claim(s) on ${located.shipmentId}, looked up before opening one`,
  });
  const views = listed.map((c) => disputeView(c, located.shipmentId));
  await recordClaims(runtime, externalOrderId, views);
  return [...(await knownDisputes(runtime, externalOrderId)), ...views];
}

/**
 * After an opening that got no answer (the service may have opened the claim), the shipment's claims say
 * whether it did; the claim found is recorded and returned. Undefined when the call was refused, or the
 * look-up fails too (the caller reports the first failure, retryable: the next attempt looks up first).
 */
async function claimOpenedWithoutAnswer(
  runtime: DisputeRuntime,
  externalOrderId: string,
  located: { shop: ShopConfig; shipmentId: string },
  wanted: { reason: string; description: string; claimantId: string },
  error: unknown,
): Promise<DisputeView | undefined> {
  if (!(error instanceof DeliveryError) || error.answer !== 'none') return undefined;
  try {
    return sameOpenClaim(await claimsBeforeOpening(runtime, externalOrderId, located), wanted);
  } catch {
    return undefined;
  }
}

/** Longer than any openDispute call can take (the client's timeout and retries); a crashed holder's guard lapses. */
const OPENING_GUARD_MS = 120_000;

/**
 * The order's claims as the service lists them now, with any claim Relais saw before and the service no
 * longer lists (a decided claim stays readable either way).
 */
export async function listDisputesForOrder(
  runtime: DisputeRuntime,
  externalOrderId: string,
): Promise<ListDisputesResult> {
  const located = await locate(runtime, externalOrderId);
  if (!located.ok) return { ...located, externalOrderId };
  try {
    const claims = await orderReads(runtime, located.shop, externalOrderId).claims(located.shipmentId, {
      detail: (list) => `${list.length} claim(s) on ${located.shipmentId}`,
    });
    const views = claims.map((c) => disputeView(c, located.shipmentId));
    await recordClaims(runtime, externalOrderId, views);
    const listed = new Set(views.map((v) => v.claimId).filter((id) => id !== undefined));
    const earlier = (await knownDisputes(runtime, externalOrderId)).filter(
      (v) => v.claimId === undefined || !listed.has(v.claimId),
    );
    return { ok: true, externalOrderId, shipmentId: located.shipmentId, claims: [...earlier, ...views] };
  } catch (error) {
    return { ...refusal(error, 'listShipmentDisputes'), externalOrderId };
  }
}

function refusal(error: unknown, operation: string): { ok: false; why: string; retryable: boolean } {
  // The opening guard lapsed before openDispute was sent: nothing was opened; the person may try again.
  if (error instanceof OrderBusyError) return { ok: false, retryable: true, why: error.message };
  if (error instanceof DeliveryError) {
    return {
      ok: false,
      retryable: error.retryable,
      why: error.retryable
        ? `the delivery service is unavailable for ${operation} (${error.message}); try again later`
        : `the delivery service refused ${operation}: ${error.message}`,
    };
  }
  throw error;
}
