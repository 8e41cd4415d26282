/**
 * HTTP plumbing: the Express apps, call recording, and servers that can be closed for real.
 *
 * Express 5 rather than bare node:http: its router gives readable route tables, its JSON parser brings
 * a body limit and typed errors (mapped to 400 MALFORMED_JSON / 413), and async handlers' rejections
 * reach the error middleware (which answers in the wire profile's error shape). What Express does not do, done here: every socket is tracked, so close()
 * also ends keep-alive connections and requests held by the 'timeout' fault instead of waiting forever.
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import express, { type Express, type RequestHandler } from 'express';
import type { Logger } from '../relais.js';
import type { EmulatorClock } from './clock.js';
import { setContext } from './context.js';
import type { EmulatorCore } from './core.js';
import { errorMiddleware, notFoundRoute } from './http-errors.js';
import { ADMIN_PREFIX, adminRouter } from './routes/admin.js';
import { apiRouter } from './routes/api.js';
import { operationFor } from './routes/patterns.js';
import { publicRouter } from './routes/public.js';
import type { RecordedCall } from './types.js';

export const DEFAULT_BODY_LIMIT_BYTES = 100 * 1024;

function isAdminPath(path: string): boolean {
  return path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`);
}

/** Records every service call (admin calls excepted) and logs it at debug: operation, org, status, ms. Never headers. */
function recordCalls(log: RecordedCall[], clock: EmulatorClock, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const record: RecordedCall = {
      operation: operationFor(req.method, req.path),
      method: req.method,
      path: req.path,
      status: 0,
      at: new Date(clock.now()).toISOString(),
    };
    setContext(req, { record });
    if (isAdminPath(req.path)) return next();
    log.push(record);
    const started = performance.now();
    res.on('close', () => {
      record.status = res.headersSent ? res.statusCode : 0;
      logger.debug(
        {
          operation: record.operation,
          org: record.orgId,
          status: record.status,
          fault: record.fault,
          ms: Math.round(performance.now() - started),
        },
        'dispatch emulator call',
      );
    });
    next();
  };
}

function baseApp(core: EmulatorCore, calls: RecordedCall[], bodyLimitBytes: number): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(recordCalls(calls, core.clock, core.logger));
  // Any content type is read as JSON: a client that forgets the header still gets a precise error.
  app.use(express.json({ limit: bodyLimitBytes, type: () => true }));
  return app;
}

function finish(app: Express, core: EmulatorCore): void {
  app.use(notFoundRoute(core.dialect.profile));
  app.use(errorMiddleware(core.logger, core.dialect.profile));
}

export function buildApps(
  core: EmulatorCore,
  calls: RecordedCall[],
  options: { separateTracking: boolean; bodyLimitBytes: number },
): { main: Express; tracking?: Express } {
  const main = baseApp(core, calls, options.bodyLimitBytes);
  main.use(adminRouter(core, () => calls.map((c) => ({ ...c }))));
  main.use(apiRouter(core));
  if (!options.separateTracking) main.use(publicRouter(core));
  finish(main, core);
  if (!options.separateTracking) return { main };

  const tracking = baseApp(core, calls, options.bodyLimitBytes);
  tracking.use(publicRouter(core));
  finish(tracking, core);
  return { main, tracking };
}

export interface ClosableServer {
  port: number;
  close(): Promise<void>;
}

export async function listen(app: Express, host: string, port: number): Promise<ClosableServer> {
  const server: Server = createServer(app);
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('dispatch emulator: server has no TCP address');
  let closing: Promise<void> | undefined;
  return {
    port: address.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
