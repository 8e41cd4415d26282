/**
 * Redis SIGKILLed in the middle of a burst of orders and again while deliveries are being written back,
 * then restarted on the same port from its append-only file (AOF on, as in production). The web process
 * answers 503 while it is down and the platform delivers again; the worker reconnects. Nothing
 * acknowledged is lost, nothing is shipped or written twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_COURIER_STEP_MS } from '@relais/emulators/dispatch';
import { startOwnedRedis, type OwnedRedis } from './support/processes.js';
import { expectNoAnomaly, scale, SCENARIO_TIMEOUT_MS, startChaosStack, type ChaosStack } from './support/stack.js';

let redis: OwnedRedis;
let stack: ChaosStack;

beforeAll(async () => {
  redis = await startOwnedRedis({ args: ['--appendonly', 'yes', '--maxmemory-policy', 'noeviction'] });
  stack = await startChaosStack({ redis });
});

afterAll(async () => {
  await stack?.stop();
});

const ORDERS = scale(10, 50);
const DOWN_MS = 1_000;

async function crashAndRestart(): Promise<void> {
  await redis.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, DOWN_MS));
  await redis.start();
}

describe('Redis restarted from its AOF', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  it(`SIGKILLed mid-burst of ${ORDERS} orders and again mid-delivery: every acknowledged order ships once and ends right in its shop`, async () => {
    const orders = await stack.placeMany(ORDERS);
    const deliveries = Promise.all(
      orders.map(async (order, i) => {
        await new Promise((r) => setTimeout(r, i * 40));
        return stack.send(order, { timeoutMs: 90_000 });
      }),
    );
    await new Promise((r) => setTimeout(r, (ORDERS * 40) / 2));
    await crashAndRestart();
    const attempts = (await deliveries).flat();
    expect(attempts.some((a) => a.status !== 200)).toBe(true); // the outage was seen by the platform
    await stack.waitDispatched(orders, { timeoutMs: 60_000 });

    // Second crash while the courier's webhooks are being turned into shop writes.
    await stack.relais.emulator.advance(DEFAULT_COURIER_STEP_MS);
    await stack.relais.emulator.advance(DEFAULT_COURIER_STEP_MS);
    await crashAndRestart();
    await stack.driveCourier();
    const { report } = await stack.finish({ timeoutMs: 30_000 });
    expectNoAnomaly(report);
  });
});
