/**
 * Where a Shopify shop's Admin API token comes from (issue 17). Three ways in:
 *
 *  - a legacy static token from the registry (`shopify.accessToken`): given as is, nothing to renew;
 *  - client credentials (an app of the merchant's own organisation, made in the Dev Dashboard): Relais asks
 *    Shopify for a token with the app's client id and secret; it lasts 24 hours;
 *  - authorization code (an app installed through Relais's install link, oauth.ts): an expiring offline token
 *    (1 hour) and a rotating refresh token, both from the install.
 *
 * For the two OAuth ways the token lives in the ShopSecretStore, sealed, as one value (`shopify.oauthTokens`:
 * access token, refresh token and their lifetimes together, so a refreshed pair is stored atomically) whose
 * expiry is the access token's. It is renewed:
 *  - before it expires: once less than min(10 % of its life, 1 hour) remains (23 h into a 24-hour token,
 *    54 min into a 1-hour one);
 *  - once more after a 401 (the admin client asks `afterUnauthorized`, then retries the call once);
 *  - never twice at once for one shop: one refresh in flight per provider (a shared promise), and across
 *    processes a lease (`shopify.refreshLease`, taken with replaceIf, a compare-and-set) so only its holder
 *    calls Shopify while the others wait for the new token to appear in the store; the new token itself is
 *    written with replaceIf over the one it replaces, so a late writer never overwrites a newer token.
 *
 * A refused refresh token cannot be mended by Relais: the error says the merchant must reinstall the app.
 * Tokens are Secrets and never logged (the library's logger is silenced; our lines carry the shop only).
 *
 * The token calls go through @shopify/shopify-api (`auth.clientCredentials`, `auth.refreshToken`), which always
 * calls https://{shop}/admin/oauth/access_token through its process-global fetch; admin-routing.ts's routing fetch
 * sends it to the emulator for a shop registered with an adminUrl, as for the Admin API calls.
 */
import '@shopify/shopify-api/adapters/node';
import { ApiVersion, HttpResponseError, LogSeverity, shopifyApi, type Shopify } from '@shopify/shopify-api';
import { z } from 'zod';
import { Secret } from '../../shops/secret.js';
import type { ShopSecretStore } from '../../shops/shop-secrets.js';
import type { Logger } from '../../log.js';
import { routeShopAdmin } from './admin-routing.js';
import { failureOf, RelaisError } from '../../domain/errors.js';

/** What the admin client asks for its token. */
export interface AccessTokenSource {
  /** The token for the next Admin API call (renewed first when it is about to expire). */
  current(): Promise<Secret>;
  /** Shopify answered 401 to `rejected`: a token worth one more try, or undefined when there is none. */
  afterUnauthorized(rejected: Secret): Promise<Secret | undefined>;
}

/** A token could not be had. `reinstallRequired`: only the merchant can mend it (install the app again). */
export class AccessTokenError extends RelaisError {
  override readonly name = 'AccessTokenError';
  constructor(
    message: string,
    retryable: boolean,
    readonly reinstallRequired = false,
    options?: { cause?: unknown },
  ) {
    super({ failure: failureOf(retryable), message, cause: options?.cause });
  }
}

/** A legacy custom app's token, from the registry: the same token every time, nothing to renew. */
export class StaticAccessToken implements AccessTokenSource {
  constructor(private readonly token: Secret) {}
  current(): Promise<Secret> {
    return Promise.resolve(this.token);
  }
  afterUnauthorized(): Promise<Secret | undefined> {
    return Promise.resolve(undefined);
  }
}

export type ShopifyGrant = 'client_credentials' | 'authorization_code';

export const TOKENS_SECRET = 'shopify.oauthTokens';
export const LEASE_SECRET = 'shopify.refreshLease';

const storedTokensSchema = z.object({
  accessToken: z.string().min(1),
  scope: z.string().optional(),
  /** ms since epoch, on the provider's clock. */
  issuedAt: z.number(),
  expiresAt: z.number().optional(),
  refreshToken: z.string().optional(),
  refreshTokenExpiresAt: z.number().optional(),
});
export type StoredTokens = z.infer<typeof storedTokensSchema>;

