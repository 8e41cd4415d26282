/**
 * One flight's work (at most one per cache key at a time, checkout-rates.ts): the neighbourhood's simulated
 * price, the city's fallback tariff and, for a customer paying at the door, the collection fee; then the
 * fallback-tariff guard's verdict. A price worth showing is stored in the cache for the next customers.
 */
import type { ShopConfig } from '../shops/shops.js';
import { xof, type Xof } from '../domain/money.js';
import { DeliveryError } from '../domain/delivery.js';
import type { Neighbourhood } from '../geo/resolver.js';
import type { Logger } from '../log.js';
import {
  judgeQuote,
  serviceId,
  weightLabel,
  type FallbackKey,
  type TariffMemory,
} from '../orders/dispatch/tariff-guard.js';
import type { ServiceMapStore } from '../ledger/service-map.js';
import { learnCodFee, type CodFeeMemory } from './cod-fee.js';
import type { PriceSource } from './price-source.js';
import type { RateCache } from './rate-cache.js';
import type { WeightBand } from './weight.js';

/** The simulatePrice "payment mode" under which checkout fallbacks are kept: never mixed with firm quotes' fallbacks. */
export const SIMULATED_PAYMENT_MODE = 'simulate_price';

/** What one flight finds: a price to show, or a price at the fallback tariff that must not be shown. */
export type CheckoutPrice =
  { kind: 'priced'; amountXof: Xof } | { kind: 'fallback'; simulatedXof: Xof; fallbackXof: number; city: string };

/** What a flight reads and writes: the price cache, the service's prices, and what was learned of the service. */
export interface LivePriceDeps {
  cache: RateCache;
  prices: PriceSource;
  /** The fallback-tariff guard's memory, shared with the dispatch job (same serviceId). */
  tariffs: TariffMemory;
  /** The service map (src/ledger/service-map.ts): a name seen at the fallback is recorded for the dispatch job. */
  serviceMap?: Pick<ServiceMapStore, 'record'>;
  fees: CodFeeMemory;
}

/** What one checkout asks a price for, once its destination is resolved. */
export interface PriceQuestion {
  shop: ShopConfig;
  deps: LivePriceDeps;
  log: () => Logger;
  neighbourhood: Neighbourhood;
  band: WeightBand;
  atDoor: boolean;
  /** Each call to the service may take this long, past the checkout's budget: its answer is cached for later. */
  timeoutMs: number;
  cacheKey: string;
}

export async function livePrice(question: PriceQuestion): Promise<CheckoutPrice> {
  const { shop, deps, log, neighbourhood, band, atDoor, timeoutMs, cacheKey } = question;
  const policy = shop.policy.checkoutRates;
  const service = serviceId(shop);
  const fallbackKey: FallbackKey = {
    pickup: shop.pickup.neighbourhood,
    city: neighbourhood.city,
    weight: weightLabel(band.priceAtKg),
    paymentMode: SIMULATED_PAYMENT_MODE,
  };
  const simulate = async (dropoff: string): Promise<Xof> => {
    const simulation = await deps.prices.price(
      shop,
      {
        pickupNeighbourhood: shop.pickup.neighbourhood,
        dropoffNeighbourhood: dropoff,
        ...(band.priceAtKg === undefined ? {} : { weightKg: band.priceAtKg }),
      },
      { timeoutMs },
    );
    if (simulation.currency !== 'XOF') throw new Error(`simulatePrice answered in ${simulation.currency}, not XOF`);
    const amount = xof(simulation.total);
    if (amount <= 0) throw new Error(`simulatePrice answered a total of ${String(amount)}`);
    return amount;
  };
  // The three are independent: the neighbourhood's price, the city's fallback, the fee; the last two are
  // read from Redis once learned, so a warm service costs one simulatePrice and two Redis reads.
  const [simulated, fallback, fee] = await Promise.all([
    simulate(neighbourhood.name),
    cityFallback(deps, service, fallbackKey, () => simulate(neighbourhood.city), log),
    atDoor ? codFee(shop, deps, service, neighbourhood.name, timeoutMs, log) : Promise.resolve(xof(0)),
  ]);
  const verdict = judgeQuote(simulated, fallback, false);
  if (verdict.kind === 'fallback') {
    await deps.serviceMap
      ?.record({ id: service, baseUrl: shop.dispatch.baseUrl }, [
        {
          name: neighbourhood.name,
          priced: false,
          totalXof: simulated,
          quotedFor: 'simulatePrice',
          learnedAt: new Date(),
        },
      ])
      .catch(() => undefined);
    return { kind: 'fallback', simulatedXof: simulated, fallbackXof: verdict.fallbackXof, city: neighbourhood.city };
  }
  const amount = xof(simulated + fee);
  await deps.cache.set(cacheKey, amount, policy.cacheTtlSeconds).catch((error: unknown) => {
    log().warn({ err: errorText(error) }, 'could not store a checkout price in Redis');
  });
  return { kind: 'priced', amountXof: amount };
}

/**
 * The simulated price of the city name (the fallback tariff), from Redis or learned once. A service that refuses
 * the city name outright has no fallback to fall into: nothing to compare with (as for orders).
 */
async function cityFallback(
  deps: LivePriceDeps,
  service: string,
  key: FallbackKey,
  learn: () => Promise<Xof>,
  log: () => Logger,
): Promise<number | undefined> {
  const known = await deps.tariffs.fallback(service, key).catch(() => undefined);
  if (known !== undefined) return known;
  try {
    const learned = await learn();
    await deps.tariffs.rememberFallback(service, key, learned).catch((error: unknown) => {
      log().warn({ err: errorText(error) }, 'could not store the fallback tariff in Redis');
    });
    return learned;
  } catch (error) {
    if (refusedByService(error)) {
      log().warn(
        { err: errorText(error), city: key.city },
        'could not learn the fallback tariff (price for the city name refused)',
      );
      return undefined;
    }
    throw error;
  }
}

/** The service's collection fee, from Redis or learned once (cod-fee.ts). */
async function codFee(
  shop: ShopConfig,
  deps: LivePriceDeps,
  service: string,
  neighbourhood: string,
  timeoutMs: number,
  log: () => Logger,
): Promise<Xof> {
  const known = await deps.fees.get(service).catch(() => undefined);
  if (known !== undefined) return known;
  const learned = await learnCodFee(shop, deps.prices, neighbourhood, timeoutMs, log).catch((error: unknown) => {
    // Not the service refusing this destination's price: a fee that cannot be learned is the service unavailable
    // for a door price (the shop's flat rate, or none), never "refused" (which would hide the rate for good).
    if (refusedByService(error)) throw new Error(`cannot learn the cash-collection fee: ${error.message}`);
    throw error;
  });
  await deps.fees.set(service, learned).catch((error: unknown) => {
    log().warn({ err: errorText(error) }, 'could not store the cash-collection fee in Redis');
  });
  return learned;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The service understood the request and said no (not a failure to answer, nor an answer Relais cannot read). */
export function refusedByService(error: unknown): error is DeliveryError {
  return error instanceof DeliveryError && error.answer === 'refused' && !error.retryable;
}
