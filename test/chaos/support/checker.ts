/**
 * The history checker: reads a scenario's history (support/history.ts) and reports, per order, what broke
 * one of the invariants of shared/DESIGN.md. It knows the outside world's vocabulary (shipment statuses,
 * what a Shopify or WooCommerce order shows), not Relais's code, so a bug in Relais cannot hide in it. The one
 * exception is the order of the ledger's own states, read from src/domain/order-state.ts: the ledger and the
 * jobs follow that same ordering, so the checker cannot rank two states differently from them.
 *
 *   LOST        acknowledged with 200, yet it does not end with exactly one shipment marked ready, nor
 *               held (or failed) in the ledger with a visible reason
 *   DUPLICATED  more than one shipment for one external_order_id, or the same fulfillment, fulfillment
 *               event, note, shipment reference or payment written twice in the shop
 *   REGRESSED   the ledger's delivery step or state, or the shop's status, moved backwards; an order left
 *               delivered, returned or cancelled for any other state; a shop step written after a later
 *               one; a failed, returned or cancelled delivery marked paid
 *   STALE       the scenario settled but the ledger or the shop does not show the shipment's final state
 *               (invariant 3: the shop ends in the shipment's final state), or the ledger ended the order in
 *               another final state than its own shipment's (a duplicate's news applied to it)
 *
 * Issue 30's sequences: an order the shop shows as one to ship again (a WooCommerce payment failed, then paid;
 * a cancelled order restored) that the ledger ended cancelled is LOST, while one the shop still shows stopped
 * is not; a held order whose shipment was marked ready (a repair around the hold) and an order that left
 * `held` with no shop event or replay after the hold (a poll erasing it) are REGRESSED.
 */
import type { EmulatedShipmentSnapshot } from '@relais/emulators/dispatch';
import type { OrderSnapshot as ShopifyOrderSnapshot } from '@relais/emulators/shopify';
import type { OrderSnapshot as WooOrderSnapshot } from '@relais/emulators/woocommerce';
import { FINAL_STATES, isOrderState, stateRank, type OrderState } from '../../../src/domain/order-state.js';
import type { History, LedgerFinal, PlacedOrder } from './history.js';

export type AnomalyKind = 'lost' | 'duplicated' | 'regressed' | 'stale' | 'misbilled';

export interface Anomaly {
  kind: AnomalyKind;
  externalOrderId: string;
  detail: string;
}

export interface CheckReport {
  orders: number;
  /** Orders with at least one order webhook answered 200. */
  acknowledged: number;
  /** Orders placed whose webhooks were never answered 200 (the test, as the platform, should have kept retrying). */
  unacknowledged: string[];
  /** Orders with one shipment marked ready. */
  shipped: number;
  /** Orders held in the ledger (with their reason code), legitimate or not: scenarios say which they expect. */
  held: { externalOrderId: string; code: string }[];
  lost: Anomaly[];
  duplicated: Anomaly[];
  regressed: Anomaly[];
  stale: Anomaly[];
  /** COD orders whose shipment carries another amount than the goods owed (the money oracle, integer francs). */
  misbilled: Anomaly[];
}

/** Where a shipment's story ends. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['DELIVERED', 'RETURNED', 'CANCELLED']);
const FAILED_STATUSES = new Set(['DELIVERY_FAILED', 'RETURNED', 'CANCELLED']);

/** The ledger's delivery steps (domain/shipment-status.ts names them; the ranks are the service's order above). */
const STEP_RANK: Record<string, number> = {
  created: 0,
  ready: 1,
  assigned: 2,
  picked_up: 3,
  in_transit: 4,
  out_for_delivery: 5,
  delivery_failed: 6,
  delivered: 7,
  returned: 7,
  cancelled: 7,
};
const FINAL_STEPS = new Set(['delivered', 'returned', 'cancelled']);
const STEP_OF_STATUS: Record<string, string> = {
  CREATED: 'created',
  READY: 'ready',
  ASSIGNED: 'assigned',
  PICKED_UP: 'picked_up',
  IN_TRANSIT: 'in_transit',
  OUT_FOR_DELIVERY: 'out_for_delivery',
  DELIVERY_FAILED: 'delivery_failed',
  DELIVERED: 'delivered',
  RETURNED: 'returned',
  CANCELLED: 'cancelled',
};

