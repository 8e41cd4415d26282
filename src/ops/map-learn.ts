/**
 * `relais map learn --shop <id>`: learns the shop's service map before the first order (issue 24). Every name of
 * the gazetteer's places of the shop's country (each place's spelling and its sourced alternate spellings, as
 * candidates.ts spells them) is priced from the shop's pickup and judged against the fallback tariff (the price of
 * the city name for the same parcel); what each showed goes into the service map, in batches, so a run stopped
 * half-way resumes where it was: a name the map learned within the last week is not asked again.
 *
 * Which call: the public simulatePrice needs no key and reserves nothing, but the spec calls its price
 * indicative. A sample of names is first priced both ways; simulatePrice is used for the rest only if it gives
 * every sampled name the same verdict (priced or at the fallback) as createQuote. Paced by the caller (`pace`:
 * the shop's call budget, policy.dispatchCallsPerSecond).
 */
import type { ShopConfig } from '../shops/shops.js';
import { DeliveryError, type DeliveryService, type QuoteRequest } from '../domain/delivery.js';
import { candidateNames, type NameCandidate } from '../geo/candidates.js';
import type { NeighbourhoodResolver } from '../geo/resolver.js';
import type { Neighbourhood } from '../geo/types.js';
import { freshKnowledge } from '../orders/dispatch/name-choice.js';
import { serviceId } from '../orders/dispatch/tariff-guard.js';
import type { NamePrice, ServiceMapStore, ServiceRef } from '../ledger/service-map.js';
import { ShopRateLimiter } from '../orders/rate-limit.js';
import type { RedisClient } from '../redis.js';

/** Names priced both ways before choosing the call. */
export const SAMPLE_SIZE = 6;
/** Names recorded together: what a stopped run loses at most. */
const BATCH = 20;

export type PriceCall = 'createQuote' | 'simulatePrice';

export interface MapLearnDeps {
  shop: ShopConfig;
  resolver: Pick<NeighbourhoodResolver, 'placesOf' | 'placeNamed' | 'isCityRegionOrCountry'>;
  delivery: Pick<DeliveryService, 'quote' | 'price'>;
  map: ServiceMapStore;
  /** Waits for the shop's call budget before each call. */
  pace(): Promise<void>;
  now(): Date;
  onProgress?(progress: MapLearnProgress): void;
}

export interface MapLearnProgress {
  asked: number;
  toAsk: number;
  priced: number;
  atFallback: number;
  failed: number;
}

export interface MapLearnReport extends MapLearnProgress {
  call: PriceCall;
  /** Why that call: the sample's verdicts. */
  why: string;
  city: string;
  fallbackXof: { createQuote: number; simulatePrice?: number };
  /** Names the map already knew (learned within the week): not asked again. */
  alreadyKnown: number;
}

/** What `learnMap` needs, from a runtime: the shop's service, the map, and pacing by the shop's call budget. */
export function mapLearnDeps(
  runtime: {
    redis: RedisClient;
    deliveryFor(shop: ShopConfig): MapLearnDeps['delivery'];
    serviceMap: ServiceMapStore;
    now(): Date;
  },
  prefix: string,
  shop: ShopConfig,
  resolver: MapLearnDeps['resolver'],
): MapLearnDeps {
  const limiter = new ShopRateLimiter(runtime.redis, prefix);
  return {
    shop,
    resolver,
    delivery: runtime.deliveryFor(shop),
    map: runtime.serviceMap,
    pace: () => limiter.acquire(shop.id, shop.policy.dispatchCallsPerSecond),
    now: runtime.now,
  };
}

/** The names worth asking for a country: each place's spellings, once each, never a city name. */
export function namesToLearn(deps: Pick<MapLearnDeps, 'resolver'>, country: string): string[] {
  const names = new Set<string>();
  for (const place of deps.resolver.placesOf(country))
    for (const c of spellingsToLearn(deps.resolver, country, place)) names.add(c.name);
  return [...names];
}

/** One place's names as map learn asks them (and map show counts them): its spellings, and its name under its commune. */
export function spellingsToLearn(
  resolver: Pick<NeighbourhoodResolver, 'placeNamed' | 'isCityRegionOrCountry'>,
  country: string,
  place: Neighbourhood,
): NameCandidate[] {
  return candidateNames({
    place,
    // The commune holding it, for the place's name under it ("Yopougon Sicogi"); its own names come as a place.
    wider: resolver.placeNamed(country, place.name)?.containing.slice(0, 1) ?? [],
    aliases: {},
    isCityRegionOrCountry: (text) => resolver.isCityRegionOrCountry(country, text),
  }).filter((c) => c.precision === 0);
}

/** A reference parcel from the shop's pickup: prepaid, the standard parcel (no weight), no coordinates. */
function quoteRequest(shop: ShopConfig, name: string): QuoteRequest {
  return {
    pickup: { neighbourhood: shop.pickup.neighbourhood, address: shop.pickup.address },
    dropoff: { neighbourhood: name, address: name },
    payment: 'prepaid',
  };
}

type Ask = Record<PriceCall, (name: string) => Promise<number>>;

/** The city whose name prices at the fallback: the pickup's city in the gazetteer, else the country's first. */
function cityOf(deps: Pick<MapLearnDeps, 'resolver' | 'shop'>): string {
  const { shop, resolver } = deps;
  const pickup = resolver.placeNamed(shop.country, shop.pickup.neighbourhood)?.place;
  const city = pickup?.city ?? resolver.placesOf(shop.country)[0]?.city;
  if (!city) throw new Error(`the gazetteer lists no place for country ${shop.country}`);
  return city;
}

