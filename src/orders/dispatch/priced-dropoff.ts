/**
 * The drop-off name of one dispatch attempt, chosen by price (issue 24). It absorbs the fallback-tariff guard:
 *
 *  1. the address resolves to a place, and the place to its candidate names (src/geo/candidates.ts);
 *  2. the service map (src/ledger/service-map.ts) says which of them the shop's service prices; the first name
 *     of the plan (name-choice.ts tryOrder) is quoted beside the shipment lookup, as the order's own quote;
 *  3. every zone-priced quote is judged against the fallback tariff (the city name's price, learned once a day
 *     per pickup, weight band and payment mode: tariff-guard.ts); at the fallback, the next candidate is quoted,
 *     MAX_EXTRA_QUOTES at most; what each quote showed goes into the map for the next order;
 *  4. no candidate priced: the order is held, listing every name tried with its price and the places nearest
 *     the address the service is known to price.
 * A quote priced by distance (coordinates on both ends) has no zone: the most precise name is sent as it is.
 */
import type { ShopConfig } from '../../shops/shops.js';
import type { HoldReason, StoreOrder } from '../../domain/order.js';
import { DeliveryError } from '../../domain/delivery.js';
import { candidatesOf, type NameCandidate } from '../../geo/candidates.js';
import { resolveDeliveryAddress } from '../../geo/order-address.js';
import type { NeighbourhoodResolver } from '../../geo/resolver.js';
import { withServiceSpellings } from '../../geo/service-spellings.js';
import type { NamePrice, ServiceMapStore, ServiceRef } from '../../ledger/service-map.js';
import type { Logger } from '../../log.js';
import {
  chooseByPrice,
  finestKnownPriced,
  freshKnowledge,
  MAX_EXTRA_QUOTES,
  tryOrder,
  type PlannedName,
  type QuotedName,
} from './name-choice.js';
import { judgeQuote, serviceId, weightBandOf, type FallbackKey, type TariffMemory } from './tariff-guard.js';

/** How many priced places near the address a hold offers. */
const NEAREST_PRICED = 3;

/** The drop-off as resolved: its candidate names, most precise first, and the city whose fallback applies. */
export interface Dropoff {
  confidence: number;
  city: string;
  country: string;
  candidates: NameCandidate[];
}

/** Resolves the order's address to its candidate names, or the hold reason when it names no place. */
export function resolveDropoff(
  resolver: NeighbourhoodResolver,
  shop: ShopConfig,
  order: StoreOrder,
  aliases: Record<string, string>,
): Dropoff | HoldReason {
  const resolution = resolveDeliveryAddress(resolver, order.dropoff, { country: shop.country, aliases });
  if (!resolution.ok) return { code: 'neighbourhood_not_found', message: resolution.reason };
  const { city, country } = resolution.neighbourhood;
  return { confidence: resolution.confidence, city, country, candidates: candidatesOf(resolver, resolution, aliases) };
}

export interface PricedDropoffDeps<Q extends { total: number }> {
  shop: ShopConfig;
  resolver: NeighbourhoodResolver;
  tariffs?: TariffMemory;
  serviceMap?: ServiceMapStore;
  now(): Date;
  log: Logger;
  /** A quote for the order under this name (recorded as the order's quote). */
  quoteName(order: StoreOrder, name: string): Promise<Q>;
  /** A quote's total for the city name (learning the fallback tariff; quotes create nothing). */
  quoteCity(order: StoreOrder, city: string): Promise<number>;
}

export type PricedChoice<Q> = { quote: Q; sent: { name: string; confidence: number } } | HoldReason;

const kgOf = (order: StoreOrder) =>
  order.weightGrams !== undefined && order.weightGrams > 0 ? order.weightGrams / 1000 : undefined;

/** The choice of name for one attempt: plan() before the first quote, choose() once it and the fallback are in. */
export class PricedDropoff<Q extends { total: number }> {
  private readonly service: ServiceRef;
  /** What the service map knew of the candidates when the plan was made. */
  private known = new Map<string, NamePrice>();