/** Shopify fulfillment events, in delivery order. */
const SHOPIFY_EVENT_RANK: Record<string, number> = {
  CARRIER_PICKED_UP: 3,
  IN_TRANSIT: 4,
  OUT_FOR_DELIVERY: 5,
  ATTEMPTED_DELIVERY: 6,
  DELIVERED: 7,
  FAILURE: 7,
};
/** What the merchant should see on the Shopify order for a shipment's final status. */
const SHOPIFY_EVENT_OF_STATUS: Record<string, string> = {
  PICKED_UP: 'CARRIER_PICKED_UP',
  IN_TRANSIT: 'IN_TRANSIT',
  OUT_FOR_DELIVERY: 'OUT_FOR_DELIVERY',
  DELIVERY_FAILED: 'ATTEMPTED_DELIVERY',
  DELIVERED: 'DELIVERED',
  RETURNED: 'FAILURE',
  CANCELLED: 'FAILURE',
};
const SHOPIFY_FINANCIAL_RANK: Record<string, number> = { PENDING: 0, AUTHORIZED: 0, PARTIALLY_PAID: 1, PAID: 2 };
const SHOPIFY_FULFILLMENT_RANK: Record<string, number> = { UNFULFILLED: 0, PARTIALLY_FULFILLED: 1, FULFILLED: 2 };

/** WooCommerce step notes ("Relais: <words> (shipment shp_…).") in delivery order, by their words. */
const WOO_NOTE_RANK: [RegExp, number, string][] = [
  [/^Relais: picked up by the courier/, 3, 'PICKED_UP'],
  [/^Relais: in transit/, 4, 'IN_TRANSIT'],
  [/^Relais: out for delivery/, 5, 'OUT_FOR_DELIVERY'],
  [/^Relais: delivery failed/, 6, 'DELIVERY_FAILED'],
  [/^Relais: delivered/, 7, 'DELIVERED'],
  [/^Relais: returned to the merchant/, 7, 'RETURNED'],
  [/^Relais: shipment cancelled/, 7, 'CANCELLED'],
];
const WOO_STATUS_RANK: Record<string, number> = { pending: 0, 'on-hold': 0, processing: 1, completed: 2 };

