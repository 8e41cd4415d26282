/**
 * Crashes and lost answers between the dispatch calls never lose an order nor double a shipment.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { shopifyOrderPayload } from '../support/factories.js';
import { SHOPIFY_SHOP_ID, startTestRelais, waitFor, type TestRelais } from '../support/relais.js';
import { spawnWorker } from '../support/worker-process.js';
import { syncDelivery, type DeliveryDeps } from '../../src/orders/delivery/sync-delivery.js';
import { postShopify, shipmentsFor, shopifyExternalId, waitForIdle, waitForState } from './helpers.js';

describe('with the worker in process', () => {
  let relais: TestRelais;
  beforeAll(async () => {
    relais = await startTestRelais({ quoteTtlMs: 5 * 60_000 });
  });
  afterAll(async () => {
    await relais?.stop();
  });
  afterEach(() => relais.emulator.faults.clear());

  it('a response dropped after createShipment committed still leaves exactly one shipment, marked ready', async () => {
    relais.emulator.faults.add({ operation: 'createShipment', times: 1, fault: { kind: 'commit_then_drop' } });
    const payload = shopifyOrderPayload();
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    await waitForState(relais, extId, ['ready'], 20_000);
    await waitForIdle(relais);
    const shipments = shipmentsFor(relais, extId);
    expect(shipments).toHaveLength(1);
    expect(shipments[0]!.status).toBe('READY');
    const timeline = await relais.worker.runtime.ledger.timeline(extId);
    expect(timeline.some((e) => e.operation === 'createShipment' && e.outcome !== 'ok')).toBe(true);
  });

  it('a markReady whose answer was dropped after the service committed it is sent again harmlessly: the order ends ready, one shipment, created once', async () => {
    relais.emulator.faults.add({ operation: 'markReady', times: 1, fault: { kind: 'commit_then_drop' } });
    const payload = shopifyOrderPayload();
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    await waitForState(relais, extId, ['ready'], 20_000);
    await waitForIdle(relais);
    expect(shipmentsFor(relais, extId).map((s) => s.status)).toEqual(['READY']);
    const steps = (await relais.worker.runtime.ledger.timeline(extId))
      .filter((e) => e.system === 'dispatch')
      .map((e) => [e.operation, e.outcome === 'ok' ? 'ok' : 'failed']);
    // markReady only moves a created shipment to ready: the second call finds it ready and changes nothing.
    expect(steps.filter(([op]) => op === 'markReady')).toEqual([
      ['markReady', 'failed'],
      ['markReady', 'ok'],
    ]);
    expect(steps.filter(([op]) => op === 'createShipment')).toEqual([['createShipment', 'ok']]);
  });

  it('a cancelShipment whose answer was dropped after the service committed it ends cancelled, the order neither stuck nor marked refused', async () => {
    const payload = shopifyOrderPayload();
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    await waitForState(relais, extId, ['ready'], 20_000);
    relais.emulator.faults.add({ operation: 'cancelShipment', times: 1, fault: { kind: 'commit_then_drop' } });
    await postShopify(relais, 'orders/cancelled', {
      ...payload,
      cancelled_at: new Date().toISOString(),
      updated_at: new Date(Date.now() + 60_000).toISOString(),
    });
    expect((await waitForState(relais, extId, ['cancelled', 'cancel_refused'], 20_000)).state).toBe('cancelled');
    expect(shipmentsFor(relais, extId).map((s) => s.status)).toEqual(['CANCELLED']);
  });

  it('a lookup answered with a 404 that does not say "no such shipment" is asked again, and the existing shipment adopted, never a second one created', async () => {
    const payload = shopifyOrderPayload();
    const extId = shopifyExternalId(payload.id);
    // The first createShipment is made and its answer lost: the shipment exists, Relais has no record of it, only
    // that a createShipment was sent. The retry's lookup then gets a 404 that does not say "no such shipment".
    relais.emulator.faults.add({ operation: 'createShipment', times: 1, fault: { kind: 'commit_then_drop' } });
    relais.emulator.faults.add({
      operation: 'getShipmentByExternalOrder',
      times: 1,
      fault: { kind: 'status', status: 404 },
    });

    await postShopify(relais, 'orders/create', payload);
    await waitForState(relais, extId, ['ready', 'held'], 20_000);
    await waitForIdle(relais);
    expect(shipmentsFor(relais, extId).map((s) => s.status)).toEqual(['READY']);
    const creates = (await relais.worker.runtime.ledger.timeline(extId)).filter(
      (e) => e.operation === 'createShipment',
    );
    expect(creates).toHaveLength(1);
    const lookups = (await relais.worker.runtime.ledger.timeline(extId))
      .filter((e) => e.operation === 'getShipmentByExternalOrder')
      .map((e) => e.outcome);
    expect(lookups).toEqual(['INVALID_STATE', 'ok']);
  });

  it('a delivery sync by external order id whose lookup gets a 404 that does not say "no such shipment" fails to be retried, instead of dropping the update', async () => {
    relais.emulator.faults.add({
      operation: 'getShipmentByExternalOrder',
      times: 1,
      fault: { kind: 'status', status: 404 },
    });
    const deps: DeliveryDeps = {
      ledger: relais.worker.runtime.ledger,
      shops: relais.shops,
      deliveryFor: relais.worker.runtime.deliveryFor,
      writerFor: () => undefined,
      redis: relais.redis.client(),
      prefix: relais.prefix,
      now: () => new Date(),
      logger: relais.logger,
    };
    const job = { shopId: SHOPIFY_SHOP_ID, externalOrderId: shopifyExternalId(987_654), trigger: 'test' };
    await expect(syncDelivery(job, deps)).rejects.toMatchObject({
      name: 'DispatchError',
      status: 404,
      retryable: true,
    });
  });

  it('a job whose order lock is taken over while it waits for a quote makes no side-effecting call after losing it, and the order still ships once', async () => {
    relais.emulator.faults.add({ operation: 'createQuote', times: 1, fault: { kind: 'latency', ms: 1_000 } });
    const payload = shopifyOrderPayload();
    const extId = shopifyExternalId(payload.id);
    const lockKey = `${relais.prefix}:lock:order:${extId}`;
    const redis = relais.redis.client();
    const earlierCalls = relais.emulator.calls().length;
    await postShopify(relais, 'orders/create', payload);
    // The job is waiting for its quote: another holder takes the order's lock (the key, with its own token).
    await waitFor(
      async () =>
        relais.emulator
          .calls()
          .slice(earlierCalls)
          .some((c) => c.operation === 'createQuote' && c.fault === 'latency') || undefined,
      { timeoutMs: 10_000, what: 'the slow createQuote' },
    );
    expect(await redis.exists(lockKey)).toBe(1);
    await redis.set(lockKey, 'another-worker', 'PX', 60_000);

    await waitFor(
      async () => (await relais.worker.runtime.ledger.timeline(extId)).find((e) => e.outcome === 'lock_lost'),
      { timeoutMs: 15_000, what: 'the job to stop on the lost lock' },
    );
    const sideEffects = relais.emulator
      .calls()
      .slice(earlierCalls)
      .filter((c) => ['createShipment', 'markReady', 'cancelShipment'].includes(c.operation));
    expect(sideEffects).toEqual([]);
    expect(await redis.get(lockKey)).toBe('another-worker');

    // The other holder finishes: the job's next attempt takes the lock and ships the order, once.
    await redis.del(lockKey);
    await waitForState(relais, extId, ['ready'], 20_000);
    await waitForIdle(relais);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
  });

  it('a quote that expires between steps is replaced by a fresh one before the shipment is created', async () => {
    // The first createShipment fails with a retryable 503; while the job waits to retry, the service's
    // clock passes the quote's expiry, so the saved quote is stale when the retry comes.
    relais.emulator.faults.add({ operation: 'createShipment', times: 1, fault: { kind: 'status', status: 503 } });
    const payload = shopifyOrderPayload();
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    await waitFor(
      async () => relais.emulator.calls().some((c) => c.operation === 'createShipment' && c.status === 503),
      { what: 'the 503' },
    );
    await relais.emulator.advance(10 * 60_000);
    const record = await waitForState(relais, extId, ['ready'], 20_000);
    const quotes = relais.emulator.calls().filter((c) => c.operation === 'createQuote');
    expect(quotes.length).toBeGreaterThanOrEqual(2);
    const shipments = shipmentsFor(relais, extId);
    expect(shipments).toHaveLength(1);
    expect(shipments[0]!.quote_id).toBe(record.quote?.quoteId);
  });

  it('a customer who corrects the address between a quote and the shipment gets a new quote for the new neighbourhood', async () => {
    // The first createShipment fails with a retryable 503; before the retry, the customer's corrected address
    // arrives (orders/updated). The saved quote priced the old neighbourhood: it must not be reused.
    relais.emulator.faults.add({ operation: 'createShipment', times: 1, fault: { kind: 'status', status: 503 } });
    const payload = shopifyOrderPayload({
      shipping_address: { address1: 'Villa 12, Sacré Coeur 3', city: 'Dakar', latitude: null, longitude: null },
    });
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    await waitFor(
      async () => relais.emulator.calls().some((c) => c.operation === 'createShipment' && c.status === 503),
      { what: 'the 503' },
    );
    const firstQuote = await waitFor(async () => (await relais.worker.runtime.ledger.get(extId))?.quote, {
      what: 'the first quote saved',
    });
    expect(firstQuote.basis).toContain('|Sacré-Cœur 3|');

    const corrected = {
      ...payload,
      updated_at: new Date(Date.now() + 1_000).toISOString(),
      shipping_address: { ...(payload.shipping_address as Record<string, unknown>), address1: 'Villa 40, Mermoz' },
    };
    await postShopify(relais, 'orders/updated', corrected);
    const record = await waitForState(relais, extId, ['ready', 'held'], 20_000);
    expect(record.hold).toBeUndefined();
    expect(record.neighbourhood?.name).toBe('Mermoz');
    expect(record.quote?.quoteId).not.toBe(firstQuote?.quoteId);
    expect(record.quote?.basis).toContain('|Mermoz|');
    const shipments = shipmentsFor(relais, extId);
    expect(shipments).toHaveLength(1);
    expect(shipments[0]!.quote_id).toBe(record.quote?.quoteId);
  });

  it('a 429 with Retry-After 1 s: the next call starts at least 1 s after the refusal, and the order ships once', async () => {
    relais.emulator.faults.add({
      operation: 'createQuote',
      times: 1,
      fault: { kind: 'rate_limit', retryAfterSeconds: 1 },
    });
    const payload = shopifyOrderPayload();
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    await waitForState(relais, extId, ['ready'], 20_000);
    expect(relais.emulator.calls().some((c) => c.operation === 'createQuote' && c.status === 429)).toBe(true);
    // The order's timeline has each call's end time and duration. Calls of the refused attempt started with it
    // (lookup and quotes run side by side); the retry's first call started no sooner than 1 s (the Retry-After)
    // after the refusal.
    const calls = (await relais.worker.runtime.ledger.timeline(extId)).filter((e) => e.system === 'dispatch');
    const refused = calls.find((e) => e.operation === 'createQuote' && e.outcome !== 'ok');
    expect(refused).toBeDefined();
    const refusedEnd = Date.parse(refused!.at);
    const retryStart = Math.min(
      ...calls.map((e) => Date.parse(e.at) - (e.ms ?? 0)).filter((start) => start > refusedEnd),
    );
    expect(retryStart - refusedEnd).toBeGreaterThanOrEqual(1_000);
    expect(shipmentsFor(relais, extId)).toHaveLength(1);
  });
});

describe('with the worker as a separate process', () => {
  let relais: TestRelais;
  beforeAll(async () => {
    relais = await startTestRelais({ inProcessWorker: false });
  });
  afterAll(async () => {
    await relais?.stop();
  });

  it('a worker killed after createShipment and before markReady: the restarted worker marks the same shipment ready', async () => {
    // markReady hangs long enough for the kill to land between the two calls.
    relais.emulator.faults.add({ operation: 'markReady', times: 1, fault: { kind: 'timeout' } });
    const first = await spawnWorker(relais, { lockMs: 2_000 });
    const payload = shopifyOrderPayload();
    await postShopify(relais, 'orders/create', payload);
    const extId = shopifyExternalId(payload.id);
    await waitFor(async () => (await relais.web.runtime.ledger.get(extId))?.shipment, {
      what: 'the shipment to be saved',
      timeoutMs: 20_000,
    });
    await waitFor(async () => relais.emulator.calls().some((c) => c.operation === 'markReady'), {
      what: 'markReady to be sent',
      timeoutMs: 20_000,
    });
    await first.kill('SIGKILL');
    expect(shipmentsFor(relais, extId)[0]!.status).toBe('CREATED');
    relais.emulator.faults.clear();

    const second = await spawnWorker(relais, { lockMs: 2_000 });
    try {
      const record = await waitFor(
        async () => {
          const r = await relais.web.runtime.ledger.get(extId);
          return r?.state === 'ready' ? r : undefined;
        },
        { what: 'the order to be ready after restart', timeoutMs: 30_000 },
      );
      const shipments = shipmentsFor(relais, extId);
      expect(shipments).toHaveLength(1);
      expect(shipments[0]!.status).toBe('READY');
      expect(record.shipment?.shipmentId).toBe(shipments[0]!.shipment_id);
    } finally {
      await second.kill('SIGTERM');
    }
  }, 60_000);
});

describe('per-shop pacing of dispatch calls', () => {
  let relais: TestRelais;
  beforeAll(async () => {
    relais = await startTestRelais({ policy: { dispatchCallsPerSecond: 2 } });
  });
  afterAll(async () => {
    await relais?.stop();
  });

  it('a shop limited to 2 calls per second: at most 2 per second over the burst, no calendar second with more than 3 (a start is timed just after its token, which can be in the next second), and every order still ships', async () => {
    const payloads = [shopifyOrderPayload(), shopifyOrderPayload(), shopifyOrderPayload()];
    await Promise.all(payloads.map((p) => postShopify(relais, 'orders/create', p)));
    const ids = payloads.map((p) => shopifyExternalId(p.id));
    for (const id of ids) await waitForState(relais, id, ['ready'], 30_000);
    const calls = (await Promise.all(ids.map((id) => relais.worker.runtime.ledger.timeline(id))))
      .flat()
      .filter((e) => e.system === 'dispatch');
    expect(calls.length).toBeGreaterThanOrEqual(9);
    const perSecond = new Map<number, number>();
    // A call's timeline entry is written when it ends; it started (took its token) at most `ms` earlier.
    for (const c of calls) {
      const second = Math.floor((Date.parse(c.at) - (c.ms ?? 0)) / 1000);
      perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
    }
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(2 + 1);
    // Over the whole burst the pacing holds exactly: n calls need at least ceil(n / 2) distinct seconds.
    expect(perSecond.size).toBeGreaterThanOrEqual(Math.ceil(calls.length / 2));
    for (const id of ids) expect(shipmentsFor(relais, id)).toHaveLength(1);
  }, 60_000);
});
