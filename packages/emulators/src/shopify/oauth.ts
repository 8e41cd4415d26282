/**
 * The Shopify emulator's OAuth doors, as Shopify documents them for apps made in the Dev Dashboard:
 *
 *   GET  /admin/oauth/authorize      client_id, scope, redirect_uri, state, grant_options[]
 *        The merchant approves at once (there is nobody to click), and the browser is sent to redirect_uri with
 *        code, hmac, host, shop, state and timestamp. hmac is HMAC-SHA256 (hex) under the app's client secret of
 *        the other parameters sorted by name and joined as a query string, which is what Shopify signs and what
 *        @shopify/shopify-api's validateHmac checks.
 *   POST /admin/oauth/access_token   JSON or form body:
 *        - authorization code: client_id, client_secret, code [, expiring=1]. Without `expiring` the offline token
 *          never expires ({access_token, scope}); with expiring=1 it lasts 3600 s and comes with a refresh token
 *          ({access_token, scope, expires_in, refresh_token, refresh_token_expires_in}; the refresh token 90 days).
 *        - grant_type=client_credentials: client_id, client_secret → {access_token, scope, expires_in: 86399}.
 *        - grant_type=refresh_token: client_id, client_secret, refresh_token → a new pair. The refresh token
 *          rotates: Shopify keeps the previous one usable until the app starts using its replacement (so an app
 *          that lost the answer can retry), then retires it for good (changelog, 2026-08-28).
 *
 * Codes are single use and last 10 minutes. Errors follow OAuth 2.0 (RFC 6749 §5.2): a JSON body with `error`
 * (invalid_request, invalid_client, invalid_grant, unsupported_grant_type) and `error_description`; Shopify does
 * not publish its descriptions, so callers must read the status and `error`, never the wording.
 *
 * Tokens issued here expire on the emulator's token clock (real time plus what `advance` added), so a test can
 * make a day pass in one call. The Admin API (emulator.ts `admit`) asks `accepts()` whether a token it does not
 * know as the shop's static token is one of these and still alive.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const CLIENT_CREDENTIALS_TTL_SECONDS = 86_399;
export const EXPIRING_OFFLINE_TTL_SECONDS = 3_600;
export const REFRESH_TOKEN_TTL_SECONDS = 90 * 86_400;
const CODE_TTL_MS = 10 * 60_000;
/** How long a used refresh token stays usable while its replacement has not been used. */
const RETRY_WINDOW_MS = 30 * 86_400_000;

export interface OAuthApp {
  domain: string;
  /** The shop's name, for `host` (admin.shopify.com/store/{name}). */
  name: string;
  clientId: string;
  clientSecret: string;
  /** Scopes granted when the request names none (client credentials: the app's configured scopes). */
  scopes: string;
}

export interface TokenLifetimes {
  clientCredentialsSeconds: number;
  expiringOfflineSeconds: number;
  refreshTokenSeconds: number;
}

export const DEFAULT_TOKEN_LIFETIMES: TokenLifetimes = {
  clientCredentialsSeconds: CLIENT_CREDENTIALS_TTL_SECONDS,
  expiringOfflineSeconds: EXPIRING_OFFLINE_TTL_SECONDS,
  refreshTokenSeconds: REFRESH_TOKEN_TTL_SECONDS,
};

export type GrantType = 'authorization_code' | 'client_credentials' | 'refresh_token';

/** One call to the token endpoint, as the emulator saw it (no secret in it). */
export interface TokenRequestRecord {
  at: string;
  domain: string;
  grantType: GrantType | 'unknown';
  status: number;
  error?: string;
}

interface IssuedToken {
  domain: string;
  scope: string;
  /** On the token clock; undefined: never expires. */
  expiresAt: number | undefined;
  grant: GrantType;
}

interface IssuedRefreshToken {
  domain: string;
  scope: string;
  expiresAt: number;
  /** When it was first exchanged (then its replacement is `replacement`). */
  usedAt?: number;
  replacement?: string;
  retired: boolean;
  /** The refresh token this one replaced. */
  previous?: string;
}

interface PendingCode {
  domain: string;
  clientId: string;
  scope: string;
  expiresAt: number;
}

export interface OAuthAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const oauthError = (status: number, error: string, description: string): OAuthAnswer => ({
  status,
  body: { error, error_description: description },
});

/** What Shopify signs on a redirect: every parameter but hmac and signature, sorted, as a query string. */
export function signOAuthQuery(params: Record<string, string>, clientSecret: string): string {
  const query = new URLSearchParams();
  for (const key of Object.keys(params)
    .filter((k) => k !== 'hmac' && k !== 'signature')
    .sort((a, b) => a.localeCompare(b))) {
    query.append(key, params[key]!);
  }
  return createHmac('sha256', clientSecret).update(query.toString().replace(/\+/g, '%20')).digest('hex');
}