export function checkHistory(history: History): CheckReport {
  const report: CheckReport = {
    orders: history.orders.length,
    acknowledged: 0,
    unacknowledged: [],
    shipped: 0,
    held: [],
    lost: [],
    duplicated: [],
    regressed: [],
    stale: [],
    misbilled: [],
  };
  const flag = (kind: AnomalyKind, externalOrderId: string, detail: string) =>
    report[kind].push({ kind, externalOrderId, detail });

  for (const order of history.orders) {
    const id = order.externalOrderId;
    const shipments = history.dispatch.shipments.filter((s) => s.external_order_id === id);
    const ledger = history.ledger.find((l) => l.externalOrderId === id);
    const acknowledged = history.webhooks.some(
      (w) => w.externalOrderId === id && w.from !== 'dispatch' && w.status === 200,
    );
    if (acknowledged) report.acknowledged += 1;
    else report.unacknowledged.push(id);
    if (ledger?.state === 'held') report.held.push({ externalOrderId: id, code: ledger.hold?.code ?? '(no reason)' });

    // ---- LOST ----
    const ready = shipments.filter(markedReady);
    if (shipments.length === 1 && ready.length === 1) report.shipped += 1;
    const stopped = stoppedInShop(history, order);
    if (acknowledged && !(stopped && shipments.every((s) => s.status === 'CANCELLED') && ledger?.state !== undefined)) {
      const lost = lostReason(shipments, ready, ledger);
      if (lost)
        flag(
          'lost',
          id,
          stopped === undefined && ledger?.state === 'cancelled' ? `${lost}; the shop shows it as one to ship` : lost,
        );
    }
    // A hold that did not hold: the shipment went to a courier while the ledger still holds the order.
    if (ledger?.state === 'held' && ready.length > 0) {
      flag(
        'regressed',
        id,
        `held (${ledger.hold?.code ?? 'no reason'}) in the ledger, yet shipment ${ready[0]!.shipment_id} was marked ready: a hold was bypassed`,
      );
    }
    // The ledger ends where its own shipment ends, never where another shipment with the same reference does.
    const own = shipments.find((s) => s.shipment_id === ledger?.shipmentId);
    const ownEnd = own && FINAL_STATUSES.has(own.status) ? STEP_OF_STATUS[own.status] : undefined;
    if (own && ledger?.state !== undefined && FINAL_STATES.has(ledger.state as OrderState) && ownEnd !== ledger.state) {
      flag(
        'stale',
        id,
        `the ledger ended the order ${ledger.state} but its own shipment ${own.shipment_id} is ${own.status}`,
      );
    }

    // ---- DUPLICATED: shipments ----
    if (shipments.length > 1) {
      flag(
        'duplicated',
        id,
        `${shipments.length} shipments for one order: ${shipments.map((s) => `${s.shipment_id} (${s.status})`).join(', ')}`,
      );
    }
    const shipment = shipments.length === 1 ? shipments[0] : undefined;

    // ---- MISBILLED: the money oracle, in BigInt francs from the shop's own decimal strings ----
    if (order.owed) {
      const goods = francs(order.owed.outstanding) - francs(order.owed.shipping);
      for (const s of shipments) {
        if (s.orderAmountXof === undefined || BigInt(s.orderAmountXof) !== goods) {
          flag(
            'misbilled',
            id,
            `${s.shipment_id} carries ${s.orderAmountXof ?? 'no amount'} XOF; the shop owes ${goods} XOF for the goods (outstanding ${order.owed.outstanding} less shipping ${order.owed.shipping})`,
          );
        }
      }
    } else if (!order.cashOnDelivery) {
      for (const s of shipments)
        if ((s.orderAmountXof ?? 0) > 0)
          flag('misbilled', id, `${s.shipment_id} collects ${s.orderAmountXof} XOF on a prepaid order`);
    }

    // ---- the shop ----
    if (order.platform === 'shopify') {
      const page = history.shopify.orders.find((o) => o.id === order.shopOrderId);
      if (page) checkShopifyOrder(history, order, page, shipment, flag);
    } else {
      const page = history.woo.orders.find((o) => o.id === order.shopOrderId);
      if (page) checkWooOrder(history, order, page, shipment, flag);
    }

    // ---- REGRESSED: the ledger over time ----
    checkLedgerSamples(history, id, flag);
    checkShopSamples(history, order, flag);
    const written = (ledger?.timeline ?? [])
      .filter((e) => e.system === 'shop' && e.outcome === 'ok' && e.operation.startsWith('recordStep '))
      .map((e) => e.operation.slice('recordStep '.length));
    for (let i = 1; i < written.length; i++) {
      if ((STEP_RANK[written[i]!] ?? 0) < (STEP_RANK[written[i - 1]!] ?? 0)) {
        flag('regressed', id, `the ledger's timeline writes step ${written[i]} into the shop after ${written[i - 1]}`);
      }
    }

    // ---- STALE: the ledger follows the shipment ----
    if (shipment && markedReady(shipment) && ledger?.state !== undefined) {
      const expected = STEP_OF_STATUS[shipment.status];
      const step = ledger.delivery?.step;
      if (expected && step !== expected) {
        flag(
          'stale',
          id,
          `the shipment is ${shipment.status} but the ledger's delivery step is ${step ?? '(none)'} (state ${ledger.state})`,
        );
      }
    }
  }
  return report;
}

