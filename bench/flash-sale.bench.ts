/**
 * Flash sale: a burst of orders, all at once, through Relais's web process and worker, followed to delivery,
 * and what it leaves behind in Redis and in PostgreSQL.
 *
 *   - each block (--block, default 10,000 orders; --quick: 1,000) is posted as fast as the web process takes it; the bench waits
 *     until every order is marked ready and written back and every queue is empty, and checks at the dispatch
 *     emulator that every order has exactly one shipment, marked ready (no duplicate, none missing). Redis
 *     used_memory is read then: the block's orders are live (in flight);
 *   - then the couriers move: the emulator's clock is run until nothing is scheduled, each stage sends its
 *     delivery webhook to Relais's web process, and the bench waits until the ledger shows every order delivered
 *     and every queue is empty. Redis used_memory and PostgreSQL's size of the ledger tables
 *     (pg_total_relation_size of orders, order_timeline, order_claims) are read then: the orders are finished;
 *   - further blocks follow until --orders (default 100,000; --quick: 5,000);
 *   - the worker's and web process's RSS and heap are sampled every 2 s; after the first and the last block,
 *     Redis memory by key family (SCAN + MEMORY USAGE), to show which keys grow with volume;
 *   - at the end, `relais reconcile --json` over every order (bench/lib/reconcile-run.ts): time, peak RSS, and
 *     SQL statements and Redis commands per order (a ledger read one order at a time would be one per order).
 *
 * The write-back runs to a stateless Shopify Admin stand-in (bench/lib/shop-admin-stub.ts).
 *
 * Targets (issue 15): used_memory after all orders finished ≤ 1.2× after the first block finished; Redis bytes
 * per live order ≤ 1 kB (keys outside the bounded job queues, with a block's orders in flight); PostgreSQL
 * bytes per finished order reported.
 * Run: npx tsx bench/flash-sale.bench.ts [--quick] [--profile] [--orders TOTAL] [--block N] [--latency MS]
 */
import { join } from 'node:path';
import type pg from 'pg';
import { performance } from 'node:perf_hooks';
import { DEFAULT_COURIER_STEP_MS } from '@relais/emulators/dispatch';
import { QUEUE } from '../src/orders/queues.js';
import { closedLoop, HttpLoad } from './lib/load.js';
import { ShopifyOrderStream } from './lib/orders.js';
import { cpuMsBetween, startProcess, type BenchProcess } from './lib/processes.js';
import { runReconcile } from './lib/reconcile-run.js';
import { startShopAdminStub } from './lib/shop-admin-stub.js';
import {
  benchFlags,
  callsByOperation,
  CompletionCounter,
  readyOrderCounter,
  controlQueue,
  header,
  mib,
  profileArgs,
  RELAIS_ORG,
  shipmentCensus,
  sleep,
  startStack,
  type BenchStack,
} from './lib/stack.js';
import { fmt, table, verdict } from './lib/stats.js';
import type { ChildStats } from './lib/child.js';
import { SHOPIFY_SHOP_ID } from '../test/support/relais.js';

const CONCURRENCY = 10;
const POST_CONCURRENCY = 32;

interface Sample {
  at: number;
  orders: number;
  worker: ChildStats;
  web: ChildStats;
}

