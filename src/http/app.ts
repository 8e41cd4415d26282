/**
 * The web process's Express application: shop webhooks, health. Bodies are read raw (signatures are
 * computed over the exact bytes) and bounded; every error answers JSON, never an HTML stack trace.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../log.js';
import { checkoutRoutes } from '../checkout/routes.js';
import { dashboardRoutes, type DashboardDeps } from '../dashboard/index.js';
import { dispatchWebhookRoutes } from './routes/dispatch-webhooks.js';
import { webhookRoutes, type WebhookDeps } from './routes/webhooks.js';

export const MAX_BODY_BYTES = 512 * 1024;

export interface AppDeps extends WebhookDeps {
  logger: Logger;
  /** The operator dashboard (src/dashboard). Absent: /dashboard only says how to enable it (RELAIS_DASHBOARD_TOKEN). */
  dashboard?: DashboardDeps;
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use('/webhooks', express.raw({ type: () => true, limit: MAX_BODY_BYTES }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await deps.redis.ping();
      res.json({ status: 'ready', redis: 'ok' });
    } catch (error) {
      res.status(503).json({ status: 'not_ready', redis: (error as Error).message });
    }
  });

  app.use(webhookRoutes(deps));
  app.use(dispatchWebhookRoutes(deps));
  app.use(checkoutRoutes(deps));
  // The operator dashboard: its own auth, HTML pages and bull-board under /dashboard (src/dashboard/router.ts).
  app.use('/dashboard', dashboardRoutes(deps.dashboard));

  app.use((_req: Request, res: Response) => {
    res.status(404).json({ error: 'not_found' });
  });
  app.use((error: Error & { status?: number; type?: string }, _req: Request, res: Response, _next: NextFunction) => {
    if (error.type === 'entity.too.large') {
      res.status(413).json({ error: 'body_too_large', message: `bodies are limited to ${MAX_BODY_BYTES} bytes` });
      return;
    }
    const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status === 500) deps.logger.error({ err: error.message }, 'unhandled error in the web process');
    res.status(status).json({ error: status === 500 ? 'internal_error' : 'bad_request', message: status === 500 ? 'internal error' : error.message });
  });
  return app;
}
