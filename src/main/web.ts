/**
 * The web process: the Express app on a port, closed gracefully (in-flight requests finish).
 */
import type { Server } from 'node:http';
import { dashboardDepsFor, type DashboardWiring } from '../dashboard/wiring.js';
import { createApp } from '../http/app.js';
import { createRuntime, type Runtime, type RuntimeOptions } from './runtime.js';

export interface WebOptions extends RuntimeOptions {
  host?: string;
  port?: number;
  /** RELAIS_DASHBOARD_TOKEN: serves the dashboard at /dashboard. Unset: the dashboard only says how to enable it. */
  dashboardToken?: string;
  /** The dashboard's optional extras (resolver, reconciliation summaries); the token above turns it on. */
  dashboard?: Omit<DashboardWiring, 'token'>;
}

export interface RunningWeb {
  runtime: Runtime;
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function startWeb(options: WebOptions): Promise<RunningWeb> {
  const runtime = createRuntime(options);
  await Promise.all(runtime.queues.all().map((q) => q.waitUntilReady()));
  const app = createApp({
    shops: options.shops, queues: runtime.queues, redis: runtime.producer, prefix: options.prefix,
    logger: options.logger, now: runtime.now,
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
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await runtime.close();
    },
  };
}