  constructor(
    private readonly deps: PricedDropoffDeps<Q>,
    private dropoff: Dropoff,
  ) {
    this.service = { id: serviceId(deps.shop), baseUrl: deps.shop.dispatch.baseUrl };
  }

  /**
   * The names to try, in order; empty when every candidate is known to be priced at the fallback. When no name
   * of the place itself is known priced, the service's own spellings of the candidates' places are added first
   * (service-spellings.ts): names the map knows priced that no rule of ours spells ("Parcelles U17").
   */
  async plan(order: StoreOrder): Promise<PlannedName[]> {
    const { candidates } = this.dropoff;
    if (this.distancePriced(order)) return candidates.slice(0, 1).map((candidate) => ({ candidate }));
    const map = this.deps.serviceMap;
    if (!map) return tryOrder(candidates, this.known);
    const found = await map.lookup(
      this.service.id,
      candidates.map((c) => c.name),
    );
    this.known = freshKnowledge(found, this.deps.now());
    if (finestKnownPriced(candidates, this.known)) return tryOrder(candidates, this.known);
    const priced = freshKnowledge(new Map((await map.all(this.service.id)).map((p) => [p.name, p])), this.deps.now());
    const spelled = withServiceSpellings(
      this.deps.resolver,
      this.dropoff.country,
      candidates,
      [...priced.values()].filter((p) => p.priced).map((p) => p.name),
    );
    this.dropoff = { ...this.dropoff, candidates: spelled };
    for (const c of spelled) {
      const k = priced.get(c.name);
      if (k && !this.known.has(c.name)) this.known.set(c.name, k);
    }
    return tryOrder(spelled, this.known);
  }

  /** The fallback price for this order's pickup, city, weight band and payment mode: cached, else learned. */
  async fallback(order: StoreOrder): Promise<number | undefined> {
    if (this.distancePriced(order) || !this.deps.tariffs) return undefined;
    return (await this.deps.tariffs.fallback(this.service.id, this.keyFor(order))) ?? this.learnFallback(order);
  }

  /** The name to send and its quote, or why the order is held. */
  async choose(
    order: StoreOrder,
    plan: PlannedName[],
    first: Q,
    fallback: number | undefined,
  ): Promise<PricedChoice<Q>> {
    const choice = await chooseByPrice(plan, {
      first,
      quote: (name) => this.deps.quoteName(order, name),
      isPriced: (total) => {
        const verdict = judgeQuote(total, fallback, this.distancePriced(order));
        return verdict.kind === 'exempt' ? undefined : verdict.kind === 'priced';
      },
    });
    await this.record(order, choice.quoted);
    if (choice.kind === 'none') return this.notPriced(order, choice.quoted, choice.untried, fallback);
    for (const q of choice.quoted.filter((t) => t.priced === false))
      this.deps.log.warn({ neighbourhood: q.name, total: q.totalXof, fallback }, 'quote at the fallback tariff');
    return { quote: choice.quote, sent: { name: choice.candidate.name, confidence: this.dropoff.confidence } };
  }

  /** The hold: every name tried with its price, those not tried yet, and the nearest places the service prices. */
  async notPriced(
    order: StoreOrder,
    quoted: QuotedName[],
    untried: NameCandidate[],
    fallback: number | undefined,
  ): Promise<HoldReason> {
    const asked = new Set(quoted.map((q) => q.name));
    const fromMap = this.dropoff.candidates
      .map((c) => this.known.get(c.name))
      .filter((k): k is NamePrice => k !== undefined && !k.priced && !asked.has(k.name))
      .map((k) => `'${k.name}' at ${k.totalXof} XOF (quoted ${k.learnedAt.toISOString().slice(0, 10)})`);
    const tried =
      [...quoted.map((q) => `'${q.name}' at ${q.totalXof} XOF`), ...fromMap].join(', ') || 'any name of this place';
    const fallbackText = fallback === undefined ? 'the fallback tariff' : `the fallback tariff of ${fallback} XOF`;
    const parts = [
      `the delivery service does not price ${tried}: each was quoted at ${fallbackText} (its price for the city name '${this.dropoff.city}'), which the customer would pay`,
    ];
    if (untried.length > 0)
      parts.push(
        `Not quoted yet (at most ${MAX_EXTRA_QUOTES} quotes beyond the order's own per attempt): ${untried.map((c) => `'${c.name}'`).join(', ')}; replaying the order tries them`,
      );
    const nearest = await nearestPriced(this.deps, this.service.id, this.dropoff, order);
    if (nearest.length > 0)
      parts.push(`Places near the address it prices: ${nearest.map((n) => `${n.name} (${n.km} km)`).join(', ')}`);
    parts.push('Add an alias from the address to a neighbourhood the service prices, then replay the order.');
    return { code: 'neighbourhood_not_priced', message: parts.join('. ') };
  }

