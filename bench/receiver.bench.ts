/**
 * Receiver: Relais's Shopify webhook endpoint (startWeb: verify with @shopify/shopify-api, de-duplicate,
 * enqueue, answer) against a bare Express app (express.raw + HMAC + `queue.add`) on the same Redis, with
 * the same signed ~9 kB order bodies, each in its own process, measured from this process over keep-alive
 * connections.
 *
 *   1. maximum rate: closed loop, rounds alternating baseline and Relais → throughput and p99 ratios
 *   2. acknowledgement at half the baseline's maximum rate: open loop at a fixed rate → p99 of each
 *
 * Targets: throughput ratio ≥ 0.9 and server CPU per request ≤ 1.3× the baseline's (issue 27), p99 ratio ≤ 1.5,
 * p99 at half the baseline's rate < 250 ms (issue 7). Redis commands and read/write system calls per request are
 * printed beside the CPU: they say why one side costs more, and do not drift with the machine's load.
 * Run: npx tsx bench/receiver.bench.ts [--quick] [--profile] [--rounds N] [--orders N (requests per round)]
 */
import { join } from 'node:path';
import type { Queue } from 'bullmq';
import { DEFAULT_JOB_OPTIONS, QUEUE } from '../src/orders/queues.js';
import { closedLoop, HttpLoad, openLoop, type LoadResult, type RequestSpec } from './lib/load.js';
import { ShopifyOrderStream } from './lib/orders.js';
import { cpuMsBetween, startProcess, type BenchProcess } from './lib/processes.js';
import { benchFlags, controlQueue, header, profileArgs, sleep, startStack } from './lib/stack.js';
import { perfUnavailable, printPerfReport, recordPerf } from './lib/perf-profile.js';
import { fmt, formatSpread, median, percentile, spread, table, verdict } from './lib/stats.js';

const BARE_PREFIX = '{bench-bare}';

interface Side {
  name: 'baseline' | 'relais';
  process: BenchProcess;
  queue: Queue;
  load: HttpLoad;
}

