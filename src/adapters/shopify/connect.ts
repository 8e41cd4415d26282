/**
 * Connecting a merchant's Shopify shop through Relais's app (issue 17): the two ways an install begins, and what
 * its end leaves in the database. The HTTP side (cookies, redirects, pages) is src/http/routes/shopify-connect.ts.
 *
 *  - From the dashboard's Connect page: the operator names the shop and its Relais id; `beginFromDashboard`
 *    answers a one-time install link (a ticket kept 10 minutes in Redis) the page sends the browser to. The link
 *    is on Relais's own path because the dashboard's session cookie (Path=/dashboard, SameSite=Strict) never
 *    reaches the callback, which Shopify's admin opens cross-site.
 *  - From Shopify: the app URL opened from the shop's admin (after Shopify's managed install) carries Shopify's
 *    hmac; the shop's Relais id is the one it was connected under, or one made from its domain.
 *
 * Either way the install state is bound to a random browser key the route puts in a cookie (SameSite=Lax, so
 * Shopify's redirect back brings it): only the browser that began can finish. At the callback the tokens are
 * stored sealed (oauth.ts) and the shop saved in the ShopDirectory, switched off until its settings are filled;
 * a shop already connected keeps its settings and on/off state, only its Shopify part is brought up to date.
 */
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Secret } from '../../shops/secret.js';
import type { ShopDirectory, ConnectedShop } from '../../shops/shop-directory.js';
import type { ShopSecretStore } from '../../shops/shop-secrets.js';
import type { ShopConfig } from '../../shops/shops.js';
import { SHOP_ID_PATTERN } from '../../domain/ids.js';
import type { Logger } from '../../log.js';
import type { RedisClient } from '../../redis.js';
import { RedisInstallStates, ShopifyInstall, ShopifyInstallError, type InstallStateStore } from './oauth.js';
import { shopifyAccessScopes } from './scopes.js';

export const SHOPIFY_INSTALL_PATH = '/connect/shopify/install';
export const SHOPIFY_CALLBACK_PATH = '/connect/shopify/callback';
/** Where the app's client secret is sealed for each installed shop: Shopify signs its webhooks with it. */
export const WEBHOOK_SECRET = 'shopify.webhookSecret';
const TICKET_TTL_MS = 10 * 60_000;

export interface ShopifyConnectOptions {
  install: ShopifyInstall;
  clientId: string;
  clientSecret: Secret;
  directory: ShopDirectory;
  secrets: ShopSecretStore;
  /** The Connect page's install links. */
  tickets: InstallStateStore;
  /**
   * The shops this process serves (the registry file's and the enabled connected ones): a served shop that is
   * not in the directory is a registry-file shop, whose id and domain are not connected a second time.
   */
  servedShops: () => readonly ShopConfig[];
  /** Local emulator only: where https://{domain} is served (saved as the shop's adminUrl). */
  adminUrlFor?: (domain: string) => string | undefined;
  logger: Logger;
}

/** A begun install: where to send the browser, and the key it must keep (a cookie) to finish. */
export interface BegunInstall {
  url: string;
  browserKey: string;
}

export interface ConnectedShopify {
  shopId: string;
  domain: string;
  /** False when the shop was already connected (its settings and on/off state kept). */
  created: boolean;
  enabled: boolean;
}

const ticketSchema = z.object({ domain: z.string(), shopId: z.string() });
const bindingOf = (browserKey: string) => createHash('sha256').update(browserKey).digest('hex');
const domainOf = (shop: ConnectedShop): unknown => (shop.document.shopify as { domain?: unknown } | undefined)?.domain;

export class ShopifyConnect {
  constructor(private readonly options: ShopifyConnectOptions) {}

  /** The Connect page's install link for this shop (relative: the browser is on Relais's own site). */
  async beginFromDashboard(input: { domain: string; shopId: string }): Promise<string> {
    const ticket = randomBytes(32).toString('base64url');
    const domain = this.options.install.shopDomain(input.domain);
    await this.options.tickets.put(ticket, JSON.stringify({ domain, shopId: input.shopId }), TICKET_TTL_MS);
    return `${SHOPIFY_INSTALL_PATH}?ticket=${ticket}`;
  }

