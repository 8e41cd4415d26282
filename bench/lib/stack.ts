/**
 * What every benchmark shares: its command-line flags, a private redis-server on 127.0.0.1, the
 * dispatch emulator with one organisation for Relais and one for the baseline, the shop registry,
 * the versions and machine conditions printed with every result, and a log directory.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import type { DispatchEmulator } from '@relais/emulators/dispatch';
import { QUEUE } from '../../src/orders/queues.js';
import { startPrivatePostgres } from '../../src/main/private-postgres.js';
import { PERF_NODE_ARGS } from './perf-profile.js';
import type { TestDatabase } from '../../test/support/postgres.js';
import type { TestRedis } from '../../test/support/redis.js';
import { randomHex, startBackingStack, type TestSecrets } from '../../test/support/stack.js';

export { RELAIS_ORG } from '../../test/support/stack.js';

/**
 * The shop's dispatch pacing raised to its maximum: the benches measure what the pipeline can do, not the
 * pacing a merchant configures (policy.dispatchCallsPerSecond, default 20 calls/s = 5 orders/s per shop,
 * shared by every worker). The pacing itself still runs (one Redis INCR per call).
 */
export const BENCH_POLICY = { dispatchCallsPerSecond: 1000 };
export const BARE_ORG = 'org_bare';

export interface BenchFlags {
  quick: boolean;
  /** Relais's own processes write a V8 CPU profile (.cpuprofile) into the log directory when they stop. */
  profile: boolean;
  rounds: number | undefined;
  orders: number | undefined;
  latencyMs: number | undefined;
  /** Orders per block (the flash sale's first burst, and each one after it). */
  block: number | undefined;
  /** The pipeline bench without its latency phase: CPU per order only (quicker, for trying a change). */
  cpuOnly: boolean;
  /** An on-CPU profile of a Relais process with Linux perf (bench/lib/perf-profile.ts): the pipeline's worker, the receiver. */
  perf: boolean;
}

/**
 * --quick (a smoke run: small counts, few rounds), --profile, --rounds N, --orders N, --latency MS, --block N,
 * --cpu-only, --perf.
 */
export function benchFlags(): BenchFlags {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      orders: { type: 'string' },
      latency: { type: 'string' },
      block: { type: 'string' },
      'cpu-only': { type: 'boolean', default: false },
      perf: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const int = (s: string | undefined, name: string) => {
    if (s === undefined) return undefined;
    const n = Number(s);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, got "${s}"`);
    return n;
  };
  return {
    quick: values.quick ?? false,
    profile: values.profile ?? false,
    rounds: int(values.rounds, 'rounds'),
    orders: int(values.orders, 'orders'),
    latencyMs: int(values.latency, 'latency'),
    block: int(values.block, 'block'),
    cpuOnly: values['cpu-only'] ?? false,
    perf: values.perf ?? false,
  };
}

export interface BenchStack {
  redis: TestRedis;
  admin: Redis;
  emulator: DispatchEmulator;
  secrets: TestSecrets;
  bareApiKey: string;
  /** The ledger's schema (on RELAIS_TEST_DATABASE_URL when set, else on a private PostgreSQL stopped with the stack). */
  db: TestDatabase;
  /** Environment for child processes: the registry's secret references, the baseline's key, the ledger's database. */
  childSecrets: Record<string, string>;
  /** Registry document with the Shopify shop (and the WooCommerce one of the test harness). */
  registry: unknown;
  prefix: string;
  logDir: string;
  versions: { node: string; bullmq: string; redis: string };
  stop(): Promise<void>;
}

/**
 * A private Redis (never REDIS_URL: a bench must not touch a shared server), configured as DESIGN.md
 * asks for production (noeviction), and the dispatch emulator on a manual clock (no courier moves, so
 * the only traffic is what the bench sends).
 */
export async function startStack(options: { shopifyAdminUrl?: string } = {}): Promise<BenchStack> {
  // A private PostgreSQL of the bench's own, stopped with the stack: left to test/support/postgres.ts, it would
  // outlive the bench's work and keep the process from exiting (its output pipes hold the event loop).
  const postgres = process.env.RELAIS_TEST_DATABASE_URL ? undefined : await startPrivatePostgres();
  const bareApiKey = `pk_live_${randomHex()}`;
  const backing = await startBackingStack({
    redisArgs: ['--maxmemory-policy', 'noeviction'],
    ...(postgres ? { databaseUrl: postgres.url } : {}),
    otherOrganisations: [{ id: BARE_ORG, name: 'Baseline bench org', apiKeys: [bareApiKey] }],
    extraEnv: { T_BARE_DISPATCH_API_KEY: bareApiKey },
  });
  const { redis, db, secrets, emulator } = backing;
  const admin = redis.client();
  const registry = backing.registryDocument({
    policy: BENCH_POLICY,
    ...(options.shopifyAdminUrl ? { shopifyAdminUrl: options.shopifyAdminUrl } : {}),
  });
  const info = (await admin.info('server')).match(/redis_version:(\S+)/)?.[1] ?? 'unknown';
  const bullmq = (
    JSON.parse(readFileSync(new URL('../../node_modules/bullmq/package.json', import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version;
  return {
    redis,
    admin,
    emulator,
    secrets,
    bareApiKey,
    db,
    childSecrets: backing.env,
    registry,
    prefix: backing.prefix,
    logDir: mkdtempSync(join(tmpdir(), 'relais-bench-')),
    versions: { node: process.version, bullmq, redis: info },
    async stop() {
      await backing.stop();
      await postgres?.stop();
    },
  };
}

/** The lines every result starts with: what ran, where, on what, under which load. */
export function header(title: string, stack: BenchStack, settings: Record<string, string | number | boolean>): string {
  const [one, five] = loadavg();
  return [
    `# ${title}`,
    `date ${new Date().toISOString()}  machine ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} free), load average ${one?.toFixed(2)} / ${five?.toFixed(2)} (1 / 5 min) at start`,
    `Node ${stack.versions.node}, BullMQ ${stack.versions.bullmq}, Redis ${stack.versions.redis} (private, 127.0.0.1)`,
    `settings ${Object.entries({ ...settings, dispatchCallsPerSecond: BENCH_POLICY.dispatchCallsPerSecond })
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(' ')}`,
    `child process logs: ${stack.logDir}`,
  ].join('\n');
}

