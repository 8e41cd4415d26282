/**
 * Who may use the dashboard, as Express middleware: the login form (public), the check every other
 * request passes (a session cookie, or the token as `Authorization: Bearer` for scripts), and logout.
 * The check records the request's viewer (`viewerOf`), which the CSRF check and the pages read.
 *
 * The building blocks (signed sessions, constant-time comparison, the throttle of wrong tokens) are in
 * ../auth.ts; this file decides what a request gets.
 */
import { Router, type Request, type RequestHandler } from 'express';
import type { Logger } from '../../log.js';
import {
  bearerToken, clearCookie, isCrossSite, readCookie, secretsEqual, SESSION_COOKIE, setCookie, type LoginThrottle, type Session, type SessionSigner,
} from '../auth.js';
import { loginPage } from '../layout.js';
import type { SessionRevocations } from '../ports.js';
import { form } from './forms.js';

export type Viewer = { kind: 'session'; session: Session; csrf: string } | { kind: 'bearer' };

export interface AuthDeps {
  /** RELAIS_DASHBOARD_TOKEN. */
  token: string;
  signer: SessionSigner;
  throttle: LoginThrottle;
  revocations: SessionRevocations;
  sessionTtlMs: number;
  nowMs(): number;
  logger: Logger;
}

export interface DashboardAuth {
  /** GET and POST /login: the only pages open without a session. */
  login: Router;
  /** Lets a request through with a live session or the right bearer token; otherwise to the login page (pages) or 401. */
  authenticate: RequestHandler;
  /** POST /logout, after the CSRF check: the session is revoked for good. */
  logout: RequestHandler;
  /** The viewer `authenticate` let through; throws for a request that did not pass it. */
  viewerOf(req: Request): Viewer;
}

/** Only paths inside the dashboard are followed after login: never an open redirect. */
export function safeNext(candidate: unknown): string {
  if (typeof candidate !== 'string') return '/dashboard/orders';
  if (!/^\/dashboard(\/[A-Za-z0-9\-._~%:/?=&+]*)?$/.test(candidate) || candidate.includes('//') || /^\/dashboard\/(login|logout)/.test(candidate)) return '/dashboard/orders';
  return candidate;
}

const clientOf = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

export function dashboardAuth(deps: AuthDeps): DashboardAuth {
  const { signer, throttle } = deps;
  const viewers = new WeakMap<Request, Viewer>();

  async function sessionOf(req: Request): Promise<Session | undefined> {
    const session = signer.verify(readCookie(req, SESSION_COOKIE), deps.nowMs());
    if (!session || (await deps.revocations.isRevoked(session.id))) return undefined;
    return session;
  }

  const login = Router();
  login.get('/login', async (req, res) => {
    if (await sessionOf(req)) {
      res.redirect(303, safeNext(req.query.next));
      return;
    }
    res.type('html').send(loginPage({ next: safeNext(req.query.next), notice: req.query.bye === '1' ? 'You are logged out.' : undefined }));
  });

  login.post('/login', form, async (req, res) => {
    const client = clientOf(req);
    const next = safeNext((req.body as Record<string, unknown> | undefined)?.next);
    if (isCrossSite(req)) {
      res.status(403).type('html').send(loginPage({ next, error: 'Log in from the dashboard itself.' }));
      return;
    }
    if (throttle.blocked(client, deps.nowMs())) {
      res.status(429).type('html').send(loginPage({ next, error: 'Too many wrong tokens from this address: wait 15 minutes.' }));
      return;
    }
    const candidate = (req.body as Record<string, unknown> | undefined)?.token;
    if (typeof candidate !== 'string' || !secretsEqual(candidate, deps.token)) {
      throttle.fail(client, deps.nowMs());
      deps.logger.warn({ client }, 'dashboard login with a wrong token');
      res.status(401).type('html').send(loginPage({ next, error: 'Wrong token.' }));
      return;
    }
    throttle.succeed(client);
    const { cookieValue } = signer.issue(deps.nowMs(), deps.sessionTtlMs);
    setCookie(req, res, SESSION_COOKIE, cookieValue, deps.sessionTtlMs);
    deps.logger.info({ client }, 'dashboard login');
    res.redirect(303, next);
  });

  const authenticate: RequestHandler = async (req, res, next) => {
    const bearer = bearerToken(req);
    if (bearer !== undefined) {
      // Wrong bearer tokens count against the same per-address budget as wrong logins.
      const client = clientOf(req);
      if (throttle.blocked(client, deps.nowMs())) {
        res.status(429).type('text/plain').send('too many wrong tokens from this address: wait 15 minutes\n');
        return;
      }
      if (bearer !== '' && secretsEqual(bearer, deps.token)) {
        viewers.set(req, { kind: 'bearer' });
        next();
        return;
      }
      throttle.fail(client, deps.nowMs());
      res.status(401).set('WWW-Authenticate', 'Bearer realm="relais-dashboard"').type('text/plain').send('wrong dashboard token\n');
      return;
    }
    const session = await sessionOf(req);
    if (session) {
      viewers.set(req, { kind: 'session', session, csrf: signer.csrfToken(session) });
      next();
      return;
    }
    if (readCookie(req, SESSION_COOKIE) !== undefined) clearCookie(req, res, SESSION_COOKIE);
    if (req.method === 'GET' || req.method === 'HEAD') {
      res.redirect(303, `/dashboard/login?next=${encodeURIComponent(safeNext(req.originalUrl))}`);
      return;
    }
    res.status(401).set('WWW-Authenticate', 'Bearer realm="relais-dashboard"').type('text/plain').send('log in to the dashboard first\n');
  };

  const viewerOf = (req: Request): Viewer => {
    const viewer = viewers.get(req);
    if (!viewer) throw new Error('dashboard route reached without authentication');
    return viewer;
  };

  const logout: RequestHandler = async (req, res) => {
    const viewer = viewerOf(req);
    if (viewer.kind === 'session') await deps.revocations.revoke(viewer.session.id, viewer.session.expiresAtMs);
    clearCookie(req, res, SESSION_COOKIE);
    res.redirect(303, '/dashboard/login?bye=1');
  };

  return { login, authenticate, logout, viewerOf };
}
