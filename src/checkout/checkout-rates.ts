/**
 * The delivery price a customer sees at checkout, platform-neutral: both the Shopify carrier service and the
 * WooCommerce endpoint turn their request into a CheckoutRateRequest, call priceAtCheckout, and map the outcome.
 *
 *   destination → neighbourhood (gazetteer + the shop's aliases, as for orders)
 *   → cache (pickup, neighbourhood, weight band, payment) → simulatePrice, one flight per key → cache
 *
 * The rate is what the customer pays at the door:
 *  - the collection fee: simulatePrice shows no fee (its fields are "not shown"; it knows no payment mode), so
 *    for a customer who pays at the door (collectsAtDoor: the platform's payment method, else the shop's
 *    includeCodFee) the service's fee, learned from two quotes and kept in Redis (cod-fee.ts), is added.
 *  - the fallback-tariff guard (src/orders/dispatch/tariff-guard.ts, as for orders): the service's simulated price for the
 *    destination's CITY NAME is learned once through the same simulatePrice (same pickup and weight band) and
 *    kept per serviceId(shop); a neighbourhood priced at or above it is one the service does not price, and
 *    gets no rate, exactly as an unknown neighbourhood does (same outcome, same log line with the alias fix).
 *  - the shop's maximum (checkoutRates.maxRateXof): a rate above it is not offered.
 *
 * Outcomes, and why each is what it is:
 *  - rate (live | cache): the delivery service's price plus, when collected at the door, its collection fee, in
 *    whole XOF. Only totals: the service's breakdown never reaches a storefront.
 *  - rate (fallback): the service was slow or down and the merchant chose a flat price.
 *  - unavailable: the service was slow or down and the merchant chose no flat price. The edges answer 503 so
 *    that Shopify shows its backup rates and the WooCommerce plugin adds nothing.
 *  - no_rate: we cannot price this address: its neighbourhood is unknown or the service prices it at the
 *    fallback tariff (a warn log line says which alias would fix it, without the customer's address), it is
 *    outside the shop's country, the service refused the request, or the price is above the shop's maximum.
 *    Never the flat price: a flat price for an unknown place is a guess the merchant pays for, the very thing
 *    Relais exists to stop.
 *  - disabled: the merchant turned checkout prices off.
 *
 * Time: everything happens within the shop's budgetMs. A simulatePrice call that outlives the budget is not
 * cancelled: it goes on (up to the dispatch timeout) and stores its price, so the next customer gets it.
 */
import { performance } from 'node:perf_hooks';
import type { ShopConfig } from '../shops/shops.js';
import { xof, type Xof } from '../domain/money.js';
import type { AddressFields, Neighbourhood, NeighbourhoodResolver } from '../geo/resolver.js';
import type { AliasStore } from '../ledger/alias-store.js';
import type { Logger } from '../log.js';
import { collectsAtDoor } from './cod-fee.js';
import type { SingleFlight } from './rate-cache.js';
import { weightBand } from './weight.js';
import { errorText, livePrice, refusedByService, type CheckoutPrice, type LivePriceDeps } from './live-price.js';
import { RelaisError } from '../domain/errors.js';

export type { CheckoutPrice } from './live-price.js';

export interface CheckoutRateRequest {
  destination: {
    /** ISO 3166-1 alpha-2 as the platform sent it; absent means the shop's country. */
    country?: string;
    fields: AddressFields;
    coords?: { lat: number; lng: number };
  };
  /** Total shipped weight of the basket; 0 when unknown. */
  weightGrams: number;
  /** The payment method the platform names, when it does (the WooCommerce plugin); Shopify never does. */
  paymentMethod?: string;
}

export type CheckoutRateOutcome =
  | { kind: 'rate'; basis: 'live' | 'cache'; amountXof: Xof; neighbourhood: string }
  | { kind: 'rate'; basis: 'fallback'; amountXof: Xof; neighbourhood: string; why: UnavailableWhy }
  | { kind: 'unavailable'; why: UnavailableWhy; neighbourhood: string }
  | { kind: 'no_rate'; why: NoRateWhy; detail: string }
  | { kind: 'disabled' };

export type UnavailableWhy = 'slow' | 'error';
export type NoRateWhy =
  'unknown_neighbourhood' | 'fallback_tariff' | 'above_maximum' | 'outside_delivery_area' | 'refused_by_service';