/** Counts BullMQ 'completed' events of one or more queues as they happen (one XREAD stream each, no polling of job lists). */
export class CompletionCounter {
  readonly #events: QueueEvents[];
  #count = 0;
  #failed = 0;
  #lastAt = 0;
  #waiters: { target: number; resolve: () => void }[] = [];

  constructor(
    queues: string | string[],
    options: { redisUrl: string; prefix: string; accept?: (returnvalue: unknown) => boolean },
  ) {
    this.#events = (Array.isArray(queues) ? queues : [queues]).map(
      (queue) =>
        new QueueEvents(queue, {
          connection: { url: options.redisUrl, maxRetriesPerRequest: null },
          prefix: options.prefix,
        }),
    );
    for (const events of this.#events) {
      events.on('completed', ({ returnvalue }) => {
        if (options.accept && !options.accept(returnvalue)) return;
        this.#count += 1;
        this.#lastAt = performance.now();
        this.#waiters = this.#waiters.filter((w) => (this.#count >= w.target ? (w.resolve(), false) : true));
      });
      events.on('failed', () => {
        this.#failed += 1;
      });
    }
  }

  async ready(): Promise<void> {
    await Promise.all(this.#events.map((events) => events.waitUntilReady()));
  }

  get count(): number {
    return this.#count;
  }

  get failed(): number {
    return this.#failed;
  }

  /** performance.now() of the last accepted completion. */
  get lastAt(): number {
    return this.#lastAt;
  }

  /** Resolves when `target` completions have been counted in total; rejects after `timeoutMs`. */
  async reach(target: number, timeoutMs: number): Promise<void> {
    if (this.#count >= target) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `only ${this.#count} of ${target} jobs completed within ${timeoutMs} ms (${this.#failed} failed attempts)`,
            ),
          ),
        timeoutMs,
      );
      this.#waiters.push({ target, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#events.map((events) => events.close()));
  }
}

/**
 * Relais's orders marked ready, as they happen: shipped by the shop event's job that recorded them, or by a
 * dispatch job (a retry, a replay, reconciliation).
 */
export function readyOrderCounter(redisUrl: string, prefix: string): CompletionCounter {
  return new CompletionCounter([QUEUE.shopEvents, QUEUE.dispatch], {
    redisUrl,
    prefix,
    accept: (value) => {
      const outcome = value as { kind?: unknown; dispatch?: { kind?: unknown } } | null;
      return outcome?.kind === 'ready' || (outcome?.kind === 'dispatched' && outcome.dispatch?.kind === 'ready');
    },
  });
}

/** A Queue handle for control from the bench process (pause, drain, counts). */
export function controlQueue(name: string, stack: BenchStack, prefix = stack.prefix): Queue {
  return new Queue(name, { connection: { url: stack.redis.url, maxRetriesPerRequest: null }, prefix });
}

/** Shipments per external order id at the emulator, for the given ids: how many have none, and how many have more than one. */
export function shipmentCensus(
  emulator: DispatchEmulator,
  orgId: string,
  externalIds: Iterable<string>,
): { missing: number; duplicated: number; notReady: number; total: number } {
  const byExternal = new Map<string, { count: number; ready: boolean }>();
  for (const s of emulator.shipments(orgId)) {
    const entry = byExternal.get(s.external_order_id) ?? { count: 0, ready: false };
    entry.count += 1;
    entry.ready ||= s.status === 'READY' || s.status_history.some((h) => h.status === 'READY');
    byExternal.set(s.external_order_id, entry);
  }
  let missing = 0;
  let duplicated = 0;
  let notReady = 0;
  let total = 0;
  for (const id of externalIds) {
    total += 1;
    const entry = byExternal.get(id);
    if (!entry) missing += 1;
    else {
      if (entry.count > 1) duplicated += 1;
      if (!entry.ready) notReady += 1;
    }
  }
  return { missing, duplicated, notReady, total };
}

/** Calls the emulator answered, by operation (one pass over its call log). */
export function callsByOperation(emulator: DispatchEmulator): Record<string, number> {
  const out: Record<string, number> = {};
  for (const call of emulator.calls()) out[call.operation] = (out[call.operation] ?? 0) + 1;
  return out;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/**
 * Node flags for one of Relais's processes: a V8 CPU profile in the log directory with --profile; with --perf, its
 * JIT-compiled functions named for Linux perf.
 */
export function profileArgs(flags: BenchFlags, stack: BenchStack, name: string): string[] {
  if (flags.perf && (name === 'relais-worker' || name === 'relais-web')) return PERF_NODE_ARGS;
  return flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${stack.logDir}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
}
