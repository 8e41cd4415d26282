/**
 * Installing Relais's Shopify app on a merchant's shop: the authorization code grant (issue 17), for an app
 * installed by other merchants.
 *
 *  begin(shop, shopId)  a random state (the library's nonce), kept in Redis for 10 minutes with the shop domain,
 *                       the Relais shop id and an optional binding (the Connect page passes its session, so only
 *                       the browser that began can finish); answers the authorize URL to send the merchant to.
 *  callback(query)      refuses a shop that is not `*.myshopify.com`, an hmac that is not Shopify's (checked with
 *                       the app's client secret by @shopify/shopify-api's validateHmac, which also refuses a
 *                       timestamp more than 90 s off), and a state that is unknown, expired, already used, issued
 *                       for another shop or another binding; then exchanges the code for an expiring offline
 *                       token and its refresh token (`expiring=1`) and stores both sealed, as one value, where
 *                       the shop's token provider (access-token.ts) reads and renews them.
 *
 * Why not the library's auth.begin / auth.callback: begin keeps the state in a signed cookie on the response
 * that redirects the browser to https://{shop}, and callback only reads it from there. An emulated shop is not at
 * https://{shop} for a browser, and the Connect page needs the state tied to the Relais shop being connected and
 * to its own session. So the authorize URL, the state and the code exchange are ours (the exchange is the same
 * POST the library's callback makes, sent through the library's fetch so admin-routing.ts routes it to an emulator);
 * validateHmac and the nonce are the library's.
 */
import '@shopify/shopify-api/adapters/node';
import { ApiVersion, LogSeverity, shopifyApi, type Shopify } from '@shopify/shopify-api';
import { abstractFetch } from '@shopify/shopify-api/runtime';
import type { RedisClient } from '../../redis.js';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Secret } from '../../shops/secret.js';
import type { ShopSecretStore } from '../../shops/shop-secrets.js';
import type { Logger } from '../../log.js';
import { TOKENS_SECRET, type StoredTokens } from './access-token.js';
import { routeShopAdmin } from './admin-routing.js';
import { RefusalError } from '../../domain/errors.js';

const SHOP_DOMAIN = /^[a-z0-9][a-z0-9-]*\.myshopify\.com$/;
const DEFAULT_STATE_TTL_MS = 10 * 60_000;

/** Where begun installs wait for their callback, each for a limited time; `take` hands a state out once. */
export interface InstallStateStore {
  put(state: string, value: string, ttlMs: number): Promise<void>;
  take(state: string): Promise<string | undefined>;
}

export class RedisInstallStates implements InstallStateStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** What the keys hold: install states, or the Connect page's install links (connect.ts). */
    private readonly kind = 'shopify-install-state',
  ) {}
  private key(state: string): string {
    return `${this.prefix}:${this.kind}:${state}`;
  }
  async put(state: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.key(state), value, 'PX', ttlMs);
  }
  async take(state: string): Promise<string | undefined> {
    return (await this.redis.getdel(this.key(state))) ?? undefined;
  }
}

export type InstallRefusal =
  | 'invalid_shop'
  | 'invalid_hmac'
  | 'unknown_state'
  | 'state_mismatch'
  | 'exchange_failed'
  /** connect.ts: an install link from the dashboard that is unknown, used or expired. */
  | 'unknown_ticket'
  /** connect.ts: the shop id or domain already belongs to another shop. */
  | 'shop_taken';

/** An install Relais refuses or Shopify refuses: the same request gets the same answer. */
export class ShopifyInstallError extends RefusalError<InstallRefusal> {
  override readonly name = 'ShopifyInstallError';
}

export interface ShopifyInstallOptions {
  clientId: string;
  clientSecret: Secret;
  /** The Admin API scopes to ask for. */
  scopes: readonly string[];
  /** Relais's callback URL (allowed in the app's configuration). */
  redirectUri: string;
  states: InstallStateStore;
  secrets: ShopSecretStore;
  logger: Logger;
  /** Local emulator only: the base URL serving https://{shop} (the authorize page and the token endpoint). */
  adminUrlFor?: (domain: string) => string | undefined;
  stateTtlMs?: number;
  clock?: () => number;
}

export interface InstalledShop {
  shopId: string;
  domain: string;
  scope: string | undefined;
  expiresAt: Date;
}

const stateSchema = z.object({ shop: z.string(), shopId: z.string(), binding: z.string().nullable() });
const tokenAnswer = z.object({
  access_token: z.string().min(1),
  scope: z.string().optional(),
  expires_in: z.number().positive(),
  refresh_token: z.string().min(1),
  refresh_token_expires_in: z.number().positive(),
});

export class ShopifyInstall {
  readonly #options: ShopifyInstallOptions;
  readonly #shopify: Shopify;
  readonly #clock: () => number;

