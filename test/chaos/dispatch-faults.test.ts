/**
 * The dispatch service misbehaving on every call Relais makes (the emulator's fault table): 5xx, 429 with
 * Retry-After, timeouts, connections reset, and the worst one, success with the answer dropped. Every
 * order still ends with exactly one shipment, marked ready, delivered, and written once into its shop.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FaultKind, OperationName } from '@relais/emulators/dispatch';
import { expectNoAnomaly, scale, SCENARIO_TIMEOUT_MS, startChaosStack, type ChaosStack } from './support/stack.js';

let stack: ChaosStack;
beforeAll(async () => {
  stack = await startChaosStack();
});
afterAll(async () => {
  await stack?.stop();
});
afterEach(() => stack.relais.emulator.faults.clear());

const ORDERS = scale(4, 16);
/** Every call of the pipeline and of the delivery sync. */
const OPERATIONS: OperationName[] = [
  'getShipmentByExternalOrder',
  'createQuote',
  'createShipment',
  'markReady',
  'getShipment',
];

const FAULTS: [string, FaultKind][] = [
  ['5xx', { kind: 'status', status: 503 }],
  ['429 with Retry-After', { kind: 'rate_limit', retryAfterSeconds: 1 }],
  ['timeouts', { kind: 'timeout' }],
  ['connection resets', { kind: 'reset' }],
  ['success with the answer dropped', { kind: 'commit_then_drop' }],
];

describe('dispatch faults', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  for (const [name, fault] of FAULTS) {
    it(`${name} on every dispatch call: ${ORDERS} orders each shipped once, delivered and written once`, async () => {
      // Each call type fails for the first orders that reach it, as many times as there are orders.
      const hits = () =>
        OPERATIONS.map(
          (op) => stack.relais.emulator.calls().filter((c) => c.operation === op && c.fault === fault.kind).length,
        );
      const before = hits();
      for (const operation of OPERATIONS)
        stack.relais.emulator.faults.add({ operation, times: Math.ceil(ORDERS / 2), fault });
      const orders = await stack.placeMany(ORDERS);
      await Promise.all(orders.map((o) => stack.send(o)));
      await stack.waitDispatched(orders, { timeoutMs: 60_000 });
      await stack.driveCourier();
      const { report } = await stack.finish();
      expectNoAnomaly(report);
      // Not a vacuous pass: every call type did fail.
      expect(hits().map((n, i) => n > before[i]!)).toEqual(OPERATIONS.map(() => true));
    });
  }
});
