/**
 * The dashboard's use-cases for an order's page, its disputes and the cash figures (src/dashboard/use-cases),
 * called directly with the ports the web process wires (src/dashboard/wiring.ts): the real ledger, the real
 * disputes functions (src/orders/disputes) and the dispatch emulator's claims, over a private Redis. Orders reach the
 * ledger by the shop's webhook and are carried to the door by the emulated courier.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DashboardDeps } from '../../../src/dashboard/ports.js';
import { cashReport } from '../../../src/dashboard/use-cases/cash-report.js';
import { openDispute, type DisputeInput } from '../../../src/dashboard/use-cases/open-dispute.js';
import { orderDisputes } from '../../../src/dashboard/use-cases/order-disputes.js';
import { stillMoving, viewOrder } from '../../../src/dashboard/use-cases/view-order.js';
import { dashboardDepsFor } from '../../../src/dashboard/wiring.js';
import type { EmulatedClaim } from '@relais/emulators/dispatch';
import { DEFAULT_SHIPPING_ADDRESS } from '@relais/emulators/shopify';
import type { OrderRecord } from '../../../src/ledger/order-ledger.js';
import { shopifyExternalId, waitForState } from '../../pipeline/helpers.js';
import { randomHex, SHOPIFY_DOMAIN, SHOPIFY_SHOP_ID, startTestRelais, type TestRelais } from '../../support/relais.js';

let relais: TestRelais;
let ports: DashboardDeps;
/** Delivered orders: one disputed by these tests, one whose claims are only read. */
let disputedId: string;
let quietId: string;
let heldId: string;

const { latitude: _lat, longitude: _lng, ...addressWithoutCoords } = DEFAULT_SHIPPING_ADDRESS;

beforeAll(async () => {
  relais = await startTestRelais({ pollIntervalMs: 500 });
  const shopify = relais.shopify!;
  for (const topic of ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled']) {
    shopify.subscribe(SHOPIFY_DOMAIN, topic, `${relais.web.url}/webhooks/shopify`);
  }
  relais.emulator.setOrganisationWebhook(
    'org_relais',
    `${relais.web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${relais.secrets.dispatchWebhookToken}`,
  );
  ports = dashboardDepsFor(relais.web.runtime, { token: `dash_${randomHex(16)}` });

  disputedId = shopifyExternalId(shopify.createOrder(SHOPIFY_DOMAIN, {}).id);
  quietId = shopifyExternalId(shopify.createOrder(SHOPIFY_DOMAIN, {}).id);
  await waitForState(relais, disputedId, ['ready']);
  await waitForState(relais, quietId, ['ready']);
  await relais.emulator.runUntilIdle();
  await waitForState(relais, disputedId, ['delivered']);
  await waitForState(relais, quietId, ['delivered']);

  heldId = shopifyExternalId(
    shopify.createOrder(SHOPIFY_DOMAIN, {
      shippingAddress: { ...addressWithoutCoords, address1: 'Ouakam ou Yoff', address2: '' },
    }).id,
  );
  await waitForState(relais, heldId, ['held']);
}, 60_000);

afterAll(async () => {
  await relais?.shopify?.webhooksSettled();
  await relais?.stop();
});

function claimsAtService(externalOrderId: string): EmulatedClaim[] {
  return relais.emulator.shipments().find((s) => s.external_order_id === externalOrderId)!.claims;
}

const calls = (operation?: string) =>
  relais.emulator.calls().filter((c) => operation === undefined || c.operation === operation).length;
/**
 * The dispute calls made so far. Counting every call would also count the worker's own, which go on in the
 * background (a late delivery webhook's sync reads the shipment) and once made this file fail under load.
 */
const disputeCalls = () => calls('openDispute') + calls('listShipmentDisputes');
const form = (fields: Partial<DisputeInput>): DisputeInput => ({
  reason: 'damaged',
  description: 'Box crushed.',
  claimantId: 'ops-awa',
  claimantType: 'seller',
  ...fields,
});
const record = async (id: string): Promise<OrderRecord> => (await relais.worker.runtime.ledger.get(id))!;

