/**
 * An on-CPU profile of one process with Linux `perf` (--perf): what it spent its CPU on, by part of the stack.
 *
 * Why not only V8's --cpu-prof: V8 samples on a timer whether the thread runs or waits in a system call, so a
 * socket write that lost the CPU to PostgreSQL or Redis on a busy two-core machine shows as the write's own time
 * (the V8 profile of 2026-11-27 put a fifth of the worker in `writev`; perf, counting only time on a CPU, puts a
 * tenth in the whole kernel). perf counts the process's threads on a CPU, JIT-compiled JavaScript named through
 * the map file that Node writes with --perf-basic-prof.
 *
 * Needs `perf` (Debian: linux-perf) and permission to profile the process (root, or perf_event_paranoid ≤ 1).
 * KEEP_PERF_MAP=1 keeps Node's map file, so `perf script -i <log dir>/<process>.perf.data` still names the JIT frames.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { table } from './stats.js';

/** Node flags for the profiled process: JIT-compiled functions named in /tmp/perf-<pid>.map. */
export const PERF_NODE_ARGS = ['--perf-basic-prof', '--interpreted-frames-native-stack'];

/** Whether `perf` is installed and may profile here; the reason when not. */
export function perfUnavailable(): string | undefined {
  const probe = spawnSync('perf', ['stat', '-e', 'task-clock', 'true'], { encoding: 'utf8' });
  if (probe.error) return `perf is not installed (${probe.error.message}); on Debian: apt-get install linux-perf`;
  if (probe.status !== 0) return `perf cannot profile here: ${probe.stderr.trim().split('\n').at(-1) ?? ''}`;
  return undefined;
}

/** Records `pid` on a CPU (cpu-clock, ~1 kHz, with call stacks) into `file` until `stop()`. */
export function recordPerf(pid: number, file: string): { stop(): Promise<void> } {
  const child: ChildProcess = spawn(
    'perf',
    ['record', '-e', 'cpu-clock', '-F', '997', '-g', '-p', String(pid), '-o', file, '--quiet'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGINT');
      }),
  };
}

/**
 * Where a sample's CPU went: the first rule matching a frame, from the innermost frame outwards (so a JSON.parse
 * inside the PostgreSQL client counts as the client's). Paths are the project's and its packages'.
 */
const PARTS: ReadonlyArray<readonly [string, RegExp]> = [
  ['drop-off resolution (src/geo)', /\/src\/geo\//],
  ['logging (pino)', /node_modules\/(pino|sonic-boom)\/|\/src\/log\.ts/],
  ['metrics (prom-client)', /node_modules\/prom-client\/|\/src\/observability\//],
  ['PostgreSQL client (pg) and the ledger', /node_modules\/pg[-/]|node_modules\/postgres-|\/src\/adapters\/postgres\//],
  ['BullMQ', /node_modules\/(bullmq|msgpackr)\//],
  [
    'Redis client (ioredis), order lock, pacing',
    /node_modules\/(ioredis|redis-parser|denque)\/|\/src\/orders\/(redis-script|order-lock|rate-limit)\.ts/,
  ],
  [
    'HTTP (worker: the dispatch client; web: requests served)',
    /\/src\/adapters\/dispatch-api\/http\.ts|node:_http|node:http\b/,
  ],
  ['dispatch wire profile and gateway', /\/src\/adapters\/dispatch-api\/|\/src\/orders\/delivery-gateway\.ts/],
  [
    'shop platform code: verifying, normalising (incl. zod)',
    /\/src\/adapters\/(shopify|woocommerce)\/|\/src\/shops\/platforms\/|node_modules\/zod\//,
  ],
  ['webhook routes (src/http)', /\/src\/http\//],
  ['Express', /node_modules\/(express|router|body-parser|raw-body|finalhandler|send|serve-static)\//],
  ['dispatch steps (src/orders/dispatch)', /\/src\/orders\/dispatch\//],
  ['other Relais code', /\/src\//],
  ['sockets and streams (node:net)', /node:net\b|node:internal\/streams|stream_base_commons/],
  ['garbage collection', /Scavenge|MarkCompact|Heap::|GCTracer|Sweeper|ConcurrentMarking|MinorMS/],
  ['JIT compiler', /v8::internal::compiler|maglev|turboshaft|Compiler::|BaselineBatchCompiler/],
  ['event loop: I/O polling', /uv__io_poll|uv__read|uv__stream_io|epoll/],
  [
    'event loop: promises, timers, immediates',
    /RunMicrotasks|processTicksAndRejections|CheckImmediate|uv__run_timers|listOnTimeout|processTimers/,
  ],
];

export interface PerfSummary {
  samples: number;
  /** Share of the samples per part, largest first. */
  parts: Array<{ part: string; share: number }>;
}

/** Reads the recording (perf script) and sums its samples by part of the stack. Removes the process's map file. */
function summarisePerf(file: string, pid: number): PerfSummary {
  const script = spawnSync('perf', ['script', '-i', file], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (!process.env.KEEP_PERF_MAP) rmSync(`/tmp/perf-${pid}.map`, { force: true });
  if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr}`);
  const counts = new Map<string, number>();
  let samples = 0;
  for (const block of script.stdout.split('\n\n')) {
    const frames = block
      .split('\n')
      .slice(1)
      .map((line) => line.trim())
      .filter((line) => line !== '');
    if (frames.length === 0) continue;
    samples++;
    const part = partOf(frames);
    counts.set(part, (counts.get(part) ?? 0) + 1);
  }
  const parts = [...counts]
    .map(([part, n]) => ({ part, share: n / Math.max(samples, 1) }))
    .sort((a, b) => b.share - a.share);
  return { samples, parts };
}

function partOf(frames: string[]): string {
  for (const frame of frames) for (const [part, pattern] of PARTS) if (pattern.test(frame)) return part;
  return 'other (Node and V8 internals)';
}

/**
 * Reads the recording and prints where `what` spent its CPU, with each part's share of `cpuMsPerUnit` (its CPU per order
 * or request as the bench measured it: with --perf-basic-prof, a little above an unprofiled run's).
 */
export function printPerfReport(
  what: string,
  recording: { file: string; pid: number },
  cpuMsPerUnit: number,
  unit: string,
): void {
  const summary = summarisePerf(recording.file, recording.pid);
  console.log('');
  console.log(
    `where ${what} spent its CPU (perf, on-CPU, ${summary.samples} samples; with --perf it runs with --perf-basic-prof, so its CPU figures above are not for the targets):`,
  );
  console.log(table(perfTable(summary, cpuMsPerUnit, unit)));
}

/** The summary as a table: each part's share of the process's CPU, and of `cpuMsPerUnit` (CPU per order or request). */
function perfTable(summary: PerfSummary, cpuMsPerUnit: number, unit: string): string[][] {
  return [
    ['part', 'share', `ms per ${unit}`],
    ...summary.parts.map(({ part, share }) => [
      part,
      `${(share * 100).toFixed(1)} %`,
      (share * cpuMsPerUnit).toFixed(3),
    ]),
  ];
}
