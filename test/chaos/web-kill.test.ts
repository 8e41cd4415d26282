/**
 * The web process (a real child: `relais web`) killed with SIGKILL while it handles order webhooks: before
 * the event reached Redis, after it was stored but before the 200 went out, and at random moments of a
 * burst. The platform got no answer, so it delivers again (same event): the retry is accepted or recognised
 * as a duplicate, and every order ships exactly once. A TCP fault proxy between the web process and Redis
 * holds the process at the exact point (it cuts the connection on the event's job id).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stableJobId } from '../../src/orders/queues.js';
import { freePort } from '../support/redis.js';
import { SHOPIFY_SHOP_ID, waitFor, WOO_SHOP_ID } from '../support/relais.js';
import { spawnWeb, type WebProcess } from './support/processes.js';
import {
  expectNoAnomaly,
  scale,
  SCENARIO_TIMEOUT_MS,
  startChaosStack,
  type ChaosOrder,
  type ChaosStack,
} from './support/stack.js';
import { startFaultProxy, type FaultProxy } from './support/tcp-proxy.js';

let stack: ChaosStack;
let proxy: FaultProxy;
let web: WebProcess;
let port: number;

beforeAll(async () => {
  stack = await startChaosStack();
  proxy = await startFaultProxy({ targetPort: stack.relais.redis.port });
  port = await freePort();
  web = await spawnWeb(stack.relais, { port, redisUrl: proxy.url() });
});

afterAll(async () => {
  await web?.kill('SIGKILL');
  await proxy?.close();
  await stack?.stop();
});

async function restartWeb(): Promise<void> {
  await web.kill('SIGKILL');
  proxy.set({ kind: 'pass' });
  web = await spawnWeb(stack.relais, { port, redisUrl: proxy.url() });
}

/** The shop-events job id the web process gives this delivery (webhooks.ts: one job per event). */
function jobIdOf(order: ChaosOrder, eventId: string): string {
  if (order.platform === 'shopify') return stableJobId('evt', SHOPIFY_SHOP_ID, `orders/create|${eventId}`);
  const p = order.payload as { id?: unknown; date_modified_gmt?: unknown; status?: unknown };
  return stableJobId(
    'evt',
    WOO_SHOP_ID,
    // The last part is the number of refunds (none here).
    `order.created|${String(p.id)}|${String(p.date_modified_gmt)}|${String(p.status)}|0`,
  );
}

const jobStored = async (jobId: string) => (await stack.queues.shopEvents.getJob(jobId)) !== undefined;

describe('the web process killed with SIGKILL', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  for (const [when, cut] of [
    ['before the event reached Redis', 'request'],
    ['after the event was stored, before the answer', 'reply'],
  ] as const) {
    it(`${when}: the platform's retry is accepted and each order ships once`, async () => {
      const orders = [stack.placeShopify(), await stack.placeWoo()];
      for (const order of orders) {
        const eventId = randomUUID();
        const jobId = jobIdOf(order, eventId);
        proxy.set({ kind: 'cut_on', pattern: jobId, cut });
        const first = stack.send(order, { eventId, untilAccepted: false, webUrl: web.url });
        await waitFor(async () => proxy.cuts() > 0, { what: 'the enqueue to be cut' });
        if (cut === 'reply') await waitFor(() => jobStored(jobId), { what: 'the event to be stored' });
        else expect(await jobStored(jobId)).toBe(false);
        await restartWeb();
        const [attempt] = await first;
        expect(attempt!.status).toBe(0); // the platform never got an answer
        const retries = await stack.send(order, { eventId, webUrl: web.url });
        expect(retries.at(-1)!.status).toBe(200);
      }
      await stack.waitDispatched(orders);
      await stack.driveCourier();
      const { report } = await stack.finish();
      expectNoAnomaly(report);
    });
  }

  it(`at random moments of a burst of ${scale(12, 60)} webhooks (Redis 20 ms away): every delivery retried until 200, each order ships once`, async () => {
    const orders = await stack.placeMany(scale(12, 60));
    proxy.set({ kind: 'latency', ms: 20 });
    const kills = scale(2, 6);
    let killing = Promise.resolve();
    // The platform: each order's delivery is retried with the same event id until answered 200.
    const deliveries = Promise.all(
      orders.map(async (order, i) => {
        await new Promise((r) => setTimeout(r, i * 25));
        return stack.send(order, { eventId: `burst-${order.externalOrderId}`, webUrl: web.url, timeoutMs: 90_000 });
      }),
    );
    for (let k = 0; k < kills; k++) {
      await new Promise((r) => setTimeout(r, 150 + Math.random() * 200));
      killing = killing.then(async () => {
        await web.kill('SIGKILL');
        web = await spawnWeb(stack.relais, { port, redisUrl: proxy.url() });
        proxy.set({ kind: 'latency', ms: 20 });
      });
      await killing;
    }
    const attempts = (await deliveries).flat();
    proxy.set({ kind: 'pass' });
    expect(attempts.filter((a) => a.status === 0).length).toBeGreaterThan(0); // some deliveries did die with the process
    await stack.waitDispatched(orders, { timeoutMs: 60_000 });
    await stack.driveCourier();
    const { report } = await stack.finish();
    expectNoAnomaly(report);
  });
});