export interface CheckoutRatesDeps extends LivePriceDeps {
  /** The resolver, or a ResolutionMemo in front of it. */
  resolver: Pick<NeighbourhoodResolver, 'resolve'>;
  aliases: Pick<AliasStore, 'list'>;
  flights: SingleFlight<CheckoutPrice>;
  logger: Logger;
  /** Told of every rate withheld (fallback tariff, above the maximum), for the metrics. */
  onWithheld?(shopId: string, why: NoRateWhy): void;
}

/** Kept back from the budget for writing the answer and the network hop back to the platform's socket. */
export const ANSWER_MARGIN_MS = 25;

/** The checkout's time budget ran out before the service answered: a later checkout may be quicker. */
class OutOfTime extends RelaisError {
  constructor() {
    super({ failure: 'transient', message: 'time budget spent' });
  }
}

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
    log().info({ country }, "no delivery price at checkout: destination outside the shop's country");
    return {
      kind: 'no_rate',
      why: 'outside_delivery_area',
      detail: `destination country ${country}, shop delivers in ${shop.country}`,
    };
  }

  const resolved = await resolveDestination(shop, request, deps, deadline, log);
  if (resolved.kind === 'no_rate') return resolved;
  const neighbourhood = resolved.neighbourhood;
  const band = weightBand(request.weightGrams);
  const atDoor = collectsAtDoor(shop, request.paymentMethod);
  const key = deps.cache.key({
    source: deps.prices.sourceOf(shop),
    pickup: shop.pickup.neighbourhood,
    dropoff: neighbourhood,
    band: band.key,
    payment: atDoor ? 'cod' : 'prepaid',
  });
  const timeoutMs = Math.max(policy.budgetMs, shop.dispatch.timeoutMs);

  const cached = await beforeDeadline(deps.cache.get(key), deadline).catch((error: unknown) => {
    // A cache that cannot answer is a miss, not a failure: the price can still be asked for.
    log().warn({ err: errorText(error) }, 'checkout price cache unreadable; asking the delivery service');
    return undefined;
  });
  if (cached !== undefined)
    return bounded(
      shop,
      { kind: 'rate', basis: 'cache', amountXof: cached, neighbourhood: neighbourhood.name },
      deps,
      log,
    );

  const flight = deps.flights.run(key, () =>
    livePrice({ shop, deps, log, neighbourhood, band, atDoor, timeoutMs, cacheKey: key }),
  );

  try {
    const price = await beforeDeadline(flight, deadline);
    if (price.kind === 'fallback') return withheldAtFallbackTariff(price, shop, deps, log, neighbourhood.name);
    return bounded(
      shop,
      { kind: 'rate', basis: 'live', amountXof: price.amountXof, neighbourhood: neighbourhood.name },
      deps,
      log,
    );
  } catch (error) {
    return answerWithoutLivePrice(error, { shop, log, neighbourhood: neighbourhood.name, band: band.key });
  }
}

/** The destination's neighbourhood (the shop's and the operator's aliases first), or why there is no price. */
async function resolveDestination(
  shop: ShopConfig,
  request: CheckoutRateRequest,
  deps: CheckoutRatesDeps,
  deadline: number,
  log: () => Logger,
): Promise<{ kind: 'resolved'; neighbourhood: Neighbourhood } | Extract<CheckoutRateOutcome, { kind: 'no_rate' }>> {
  const aliases = { ...shop.policy.neighbourhoodAliases, ...(await runtimeAliases(shop, deps, deadline, log)) };
  const resolution = deps.resolver.resolve({
    country: shop.country,
    fields: request.destination.fields,
    coords: request.destination.coords,
    aliases,
  });
  if (!resolution.ok) {
    const target = resolution.candidates[0]?.name ?? '<neighbourhood>';
    // No address in the log (personal data, and the resolver's reason quotes it): the candidates and the fix's shape.
    warnAliasFix(
      shop,
      log,
      'the address names no known neighbourhood',
      { candidates: resolution.candidates.map((c) => c.name) },
      target,
    );
    return { kind: 'no_rate', why: 'unknown_neighbourhood', detail: resolution.reason };
  }
  return { kind: 'resolved', neighbourhood: resolution.neighbourhood };
}

