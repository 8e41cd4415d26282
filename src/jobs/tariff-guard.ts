/**
 * The fallback-tariff guard.
 *
 * Spec, section 1: `city` is the neighbourhood; a city name is priced at the fallback tariff, the highest,
 * and the customer pays the difference. A neighbourhood the service does not know is priced the same way,
 * silently: the quote looks like any other. So Relais learns the fallback price (a quote for the city name,
 * same pickup, weight and payment mode: quotes create nothing a courier or customer sees) and checks every
 * zone-priced quote against it. A quote at the fallback means the service does not price that name: the
 * dispatch job tries the next, wider name the resolver offers, or holds the order saying which name to alias.
 *
 * What it learns is kept per service (base URL and key: tariffs are the organisation's) in Redis: the
 * fallback price per pickup, city, weight and payment mode for a day, and the names the service was seen to
 * price and not to price (shown by `relais resolve --shop`). Once the fallback is cached the check costs the
 * hot path one Redis read, made beside the quote, and no call to the service.
 * Quotes priced by distance (coordinates on both ends) are exempt: no zone, no fallback.
 */
import { createHash } from 'node:crypto';
import { slotTag, type RedisClient } from '../redis.js';
import type { ShopConfig } from '../config/shops.js';
import type { PricedNames } from '../geo/types.js';

/** How long a learned fallback price is trusted: tariffs change rarely, and a stale one only costs a re-check. */
export const FALLBACK_TTL_SECONDS = 24 * 3600;
/** The names seen priced or not, per service: a bounded memory, refreshed as orders go. */
const NAMES_TTL_SECONDS = 30 * 24 * 3600;

export interface FallbackKey {
  pickup: string;
  /** The city whose fallback applies (the drop-off's city name, as the gazetteer spells it). */
  city: string;
  /** The weight band (weightBandOf), 'standard' when no weight is sent (the service's standard parcel). */
  weight: string;
  paymentMode: string;
}

/**
 * Weight bands for the learned fallback price, in kg (upper bounds). The fallback is learned at the band's LOWER
 * bound: a price rising with weight makes that the band's lowest fallback, so a quote at the fallback for any
 * weight of the band is caught (never a silent miss); a zone price would have to climb by more than the gap
 * between a zone tariff and the fallback within one band to be taken for it (then the order is held, loudly).
 * Bands keep the cache warm: one quote for the city name per band, not per 100 g.
 */
const WEIGHT_BANDS_KG = [1, 2, 3, 5, 10, 20, 30, 50] as const;

export function weightBandOf(weightKg: number | undefined): { label: string; learnAtKg: number | undefined } {
  if (weightKg === undefined) return { label: 'standard', learnAtKg: undefined };
  let lower = 0;
  for (const upper of WEIGHT_BANDS_KG) {
    if (weightKg <= upper) return { label: `${lower}-${upper}kg`, learnAtKg: Math.max(lower, 0.1) };
    lower = upper;
  }
  return { label: `${lower}kg+`, learnAtKg: lower };
}

export type TariffVerdict =
  { kind: 'priced' } | { kind: 'fallback'; fallbackXof: number } | { kind: 'exempt'; why: string };

/** A stable, non-secret name for the service a shop talks to (base URL + key: tariffs belong to the organisation). */
export function serviceId(shop: ShopConfig): string {
  return createHash('sha256')
    .update(`${shop.dispatch.baseUrl}\n${shop.dispatch.apiKey.reveal()}`)
    .digest('hex')
    .slice(0, 16);
}

export function weightLabel(weightKg: number | undefined): string {
  return weightKg === undefined ? 'standard' : (Math.round(weightKg * 10) / 10).toFixed(1);
}

/** How long a process trusts its copy of the names a service prices before reading them again. */
const PRICING_SNAPSHOT_MS = 60_000;

