/**
 * Who may use the dashboard, as Express middleware: the login form (public), the check every other
 * request passes (a session cookie, or the token as `Authorization: Bearer` for scripts), and logout.
 * The check records the request's viewer (`viewerOf`), which the CSRF check and the pages read.
 *
 * The building blocks (signed sessions, constant-time comparison) are in ../auth.ts, the throttle of wrong
 * tokens in ../login-throttle.ts; this file decides what a request gets.
 *
 * Wrong tokens, at login or as a bearer, are throttled per client: each one makes the client wait before its
 * next token is looked at, 1 s, then 2, 4… up to a minute, in Redis for every web process. A waiting client gets
 * the same answer ("wait N seconds") whatever token it sends, or the wait would tell a guesser which guess is
 * right and limit nothing. So the right token from a waiting address waits too, a minute at most, and the
 * operator is told apart from a guesser by what a guesser cannot have: the known-browser cookie, which only a
 * login with the right token sets. A request carrying a valid one is counted on that browser's own budget
 * instead of its address's: a browser that logged in before gets in at once while wrong tokens from its address
 * (a colleague's typos, a script with an old token, someone behind the same proxy) make the address wait; wrong
 * tokens sent with it make it wait in turn. Without the cookie nothing changed: scripts, first logins and
 * guessers have their address's budget, and a success counted on a browser's budget leaves the address's count
 * as it was.
 */
import { Router, type Request, type RequestHandler } from 'express';
import type { Logger } from '../../log.js';
import {
  bearerToken,
  clearCookie,
  isCrossSite,
  KNOWN_BROWSER_COOKIE,
  KNOWN_BROWSER_TTL_MS,
  readCookie,
  secretsEqual,
  SESSION_COOKIE,
  setCookie,
  type Session,
  type SessionSigner,
} from '../auth.js';
import { loginPage } from '../layout.js';
import { retryAfterSeconds, waitInWords, type LoginThrottle } from '../login-throttle.js';
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

/** Only paths inside the dashboard are followed after login: never an open redirect. Else the overview, the first page. */
export function safeNext(candidate: unknown): string {
  if (typeof candidate !== 'string') return '/dashboard/overview';
  if (
    !/^\/dashboard(\/[A-Za-z0-9\-._~%:/?=&+]*)?$/.test(candidate) ||
    candidate.includes('//') ||
    /^\/dashboard\/(login|logout)/.test(candidate)
  )
    return '/dashboard/overview';
  return candidate;
}

const addressOf = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/** Whose budget of wrong tokens a request counts on: a known browser's own, else its address's. */
interface Client {
  key: string;
  address: string;
  knownBrowser: boolean;
}

/** What a token sent by a client gets: let in, refused as wrong (and now waits), or told to wait, right or wrong. */
type Verdict = { kind: 'in' } | { kind: 'wrong'; waitMs: number } | { kind: 'wait'; waitMs: number };

