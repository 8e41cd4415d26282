/**
 * SIGTERM under load, as a deploy or a scale-down sends it. The worker stops taking jobs, finishes the
 * ones it holds and exits: no job is left active for a stall check to find, none is taken over, and a new
 * worker drains the rest. The web process answers what it already read and stops accepting; the platform
 * delivers the rest to its successor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from 'bullmq';
import { freePort } from '../support/redis.js';
import { waitFor } from '../support/relais.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';
import { spawnWeb, type WebProcess } from './support/processes.js';
import { expectNoAnomaly, scale, SCENARIO_TIMEOUT_MS, startChaosStack, type ChaosStack } from './support/stack.js';

let stack: ChaosStack;
const workers: WorkerProcess[] = [];
const webs: WebProcess[] = [];

beforeAll(async () => {
  stack = await startChaosStack({ inProcessWorker: false });
});

afterAll(async () => {
  for (const w of workers) await w.kill('SIGKILL');
  for (const w of webs) await w.kill('SIGKILL');
  await stack?.stop();
});

const ORDERS = scale(12, 60);

describe('SIGTERM under load', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  it(`the worker busy with ${ORDERS} orders finishes its active jobs, exits cleanly, leaves nothing active or stalled`, async () => {
    const first = await spawnWorker(stack.relais, { lockMs: 2_000 });
    workers.push(first);
    // Each call takes 400 ms, so every job is mid-flight for over a second.
    for (const operation of ['createQuote', 'createShipment', 'markReady'] as const) {
      stack.relais.emulator.faults.add({ operation, times: ORDERS * 4, fault: { kind: 'latency', ms: 400 } });
    }
    const orders = await stack.placeMany(ORDERS);
    await Promise.all(orders.map((o) => stack.send(o)));
    // Orders are shipped by their webhooks' jobs.
    await waitFor(async () => (await stack.queues.shopEvents.getActiveCount()) >= 2, { what: 'orders being shipped' });
    const active = await stack.queues.shopEvents.getActive();

    const started = Date.now();
    await first.kill('SIGTERM');
    expect(first.child.exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    // Nothing left active for the stall check, and every job it held was finished, not dropped.
    const counts = await Promise.all(
      [stack.queues.shopEvents, stack.queues.dispatch, stack.queues.deliveries].map((q) => q.getActiveCount()),
    );
    expect(counts).toEqual([0, 0, 0]);
    const states = await Promise.all(active.map((job) => job.getState()));
    expect(states).toEqual(active.map(() => 'completed'));
    const stillToDo = await stack.queues.shopEvents.getWaitingCount();

    workers.push(await spawnWorker(stack.relais, { lockMs: 2_000 }));
    await stack.waitDispatched(orders, { timeoutMs: 60_000 });
    stack.relais.emulator.faults.clear();
    await stack.driveCourier();
    const { report } = await stack.finish();
    expectNoAnomaly(report);
    const jobs: Job[] = [
      ...(await stack.queues.dispatch.getJobs(['completed', 'failed'])),
      ...(await stack.queues.shopEvents.getJobs(['completed', 'failed'])),
    ];
    expect(jobs.filter((j) => j.stalledCounter > 0).map((j) => j.id)).toEqual([]);
    expect(stillToDo + active.length).toBeGreaterThan(0);
  });

  it(`the web process mid-burst of ${ORDERS} webhooks answers each one it read, then the rest go to its successor: each order ships once`, async () => {
    const port = await freePort();
    let web = await spawnWeb(stack.relais, { port });
    webs.push(web);
    const orders = await stack.placeMany(ORDERS);
    const deliveries = Promise.all(
      orders.map(async (order, i) => {
        await new Promise((r) => setTimeout(r, i * 30));
        return stack.send(order, { webUrl: web.url, timeoutMs: 60_000 });
      }),
    );
    await new Promise((r) => setTimeout(r, (ORDERS * 30) / 2));
    await web.kill('SIGTERM');
    expect(web.child.exitCode).toBe(0);
    web = await spawnWeb(stack.relais, { port });
    webs.push(web);
    const attempts = (await deliveries).flat();
    // Answers the platform got from the stopping process were all honest: a 200 only for what was stored.
    expect(attempts.every((a) => [0, 200, 503].includes(a.status))).toBe(true);
    await stack.waitDispatched(orders, { timeoutMs: 60_000 });
    await stack.driveCourier();
    const { report } = await stack.finish();
    expectNoAnomaly(report);
  });
});