  /** Opens a Connect page link (once): the authorize URL for the shop the operator named. */
  async beginFromTicket(ticket: string): Promise<BegunInstall> {
    const stored = ticket === '' ? undefined : await this.options.tickets.take(ticket);
    if (stored === undefined)
      throw this.#refuse(
        'unknown_ticket',
        'this install link is unknown, already used or older than 10 minutes: connect the shop again from the dashboard',
      );
    const { domain, shopId } = ticketSchema.parse(JSON.parse(stored));
    await this.#assertFree(shopId, domain);
    return this.#begin(domain, shopId);
  }

  /** The app URL opened from the shop's admin: checked to be Shopify's, then the authorize URL. */
  async beginFromShopify(query: URLSearchParams): Promise<BegunInstall> {
    const domain = this.options.install.shopDomain(query.get('shop') ?? '');
    if (!(await this.options.install.signedByShopify(query)))
      throw this.#refuse(
        'invalid_hmac',
        `the install request for ${domain} is not signed by Shopify with this app's client secret (or its timestamp is stale): open the app from the shop's admin, or connect the shop from Relais's dashboard`,
      );
    const shopId = await this.#shopIdFor(domain);
    await this.#assertFree(shopId, domain);
    return this.#begin(domain, shopId);
  }

  /** Shopify's redirect back: tokens stored sealed (oauth.ts), then the shop saved. */
  async finish(query: URLSearchParams, browserKey: string | undefined): Promise<ConnectedShopify> {
    const installed = await this.options.install.callback(
      query,
      browserKey === undefined ? {} : { binding: bindingOf(browserKey) },
    );
    const { shopId, domain } = installed;
    await this.options.secrets.put(shopId, WEBHOOK_SECRET, this.options.clientSecret.reveal());
    const existing = (await this.options.directory.list()).find((shop) => shop.id === shopId);
    const adminUrl = this.options.adminUrlFor?.(domain);
    const shopify = {
      domain,
      oauth: { grant: 'authorization_code', clientId: this.options.clientId },
      webhookSecret: { stored: WEBHOOK_SECRET },
      ...(adminUrl === undefined ? {} : { adminUrl }),
    };
    if (existing === undefined) {
      const document = { id: shopId, platform: 'shopify', shopify };
      await this.options.directory.save({ id: shopId, platform: 'shopify', document, enabled: false });
    } else {
      // Reinstalled: the settings stay; a legacy static token gives way to the app's tokens.
      const previous = { ...(existing.document.shopify as Record<string, unknown>) };
      delete previous.accessToken;
      const document = { ...existing.document, shopify: { ...previous, ...shopify } };
      await this.options.directory.save({ id: shopId, platform: 'shopify', document, enabled: existing.enabled });
    }
    this.options.logger.info(
      { shopDomain: domain, shopId, created: existing === undefined },
      'Shopify shop connected through the app install',
    );
    return { shopId, domain, created: existing === undefined, enabled: existing?.enabled ?? false };
  }

  async #begin(domain: string, shopId: string): Promise<BegunInstall> {
    const browserKey = randomBytes(32).toString('base64url');
    const { url } = await this.options.install.begin({ shop: domain, shopId, binding: bindingOf(browserKey) });
    return { url, browserKey };
  }

  /** The id the shop was connected under, else one made from its myshopify name that no other shop has. */
  async #shopIdFor(domain: string): Promise<string> {
    const connected = await this.options.directory.list();
    const known = connected.find((shop) => shop.platform === 'shopify' && domainOf(shop) === domain);
    if (known) return known.id;
    const taken = new Set([...connected.map((s) => s.id), ...this.options.servedShops().map((s) => s.id)]);
    const base = domain.replace(/\.myshopify\.com$/, '').slice(0, 44);
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? base : `${base}-${n}`;
      if (!taken.has(candidate) && SHOP_ID_PATTERN.test(candidate)) return candidate;
    }
  }

  /** Refuses an id or a domain that belongs to another shop (tokens are stored under the id at the callback). */
  async #assertFree(shopId: string, domain: string): Promise<void> {
    const connected = await this.options.directory.list();
    const connectedIds = new Set(connected.map((shop) => shop.id));
    const inFile = this.options
      .servedShops()
      .find(
        (shop) =>
          !connectedIds.has(shop.id) &&
          (shop.id === shopId || (shop.platform === 'shopify' && shop.shopify.domain === domain)),
      );
    if (inFile)
      throw this.#refuse(
        'shop_taken',
        `${inFile.id === shopId ? `shop id ${shopId}` : domain} is already served from the registry file (shop ${inFile.id})`,
      );
    for (const shop of connected) {
      const sameDomain = shop.platform === 'shopify' && domainOf(shop) === domain;
      if (shop.id === shopId && !sameDomain)
        throw this.#refuse('shop_taken', `shop id ${shopId} is already taken by another connected shop`);
      if (shop.id !== shopId && sameDomain)
        throw this.#refuse('shop_taken', `${domain} is already connected as shop ${shop.id}`);
    }
  }

  #refuse(reason: 'unknown_ticket' | 'shop_taken' | 'invalid_hmac', message: string): ShopifyInstallError {
    this.options.logger.warn({ reason }, `Shopify install refused: ${message}`);
    return new ShopifyInstallError(reason, message);
  }
}

/** The operator's Shopify app (SHOPIFY_API_KEY / SHOPIFY_API_SECRET) and where Relais is reached. */
export interface ShopifyAppSettings {
  clientId: string;
  clientSecret: Secret;
  /** RELAIS_PUBLIC_URL: the callback Shopify redirects to is under it (and must be in the app's redirect_urls). */
  publicUrl: string;
  /** Local emulator only: where https://{domain} is served. */
  adminUrlFor?: (domain: string) => string | undefined;
}

/** The install flow over this process's Redis (states, install links) and database (tokens, shops). */
export function createShopifyConnect(
  app: ShopifyAppSettings,
  deps: {
    redis: RedisClient;
    prefix: string;
    directory: ShopDirectory;
    secrets: ShopSecretStore;
    servedShops: () => readonly ShopConfig[];
    logger: Logger;
  },
): ShopifyConnect {
  const logger = deps.logger.child({ component: 'shopify-connect' });
  const install = new ShopifyInstall({
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    scopes: shopifyAccessScopes(),
    redirectUri: new URL(SHOPIFY_CALLBACK_PATH, app.publicUrl).toString(),
    states: new RedisInstallStates(deps.redis, deps.prefix),
    secrets: deps.secrets,
    logger,
    ...(app.adminUrlFor ? { adminUrlFor: app.adminUrlFor } : {}),
  });
  return new ShopifyConnect({
    install,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    directory: deps.directory,
    secrets: deps.secrets,
    tickets: new RedisInstallStates(deps.redis, deps.prefix, 'shopify-install-link'),
    servedShops: deps.servedShops,
    ...(app.adminUrlFor ? { adminUrlFor: app.adminUrlFor } : {}),
    logger,
  });
}
