/**
 * Sequences real shops and couriers produce that lost an order or moved money wrongly (issue 30), each through
 * the real path: signed shop webhooks into the web process, the worker's queues, the ledger in PostgreSQL, the
 * dispatch emulator, and the Shopify and WooCommerce emulators for what reconciliation reads from the shops.
 *
 * Each test is named after its sequence. No polling runs on its own: a poll is the `sync` job the polling
 * fallback enqueues (src/main/worker.ts), added here as it adds it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, reconcileDepsFor, type ReconciliationReport } from '../../src/orders/reconcile/index.js';
import { SHOPIFY_DOMAIN, startTestRelais, waitFor, WOO_SHOP_ID, type TestRelais } from '../support/relais.js';
import {
  createShipmentSentEarlier,
  postShopify,
  postWoo,
  shipmentsFor,
  shopifyExternalId,
  waitForIdle,
  waitForState,
  wooExternalId,
} from './helpers.js';
import { replayOrder, replayOutcome } from '../../src/orders/intake/replay.js';
import { ABIDJAN_ADDRESS } from '../support/factories.js';
import { shipmentBehindRelaisBack } from '../reconcile/helpers.js';
import { DispatchClient } from '../../src/adapters/dispatch-api/client.js';

let relais: TestRelais;

beforeAll(async () => {
  // No polling round during the tests: each poll below is one the test enqueues.
  relais = await startTestRelais({ pollIntervalMs: 3_600_000 });
}, 60_000);

afterAll(async () => {
  await relais?.stop();
});

const ledger = () => relais.worker.runtime.ledger;
const shopify = () => relais.shopify!;

/** A reconciliation run as the scheduled job makes it (repairing), with Relais's clock `aheadMs` later. */
async function reconcileRepairing(aheadMs = 0): Promise<ReconciliationReport> {
  const deps = reconcileDepsFor(relais.worker.runtime);
  return reconcile(
    { ...deps, now: () => new Date(Date.now() + aheadMs) },
    { since: new Date(Date.now() - 86_400_000), repair: true },
  );
}

const findingsFor = (report: ReconciliationReport, extId: string) =>
  report.shops.flatMap((s) => s.findings).filter((f) => f.externalOrderId === extId);

/** The `sync` job the polling fallback enqueues for an order in flight (src/main/worker.ts). */
async function poll(extId: string, shipmentId: string): Promise<void> {
  await relais.web.runtime.queues.deliveries.add('sync', {
    shopId: extId.split(':')[0]!,
    shipmentId,
    externalOrderId: extId,
    trigger: 'poll',
  });
  await waitForIdle(relais);
}

/**
 * A Shopify COD order owing 15 000 F for the goods whose shipment already exists at the service carrying
 * 5 000 F (created by an earlier attempt for the order as it was before an edit, its answer lost): Relais looks it
 * up, adopts it, sees the
 * wrong amount and holds the order `cod_amount_mismatch`, its shipment created and not marked ready.
 */
async function orderHeldForWrongAmount(): Promise<{ extId: string; shipmentId: string }> {
  const order = shopify().createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false });
  const extId = shopifyExternalId(order.id);
  const shipment = await shipmentBehindRelaisBack(relais, extId, { orderAmountXof: 5_000 });
  await createShipmentSentEarlier(relais, extId);
  expect((await postShopify(relais, 'orders/create', shopify().order(SHOPIFY_DOMAIN, order.id))).status).toBe(200);
  const held = await waitForState(relais, extId, ['held']);
  expect(held.hold?.code).toBe('cod_amount_mismatch');
  expect(held.shipment?.shipmentId).toBe(shipment.shipmentId);
  await waitForIdle(relais);
  return { extId, shipmentId: shipment.shipmentId };
}

