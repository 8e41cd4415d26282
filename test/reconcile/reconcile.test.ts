/**
 * Reconciliation end to end, over real HTTP and a real Redis: the Shopify emulator (Admin GraphQL against the
 * real 2026-10 schema), the WooCommerce emulator, the dispatch emulator (manual clock, no delivery webhooks:
 * every courier move is a webhook Relais never got), and Relais's web process and worker.
 *
 * The tests run in order and share the shops: figures and drift first (they move the courier), then the
 * orders whose webhooks were lost, shipments made behind Relais's back, a cancellation Relais never heard
 * of, the command line, and last the scheduled job.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShopifyEmulator, type ShopifyEmulator } from '@relais/emulators/shopify';
import { startWooEmulator, type WooEmulator } from '@relais/emulators/woocommerce';
import { dashboardDepsFor } from '../../src/dashboard/wiring.js';
import { listDisputesForOrder, openDisputeForOrder } from '../../src/orders/disputes/disputes.js';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { startWorker } from '../../src/main/worker.js';
import {
  reconcile,
  reconcileDepsFor,
  reconciliationSummaries,
  type Finding,
  type ReconciliationReport,
  type ShopReconciliation,
} from '../../src/orders/reconcile/index.js';
import { CSV_COLUMNS } from '../../src/orders/reconcile/output.js';
import { shipmentsFor, shopifyExternalId, waitForIdle, waitForState, wooExternalId } from '../pipeline/helpers.js';
import {
  makeSecrets,
  SHOPIFY_DOMAIN,
  SHOPIFY_SHOP_ID,
  startTestRelais,
  WOO_SHOP_ID,
  type TestRelais,
} from '../support/relais.js';
import { ABIDJAN_ADDRESS, DAKAR_ADDRESS_WITHOUT_NEIGHBOURHOOD } from '../support/factories.js';
import { parseCsv, runCli, shipmentBehindRelaisBack } from './helpers.js';

const DAY_MS = 86_400_000;
let shopify: ShopifyEmulator;
let woo: WooEmulator;
let relais: TestRelais;
const failingDeliveries = new Set<string>();

beforeAll(async () => {
  const secrets = makeSecrets();
  shopify = await startShopifyEmulator({
    shops: [
      { domain: SHOPIFY_DOMAIN, accessToken: secrets.shopifyAccessToken, clientSecret: secrets.shopifyClientSecret },
    ],
  });
  woo = await startWooEmulator({
    shops: [
      {
        id: WOO_SHOP_ID,
        consumerKey: secrets.wooConsumerKey,
        consumerSecret: secrets.wooConsumerSecret,
        weightUnit: 'kg',
      },
    ],
  });
  relais = await startTestRelais({
    secrets,
    shopifyAdminUrl: shopify.adminUrl(SHOPIFY_DOMAIN),
    wooUrl: woo.siteUrl(WOO_SHOP_ID),
    deliveryOutcome: ({ externalOrderId }) => (failingDeliveries.has(externalOrderId) ? 'fail' : 'deliver'),
    // No polling during the tests: a delivery webhook that never came stays lost until reconciliation.
    pollIntervalMs: 3_600_000,
  });
  // Only new orders reach Relais: a cancellation (orders/cancelled, orders/updated) is a webhook it never gets.
  shopify.subscribe(SHOPIFY_DOMAIN, 'orders/create', `${relais.web.url}/webhooks/shopify`);
}, 60_000);

afterAll(async () => {
  await shopify?.webhooksSettled();
  await relais?.stop();
  await shopify?.close();
  await woo?.close();
});

const runtime = () => relais.worker.runtime;

/** A run as `relais reconcile` makes it; `clockAheadMs` makes Relais's clock later than the emulators'. */
async function run(options: {
  repair: boolean;
  since?: Date;
  clockAheadMs?: number;
  sleep?: (ms: number) => Promise<void>;
}): Promise<ReconciliationReport> {
  const deps = reconcileDepsFor(runtime(), options.sleep ? { sleep: options.sleep } : {});
  const ahead = options.clockAheadMs ?? 0;
  return reconcile(
    { ...deps, now: () => new Date(Date.now() + ahead) },
    { since: options.since ?? new Date(Date.now() - 3 * DAY_MS), repair: options.repair },
  );
}

