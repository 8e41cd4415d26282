/**
 * The ledger's PostgreSQL stopped as `pg_ctl stop -m immediate` does (SIGQUIT to the postmaster: every backend
 * dies, no shutdown checkpoint) in the middle of a burst of orders and again while the courier's delivery
 * webhooks are being written back, then restarted on the same port and data. Redis stays up, so the web process
 * keeps storing webhooks and answers 200 throughout (its 503 is for "nothing was stored", i.e. Redis away); the
 * worker's jobs fail on the lost connections and are retried, never held. Nothing acknowledged is lost, nothing
 * is shipped or written twice, nothing moves backwards. `relais web` and `relais worker` run as child processes,
 * so a connection error nobody listens for would end them, as it would in production.
 */
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_COURIER_STEP_MS } from '@relais/emulators/dispatch';
import { startPrivatePostgres, type PrivatePostgres } from '../../src/main/private-postgres.js';
import { startTestDatabase, type TestDatabase } from '../support/postgres.js';
import { SHOPIFY_SHOP_ID, waitFor } from '../support/relais.js';
import { freePort } from '../support/redis.js';
import { spawnWorker, type WorkerProcess } from '../support/worker-process.js';
import { spawnWeb, type WebProcess } from './support/processes.js';
import { expectNoAnomaly, scale, SCENARIO_TIMEOUT_MS, startChaosStack, type ChaosStack } from './support/stack.js';

let postgres: PrivatePostgres;
let db: TestDatabase;
let stack: ChaosStack;
let web: WebProcess;
let worker: WorkerProcess;

beforeAll(async () => {
  postgres = await startPrivatePostgres({ crashSafe: true });
  db = await startTestDatabase({ url: postgres.url });
  stack = await startChaosStack({ db, inProcessWorker: false });
  [web, worker] = await Promise.all([
    freePort().then((port) => spawnWeb(stack.relais, { port })),
    spawnWorker(stack.relais, { lockMs: 5_000 }),
  ]);
  // The courier's status changes go to the child web process too.
  stack.relais.emulator.setOrganisationWebhook(
    'org_relais',
    `${web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${stack.relais.secrets.dispatchWebhookToken}`,
  );
});

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await web?.kill('SIGKILL');
  await stack?.stop();
  await db?.stop();
  await postgres?.stop();
});

const ORDERS = scale(10, 50);
const STAGGER_MS = 80;
const DOWN_MS = 1_500;
/** Stops while deliveries are written back (two courier stages each). */
const DELIVERY_ROUNDS = scale(1, 2);

/** The recorder's clock (ms since it started) around one outage: from just before the crash to the restart's end. */
interface Outage {
  from: number;
  to: number;
}

async function outage(during: () => Promise<void> = async () => undefined): Promise<Outage> {
  const from = stack.recorder.elapsed();
  await postgres.crash();
  await Promise.all([during(), new Promise((r) => setTimeout(r, DOWN_MS))]);
  await postgres.restart();
  return { from, to: stack.recorder.elapsed() };
}

