/**
 * Starting, measuring and stopping the benchmark processes of bench/lib/child.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { z } from 'zod';
import { buildBenchChildren, CHILD_ENTRY, ROOT } from './build.js';
import type { ChildConfig, ChildStats } from './child.js';

export interface BenchProcess {
  readonly name: string;
  readonly pid: number;
  /** The HTTP base URL, for the web roles. */
  readonly url: string | undefined;
  /** CPU time (µs, user + system) and memory of the process, as it reports them itself. */
  stats(): Promise<ChildStats>;
  /** Graceful stop: the process closes its servers, workers and connections, then exits. */
  stop(): Promise<void>;
}

const childMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), url: z.string().optional() }),
  z.object({
    type: z.literal('stats'),
    cpuUserUs: z.number(),
    cpuSystemUs: z.number(),
    rss: z.number(),
    heapUsed: z.number(),
    heapTotal: z.number(),
    sqlStatements: z.number(),
    redisCommands: z.number(),
    syscalls: z.number(),
  }),
  z.object({ type: z.literal('stopped') }),
]);
type ChildMessage = z.infer<typeof childMessageSchema>;

/**
 * Starts one child with `config`, its secrets in `secrets` (environment), and its output appended to
 * `logFile`. Resolves once it reports ready.
 */
export async function startProcess(
  name: string,
  config: ChildConfig,
  options: {
    secrets: Record<string, string>;
    logFile: string;
    /** Extra Node flags, e.g. --cpu-prof to see where the time goes. */ nodeArgs?: string[];
  },
): Promise<BenchProcess> {
  buildBenchChildren();
  const log = openSync(options.logFile, 'a');
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), CHILD_ENTRY], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...options.secrets,
      BENCH_CHILD: JSON.stringify(config),
    },
    stdio: ['ignore', log, log, 'ipc'],
  });
  closeSync(log);
  const waiters: { type: ChildMessage['type']; resolve: (m: ChildMessage) => void }[] = [];
  let exited: string | undefined;
  child.on('message', (raw: unknown) => {
    const parsed = childMessageSchema.safeParse(raw);
    if (!parsed.success) return;
    const index = waiters.findIndex((w) => w.type === parsed.data.type);
    if (index >= 0) waiters.splice(index, 1)[0]?.resolve(parsed.data);
  });
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = `exited (${signal ?? code ?? '?'})`;
      resolve();
    });
  });
  const next = <T extends ChildMessage['type']>(
    type: T,
    timeoutMs: number,
  ): Promise<Extract<ChildMessage, { type: T }>> =>
    new Promise((resolve, reject) => {
      if (exited) return reject(new Error(`${name} ${exited}; see ${options.logFile}`));
      const timer = setTimeout(
        () => reject(new Error(`${name}: no '${type}' within ${timeoutMs} ms; see ${options.logFile}`)),
        timeoutMs,
      );
      const onExit = () => reject(new Error(`${name} ${exited ?? 'exited'}; see ${options.logFile}`));
      void exitPromise.then(onExit);
      waiters.push({
        type,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m as Extract<ChildMessage, { type: T }>);
        },
      });
    });

  const ready = await next('ready', 60_000);
  return {
    name,
    pid: child.pid ?? -1,
    url: ready.url,
    async stats() {
      const answer = next('stats', 10_000);
      child.send({ type: 'stats' });
      const { type: _type, ...rest } = await answer;
      return { type: 'stats', ...rest };
    },
    async stop() {
      if (exited) return;
      child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exitPromise;
      clearTimeout(timer);
    },
  };
}

/** CPU milliseconds spent by a process between two stats readings. */
export function cpuMsBetween(before: ChildStats, after: ChildStats): number {
  return (after.cpuUserUs + after.cpuSystemUs - before.cpuUserUs - before.cpuSystemUs) / 1000;
}