const shopOf = (report: ReconciliationReport, shopId: string): ShopReconciliation => {
  const shop = report.shops.find((s) => s.shopId === shopId);
  if (!shop) throw new Error(`no ${shopId} in the report`);
  expect(shop.error).toBeUndefined();
  return shop;
};
const findingsFor = (report: ReconciliationReport, extId: string): Finding[] =>
  report.shops.flatMap((s) => s.findings).filter((f) => f.externalOrderId === extId);
const dayIso = (offsetDays: number) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);
const at = (offsetDays: number) => `${dayIso(offsetDays)}T09:30:00Z`;

/** An order placed in the Shopify shop whose orders/create reaches Relais; resolves once it is dispatched. */
async function placeShopifyOrder(input: Parameters<ShopifyEmulator['createOrder']>[1] = {}) {
  const order = shopify.createOrder(SHOPIFY_DOMAIN, input);
  const extId = shopifyExternalId(order.id);
  await waitForState(relais, extId, ['ready']);
  return { order, extId };
}

// ---- figures, drift, disputes ---------------------------------------------------------------------------

/** The orders of the first tests, by role. */
const known: Record<string, { extId: string; amount: number }> = {};

describe('figures per day, status drift and disputes', () => {
  it('counts a known set of orders per day of creation: COD expected, collected, and nothing held yet', async () => {
    const cod1 = await placeShopifyOrder({ createdAt: at(-2) });
    const cod2 = await placeShopifyOrder({
      createdAt: at(-2),
      lineItems: [{ title: 'Grand boubou', price: '25000', grams: 1200 }],
    });
    const prepaid = await placeShopifyOrder({
      createdAt: at(-2),
      financialStatus: 'paid',
      gateway: 'shopify_payments',
    });
    const cod4 = await placeShopifyOrder({ createdAt: at(-1) });
    Object.assign(known, {
      // The goods the courier collects: the shop's balance less the 2 000 F shipping the shop charged (the
      // service collects its own delivery price at the door).
      cod1: { extId: cod1.extId, amount: 15_000 },
      cod2: { extId: cod2.extId, amount: 25_000 },
      prepaid: { extId: prepaid.extId, amount: 0 },
      cod4: { extId: cod4.extId, amount: 15_000 },
    });
    failingDeliveries.add(cod2.extId);
    await waitForIdle(relais);
    // The courier runs every ready shipment to its end; the service sends no webhook, so Relais hears nothing.
    await relais.emulator.runUntilIdle();
    expect(shipmentsFor(relais, cod1.extId).map((s) => s.status)).toEqual(['DELIVERED']);
    expect(shipmentsFor(relais, cod2.extId).map((s) => s.status)).toEqual(['RETURNED']);

    const shop = shopOf(await run({ repair: false }), SHOPIFY_SHOP_ID);
    expect(shop.days.find((d) => d.day === dayIso(-2))).toEqual({
      day: dayIso(-2),
      orders: 3,
      shipped: 3,
      delivered: 2,
      codOrders: 2,
      codExpectedXof: 15_000 + 25_000,
      codCollectedXof: 15_000,
      heldInDisputeXof: 0,
      openDisputes: 0,
    });
    expect(shop.days.find((d) => d.day === dayIso(-1))).toEqual({
      day: dayIso(-1),
      orders: 1,
      shipped: 1,
      delivered: 1,
      codOrders: 1,
      codExpectedXof: 15_000,
      codCollectedXof: 15_000,
      heldInDisputeXof: 0,
      openDisputes: 0,
    });
  });

  it('finds the drift the lost delivery webhooks left, and a sync job brings the ledger and the shop up to the service', async () => {
    const report = await run({ repair: false });
    for (const { extId } of Object.values(known)) {
      const drift = findingsFor(report, extId).filter((f) => f.kind === 'status_drift');
      expect(drift).toHaveLength(1);
      expect(drift[0]).toMatchObject({ action: 'would_repair' });
    }
    expect((await runtime().ledger.get(known.cod1!.extId))?.delivery?.step).toBe('ready');

    const repaired = await run({ repair: true });
    for (const { extId } of Object.values(known)) {
      expect(
        findingsFor(repaired, extId)
          .filter((f) => f.kind === 'status_drift')
          .map((f) => f.action),
      ).toEqual(['repaired']);
    }
    await waitForIdle(relais);
    expect((await runtime().ledger.get(known.cod1!.extId))?.state).toBe('delivered');
    expect((await runtime().ledger.get(known.cod2!.extId))?.state).toBe('returned');
    // Written into the shop as the webhooks would have: the delivered COD order is paid.
    const order = shopify.orderSnapshot(SHOPIFY_DOMAIN, known.cod1!.extId.split(':')[1]!);
    expect(order.financialStatus).toBe('PAID');

    const again = await run({ repair: true });
    for (const { extId } of Object.values(known)) expect(findingsFor(again, extId)).toEqual([]);
  });

  it("shows an open claim as held in dispute, and keeps the decided outcome in the order's history", async () => {
    const { extId } = known.cod4!;
    // Sent twice at once (a double click, two operators): one claim is opened, the other submission is told why not.
    relais.emulator.faults.add({ operation: 'openDispute', times: 1, fault: { kind: 'latency', ms: 300 } });
    const input = {
      reason: 'damaged',
      description: 'The boubou arrived torn at the collar',
      claimantId: 'merchant-awa',
    };
    const both = await Promise.all([
      openDisputeForOrder(runtime(), extId, input),
      openDisputeForOrder(runtime(), extId, input),
    ]);
    expect(both.filter((r) => r.ok)).toHaveLength(1);
    expect(both.find((r) => !r.ok)).toMatchObject({
      retryable: true,
      why: expect.stringContaining('being opened right now'),
    });
    const opened = both.find((r) => r.ok)!;
    if (!opened.ok) throw new Error('no claim opened');
    expect(opened.claim).toMatchObject({ reason: 'damaged', status: 'OPEN', claimantType: 'seller' });

    const report = await run({ repair: false });
    expect(findingsFor(report, extId).map((f) => [f.kind, f.amountXof])).toEqual([['dispute_open', 15_000]]);
    expect(shopOf(report, SHOPIFY_SHOP_ID).days.find((d) => d.day === dayIso(-1))).toMatchObject({
      heldInDisputeXof: 15_000,
      openDisputes: 1,
    });

    relais.emulator.decideDispute(opened.claim.claimId!, {
      status: 'COMPENSATED',
      outcome: 'Courier liable: 17 000 XOF refunded to the merchant',
    });
    const decided = await run({ repair: false });
    expect(findingsFor(decided, extId).map((f) => f.kind)).toEqual(['dispute_decided']);
    expect(shopOf(decided, SHOPIFY_SHOP_ID).days.find((d) => d.day === dayIso(-1))).toMatchObject({
      heldInDisputeXof: 0,
      openDisputes: 0,
    });

    const timeline = await runtime().ledger.timeline(extId);
    expect(timeline.filter((e) => e.operation === 'openDispute')).toHaveLength(1);
    const decisions = timeline.filter((e) => e.operation === 'dispute decided');
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ outcome: 'COMPENSATED', detail: expect.stringContaining('Courier liable') });
    // A second run does not write the same decision twice.
    await run({ repair: false });
    expect((await runtime().ledger.timeline(extId)).filter((e) => e.operation === 'dispute decided')).toHaveLength(1);

    const listed = await listDisputesForOrder(runtime(), extId);
    if (!listed.ok) throw new Error(listed.why);
    expect(listed.claims).toEqual([
      expect.objectContaining({
        claimId: opened.claim.claimId,
        status: 'COMPENSATED',
        outcome: 'Courier liable: 17 000 XOF refunded to the merchant',
      }),
    ]);
  });

  it('refuses a dispute for an order without a shipment, and says why', async () => {
    const order = shopify.createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false });
    const extId = shopifyExternalId(order.id);
    const result = await openDisputeForOrder(runtime(), extId, {
      reason: 'lost',
      description: 'never arrived',
      claimantId: 'merchant-awa',
    });
    expect(result).toMatchObject({ ok: false, retryable: false, why: expect.stringContaining('no shipment') });
    const missing = await openDisputeForOrder(runtime(), extId, { reason: ' ', description: 'x', claimantId: 'y' });
    expect(missing).toMatchObject({ ok: false, why: expect.stringContaining('reason') });
    // Leave no trace for the later runs: the shop order is cancelled (a cancelled order without shipment needs nothing).
    shopify.cancelOrder(SHOPIFY_DOMAIN, order.id);
  });
});