describe('a hold is left only by what resolves it', () => {
  it('held cod_amount_mismatch, then a delivery poll of its created shipment: the order stays held with its reason', async () => {
    const { extId, shipmentId } = await orderHeldForWrongAmount();
    await poll(extId, shipmentId);

    const after = await ledger().get(extId);
    expect(after?.state).toBe('held');
    expect(after?.hold?.code).toBe('cod_amount_mismatch');
    expect((await ledger().listHeld()).map((r) => r.meta.externalOrderId)).toContain(extId);
    // The poll still recorded what it read.
    expect(after?.delivery?.step).toBe('created');
    expect(shipmentsFor(relais, extId).map((s) => s.status)).toEqual(['CREATED']);
  });

  it('held cod_amount_mismatch, then reconcile --repair past the unready bound: the wrong-amount shipment is not marked ready', async () => {
    const { extId, shipmentId } = await orderHeldForWrongAmount();
    const report = await reconcileRepairing(2 * 3_600_000);
    await waitForIdle(relais);

    const findings = findingsFor(report, extId);
    expect(findings.map((f) => f.kind)).toEqual(expect.arrayContaining(['held', 'never_ready', 'cod_mismatch']));
    expect(findings.filter((f) => f.action === 'repaired')).toEqual([]);
    expect(findings.find((f) => f.kind === 'never_ready')).toMatchObject({
      action: 'alert',
      advice: expect.stringContaining('held'),
    });
    // No courier is sent to collect 5 000 F for goods of 15 000 F.
    expect(shipmentsFor(relais, extId).map((s) => [s.shipment_id, s.status])).toEqual([[shipmentId, 'CREATED']]);
    const after = await ledger().get(extId);
    expect([after?.state, after?.hold?.code, after?.shipment?.markedReadyAt]).toEqual([
      'held',
      'cod_amount_mismatch',
      undefined,
    ]);
  });
});

describe("every write about a shipment is about the order's own shipment", () => {
  it("shipped, a duplicate with the same reference made and cancelled, its webhook, then the order's own parcel delivered: the order ends delivered and paid", async () => {
    const order = shopify().createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false });
    const extId = shopifyExternalId(order.id);
    expect((await postShopify(relais, 'orders/create', shopify().order(SHOPIFY_DOMAIN, order.id))).status).toBe(200);
    const ready = await waitForState(relais, extId, ['ready']);
    const own = ready.shipment!.shipmentId;
    await waitForIdle(relais);

    // Another tool with the same key makes a second shipment for the order; the merchant cancels it, as
    // reconciliation's duplicate_shipment finding advises, and the service announces the cancellation.
    const duplicate = await shipmentBehindRelaisBack(relais, extId, { orderAmountXof: 15_000, markReady: true });
    const client = new DispatchClient({ baseUrl: relais.emulator.baseUrl, apiKey: relais.secrets.dispatchApiKey });
    try {
      await client.cancelShipment(duplicate.shipmentId, { reason: 'duplicate', by: 'the merchant' });
    } finally {
      await client.close();
    }
    await poll(extId, duplicate.shipmentId);

    const after = await ledger().get(extId);
    expect([after?.state, after?.shipment?.shipmentId]).toEqual(['ready', own]);
    expect((await ledger().timeline(extId)).some((e) => e.detail?.includes(duplicate.shipmentId))).toBe(true);

    // The order's own parcel is delivered: read as the polling fallback reads it, the order ends delivered, paid.
    await relais.emulator.runUntilIdle();
    expect(shipmentsFor(relais, extId).find((s) => s.shipment_id === own)?.status).toBe('DELIVERED');
    await poll(extId, own);
    const delivered = await ledger().get(extId);
    expect([delivered?.state, delivered?.delivery?.step]).toEqual(['delivered', 'delivered']);
    expect(delivered?.delivery?.written.paid).toBeDefined();
    expect(shopify().orderSnapshot(SHOPIFY_DOMAIN, order.id).financialStatus).toBe('PAID');
  });
});

// ---- WooCommerce statuses that can come back ----------------------------------------------------------------

const woo = () => relais.woo!;

