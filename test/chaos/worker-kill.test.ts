/**
 * The worker (a real child process, lockMs 2 s) killed with SIGKILL at every step of an order's life, and
 * frozen with SIGSTOP past its lock while another worker takes over. The emulators hold the worker at the
 * chosen point: a fault on the NEXT call (a timeout: the worker has finished and recorded the step before
 * it), or latency on the step's own call (the service applies it after the worker died: done, never heard).
 * A new worker then takes over. Every order still ends with one shipment, marked ready, written once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultRule, OperationName } from '@relais/emulators/dispatch';
import { SHOPIFY_DOMAIN, WOO_SHOP_ID, waitFor } from '../support/relais.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';
import {
  expectNoAnomaly,
  scale,
  SCENARIO_TIMEOUT_MS,
  startChaosStack,
  type ChaosOrder,
  type ChaosStack,
} from './support/stack.js';

const LOCK_MS = 2_000;
/** Long enough for the kill to land first; short enough to be applied before the next worker starts. */
const APPLIED_AFTER_MS = 1_500;
const ROUNDS = scale(1, 3);

let stack: ChaosStack;
let worker: WorkerProcess;
const extra: WorkerProcess[] = [];

beforeAll(async () => {
  stack = await startChaosStack({ inProcessWorker: false });
  worker = await spawnWorker(stack.relais, { lockMs: LOCK_MS });
});

afterAll(async () => {
  for (const w of [worker, ...extra]) await w?.kill('SIGKILL');
  await stack?.stop();
});

/** Calls of `operation` the dispatch emulator answered with an injected fault so far. */
const faulted = (operation: OperationName) =>
  stack.relais.emulator.calls().filter((c) => c.operation === operation && c.fault !== undefined).length;

/** Kills the worker once `reached` holds, waits until held calls have landed, and starts a new one. */
async function killWhen(reached: () => boolean, what: string): Promise<void> {
  await waitFor(async () => reached(), { timeoutMs: 20_000, what });
  await worker.kill('SIGKILL');
  stack.relais.emulator.faults.clear();
  stack.shopify.faults.clear();
  stack.woo.faults.clear();
  await new Promise((r) => setTimeout(r, APPLIED_AFTER_MS + 200));
  worker = await spawnWorker(stack.relais, { lockMs: LOCK_MS });
}

/** This scenario's own outcome: each order has exactly one shipment at the service, marked ready, and Relais recorded it. */
async function expectShippedOnce(orders: ChaosOrder[]): Promise<void> {
  for (const order of orders) {
    const shipments = stack.relais.emulator.shipments().filter((s) => s.external_order_id === order.externalOrderId);
    expect(
      shipments.map((s) => s.status === 'CREATED'),
      `${order.externalOrderId}: one shipment, not left unready`,
    ).toEqual([false]);
    const record = await stack.relais.web.runtime.ledger.get(order.externalOrderId);
    expect(record?.shipment?.shipmentId, order.externalOrderId).toBe(shipments[0]!.shipment_id);
    expect(record?.shipment?.markedReadyAt, `${order.externalOrderId}: markReady recorded`).toBeDefined();
  }
}

/** The tracking write-back of this scenario's orders landed once: one fulfillment (Shopify), one customer note (WooCommerce). */
async function expectTrackingWrittenOnce(orders: ChaosOrder[]): Promise<void> {
  await stack.settle();
  for (const order of orders) {
    if (order.platform === 'shopify') {
      expect(
        stack.shopify.orderSnapshot(SHOPIFY_DOMAIN, order.shopOrderId).fulfillments,
        order.externalOrderId,
      ).toHaveLength(1);
    } else {
      expect(
        stack.woo.orderSnapshot(WOO_SHOP_ID, order.shopOrderId).notes.filter((n) => n.customer_note),
        order.externalOrderId,
      ).toHaveLength(1);
    }
  }
}

async function placeAndSend(count: number): Promise<ChaosOrder[]> {
  const orders = await stack.placeMany(count);
  await Promise.all(orders.map((o) => stack.send(o)));
  return orders;
}