/** A neighbourhood the service prices at its city's fallback tariff is one it does not price: no rate, as if unknown. */
function withheldAtFallbackTariff(
  price: Extract<CheckoutPrice, { kind: 'fallback' }>,
  shop: ShopConfig,
  deps: CheckoutRatesDeps,
  log: () => Logger,
  neighbourhood: string,
): CheckoutRateOutcome {
  const detail = `the delivery service does not price '${neighbourhood}': it is priced at the fallback tariff of ${String(price.fallbackXof)} XOF, its price for the city name '${price.city}'`;
  warnAliasFix(
    shop,
    log,
    detail,
    { neighbourhood, simulated: price.simulatedXof, fallback: price.fallbackXof },
    '<neighbourhood the service prices>',
  );
  deps.onWithheld?.(shop.id, 'fallback_tariff');
  return { kind: 'no_rate', why: 'fallback_tariff', detail };
}

/**
 * The service refused, was too slow or failed: a refusal is no rate (it will not change); slow or failing, the
 * shop's flat rate when it set one, else unavailable (the platform shows its backup rates).
 */
function answerWithoutLivePrice(
  error: unknown,
  at: { shop: ShopConfig; log: () => Logger; neighbourhood: string; band: string },
): CheckoutRateOutcome {
  const { shop, log, neighbourhood, band } = at;
  const policy = shop.policy.checkoutRates;
  if (refusedByService(error)) {
    // The service understood and said no (a weight it does not carry, a name it refuses): no price to show.
    log().warn(
      { err: error.toJSON(), neighbourhood, band },
      'no delivery price at checkout: the delivery service refused the price request',
    );
    return { kind: 'no_rate', why: 'refused_by_service', detail: error.message };
  }
  const why: UnavailableWhy = error instanceof OutOfTime ? 'slow' : 'error';
  log().warn(
    { why, err: errorText(error), budgetMs: policy.budgetMs, fallback: policy.fallback.mode },
    why === 'slow'
      ? 'delivery service too slow for the checkout time budget'
      : 'delivery service unavailable for a checkout price',
  );
  if (policy.fallback.mode === 'rate') {
    return {
      kind: 'rate',
      basis: 'fallback',
      amountXof: xof(policy.fallback.amountXof),
      neighbourhood,
      why,
    };
  }
  return { kind: 'unavailable', why, neighbourhood };
}

/** A live or cached rate above the shop's maximum is not offered: no rate, a warn line, a count. */
function bounded(
  shop: ShopConfig,
  outcome: Extract<CheckoutRateOutcome, { kind: 'rate' }>,
  deps: CheckoutRatesDeps,
  log: () => Logger,
): CheckoutRateOutcome {
  const max = shop.policy.checkoutRates.maxRateXof;
  if (max === undefined || outcome.amountXof <= max) return outcome;
  const detail = `the delivery price to ${outcome.neighbourhood}, ${String(outcome.amountXof)} XOF, is above the shop's maximum of ${String(max)} XOF`;
  log().warn(
    { neighbourhood: outcome.neighbourhood, amountXof: outcome.amountXof, maxRateXof: max },
    `no delivery price at checkout: ${detail}`,
  );
  deps.onWithheld?.(shop.id, 'above_maximum');
  return { kind: 'no_rate', why: 'above_maximum', detail };
}

/** The merchant's way out of a no_rate for an address: an alias to a neighbourhood the service prices. */
/** The warn line of a checkout without a price, with the alias that would fix it; never the customer's address. */
function warnAliasFix(
  shop: ShopConfig,
  log: () => Logger,
  what: string,
  extra: Record<string, unknown>,
  target: string,
): void {
  const fix = `relais alias add ${shop.id} "<the words the customer wrote>" "${target}"`;
  log().warn(
    { ...extra, fix },
    `no delivery price at checkout: ${what}. An alias fixes it for every later checkout and order: ${fix} (relais resolve shows how an address resolves)`,
  );
}

/** The operator's run-time aliases (Redis); without them in time, the registry's still apply. */
async function runtimeAliases(
  shop: ShopConfig,
  deps: CheckoutRatesDeps,
  deadline: number,
  log: () => Logger,
): Promise<Record<string, string>> {
  try {
    return await beforeDeadline(deps.aliases.list(shop.id), deadline);
  } catch (error) {
    log().warn({ err: errorText(error) }, "run-time neighbourhood aliases unreadable; using the registry's only");
    return {};
  }
}

/** Resolves with `work`, or rejects with OutOfTime at the deadline (the work itself goes on). */
function beforeDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
  const left = deadline - performance.now();
  if (left <= 0) return Promise.reject(new OutOfTime());
  let timer: NodeJS.Timeout | undefined;
  const out = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OutOfTime()), left);
  });
  return Promise.race([work, out]).finally(() => clearTimeout(timer));
}