// ---- lost order webhooks ----------------------------------------------------------------------------------

describe('orders whose webhook never arrived', () => {
  it('finds a Shopify order the shop never announced, ships it once after the repair, and a second run repairs nothing', async () => {
    const order = shopify.createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false });
    const extId = shopifyExternalId(order.id);

    const report = await run({ repair: false });
    expect(findingsFor(report, extId)).toEqual([
      expect.objectContaining({
        kind: 'missed_webhook',
        action: 'would_repair',
        orderName: order.name,
        amountXof: 15_000,
      }),
    ]);
    expect(shipmentsFor(relais, extId)).toEqual([]);

    const repaired = await run({ repair: true });
    expect(findingsFor(repaired, extId).map((f) => [f.kind, f.action])).toEqual([['missed_webhook', 'repaired']]);
    // At once, before the worker is done: the first run's job is found, nothing is added.
    const twice = await run({ repair: true });
    expect(findingsFor(twice, extId).filter((f) => f.action === 'repaired')).toEqual([]);

    await waitForState(relais, extId, ['ready']);
    await waitForIdle(relais);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
    expect(shipmentsFor(relais, extId)[0]).toMatchObject({ status: 'READY', orderAmountXof: 15_000 });
    const timeline = await runtime().ledger.timeline(extId);
    expect(timeline.some((e) => e.operation === 'webhook relais/reconcile')).toBe(true);

    const after = await run({ repair: true });
    expect(findingsFor(after, extId)).toEqual([]);
  });

  it('finds a WooCommerce order whose webhook never came, and ships it once', async () => {
    const product = await woo.createProduct(WOO_SHOP_ID, { name: 'Téléphone Tecno', weight: '0.45', price: '45000' });
    const order = await woo.createOrder(WOO_SHOP_ID, {
      line_items: [{ product_id: product.id, quantity: 1 }],
      billing: { ...ABIDJAN_ADDRESS, email: 'aya.kouassi@example.com', phone: '+225 07 07 12 34 56' },
      shipping: { ...ABIDJAN_ADDRESS, phone: '' },
    });
    const extId = wooExternalId(order.id as number);
    const repaired = await run({ repair: true });
    expect(findingsFor(repaired, extId).map((f) => [f.kind, f.action])).toEqual([['missed_webhook', 'repaired']]);
    await waitForState(relais, extId, ['ready']);
    await waitForIdle(relais);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
    expect(findingsFor(await run({ repair: true }), extId)).toEqual([]);
  });
});

