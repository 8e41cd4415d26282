/**
 * A private, real redis-server per test file: started on a free port, with no persistence, and killed
 * afterwards. When REDIS_URL is set the tests use that server instead (each file then works under its
 * own key prefix so files never see each other's keys).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';

export interface TestRedis {
  url: string;
  port: number;
  /** A key prefix unique to this server handle. */
  prefix: string;
  client(): Redis;
  /** Stops the server (only a private one). */
  stop(): Promise<void>;
  /** For fault tests: the private server's process. */
  process: ChildProcess | undefined;
}

export { freePort } from '../../src/main/private-postgres.js';
import { freePort } from '../../src/main/private-postgres.js';

export async function startRedis(options: { extraArgs?: string[] } = {}): Promise<TestRedis> {
  const prefix = `t${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
  const clients: Redis[] = [];
  const makeClient = (url: string) => () => {
    const c = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
    c.on('error', () => undefined); // a test that stops Redis on purpose sees errors through its commands
    clients.push(c);
    return c;
  };
  const closeClients = async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
  };

  if (process.env.REDIS_URL && !options.extraArgs) {
    const url = process.env.REDIS_URL;
    return {
      url,
      port: Number(new URL(url).port || 6379),
      prefix,
      client: makeClient(url),
      stop: closeClients,
      process: undefined,
    };
  }

  const port = await freePort();
  const child = await startRedisServer(port, options.extraArgs ?? []);
  const url = `redis://127.0.0.1:${port}`;
  return {
    url,
    port,
    prefix,
    client: makeClient(url),
    process: child,
    stop: async () => {
      await closeClients();
      // Stopping twice is harmless: a server already killed (exit code or signal set) is not waited for again.
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/**
 * A redis-server on 127.0.0.1:`port` without persistence (`extraArgs` added or overriding), once it answers
 * PING; killed and reported with its output if it does not within 10 s.
 */
export async function startRedisServer(port: number, extraArgs: string[]): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--protected-mode',
      'yes',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  // Refused connections are expected while the server starts; they are retried below.
  probe.on('error', () => undefined);
  const deadline = Date.now() + 10_000;
  try {
    for (;;) {
      try {
        await probe.connect();
        await probe.ping();
        return child;
      } catch {
        if (child.exitCode !== null || Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`redis-server did not start on port ${port}: ${output}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } finally {
    probe.disconnect();
  }
}
