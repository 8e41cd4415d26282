/**
 * An order to ship is shipped by the job of the webhook that recorded it (src/orders/intake/shop-event.ts), under the
 * lock that job already holds; the dispatch queue takes over only what that attempt could not finish.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopifyOrderPayload } from '../support/factories.js';
import { startTestRelais, type TestRelais } from '../support/relais.js';
import { postShopify, shipmentsFor, shopifyExternalId, waitForIdle, waitForState } from './helpers.js';

let relais: TestRelais;
beforeAll(async () => {
  relais = await startTestRelais();
});
afterAll(async () => {
  await relais?.stop();
});

async function dispatchJobsFor(externalOrderId: string): Promise<number> {
  const jobs = await relais.web.runtime.queues.dispatch.getJobs([
    'waiting',
    'active',
    'delayed',
    'completed',
    'failed',
  ]);
  return jobs.filter((job) => job.data.externalOrderId === externalOrderId).length;
}

describe('an order is shipped by the job of the webhook that recorded it', () => {
  it('a new cash-on-delivery order ends ready with one shipment and no dispatch job queued for it', async () => {
    const payload = shopifyOrderPayload();
    expect((await postShopify(relais, 'orders/create', payload)).status).toBe(200);
    const extId = shopifyExternalId(payload.id);
    const record = await waitForState(relais, extId, ['ready', 'held']);
    expect(record.state).toBe('ready');
    await waitForIdle(relais);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
    expect(shipmentsFor(relais, extId)[0]!.status).toBe('READY');
    expect(await dispatchJobsFor(extId)).toBe(0);
    const timeline = await relais.worker.runtime.ledger.timeline(extId);
    const calls = timeline.filter((entry) => entry.system === 'dispatch').map((entry) => entry.operation);
    expect(calls).toEqual(expect.arrayContaining(['createQuote', 'createShipment', 'markReady']));
  });

  it('a first attempt the service answers 503 goes to the dispatch queue, which ships the order once after its backoff', async () => {
    relais.emulator.faults.add({ operation: 'createShipment', times: 1, fault: { kind: 'status', status: 503 } });
    const payload = shopifyOrderPayload();
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    const record = await waitForState(relais, extId, ['ready', 'held'], 20_000);
    expect(record.state).toBe('ready');
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
    expect(await dispatchJobsFor(extId)).toBe(1);
    const outcomes = (await relais.worker.runtime.ledger.timeline(extId))
      .filter((entry) => entry.operation === 'createShipment')
      .map((entry) => entry.outcome);
    expect(outcomes[0]).not.toBe('ok');
    expect(outcomes.at(-1)).toBe('ok');
  });

  it('an order left dispatching by an attempt that died with its job is resumed when its webhook comes again, and ships once', async () => {
    const payload = shopifyOrderPayload();
    const extId = shopifyExternalId(payload.id);
    // What a worker killed mid-attempt leaves behind: the order recorded and moved to dispatching, no job for it.
    await relais.worker.runtime.ledger.recordEvent({
      meta: {
        externalOrderId: extId,
        shopId: extId.split(':')[0]!,
        platform: 'shopify',
        orderId: String(payload.id),
        orderName: payload.name,
      },
      payload,
      now: new Date(),
    });
    expect(await relais.worker.runtime.ledger.setState(extId, 'dispatching', new Date())).toBe(true);

    await postShopify(relais, 'orders/updated', payload);
    const record = await waitForState(relais, extId, ['ready', 'held'], 20_000);
    expect(record.state).toBe('ready');
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
    expect(await dispatchJobsFor(extId)).toBe(1);
  });
});
