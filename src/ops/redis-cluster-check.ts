/**
 * `relais doctor` on a Redis Cluster (REDIS_CLUSTER_NODES): the cluster's state as the first answering seed
 * sees it, then every master it lists checked as a single server (reachable, persistence, eviction), since a
 * master that evicts or forgets loses the jobs of the slots it serves.
 */
import { Redis } from 'ioredis';
import { clusterSeeds } from '../redis.js';
import { messageOf, type CheckResult } from '../domain/checks.js';

type NodeCheck = (url: string, timeoutMs: number) => Promise<CheckResult[]>;

export async function checkRedisCluster(
  seeds: string[],
  timeoutMs: number,
  checkNode: NodeCheck,
): Promise<CheckResult[]> {
  const { nodes, options } = clusterSeeds(seeds);
  // Credentials and TLS of the first seed, as the cluster client applies them to every node.
  const urlOf = (host: string, port: number) => {
    const url = new URL(`${options.tls ? 'rediss' : 'redis'}://${host}:${port}`);
    if (options.username) url.username = encodeURIComponent(options.username);
    if (options.password) url.password = encodeURIComponent(options.password);
    return url.toString();
  };
  const failures: string[] = [];
  for (const seed of nodes) {
    const node = new Redis(urlOf(seed.host, seed.port), {
      connectTimeout: timeoutMs,
      commandTimeout: timeoutMs,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    node.on('error', () => undefined); // the failure is reported through the command below
    try {
      const info = String(await node.call('CLUSTER', 'INFO'));
      const masters = mastersOf(String(await node.call('CLUSTER', 'NODES')));
      const state = /cluster_state:(\w+)/.exec(info)?.[1] ?? 'unknown';
      const perMaster = await Promise.all(
        masters.map(async (m) =>
          (await checkNode(urlOf(m.host, m.port), timeoutMs)).map((r) => ({ ...r, name: `${m.address} ${r.name}` })),
        ),
      );
      return [clusterStateResult(state, seed, masters.length), ...perMaster.flat()];
    } catch (error) {
      failures.push(`${seed.host}:${seed.port}: ${messageOf(error)}`);
    } finally {
      node.disconnect();
    }
  }
  return [
    {
      name: 'cluster',
      status: 'error',
      detail: `no seed node answered CLUSTER INFO (${failures.join('; ')})`,
      fix: 'start the cluster, or correct REDIS_CLUSTER_NODES (host:port of its nodes, comma-separated)',
    },
  ];
}

function clusterStateResult(state: string, seed: { host: string; port: number }, masters: number): CheckResult {
  const detail = `cluster_state:${state} as ${seed.host}:${seed.port} sees it; ${masters} master${masters === 1 ? '' : 's'}`;
  if (state === 'ok') return { name: 'cluster', status: 'ok', detail };
  return {
    name: 'cluster',
    status: 'error',
    detail: `${detail}: some hash slots are not served, and every command on their keys fails`,
    fix: 'redis-cli --cluster check <host:port> says which slots and nodes; redis-cli --cluster fix repairs',
  };
}

/** The masters in a CLUSTER NODES reply (`<id> <ip:port@bus[,hostname]> <flags> …`), failed ones included. */
function mastersOf(reply: string): { address: string; host: string; port: number }[] {
  return reply
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter((fields) => fields.length > 2 && fields[2]!.split(',').includes('master'))
    .map((fields) => {
      const address = fields[1]!.split('@')[0]!;
      const colon = address.lastIndexOf(':');
      return { address, host: address.slice(0, colon), port: Number(address.slice(colon + 1)) };
    });
}
