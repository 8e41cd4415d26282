/**
 * One benchmark process: Relais's web process or worker (started exactly as `relais web|worker` does,
 * through startWeb/startWorker), or a baseline (bare receiver, bare dispatch worker, no-op worker).
 * Each runs alone in its own process so its CPU time and memory are its own, and the load generator
 * never shares its event loop.
 *
 * Started by bench/lib/processes.ts as `node dist/bench-build/bench/lib/child.js` (compiled by tsc, as production
 * runs: bench/lib/build.ts) with the configuration in BENCH_CHILD (JSON) and secrets in T_* variables (never on the
 * command line). Talks over the IPC channel: → {type:'ready', url?}, ← {type:'stats'} → {type:'stats', ...},
 * ← {type:'stop'} → exits.
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { Queue, Worker, type DefaultJobOptions } from 'bullmq';
import { z } from 'zod';
import { buildShopRegistry } from '../../src/shops/shops.js';
import { DispatchClient } from '../../src/adapters/dispatch-api/client.js';
import { NeighbourhoodResolver } from '../../src/geo/resolver.js';
import { createLogger } from '../../src/log.js';
import { startWeb } from '../../src/main/web.js';
import { startWorker } from '../../src/main/worker.js';
import { bareDispatchJob, bareReceiverApp, type BareOrderJob } from './baselines.js';
import { countStoreRequests, storeCounts } from './store-counters.js';

export const ROLES = [
  'relais-web',
  'relais-worker',
  'bare-receiver',
  'bare-worker',
  'bare-worker-4-calls',
  'noop-worker',
] as const;
export type Role = (typeof ROLES)[number];

export const childConfigSchema = z.object({
  role: z.enum(ROLES),
  redisUrl: z.string(),
  prefix: z.string(),
  /** The shop registry document (secrets as { env } references resolved from this process's T_* variables). */
  registry: z.unknown().optional(),
  concurrency: z.number().int().positive().default(10),
  lockMs: z.number().int().positive().optional(),
  logLevel: z.string().default('info'),
  /** Baselines: their queue (under `prefix`), and the dispatch service they call. */
  bareQueue: z.string().default('bare-orders'),
  dispatchBaseUrl: z.string().optional(),
  /** The bare receiver's job options (BullMQ's DefaultJobOptions); unset, retention only. */
  bareJobOptions: z.record(z.string(), z.unknown()).optional(),
});
export type ChildConfig = z.input<typeof childConfigSchema>;

export const parentMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stats') }),
  z.object({ type: z.literal('stop') }),
]);

export interface ChildStats {
  type: 'stats';
  cpuUserUs: number;
  cpuSystemUs: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  /** SQL statements and Redis commands this process sent since it started (store-counters.ts). */
  sqlStatements: number;
  redisCommands: number;
  /** Read and write system calls of the process since it started (Linux /proc/self/io; 0 elsewhere). */
  syscalls: number;
}

/** syscr + syscw from /proc/self/io: every socket read and write counts, whatever the library batched. */
function syscallCount(): number {
  try {
    const io = readFileSync('/proc/self/io', 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? 0);
    return field('syscr') + field('syscw');
  } catch {
    return 0;
  }
}

function secret(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`bench child: ${name} is not set`);
  return value;
}

async function start(config: z.output<typeof childConfigSchema>): Promise<{ url?: string; close(): Promise<void> }> {
  const logger = createLogger({ level: config.logLevel });
  const shops = () => buildShopRegistry(config.registry, (ref) => ('env' in ref ? process.env[ref.env] : undefined));
  const connection = { url: config.redisUrl, maxRetriesPerRequest: null };
  // The ledger's database, as the parent's stack made it (bench/lib/stack.ts), like any other environment of `relais`.
  const ledger = () => ({ databaseUrl: secret('DATABASE_URL'), databaseSchema: secret('RELAIS_DB_SCHEMA') });
  switch (config.role) {
    case 'relais-web': {
      const web = await startWeb({
        redisUrl: config.redisUrl,
        prefix: config.prefix,
        shops: shops(),
        logger,
        port: 0,
        ...ledger(),
      });
      return { url: web.url, close: () => web.close() };
    }
    case 'relais-worker': {
      const worker = await startWorker({
        redisUrl: config.redisUrl,
        prefix: config.prefix,
        shops: shops(),
        logger,
        resolver: NeighbourhoodResolver.load(),
        ...ledger(),
        concurrency: config.concurrency,
        ...(config.lockMs ? { lockMs: config.lockMs } : {}),
      });
      return { close: () => worker.close() };
    }
    case 'bare-receiver': {
      // The producer connection Relais uses for its queues: fail fast when Redis is down.
      const queue = new Queue<BareOrderJob>(config.bareQueue, {
        connection: { url: config.redisUrl, enableOfflineQueue: false, maxRetriesPerRequest: 1 },
        prefix: config.prefix,
        defaultJobOptions: (config.bareJobOptions as DefaultJobOptions | undefined) ?? {
          removeOnComplete: { count: 2000 },
          removeOnFail: { count: 5000 },
        },
      });
      await queue.waitUntilReady();
      const app = bareReceiverApp({ queue, secret: secret('T_SHOPIFY_CLIENT_SECRET') });
      const server = await new Promise<Server>((resolve, reject) => {
        const s = app.listen(0, '127.0.0.1', () => resolve(s));
        s.once('error', reject);
      });
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      return {
        url: `http://127.0.0.1:${port}`,
        close: async () => {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
          });
          await queue.close();
        },
      };
    }
    case 'bare-worker':
    case 'bare-worker-4-calls':
    case 'noop-worker': {
      const client =
        config.role === 'noop-worker'
          ? undefined
          : new DispatchClient({
              baseUrl: config.dispatchBaseUrl ?? '',
              apiKey: secret('T_BARE_DISPATCH_API_KEY'),
              timeoutMs: 2_000,
            });
      const processor = client
        ? bareDispatchJob(client, { lookupFirst: config.role === 'bare-worker-4-calls' })
        : async () => 'noop';
      const worker = new Worker<BareOrderJob, string>(config.bareQueue, processor, {
        connection,
        prefix: config.prefix,
        concurrency: config.concurrency,
      });
      worker.on('error', (error) => logger.error({ err: error.message }, 'bare worker error'));
      await worker.waitUntilReady();
      return {
        close: async () => {
          await worker.close();
          await client?.close();
        },
      };
    }
  }
}

async function main(): Promise<void> {
  const config = childConfigSchema.parse(JSON.parse(process.env.BENCH_CHILD ?? '{}'));
  countStoreRequests();
  const send = (message: object) => process.send?.(message);
  const running = await start(config);
  process.on('message', (raw: unknown) => {
    const message = parentMessageSchema.safeParse(raw);
    if (!message.success) return;
    if (message.data.type === 'stats') {
      const cpu = process.cpuUsage();
      const memory = process.memoryUsage();
      const stats: ChildStats = {
        type: 'stats',
        cpuUserUs: cpu.user,
        cpuSystemUs: cpu.system,
        rss: memory.rss,
        heapUsed: memory.heapUsed,
        heapTotal: memory.heapTotal,
        ...storeCounts(),
        syscalls: syscallCount(),
      };
      send(stats);
    } else {
      void running.close().then(
        () => {
          send({ type: 'stopped' });
          process.disconnect?.();
          process.exit(0);
        },
        (error: unknown) => {
          console.error(error);
          process.exit(1);
        },
      );
    }
  });
  // The parent gone (a crashed bench): do not linger holding ports and Redis connections.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', ...(running.url ? { url: running.url } : {}) });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