describe('held orders', () => {
  it('reports a held order with its reason, even one the shop has not changed within the window', async () => {
    const order = shopify.createOrder(SHOPIFY_DOMAIN, {
      createdAt: at(-20),
      updatedAt: at(-20),
      shippingAddress: DAKAR_ADDRESS_WITHOUT_NEIGHBOURHOOD,
    });
    const extId = shopifyExternalId(order.id);
    await waitForState(relais, extId, ['held']);
    const report = await run({ repair: true });
    expect(findingsFor(report, extId)).toEqual([
      expect.objectContaining({
        kind: 'held',
        action: 'alert',
        detail: expect.stringContaining('neighbourhood_not_found'),
        advice: `fix the cause, then: relais replay ${extId}`,
      }),
    ]);
  });
});

// ---- shipments made or left behind Relais's back ----------------------------------------------------------------

describe('shipments that need a look', () => {
  it("marks ready a shipment left unready past the shop's bound, as its policy (immediately) allows", async () => {
    const order = shopify.createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false });
    const extId = shopifyExternalId(order.id);
    const shipment = await shipmentBehindRelaisBack(relais, extId, { orderAmountXof: 15_000 });

    // Within the bound (30 minutes): nothing to say yet.
    expect(findingsFor(await run({ repair: false }), extId)).toEqual([]);

    const later = await run({ repair: false, clockAheadMs: 2 * 3_600_000 });
    expect(findingsFor(later, extId)).toEqual([
      expect.objectContaining({
        kind: 'never_ready',
        action: 'would_repair',
        shipmentId: shipment.shipmentId,
        shipmentStatus: 'CREATED',
      }),
    ]);
    const repaired = await run({ repair: true, clockAheadMs: 2 * 3_600_000 });
    expect(findingsFor(repaired, extId).map((f) => [f.kind, f.action])).toEqual([['never_ready', 'repaired']]);
    const [after] = shipmentsFor(relais, extId);
    expect(after?.status).toBe('READY');
    expect(after?.status_history.at(-1)).toMatchObject({ status: 'READY', by: 'Relais reconciliation' });
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
    expect(findingsFor(await run({ repair: true, clockAheadMs: 2 * 3_600_000 }), extId)).toEqual([]);
  });

  it('reports a cash-on-delivery amount that differs from what the customer owes', async () => {
    const order = shopify.createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false });
    const extId = shopifyExternalId(order.id);
    await shipmentBehindRelaisBack(relais, extId, { orderAmountXof: 5_000, markReady: true });
    const report = await run({ repair: true });
    expect(findingsFor(report, extId)).toEqual([
      expect.objectContaining({
        kind: 'cod_mismatch',
        action: 'alert',
        amountXof: 15_000,
        detail: expect.stringContaining('5000 XOF'),
      }),
    ]);
  });

  it('cancels, with --repair, the live shipment of an order cancelled in the shop without Relais hearing of it', async () => {
    const { order, extId } = await placeShopifyOrder();
    await waitForIdle(relais);
    shopify.cancelOrder(SHOPIFY_DOMAIN, order.id);
    await shopify.webhooksSettled();
    expect((await runtime().ledger.get(extId))?.state).toBe('ready');

    const report = await run({ repair: false });
    expect(findingsFor(report, extId)).toEqual([
      expect.objectContaining({
        kind: 'cancelled_with_live_shipment',
        action: 'would_repair',
        shipmentStatus: 'READY',
      }),
    ]);
    expect(shipmentsFor(relais, extId)[0]?.status).toBe('READY');

    const repaired = await run({ repair: true });
    expect(findingsFor(repaired, extId).map((f) => [f.kind, f.action])).toEqual([
      ['cancelled_with_live_shipment', 'repaired'],
    ]);
    await waitForState(relais, extId, ['cancelled']);
    expect(shipmentsFor(relais, extId).map((s) => s.status)).toEqual(['CANCELLED']);
    expect(findingsFor(await run({ repair: true }), extId)).toEqual([]);
  });
});

