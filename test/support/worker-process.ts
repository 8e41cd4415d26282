/**
 * The worker as a real child process (`relais worker`), so a test can kill it with SIGKILL at the
 * worst moment, as a crash or an OOM kill would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestRelais } from './relais.js';

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** The worker's /metrics, /healthz, /readyz server, as its start-up log line gives it. */
  opsUrl: string | undefined;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function spawnWorker(relais: TestRelais, options: { lockMs?: number } = {}): Promise<WorkerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'relais-worker-'));
  const registry = join(dir, 'shops.json');
  writeFileSync(registry, JSON.stringify(relais.registryDocument));
  // Node itself with tsx's loader, not the `tsx` command: the command runs the script in a second process and
  // cannot pass on a SIGKILL or SIGSTOP, so the real worker would outlive the crash the test means to cause.
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', 'worker'], {
    cwd: process.cwd(),
    env: {
      PATH: `${join(process.cwd(), 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
      ...relais.env,
      REDIS_URL: relais.redis.url,
      ...(relais.base.redisClusterNodes ? { REDIS_CLUSTER_NODES: relais.base.redisClusterNodes.join(',') } : {}),
      RELAIS_SHOPS_FILE: registry,
      RELAIS_REDIS_PREFIX: relais.prefix,
      RELAIS_WORKER_LOCK_MS: String(options.lockMs ?? 2_000),
      WORKER_CONCURRENCY: '4',
      // Any free port for /metrics, /healthz, /readyz: test files run side by side.
      RELAIS_WORKER_METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  // Compiling the CLI's whole import graph on a loaded 2-core machine can take well over 20 s.
  const deadline = Date.now() + 60_000;
  while (!output.includes('worker started')) {
    if (child.exitCode !== null) throw new Error(`worker exited early: ${output}`);
    if (Date.now() > deadline) {
      // Never leave a half-started worker behind: it would outlive the test run.
      child.kill('SIGKILL');
      throw new Error(`worker did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    output: () => output,
    opsUrl: /"ops":"(http:\/\/[^"]+)"/.exec(output)?.[1],
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await exited;
    },
  };
}