describe('opening a dispute', () => {
  it("opens a claim on the order's shipment with the fields given, an emptied claimant type meaning seller", async () => {
    const result = await openDispute(
      ports,
      disputedId,
      form({ reason: 'lost', description: 'One parcel of two.', claimantType: '  ' }),
    );
    const [claim] = claimsAtService(disputedId).filter((c) => c.reason === 'lost');
    expect(claim).toMatchObject({
      description: 'One parcel of two.',
      claimant_id: 'ops-awa',
      claimant_type: 'seller',
      status: 'OPEN',
    });
    expect(result).toEqual({
      kind: 'opened',
      record: expect.anything(),
      claimId: claim!.claim_id,
      shipmentId: (await record(disputedId)).shipment!.shipmentId,
    });
  });

  it('does not open a claim identical to one still open (same reason, description and claimant), and returns the open one', async () => {
    const fields = form({ reason: 'wrong item', description: 'Blue instead of red.' });
    const first = await openDispute(ports, disputedId, fields);
    expect(first.kind).toBe('opened');
    const before = disputeCalls();
    const again = await openDispute(ports, disputedId, fields);
    expect(again).toMatchObject({
      kind: 'duplicate',
      claim: { claimId: first.kind === 'opened' ? first.claimId : '', status: 'OPEN', reason: 'wrong item' },
    });
    expect(disputeCalls()).toBe(before);
    expect(claimsAtService(disputedId).filter((c) => c.reason === 'wrong item')).toHaveLength(1);
  });

  it('opens a second claim with the same reason when its description differs', async () => {
    await openDispute(ports, disputedId, form({ reason: 'torn', description: 'The bag is torn.' }));
    expect(
      await openDispute(ports, disputedId, form({ reason: 'torn', description: 'The box is torn too.' })),
    ).toMatchObject({ kind: 'opened' });
    expect(claimsAtService(disputedId).filter((c) => c.reason === 'torn')).toHaveLength(2);
  });

  it('does not open a dispute on an order that has no shipment, and makes no dispute call', async () => {
    const before = disputeCalls();
    expect(await openDispute(ports, heldId, form({}))).toMatchObject({
      kind: 'no_shipment',
      record: { state: 'held' },
    });
    expect(disputeCalls()).toBe(before);
  });

  it('does not open a dispute for an order the ledger does not have', async () => {
    expect(await openDispute(ports, `${SHOPIFY_SHOP_ID}:404`, form({}))).toEqual({
      kind: 'not_found',
      externalOrderId: `${SHOPIFY_SHOP_ID}:404`,
    });
  });

  it('names the field of each problem in an incomplete form, and makes no dispute call', async () => {
    const before = disputeCalls();
    const result = await openDispute(ports, disputedId, form({ reason: '   ', claimantId: undefined }));
    expect(result).toMatchObject({
      kind: 'invalid',
      problems: [
        { field: 'reason', message: expect.stringContaining('a reason is required') },
        { field: 'claimantId' },
      ],
    });
    expect(disputeCalls()).toBe(before);
  });

  it("returns the service's refusal as not retryable", async () => {
    // Within Relais's own limit (100 characters) but beyond the service's.
    const result = await openDispute(ports, disputedId, form({ reason: 'wet', claimantType: 'r'.repeat(60) }));
    expect(result).toMatchObject({
      kind: 'refused',
      retryable: false,
      why: expect.stringContaining('the delivery service refused openDispute'),
    });
  });

  it('returns an unavailable service as a retryable refusal', async () => {
    relais.emulator.faults.add({ operation: 'openDispute', times: 1, fault: { kind: 'status', status: 503 } });
    const result = await openDispute(ports, disputedId, form({ reason: 'cash short' }));
    expect(result).toMatchObject({
      kind: 'refused',
      retryable: true,
      why: expect.stringContaining('the delivery service is unavailable'),
    });
    expect(claimsAtService(disputedId).some((c) => c.reason === 'cash short')).toBe(false);
  });

  it('opens a dispute whose answer was dropped after the service opened it, then sent again, only once on the shipment', async () => {
    relais.emulator.faults.add({ operation: 'openDispute', times: 1, fault: { kind: 'commit_then_drop' } });
    const fields = form({ reason: 'answer lost', description: 'Sent while the line dropped.' });
    const first = await openDispute(ports, disputedId, fields);
    expect(claimsAtService(disputedId).filter((c) => c.reason === 'answer lost')).toHaveLength(1);
    const [atService] = claimsAtService(disputedId).filter((c) => c.reason === 'answer lost');
    // The lost answer is found by looking at the shipment's claims: the merchant is told it was opened.
    expect(first).toMatchObject({ kind: 'opened', claimId: atService!.claim_id });
    // Sent again (the merchant did not trust the first answer): the service's list says it is open already.
    const again = await openDispute(ports, disputedId, fields);
    expect(again).toMatchObject({ kind: 'duplicate', claim: { claimId: atService!.claim_id } });
    expect(claimsAtService(disputedId).filter((c) => c.reason === 'answer lost')).toHaveLength(1);
  });

  it('opens again a dispute the service opened while Relais lost the answer and its memory of it (a crash), without a second claim', async () => {
    const fields = form({ reason: 'answer lost twice', description: 'Nobody at Relais knows it was opened.' });
    // The earlier attempt reached the service, then Relais died before reading the answer: no record of it.
    const client = relais.web.runtime.dispatchClientFor(relais.shops.get(SHOPIFY_SHOP_ID)!);
    await client.openDispute((await record(disputedId)).shipment!.shipmentId, {
      reason: 'answer lost twice',
      description: 'Nobody at Relais knows it was opened.',
      claimant_id: 'ops-awa',
      claimant_type: 'seller',
    });
    const again = await openDispute(ports, disputedId, fields);
    expect(again).toMatchObject({ kind: 'duplicate', claim: { status: 'OPEN', reason: 'answer lost twice' } });
    expect(claimsAtService(disputedId).filter((c) => c.reason === 'answer lost twice')).toHaveLength(1);
  });

  it('returns a failure of Relais itself while opening (the disputes port throwing) as unconfirmed, with the error', async () => {
    const failing = {
      ...ports,
      disputes: { ...ports.disputes, open: () => Promise.reject(new Error('connection reset mid-call')) },
    };
    expect(await openDispute(failing, disputedId, form({ reason: 'scratched' }))).toMatchObject({
      kind: 'unconfirmed',
      error: 'connection reset mid-call',
    });
  });
});