async function main(): Promise<void> {
  const flags = benchFlags();
  const noPerf = flags.perf ? perfUnavailable() : undefined;
  if (noPerf) throw new Error(`--perf: ${noPerf}`);
  const rounds = flags.rounds ?? (flags.quick ? 2 : 5);
  const perRound = flags.orders ?? (flags.quick ? 400 : 3000);
  const concurrency = 32;
  const openLoopMs = flags.quick ? 3_000 : 10_000;
  const stack = await startStack();
  console.log(
    header('Receiver: Relais webhook endpoint vs bare Express + HMAC + queue.add', stack, {
      rounds,
      requestsPerRound: perRound,
      concurrency,
      openLoopMs,
      quick: flags.quick,
    }),
  );

  const sides: Side[] = [];
  const started: BenchProcess[] = [];
  try {
    const secrets = { secrets: stack.childSecrets };
    const relais = await startProcess(
      'relais-web',
      { role: 'relais-web', redisUrl: stack.redis.url, prefix: stack.prefix, registry: stack.registry },
      { ...secrets, logFile: join(stack.logDir, 'relais-web.log'), nodeArgs: profileArgs(flags, stack, 'relais-web') },
    );
    started.push(relais);
    const bare = await startProcess(
      'bare-receiver',
      // Its jobs carry the options Relais's carry (retries, retention): the same job stored for the same body.
      {
        role: 'bare-receiver',
        redisUrl: stack.redis.url,
        prefix: BARE_PREFIX,
        bareJobOptions: { ...DEFAULT_JOB_OPTIONS },
      },
      {
        ...secrets,
        logFile: join(stack.logDir, 'bare-receiver.log'),
        nodeArgs: profileArgs(flags, stack, 'bare-receiver'),
      },
    );
    started.push(bare);
    sides.push(
      {
        name: 'baseline',
        process: bare,
        queue: controlQueue('bare-orders', stack, BARE_PREFIX),
        load: new HttpLoad(bare.url ?? '', { maxSockets: concurrency }),
      },
      {
        name: 'relais',
        process: relais,
        queue: controlQueue(QUEUE.shopEvents, stack),
        load: new HttpLoad(relais.url ?? '', { maxSockets: concurrency }),
      },
    );
    const orders = new ShopifyOrderStream(stack.secrets.shopifyClientSecret);
    let sequence = 0;
    const make = (): RequestSpec => orders.request(sequence++);

    // Warm-up: JIT, connection pools, Redis scripts loaded; not measured. One round's worth per side (300 in a quick
    // run): after 300, both sides still ran faster round after round (2026-11-28: the bare receiver 1 773 → 3 965
    // requests a second over five rounds), so the side a round started with decided part of its ratio.
    const warmUp = flags.quick ? Math.min(300, perRound) : perRound;
    for (const side of sides) await closedLoop(side.load, { total: warmUp, concurrency, make });
    await drain(sides);

    const maxRate: Record<Side['name'], LoadResult[]> = { baseline: [], relais: [] };
    const cpuPerRequest: Record<Side['name'], number[]> = { baseline: [], relais: [] };
    // What the process asked of Redis and of the kernel per request: steadier than time on a shared machine.
    const redisPerRequest: Record<Side['name'], number[]> = { baseline: [], relais: [] };
    const syscallsPerRequest: Record<Side['name'], number[]> = { baseline: [], relais: [] };
    const throughputRatios: number[] = [];
    const p99Ratios: number[] = [];
    const cpuRatios: number[] = [];
    const perfFile = join(stack.logDir, 'relais-web.perf.data');
    const perf = flags.perf ? recordPerf(relais.pid, perfFile) : undefined;
    for (let round = 0; round < rounds; round++) {
      // Alternate who goes first, so a drift in machine load does not favour one side.
      const order = round % 2 === 0 ? sides : [...sides].reverse();
      const results = new Map<Side['name'], LoadResult>();
      for (const side of order) {
        const before = await side.process.stats();
        const result = await closedLoop(side.load, { total: perRound, concurrency, make, maxDurationMs: 120_000 });
        const after = await side.process.stats();
        if (result.ok !== perRound)
          throw new Error(
            `${side.name}: ${result.ok}/${perRound} answered 2xx (${JSON.stringify(result.statuses)}; ${result.firstError ?? ''})`,
          );
        results.set(side.name, result);
        maxRate[side.name].push(result);
        cpuPerRequest[side.name].push(cpuMsBetween(before, after) / perRound);
        redisPerRequest[side.name].push((after.redisCommands - before.redisCommands) / perRound);
        syscallsPerRequest[side.name].push((after.syscalls - before.syscalls) / perRound);
        await drain(sides);
      }
      const b = results.get('baseline');
      const r = results.get('relais');
      if (!b || !r) throw new Error('a side did not run');
      throughputRatios.push(r.throughput / b.throughput);
      p99Ratios.push(percentile(r.latenciesMs, 99) / percentile(b.latenciesMs, 99));
      cpuRatios.push(cpuPerRequest.relais.at(-1)! / cpuPerRequest.baseline.at(-1)!);
      console.log(
        `round ${round + 1}/${rounds}: baseline ${fmt(b.throughput, 0)} req/s p99 ${fmt(percentile(b.latenciesMs, 99), 1)} ms | relais ${fmt(r.throughput, 0)} req/s p99 ${fmt(percentile(r.latenciesMs, 99), 1)} ms`,
      );
    }

    await perf?.stop();

    // Open loop at fixed rates: half the baseline's maximum (the target), and half Relais's own maximum
    // (what it acknowledges when it is not saturated). A request not answered within the timeout, or not
    // sent because 512 were already waiting, counts as slower than every answered one.
    const rates = [
      {
        label: "half the baseline's max",
        rate: Math.max(1, Math.round(median(maxRate.baseline.map((r) => r.throughput)) / 2)),
      },
      {
        label: "half relais's own max",
        rate: Math.max(1, Math.round(median(maxRate.relais.map((r) => r.throughput)) / 2)),
      },
    ];
    const openRounds = Math.max(1, Math.ceil(rounds / 2));
    const ack = new Map<
      string,
      {
        p50: number[];
        p99: number[];
        unanswered: number;
        due: number;
        skipped: number;
        failed: number;
        refused: number;
        firstError?: string;
      }
    >();
    for (const { rate } of rates) {
      for (let round = 0; round < openRounds; round++) {
        const order = round % 2 === 0 ? [...sides].reverse() : sides;
        for (const side of order) {
          const result = await openLoop(side.load, {
            ratePerSecond: rate,
            durationMs: openLoopMs,
            make,
            maxInFlight: 512,
            timeoutMs: 10_000,
          });
          const unanswered = result.failed + result.skipped + result.refused;
          const all = [...result.latenciesMs, ...Array.from({ length: unanswered }, () => Number.POSITIVE_INFINITY)];
          const key = `${side.name}@${rate}`;
          const entry = ack.get(key) ?? { p50: [], p99: [], unanswered: 0, due: 0, skipped: 0, failed: 0, refused: 0 };
          entry.skipped += result.skipped;
          entry.failed += result.failed;
          entry.refused += result.refused;
          entry.firstError ??= result.firstError;
          entry.p50.push(percentile(all, 50));
          entry.p99.push(percentile(all, 99));
          entry.unanswered += unanswered;
          entry.due += all.length;
          ack.set(key, entry);
          await drain(sides);
          // Let the side catch up before the next run, so one side's backlog never lands on the other.
          await sleep(2_000);
        }
      }
    }
    const ackText = (name: Side['name'], rate: number) => {
      const entry = ack.get(`${name}@${rate}`);
      if (!entry) return '-';
      const p99 = median(entry.p99);
      const p50 = median(entry.p50);
      const ms = (v: number) => (Number.isFinite(v) ? `${fmt(v, 1)} ms` : '> 10 s');
      const why = `${entry.skipped} not sent (512 already waiting), ${entry.failed} without answer${entry.firstError ? ` [${entry.firstError}]` : ''}, ${entry.refused} non-2xx`;
      return `${ms(p50)} / ${ms(p99)}${entry.unanswered ? ` (${entry.unanswered} of ${entry.due} not acknowledged: ${why})` : ''}`;
    };

    const tp = spread(throughputRatios);
    const p99 = spread(p99Ratios);
    console.log('');
    console.log(
      table([
        [
          'side',
          'max req/s (median)',
          'p50 ms',
          'p99 ms',
          'CPU ms/request',
          'Redis commands/request',
          'read+write syscalls/request',
          ...rates.map((r) => `ack p50 / p99 at ${r.rate} req/s`),
        ],
        ...sides.map((s) => [
          s.name,
          fmt(median(maxRate[s.name].map((r) => r.throughput)), 0),
          fmt(median(maxRate[s.name].map((r) => percentile(r.latenciesMs, 50))), 1),
          fmt(median(maxRate[s.name].map((r) => percentile(r.latenciesMs, 99))), 1),
          fmt(median(cpuPerRequest[s.name]), 3),
          fmt(median(redisPerRequest[s.name]), 2),
          fmt(median(syscallsPerRequest[s.name]), 2),
          ...rates.map((r) => ackText(s.name, r.rate)),
        ]),
      ]),
    );
    console.log('');
    console.log(`throughput ratio relais/baseline: ${formatSpread(tp)}  → ${verdict(tp.median, { atLeast: 0.9 })}`);
    console.log(`p99 latency ratio relais/baseline: ${formatSpread(p99)}  → ${verdict(p99.median, { atMost: 1.5 })}`);
    console.log(
      `server CPU per request ratio relais/baseline (steadier than wall time on a shared machine): ${formatSpread(spread(cpuRatios))}  → ${verdict(median(cpuRatios), { atMost: 1.3 })}`,
    );
    if (perf)
      printPerfReport(
        "Relais's web process, in the max-rate rounds,",
        { file: perfFile, pid: relais.pid },
        median(cpuPerRequest.relais),
        'request',
      );
    for (const { label, rate } of rates) {
      const relaisAck = median(ack.get(`relais@${rate}`)?.p99 ?? []);
      console.log(
        `relais p99 acknowledgement at ${rate} req/s (${label}): ${ackText('relais', rate)}  → ${verdict(relaisAck, { below: 250 })}${label.includes('baseline') ? ' (the target)' : ''}`,
      );
    }
  } finally {
    for (const side of sides) {
      side.load.close();
      await side.queue.close();
    }
    for (const child of started) await child.stop();
    await stack.stop();
  }
}

/** Nothing consumes the queues here: empty them between runs so Redis holds the same amount for each side. */
async function drain(sides: Side[]): Promise<void> {
  for (const side of sides) await side.queue.drain(true);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
