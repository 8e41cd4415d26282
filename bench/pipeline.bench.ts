/**
 * Pipeline: orders per second from the shop's webhook to markReady at the dispatch service.
 *
 *   relais       relais web + relais worker (startWeb / startWorker, concurrency 10): intake job, ledger,
 *                order lock, neighbourhood resolution, createQuote, createShipment, markReady, timeline
 *                (the lookup by external id only on an attempt after a createShipment was sent: issue 27). The write-back queue (deliveries) is paused: it comes after markReady
 *                and the baselines write nothing to a shop.
 *   baseline-3   bare receiver + a bare BullMQ worker (concurrency 10) making the three calls the issue
 *                names, createQuote → createShipment → markReady, with Relais's own DispatchClient
 *   baseline-4   the same plus a getShipmentByExternalOrder lookup first (what Relais made before issue 27)
 *
 * All against the same dispatch emulator with the same injected latency on every call (default 20 ms),
 * the same signed ~9 kB order webhooks, one private Redis; each side in its own processes, rounds
 * alternating. A round ends when the last order's dispatch job completes; every order is then checked at
 * the emulator (one shipment per order, marked ready).
 *
 * Then without latency, CPU time per order of each worker process and web process (process.cpuUsage),
 * against a no-op BullMQ job behind the same bare receiver.
 *
 * Store round trips per order: Redis commands (the server's count, scripts' own commands included, and the count
 * each side's processes sent: bench/lib/store-counters.ts) plus the SQL statements Relais's processes sent.
 *
 * Dispatch calls per order (issue 24), counted at the emulator: on the happy path with the service map learned,
 * and for the first orders, whose place is not in the (empty) map yet.
 *
 * Targets (issue 27): relais / baseline-3 ≥ 0.9 at 20 ms per call; worker CPU per order ≤ 2.5× baseline-3's;
 * requests sent to the stores per order (Redis commands + SQL statements, web and worker) ≤ 10; 3 dispatch calls
 * per order on the happy path. Issue 15's store round trips (≤ 2× baseline-3's Redis commands) still printed.
 * Run: npx tsx bench/pipeline.bench.ts [--quick] [--profile] [--perf] [--rounds N] [--orders N] [--latency MS] [--cpu-only]
 * --cpu-only: the CPU phase alone, after a warm-up of 1 000 orders per side without latency (for trying a change, not
 * for the targets). --perf: where the worker's CPU goes in the CPU phase, from Linux perf (bench/lib/perf-profile.ts).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { QUEUE } from '../src/orders/queues.js';
import { closedLoop, HttpLoad } from './lib/load.js';
import { ShopifyOrderStream } from './lib/orders.js';
import { cpuMsBetween, startProcess, type BenchProcess } from './lib/processes.js';
import {
  BARE_ORG,
  benchFlags,
  CompletionCounter,
  readyOrderCounter,
  controlQueue,
  header,
  profileArgs,
  RELAIS_ORG,
  shipmentCensus,
  startStack,
} from './lib/stack.js';
import { fmt, formatSpread, median, spread, table, verdict } from './lib/stats.js';
import { perfUnavailable, printPerfReport, recordPerf } from './lib/perf-profile.js';
import type { ChildStats, Role } from './lib/child.js';

const BARE_PREFIX = '{bench-bare}';
const CONCURRENCY = 10;
const POST_CONCURRENCY = 16;

type SideName = 'relais' | 'baseline-3' | 'baseline-4' | 'noop';

interface Side {
  name: SideName;
  web: BenchProcess;
  worker: BenchProcess;
  load: HttpLoad;
  completions: CompletionCounter;
  externalIds: string[];
}

async function main(): Promise<void> {
  const flags = benchFlags();
  const noPerf = flags.perf ? perfUnavailable() : undefined;
  if (noPerf) throw new Error(`--perf: ${noPerf}`);
  const rounds = flags.rounds ?? (flags.quick ? 2 : 5);
  const perRound = flags.orders ?? (flags.quick ? 100 : 500);
  const latencyMs = flags.latencyMs ?? 20;
  const stack = await startStack();
  console.log(
    header('Pipeline: webhook → markReady, Relais vs bare BullMQ jobs making the same HTTP calls', stack, {
      rounds,
      ordersPerRound: perRound,
      latencyMsPerCall: latencyMs,
      workerConcurrency: CONCURRENCY,
      postConcurrency: POST_CONCURRENCY,
      quick: flags.quick,
    }),
  );

  const started: BenchProcess[] = [];
  const sides = new Map<SideName, Side>();
  const deliveries = controlQueue(QUEUE.deliveries, stack);
  const orders = new ShopifyOrderStream(stack.secrets.shopifyClientSecret);
  let sequence = 0;
  try {
    await deliveries.pause();
    const spawn = async (name: string, role: Role, extra: { prefix: string; bareQueue?: string }) => {
      const child = await startProcess(
        name,
        {
          role,
          redisUrl: stack.redis.url,
          registry: stack.registry,
          concurrency: CONCURRENCY,
          dispatchBaseUrl: stack.emulator.baseUrl,
          ...extra,
        },
        {
          secrets: stack.childSecrets,
          logFile: join(stack.logDir, `${name}.log`),
          nodeArgs: role.startsWith('relais') ? profileArgs(flags, stack, name) : [],
        },
      );
      started.push(child);
      return child;
    };
    const addSide = async (name: SideName, web: BenchProcess, worker: BenchProcess, completions: CompletionCounter) => {
      await completions.ready();
      sides.set(name, {
        name,
        web,
        worker,
        load: new HttpLoad(web.url ?? '', { maxSockets: POST_CONCURRENCY }),
        completions,
        externalIds: [],
      });
    };
    const relaisWeb = await spawn('relais-web', 'relais-web', { prefix: stack.prefix });
    const relaisWorker = await spawn('relais-worker', 'relais-worker', { prefix: stack.prefix });
    await addSide('relais', relaisWeb, relaisWorker, readyOrderCounter(stack.redis.url, stack.prefix));
    for (const [name, role] of [
      ['baseline-3', 'bare-worker'],
      ['baseline-4', 'bare-worker-4-calls'],
      ['noop', 'noop-worker'],
    ] as const) {
      const bareQueue = `bare-orders-${name}`;
      const web = await spawn(`${name}-receiver`, 'bare-receiver', { prefix: BARE_PREFIX, bareQueue });
      const worker = await spawn(`${name}-worker`, role, { prefix: BARE_PREFIX, bareQueue });
      await addSide(
        name,
        web,
        worker,
        new CompletionCounter(bareQueue, { redisUrl: stack.redis.url, prefix: BARE_PREFIX }),
      );
    }

    /** Posts `count` orders to a side and waits until the last one is marked ready; returns orders per second and CPU. */
    const redisCommands = async () =>
      Number((await stack.admin.info('stats')).match(/total_commands_processed:(\d+)/)?.[1] ?? Number.NaN);
    const run = async (side: Side, count: number) => {
      const target = side.completions.count + count;
      const calls0 = stack.emulator.calls().length;
      const [web0, worker0, commands0] = await Promise.all([side.web.stats(), side.worker.stats(), redisCommands()]);
      const first = sequence;
      sequence += count;
      const t0 = performance.now();
      const posted = await closedLoop(side.load, {
        total: count,
        concurrency: POST_CONCURRENCY,
        make: (i) => orders.request(first + i),
      });
      if (posted.ok !== count)
        throw new Error(
          `${side.name}: ${posted.ok}/${count} webhooks accepted (${JSON.stringify(posted.statuses)} ${posted.firstError ?? ''})`,
        );
      await side.completions.reach(target, Math.max(120_000, count * 500));
      const seconds = (side.completions.lastAt - t0) / 1000;
      const [web1, worker1, commands1] = await Promise.all([side.web.stats(), side.worker.stats(), redisCommands()]);
      for (let i = first; i < first + count; i++)
        side.externalIds.push(side.name === 'relais' ? orders.externalOrderId(i) : `bare:${orders.orderId(i)}`);
      // Only this side runs during its round: every call the emulator recorded since is its own.
      if (side.name === 'relais') relaisCalls.push({ orders: count, byOperation: callsByOperation(calls0) });
      return {
        ordersPerSecond: count / seconds,
        workerCpuMs: cpuMsBetween(worker0, worker1) / count,
        webCpuMs: cpuMsBetween(web0, web1) / count,
        // Only this side runs during its round: every command Redis processed is its own (plus this bench's few
        // reads), the commands its scripts ran included.
        redisCommands: (commands1 - commands0) / count,
        // What the side's two processes sent (store-counters.ts): each a request its store answers.
        redisSent: (sent(web1, worker1, 'redisCommands') - sent(web0, worker0, 'redisCommands')) / count,
        sqlStatements: (sent(web1, worker1, 'sqlStatements') - sent(web0, worker0, 'sqlStatements')) / count,
      };
    };
    /** The dispatch calls of each relais round, by operation: the first round starts from an empty service map. */
    const relaisCalls: DispatchCalls[] = [];
    const callsByOperation = (from: number): Record<string, number> => {
      const counts: Record<string, number> = {};
      for (const c of stack.emulator
        .calls()
        .slice(from)
        .filter((r) => r.orgId === RELAIS_ORG))
        counts[c.operation] = (counts[c.operation] ?? 0) + 1;
      return counts;
    };
    const sent = (web: ChildStats, worker: ChildStats, what: 'redisCommands' | 'sqlStatements') =>
      web[what] + worker[what];
    const rotate = <T>(items: T[], round: number): T[] => items.map((_, i) => items[(i + round) % items.length]!);

    // Phase 1: throughput with latency on every dispatch call.
    if (!flags.cpuOnly) stack.emulator.faults.add({ operation: '*', fault: { kind: 'latency', ms: latencyMs } });
    const withLatency: SideName[] = ['baseline-3', 'relais', 'baseline-4'];
    // Warm-up, the same for every side: Relais runs far more code than a bare job, and its first ~100 orders ran at
    // half its later rate (2026-11-28: 40 orders/s for two seconds, then 90), so 50 orders left round 1 measuring
    // its JIT. A long-running worker's rate is the steady one; the quick run keeps 50 to stay quick.
    const warmUp = flags.cpuOnly ? 1000 : Math.min(flags.quick ? 50 : 200, perRound);
    for (const name of withLatency) await run(sides.get(name)!, warmUp);
    const rate: Record<SideName, number[]> = { relais: [], 'baseline-3': [], 'baseline-4': [], noop: [] };
    const ratio3: number[] = [];
    const ratio4: number[] = [];
    for (let round = 0; round < (flags.cpuOnly ? 0 : rounds); round++) {
      const got = new Map<SideName, number>();
      for (const name of rotate(withLatency, round)) {
        const { ordersPerSecond } = await run(sides.get(name)!, perRound);
        got.set(name, ordersPerSecond);
        rate[name].push(ordersPerSecond);
      }
      ratio3.push(got.get('relais')! / got.get('baseline-3')!);
      ratio4.push(got.get('relais')! / got.get('baseline-4')!);
      console.log(
        `round ${round + 1}/${rounds} (latency ${latencyMs} ms): ${withLatency.map((n) => `${n} ${fmt(got.get(n)!, 1)}/s`).join(' | ')}`,
      );
    }

    // Phase 2: no latency: CPU per order, and the CPU-bound throughput.
    stack.emulator.faults.clear();
    const cpuSides: SideName[] = ['noop', 'baseline-3', 'relais'];
    for (const name of cpuSides) await run(sides.get(name)!, Math.min(50, perRound)); // warm already
    type Figures = {
      worker: number[];
      web: number[];
      rate: number[];
      commands: number[];
      sent: number[];
      sql: number[];
    };
    const figures = (): Figures => ({ worker: [], web: [], rate: [], commands: [], sent: [], sql: [] });
    const cpu: Record<SideName, Figures> = {
      relais: figures(),
      'baseline-3': figures(),
      'baseline-4': figures(),
      noop: figures(),
    };
    const ratioNoLatency: number[] = [];
    const cpuRatio: number[] = [];
    const relaisWorkerPid = sides.get('relais')!.worker.pid;
    const perfFile = join(stack.logDir, 'relais-worker.perf.data');
    const perf = flags.perf ? recordPerf(relaisWorkerPid, perfFile) : undefined;
    for (let round = 0; round < rounds; round++) {
      const got = new Map<SideName, number>();
      for (const name of rotate(cpuSides, round)) {
        const result = await run(sides.get(name)!, perRound);
        cpu[name].worker.push(result.workerCpuMs);
        cpu[name].commands.push(result.redisCommands);
        cpu[name].sent.push(result.redisSent);
        cpu[name].sql.push(result.sqlStatements);
        cpu[name].web.push(result.webCpuMs);
        cpu[name].rate.push(result.ordersPerSecond);
        got.set(name, result.ordersPerSecond);
      }
      ratioNoLatency.push(got.get('relais')! / got.get('baseline-3')!);
      cpuRatio.push(cpu.relais.worker.at(-1)! / cpu['baseline-3'].worker.at(-1)!);
      console.log(
        `round ${round + 1}/${rounds} (no latency): ${cpuSides.map((n) => `${n} ${fmt(got.get(n)!, 1)}/s, worker ${fmt(cpu[n].worker.at(-1)!, 2)} ms CPU/order`).join(' | ')}`,
      );
    }

    await perf?.stop();
    // Every order of every side: exactly one shipment, marked ready.
    const census = {
      relais: shipmentCensus(stack.emulator, RELAIS_ORG, sides.get('relais')!.externalIds),
      bare: shipmentCensus(stack.emulator, BARE_ORG, [
        ...sides.get('baseline-3')!.externalIds,
        ...sides.get('baseline-4')!.externalIds,
      ]),
    };
    const failedAttempts = [...sides.values()].map((s) => `${s.name} ${s.completions.failed}`).join(', ');

    console.log('');
    console.log(
      table([
        [
          'side',
          `orders/s, ${latencyMs} ms per call (median)`,
          'orders/s, no latency',
          'worker CPU ms/order',
          'web CPU ms/order',
          'Redis commands/order (processed)',
          'Redis commands/order (sent)',
          'SQL statements/order',
        ],
        ...(['relais', 'baseline-3', 'baseline-4', 'noop'] as const).map((n) => [
          n,
          rate[n].length ? fmt(median(rate[n]), 1) : '-',
          cpu[n].rate.length ? fmt(median(cpu[n].rate), 1) : '-',
          cpu[n].worker.length ? fmt(median(cpu[n].worker), 3) : '-',
          cpu[n].web.length ? fmt(median(cpu[n].web), 3) : '-',
          cpu[n].commands.length ? fmt(median(cpu[n].commands), 0) : '-',
          cpu[n].sent.length ? fmt(median(cpu[n].sent), 1) : '-',
          cpu[n].sql.length ? fmt(median(cpu[n].sql), 1) : '-',
        ]),
      ]),
    );
    console.log('');
    if (flags.cpuOnly) console.log('orders/s with latency: not measured (--cpu-only)');
    else {
      const r3 = spread(ratio3);
      console.log(
        `orders/s ratio relais/baseline-3 (the three calls), ${latencyMs} ms latency: ${formatSpread(r3)}  → ${verdict(r3.median, { atLeast: 0.9 })}`,
      );
      console.log(
        `orders/s ratio relais/baseline-4 (the same four calls), ${latencyMs} ms latency: ${formatSpread(spread(ratio4))}`,
      );
    }
    console.log(`orders/s ratio relais/baseline-3, no latency (CPU-bound): ${formatSpread(spread(ratioNoLatency))}`);
    const relaisCpu = median(cpu.relais.worker);
    console.log(
      `worker CPU per order, no latency: relais ${fmt(relaisCpu, 2)} ms, baseline-3 ${fmt(median(cpu['baseline-3'].worker), 2)} ms, no-op job ${fmt(median(cpu.noop.worker), 2)} ms (relais = ${fmt(relaisCpu / median(cpu.noop.worker), 1)}× the no-op job)`,
    );
    const cpuSpread = spread(cpuRatio);
    console.log(
      `worker CPU per order ratio relais/baseline-3, per round: ${formatSpread(cpuSpread)}  → ${verdict(cpuSpread.median, { atMost: 2.5 })}`,
    );
    // Store round trips per order: the issue's measure (Redis commands processed, scripts' own included, plus SQL
    // statements) against twice the bare job's Redis commands; and the same from what each side's processes sent.
    const m = (side: SideName, what: 'commands' | 'sent' | 'sql') => median(cpu[side][what]);
    const relaisProcessed = m('relais', 'commands') + m('relais', 'sql');
    console.log(
      `store round trips per order, processed: relais ${fmt(m('relais', 'commands'), 0)} Redis + ${fmt(m('relais', 'sql'), 1)} SQL = ${fmt(relaisProcessed, 1)}, baseline-3 ${fmt(m('baseline-3', 'commands'), 0)} Redis: ratio ${fmt(relaisProcessed / m('baseline-3', 'commands'), 2)}  → ${verdict(relaisProcessed / m('baseline-3', 'commands'), { atMost: 2 })}`,
    );
    const relaisSent = m('relais', 'sent') + m('relais', 'sql');
    console.log(
      `store requests per order, sent by the processes: relais ${fmt(m('relais', 'sent'), 1)} Redis + ${fmt(m('relais', 'sql'), 1)} SQL = ${fmt(relaisSent, 1)}  → ${verdict(relaisSent, { atMost: 10 })}; baseline-3 ${fmt(m('baseline-3', 'sent'), 1)} Redis: ratio ${fmt(relaisSent / m('baseline-3', 'sent'), 2)}`,
    );
    console.log(
      `shipments at the emulator: relais ${JSON.stringify(census.relais)}; baselines ${JSON.stringify(census.bare)}`,
    );
    for (const line of describeDispatchCalls(relaisCalls)) console.log(line);
    if (perf)
      printPerfReport(
        "Relais's worker, in the no-latency rounds,",
        { file: perfFile, pid: relaisWorkerPid },
        relaisCpu,
        'order',
      );
    console.log(
      `failed job attempts: ${failedAttempts}; write-back jobs waiting (deliveries paused): ${await deliveries.getWaitingCount()}`,
    );
    if (census.relais.missing + census.relais.duplicated + census.relais.notReady > 0) process.exitCode = 1;
  } finally {
    for (const side of sides.values()) {
      side.load.close();
      await side.completions.close();
    }
    await deliveries.close();
    for (const child of started) await child.stop();
    await stack.stop();
  }
}

