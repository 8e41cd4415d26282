/**
 * Pages read Redis (sessions, queues), whose commands wait for a reconnect: without Redis, say so at once (503)
 * rather than leave the browser spinning. A page (GET) still unanswered after answerWithinMs (the database or
 * Redis connected but silent) answers 503 too; a handler finishing later finds the answer sent and stops.
 * Actions (POST) are left to finish: cutting one short would hide whether it happened.
 */
import type { RequestHandler, Response } from 'express';

function unavailable(res: Response, why: string): void {
  res
    .status(503)
    .set('Retry-After', '10')
    .type('text/plain')
    .send(`${why} Try again in a moment; /readyz says what is wrong.\n`);
}

export function answerOr503(options: { redisConnected?(): boolean; answerWithinMs: number }): RequestHandler {
  const { answerWithinMs } = options;
  return (req, res, next) => {
    if (options.redisConnected && !options.redisConnected()) {
      unavailable(res, 'Relais cannot reach Redis right now, so the dashboard cannot read orders.');
      return;
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      const watchdog = setTimeout(() => {
        if (!res.headersSent)
          unavailable(
            res,
            `The dashboard could not answer within ${Math.round(answerWithinMs / 1000)} s: the database, Redis or a service it asked is not answering.`,
          );
      }, answerWithinMs);
      res.once('close', () => clearTimeout(watchdog));
    }
    next();
  };
}