describe("reading an order's claims", () => {
  beforeAll(async () => {
    expect(
      await openDispute(ports, disputedId, form({ reason: 'seal broken', description: 'Opened before delivery.' })),
    ).toMatchObject({ kind: 'opened' });
  });

  it('reads only what Relais recorded while no claim is open and nobody asks, without calling the service, and lets the page offer to ask', async () => {
    const before = calls('listShipmentDisputes');
    expect(await orderDisputes(ports, await record(quietId), { reloading: false, ask: false })).toEqual({
      claims: [],
      source: { kind: 'recorded', canAsk: true },
    });
    expect(calls('listShipmentDisputes')).toBe(before);
  });

  it('asks the service when the operator asks, and returns its list', async () => {
    const before = calls('listShipmentDisputes');
    expect(await orderDisputes(ports, await record(quietId), { reloading: false, ask: true })).toEqual({
      claims: [],
      source: { kind: 'service' },
    });
    expect(calls('listShipmentDisputes')).toBe(before + 1);
  });

  it('asks the service unasked while a recorded claim is still open', async () => {
    const before = calls('listShipmentDisputes');
    const result = await orderDisputes(ports, await record(disputedId), { reloading: false, ask: false });
    expect(result.source).toEqual({ kind: 'service' });
    expect(result.claims.some((c) => c.reason === 'seal broken' && c.status === 'OPEN')).toBe(true);
    expect(calls('listShipmentDisputes')).toBe(before + 1);
  });

  it('never asks while the page reloads itself, even with a claim open or when asked, and does not offer to ask', async () => {
    const before = calls('listShipmentDisputes');
    const result = await orderDisputes(ports, await record(disputedId), { reloading: true, ask: true });
    expect(result.source).toEqual({ kind: 'recorded', canAsk: false });
    expect(result.claims.some((c) => c.reason === 'seal broken')).toBe(true);
    expect(calls('listShipmentDisputes')).toBe(before);
  });

  it("returns the recorded claims and the service's reason when the service cannot be asked", async () => {
    relais.emulator.faults.add({ operation: 'listShipmentDisputes', times: 1, fault: { kind: 'status', status: 503 } });
    const result = await orderDisputes(ports, await record(disputedId), { reloading: false, ask: true });
    expect(result.source).toMatchObject({
      kind: 'unavailable',
      why: expect.stringContaining('the delivery service is unavailable for listShipmentDisputes'),
    });
    expect(result.claims.some((c) => c.reason === 'seal broken')).toBe(true);
  });
});