/** An order placed at the WooCommerce checkout; Relais hears of it only through `announce`. */
async function placeWooOrder(payment: { payment_method: string; payment_method_title: string }) {
  const product = await woo().createProduct(WOO_SHOP_ID, { name: 'Téléphone Tecno', weight: '0.45', price: '45000' });
  const order = await woo().createOrder(WOO_SHOP_ID, {
    line_items: [{ product_id: product.id, quantity: 1 }],
    ...payment,
    billing: { ...ABIDJAN_ADDRESS, email: 'aya.kouassi@example.com', phone: '+225 07 07 12 34 56' },
    shipping: { ...ABIDJAN_ADDRESS, phone: '' },
  });
  const id = Number(order.id);
  return { id, extId: wooExternalId(id) };
}

/** The merchant (or the payment gateway) moves the order to `status` in WooCommerce. */
async function setWooStatus(id: number, status: 'failed' | 'cancelled' | 'processing'): Promise<void> {
  await woo().updateOrder(WOO_SHOP_ID, id, { status });
}

/** WooCommerce's order.updated webhook for the order as it now stands, signed, into Relais. */
async function announce(id: number, topic = 'order.updated'): Promise<void> {
  expect((await postWoo(relais, topic, woo().getOrder(WOO_SHOP_ID, id))).status).toBe(200);
  await waitForIdle(relais);
}

const MOBILE_MONEY = { payment_method: 'orange_money', payment_method_title: 'Orange Money' };

describe('a WooCommerce status that can come back holds the order instead of ending it', () => {
  it('pending → failed → processing (paid on the second try): the order ships once', async () => {
    const { id, extId } = await placeWooOrder(MOBILE_MONEY);
    await announce(id, 'order.created');
    expect((await ledger().get(extId))?.state).toBe('waiting');

    await setWooStatus(id, 'failed');
    await announce(id);
    const held = await ledger().get(extId);
    expect([held?.state, held?.hold?.code]).toEqual(['held', 'shop_payment_failed']);
    expect(held?.hold?.message).toContain('failed');

    await woo().updateOrder(WOO_SHOP_ID, id, { set_paid: true });
    expect(woo().getOrder(WOO_SHOP_ID, id).status).toBe('processing');
    await announce(id);
    await waitForState(relais, extId, ['ready']);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
  });

  it('on-hold → cancelled by the merchant → relais replay → restored to processing: replay is accepted, and the restored order ships', async () => {
    const { id, extId } = await placeWooOrder({ payment_method: 'bacs', payment_method_title: 'Virement bancaire' });
    await announce(id, 'order.created');
    await setWooStatus(id, 'cancelled');
    await announce(id);
    const held = await ledger().get(extId);
    expect([held?.state, held?.hold?.code]).toEqual(['held', 'shop_cancelled']);

    // Still cancelled in the shop: the replay is taken, and the order is held again for the same reason.
    const replayed = await replayOrder(relais.web.runtime, extId);
    expect(replayed.ok).toBe(true);
    if (!replayed.ok) return;
    expect(await replayOutcome(relais.web.runtime, replayed, { timeoutMs: 10_000 })).toMatchObject({
      kind: 'held_again',
      code: 'shop_cancelled',
    });

    await setWooStatus(id, 'processing');
    await announce(id);
    await waitForState(relais, extId, ['ready']);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
  });

  it('pending → failed, then processing with its webhook lost: reconciliation finds the held order and ships it', async () => {
    const { id, extId } = await placeWooOrder(MOBILE_MONEY);
    await setWooStatus(id, 'failed');
    await announce(id);
    expect((await ledger().get(extId))?.hold?.code).toBe('shop_payment_failed');

    await woo().updateOrder(WOO_SHOP_ID, id, { set_paid: true }); // its webhook never reaches Relais
    const report = await reconcileRepairing();
    expect(findingsFor(report, extId).map((f) => [f.kind, f.action])).toEqual([['missed_webhook', 'repaired']]);
    await waitForState(relais, extId, ['ready']);
    await waitForIdle(relais);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
    expect(findingsFor(await reconcileRepairing(), extId)).toEqual([]);
  });

  it('processing → shipment created, not ready → cancelled (its shipment cancelled) → restored: held, never a second shipment', async () => {
    // markReady refused once: the order waits held with its shipment CREATED.
    relais.emulator.faults.add({ operation: 'markReady', times: 1, fault: { kind: 'status', status: 409 } });
    const { id, extId } = await placeWooOrder({
      payment_method: 'cod',
      payment_method_title: 'Paiement à la livraison',
    });
    await announce(id, 'order.created');
    const unready = await waitForState(relais, extId, ['held']);
    expect(unready.hold?.code).toBe('shipment_not_ready');

    await setWooStatus(id, 'cancelled');
    await announce(id);
    const cancelled = await waitFor(
      async () => {
        const record = await ledger().get(extId);
        return record?.hold?.code === 'shop_cancelled' ? record : undefined;
      },
      { what: 'the order held as cancelled in the shop' },
    );
    expect(cancelled.hold?.message).toContain(`shipment ${unready.shipment!.shipmentId} was cancelled`);
    expect(shipmentsFor(relais, extId).map((s) => s.status)).toEqual(['CANCELLED']);

    // Restored: not over, but its reference carries a cancelled shipment, so a person ships it.
    await setWooStatus(id, 'processing');
    await announce(id);
    const restored = await waitFor(
      async () => {
        const record = await ledger().get(extId);
        return record?.hold?.code === 'shipment_cancelled' ? record : undefined;
      },
      { what: 'the restored order held for its cancelled shipment' },
    );
    expect(restored.state).toBe('held');
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
  });

  it('processing → shipped → cancelled (its shipment cancelled) → restored to processing: reconciliation reports the order nobody ships', async () => {
    const { id, extId } = await placeWooOrder({
      payment_method: 'cod',
      payment_method_title: 'Paiement à la livraison',
    });
    await announce(id, 'order.created');
    await waitForState(relais, extId, ['ready']);
    await setWooStatus(id, 'cancelled');
    await announce(id);
    await waitForState(relais, extId, ['cancelled']);
    expect(shipmentsFor(relais, extId).map((s) => s.status)).toEqual(['CANCELLED']);

    await setWooStatus(id, 'processing');
    await announce(id);
    const report = await reconcileRepairing();
    expect(findingsFor(report, extId)).toEqual([
      expect.objectContaining({
        kind: 'restored_after_cancel',
        action: 'alert',
        detail: expect.stringContaining('processing'),
      }),
    ]);
  });
});

