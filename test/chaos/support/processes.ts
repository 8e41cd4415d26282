/**
 * Processes the chaos scenarios kill: a redis-server they own (AOF on, restarted on the same port and
 * directory) and the web process as a child (`tsx src/main/cli.ts web`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { TestRelais } from '../../support/relais.js';
import { freePort, type TestRedis } from '../../support/redis.js';

export interface OwnedRedis extends TestRedis {
  /** The data directory (the AOF lives here and survives a restart). */
  dir: string;
  /** Kills the server (SIGKILL by default: no chance to flush anything). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port with the same directory, and waits until it answers (AOF loaded). */
  start(): Promise<void>;
}

/** A private redis-server on a fixed port and directory; `args` add to (and override) the defaults. */
export async function startOwnedRedis(options: { args?: string[] } = {}): Promise<OwnedRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'relais-chaos-redis-'));
  const prefix = `c${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
  const url = `redis://127.0.0.1:${port}`;
  const clients: Redis[] = [];
  let child: ChildProcess | undefined;

  const start = async () => {
    let output = '';
    const spawned = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--save',
        '',
        '--protected-mode',
        'yes',
        ...(options.args ?? []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    spawned.stdout?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    spawned.stderr?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child = spawned;
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined); // refused (starting) or LOADING (replaying the AOF): retried below
    const deadline = Date.now() + 15_000;
    try {
      for (;;) {
        try {
          if (probe.status !== 'ready') await probe.connect();
          await probe.ping();
          return;
        } catch {
          if (spawned.exitCode !== null || Date.now() > deadline)
            throw new Error(`redis-server did not start on port ${port}: ${output}`);
          if (probe.status === 'end' || probe.status === 'close') probe.disconnect();
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    } finally {
      probe.disconnect();
    }
  };

  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((r) => running.once('exit', r));
    running.kill(signal);
    await exited;
  };

  await start();
  return {
    url,
    port,
    prefix,
    dir,
    get process() {
      return child;
    },
    client() {
      const c = new Redis(url, { maxRetriesPerRequest: null });
      c.on('error', () => undefined); // restarts are on purpose; commands wait for the reconnect
      clients.push(c);
      return c;
    },
    kill,
    start,
    async stop() {
      await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface WebProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** `relais web` as a child process on a fixed port (the platform keeps sending to the same URL across restarts). */
export async function spawnWeb(
  relais: TestRelais,
  options: { port: number; redisUrl?: string; env?: Record<string, string> },
): Promise<WebProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'relais-web-'));
  const registry = join(dir, 'shops.json');
  writeFileSync(registry, JSON.stringify(relais.registryDocument));
  // Node with tsx's loader (not the `tsx` command, whose second process would survive a SIGKILL of the first).
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', 'web'], {
    cwd: process.cwd(),
    env: {
      PATH: `${join(process.cwd(), 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
      ...relais.env,
      REDIS_URL: options.redisUrl ?? relais.redis.url,
      RELAIS_SHOPS_FILE: registry,
      RELAIS_REDIS_PREFIX: relais.prefix,
      RELAIS_HOST: '127.0.0.1',
      PORT: String(options.port),
      LOG_LEVEL: 'info',
      ...options.env,
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
  while (!output.includes('web process listening')) {
    if (child.exitCode !== null) throw new Error(`web exited early: ${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL'); // never leave a half-started web process behind
      throw new Error(`web did not start: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://127.0.0.1:${options.port}`,
    child,
    output: () => output,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