async function main(): Promise<void> {
  const flags = benchFlags();
  const block = flags.block ?? (flags.quick ? 1_000 : 10_000);
  const total = flags.orders ?? (flags.quick ? 5_000 : 100_000);
  if (total < block) throw new Error(`--orders must be at least one block (${block})`);
  // The shop's order listing shows the orders posted so far (relais reconcile reads it at the end).
  const listedOrderIds: number[] = [];
  const stub = await startShopAdminStub({ listedOrders: () => listedOrderIds });
  const stack = await startStack({ shopifyAdminUrl: stub.url });
  console.log(
    header('Flash sale: a burst of orders drains and is delivered, no duplicate, bounded memory', stack, {
      firstBurst: block,
      totalOrders: total,
      blocks: Math.ceil(total / block),
      latencyMsPerCall: flags.latencyMs ?? 0,
      workerConcurrency: CONCURRENCY,
      postConcurrency: POST_CONCURRENCY,
      quick: flags.quick,
    }),
  );
  if (flags.latencyMs) stack.emulator.faults.add({ operation: '*', fault: { kind: 'latency', ms: flags.latencyMs } });

  const started: BenchProcess[] = [];
  const queues = [QUEUE.shopEvents, QUEUE.dispatch, QUEUE.deliveries].map((name) => controlQueue(name, stack));
  const readyCount = readyOrderCounter(stack.redis.url, stack.prefix);
  const syncCount = new CompletionCounter(QUEUE.deliveries, { redisUrl: stack.redis.url, prefix: stack.prefix });
  let sampler: NodeJS.Timeout | undefined;
  let load: HttpLoad | undefined;
  try {
    await Promise.all([readyCount.ready(), syncCount.ready()]);
    const spawn = async (name: string, role: 'relais-web' | 'relais-worker') => {
      const child = await startProcess(
        name,
        { role, redisUrl: stack.redis.url, prefix: stack.prefix, registry: stack.registry, concurrency: CONCURRENCY },
        {
          secrets: stack.childSecrets,
          logFile: join(stack.logDir, `${name}.log`),
          nodeArgs: profileArgs(flags, stack, name),
        },
      );
      started.push(child);
      return child;
    };
    const web = await spawn('relais-web', 'relais-web');
    const worker = await spawn('relais-worker', 'relais-worker');
    // The couriers' progress comes back as delivery webhooks, as in production.
    stack.emulator.setOrganisationWebhook(
      RELAIS_ORG,
      `${web.url}/webhooks/dispatch/${SHOPIFY_SHOP_ID}/${stack.secrets.dispatchWebhookToken}`,
    );
    const ledgerPool = stack.db.pool();
    load = new HttpLoad(web.url ?? '', { maxSockets: POST_CONCURRENCY });
    const orders = new ShopifyOrderStream(stack.secrets.shopifyClientSecret);
    const externalIds: string[] = [];

    const samples: Sample[] = [];
    let posted = 0;
    const t0 = performance.now();
    const sample = async () => {
      const [w, s] = await Promise.all([worker.stats(), web.stats()]);
      samples.push({ at: performance.now() - t0, orders: posted, worker: w, web: s });
    };
    await sample();
    sampler = setInterval(() => void sample().catch(() => undefined), 2_000);

    const usedMemory = async () =>
      Number((await stack.admin.info('memory')).match(/used_memory:(\d+)/)?.[1] ?? Number.NaN);
    const memoryBefore = await usedMemory();
    const rows: string[][] = [
      [
        'orders',
        'posted in',
        'intake /s',
        'drained in',
        'orders/s (post → drained)',
        'CPU ms/order: worker / web / bench',
        'delivered in',
        'Redis used_memory: live / finished',
        'PostgreSQL ledger',
        'worker RSS',
        'worker heap used',
      ],
    ];
    const memoryAt = new Map<number, number>();
    const liveBytesPerOrder: number[] = [];
    let finishedKeys = await outsideQueues(stack);
    let pgBytes = 0;
    const breakdowns = new Map<number, Map<string, { keys: number; bytes: number }>>();
    let burstCensus: ReturnType<typeof shipmentCensus> | undefined;

    for (let first = 0; first < total; first += block) {
      const count = Math.min(block, total - first);
      const blockStart = performance.now();
      // CPU per order in this block, per process: where the time goes if the drain slows as volume grows
      // (the bench process hosts the dispatch emulator and the load generator).
      const [workerBefore, webBefore, benchBefore] = [await worker.stats(), await web.stats(), process.cpuUsage()];
      const result = await closedLoop(load, {
        total: count,
        concurrency: POST_CONCURRENCY,
        make: (i) => orders.request(first + i),
        maxDurationMs: 30 * 60_000,
      });
      if (result.ok !== count)
        throw new Error(
          `${result.ok}/${count} webhooks accepted (${JSON.stringify(result.statuses)} ${result.firstError ?? ''})`,
        );
      posted = first + count;
      for (let i = first; i < first + count; i++) {
        externalIds.push(orders.externalOrderId(i));
        listedOrderIds.push(orders.orderId(i));
      }
      const postedIn = (performance.now() - blockStart) / 1000;
      // Drained: every order marked ready and written back, then every queue empty.
      await readyCount.reach(posted, Math.max(10 * 60_000, count * 200));
      await syncCount.reach(posted, Math.max(10 * 60_000, count * 200));
      await waitEmpty(stack, queues);
      const drainedIn = (performance.now() - blockStart) / 1000;
      const liveMemory = await usedMemory();
      const liveKeys = await outsideQueues(stack);
      // The couriers move one stage at a time (the emulator's step, 60 s of its clock), each stage's webhooks
      // drained before the next, as minutes apart in a real sale: jumping the clock to the end would deliver
      // an order's five webhooks at once and measure their contention for its order lock instead.
      const deliveryStart = performance.now();
      for (let stage = 0; stage < 10 && (await delivered(ledgerPool)) < posted; stage++) {
        await stack.emulator.advance(DEFAULT_COURIER_STEP_MS);
        await waitEmpty(stack, queues);
      }
      await stack.emulator.runUntilIdle();
      await waitDelivered(ledgerPool, posted, Math.max(10 * 60_000, count * 200));
      await waitEmpty(stack, queues);
      const deliveredIn = (performance.now() - deliveryStart) / 1000;
      await sample();
      const memory = await usedMemory();
      memoryAt.set(posted, memory);
      // What Redis holds for the block's orders while they are in flight, beyond the bounded job queues: every
      // key outside the queues with the orders live, less the same after the previous block finished.
      liveBytesPerOrder.push((liveKeys - finishedKeys) / count);
      finishedKeys = await outsideQueues(stack);
      pgBytes = await ledgerBytes(ledgerPool);
      const last = samples.at(-1)!;
      const benchCpu = process.cpuUsage(benchBefore);
      const cpuPerOrder = [
        cpuMsBetween(workerBefore, last.worker),
        cpuMsBetween(webBefore, last.web),
        (benchCpu.user + benchCpu.system) / 1000,
      ]
        .map((ms) => fmt(ms / count, 2))
        .join(' / ');
      rows.push([
        String(posted),
        `${fmt(postedIn, 1)} s`,
        fmt(count / postedIn, 0),
        `${fmt(drainedIn, 1)} s`,
        fmt(count / drainedIn, 1),
        cpuPerOrder,
        `${fmt(deliveredIn, 1)} s`,
        `${mib(liveMemory)} / ${mib(memory)}`,
        mib(pgBytes),
        mib(last.worker.rss),
        mib(last.worker.heapUsed),
      ]);
      console.log(
        `${posted} orders: posted in ${fmt(postedIn, 1)} s, drained in ${fmt(drainedIn, 1)} s, delivered in ${fmt(deliveredIn, 1)} s more, used_memory ${mib(liveMemory)} live, ${mib(memory)} finished, PostgreSQL ledger ${mib(pgBytes)}, worker RSS ${mib(last.worker.rss)} heap ${mib(last.worker.heapUsed)}`,
      );
      if (first === 0) {
        burstCensus = shipmentCensus(stack.emulator, RELAIS_ORG, externalIds);
        console.log(`first burst at the emulator: ${JSON.stringify(burstCensus)}`);
        breakdowns.set(posted, await memoryByFamily(stack));
      }
    }
    clearInterval(sampler);
    sampler = undefined;
    breakdowns.set(posted, await memoryByFamily(stack));
    const census = shipmentCensus(stack.emulator, RELAIS_ORG, externalIds);
    const counts = await Promise.all(queues.map(async (q) => [q.name, await q.getJobCounts()] as const));

    console.log('');
    console.log(table(rows));
    console.log('');
    const firstMemory = memoryAt.get(Math.min(block, total))!;
    const lastMemory = memoryAt.get(total)!;
    const growth = (lastMemory - memoryBefore) / (firstMemory - memoryBefore);
    const memoryRatio = lastMemory / firstMemory;
    console.log(
      `Redis used_memory, orders finished: empty ${mib(memoryBefore)}, after ${Math.min(block, total)} orders ${mib(firstMemory)}, after ${total} orders ${mib(lastMemory)}: ratio ${fmt(memoryRatio, 2)}  → ${verdict(memoryRatio, { atMost: 1.2 })} (growth over the empty server ${fmt(growth, 2)}× for ${fmt(total / Math.min(block, total), 0)}× the orders)`,
    );
    const liveMax = Math.max(...liveBytesPerOrder);
    console.log(
      `Redis bytes per live order (keys outside the job queues while the block is in flight, less after the previous block finished), per block: ${liveBytesPerOrder.map((b) => fmt(b, 0)).join(', ')}; largest ${fmt(liveMax, 0)} B  → ${verdict(liveMax, { atMost: 1024 })}`,
    );
    const finished = await ledgerPool.query<{ count: string }>(
      'SELECT count(*) FROM orders WHERE finished_at IS NOT NULL',
    );
    const finishedCount = Number(finished.rows[0]?.count ?? 0);
    console.log(
      `PostgreSQL ledger tables (orders, order_timeline, order_claims, their indexes and TOAST): ${mib(pgBytes)} for ${finishedCount} finished orders: ${fmt(pgBytes / finishedCount, 0)} B per finished order`,
    );
    const families = [...new Set([...breakdowns.values()].flatMap((m) => [...m.keys()]))].sort();
    const points = [...breakdowns.keys()].sort((a, b) => a - b);
    console.log(
      table([
        ['key family', ...points.flatMap((p) => [`keys @${p}`, `bytes @${p}`]), 'bytes per order (last)'],
        ...families.map((f) => [
          f,
          ...points.flatMap((p) => [
            String(breakdowns.get(p)?.get(f)?.keys ?? 0),
            mib(breakdowns.get(p)?.get(f)?.bytes ?? 0),
          ]),
          fmt((breakdowns.get(points.at(-1)!)?.get(f)?.bytes ?? 0) / total, 0),
        ]),
      ]),
    );
    // The part the issue names ("bounded job retention and event streams"): BullMQ's keys alone.
    const queueBytes = (at: number) =>
      [...(breakdowns.get(at) ?? new Map<string, { bytes: number }>()).entries()]
        .filter(([family]) => family.startsWith('queue '))
        .reduce((sum, [, v]) => sum + v.bytes, 0);
    const [firstPoint, lastPoint] = [points[0]!, points.at(-1)!];
    console.log(
      `job queues and their event streams alone: ${mib(queueBytes(firstPoint))} after ${firstPoint} orders, ${mib(queueBytes(lastPoint))} after ${lastPoint}: ratio ${fmt(queueBytes(lastPoint) / queueBytes(firstPoint), 2)}; the rest (ledger records, timelines, indexes, de-duplication markers) grows with the orders in flight: ${fmt((lastMemory - memoryBefore - queueBytes(lastPoint)) / total, 0)} B per order`,
    );
    const rssOf = (from: number, to: number) => samples.filter((s) => s.orders > from && s.orders <= to);
    const firstBlock = rssOf(0, Math.min(block, total));
    const lastBlock = rssOf(Math.max(0, total - block), total);
    const range = (xs: Sample[], pick: (s: Sample) => number) =>
      xs.length ? `${mib(Math.min(...xs.map(pick)))} – ${mib(Math.max(...xs.map(pick)))}` : '-';
    console.log(
      `worker RSS: first block ${range(firstBlock, (s) => s.worker.rss)}, last block ${range(lastBlock, (s) => s.worker.rss)}; heap used: first ${range(firstBlock, (s) => s.worker.heapUsed)}, last ${range(lastBlock, (s) => s.worker.heapUsed)} (${samples.length} samples)`,
    );
    console.log(
      `web RSS: first block ${range(firstBlock, (s) => s.web.rss)}, last block ${range(lastBlock, (s) => s.web.rss)}`,
    );
    console.log(
      `all ${total} orders at the emulator: ${JSON.stringify(census)}; failed attempts: dispatch ${readyCount.failed}, write-back ${syncCount.failed}`,
    );
    console.log(`queues at the end: ${counts.map(([name, c]) => `${name} ${JSON.stringify(c)}`).join('; ')}`);
    console.log(`shop stand-in calls: ${JSON.stringify(stub.calls())}`);
    // relais reconcile over every order, all delivered: time, memory, and whether it reads the ledger in batches.
    const reconciled = await runReconcile(stack);
    const shop = reconciled.shops[0];
    const kinds: Record<string, number> = {};
    for (const f of shop?.findings ?? []) kinds[f.kind] = (kinds[f.kind] ?? 0) + 1;
    console.log(
      `relais reconcile over ${total} orders: ${fmt(reconciled.seconds, 1)} s, peak RSS ${mib(reconciled.counts.maxRssBytes)}, ${reconciled.counts.sqlStatements} SQL statements (${fmt(reconciled.counts.sqlStatements / total, 4)} per order) and ${reconciled.counts.redisCommands} Redis commands (${fmt(reconciled.counts.redisCommands / total, 4)} per order); exit ${reconciled.exitCode}; ${shop?.ordersChecked ?? 0} orders and ${shop?.shipmentsChecked ?? 0} shipments checked; findings ${JSON.stringify(kinds)}${shop?.error ? `; error: ${shop.error}` : ''}`,
    );
    console.log(`dispatch calls by operation: ${JSON.stringify(callsByOperation(stack.emulator))}`);
    if (
      census.missing + census.duplicated + census.notReady > 0 ||
      (burstCensus && burstCensus.missing + burstCensus.duplicated > 0)
    )
      process.exitCode = 1;
  } finally {
    if (sampler) clearInterval(sampler);
    load?.close();
    await readyCount.close();
    await syncCount.close();
    for (const q of queues) await q.close();
    for (const child of started) await child.stop();
    await stack.stop();
    await stub.close();
  }
}