const readyz = async (base: string) => {
  const response = await fetch(`${base}/readyz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const workerOps = () => worker.opsUrl ?? '(the worker did not say where its /readyz is)';
const alive = (child: { exitCode: number | null; signalCode: NodeJS.Signals | null }) =>
  child.exitCode === null && child.signalCode === null;

/** Jobs with a failed attempt behind them (BullMQ keeps the last failure's reason on a job that later went through). */
const retried = async (...queues: Queue[]) =>
  (await Promise.all(queues.map((q) => q.getJobs(['completed', 'waiting', 'delayed', 'active']))))
    .flat()
    .filter((job) => Boolean(job.failedReason)).length;

const failedJobs = async () =>
  (
    await Promise.all(
      [stack.queues.shopEvents, stack.queues.dispatch, stack.queues.deliveries].map((q) => q.getJobCounts('failed')),
    )
  ).reduce((sum, counts) => sum + (counts.failed ?? 0), 0);

describe('PostgreSQL stopped immediately and restarted', { timeout: SCENARIO_TIMEOUT_MS }, () => {
  it(`mid-burst of ${ORDERS} orders and ${DELIVERY_ROUNDS}× mid-delivery: every webhook is answered 200 (stored in Redis), every order ships once and ends right in its shop`, async () => {
    const orders = await stack.placeMany(ORDERS);
    const deliveries = Promise.all(
      orders.map(async (order, i) => {
        await new Promise((r) => setTimeout(r, i * STAGGER_MS));
        return stack.send(order, { timeoutMs: 90_000, webUrl: web.url });
      }),
    );
    await new Promise((r) => setTimeout(r, (ORDERS * STAGGER_MS) / 2));
    type Readiness = Awaited<ReturnType<typeof readyz>>;
    let webReadiness: Readiness | undefined;
    let workerReadiness: Readiness | undefined;
    const first = await outage(async () => {
      // While the database is down the web process stays ready (it takes webhooks into Redis) and says the
      // database is away; the worker, whose every job reads the ledger, is unready.
      await waitFor(async () => ((webReadiness = await readyz(web.url)), webReadiness.body.database !== 'ok'), {
        what: "the web process's /readyz to report the database away",
      });
      await waitFor(async () => ((workerReadiness = await readyz(workerOps())), workerReadiness.status === 503), {
        what: "the worker's /readyz to answer 503",
      });
    });
    expect(webReadiness?.status).toBe(200);
    expect(webReadiness?.body).toMatchObject({ status: 'ready', redis: 'ok', queues: 'ok' });
    expect(workerReadiness?.body).toMatchObject({ redis: 'ok', workers: 'ok' });
    expect(workerReadiness?.body.database).not.toBe('ok');
    const attempts = (await deliveries).flat();
    // Redis never went away, so every event was stored: 200 on the first attempt, during the outage too.
    expect(attempts.filter((a) => a.status !== 200)).toEqual([]);
    expect(attempts.filter((a) => a.at >= first.from && a.at <= first.to).length).toBeGreaterThan(0);
    await stack.waitDispatched(orders, { timeoutMs: 60_000 });
    // The worker met the outage: jobs failed on the lost connections and were retried until they went through.
    expect(await retried(stack.queues.shopEvents, stack.queues.dispatch)).toBeGreaterThan(0);

    // Stopped again while the courier's status changes come in and are being written back to the shops: one
    // stage moves just before the stop (its write-backs in flight), the next while the database is down.
    const webhooksBefore = stack.relais.emulator.webhookDeliveries().length;
    for (let round = 0; round < DELIVERY_ROUNDS; round++) {
      await stack.relais.emulator.advance(DEFAULT_COURIER_STEP_MS);
      await outage(async () => {
        await stack.relais.emulator.advance(DEFAULT_COURIER_STEP_MS);
      });
    }
    const duringDelivery = stack.relais.emulator.webhookDeliveries().slice(webhooksBefore);
    expect(duringDelivery.length).toBeGreaterThan(0);
    expect(duringDelivery.filter((d) => d.status !== 200)).toEqual([]);
    expect(await retried(stack.queues.deliveries)).toBeGreaterThan(0);

    await stack.driveCourier();
    const { report } = await stack.finish({ timeoutMs: 30_000 });
    expectNoAnomaly(report);
    // The lost connections were transient failures: retried, never a job given up on.
    expect(await failedJobs()).toBe(0);
    // Both processes lived through two database crashes and are ready again.
    expect([alive(web.child), alive(worker.child)], `${web.output()}\n${worker.output()}`).toEqual([true, true]);
    expect((await readyz(web.url)).body).toMatchObject({ status: 'ready', database: 'ok' });
    await waitFor(async () => (await readyz(workerOps())).status === 200, { what: 'the worker to be ready again' });
  });
});