interface DispatchCalls {
  orders: number;
  byOperation: Record<string, number>;
}

/**
 * Issue 24: dispatch calls per order. The first relais round (the warm-up) starts from an empty service map:
 * its orders' place is not in the map yet, so the quotes beyond one per order are what learning it cost (the
 * fallback tariff's quote included, learned once a day per weight band). Every later round runs with the map
 * learned: the happy path.
 */
function describeDispatchCalls(rounds: DispatchCalls[]): string[] {
  const [first, ...learned] = rounds;
  if (!first) return [];
  const perOrder = (r: DispatchCalls[]) => {
    const orders = r.reduce((n, x) => n + x.orders, 0);
    const ops = [...new Set(r.flatMap((x) => Object.keys(x.byOperation)))].sort();
    const of = (op: string) => r.reduce((n, x) => n + (x.byOperation[op] ?? 0), 0);
    const all = ops.reduce((n, op) => n + of(op), 0);
    // Issue 27's target: 3 on the happy path (quote, create, mark ready; no lookup on a first attempt).
    return `${fmt(all / orders, 2)} in all (${ops.map((op) => `${op} ${fmt(of(op) / orders, 2)}`).join(', ')})`;
  };
  const extraQuotes = (first.byOperation.createQuote ?? 0) - first.orders;
  return [
    `dispatch calls per order, service map learned (${learned.reduce((n, x) => n + x.orders, 0)} orders): ${perOrder(learned)}`,
    `dispatch calls per order, first ${first.orders} orders from an empty service map: ${perOrder([first])}; quotes beyond one per order: ${extraQuotes} in all (fallback tariff's included)`,
  ];
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
