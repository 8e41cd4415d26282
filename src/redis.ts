/**
 * Where Relais's Redis is, and the one place its connections are made: a single server (REDIS_URL) or a
 * Redis Cluster (REDIS_CLUSTER_NODES, the seed nodes; ioredis finds the other masters from any of them).
 *
 * On a cluster every multi-key command, script or MULTI must keep its keys in one hash slot. BullMQ's scripts
 * touch many keys of one queue, so each queue's keys share a hash tag (`queuePrefix`); Relais's own multi-key
 * writes put theirs in one slot the same way (see tariff-guard.ts). Everything else is one key per command, free
 * to land on any master.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { urlForHumans } from './log.js';

/** A connection to either kind of Redis: the commands Relais uses are the same on both. */
export type RedisClient = Redis | Cluster;

export interface RedisTarget {
  /** A single server (REDIS_URL); ignored when clusterNodes is given. */
  redisUrl: string;
  /** A Redis Cluster's seed nodes (REDIS_CLUSTER_NODES): `host:port` or `redis[s]://[user:password@]host:port`. */
  redisClusterNodes?: string[];
}

/** What differs between Relais's connections: how patient each is. */
export interface ConnectionSettings {
  maxRetriesPerRequest: number | null;
  /** false: a command fails at once while the connection is down, instead of waiting for it. */
  enableOfflineQueue?: boolean;
  connectTimeout?: number;
  commandTimeout?: number;
  /**
   * Commands issued in the same turn of the event loop leave in one write (ioredis auto-pipelining): fewer system
   * calls per command when many requests use one connection. Only for a connection with a commandTimeout (while a
   * batch is unanswered the next one waits, and the timeout is what ends that wait on a hung Redis).
   */
  enableAutoPipelining?: boolean;
  /** false for a subscriber that subscribes again itself on each reconnection (`subscribeKept`). */
  autoResubscribe?: boolean;
}

export function isCluster(target: RedisTarget): boolean {
  return (target.redisClusterNodes?.length ?? 0) > 0;
}

export function connectRedis(target: RedisTarget, settings: ConnectionSettings): RedisClient {
  if (!isCluster(target)) return new Redis(target.redisUrl, settings);
  const { nodes, options } = clusterSeeds(target.redisClusterNodes ?? []);
  const { enableOfflineQueue, enableAutoPipelining, ...perNode } = settings;
  return new Cluster(nodes, {
    enableOfflineQueue: enableOfflineQueue ?? true,
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    redisOptions: { ...options, ...perNode },
  });
}

/**
 * Subscribes `subscriber` (made with `autoResubscribe: false`) to `channel`, and again each time the connection is
 * ready after a reconnection, a failure then handed to `onFailure` (the next reconnection tries again). ioredis's own
 * resubscription sends its SUBSCRIBE with no handler: when the connection was closed before Redis answered (a process
 * shutting down while Redis flapped), its "Connection is closed." rejection went unhandled, and one ends a Node
 * process. Subscribing twice to a channel is harmless: Redis keeps one subscription.
 */
export async function subscribeKept(
  subscriber: RedisClient,
  channel: string,
  onFailure: (error: Error) => void,
): Promise<void> {
  await subscriber.subscribe(channel);
  // From now on: the first 'ready' is behind us, every later one is a reconnection.
  subscriber.on('ready', () => void subscriber.subscribe(channel).catch(onFailure));
}

/**
 * What BullMQ's Worker takes as its connection. A single server: options, from which each Worker makes its own
 * connections (as before clusters). A cluster: a Cluster instance (BullMQ cannot build one from options), which
 * each Worker duplicates for its blocking reads; the caller closes it after the Workers.
 */
export function workerConnection(target: RedisTarget): { url: string; maxRetriesPerRequest: null } | Cluster {
  if (!isCluster(target)) return { url: target.redisUrl, maxRetriesPerRequest: null };
  return connectRedis(target, { maxRetriesPerRequest: null }) as Cluster;
}

/** The seed nodes as ioredis takes them; credentials and TLS come from the first entry and apply to every node. */
export function clusterSeeds(entries: string[]): { nodes: { host: string; port: number }[]; options: RedisOptions } {
  const urls = entries.map((entry) => new URL(/^rediss?:\/\//.test(entry) ? entry : `redis://${entry}`));
  const first = urls[0];
  const options: RedisOptions = {};
  if (first?.username) options.username = decodeURIComponent(first.username);
  if (first?.password) options.password = decodeURIComponent(first.password);
  if (first?.protocol === 'rediss:') options.tls = {};
  return { nodes: urls.map((u) => ({ host: u.hostname, port: Number(u.port || 6379) })), options };
}

/** REDIS_CLUSTER_NODES split into entries; an empty value means no cluster. */
export function parseClusterNodes(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
}

/** Where Redis is, for messages: never a password. */
export function redisTargetForHumans(target: RedisTarget): string {
  if (!isCluster(target)) return urlForHumans(target.redisUrl, 'REDIS_URL');
  const { nodes } = clusterSeeds(target.redisClusterNodes ?? []);
  return `Redis Cluster (seeds ${nodes.map((n) => `${n.host}:${n.port}`).join(', ')})`;
}

/** Whether the key prefix holds a hash tag (`{…}`, non-empty): then every key made from it lands in that one slot. */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  if (open < 0) return false;
  const close = prefix.indexOf('}', open + 1);
  return close > open + 1;
}

/**
 * `name` made a hash tag when the prefix has none, for keys a multi-key command writes together: they then
 * share one slot. Under a prefix with a hash tag that one already decides the slot, and the name is left as it was.
 */
export function slotTag(prefix: string, name: string): string {
  return hasHashTag(prefix) ? name : `{${name}}`;
}

/**
 * A queue's BullMQ prefix. A prefix with a hash tag (the default `{relais}`) is used as it is: every queue in
 * that one slot, the key names unchanged. A prefix without one gets the queue's name as hash tag, so each queue's
 * keys stay in one slot, as BullMQ's scripts need, while the queues spread over the cluster's masters.
 */
export function queuePrefix(prefix: string, queue: string): string {
  return hasHashTag(prefix) ? prefix : `${prefix}:${slotTag(prefix, queue)}`;
}