// ---- outputs, the command line, the dashboard's summary, the scheduled job ----------------------------------------

describe("within the services' limits", () => {
  it('waits out a rate limit exactly as the dispatch service asks, then goes on', async () => {
    relais.emulator.faults.add({
      operation: 'listShipments',
      times: 2,
      fault: { kind: 'rate_limit', retryAfterSeconds: 7 },
    });
    const waits: number[] = [];
    const report = await run({
      repair: false,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(report.shops.every((s) => s.error === undefined)).toBe(true);
    expect(waits).toEqual([7_000, 7_000]);
    const lists = relais.emulator.calls().filter((c) => c.operation === 'listShipments');
    expect(lists.filter((c) => c.status === 429)).toHaveLength(2);
    expect(lists.at(-1)?.status).toBe(200);
  });
});

describe('outputs and the command line', () => {
  it('prints JSON and CSV that parse, with the same findings and days', async () => {
    const since = dayIso(-3);
    const json = await runCli(relais, ['reconcile', '--since', since, '--json']);
    expect(json.stderr).toBe('');
    const report = JSON.parse(json.stdout) as ReconciliationReport;
    expect(report.shops.map((s) => s.shopId).sort()).toEqual([SHOPIFY_SHOP_ID, WOO_SHOP_ID].sort());
    // The COD mismatch needs a person: the command says so with exit code 2.
    expect(json.code).toBe(2);
    expect(report.shops.flatMap((s) => s.findings).some((f) => f.kind === 'cod_mismatch')).toBe(true);

    const csv = await runCli(relais, ['reconcile', '--since', since, '--csv']);
    expect(csv.code).toBe(2);
    const [header, ...rows] = parseCsv(csv.stdout);
    expect(header).toEqual([...CSV_COLUMNS]);
    expect(rows.every((r) => r.length === CSV_COLUMNS.length)).toBe(true);
    const col = (name: (typeof CSV_COLUMNS)[number]) => CSV_COLUMNS.indexOf(name);
    const findingRows = rows.filter((r) => r[col('record')] === 'finding');
    expect(findingRows.map((r) => r[col('kind')]).sort()).toEqual(
      report.shops.flatMap((s) => s.findings.map((f) => f.kind)).sort(),
    );
    // Details carry commas and quotes: they come back whole.
    const mismatch = findingRows.find((r) => r[col('kind')] === 'cod_mismatch');
    expect(mismatch?.[col('detail')]).toBe(
      report.shops.flatMap((s) => s.findings).find((f) => f.kind === 'cod_mismatch')?.detail,
    );
    const dayRow = rows.find(
      (r) => r[col('record')] === 'day' && r[col('shop')] === SHOPIFY_SHOP_ID && r[col('day')] === dayIso(-2),
    );
    expect(dayRow?.[col('cod_expected_xof')]).toBe('40000');
    expect(dayRow?.[col('cod_collected_xof')]).toBe('15000');
  }, 120_000);

  it('opens and lists a dispute from the command line; the decided outcome shows in the list and the timeline', async () => {
    const { extId } = known.cod1!;
    const opened = await runCli(relais, [
      'dispute',
      'open',
      extId,
      '--reason',
      'never delivered',
      '--description',
      'Customer says no parcel came, "nothing at the door"',
      '--claimant-id',
      'ops-1',
      '--json',
    ]);
    expect(opened.code).toBe(0);
    const claim = (JSON.parse(opened.stdout) as { claim: { claimId: string; status: string; claimantType: string } })
      .claim;
    expect(claim).toMatchObject({ status: 'OPEN', claimantType: 'seller' });
    relais.emulator.decideDispute(claim.claimId, { status: 'REJECTED', outcome: 'Signed proof of delivery on file' });

    const listed = await runCli(relais, ['dispute', 'list', extId]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(claim.claimId);
    expect(listed.stdout).toContain('REJECTED');
    expect(listed.stdout).toContain('Signed proof of delivery on file');
    const timeline = await runtime().ledger.timeline(extId);
    expect(timeline.find((e) => e.operation === 'dispute decided')).toMatchObject({
      outcome: 'REJECTED',
      detail: expect.stringContaining('Signed proof of delivery'),
    });

    const unknown = await runCli(relais, ['dispute', 'list', 'nowhere:1']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('not in the shop registry');
  }, 120_000);

  it("keeps each shop's latest run for the dashboard, figures summed per day", async () => {
    await run({ repair: false });
    const summary = await reconciliationSummaries(runtime()).latestSummary();
    expect(summary?.shops.map((s) => s.shopId).sort()).toEqual([SHOPIFY_SHOP_ID, WOO_SHOP_ID].sort());
    expect(summary?.days.find((d) => d.day === dayIso(-2))).toEqual({
      day: dayIso(-2),
      codExpectedXof: 40_000,
      codCollectedXof: 15_000,
      heldInDisputeXof: 0,
    });
    const shopify = summary?.shops.find((s) => s.shopId === SHOPIFY_SHOP_ID);
    expect(shopify?.findings).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'cod_mismatch', count: 1, repaired: 0 })]),
    );
    // The dashboard's port, as the web process wires it.
    const port = dashboardDepsFor(runtime(), {
      token: 'a'.repeat(32),
      resolver: NeighbourhoodResolver.load(),
    }).reconciliation;
    expect(await port?.latestSummary()).toEqual(summary);
  });

  it('runs as a repeatable job of the maintenance queue, repairing, and a later run repairs nothing new', async () => {
    const order = shopify.createOrder(SHOPIFY_DOMAIN, {}, { webhooks: false });
    const extId = shopifyExternalId(order.id);
    const scheduled = await startWorker({
      ...relais.base,
      resolver: NeighbourhoodResolver.load(),
      reconcileIntervalMs: 3_600_000,
    });
    try {
      expect(await scheduled.runtime.queues.maintenance.getJobScheduler('reconcile')).toMatchObject({
        every: 3_600_000,
      });
      // The first run starts at once: the lost order is found and shipped.
      await waitForState(relais, extId, ['ready'], 30_000);
      await waitForIdle(relais);
      expect(shipmentsFor(relais, extId)).toHaveLength(1);
    } finally {
      await scheduled.close();
    }
    const after = await run({ repair: true });
    expect(after.shops.flatMap((s) => s.findings).filter((f) => f.action === 'repaired')).toEqual([]);
  }, 60_000);
});
