/**
 * Dashboard authentication: the operator proves they know RELAIS_DASHBOARD_TOKEN once, and gets a
 * signed session cookie that is NOT the token (a stolen cookie expires and can be logged out; the token
 * never sits in a browser). Scripts send the token as `Authorization: Bearer`.
 *
 * - Every comparison of a secret is constant-time (timingSafeEqual over fixed-length digests).
 * - The signing key is derived from the token, so every web process behind a load balancer accepts the
 *   same sessions, and changing the token logs everyone out.
 * - Forms carry a CSRF token derived from the session id: a page of another site can neither read it
 *   nor forge it (and SameSite=Strict already keeps the cookie off cross-site requests).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { RedisClient } from '../redis.js';
import type { SessionRevocations } from './ports.js';

export const SESSION_COOKIE = 'relais_session';
export const FLASH_COOKIE = 'relais_flash';
export const COOKIE_PATH = '/dashboard';
export const DEFAULT_SESSION_TTL_MS = 8 * 3600_000;
/**
 * Set on a successful login, for 30 days: this browser once logged in with the token. It opens nothing by
 * itself; wrong tokens sent with it are throttled on its own budget instead of its address's (login-throttle.ts).
 */
export const KNOWN_BROWSER_COOKIE = 'relais_known_browser';
export const KNOWN_BROWSER_TTL_MS = 30 * 86_400_000;
const FLASH_TTL_MS = 60_000;

export interface Session {
  id: string;
  expiresAtMs: number;
}

export interface Flash {
  kind: 'ok' | 'error';
  message: string;
}

function base64url(buffer: Buffer): string {
  return buffer.toString('base64url');
}

/** Constant-time equality of two strings of any length (compared as SHA-256 digests). */
export function secretsEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

export class SessionSigner {
  readonly #key: Buffer;

  constructor(token: string) {
    // A key of its own, so a signature never reveals anything usable as the token itself.
    this.#key = createHmac('sha256', token).update('relais-dashboard-session-v1').digest();
  }

  #sign(purpose: string, payload: string): string {
    return base64url(createHmac('sha256', this.#key).update(`${purpose}\u0000${payload}`).digest());
  }

  /** An id with an expiry, signed for one purpose: a value signed for one purpose is refused for another. */
  #issue(purpose: string, nowMs: number, ttlMs: number): { session: Session; cookieValue: string } {
    const session = { id: base64url(randomBytes(18)), expiresAtMs: nowMs + ttlMs };
    const payload = `${session.id}.${String(session.expiresAtMs)}`;
    return { session, cookieValue: `${payload}.${this.#sign(purpose, payload)}` };
  }

  #verify(purpose: string, cookieValue: string | undefined, nowMs: number): Session | undefined {
    if (!cookieValue) return undefined;
    const match = /^([A-Za-z0-9_-]{24})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(cookieValue);
    if (!match) return undefined;
    const [, id, expires, signature] = match as unknown as [string, string, string, string];
    if (!secretsEqual(signature, this.#sign(purpose, `${id}.${expires}`))) return undefined;
    const expiresAtMs = Number(expires);
    return expiresAtMs > nowMs ? { id, expiresAtMs } : undefined;
  }

  issue(nowMs: number, ttlMs: number): { session: Session; cookieValue: string } {
    return this.#issue('session', nowMs, ttlMs);
  }

  /** The session a cookie value carries, or undefined if it is forged, malformed or expired. */
  verify(cookieValue: string | undefined, nowMs: number): Session | undefined {
    return this.#verify('session', cookieValue, nowMs);
  }

  /** The value of KNOWN_BROWSER_COOKIE, for a browser that just logged in. */
  knownBrowserCookie(nowMs: number): string {
    return this.#issue('known-browser', nowMs, KNOWN_BROWSER_TTL_MS).cookieValue;
  }

  /** The known browser's id, or undefined if the value is forged, malformed, expired, or not a known-browser cookie. */
  knownBrowser(cookieValue: string | undefined, nowMs: number): string | undefined {
    return this.#verify('known-browser', cookieValue, nowMs)?.id;
  }

  csrfToken(session: Session): string {
    return this.#sign('csrf', session.id);
  }

  csrfValid(session: Session, candidate: unknown): boolean {
    return typeof candidate === 'string' && candidate !== '' && secretsEqual(candidate, this.csrfToken(session));
  }

  /** A message for the next page, signed so that nobody can make the dashboard display their text. */
  flashCookie(flash: Flash, nowMs: number): string {
    const payload = `${base64url(Buffer.from(JSON.stringify(flash), 'utf8'))}.${String(nowMs + FLASH_TTL_MS)}`;
    return `${payload}.${this.#sign('flash', payload)}`;
  }

  readFlash(cookieValue: string | undefined, nowMs: number): Flash | undefined {
    if (!cookieValue) return undefined;
    const match = /^([A-Za-z0-9_-]{1,4000})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(cookieValue);
    if (!match) return undefined;
    const [, body, expires, signature] = match as unknown as [string, string, string, string];
    if (!secretsEqual(signature, this.#sign('flash', `${body}.${expires}`)) || Number(expires) <= nowMs)
      return undefined;
    try {
      const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<Flash>;
      if ((parsed.kind === 'ok' || parsed.kind === 'error') && typeof parsed.message === 'string')
        return { kind: parsed.kind, message: parsed.message };
    } catch {
      // An undecodable flash is simply not shown.
    }
    return undefined;
  }
}

/** The token of an `Authorization: Bearer <token>` header; undefined without one. */
export function bearerToken(req: Request): string | undefined {
  const header = req.get('authorization');
  if (!header) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match?.[1]?.trim() ?? '';
}

export function readCookie(req: Request, name: string): string | undefined {
  const header = req.get('cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Secure whenever the browser reached us over HTTPS (directly, or through a TLS-terminating proxy). */
export function isHttps(req: Request): boolean {
  return req.secure || req.get('x-forwarded-proto')?.split(',')[0]?.trim() === 'https';
}

export function setCookie(req: Request, res: Response, name: string, value: string, maxAgeMs: number): void {
  const parts = [
    `${name}=${value}`,
    `Path=${COOKIE_PATH}`,
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${String(Math.max(0, Math.floor(maxAgeMs / 1000)))}`,
  ];
  if (isHttps(req)) parts.push('Secure');
  res.append('Set-Cookie', parts.join('; '));
}

export function clearCookie(req: Request, res: Response, name: string): void {
  setCookie(req, res, name, '', 0);
}

/**
 * A browser request that comes from another site: its Origin (or Sec-Fetch-Site) says so. Requests
 * without either header (scripts, curl) are not browsers' cross-site requests.
 */
export function isCrossSite(req: Request): boolean {
  const site = req.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') return true;
  const origin = req.get('origin');
  if (!origin) return false;
  try {
    return new URL(origin).host !== req.get('host');
  } catch {
    return true;
  }
}

/** Logged-out sessions in Redis, each kept until it would have expired anyway. */
export class RedisSessionRevocations implements SessionRevocations {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(sessionId: string): string {
    return `${this.prefix}:dashboard:revoked:${sessionId}`;
  }

  async revoke(sessionId: string, expiresAtMs: number): Promise<void> {
    await this.redis.set(this.key(sessionId), '1', 'PXAT', Math.max(expiresAtMs, Date.now() + 1000));
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    return (await this.redis.exists(this.key(sessionId))) === 1;
  }
}