/** WooCommerce statuses the shop stops an order in (Relais holds or ends it), and Shopify's cancellation. */
const WOO_STOPPED: ReadonlySet<string> = new Set(['failed', 'cancelled', 'trash', 'refunded']);

/** The shop's final word when it stopped the order (its status), or undefined when it shows one to ship. */
function stoppedInShop(history: History, order: PlacedOrder): string | undefined {
  if (order.platform === 'shopify') {
    const page = history.shopify.orders.find((o) => o.id === order.shopOrderId);
    return page?.cancelled ? 'cancelled' : undefined;
  }
  const status = history.woo.orders.find((o) => o.id === order.shopOrderId)?.status;
  return status !== undefined && WOO_STOPPED.has(status) ? status : undefined;
}

function markedReady(shipment: EmulatedShipmentSnapshot): boolean {
  return shipment.status_history.some((h) => h.status === 'READY');
}

function lostReason(
  shipments: EmulatedShipmentSnapshot[],
  ready: EmulatedShipmentSnapshot[],
  ledger: LedgerFinal | undefined,
): string | undefined {
  if (shipments.length === 1 && ready.length === 1) return undefined;
  // Held (or failed) with a reason a person can act on, and at most one shipment a replay would adopt.
  if (ledger?.state === 'held' && shipments.length <= 1) {
    return ledger.hold?.message && ledger.hold.message.trim() !== '' ? undefined : 'held without a visible reason';
  }
  if (shipments.length > 1) return undefined; // reported as DUPLICATED
  if (!ledger?.state) return 'acknowledged with 200 but absent from the ledger and never shipped';
  if (shipments.length === 0)
    return `acknowledged with 200 but no shipment was ever created (ledger state ${ledger.state})`;
  return `its only shipment ${shipments[0]!.shipment_id} was never marked ready (status ${shipments[0]!.status}, ledger state ${ledger.state})`;
}

type Flag = (kind: AnomalyKind, externalOrderId: string, detail: string) => void;