  constructor(options: ShopifyInstallOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    this.#shopify = shopifyApi({
      apiKey: options.clientId,
      apiSecretKey: options.clientSecret.reveal(),
      apiVersion: ApiVersion.October26,
      hostName: new URL(options.redirectUri).host,
      isEmbeddedApp: false,
      logger: { level: LogSeverity.Error, log: () => undefined, httpRequests: false },
    });
  }

  /** The authorize URL for the merchant's browser, and the state it carries. */
  async begin(input: { shop: string; shopId: string; binding?: string }): Promise<{ url: string; state: string }> {
    const shop = this.#domain(input.shop);
    const state = randomBytes(32).toString('hex');
    await this.#options.states.put(
      state,
      JSON.stringify({ shop, shopId: input.shopId, binding: input.binding ?? null }),
      this.#options.stateTtlMs ?? DEFAULT_STATE_TTL_MS,
    );
    const query = new URLSearchParams({
      client_id: this.#options.clientId,
      scope: this.#options.scopes.join(','),
      redirect_uri: this.#options.redirectUri,
      state,
      // Empty: an offline token (the app's, not a staff member's).
      'grant_options[]': '',
    });
    this.#options.logger.info({ shopDomain: shop, shopId: input.shopId }, 'Shopify install begun');
    return { url: `${this.#base(shop)}/admin/oauth/authorize?${query.toString().replace(/\+/g, '%20')}`, state };
  }

  /**
   * Whether a query Shopify sent through the merchant's browser (the install callback, or the app URL opened from
   * the shop's admin) carries Shopify's hmac under this app's client secret and a timestamp within 90 s.
   */
  async signedByShopify(query: URLSearchParams): Promise<boolean> {
    try {
      return await this.#shopify.utils.validateHmac(query);
    } catch {
      return false;
    }
  }

  /** The shop's myshopify domain, lower-cased; throws ShopifyInstallError('invalid_shop') for anything else. */
  shopDomain(shop: string): string {
    return this.#domain(shop);
  }

  /** Checks Shopify's redirect back and stores the shop's tokens sealed. Throws ShopifyInstallError when refused. */
  async callback(query: URLSearchParams, options: { binding?: string } = {}): Promise<InstalledShop> {
    const shop = this.#domain(query.get('shop') ?? '');
    if (!(await this.signedByShopify(query)))
      throw this.#refuse(
        'invalid_hmac',
        `the install callback for ${shop} is not signed by Shopify with this app's client secret (or its timestamp is stale)`,
      );

    const state = query.get('state') ?? '';
    const stored = state === '' ? undefined : await this.#options.states.take(state);
    if (stored === undefined)
      throw this.#refuse(
        'unknown_state',
        `the install callback for ${shop} carries a state Relais did not issue, or one already used or expired: begin the install again`,
      );
    const begun = stateSchema.parse(JSON.parse(stored));
    if (begun.shop !== shop)
      throw this.#refuse('state_mismatch', `the install of ${begun.shop} came back for another shop (${shop})`);
    if (begun.binding !== null && begun.binding !== (options.binding ?? null)) {
      throw this.#refuse('state_mismatch', `the install of ${shop} was begun in another session`);
    }

    const answer = await this.#exchange(shop, query.get('code') ?? '');
    const now = this.#clock();
    const tokens: StoredTokens = {
      accessToken: answer.access_token,
      issuedAt: now,
      expiresAt: now + answer.expires_in * 1000,
      refreshToken: answer.refresh_token,
      refreshTokenExpiresAt: now + answer.refresh_token_expires_in * 1000,
      ...(answer.scope === undefined ? {} : { scope: answer.scope }),
    };
    const expiresAt = new Date(tokens.expiresAt!);
    await this.#options.secrets.put(begun.shopId, TOKENS_SECRET, JSON.stringify(tokens), { expiresAt });
    this.#options.logger.info(
      { shopDomain: shop, shopId: begun.shopId, scope: answer.scope ?? null },
      'Shopify app installed: tokens stored sealed',
    );
    return { shopId: begun.shopId, domain: shop, scope: answer.scope, expiresAt };
  }

  async #exchange(shop: string, code: string): Promise<z.infer<typeof tokenAnswer>> {
    let response: Response;
    try {
      response = await abstractFetch(`https://${shop}/admin/oauth/access_token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({
          client_id: this.#options.clientId,
          client_secret: this.#options.clientSecret.reveal(),
          code,
          expiring: '1',
        }),
      });
    } catch (error) {
      throw this.#refuse(
        'exchange_failed',
        `no answer from ${shop}'s token endpoint (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    const body: unknown = await response.json().catch(() => undefined);
    if (!response.ok) {
      const code = z.object({ error: z.string() }).safeParse(body);
      throw this.#refuse(
        'exchange_failed',
        `Shopify refused the install code of ${shop} (HTTP ${response.status}${code.success ? ` ${code.data.error}` : ''}): begin the install again`,
      );
    }
    const parsed = tokenAnswer.safeParse(body);
    if (!parsed.success)
      throw this.#refuse(
        'exchange_failed',
        `Shopify answered the code exchange of ${shop} without an expiring token and refresh token`,
      );
    return parsed.data;
  }

  #domain(shop: string): string {
    const domain = shop.trim().toLowerCase();
    if (!SHOP_DOMAIN.test(domain))
      throw this.#refuse('invalid_shop', `"${shop.slice(0, 80)}" is not a shop domain like name.myshopify.com`);
    const adminUrl = this.#options.adminUrlFor?.(domain);
    if (adminUrl !== undefined) routeShopAdmin(domain, adminUrl);
    return domain;
  }

  #base(shop: string): string {
    return (this.#options.adminUrlFor?.(shop) ?? `https://${shop}`).replace(/\/+$/, '');
  }

  #refuse(reason: InstallRefusal, message: string): ShopifyInstallError {
    this.#options.logger.warn({ reason }, `Shopify install refused: ${message}`);
    return new ShopifyInstallError(reason, message);
  }
}