// ---- suspected, now shown --------------------------------------------------------------------------------------

describe('a cancellation the service never took is not forgotten', () => {
  it('shipped → cancelled in the shop while every cancelShipment is refused for now, until the job gives up: recorded on the order, and reconciliation cancels it later', async () => {
    const order = shopify().createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false });
    const extId = shopifyExternalId(order.id);
    expect((await postShopify(relais, 'orders/create', shopify().order(SHOPIFY_DOMAIN, order.id))).status).toBe(200);
    await waitForState(relais, extId, ['ready']);
    await waitForIdle(relais);

    // 429 with Retry-After: 0 on every cancelShipment: the cancel job spends its attempts at once.
    relais.emulator.faults.add({
      operation: 'cancelShipment',
      times: 1_000,
      fault: { kind: 'rate_limit', retryAfterSeconds: 0 },
    });
    shopify().cancelOrder(SHOPIFY_DOMAIN, order.id);
    expect((await postShopify(relais, 'orders/cancelled', shopify().order(SHOPIFY_DOMAIN, order.id))).status).toBe(200);
    const gaveUp = await waitFor(
      async () =>
        (await ledger().timeline(extId)).find((e) => e.operation === 'cancelShipment' && e.outcome === 'gave_up'),
      { what: 'the cancel job giving up, on the timeline', timeoutMs: 20_000 },
    );
    expect(gaveUp.detail).toContain('still live');
    // The merchant sees it on the order in the shop, and on the order's page.
    await waitFor(async () => shopify().orderSnapshot(SHOPIFY_DOMAIN, order.id).tags.includes('relais:problem'), {
      what: 'the problem written on the Shopify order',
    });
    expect((await ledger().get(extId))?.delivery?.problem).toContain('could not be cancelled');

    // Reconciliation asks again; while the service keeps failing, that job gives up too, and the next run asks
    // again rather than taking the failed job for one already requested.
    const gaveUpTimes = async () =>
      (await ledger().timeline(extId)).filter((e) => e.operation === 'cancelShipment' && e.outcome === 'gave_up')
        .length;
    expect(findingsFor(await reconcileRepairing(), extId).map((f) => f.action)).toEqual(['repaired']);
    await waitFor(async () => (await gaveUpTimes()) === 2, { what: 'the repair giving up too', timeoutMs: 20_000 });
    relais.emulator.faults.clear();
    const report = await reconcileRepairing();
    expect(findingsFor(report, extId).map((f) => [f.kind, f.action])).toEqual([
      ['cancelled_with_live_shipment', 'repaired'],
    ]);
    await waitForState(relais, extId, ['cancelled']);
    expect(shipmentsFor(relais, extId).map((s) => s.status)).toEqual(['CANCELLED']);
  });
});