const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

export class OAuthServer {
  readonly #apps: Map<string, OAuthApp>;
  readonly #lifetimes: TokenLifetimes;
  readonly #tokens = new Map<string, IssuedToken>();
  readonly #refreshTokens = new Map<string, IssuedRefreshToken>();
  readonly #codes = new Map<string, PendingCode>();
  readonly #requests: TokenRequestRecord[] = [];
  #offsetMs = 0;

  constructor(apps: OAuthApp[], lifetimes: Partial<TokenLifetimes> = {}) {
    this.#apps = new Map(apps.map((app) => [app.domain, app]));
    this.#lifetimes = { ...DEFAULT_TOKEN_LIFETIMES, ...lifetimes };
  }

  /** The token clock: real time plus every `advance`. */
  now(): number {
    return Date.now() + this.#offsetMs;
  }

  /** Makes time pass for tokens, codes and refresh tokens (not for orders or throttling). */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new Error('advance: ms must be a non-negative number');
    this.#offsetMs += ms;
  }

  /** Whether `token` is a live token this server issued for `domain`. */
  accepts(domain: string, token: string): boolean {
    const issued = this.#tokens.get(token);
    return (
      issued !== undefined &&
      issued.domain === domain &&
      (issued.expiresAt === undefined || issued.expiresAt > this.now())
    );
  }

  /** Revokes one issued access token (as a merchant revoking the app's access would): the next call gets 401. */
  revoke(token: string): boolean {
    return this.#tokens.delete(token);
  }

  requests(): TokenRequestRecord[] {
    return this.#requests.map((r) => ({ ...r }));
  }

  /**
   * GET /admin/oauth/authorize: auto-approval, a 302 to redirect_uri. A request Shopify would refuse (unknown
   * client_id, no redirect_uri or one that is not http(s)) gets a 400 text page, as Shopify shows an error page
   * instead of redirecting to an unverified address.
   */
  authorize(domain: string, query: URLSearchParams): OAuthAnswer {
    const app = this.#apps.get(domain);
    const clientId = query.get('client_id');
    if (!app || !clientId || clientId !== app.clientId) {
      return { status: 400, body: 'Oauth error invalid_request: The client_id is not valid for this shop' };
    }
    const redirectUri = query.get('redirect_uri');
    let redirect: URL;
    try {
      redirect = new URL(redirectUri ?? '');
    } catch {
      return { status: 400, body: 'Oauth error invalid_request: The redirect_uri is missing or not a valid URL' };
    }
    if (redirect.protocol !== 'http:' && redirect.protocol !== 'https:') {
      return { status: 400, body: 'Oauth error invalid_request: The redirect_uri must be http or https' };
    }
    const code = randomBytes(16).toString('hex');
    this.#codes.set(code, {
      domain,
      clientId,
      scope: query.get('scope') ?? app.scopes,
      expiresAt: this.now() + CODE_TTL_MS,
    });
    const params: Record<string, string> = {
      code,
      host: Buffer.from(`admin.shopify.com/store/${app.name}`).toString('base64url'),
      shop: domain,
      // Real time: the app checks it against its own clock (validateHmac allows 90 s).
      timestamp: String(Math.trunc(Date.now() / 1000)),
    };
    const state = query.get('state');
    if (state !== null) params.state = state;
    params.hmac = signOAuthQuery(params, app.clientSecret);
    for (const [key, value] of Object.entries(params)) redirect.searchParams.set(key, value);
    return { status: 302, body: '', headers: { Location: redirect.toString() } };
  }

  /** POST /admin/oauth/access_token. */
  token(domain: string, body: Record<string, string>): OAuthAnswer {
    const grantType = (body.grant_type ?? (body.code !== undefined ? 'authorization_code' : '')) as GrantType | '';
    const answer = this.#token(domain, grantType, body);
    const error = answer.status >= 400 ? (answer.body as { error?: string }).error : undefined;
    this.#requests.push({
      at: new Date(this.now()).toISOString(),
      domain,
      grantType: grantType === '' ? 'unknown' : grantType,
      status: answer.status,
      ...(error === undefined ? {} : { error }),
    });
    return answer;
  }

  #token(domain: string, grantType: GrantType | '', body: Record<string, string>): OAuthAnswer {
    const app = this.#apps.get(domain);
    if (!app) return oauthError(404, 'invalid_request', 'Unknown shop');
    if (grantType !== 'authorization_code' && grantType !== 'client_credentials' && grantType !== 'refresh_token') {
      return oauthError(400, 'unsupported_grant_type', `grant_type "${grantType}" is not supported`);
    }
    if (
      body.client_id !== app.clientId ||
      body.client_secret === undefined ||
      !sameSecret(body.client_secret, app.clientSecret)
    ) {
      return oauthError(401, 'invalid_client', 'Client authentication failed: the client_id or client_secret is wrong');
    }
    const now = this.now();
    if (grantType === 'client_credentials') {
      const accessToken = this.#issue(
        domain,
        app.scopes,
        this.#lifetimes.clientCredentialsSeconds,
        'client_credentials',
      );
      return {
        status: 200,
        body: { access_token: accessToken, scope: app.scopes, expires_in: this.#lifetimes.clientCredentialsSeconds },
      };
    }
    if (grantType === 'authorization_code') {
      const pending = body.code === undefined ? undefined : this.#codes.get(body.code);
      if (body.code !== undefined) this.#codes.delete(body.code);
      if (!pending || pending.domain !== domain || pending.clientId !== body.client_id || pending.expiresAt <= now) {
        return oauthError(400, 'invalid_request', 'The authorization code was not found or was already used');
      }
      if (body.expiring !== '1') {
        return {
          status: 200,
          body: {
            access_token: this.#issue(domain, pending.scope, undefined, 'authorization_code'),
            scope: pending.scope,
          },
        };
      }
      return { status: 200, body: this.#expiringPair(domain, pending.scope, undefined) };
    }
    // refresh_token
    const presented = body.refresh_token;
    const stored = presented === undefined ? undefined : this.#refreshTokens.get(presented);
    if (!presented || !stored || stored.domain !== domain || stored.retired || stored.expiresAt <= now) {
      return oauthError(400, 'invalid_grant', 'The refresh token is invalid, expired or was revoked');
    }
    if (stored.usedAt !== undefined && now - stored.usedAt > RETRY_WINDOW_MS) {
      return oauthError(400, 'invalid_grant', 'The refresh token is invalid, expired or was revoked');
    }
    // Using a replacement retires the token it replaced.
    if (stored.previous !== undefined) {
      const previous = this.#refreshTokens.get(stored.previous);
      if (previous) previous.retired = true;
    }
    stored.usedAt ??= now;
    const pair = this.#expiringPair(domain, stored.scope, presented, stored.expiresAt);
    stored.replacement = pair.refresh_token;
    return { status: 200, body: pair };
  }

  #issue(domain: string, scope: string, ttlSeconds: number | undefined, grant: GrantType): string {
    const token = `shpat_${randomBytes(16).toString('hex')}`;
    this.#tokens.set(token, {
      domain,
      scope,
      grant,
      expiresAt: ttlSeconds === undefined ? undefined : this.now() + ttlSeconds * 1000,
    });
    return token;
  }

  /** An expiring offline token and its refresh token; a rotated refresh token keeps its family's end of life. */
  #expiringPair(domain: string, scope: string, previous: string | undefined, familyExpiresAt?: number) {
    const accessToken = this.#issue(
      domain,
      scope,
      this.#lifetimes.expiringOfflineSeconds,
      previous === undefined ? 'authorization_code' : 'refresh_token',
    );
    const refreshToken = `shprt_${randomBytes(16).toString('hex')}`;
    // One reading of the clock: two would let a millisecond pass between them and answer 7 775 999 for 90 days.
    const now = this.now();
    const expiresAt = familyExpiresAt ?? now + this.#lifetimes.refreshTokenSeconds * 1000;
    this.#refreshTokens.set(refreshToken, {
      domain,
      scope,
      expiresAt,
      retired: false,
      ...(previous === undefined ? {} : { previous }),
    });
    return {
      access_token: accessToken,
      scope,
      expires_in: this.#lifetimes.expiringOfflineSeconds,
      refresh_token: refreshToken,
      refresh_token_expires_in: Math.max(0, Math.floor((expiresAt - now) / 1000)),
    };
  }
}

/** The token endpoint takes JSON (what @shopify/shopify-api sends) or a form; every value as a string. */
export function parseTokenRequestBody(
  raw: Buffer,
  contentType: string | undefined,
): Record<string, string> | undefined {
  const text = raw.toString('utf8');
  if (contentType?.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    return Object.fromEntries(
      Object.entries(parsed).flatMap(([k, v]) =>
        typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? [[k, String(v)]] : [],
      ),
    );
  } catch {
    return undefined;
  }
}
