/**
 * State-changing requests: never from another site, and from a browser session only with the CSRF token
 * of that session. Bearer requests come from scripts: a browser never adds that header on its own.
 * Mounted after authentication, on each action.
 */
import type { Request, RequestHandler } from 'express';
import { isCrossSite, type SessionSigner } from '../auth.js';
import type { Viewer } from './auth.js';

export function csrfCheck(signer: SessionSigner, viewerOf: (req: Request) => Viewer): RequestHandler {
  return (req, res, next) => {
    const viewer = viewerOf(req);
    if (isCrossSite(req)) {
      res.status(403).type('text/plain').send('cross-site request refused\n');
      return;
    }
    if (viewer.kind === 'session') {
      const candidate = (req.body as Record<string, unknown> | undefined)?._csrf ?? req.get('x-csrf-token');
      if (!signer.csrfValid(viewer.session, candidate)) {
        res.status(403).type('text/plain').send('missing or wrong CSRF token: reload the page and try again\n');
        return;
      }
    }
    next();
  };
}
