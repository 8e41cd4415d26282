/**
 * Which AccessTokenSource each Shopify shop uses: the registry's static token, or an OAuth provider
 * (access-token.ts) configured once per shop and kept for the process.
 */
import type { ShopSecretStore } from '../../shops/shop-secrets.js';
import type { ShopConfig } from '../../shops/shops.js';
import type { ShopifyShopConfig } from './settings.js';
import type { Logger } from '../../log.js';
import { type AccessTokenSource, AccessTokenError, StaticAccessToken, OAuthAccessToken } from './access-token.js';

const sources = new Map<string, AccessTokenSource>();

/** Registers (or, with undefined, removes) the token source of a shop; the process start does it for OAuth shops. */
export function useAccessTokenSource(shopId: string, source: AccessTokenSource | undefined): void {
  if (source === undefined) sources.delete(shopId);
  else sources.set(shopId, source);
}

/** Drops the token sources of these shops (removed from what the process serves, or about to be configured anew). */
export function forgetShopifyAccessTokens(shopIds: Iterable<string>): void {
  for (const id of shopIds) sources.delete(id);
}

/** The shop's token source: the registered OAuth provider, or its static token from the registry. */
export function accessTokenSourceFor(shop: ShopifyShopConfig): AccessTokenSource {
  const registered = sources.get(shop.id);
  if (registered) return registered;
  if (shop.shopify.oauth !== undefined) {
    throw new AccessTokenError(
      `shop ${shop.id} gets its token through OAuth (${shop.shopify.oauth.grant}), but this process has no token store (RELAIS_SECRET_KEYS and the database)`,
      false,
    );
  }
  if (shop.shopify.accessToken === undefined)
    throw new AccessTokenError(`shop ${shop.id} has neither shopify.accessToken nor shopify.oauth`, false);
  return new StaticAccessToken(shop.shopify.accessToken);
}

/** The registry's Shopify shops whose token comes through OAuth (kept sealed in the database). */
export function shopifyOAuthShops(shops: readonly ShopConfig[]): ShopifyShopConfig[] {
  return shops.filter(
    (shop): shop is ShopifyShopConfig => shop.platform === 'shopify' && shop.shopify.oauth !== undefined,
  );
}

/** The OAuth provider of every registry shop with `shopify.oauth`, registered for the admin clients. */
export function configureShopifyAccessTokens(
  shops: readonly ShopConfig[],
  deps: { secrets: ShopSecretStore; logger: Logger },
): OAuthAccessToken[] {
  return shopifyOAuthShops(shops).flatMap((shop) => {
    if (shop.shopify.oauth === undefined) return [];
    const provider = new OAuthAccessToken({
      shopId: shop.id,
      domain: shop.shopify.domain,
      grant: shop.shopify.oauth.grant,
      clientId: shop.shopify.oauth.clientId,
      clientSecret: shop.shopify.webhookSecret,
      secrets: deps.secrets,
      logger: deps.logger.child({ shop: shop.id, component: 'shopify-token' }),
      apiVersion: shop.shopify.apiVersion,
      ...(shop.shopify.adminUrl === undefined ? {} : { adminUrl: shop.shopify.adminUrl }),
    });
    useAccessTokenSource(shop.id, provider);
    return [provider];
  });
}

/**
 * A token source for each OAuth shop that has none yet: a shop the Connect page checks before switching it on is
 * not served, so no source was made for it at start or on a reload. A shop's registered source is kept (its
 * refreshes stay one at a time); the one made here is replaced when the shop comes to be served.
 */
export function ensureShopifyAccessTokens(
  shops: readonly ShopConfig[],
  deps: { secrets: ShopSecretStore; logger: Logger },
): void {
  configureShopifyAccessTokens(
    shops.filter((shop) => !sources.has(shop.id)),
    deps,
  );
}

/** How doctor names the shop's token (never its value). */
export function describeShopifyToken(shop: ShopifyShopConfig, options: { withSource?: boolean } = {}): string {
  if (shop.shopify.oauth !== undefined)
    return `${shop.shopify.oauth.grant.replace('_', ' ')} token of app ${shop.shopify.oauth.clientId}`;
  const hint = `access token ${shop.shopify.accessToken?.hint() ?? '…'}`;
  return options.withSource === false ? hint : `${hint} (from ${shop.shopify.accessToken?.source ?? 'nowhere'})`;
}