  private distancePriced(order: StoreOrder): boolean {
    return this.deps.shop.pickup.coords !== undefined && order.dropoff.coords !== undefined;
  }

  private keyFor(order: StoreOrder): FallbackKey {
    return {
      pickup: this.deps.shop.pickup.neighbourhood,
      city: this.dropoff.city,
      weight: weightBandOf(kgOf(order)).label,
      paymentMode: order.paymentFamily,
    };
  }

  /** One quote for the city name at the band's lower weight; remembered a day. */
  private async learnFallback(order: StoreOrder): Promise<number | undefined> {
    const learnAtKg = weightBandOf(kgOf(order)).learnAtKg;
    const atBand: StoreOrder = {
      ...order,
      dropoff: { ...order.dropoff, coords: undefined },
      ...(learnAtKg === undefined ? {} : { weightGrams: Math.round(learnAtKg * 1000) }),
    };
    try {
      const total = await this.deps.quoteCity(atBand, this.dropoff.city);
      await this.deps.tariffs?.rememberFallback(this.service.id, this.keyFor(order), total);
      return total;
    } catch (error) {
      if (error instanceof DeliveryError && error.retryable) throw error;
      // A service that refuses a city name outright has no fallback to fall into; nothing to compare with.
      this.deps.log.warn(
        { err: (error as Error).message, city: this.dropoff.city },
        'could not learn the fallback tariff',
      );
      return undefined;
    }
  }

  /** What the quotes showed, into the map; a judged quote only (distance-priced and unjudged ones teach nothing). */
  private async record(order: StoreOrder, quoted: QuotedName[]): Promise<void> {
    const { weight, paymentMode, pickup } = this.keyFor(order);
    const learnedAt = this.deps.now();
    const prices = quoted
      .filter((q): q is QuotedName & { priced: boolean } => q.priced !== undefined)
      .filter((q) => this.known.get(q.name)?.priced !== q.priced || this.known.get(q.name)?.totalXof !== q.totalXof)
      .map((q) => ({ ...q, quotedFor: `${pickup}|${weight}|${paymentMode}`, learnedAt }));
    // The map is what the next order starts from; losing one lesson costs a quote later, not this order.
    await this.deps.serviceMap?.record(this.service, prices).catch((error: unknown) => {
      this.deps.log.warn(
        { err: (error as Error).message },
        'could not record what the quotes showed in the service map',
      );
    });
  }
}

/** The places the service is known to price nearest the address (its coordinates, else its place's). */
async function nearestPriced(
  deps: Pick<PricedDropoffDeps<{ total: number }>, 'resolver' | 'serviceMap' | 'now' | 'log'>,
  serviceIdOf: string,
  dropoff: Dropoff,
  order: StoreOrder,
): Promise<{ name: string; km: number }[]> {
  const finest = dropoff.candidates[0];
  const point =
    order.dropoff.coords ?? (finest && deps.resolver.placeNamed(dropoff.country, finest.place)?.place.coords);
  if (!point || !deps.serviceMap) return [];
  try {
    const priced = [
      ...freshKnowledge(new Map((await deps.serviceMap.all(serviceIdOf)).map((p) => [p.name, p])), deps.now()).values(),
    ]
      .filter((p) => p.priced)
      .map((p) => p.name);
    return deps.resolver.nearestOf(dropoff.country, point, priced, NEAREST_PRICED);
  } catch (error) {
    deps.log.warn({ err: (error as Error).message }, 'could not read the service map for the nearest priced places');
    return [];
  }
}