interface Entry {
  /** The stored value, exactly (what replaceIf compares). */
  raw: string;
  tokens: StoredTokens;
}

const leaseSchema = z.object({ holder: z.string().nullable(), until: z.number() });

export interface OAuthAccessTokenOptions {
  /** The Relais shop id (the secrets' owner). */
  shopId: string;
  /** The shop's myshopify domain. */
  domain: string;
  grant: ShopifyGrant;
  clientId: string;
  clientSecret: Secret;
  secrets: ShopSecretStore;
  logger: Logger;
  /** Local emulator only: where https://{domain} is served. */
  adminUrl?: string;
  apiVersion?: string;
  /** The provider's clock (tests move it); default Date.now. */
  clock?: () => number;
  /** How long a refresh lease holds before another process may take it over; default 30 s. */
  leaseMs?: number;
  /** How often a process waiting on another's refresh looks at the store; default 150 ms. */
  pollMs?: number;
}

const ONE_HOUR_MS = 3_600_000;
let providerCount = 0;

/** When a token of this life should be renewed: min(10 % of its life, 1 hour) before its end. */
export function renewalMarginMs(lifeMs: number): number {
  return Math.min(lifeMs / 10, ONE_HOUR_MS);
}

export class OAuthAccessToken implements AccessTokenSource {
  readonly shopId: string;
  readonly domain: string;
  readonly grant: ShopifyGrant;
  readonly #secrets: ShopSecretStore;
  readonly #logger: Logger;
  readonly #clock: () => number;
  readonly #leaseMs: number;
  readonly #pollMs: number;
  readonly #shopify: Shopify;
  /** Who this provider is when it holds the lease. */
  readonly #holder = `${process.pid}-${(providerCount += 1)}-${Math.random().toString(36).slice(2, 8)}`;
  #cached: Entry | undefined;
  #inFlight: Promise<Entry> | undefined;

