/**
 * The web process: the Express app on a port, closed gracefully (in-flight requests finish, then Redis closes).
 */
import type { Server } from 'node:http';
import { dashboardDepsFor, type DashboardWiring } from '../dashboard/wiring.js';
import { createApp } from '../http/app.js';
import { UNREADY_WATCHDOG_MINUTES } from '../domain/shipment-status.js';
import { RelaisMetrics } from '../observability/metrics.js';
import { createRuntime, type Runtime, type RuntimeOptions } from './runtime.js';

export interface WebOptions extends RuntimeOptions {
  host?: string;
  port?: number;
  /** When set, GET /metrics requires `Authorization: Bearer <token>` (RELAIS_METRICS_TOKEN). */
  metricsToken?: string;
  /** How long close() lets in-flight requests finish before cutting their connections. Default 25 s. */
  shutdownGraceMs?: number;
  /** RELAIS_DASHBOARD_TOKEN: serves the dashboard at /dashboard. Unset: the dashboard only says how to enable it. */
  dashboardToken?: string;
  /** The dashboard's optional extras (resolver, reconciliation summaries); the token above turns it on. */
  dashboard?: Omit<DashboardWiring, 'token'>;
}

export interface RunningWeb {
  runtime: Runtime;
  url: string;
  server: Server;
  /** This process's metrics (served on GET /metrics). */
  metrics: RelaisMetrics;
  close(): Promise<void>;
}

/** Under Kubernetes' default 30 s between SIGTERM and SIGKILL, with room to close Redis. */
const DEFAULT_SHUTDOWN_GRACE_MS = 25_000;

export async function startWeb(options: WebOptions): Promise<RunningWeb> {
  const runtime = createRuntime(options);
  await Promise.all(runtime.queues.all().map((q) => q.waitUntilReady()));
  const metrics = new RelaisMetrics();
  metrics.watchQueues(runtime.queues.all());
  // The watchdog figure: shipments with no recorded markReady past the tightest shop bound.
  const boundMinutes = Math.min(...options.shops.all().map((s) => s.policy.unreadyAlertMinutes), UNREADY_WATCHDOG_MINUTES);
  metrics.watchUnready(() => runtime.ledger.countUnready(new Date(runtime.now().getTime() - boundMinutes * 60_000)));
  let shuttingDown = false;
  const app = createApp({
    shops: options.shops, queues: runtime.queues, redis: runtime.producer, prefix: options.prefix,
    logger: options.logger, now: runtime.now,
    metrics, metricsToken: options.metricsToken, shuttingDown: () => shuttingDown,
    dashboard: options.dashboardToken ? dashboardDepsFor(runtime, { ...options.dashboard, token: options.dashboardToken }) : undefined,
  });
  const host = options.host ?? '127.0.0.1';
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(options.port ?? 0, host, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${host}:${String(port)}`;
  options.logger.info({ url }, 'web process listening');
  return {
    runtime,
    url,
    server,
    metrics,
    async close() {
      // Stop accepting, let in-flight requests (a webhook being read, verified, enqueued) finish, then close Redis:
      // an event is answered 200 only once stored, so nothing acknowledged is lost.
      shuttingDown = true;
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          options.logger.warn('requests still in flight after the shutdown grace period: closing their connections');
          server.closeAllConnections();
        }, options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
      await runtime.close();
    },
  };
}
