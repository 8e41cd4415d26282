/**
 * Redis unreachable for a while through the fault proxy (the web process and the worker both reach it
 * through the proxy): first a blackhole (packets vanish), then refused connections, then back. The web
 * process answers 503 with Retry-After instead of 200, the platform delivers again and is accepted once
 * Redis is back; delivery webhooks refused meanwhile are made up by the polling fallback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_COURIER_STEP_MS } from '@relais/emulators/dispatch';
import { startOwnedRedis, type OwnedRedis } from './support/processes.js';
import { expectNoAnomaly, scale, SCENARIO_TIMEOUT_MS, startChaosStack, type ChaosStack } from './support/stack.js';
import { startFaultProxy, type FaultProxy } from './support/tcp-proxy.js';

let redis: OwnedRedis;
let proxy: FaultProxy;
let stack: ChaosStack;

beforeAll(async () => {
  redis = await startOwnedRedis();
  proxy = await startFaultProxy({ targetPort: redis.port });
  stack = await startChaosStack({ redis, redisUrl: proxy.url() });
});

afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
});

const ORDERS = scale(8, 40);
const BLACKHOLE_MS = scale(3_000, 8_000);

async function outage(): Promise<void> {
  proxy.set({ kind: 'blackhole' });
  await new Promise((r) => setTimeout(r, BLACKHOLE_MS));
  proxy.set({ kind: 'reset' });
  await new Promise((r) => setTimeout(r, 1_000));
  proxy.set({ kind: 'pass' });
}

describe('Redis unreachable for a while', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  it(`the web answers 503 during the outage, the platform's retries of ${ORDERS} orders are accepted after it, each ships once`, async () => {
    const orders = await stack.placeMany(ORDERS);
    const before = orders.slice(0, ORDERS / 2);
    const during = orders.slice(ORDERS / 2);
    await Promise.all(before.map((o) => stack.send(o)));

    const down = outage();
    await new Promise((r) => setTimeout(r, 200));
    const refused = await Promise.all(during.map((o) => stack.send(o, { untilAccepted: false })));
    expect(refused.flat().map((a) => a.status)).toEqual(during.map(() => 503));
    await down;
    // The platform's next try, once its back-off is over.
    await Promise.all(during.map((o) => stack.send(o, { timeoutMs: 60_000 })));
    await stack.waitDispatched(orders, { timeoutMs: 60_000 });

    // An outage while the courier moves: its webhooks are refused with 503; the polling fallback catches up.
    const stage = stack.relais.emulator.advance(DEFAULT_COURIER_STEP_MS);
    await outage();
    await stage;
    await stack.driveCourier();
    const { report } = await stack.finish({ timeoutMs: 30_000 });
    expectNoAnomaly(report);
  });
});