export function dashboardAuth(deps: AuthDeps): DashboardAuth {
  const { signer } = deps;
  const viewers = new WeakMap<Request, Viewer>();
  const { clientOf, from, verdictOn, sessionOf } = gateFor(deps);
  const login = loginRouter(deps);

  const authenticate: RequestHandler = async (req, res, next) => {
    const bearer = bearerToken(req);
    if (bearer !== undefined) {
      // Wrong bearer tokens count against the same budget as wrong logins. A script's right token is let in
      // without a write: its count, if any, is left to expire.
      const client = clientOf(req);
      const verdict = await verdictOn(client, bearer !== '' && secretsEqual(bearer, deps.token));
      if (verdict.kind === 'in') {
        viewers.set(req, { kind: 'bearer' });
        next();
        return;
      }
      res.set('Retry-After', retryAfterSeconds(verdict.waitMs)).type('text/plain');
      if (verdict.kind === 'wait') {
        res.status(429).send(`this ${from(client)} sent a wrong token: wait ${waitInWords(verdict.waitMs)}\n`);
        return;
      }
      res
        .status(401)
        .set('WWW-Authenticate', 'Bearer realm="relais-dashboard"')
        .send(`wrong dashboard token: wait ${waitInWords(verdict.waitMs)} before trying again\n`);
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
    res
      .status(401)
      .set('WWW-Authenticate', 'Bearer realm="relais-dashboard"')
      .type('text/plain')
      .send('log in to the dashboard first\n');
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

/** How a request is told apart and judged: its client (known browser or address), its session, a token's verdict. */
function gateFor(deps: AuthDeps) {
  const { signer, throttle } = deps;
  function clientOf(req: Request): Client {
    const address = addressOf(req);
    const browser = signer.knownBrowser(readCookie(req, KNOWN_BROWSER_COOKIE), deps.nowMs());
    // An address is never 'browser:…', so the two kinds of key cannot meet.
    return browser === undefined
      ? { key: address, address, knownBrowser: false }
      : { key: `browser:${browser}`, address, knownBrowser: true };
  }
  const from = (client: Client) => (client.knownBrowser ? 'browser' : 'address');

  /** A waiting client is told to wait whatever it sent; otherwise the token decides, and a wrong one is counted. */
  async function verdictOn(client: Client, right: boolean): Promise<Verdict> {
    if (right) {
      const waitMs = await throttle.waitMs(client.key);
      return waitMs > 0 ? { kind: 'wait', waitMs } : { kind: 'in' };
    }
    const outcome = await throttle.wrongToken(client.key);
    return { kind: outcome.kind === 'counted' ? 'wrong' : 'wait', waitMs: outcome.waitMs };
  }

  async function sessionOf(req: Request): Promise<Session | undefined> {
    const session = signer.verify(readCookie(req, SESSION_COOKIE), deps.nowMs());
    if (!session || (await deps.revocations.isRevoked(session.id))) return undefined;
    return session;
  }
  return { clientOf, from, verdictOn, sessionOf };
}

/** GET /login shows the form (or skips it for a live session); POST /login checks the token, throttled per client. */
function loginRouter(deps: AuthDeps): Router {
  const { signer, throttle } = deps;
  const { clientOf, from, verdictOn, sessionOf } = gateFor(deps);
  const login = Router();
  login.get('/login', async (req, res) => {
    if (await sessionOf(req)) {
      res.redirect(303, safeNext(req.query.next));
      return;
    }
    res.type('html').send(
      loginPage({
        next: safeNext(req.query.next),
        notice: req.query.bye === '1' ? 'You are logged out.' : undefined,
      }),
    );
  });

  login.post('/login', form, async (req, res) => {
    const client = clientOf(req);
    const next = safeNext((req.body as Record<string, unknown> | undefined)?.next);
    if (isCrossSite(req)) {
      res
        .status(403)
        .type('html')
        .send(loginPage({ next, error: 'Log in from the dashboard itself.' }));
      return;
    }
    const candidate = (req.body as Record<string, unknown> | undefined)?.token;
    const verdict = await verdictOn(client, typeof candidate === 'string' && secretsEqual(candidate, deps.token));
    if (verdict.kind === 'wait') {
      res
        .status(429)
        .set('Retry-After', retryAfterSeconds(verdict.waitMs))
        .type('html')
        .send(
          loginPage({
            next,
            error: `This ${from(client)} sent a wrong token: wait ${waitInWords(verdict.waitMs)} before trying again.`,
          }),
        );
      return;
    }
    if (verdict.kind === 'wrong') {
      deps.logger.warn(
        { client: client.address, knownBrowser: client.knownBrowser, waitMs: verdict.waitMs },
        'dashboard login with a wrong token',
      );
      res
        .status(401)
        .set('Retry-After', retryAfterSeconds(verdict.waitMs))
        .type('html')
        .send(loginPage({ next, error: `Wrong token. Wait ${waitInWords(verdict.waitMs)} before trying again.` }));
      return;
    }
    await throttle.rightToken(client.key);
    const { cookieValue } = signer.issue(deps.nowMs(), deps.sessionTtlMs);
    setCookie(req, res, SESSION_COOKIE, cookieValue, deps.sessionTtlMs);
    setCookie(req, res, KNOWN_BROWSER_COOKIE, signer.knownBrowserCookie(deps.nowMs()), KNOWN_BROWSER_TTL_MS);
    deps.logger.info({ client: client.address, knownBrowser: client.knownBrowser }, 'dashboard login');
    res.redirect(303, next);
  });
  return login;
}