describe('a read from before a cancellation writes nothing after it', () => {
  it('ready by hand in the console → cancelled in the shop while a delivery webhook read the shipment READY: no tracking link on the cancelled order', async () => {
    // markReady refused once: held shipment_not_ready, the shipment CREATED, no tracking link written.
    relais.emulator.faults.add({ operation: 'markReady', times: 1, fault: { kind: 'status', status: 409 } });
    const order = shopify().createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false });
    const extId = shopifyExternalId(order.id);
    expect((await postShopify(relais, 'orders/create', shopify().order(SHOPIFY_DOMAIN, order.id))).status).toBe(200);
    const held = await waitForState(relais, extId, ['held']);
    const shipmentId = held.shipment!.shipmentId;
    await waitForIdle(relais);
    // A colleague marks it ready in the service's console.
    const client = new DispatchClient({ baseUrl: relais.emulator.baseUrl, apiKey: relais.secrets.dispatchApiKey });
    try {
      await client.markReady(shipmentId, 'a colleague, in the console');
    } finally {
      await client.close();
    }

    // The merchant cancels; the cancel job's cancelShipment takes a while, under the order lock.
    relais.emulator.faults.add({ operation: 'cancelShipment', times: 1, fault: { kind: 'latency', ms: 1_200 } });
    shopify().cancelOrder(SHOPIFY_DOMAIN, order.id);
    expect((await postShopify(relais, 'orders/cancelled', shopify().order(SHOPIFY_DOMAIN, order.id))).status).toBe(200);
    const inFlight = () => relais.emulator.calls().some((c) => c.operation === 'cancelShipment' && c.status === 0);
    await waitFor(async () => inFlight(), { what: 'the cancel job calling cancelShipment' });
    // Meanwhile the service's webhook about the console's markReady: its job reads the shipment READY now, and
    // gets the order only once the cancellation is done.
    await relais.web.runtime.queues.deliveries.add('sync', { shopId: 'dakar-mode', shipmentId, trigger: 'webhook' });
    await waitFor(async () => !inFlight(), { what: 'the cancellation to answer' });
    await waitForIdle(relais);

    const after = await ledger().get(extId);
    expect([after?.state, after?.shipment?.status]).toEqual(['cancelled', 'CANCELLED']);
    expect((await ledger().timeline(extId)).filter((e) => e.operation === 'recordDispatch')).toEqual([]);
    expect(shopify().orderSnapshot(SHOPIFY_DOMAIN, order.id).tags).not.toContain('relais:dispatched');
  });
});

// ---- A WooCommerce order moved to the trash ---------------------------------------------------------------------

