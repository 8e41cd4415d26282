/**
 * Horizontal scale: two worker processes against one Redis, against one. Each worker is the real
 * `relais worker` command as a child process (test/support/worker-process.ts spawnWorker: concurrency 4),
 * started fresh for each round; rounds alternate one and two workers. The web process, the dispatch
 * emulator (with the same latency on every call, default 20 ms) and a stateless shop stand-in for the
 * write-back run in this process (test/support/relais.ts startTestRelais).
 *
 * A round posts N signed orders and ends when every order is marked ready, written back, and every queue
 * is empty. Invariants checked at the end over every order of every round: exactly one shipment each,
 * marked ready; no failed job.
 *
 * Run: npx tsx bench/scale.bench.ts [--quick] [--rounds N (per worker count)] [--orders N] [--latency MS]
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { QUEUE } from '../src/orders/queues.js';
import { startRedis } from '../test/support/redis.js';
import { startTestRelais } from '../test/support/relais.js';
import { stopOwnServer } from '../test/support/postgres.js';
import { spawnWorker, type WorkerProcess } from '../test/support/worker-process.js';
import { closedLoop, HttpLoad } from './lib/load.js';
import { ShopifyOrderStream } from './lib/orders.js';
import { startShopAdminStub } from './lib/shop-admin-stub.js';
import {
  BENCH_POLICY,
  benchFlags,
  callsByOperation,
  CompletionCounter,
  readyOrderCounter,
  RELAIS_ORG,
  shipmentCensus,
  sleep,
} from './lib/stack.js';
import { fmt, formatSpread, median, spread, table } from './lib/stats.js';

const POST_CONCURRENCY = 16;
/** Production's lock (RELAIS_WORKER_LOCK_MS default): a loaded machine must not make live jobs look stalled. */
const LOCK_MS = 30_000;

async function main(): Promise<void> {
  const flags = benchFlags();
  const rounds = flags.rounds ?? (flags.quick ? 2 : 4);
  const perRound = flags.orders ?? (flags.quick ? 200 : 1500);
  const latencyMs = flags.latencyMs ?? 20;
  const stub = await startShopAdminStub();
  // A private Redis, never REDIS_URL: a bench must not load a shared server.
  const redis = await startRedis({ extraArgs: ['--maxmemory-policy', 'noeviction'] });
  const relais = await startTestRelais({
    redis,
    shopifyAdminUrl: stub.url,
    inProcessWorker: false,
    policy: BENCH_POLICY,
  });
  const admin = redis.client();
  const [one, five] = loadavg();
  const bullmq = (
    JSON.parse(readFileSync(new URL('../node_modules/bullmq/package.json', import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version;
  console.log(
    [
      '# Horizontal scale: two `relais worker` processes against one Redis, vs one',
      `date ${new Date().toISOString()}  machine ${cpus().length} cores, load average ${one?.toFixed(2)} / ${five?.toFixed(2)} (1 / 5 min) at start`,
      `Node ${process.version}, BullMQ ${bullmq}, Redis ${(await admin.info('server')).match(/redis_version:(\S+)/)?.[1] ?? '?'} (private, 127.0.0.1)`,
      `settings rounds=${rounds} per worker count, ordersPerRound=${perRound}, latencyMsPerCall=${latencyMs}, workerConcurrency=4 per process, lockMs=${LOCK_MS}, dispatchCallsPerSecond=${BENCH_POLICY.dispatchCallsPerSecond}, quick=${flags.quick}`,
    ].join('\n'),
  );

  relais.emulator.faults.add({ operation: '*', fault: { kind: 'latency', ms: latencyMs } });
  const { shopEvents, dispatch, deliveries } = relais.web.runtime.queues;
  const readyCount = readyOrderCounter(redis.url, relais.prefix);
  const syncCount = new CompletionCounter(QUEUE.deliveries, { redisUrl: redis.url, prefix: relais.prefix });
  const load = new HttpLoad(relais.web.url, { maxSockets: POST_CONCURRENCY });
  const orders = new ShopifyOrderStream(relais.secrets.shopifyClientSecret);
  const externalIds: string[] = [];
  let workers: WorkerProcess[] = [];
  let sequence = 0;
  try {
    await Promise.all([readyCount.ready(), syncCount.ready()]);
    const round = async (processes: number, count: number) => {
      workers = await Promise.all(Array.from({ length: processes }, () => spawnWorker(relais, { lockMs: LOCK_MS })));
      const first = sequence;
      sequence += count;
      const t0 = performance.now();
      const posted = await closedLoop(load, {
        total: count,
        concurrency: POST_CONCURRENCY,
        make: (i) => orders.request(first + i),
      });
      if (posted.ok !== count)
        throw new Error(`${posted.ok}/${count} webhooks accepted (${JSON.stringify(posted.statuses)})`);
      for (let i = first; i < first + count; i++) externalIds.push(orders.externalOrderId(i));
      await readyCount.reach(sequence, Math.max(300_000, count * 500));
      await syncCount.reach(sequence, Math.max(300_000, count * 500));
      for (;;) {
        const counts = await Promise.all(
          [shopEvents, dispatch, deliveries].map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized')),
        );
        if (counts.every((c) => Object.values(c).every((n) => n === 0))) break;
        await sleep(100);
      }
      const seconds = (performance.now() - t0) / 1000;
      // SIGTERM: the worker finishes what it holds, then exits (what a deploy does).
      await Promise.all(workers.map((w) => w.kill('SIGTERM')));
      workers = [];
      return count / seconds;
    };

    await round(1, Math.min(100, perRound)); // warm-up: Redis scripts, emulator, JIT of this process
    const rate: Record<1 | 2, number[]> = { 1: [], 2: [] };
    const ratios: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const order: (1 | 2)[] = r % 2 === 0 ? [1, 2] : [2, 1];
      const got: Partial<Record<1 | 2, number>> = {};
      for (const n of order) {
        got[n] = await round(n, perRound);
        rate[n].push(got[n]);
      }
      ratios.push(got[2]! / got[1]!);
      console.log(
        `round ${r + 1}/${rounds}: one worker ${fmt(got[1]!, 1)} orders/s | two workers ${fmt(got[2]!, 1)} orders/s`,
      );
    }

    const census = shipmentCensus(relais.emulator, RELAIS_ORG, externalIds);
    const failed = await Promise.all(
      [shopEvents, dispatch, deliveries].map(async (q) => `${q.name} ${await q.getFailedCount()}`),
    );
    console.log('');
    console.log(
      table([
        ['workers', 'orders/s (median, post → drained)', 'min – max'],
        ...([1, 2] as const).map((n) => [
          String(n),
          fmt(median(rate[n]), 1),
          `${fmt(Math.min(...rate[n]), 1)} – ${fmt(Math.max(...rate[n]), 1)}`,
        ]),
      ]),
    );
    console.log('');
    console.log(`throughput ratio two workers / one: ${formatSpread(spread(ratios))}`);
    console.log(
      `every order of every round at the emulator: ${JSON.stringify(census)}; failed jobs: ${failed.join(', ')}; failed attempts seen: dispatch ${readyCount.failed}, write-back ${syncCount.failed}`,
    );
    console.log(`dispatch calls by operation: ${JSON.stringify(callsByOperation(relais.emulator))}`);
    if (census.missing + census.duplicated + census.notReady > 0) process.exitCode = 1;
  } finally {
    for (const w of workers) await w.kill('SIGKILL');
    load.close();
    await readyCount.close();
    await syncCount.close();
    await relais.stop();
    await stub.close();
    await stopOwnServer();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
