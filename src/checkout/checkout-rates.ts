/**
 * The delivery price a customer sees at checkout, platform-neutral: both the Shopify carrier service and the
 * WooCommerce endpoint turn their request into a CheckoutRateRequest, call priceAtCheckout, and map the outcome.
 *
 *   destination → neighbourhood (gazetteer + the shop's aliases, as for orders)
 *   → cache (pickup, neighbourhood, weight band) → simulatePrice, one flight per key → cache
 *
 * Outcomes, and why each is what it is:
 *  - rate (live | cache): the delivery service's price, in whole XOF. Only the total: the service's breakdown
 *    (courier, platform, fees) is never read here, so it cannot reach a storefront.
 *  - rate (fallback): the service was slow or down and the merchant chose a flat price.
 *  - unavailable: the service was slow or down and the merchant chose no flat price. The edges answer 503 so
 *    that Shopify shows its backup rates and the WooCommerce plugin adds nothing.
 *  - no_rate: we cannot price this address: its neighbourhood is unknown (a warn log line says which neighbourhood an alias
 *    could point to, without the customer's address), it is outside the shop's country, or the service refused the request. Never the fallback price:
 *    a flat price for an unknown place is a guess the merchant pays for, the very thing Relais exists to stop.
 *  - disabled: the merchant turned checkout prices off.
 *
 * Time: everything happens within the shop's budgetMs. A simulatePrice call that outlives the budget is not
 * cancelled: it goes on (up to the dispatch timeout) and stores its price, so the next customer gets it.
 */
import { performance } from 'node:perf_hooks';
import type { ShopConfig } from '../config/shops.js';
import { xof, type Xof } from '../domain/money.js';
import { DispatchError } from '../dispatch/errors.js';
import type { AddressFields, NeighbourhoodResolver } from '../geo/resolver.js';
import type { AliasStore } from '../ledger/alias-store.js';
import type { Logger } from '../log.js';
import type { PriceSource } from './price-source.js';
import type { RateCache, SingleFlight } from './rate-cache.js';
import { weightBand } from './weight.js';

export interface CheckoutRateRequest {
  destination: {
    /** ISO 3166-1 alpha-2 as the platform sent it; absent means the shop's country. */
    country?: string;
    fields: AddressFields;
    coords?: { lat: number; lng: number };
  };
  /** Total shipped weight of the basket; 0 when unknown. */
  weightGrams: number;
}

export type CheckoutRateOutcome =
  | { kind: 'rate'; basis: 'live' | 'cache'; amountXof: Xof; neighbourhood: string }
  | { kind: 'rate'; basis: 'fallback'; amountXof: Xof; neighbourhood: string; why: UnavailableWhy }
  | { kind: 'unavailable'; why: UnavailableWhy; neighbourhood: string }
  | { kind: 'no_rate'; why: 'unknown_neighbourhood' | 'outside_delivery_area' | 'refused_by_service'; detail: string }
  | { kind: 'disabled' };

export type UnavailableWhy = 'slow' | 'error';

export interface CheckoutRatesDeps {
  /** The resolver, or a ResolutionMemo in front of it. */
  resolver: Pick<NeighbourhoodResolver, 'resolve'>;
  aliases: Pick<AliasStore, 'list'>;
  cache: RateCache;
  prices: PriceSource;
  flights: SingleFlight<Xof>;
  logger: Logger;
}

/** Kept back from the budget for writing the answer and the network hop back to the platform's socket. */
export const ANSWER_MARGIN_MS = 25;

class OutOfTime extends Error {}

/**
 * @param startedAt performance.now() when the request arrived (the budget counts from there).
 */
