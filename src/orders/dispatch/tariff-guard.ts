/**
 * The fallback-tariff guard.
 *
 * Spec, section 1: `city` is the neighbourhood; a city name is priced at the fallback tariff, the highest,
 * and the customer pays the difference. A neighbourhood the service does not know is priced the same way,
 * silently: the quote looks like any other. So Relais learns the fallback price (a quote for the city name,
 * same pickup, weight and payment mode: quotes create nothing a courier or customer sees) and checks every
 * zone-priced quote against it. A quote at the fallback means the service does not price that name: the
 * dispatch job tries the order's next candidate name (src/orders/dispatch/priced-dropoff.ts), and the service map
 * (src/ledger/service-map.ts) remembers which names the service prices.
 *
 * The fallback price is kept per service (base URL and key: tariffs are the organisation's) in Redis, per
 * pickup, city, weight and payment mode, for a day. Once cached the check costs the hot path one Redis read,
 * made beside the quote, and no call to the service.
 * Quotes priced by distance (coordinates on both ends) are exempt: no zone, no fallback.
 */
import { createHash } from 'node:crypto';
import type { RedisClient } from '../../redis.js';
import type { ShopConfig } from '../../shops/shops.js';

/** How long a learned fallback price is trusted: tariffs change rarely, and a stale one only costs a re-check. */
export const FALLBACK_TTL_SECONDS = 24 * 3600;

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

/** Each dispatch setting's service id, worked out once: it is asked on every order. */
const serviceIds = new WeakMap<ShopConfig['dispatch'], string>();

/** A stable, non-secret name for the service a shop talks to (base URL + key: tariffs belong to the organisation). */
export function serviceId(shop: ShopConfig): string {
  let id = serviceIds.get(shop.dispatch);
  if (id === undefined) {
    id = createHash('sha256')
      .update(`${shop.dispatch.baseUrl}\n${shop.dispatch.apiKey.reveal()}`)
      .digest('hex')
      .slice(0, 16);
    serviceIds.set(shop.dispatch, id);
  }
  return id;
}

export function weightLabel(weightKg: number | undefined): string {
  return weightKg === undefined ? 'standard' : (Math.round(weightKg * 10) / 10).toFixed(1);
}

/** The fallback price per service, pickup, city, weight band and payment mode, in Redis for a day. */
export class TariffMemory {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private fallbackKey(service: string, key: FallbackKey): string {
    const parts = [key.pickup, key.city, key.weight, key.paymentMode].map((p) => encodeURIComponent(p.toLowerCase()));
    return `${this.prefix}:tariff:${service}:fallback:${parts.join(':')}`;
  }
  async fallback(service: string, key: FallbackKey): Promise<number | undefined> {
    const raw = await this.redis.get(this.fallbackKey(service, key));
    return raw === null ? undefined : Number(raw);
  }

  async rememberFallback(service: string, key: FallbackKey, totalXof: number): Promise<void> {
    await this.redis.set(this.fallbackKey(service, key), String(totalXof), 'EX', FALLBACK_TTL_SECONDS);
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