  constructor(options: OAuthAccessTokenOptions) {
    this.shopId = options.shopId;
    this.domain = options.domain.toLowerCase();
    this.grant = options.grant;
    this.#secrets = options.secrets;
    this.#logger = options.logger;
    this.#clock = options.clock ?? Date.now;
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#pollMs = options.pollMs ?? 150;
    if (options.adminUrl !== undefined) routeShopAdmin(this.domain, options.adminUrl);
    this.#shopify = shopifyApi({
      apiKey: options.clientId,
      apiSecretKey: options.clientSecret.reveal(),
      apiVersion: (options.apiVersion ?? ApiVersion.October26) as ApiVersion,
      hostName: 'relais.local',
      isEmbeddedApp: false,
      logger: { level: LogSeverity.Error, log: () => undefined, httpRequests: false },
    });
  }

  async current(): Promise<Secret> {
    let entry = this.#cached ?? (await this.#read());
    if (!entry) {
      if (this.grant === 'authorization_code') {
        throw new AccessTokenError(
          `shop ${this.shopId} (${this.domain}) has no token: the app is not installed; the merchant must install it (Relais's install link)`,
          false,
          true,
        );
      }
      entry = await this.#refresh(undefined);
    } else if (this.#due(entry.tokens)) {
      entry = await this.#refresh(entry.raw);
    }
    this.#cached = entry;
    return this.#secret(entry);
  }

  async afterUnauthorized(rejected: Secret): Promise<Secret | undefined> {
    this.#cached = undefined;
    const stored = await this.#read();
    // Another process (or the install) has put a newer token meanwhile: try that one.
    if (stored && stored.tokens.accessToken !== rejected.reveal() && !this.#due(stored.tokens)) {
      this.#cached = stored;
      return this.#secret(stored);
    }
    this.#logger.info(
      { shopDomain: this.domain, grant: this.grant },
      'Shopify refused the access token (401): renewing it once',
    );
    const fresh = await this.#refresh(stored?.raw, { force: true });
    this.#cached = fresh;
    return fresh.tokens.accessToken === rejected.reveal() ? undefined : this.#secret(fresh);
  }

  #secret(entry: Entry): Secret {
    return new Secret(entry.tokens.accessToken, `${this.grant} token of ${this.shopId}`);
  }

  #due(tokens: StoredTokens): boolean {
    if (tokens.expiresAt === undefined) return false;
    return tokens.expiresAt - this.#clock() <= renewalMarginMs(tokens.expiresAt - tokens.issuedAt);
  }

  async #read(): Promise<Entry | undefined> {
    const stored = await this.#secrets.get(this.shopId, TOKENS_SECRET);
    if (!stored) return undefined;
    const raw = stored.value.reveal();
    const parsed = storedTokensSchema.safeParse(JSON.parse(raw));
    if (!parsed.success)
      throw new AccessTokenError(`shop ${this.shopId}: the stored Shopify tokens are not readable`, false);
    return { raw, tokens: parsed.data };
  }

  /** One refresh per provider at a time: callers arriving meanwhile share it. */
  #refresh(expectedRaw: string | undefined, options: { force?: boolean } = {}): Promise<Entry> {
    this.#inFlight ??= this.#refreshAcrossProcesses(expectedRaw, options.force ?? false).finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  /**
   * Takes the lease, or waits for whoever holds it to store a new token. A token counts as new when it is not
   * the one we set out to replace and is not itself due (a forced refresh after a 401 takes any other token).
   */
  async #refreshAcrossProcesses(expectedRaw: string | undefined, force: boolean): Promise<Entry> {
    const usable = (entry: Entry | undefined): boolean =>
      entry !== undefined && entry.raw !== expectedRaw && (force || !this.#due(entry.tokens));
    const deadline = this.#clock() + 2 * this.#leaseMs;
    for (;;) {
      const lease = await this.#claimLease();
      if (lease !== undefined) {
        try {
          const current = await this.#read();
          // Renewed by another process between our read and our claim.
          if (current && usable(current)) return current;
          const fresh = await this.#obtain(current);
          if (
            await this.#secrets.replaceIf(
              this.shopId,
              TOKENS_SECRET,
              current?.raw,
              fresh.raw,
              this.#expiryOf(fresh.tokens),
            )
          ) {
            this.#logger.info(
              {
                shopDomain: this.domain,
                grant: this.grant,
                expiresAt: fresh.tokens.expiresAt === undefined ? null : new Date(fresh.tokens.expiresAt).toISOString(),
              },
              'Shopify access token renewed',
            );
            return fresh;
          }
          // Replaced meanwhile without the lease (an install): the stored one wins.
          const stored = await this.#read();
          if (stored) return stored;
          return fresh;
        } finally {
          await this.#releaseLease(lease);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, this.#pollMs));
      const current = await this.#read();
      if (current && usable(current)) return current;
      if (this.#clock() > deadline) {
        throw new AccessTokenError(
          `shop ${this.shopId}: another process is renewing the Shopify token and has not finished`,
          true,
        );
      }
    }
  }

  #expiryOf(tokens: StoredTokens): { expiresAt?: Date } {
    return tokens.expiresAt === undefined ? {} : { expiresAt: new Date(tokens.expiresAt) };
  }

  async #claimLease(): Promise<string | undefined> {
    const stored = await this.#secrets.get(this.shopId, LEASE_SECRET);
    const raw = stored?.value.reveal();
    if (raw !== undefined) {
      const lease = leaseSchema.safeParse(JSON.parse(raw));
      if (lease.success && lease.data.holder !== null && lease.data.until > this.#clock()) return undefined;
    }
    const mine = JSON.stringify({ holder: this.#holder, until: this.#clock() + this.#leaseMs });
    return (await this.#secrets.replaceIf(this.shopId, LEASE_SECRET, raw, mine)) ? mine : undefined;
  }

  async #releaseLease(mine: string): Promise<void> {
    await this.#secrets
      .replaceIf(this.shopId, LEASE_SECRET, mine, JSON.stringify({ holder: null, until: 0 }))
      .catch((error: unknown) => {
        this.#logger.warn(
          { shopDomain: this.domain, err: error instanceof Error ? error.message : String(error) },
          'could not release the token refresh lease (it lapses by itself)',
        );
      });
  }

  /** One call to Shopify's token endpoint. */
  async #obtain(current: Entry | undefined): Promise<Entry> {
    const before = Date.now();
    let session;
    try {
      if (this.grant === 'client_credentials') {
        ({ session } = await this.#shopify.auth.clientCredentials({ shop: this.domain }));
      } else {
        const refreshToken = current?.tokens.refreshToken;
        if (refreshToken === undefined) {
          throw new AccessTokenError(
            `shop ${this.shopId} (${this.domain}) has no refresh token: the merchant must reinstall the app`,
            false,
            true,
          );
        }
        if (
          current?.tokens.refreshTokenExpiresAt !== undefined &&
          current.tokens.refreshTokenExpiresAt <= this.#clock()
        ) {
          throw new AccessTokenError(
            `shop ${this.shopId} (${this.domain}): the refresh token expired; the merchant must reinstall the app`,
            false,
            true,
          );
        }
        ({ session } = await this.#shopify.auth.refreshToken({ shop: this.domain, refreshToken }));
      }
    } catch (error) {
      throw this.#explain(error);
    }
    // The library dates expiries from Date.now(); keep the lifetimes and date them on our clock.
    const now = this.#clock();
    const lifetime = (date: Date | undefined) =>
      date === undefined ? undefined : now + Math.max(0, date.getTime() - before);
    const tokens: StoredTokens = {
      accessToken: session.accessToken ?? '',
      issuedAt: now,
      ...(session.scope === undefined ? {} : { scope: session.scope }),
      ...(session.expires === undefined ? {} : { expiresAt: lifetime(session.expires) }),
      ...(session.refreshToken === undefined ? {} : { refreshToken: session.refreshToken }),
      ...(session.refreshTokenExpires === undefined
        ? {}
        : { refreshTokenExpiresAt: lifetime(session.refreshTokenExpires) }),
    };
    if (tokens.accessToken === '')
      throw new AccessTokenError(`shop ${this.shopId}: Shopify answered without an access token`, true);
    if (this.grant === 'authorization_code' && tokens.refreshToken === undefined) {
      throw new AccessTokenError(
        `shop ${this.shopId}: Shopify renewed the token without a new refresh token`,
        false,
        true,
      );
    }
    return { raw: JSON.stringify(tokens), tokens };
  }

  #explain(error: unknown): AccessTokenError {
    if (error instanceof AccessTokenError) return error;
    if (error instanceof HttpResponseError) {
      const status = error.response.code;
      const body = z.object({ error: z.string() }).safeParse(error.response.body);
      const code = body.success ? ` ${body.data.error}` : '';
      if (status >= 500 || status === 429) {
        return new AccessTokenError(
          `shop ${this.shopId}: Shopify's token endpoint answered HTTP ${status}${code}`,
          true,
          false,
          { cause: error },
        );
      }
      if (this.grant === 'authorization_code') {
        return new AccessTokenError(
          `shop ${this.shopId} (${this.domain}): Shopify refused the refresh token (HTTP ${status}${code}); the merchant must reinstall the app (open Relais's install link for this shop) before Relais can write to it again`,
          false,
          true,
          { cause: error },
        );
      }
      return new AccessTokenError(
        `shop ${this.shopId} (${this.domain}): Shopify refused the client credentials (HTTP ${status}${code}); check the app's client id and secret in the Dev Dashboard and that the app is installed on the shop`,
        false,
        false,
        { cause: error },
      );
    }
    return new AccessTokenError(
      `shop ${this.shopId}: no answer from Shopify's token endpoint (${error instanceof Error ? error.message : String(error)})`,
      true,
      false,
      { cause: error },
    );
  }
}