describe('the worker killed with SIGKILL', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  it('after createQuote, after createShipment and after markReady (the next call hangs): the new worker finishes each order once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      // Three orders race through the pipeline; each rule holds the first order to reach its call.
      const holds: OperationName[] = ['createShipment', 'markReady', 'getShipment'];
      const before = holds.map(faulted);
      for (const operation of holds)
        stack.relais.emulator.faults.add({ operation, times: 1, fault: { kind: 'timeout' } });
      const orders = await placeAndSend(3);
      await killWhen(() => holds.every((op, i) => faulted(op) > before[i]!), 'an order held after each step');
      await stack.waitDispatched(orders, { timeoutMs: 45_000 });
      await expectShippedOnce(orders);
    }
  });

  it('after createShipment and markReady were applied but their answers never heard: the new worker adopts, never creates twice', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const holds: OperationName[] = ['createShipment', 'markReady'];
      const before = holds.map(faulted);
      for (const operation of holds) {
        const rule: FaultRule = { operation, times: 1, fault: { kind: 'latency', ms: APPLIED_AFTER_MS } };
        stack.relais.emulator.faults.add(rule);
      }
      const orders = await placeAndSend(2);
      await killWhen(() => holds.every((op, i) => faulted(op) > before[i]!), 'createShipment and markReady in flight');
      await stack.waitDispatched(orders, { timeoutMs: 45_000 });
      await expectShippedOnce(orders);
    }
  });

  it('after a shop write-back landed unrecorded (Shopify fulfillment, WooCommerce tracking note): nothing is written twice', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const shopifyFault = stack.shopify.faults.add({
        kind: 'delay',
        operation: 'fulfillmentCreate',
        delayMs: APPLIED_AFTER_MS,
      });
      stack.woo.faults.add({
        kind: 'latency',
        ms: APPLIED_AFTER_MS,
        method: 'POST',
        route: /\/orders\/\d+\/notes$/,
        times: 1,
      });
      const notesBefore = stack.woo.calls().filter((c) => c.method === 'POST' && c.route.endsWith('/notes')).length;
      const orders = await placeAndSend(2);
      await killWhen(
        () =>
          !stack.shopify.faults.pending().some((f) => f.id === shopifyFault) &&
          stack.woo.calls().filter((c) => c.method === 'POST' && c.route.endsWith('/notes')).length > notesBefore,
        'the fulfillment and the tracking note in flight',
      );
      await stack.waitDispatched(orders, { timeoutMs: 45_000 });
      await expectShippedOnce(orders);
      await expectTrackingWrittenOnce(orders);
    }
  });

  it('after the delivered step was written, during the payment write: the order is paid once', async () => {
    await stack.settle();
    // Every order so far is ready: bring them all to the doorstep, then deliver with the payment writes held.
    for (let stage = 0; stage < 6; stage++) {
      const moving = stack.relais.emulator
        .shipments()
        .filter((s) => !['DELIVERED', 'RETURNED', 'OUT_FOR_DELIVERY'].includes(s.status));
      if (moving.length === 0) break;
      await stack.relais.emulator.advance(60_000);
      await stack.settle();
    }
    const shopifyFault = stack.shopify.faults.add({
      kind: 'delay',
      operation: 'orderMarkAsPaid',
      delayMs: APPLIED_AFTER_MS,
    });
    stack.woo.faults.add({ kind: 'latency', ms: APPLIED_AFTER_MS, method: 'PUT', route: /\/orders\/\d+$/, times: 1 });
    const putsBefore = stack.woo.calls().filter((c) => c.method === 'PUT').length;
    await stack.relais.emulator.advance(60_000);
    await killWhen(
      () =>
        !stack.shopify.faults.pending().some((f) => f.id === shopifyFault) &&
        stack.woo.calls().filter((c) => c.method === 'PUT').length > putsBefore,
      'a payment write in flight',
    );
    await stack.driveCourier();
    const { report } = await stack.finish();
    expectNoAnomaly(report);
  });
});

describe('the worker frozen with SIGSTOP', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  for (const [frozenMs, past] of [
    [5_000, 'its job lock'],
    [13_000, 'its job lock and its order lease'],
  ] as const) {
    it(`past ${past} (${frozenMs / 1000} s) while its createShipment calls are in flight: a second worker takes over, the first resumes, no duplicate`, async () => {
      stack.relais.emulator.faults.add({
        operation: 'createShipment',
        times: 2,
        fault: { kind: 'latency', ms: 1_000 },
      });
      const before = faulted('createShipment');
      const orders = await placeAndSend(2);
      await waitFor(async () => faulted('createShipment') >= before + 2, {
        what: 'createShipment in flight',
        timeoutMs: 20_000,
      });
      worker.child.kill('SIGSTOP');
      const frozenAt = Date.now();
      const second = await spawnWorker(stack.relais, { lockMs: LOCK_MS });
      extra.push(second);
      await new Promise((r) => setTimeout(r, Math.max(0, frozenMs - (Date.now() - frozenAt))));
      worker.child.kill('SIGCONT');
      await stack.waitDispatched(orders, { timeoutMs: 45_000 });
      await expectShippedOnce(orders);
      await stack.driveCourier();
      const { report } = await stack.finish();
      expectNoAnomaly(report);
      // One worker is enough from here on.
      await second.kill('SIGTERM');
    });
  }
});
