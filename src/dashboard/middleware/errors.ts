/** The dashboard's last handler: a client error says what it was; anything else is logged and answers 500. */
import type { ErrorRequestHandler } from 'express';
import type { Logger } from '../../log.js';

export function dashboardErrors(logger: Logger): ErrorRequestHandler {
  return (error: Error & { status?: number; type?: string }, req, res, _next) => {
    const status = error.status && error.status >= 400 && error.status < 500 ? error.status : 500;
    if (status === 500) logger.error({ err: error.message, path: req.path }, 'dashboard error');
    if (res.headersSent) return;
    res
      .status(status)
      .type('text/plain')
      .send(status === 500 ? 'internal error (see the web process log)\n' : `${error.message}\n`);
  };
}
