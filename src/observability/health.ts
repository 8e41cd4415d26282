/**
 * Health for orchestrators and load balancers:
 *   /healthz  the process is up and its event loop answers (no dependency is consulted: a Redis outage
 *             must not get every replica restarted);
 *   /readyz   the process can do its work now: each probe answers within a short bound, and the process
 *             is not shutting down. 503 with the reason of each failed probe otherwise.
 * Also the worker's own small HTTP server (it has no Express app) for /metrics, /healthz and /readyz.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import type { CountableQueue, RelaisMetrics } from './metrics.js';
import { withTimeout } from './with-timeout.js';

export interface Probe {
  name: string;
  check(): Promise<void>;
  /**
   * False for a dependency the process can do its main work without: its failure is reported in the answer but
   * the process stays ready (the web process takes webhooks into Redis while PostgreSQL is away).
   */
  required?: boolean;
}

export interface Readiness {
  ready: boolean;
  /** Probe name → 'ok' or why it failed. */
  checks: Record<string, string>;
  /** Set when the process is draining after SIGTERM. */
  shuttingDown?: boolean;
}

/** A probe slower than this counts as failed: a readiness check must answer fast. */
export const PROBE_TIMEOUT_MS = 1_000;

export async function checkReadiness(
  probes: readonly Probe[],
  options: { timeoutMs?: number; shuttingDown?: boolean } = {},
): Promise<Readiness> {
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  const results = await Promise.all(
    probes.map(async (probe) => {
      try {
        await withTimeout(probe.check(), timeoutMs);
        return [probe.name, 'ok', probe.required !== false] as const;
      } catch (error) {
        return [probe.name, error instanceof Error ? error.message : String(error), probe.required !== false] as const;
      }
    }),
  );
  const checks = Object.fromEntries(results.map(([name, outcome]) => [name, outcome]));
  const shuttingDown = options.shuttingDown === true;
  return {
    ready: !shuttingDown && results.every(([, outcome, required]) => outcome === 'ok' || !required),
    checks,
    ...(shuttingDown ? { shuttingDown } : {}),
  };
}

/** Redis answers PING. */
export function redisProbe(redis: { ping(): Promise<unknown> }): Probe {
  return { name: 'redis', check: async () => void (await redis.ping()) };
}

/** The ledger's PostgreSQL answers a query. */
export function databaseProbe(
  db: { query(sql: string): Promise<unknown> },
  options: { required?: boolean } = {},
): Probe {
  return { name: 'database', check: async () => void (await db.query('SELECT 1')), ...options };
}

/** Each queue answers a count (the queue's own connection and keys, not just the server). */
export function queuesProbe(queues: readonly CountableQueue[]): Probe {
  return { name: 'queues', check: async () => void (await Promise.all(queues.map((q) => q.getJobCounts('waiting')))) };
}

/** Every BullMQ worker is still taking jobs. */
export function workersProbe(workers: readonly { name: string; isRunning(): boolean }[]): Probe {
  return {
    name: 'workers',
    check: async () => {
      const stopped = workers.filter((w) => !w.isRunning()).map((w) => w.name);
      if (stopped.length > 0) throw new Error(`not running: ${stopped.join(', ')}`);
    },
  };
}

/** The answer of /readyz: 200 when ready, 503 with the reasons otherwise. */
export function readinessBody(readiness: Readiness): { status: number; body: Record<string, unknown> } {
  if (readiness.ready) return { status: 200, body: { status: 'ready', ...readiness.checks } };
  return { status: 503, body: { status: readiness.shuttingDown ? 'shutting_down' : 'not_ready', ...readiness.checks } };
}

/**
 * Whether a scrape may read /metrics: with `Authorization: Bearer <token>` when a token is configured.
 * Without one, only where the caller says the port is private (`openWithoutToken`: the worker's server
 * bound to a loopback address); never on the web process, whose port faces the internet.
 */
export function metricsAllowed(req: IncomingMessage, token: string | undefined, openWithoutToken = false): boolean {
  if (token === undefined) return openWithoutToken;
  const header = req.headers.authorization ?? '';
  const given = Buffer.from(header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Writes the exposition text (or 401, saying how to get access). Works for Express responses too (they are ServerResponses). */
export async function writeMetrics(
  metrics: RelaisMetrics,
  req: IncomingMessage,
  res: ServerResponse,
  token?: string,
  openWithoutToken = false,
): Promise<void> {
  if (!metricsAllowed(req, token, openWithoutToken)) {
    const body =
      token === undefined
        ? {
            error: 'metrics_token_required',
            message: 'set RELAIS_METRICS_TOKEN (openssl rand -hex 32) and scrape with Authorization: Bearer <token>',
          }
        : { error: 'unauthorized' };
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end(JSON.stringify(body));
    return;
  }
  const text = await metrics.text();
  res.writeHead(200, { 'content-type': metrics.contentType }).end(text);
}

/** 127.0.0.0/8, ::1 and localhost: a server bound there is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export interface OpsServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  metrics: RelaisMetrics;
  readiness(): Promise<Readiness>;
  /** Required for /metrics; unset, /metrics answers only when `host` is a loopback address. */
  metricsToken?: string;
  logger: Logger;
}

export interface OpsServer {
  url: string;
  close(): Promise<void>;
}

/** The worker's HTTP server: GET /metrics, /healthz, /readyz, nothing else. */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { error: 'method_not_allowed' });
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      options.readiness().then(
        (readiness) => {
          const { status, body } = readinessBody(readiness);
          json(res, status, body);
        },
        (error: unknown) =>
          json(res, 503, { status: 'not_ready', error: error instanceof Error ? error.message : String(error) }),
      );
      return;
    }
    if (path === '/metrics') {
      writeMetrics(options.metrics, req, res, options.metricsToken, isLoopbackHost(options.host)).catch(
        (error: unknown) => {
          options.logger.error(
            { err: error instanceof Error ? error.message : String(error) },
            'metrics could not be collected',
          );
          if (!res.headersSent) json(res, 500, { error: 'metrics_unavailable' });
        },
      );
      return;
    }
    json(res, 404, { error: 'not_found' });
  });
  // Scrapes are short; an idle keep-alive connection must not hold the process open at shutdown.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