/**
 * Prices the sample both ways: simulatePrice is chosen only if its verdict (below its own fallback or not)
 * matches createQuote's for every sampled name. Without a sample (nothing left to learn), createQuote.
 */
async function chooseCall(
  ask: Ask,
  city: string,
  sample: string[],
  fallbackXof: MapLearnReport['fallbackXof'],
): Promise<{ call: PriceCall; why: string; sampled: { name: string; quoteXof: number }[] }> {
  const sampled: { name: string; quoteXof: number }[] = [];
  for (const name of sample) sampled.push({ name, quoteXof: await ask.createQuote(name) });
  if (sample.length === 0) return { call: 'createQuote', why: 'nothing left to learn', sampled };
  try {
    const simulatedFallback = await ask.simulatePrice(city);
    fallbackXof.simulatePrice = simulatedFallback;
    const differing: string[] = [];
    for (const s of sampled) {
      const simulated = await ask.simulatePrice(s.name);
      if (simulated < simulatedFallback !== s.quoteXof < fallbackXof.createQuote) differing.push(s.name);
    }
    if (differing.length === 0)
      return {
        call: 'simulatePrice',
        why: `simulatePrice gave the ${sample.length} sampled names the same verdicts as createQuote`,
        sampled,
      };
    return {
      call: 'createQuote',
      why: `simulatePrice judged ${differing.join(', ')} otherwise than createQuote`,
      sampled,
    };
  } catch (error) {
    if (!(error instanceof DeliveryError)) throw error;
    return { call: 'createQuote', why: `simulatePrice failed: ${error.message}`, sampled };
  }
}

/** Of `names`, those the shop's service map does not know, or learned over a week ago: what a run asks. */
export async function namesDue(deps: Pick<MapLearnDeps, 'shop' | 'map' | 'now'>, names: string[]): Promise<string[]> {
  const known = freshKnowledge(new Map((await deps.map.all(serviceId(deps.shop))).map((p) => [p.name, p])), deps.now());
  return names.filter((n) => !known.has(n));
}

/**
 * Asks the service for every name of the country it does not know, or learned over a week ago: the first
 * learning, and the weekly refresh (map-refresh.ts). `names`: only those (a hold's candidates); `limit`: at most so many.
 */
export async function learnMap(
  deps: MapLearnDeps,
  options: { limit?: number; names?: string[] } = {},
): Promise<MapLearnReport> {
  const { shop } = deps;
  const service: ServiceRef = { id: serviceId(shop), baseUrl: shop.dispatch.baseUrl };
  const city = cityOf(deps);
  const all = options.names ?? namesToLearn(deps, shop.country);
  const unknown = await namesDue(deps, all);
  const pending = unknown.slice(0, options.limit ?? Infinity);
  const ask: Ask = {
    createQuote: async (name) => {
      await deps.pace();
      return (await deps.delivery.quote(quoteRequest(shop, name))).total;
    },
    simulatePrice: async (name) => {
      await deps.pace();
      return (await deps.delivery.price({ pickupNeighbourhood: shop.pickup.neighbourhood, dropoffNeighbourhood: name }))
        .total;
    },
  };
  const fallbackXof: MapLearnReport['fallbackXof'] = { createQuote: await ask.createQuote(city) };
  const choice = await chooseCall(ask, city, pending.slice(0, SAMPLE_SIZE), fallbackXof);
  const fallback = choice.call === 'simulatePrice' ? fallbackXof.simulatePrice! : fallbackXof.createQuote;
  const batch = new Batch(deps, service, { asked: 0, toAsk: pending.length, priced: 0, atFallback: 0, failed: 0 });
  for (const s of choice.sampled) batch.note(s.name, s.quoteXof, fallbackXof.createQuote, 'createQuote');
  for (const name of pending.slice(choice.sampled.length)) {
    try {
      batch.note(name, await ask[choice.call](name), fallback, choice.call);
    } catch (error) {
      if (!(error instanceof DeliveryError) || error.retryable) throw error; // a rerun resumes after what was recorded
      batch.failed(); // a refusal for one name says nothing of the others; a rerun asks it again
    }
    await batch.flushIfFull();
  }
  await batch.flush();
  return {
    ...batch.progress,
    call: choice.call,
    why: choice.why,
    city,
    fallbackXof,
    alreadyKnown: all.length - unknown.length,
  };
}

/** What was learned, recorded every BATCH names: a stopped run loses at most one batch. */
class Batch {
  private readonly learned: NamePrice[] = [];

  constructor(
    private readonly deps: Pick<MapLearnDeps, 'map' | 'now' | 'onProgress' | 'shop'>,
    private readonly service: ServiceRef,
    readonly progress: MapLearnProgress,
  ) {}

  note(name: string, totalXof: number, fallbackXof: number, call: PriceCall): void {
    const priced = totalXof < fallbackXof;
    const quotedFor = `${this.deps.shop.pickup.neighbourhood}|standard|prepaid|${call}`;
    this.learned.push({ name, priced, totalXof, quotedFor, learnedAt: this.deps.now() });
    if (priced) this.progress.priced++;
    else this.progress.atFallback++;
    this.asked();
  }

  failed(): void {
    this.progress.failed++;
    this.asked();
  }

  async flushIfFull(): Promise<void> {
    if (this.learned.length >= BATCH) await this.flush();
  }

  async flush(): Promise<void> {
    await this.deps.map.record(this.service, this.learned.splice(0));
  }

  private asked(): void {
    this.progress.asked++;
    this.deps.onProgress?.({ ...this.progress });
  }
}