function checkShopifyOrder(
  history: History,
  order: PlacedOrder,
  page: ShopifyOrderSnapshot,
  shipment: EmulatedShipmentSnapshot | undefined,
  flag: Flag,
): void {
  const id = order.externalOrderId;
  const ours = page.fulfillments.filter(
    (f) => f.status !== 'CANCELLED' && f.trackingInfo.some((t) => t.company === 'Relais'),
  );
  if (ours.length > 1) flag('duplicated', id, `${ours.length} Relais fulfillments on Shopify order ${page.name}`);
  for (const fulfillment of ours) {
    const statuses = fulfillment.events.map((e) => e.status);
    const twice = statuses.filter((s, i) => statuses.indexOf(s) !== i);
    if (twice.length > 0)
      flag('duplicated', id, `fulfillment event(s) ${[...new Set(twice)].join(', ')} written twice on ${page.name}`);
    for (let i = 1; i < statuses.length; i++) {
      if ((SHOPIFY_EVENT_RANK[statuses[i]!] ?? 0) < (SHOPIFY_EVENT_RANK[statuses[i - 1]!] ?? 0)) {
        flag('regressed', id, `fulfillment event ${statuses[i]} written after ${statuses[i - 1]} on ${page.name}`);
      }
    }
  }
  const noteLines = (page.note ?? '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.startsWith('Relais'));
  const repeatedLines = noteLines.filter((l, i) => noteLines.indexOf(l) !== i);
  if (repeatedLines.length > 0) flag('duplicated', id, `note line written twice on ${page.name}: ${repeatedLines[0]}`);
  const metafieldKeys = page.metafields.map((m) => `${m.namespace}.${m.key}`);
  const repeatedKeys = metafieldKeys.filter((k, i) => metafieldKeys.indexOf(k) !== i);
  if (repeatedKeys.length > 0) flag('duplicated', id, `metafield(s) ${repeatedKeys.join(', ')} twice on ${page.name}`);
  const orderGid = `"gid://shopify/Order/${order.shopOrderId}"`;
  const paidCalls = history.shopify.calls.filter(
    (c) =>
      c.rootFields.includes('orderMarkAsPaid') &&
      c.outcome === 'ok' &&
      JSON.stringify(c.variables ?? {}).includes(orderGid) &&
      !hasUserErrors(c.response),
  );
  if (paidCalls.length > 1) flag('duplicated', id, `orderMarkAsPaid applied ${paidCalls.length} times on ${page.name}`);

  const finalStatus = shipment?.status;
  const failed = shipment !== undefined && FAILED_STATUSES.has(shipment.status);
  if (order.cashOnDelivery && failed && (page.financialStatus === 'PAID' || paidCalls.length > 0)) {
    flag('regressed', id, `the delivery ended ${shipment.status} yet ${page.name} was marked paid`);
  }
  if (shipment && finalStatus && markedReady(shipment)) {
    if (ours.length === 0)
      flag(
        'stale',
        id,
        `shipment ${shipment.shipment_id} is ${finalStatus} but ${page.name} carries no Relais fulfillment`,
      );
    const event = SHOPIFY_EVENT_OF_STATUS[finalStatus];
    if (event && ours.length > 0 && !ours.some((f) => f.events.some((e) => e.status === event))) {
      flag('stale', id, `shipment ${shipment.shipment_id} is ${finalStatus} but ${page.name} has no ${event} event`);
    }
    if (finalStatus === 'DELIVERED' && order.cashOnDelivery && page.financialStatus !== 'PAID') {
      flag(
        'stale',
        id,
        `shipment ${shipment.shipment_id} was delivered (cash collected) but ${page.name} is ${page.financialStatus}`,
      );
    }
  }
}

function checkWooOrder(
  history: History,
  order: PlacedOrder,
  page: WooOrderSnapshot,
  shipment: EmulatedShipmentSnapshot | undefined,
  flag: Flag,
): void {
  const id = order.externalOrderId;
  const texts = page.notes.map((n) => plain(n.note));
  const repeated = texts.filter(
    (t, i) => texts.indexOf(t) !== i && (t.startsWith('Relais') || t.includes('on its way')),
  );
  if (repeated.length > 0) flag('duplicated', id, `note written twice on WooCommerce order ${page.id}: ${repeated[0]}`);
  const relaisMeta = page.meta_data.filter((m) => m.key.startsWith('_relais_')).map((m) => m.key);
  const repeatedMeta = relaisMeta.filter((k, i) => relaisMeta.indexOf(k) !== i);
  if (repeatedMeta.length > 0)
    flag('duplicated', id, `meta ${repeatedMeta.join(', ')} twice on WooCommerce order ${page.id}`);
  const paidWrites = history.woo.calls.filter(
    (c) =>
      c.method === 'PUT' &&
      c.route === `/wc/v3/orders/${page.id}` &&
      c.status >= 200 &&
      c.status < 300 &&
      (c.body as { set_paid?: unknown } | undefined)?.set_paid === true,
  );
  if (paidWrites.length > 1)
    flag('duplicated', id, `set_paid written ${paidWrites.length} times on WooCommerce order ${page.id}`);

  const steps = texts.map((t) => WOO_NOTE_RANK.find(([pattern]) => pattern.test(t))).filter((s) => s !== undefined);
  for (let i = 1; i < steps.length; i++) {
    if (steps[i]![1] < steps[i - 1]![1])
      flag(
        'regressed',
        id,
        `step note ${steps[i]![2]} written after ${steps[i - 1]![2]} on WooCommerce order ${page.id}`,
      );
  }
  const failed = shipment !== undefined && FAILED_STATUSES.has(shipment.status);
  if (
    order.cashOnDelivery &&
    failed &&
    (page.set_paid || page.date_paid !== null || page.status === 'completed' || paidWrites.length > 0)
  ) {
    flag(
      'regressed',
      id,
      `the delivery ended ${shipment.status} yet WooCommerce order ${page.id} was marked paid/completed`,
    );
  }
  if (shipment && markedReady(shipment)) {
    if (!page.meta_data.some((m) => m.key === '_relais_shipment_id' && m.value === shipment.shipment_id)) {
      flag(
        'stale',
        id,
        `shipment ${shipment.shipment_id} is ${shipment.status} but WooCommerce order ${page.id} does not carry its reference`,
      );
    }
    const expected = WOO_NOTE_RANK.find(([, , status]) => status === shipment.status);
    if (expected && !steps.some((s) => s[2] === shipment.status)) {
      flag(
        'stale',
        id,
        `shipment ${shipment.shipment_id} is ${shipment.status} but WooCommerce order ${page.id} has no such note`,
      );
    }
    if (shipment.status === 'DELIVERED' && order.cashOnDelivery && !(page.status === 'completed' && page.set_paid)) {
      flag(
        'stale',
        id,
        `shipment ${shipment.shipment_id} was delivered (cash collected) but WooCommerce order ${page.id} is ${page.status}`,
      );
    }
  }
}

/**
 * A hold is left only by what resolves it: a shop event about the order sent after the order was last seen
 * before its hold, or a replay (relais/replay, relais/reconcile on its timeline). A move out of `held` to a
 * delivery state with neither (a poll, a delivery webhook, a repair) erased the hold. Moves to dispatching or
 * ready are a dispatch attempt's, which a stale hold from a worker that lost its lease may precede.
 */
function checkHoldsLeft(history: History, id: string, flag: Flag): void {
  const samples = history.samples.ledger.filter((s) => s.externalOrderId === id && s.state !== undefined);
  const replayed = (history.ledger.find((l) => l.externalOrderId === id)?.timeline ?? []).some(
    (e) => e.operation === 'webhook relais/replay' || e.operation === 'webhook relais/reconcile',
  );
  if (replayed) return;
  let heldSince: number | undefined;
  for (const [i, sample] of samples.entries()) {
    if (sample.state === 'held') {
      heldSince ??= i > 0 ? samples[i - 1]!.at : Number.NEGATIVE_INFINITY;
      continue;
    }
    if (heldSince === undefined) continue;
    // A dispatch attempt's own moves may follow a stale hold of a worker that lost its lease (the ledger lets them).
    if (sample.state === 'dispatching' || sample.state === 'ready') {
      heldSince = undefined;
      continue;
    }
    const since = heldSince;
    const resolved = history.webhooks.some(
      (w) => w.externalOrderId === id && w.from !== 'dispatch' && w.status === 200 && w.at > since && w.at <= sample.at,
    );
    if (!resolved)
      flag(
        'regressed',
        id,
        `the ledger left held for ${sample.state} (at ${sample.at} ms) with no shop event or replay since the hold`,
      );
    heldSince = undefined;
  }
}

function checkLedgerSamples(history: History, id: string, flag: Flag): void {
  checkHoldsLeft(history, id, flag);
  const samples = history.samples.ledger.filter((s) => s.externalOrderId === id);
  let bestStep: { step: string; at: number } | undefined;
  let bestState: { state: OrderState; at: number } | undefined;
  for (const sample of samples) {
    if (sample.step !== undefined) {
      const rank = STEP_RANK[sample.step] ?? 0;
      if (
        bestStep &&
        (rank < (STEP_RANK[bestStep.step] ?? 0) || (FINAL_STEPS.has(bestStep.step) && sample.step !== bestStep.step))
      ) {
        flag(
          'regressed',
          id,
          `the ledger's delivery step went from ${bestStep.step} (at ${bestStep.at} ms) back to ${sample.step} (at ${sample.at} ms)`,
        );
        return;
      }
      if (!bestStep || rank > (STEP_RANK[bestStep.step] ?? 0)) bestStep = { step: sample.step, at: sample.at };
    }
    if (sample.state !== undefined) {
      if (!isOrderState(sample.state)) {
        flag(
          'regressed',
          id,
          `the ledger's state became ${sample.state} (at ${sample.at} ms), which is no order state`,
        );
        return;
      }
      const state: OrderState = sample.state;
      // Before the shipment is marked ready (rank 0) an order may go round; once past it, only forward, and
      // never out of a final state, even to another final one.
      if (
        bestState &&
        (FINAL_STATES.has(bestState.state) ? state !== bestState.state : stateRank(state) < stateRank(bestState.state))
      ) {
        flag(
          'regressed',
          id,
          `the ledger's state went from ${bestState.state} (at ${bestState.at} ms) back to ${state} (at ${sample.at} ms)`,
        );
        return;
      }
      if (stateRank(state) > 0 && (!bestState || stateRank(state) > stateRank(bestState.state)))
        bestState = { state, at: sample.at };
    }
  }
}

function checkShopSamples(history: History, order: PlacedOrder, flag: Flag): void {
  const samples = history.samples.shop.filter((s) => s.externalOrderId === order.externalOrderId);
  const fields: [keyof (typeof samples)[number], Record<string, number>][] = [
    ['financial', SHOPIFY_FINANCIAL_RANK],
    ['fulfillment', SHOPIFY_FULFILLMENT_RANK],
    ['status', WOO_STATUS_RANK],
  ];
  for (const [field, ranks] of fields) {
    let best: { value: string; at: number } | undefined;
    for (const sample of samples) {
      const value = sample[field];
      if (typeof value !== 'string' || ranks[value] === undefined) continue;
      if (best && ranks[value] < ranks[best.value]!) {
        flag(
          'regressed',
          order.externalOrderId,
          `the shop's ${field} status went from ${best.value} (at ${best.at} ms) back to ${value} (at ${sample.at} ms)`,
        );
        break;
      }
      if (!best || ranks[value] > ranks[best.value]!) best = { value, at: sample.at };
    }
  }
}

function hasUserErrors(response: unknown): boolean {
  return /"userErrors":\[\{/.test(JSON.stringify(response ?? null));
}

/** A WordPress note as text (tags and common entities away), as the merchant reads it. */
function plain(html: string): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&#0*39;|&apos;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ')
    .trim();
}

/** One line per order with an anomaly, for test failure messages. */
export function describeReport(report: CheckReport): string {
  const lines = [
    `${report.orders} orders, ${report.acknowledged} acknowledged, ${report.shipped} shipped, ${report.held.length} held` +
      ` | lost ${report.lost.length}, duplicated ${report.duplicated.length}, regressed ${report.regressed.length}, stale ${report.stale.length}, misbilled ${report.misbilled.length}`,
  ];
  for (const anomaly of [
    ...report.lost,
    ...report.duplicated,
    ...report.regressed,
    ...report.stale,
    ...report.misbilled,
  ]) {
    lines.push(`  ${anomaly.kind.toUpperCase()} ${anomaly.externalOrderId}: ${anomaly.detail}`);
  }
  if (report.unacknowledged.length > 0) lines.push(`  never acknowledged: ${report.unacknowledged.join(', ')}`);
  if (report.held.length > 0)
    lines.push(`  held: ${report.held.map((h) => `${h.externalOrderId} (${h.code})`).join(', ')}`);
  return lines.join('\n');
}

/** A shop's decimal string ("15000.00") as whole francs, exactly; a fraction is a test-data error. */
function francs(decimal: string): bigint {
  const match = /^(\d+)(?:\.(0+))?$/.exec(decimal.trim());
  if (!match) throw new Error(`not a whole number of francs: "${decimal}"`);
  return BigInt(match[1]!);
}