/** What core sends when the merchant moves an order to the trash: order.deleted, its body only the id. */
async function trashInShop(id: number): Promise<void> {
  await woo().trashOrder(WOO_SHOP_ID, id);
  expect((await postWoo(relais, 'order.deleted', { id })).status).toBe(200);
  await waitForIdle(relais);
}

describe('a WooCommerce order moved to the trash is stopped as a cancellation is', () => {
  it('processing → shipped → moved to the trash (order.deleted carries only the id): its shipment is cancelled before pickup', async () => {
    const { id, extId } = await placeWooOrder({
      payment_method: 'cod',
      payment_method_title: 'Paiement à la livraison',
    });
    await announce(id, 'order.created');
    await waitForState(relais, extId, ['ready']);

    await trashInShop(id);
    await waitForState(relais, extId, ['cancelled']);
    expect(shipmentsFor(relais, extId).map((s) => s.status)).toEqual(['CANCELLED']);
  });

  it('pending → moved to the trash: held as stopped in the shop with the trash named, not as an order without currency', async () => {
    const { id, extId } = await placeWooOrder(MOBILE_MONEY);
    await announce(id, 'order.created');
    expect((await ledger().get(extId))?.state).toBe('waiting');

    await trashInShop(id);
    const held = await ledger().get(extId);
    expect([held?.state, held?.hold?.code]).toEqual(['held', 'shop_cancelled']);
    expect(held?.hold?.message).toContain('trash');

    // Restored from the trash (order.restored carries the whole order), then paid: it ships once.
    await woo().restoreOrder(WOO_SHOP_ID, id);
    await announce(id, 'order.restored');
    await woo().updateOrder(WOO_SHOP_ID, id, { set_paid: true });
    await announce(id);
    await waitForState(relais, extId, ['ready']);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
  });

  it('pending → moved to the trash → restored → moved to the trash again: held again (the second order.deleted is not taken for the first)', async () => {
    const { id, extId } = await placeWooOrder(MOBILE_MONEY);
    await announce(id, 'order.created');
    await trashInShop(id);
    await woo().restoreOrder(WOO_SHOP_ID, id);
    await announce(id, 'order.restored');
    expect((await ledger().get(extId))?.state).toBe('waiting');

    await trashInShop(id);
    const held = await ledger().get(extId);
    expect([held?.state, held?.hold?.code]).toEqual(['held', 'shop_cancelled']);
  });

  it('an order.deleted naming an id WooCommerce cannot have (-1): nothing read from the store, no intake job retried', async () => {
    expect((await postWoo(relais, 'order.deleted', { id: -1 })).status).toBe(200);
    await waitForIdle(relais);
    const counts = await relais.web.runtime.queues.shopEvents.getJobCounts('delayed', 'failed');
    expect(counts).toEqual({ delayed: 0, failed: 0 });
    expect(
      woo()
        .calls()
        .filter((call) => call.route.startsWith('/wc/v3/orders/-1')),
    ).toEqual([]);
  });

  it('processing, shipment created, not ready → moved to the trash and emptied from it before Relais read it: the shipment is cancelled and the order ends cancelled', async () => {
    relais.emulator.faults.add({ operation: 'markReady', times: 1, fault: { kind: 'status', status: 409 } });
    const { id, extId } = await placeWooOrder({
      payment_method: 'cod',
      payment_method_title: 'Paiement à la livraison',
    });
    await announce(id, 'order.created');
    expect((await waitForState(relais, extId, ['held'])).hold?.code).toBe('shipment_not_ready');

    await woo().trashOrder(WOO_SHOP_ID, id);
    await woo().deleteOrderForGood(WOO_SHOP_ID, id);
    expect((await postWoo(relais, 'order.deleted', { id })).status).toBe(200);
    await waitForIdle(relais);
    await waitForState(relais, extId, ['cancelled']);
    expect(shipmentsFor(relais, extId).map((s) => s.status)).toEqual(['CANCELLED']);
  });
});