export async function priceAtCheckout(
  shop: ShopConfig,
  request: CheckoutRateRequest,
  deps: CheckoutRatesDeps,
  startedAt: number = performance.now(),
): Promise<CheckoutRateOutcome> {
  const policy = shop.policy.checkoutRates;
  if (!policy.enabled) return { kind: 'disabled' };
  const deadline = startedAt + policy.budgetMs - ANSWER_MARGIN_MS;
  // Built on first use: a cache hit logs nothing, and a child logger per request is not free.
  let child: Logger | undefined;
  const log = (): Logger => (child ??= deps.logger.child({ shop: shop.id, component: 'checkout-rates' }));

  const country = request.destination.country?.trim().toUpperCase() || shop.country;
  if (country !== shop.country) {
    log().info({ country }, 'no delivery price at checkout: destination outside the shop\'s country');
    return { kind: 'no_rate', why: 'outside_delivery_area', detail: `destination country ${country}, shop delivers in ${shop.country}` };
  }

  const aliases = { ...shop.policy.neighbourhoodAliases, ...(await runtimeAliases(shop, deps, deadline, log)) };
  const resolution = deps.resolver.resolve({ country: shop.country, fields: request.destination.fields, coords: request.destination.coords, aliases });
  if (!resolution.ok) {
    const target = resolution.candidates[0]?.name ?? '<neighbourhood>';
    // No address in the log (personal data, and the resolver's reason quotes it): the candidates and the fix's shape.
    const fix = `relais alias add ${shop.id} "<the words the customer wrote>" "${target}"`;
    log().warn(
      { candidates: resolution.candidates.map((c) => c.name), fix },
      `no delivery price at checkout: the address names no known neighbourhood. An alias fixes it for every later checkout and order: ${fix} (relais resolve shows how an address resolves)`,
    );
    return { kind: 'no_rate', why: 'unknown_neighbourhood', detail: resolution.reason };
  }
  const neighbourhood = resolution.neighbourhood;
  const band = weightBand(request.weightGrams);
  const key = deps.cache.key({ source: deps.prices.sourceOf(shop), pickup: shop.pickup.neighbourhood, dropoff: neighbourhood, band: band.key });

  const cached = await beforeDeadline(deps.cache.get(key), deadline).catch((error: unknown) => {
    // A cache that cannot answer is a miss, not a failure: the price can still be asked for.
    log().warn({ err: errorText(error) }, 'checkout price cache unreadable; asking the delivery service');
    return undefined;
  });
  if (cached !== undefined) return { kind: 'rate', basis: 'cache', amountXof: cached, neighbourhood: neighbourhood.name };

  const flight = deps.flights.run(key, async () => {
    const simulation = await deps.prices.simulatePrice(
      shop,
      { pickup_city: shop.pickup.neighbourhood, dropoff_city: neighbourhood.name, ...(band.priceAtKg === undefined ? {} : { weight_kg: band.priceAtKg }) },
      { timeoutMs: Math.max(policy.budgetMs, shop.dispatch.timeoutMs) },
    );
    if (simulation.currency !== 'XOF') throw new Error(`simulatePrice answered in ${simulation.currency}, not XOF`);
    const amount = xof(simulation.total);
    if (amount <= 0) throw new Error(`simulatePrice answered a total of ${String(amount)}`);
    await deps.cache.set(key, amount, policy.cacheTtlSeconds).catch((error: unknown) => {
      log().warn({ err: errorText(error) }, 'could not store a checkout price in Redis');
    });
    return amount;
  });

  try {
    const amount = await beforeDeadline(flight, deadline);
    return { kind: 'rate', basis: 'live', amountXof: amount, neighbourhood: neighbourhood.name };
  } catch (error) {
    if (error instanceof DispatchError && !error.retryable && error.kind === 'http') {
      // The service understood and said no (a weight it does not carry, a name it refuses): no price to show.
      log().warn({ err: error.toJSON(), neighbourhood: neighbourhood.name, band: band.key }, 'no delivery price at checkout: the delivery service refused the price request');
      return { kind: 'no_rate', why: 'refused_by_service', detail: error.message };
    }
    const why: UnavailableWhy = error instanceof OutOfTime ? 'slow' : 'error';
    log().warn(
      { why, err: errorText(error), budgetMs: policy.budgetMs, fallback: policy.fallback.mode },
      why === 'slow' ? 'delivery service too slow for the checkout time budget' : 'delivery service unavailable for a checkout price',
    );
    if (policy.fallback.mode === 'rate') {
      return { kind: 'rate', basis: 'fallback', amountXof: xof(policy.fallback.amountXof), neighbourhood: neighbourhood.name, why };
    }
    return { kind: 'unavailable', why, neighbourhood: neighbourhood.name };
  }
}

/** The operator's run-time aliases (Redis); without them in time, the registry's still apply. */
async function runtimeAliases(shop: ShopConfig, deps: CheckoutRatesDeps, deadline: number, log: () => Logger): Promise<Record<string, string>> {
  try {
    return await beforeDeadline(deps.aliases.list(shop.id), deadline);
  } catch (error) {
    log().warn({ err: errorText(error) }, 'run-time neighbourhood aliases unreadable; using the registry\'s only');
    return {};
  }
}

/** Resolves with `work`, or rejects with OutOfTime at the deadline (the work itself goes on). */
function beforeDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
  const left = deadline - performance.now();
  if (left <= 0) return Promise.reject(new OutOfTime('time budget spent'));
  let timer: NodeJS.Timeout | undefined;
  const out = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OutOfTime('time budget spent')), left);
  });
  return Promise.race([work, out]).finally(() => clearTimeout(timer));
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
