/**
 * A private, real Redis Cluster per test file: three `redis-server --cluster-enabled yes` masters on free
 * ports in a temporary directory, joined by `redis-cli --cluster create` (no replicas), killed afterwards.
 * Never REDIS_URL's server: the point is a cluster.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { freePort, startRedisServer } from './redis.js';

const run = promisify(execFile);

export interface TestRedisCluster {
  /** The masters as `127.0.0.1:port`, the form REDIS_CLUSTER_NODES takes. */
  nodes: string[];
  /** A cluster client, closed by stop(). */
  client(): Cluster;
  /** How many keys matching `pattern` each master holds, by `host:port` (a SCAN of every master). */
  keysPerMaster(pattern: string): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

export async function startRedisCluster(masters = 3): Promise<TestRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'relais-redis-cluster-'));
  const ports: number[] = [];
  const children: ChildProcess[] = [];
  const clients: (Cluster | Redis)[] = [];
  const stop = async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
    await Promise.all(
      children
        .filter((child) => child.exitCode === null)
        .map((child) => {
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGKILL');
          return exited;
        }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      // freePort() releases the port before redis-server binds it: ask one at a time, each then taken at once.
      // The cluster bus gets a free port of its own: the default (port + 10000) may be taken, or past 65535.
      const port = await freePort();
      const busPort = await freePort();
      ports.push(port);
      children.push(
        await startRedisServer(port, [
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(busPort),
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--dir',
          dir,
        ]),
      );
    }
    const nodes = ports.map((p) => `127.0.0.1:${p}`);
    await run('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], {
      timeout: 30_000,
    });
    for (const port of ports) await untilClusterOk(port);
    return {
      nodes,
      client() {
        const c = new Cluster(
          ports.map((port) => ({ host: '127.0.0.1', port })),
          { redisOptions: { maxRetriesPerRequest: null } },
        );
        c.on('error', () => undefined); // failures surface through the commands
        clients.push(c);
        return c;
      },
      async keysPerMaster(pattern) {
        const counts: Record<string, number> = {};
        for (const port of ports) {
          const node = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
          try {
            let cursor = '0';
            let count = 0;
            do {
              const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
              cursor = next;
              count += keys.length;
            } while (cursor !== '0');
            counts[`127.0.0.1:${port}`] = count;
          } finally {
            node.disconnect();
          }
        }
        return counts;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw new Error(`the Redis Cluster did not start: ${(error as Error).message}`);
  }
}

/** Every node must see every slot served before a client is pointed at the cluster. */
async function untilClusterOk(port: number): Promise<void> {
  const node = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 });
  try {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const info = String(await node.call('CLUSTER', 'INFO'));
      if (info.includes('cluster_state:ok')) return;
      if (Date.now() > deadline) throw new Error(`node ${port} never reached cluster_state:ok: ${info}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    node.disconnect();
  }
}