export class TariffMemory {
  readonly #snapshots = new Map<string, { at: number; pricing: Promise<PricedNames> }>();
  /** Names this process already recorded as priced, per service: one Redis write per name, not one per order. */
  readonly #pricedSeen = new Map<string, Set<string>>();

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Which names the service is known to price, for the resolver's choice of level (issue 18): read from Redis
   * at most once a minute per process, so the hot path pays nothing for it.
   */
  pricing(service: string): Promise<PricedNames> {
    const cached = this.#snapshots.get(service);
    if (cached && this.clock() - cached.at < PRICING_SNAPSHOT_MS) return cached.pricing;
    const pricing = this.names(service).then(({ priced, unpriced }) => {
      const yes = new Set(priced);
      const no = new Set(unpriced);
      return { isPriced: (name: string) => (yes.has(name) ? true : no.has(name) ? false : undefined) };
    });
    pricing.catch(() => this.#snapshots.delete(service));
    this.#snapshots.set(service, { at: this.clock(), pricing });
    return pricing;
  }

  private fallbackKey(service: string, key: FallbackKey): string {
    const parts = [key.pickup, key.city, key.weight, key.paymentMode].map((p) => encodeURIComponent(p.toLowerCase()));
    return `${this.prefix}:tariff:${service}:fallback:${parts.join(':')}`;
  }
  /** The two sets of a service share a slot: remember() moves a name from one to the other in one MULTI. */
  private namesKey(service: string, kind: 'priced' | 'unpriced'): string {
    return `${this.prefix}:tariff:${slotTag(this.prefix, service)}:${kind}`;
  }

  async fallback(service: string, key: FallbackKey): Promise<number | undefined> {
    const raw = await this.redis.get(this.fallbackKey(service, key));
    return raw === null ? undefined : Number(raw);
  }

  async rememberFallback(service: string, key: FallbackKey, totalXof: number): Promise<void> {
    await this.redis.set(this.fallbackKey(service, key), String(totalXof), 'EX', FALLBACK_TTL_SECONDS);
  }

  /** Records what the service showed of a name: priced at a zone tariff, or at the fallback. */
  async remember(service: string, name: string, priced: boolean): Promise<void> {
    this.#snapshots.delete(service); // this process's next resolution sees what it just learned
    const [to, from] = priced ? (['priced', 'unpriced'] as const) : (['unpriced', 'priced'] as const);
    await this.redis
      .multi()
      .sadd(this.namesKey(service, to), name)
      .srem(this.namesKey(service, from), name)
      .expire(this.namesKey(service, to), NAMES_TTL_SECONDS)
      .exec();
  }

  /** Records a name seen priced, once per process and name; a failed write is tried again next time. */
  rememberPriced(service: string, name: string): void {
    const seen = this.#pricedSeen.get(service) ?? new Set<string>();
    this.#pricedSeen.set(service, seen);
    if (seen.has(name)) return;
    seen.add(name);
    this.remember(service, name, true).catch(() => seen.delete(name));
  }

  /** 'priced', 'unpriced', or undefined when the service has not been seen to price the name yet. */
  async knownPricing(service: string, name: string): Promise<'priced' | 'unpriced' | undefined> {
    const [priced, unpriced] = await Promise.all([
      this.redis.sismember(this.namesKey(service, 'priced'), name),
      this.redis.sismember(this.namesKey(service, 'unpriced'), name),
    ]);
    return priced === 1 ? 'priced' : unpriced === 1 ? 'unpriced' : undefined;
  }

  async names(service: string): Promise<{ priced: string[]; unpriced: string[] }> {
    const [priced, unpriced] = await Promise.all([
      this.redis.smembers(this.namesKey(service, 'priced')),
      this.redis.smembers(this.namesKey(service, 'unpriced')),
    ]);
    return { priced: priced.sort(), unpriced: unpriced.sort() };
  }
}

/**
 * A zone quote at (or above) the fallback price is the fallback: the service did not price the name. The
 * fallback is "strictly the highest" tariff, so any zone the service knows is below it.
 */
export function judgeQuote(totalXof: number, fallbackXof: number | undefined, distancePriced: boolean): TariffVerdict {
  if (distancePriced) return { kind: 'exempt', why: 'priced by distance (coordinates on both ends)' };
  if (fallbackXof === undefined) return { kind: 'exempt', why: 'fallback tariff not known' };
  return totalXof >= fallbackXof ? { kind: 'fallback', fallbackXof } : { kind: 'priced' };
}
