/**
 * The recorder and the checker on a real run: Relais ships orders end to end, then the test breaks the
 * outcome the way a bug would (a second shipment, an acknowledged event dropped, a delivery step written
 * back, a returned order marked paid). The checker must name each broken order, and only those.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOPIFY_DOMAIN } from '../support/relais.js';
import { describeReport } from './support/checker.js';
import { SCENARIO_TIMEOUT_MS, startChaosStack, type ChaosStack } from './support/stack.js';

let stack: ChaosStack;
beforeAll(async () => {
  // No worker yet: one acknowledged event is removed from the queue before any worker sees it.
  stack = await startChaosStack({ inProcessWorker: false });
});
afterAll(async () => {
  await stack?.stop();
});

async function dispatchApi(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${stack.relais.emulator.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Api-Key': stack.relais.secrets.dispatchApiKey },
    body: JSON.stringify(body),
  });
  expect(response.status).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
}

describe('the history checker on a real run', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  it('names the order shipped twice, the acknowledged order lost, the step moved backwards and the returned order marked paid, and never the order whose shipping a code made free', async () => {
    const lost = await stack.placeWoo();
    const [lostAttempt] = await stack.send(lost);
    expect(lostAttempt!.status).toBe(200);
    const [job] = (await stack.queues.shopEvents.getWaiting()).filter(
      (j) => (j.data.payload as { id?: unknown }).id === lost.shopOrderId,
    );
    await job!.remove(); // a queue that forgot an acknowledged event

    const twice = stack.placeShopify();
    const backwards = stack.placeShopify();
    const paidAfterReturn = stack.placeShopify({ fail: true });
    const fine = await stack.placeWoo();
    const freeShipping = stack.placeShopify({ freeShipping: true });
    const shipped = [twice, backwards, paidAfterReturn, fine, freeShipping];
    await Promise.all(shipped.map((o) => stack.send(o)));
    await stack.relais.startWorker();
    await stack.waitDispatched(shipped);
    await stack.driveCourier();
    await stack.settle();

    // A second shipment for one order, created and marked ready as a retry without the lookup would.
    const quote = await dispatchApi('/v1/quotes', {
      pickup: { city: 'Plateau', address: '12 avenue Léopold Sédar Senghor' },
      dropoff: { city: 'Sacré-Cœur 3', address: 'Villa 12' },
      parcel: { weight_kg: 1 },
      payment_mode: 'cash_on_delivery',
    });
    const second = await dispatchApi('/v1/shipments', {
      quote_id: quote.quote_id,
      external_order_id: twice.externalOrderId,
      orderAmountXof: 15000,
    });
    await dispatchApi(`/v1/shipments/${String(second.shipment_id)}/mark-ready`, { by: 'a buggy retry' });
    // The ledger's step written back to an earlier one, and a returned cash-on-delivery order marked paid.
    const record = await stack.ledger.get(backwards.externalOrderId);
    await stack.ledger.save(backwards.externalOrderId, 'delivery', { ...record!.delivery!, step: 'in_transit' });
    await new Promise((r) => setTimeout(r, 300)); // a sampling round sees it
    stack.shopify.markPaid(SHOPIFY_DOMAIN, paidAfterReturn.shopOrderId);

    const { report } = await stack.finish({ timeoutMs: 0 });
    const summary = describeReport(report);
    expect(
      report.lost.map((a) => a.externalOrderId),
      summary,
    ).toEqual([lost.externalOrderId]);
    expect([...new Set(report.duplicated.map((a) => a.externalOrderId))], summary).toEqual([twice.externalOrderId]);
    expect([...new Set(report.regressed.map((a) => a.externalOrderId))].sort(), summary).toEqual(
      [backwards.externalOrderId, paidAfterReturn.externalOrderId].sort(),
    );
    expect(report.regressed.find((a) => a.externalOrderId === paidAfterReturn.externalOrderId)?.detail).toMatch(
      /ended RETURNED yet .* was marked paid/,
    );
    expect(
      report.stale.map((a) => a.externalOrderId),
      summary,
    ).toEqual([backwards.externalOrderId]);
    const named = [...report.lost, ...report.duplicated, ...report.regressed, ...report.stale].map(
      (a) => a.externalOrderId,
    );
    expect(named).not.toContain(fine.externalOrderId);
    // Goods of 15 000 F with their 2 000 F shipping made free: the shipment carries 15 000 F, which is what is owed.
    expect(report.misbilled, summary).toEqual([]);
    expect(named).not.toContain(freeShipping.externalOrderId);
  });
});
