/**
 * Delivery prices at checkout, over HTTP: one route per shop platform, its path, request, signature and answer
 * given by the platform (StorePlatform.checkoutRates, src/shops/platforms/<platform>/checkout-rates.ts):
 *   POST /checkout/shopify/:shopId/rates       Shopify CarrierService callback (X-Shopify-Hmac-Sha256)
 *   POST /checkout/woocommerce/:shopId/rates   the WooCommerce plugin's endpoint (X-Relais-Signature)
 *
 * Bodies are read raw here (the signature covers the exact bytes) and bounded. Answers:
 *   200  a rate, or `{ rates: [] }` when Relais cannot price the address (Shopify: "cannot handle this request")
 *   503  `{ rates: [] }`: the delivery service is slow or down and the shop has no flat fallback
 *        (Shopify then shows the shop's backup rates; the plugin adds nothing)
 *   400  a body that is not a rate request · 401 missing or wrong signature · 404 unknown shop, or prices disabled
 *   500  `{ rates: [] }`: a bug; Shopify shows backup rates
 *
 * Mounted by createApp, which passes its own dependencies; the routes build the rest themselves (resolver,
 * alias store, cache, their own dispatch clients for the public simulatePrice) and close their clients when the
 * web process closes its Redis connection, the last thing it does on shutdown.
 */
import { performance } from 'node:perf_hooks';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import type { RedisClient } from '../redis.js';
import type { ShopRegistry } from '../shops/shops.js';
import { NeighbourhoodResolver } from '../geo/resolver.js';
import { TariffMemory } from '../orders/dispatch/tariff-guard.js';
import type { ServiceMapStore } from '../ledger/service-map.js';
import type { AliasStore } from '../ledger/alias-store.js';
import type { Logger } from '../log.js';
import { VERIFICATION_STATUS } from '../shops/platforms/verification-status.js';
import type { RelaisMetrics } from '../observability/metrics.js';
import { storePlatforms, type StorePlatform } from '../shops/platforms/index.js';
import { priceAtCheckout, type CheckoutPrice, type CheckoutRatesDeps } from './checkout-rates.js';
import { CodFeeMemory } from './cod-fee.js';
import { DispatchPriceSource, type PriceSource } from './price-source.js';
import { RateCache, SingleFlight } from './rate-cache.js';
import { ResolutionMemo } from './resolution-memo.js';
import { checkBodySignature } from '../shops/platforms/checkout-signature.js';

/** A rate request lists the basket's items; a thousand lines fit well below this. */
export const MAX_RATE_REQUEST_BYTES = 1024 * 1024;

export interface CheckoutRouteDeps {
  shops: ShopRegistry;
  /** The web process's fail-fast connection: a Redis that cannot answer makes a cache miss, not a wait. */
  redis: RedisClient;
  prefix: string;
  logger: Logger;
  /** The operators' run-time neighbourhood aliases (the ledger's database). */
  aliases: Pick<AliasStore, 'list'>;
  /** Where a name priced at the fallback is recorded (the service map, shared with the dispatch job). */
  serviceMap?: Pick<ServiceMapStore, 'record'>;
  now?(): Date;
  /** Defaults to the gazetteer in data/neighbourhoods. */
  resolver?: NeighbourhoodResolver;
  /** Defaults to one dispatch client per shop, owned (and closed) by these routes. */
  prices?: PriceSource;
  /** The web process's metrics (createApp passes its own): rates withheld are counted. */
  metrics?: RelaisMetrics;
}

export function checkoutRoutes(deps: CheckoutRouteDeps): Router {
  const logger = deps.logger.child({ component: 'checkout-rates' });
  const now = (): Date => (deps.now ? deps.now() : new Date());
  const rates = checkoutRatesDeps(deps);

  const router = Router();
  // The budget counts from arrival, before the body is read.
  const arrival = (_req: Request, res: Response, next: NextFunction) => {
    res.locals.startedAt = performance.now();
    next();
  };
  const raw = express.raw({ type: () => true, limit: MAX_RATE_REQUEST_BYTES });
  for (const platform of storePlatforms())
    router.post(platform.checkoutRates.path, arrival, raw, (req, res) => handle(platform, req, res));
  return router;

  async function handle(platform: StorePlatform, req: Request, res: Response): Promise<void> {
    const startedAt = typeof res.locals.startedAt === 'number' ? res.locals.startedAt : performance.now();
    const shopId = String(req.params.shopId);
    const found = deps.shops.get(shopId);
    const shop = found?.platform === platform.name ? found : undefined;
    if (!shop) {
      res
        .status(VERIFICATION_STATUS.unknown_shop)
        .json({ error: 'unknown_shop', message: `no ${platform.name} shop "${shopId}" in the Relais registry` });
      return;
    }
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const endpoint = platform.checkoutRates;
    const signature = checkBodySignature(rawBody, headerOf(req, endpoint.signatureHeader), endpoint.secretOf(shop));
    if (!signature.ok) {
      logger.warn(
        { shop: shop.id, platform: platform.name, reason: signature.reason },
        'rejected a checkout rate request',
      );
      res.status(VERIFICATION_STATUS[signature.reason]).json({ error: signature.reason });
      return;
    }
    const mismatch = endpoint.mismatch(shop, req.headers);
    if (mismatch) {
      logger.warn({ shop: shop.id, platform: platform.name, reason: mismatch }, 'rejected a checkout rate request');
      res.status(VERIFICATION_STATUS[mismatch]).json({ error: mismatch });
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(rawBody.toString('utf8'));
    } catch {
      res.status(VERIFICATION_STATUS.malformed_body).json({ error: 'malformed_body', message: 'the body is not JSON' });
      return;
    }
    const parsed = endpoint.schema.safeParse(json);
    if (!parsed.success) {
      const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
      res.status(400).json({ error: 'malformed_rate_request', problems });
      return;
    }
    try {
      const outcome = await priceAtCheckout(shop, endpoint.toRequest(parsed.data), rates, startedAt);
      const answer = endpoint.answer(shop, outcome, now());
      res.status(answer.status).json(answer.body);
    } catch (error) {
      logger.error(
        { shop: shop.id, platform: platform.name, err: error instanceof Error ? error.message : String(error) },
        'checkout rate request failed',
      );
      res.status(500).json({ rates: [] });
    }
  }
}

/** What pricing at checkout needs, built once for the routes; a price source made here closes with Redis. */
function checkoutRatesDeps(deps: CheckoutRouteDeps): CheckoutRatesDeps {
  let prices = deps.prices;
  if (!prices) {
    const owned = new DispatchPriceSource(deps.logger);
    deps.redis.once('end', () => void owned.close());
    prices = owned;
  }
  return {
    resolver: new ResolutionMemo(deps.resolver ?? NeighbourhoodResolver.load()),
    aliases: deps.aliases,
    ...(deps.serviceMap ? { serviceMap: deps.serviceMap } : {}),
    cache: new RateCache(deps.redis, deps.prefix),
    prices,
    flights: new SingleFlight<CheckoutPrice>(),
    tariffs: new TariffMemory(deps.redis, deps.prefix),
    fees: new CodFeeMemory(deps.redis, deps.prefix),
    logger: deps.logger,
    onWithheld: (shopId, why) => deps.metrics?.checkoutRatesWithheld.inc({ shop: shopId, reason: why }),
  };
}

function headerOf(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