async function delivered(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ count: string }>("SELECT count(*) FROM orders WHERE state = 'delivered'");
  return Number(rows[0]?.count ?? 0);
}

/** Waits until the ledger shows `count` orders delivered (polled: one count query every second). */
async function waitDelivered(pool: pg.Pool, count: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const done = await delivered(pool);
    if (done >= count) return;
    if (performance.now() > deadline)
      throw new Error(`only ${done} of ${count} orders delivered within ${timeoutMs} ms`);
    await sleep(1_000);
  }
}

/** Bytes of the ledger's tables with their indexes and TOAST (claims included, though this bench makes none). */
async function ledgerBytes(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ bytes: string }>(
    `SELECT pg_total_relation_size('orders') + pg_total_relation_size('order_timeline') + pg_total_relation_size('order_claims') AS bytes`,
  );
  return Number(rows[0]?.bytes ?? 0);
}

async function waitEmpty(stack: BenchStack, queues: ReturnType<typeof controlQueue>[]): Promise<void> {
  for (;;) {
    const counts = await Promise.all(
      queues.map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'paused', 'waiting-children')),
    );
    if (counts.every((c) => Object.values(c).every((n) => n === 0))) return;
    await sleep(200);
  }
}

/** Bytes of every key outside the job queues (MEMORY USAGE): the order state Redis keeps, markers, caches. */
async function outsideQueues(stack: BenchStack): Promise<number> {
  let bytes = 0;
  for (const [family, entry] of await memoryByFamily(stack)) if (!family.startsWith('queue ')) bytes += entry.bytes;
  return bytes;
}

/** Bytes Redis reports for every key, grouped by what the key is for (the first segment after the prefix). */
async function memoryByFamily(stack: BenchStack): Promise<Map<string, { keys: number; bytes: number }>> {
  const out = new Map<string, { keys: number; bytes: number }>();
  const queueNames = new Set<string>(Object.values(QUEUE));
  let cursor = '0';
  do {
    const [next, keys] = await stack.admin.scan(cursor, 'COUNT', 2000);
    cursor = next;
    const pipeline = stack.admin.pipeline();
    for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', '0');
    const sizes = (await pipeline.exec()) ?? [];
    keys.forEach((key, i) => {
      const rest = key.startsWith(`${stack.prefix}:`) ? key.slice(stack.prefix.length + 1) : key;
      const head = rest.split(':', 1)[0] ?? rest;
      const family = queueNames.has(head) ? `queue ${head}` : head;
      const entry = out.get(family) ?? { keys: 0, bytes: 0 };
      entry.keys += 1;
      entry.bytes += Number(sizes[i]?.[1] ?? 0);
      out.set(family, entry);
    });
  } while (cursor !== '0');
  return out;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