describe("an order's page", () => {
  it('returns not_found for an order the ledger does not have', async () => {
    expect(await viewOrder(ports, `${SHOPIFY_SHOP_ID}:404`, { askForClaims: false })).toEqual({
      kind: 'not_found',
      externalOrderId: `${SHOPIFY_SHOP_ID}:404`,
    });
  });

  it('returns a delivered order with its timeline and claims, no suggestions, and no reload', async () => {
    const result = await viewOrder(ports, quietId, { askForClaims: false });
    expect(result).toMatchObject({
      kind: 'found',
      reloading: false,
      suggestions: [],
      disputes: { source: { kind: 'recorded', canAsk: true } },
    });
    if (result.kind !== 'found') return;
    expect(result.timeline.map((t) => t.operation)).toEqual(expect.arrayContaining(['createQuote', 'createShipment']));
  });

  it('puts the call made to list the claims on the timeline it returns', async () => {
    const result = await viewOrder(ports, quietId, { askForClaims: true });
    if (result.kind !== 'found') throw new Error('not found');
    expect(result.disputes?.source).toEqual({ kind: 'service' });
    expect(result.timeline.at(-1)).toMatchObject({ operation: 'listShipmentDisputes', outcome: 'ok' });
  });

  it('returns a held order with the neighbourhoods its address comes closest to, and no claims (it has no shipment)', async () => {
    const result = await viewOrder(ports, heldId, { askForClaims: true });
    expect(result).toMatchObject({ kind: 'found', reloading: false });
    if (result.kind !== 'found') return;
    expect(result.disputes).toBeUndefined();
    expect([...result.suggestions].sort()).toEqual(['Ouakam', 'Yoff']);
  });
});

describe("whether an order's page reloads itself", () => {
  const minute = 60_000;

  it('reloads while the order is between two steps of the pipeline', async () => {
    const held = await record(heldId);
    const now = new Date();
    expect(stillMoving({ ...held, state: 'received' }, undefined, now)).toBe(true);
    expect(stillMoving({ ...held, state: 'dispatching' }, undefined, now)).toBe(true);
  });

  it('reloads a held order for a minute after a replay, while its hold is older than the replay', async () => {
    const held = await record(heldId);
    const holdAt = Date.parse(held.hold!.at);
    expect(stillMoving(held, holdAt + 1_000, new Date(holdAt + 2_000))).toBe(true);
    expect(stillMoving(held, holdAt + 1_000, new Date(holdAt + 1_000 + minute))).toBe(true);
    expect(stillMoving(held, holdAt + 1_000, new Date(holdAt + 1_001 + minute))).toBe(false);
  });

  it('does not reload a held order held anew since the replay, or never replayed', async () => {
    const held = await record(heldId);
    const holdAt = Date.parse(held.hold!.at);
    expect(stillMoving(held, holdAt - 1_000, new Date(holdAt + 1_000))).toBe(false);
    expect(stillMoving(held, undefined, new Date(holdAt + 1_000))).toBe(false);
  });

  it('does not reload a settled order, whatever replay time the page carries', async () => {
    const delivered = await record(quietId);
    expect(stillMoving(delivered, Date.now(), new Date())).toBe(false);
  });
});

describe('the cash page', () => {
  it("counts the delivered orders' cash as collected on their delivery day, and has no reconciliation run to show yet", async () => {
    const delivered = await Promise.all([disputedId, quietId].map(record));
    const report = await cashReport(ports, {
      shops: [{ shopId: SHOPIFY_SHOP_ID, timeZone: 'Africa/Dakar' }],
      since: new Date(Date.now() - 86_400_000),
    });
    const day = report.cod.days.find((d) => d.day === delivered[0]!.stateChangedAt.slice(0, 10));
    expect(day?.collected).toEqual({
      orders: 2,
      xof: delivered.reduce((sum, r) => sum + r.shipment!.orderAmountXof!, 0),
    });
    expect(report.cod.totals.notDispatched.orders).toBe(1);
    expect(report).toMatchObject({ reconciliation: undefined, reconciliationWired: true });
  });

  it('reads the orders of every shop when given them all, and none when given no shop', async () => {
    const zone = (shopId: string) => ({ shopId, timeZone: 'Africa/Dakar' });
    const since = new Date(0);
    const read = async (shops: string[]) => (await cashReport(ports, { shops: shops.map(zone), since })).cod.ordersRead;
    const each = await Promise.all(ports.shops.all().map((shop) => read([shop.id])));
    expect(each[0]).toBeGreaterThan(0);
    expect(await read(ports.shops.all().map((shop) => shop.id))).toBe(each.reduce((a, b) => a + b, 0));
    expect(await read([])).toBe(0);
  });
});
