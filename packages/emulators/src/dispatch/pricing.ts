/**
 * Prices of the emulated dispatch service. Every amount is an integer number of XOF (no sub-unit).
 *
 * Tariff (customer price of the delivery itself, before weight and cash-collection fees):
 *   zone band Z1 (≤ 3 km from the city centre)  1 000
 *             Z2 (≤ 6 km)                        1 500
 *             Z3 (≤ 10 km)                       2 000
 *             Z4 (≤ 16 km)                       2 500
 *             Z5 (> 16 km)                       3 000
 *   FALLBACK (city name, unknown or empty name, ends in different cities)   4 000   strictly the highest
 * A route costs the band of its farther end. With coordinates on BOTH ends the zones are ignored and the
 * price follows the real (haversine) distance: 800 + 200 per km, rounded up to the next 50.
 *
 * Weight surcharge: ≤ 1 kg 0, ≤ 5 kg 300 (the standard parcel: an absent weight lands here),
 * ≤ 10 kg 800, ≤ 20 kg 1 500, ≤ 50 kg 3 000; above 50 kg, negative or not a number is refused upstream.
 * Cash on delivery adds a flat cod_fee of 500. The platform keeps 20 % of the delivery subtotal
 * (rounded), the courier the rest: total = courier + platform (+ cod_fee).
 */
import { haversineKm, type ZoneEntry, type ZoneIndex } from './zones.js';

export const ZONE_TARIFF_XOF: Readonly<Record<number, number>> = { 1: 1000, 2: 1500, 3: 2000, 4: 2500, 5: 3000 };
export const FALLBACK_TARIFF_XOF = 4000;
export const FALLBACK_ZONE_ID = 'FALLBACK';
export const DISTANCE_BASE_XOF = 800;
export const DISTANCE_PER_KM_XOF = 200;
export const DISTANCE_ROUNDING_XOF = 50;
export const MAX_WEIGHT_KG = 50;
/** Upper bound (kg, inclusive) and surcharge of each weight band. */
export const WEIGHT_BANDS: readonly { maxKg: number; surchargeXof: number }[] = [
  { maxKg: 1, surchargeXof: 0 },
  { maxKg: 5, surchargeXof: 300 },
  { maxKg: 10, surchargeXof: 800 },
  { maxKg: 20, surchargeXof: 1500 },
  { maxKg: MAX_WEIGHT_KG, surchargeXof: 3000 },
];
/** The spec: an absent weight is treated as a standard parcel. */
export const STANDARD_PARCEL_KG = 5;
export const COD_FEE_XOF = 500;
export const PLATFORM_SHARE = 0.2;

export interface PricedPlace {
  city: string;
  coords?: { lat: number; lng: number };
}

export interface Price {
  total: number;
  breakdown: { customer: number; courier: number; platform: number; cod_fee?: number };
  pickupZone: string;
  dropoffZone: string;
  /** 'zone' (band of the farther end), 'fallback', or 'distance' (coordinates on both ends). */
  basis: 'zone' | 'fallback' | 'distance';
  distanceKm?: number;
}

export function weightSurcharge(weightKg: number | undefined): number {
  const kg = weightKg ?? STANDARD_PARCEL_KG;
  const band = WEIGHT_BANDS.find((b) => kg <= b.maxKg);
  // Callers validate 0..MAX_WEIGHT_KG first; reaching here with more is a programming error.
  if (!band) throw new RangeError(`weight ${kg} kg is outside every band`);
  return band.surchargeXof;
}

/**
 * Chooses one zone per end. A name can exist in several cities ("Plateau" in Dakar, Abidjan, Niamey):
 * the pair is read in the city both ends share, which is what a courier would do.
 */
function resolveRoute(zones: ZoneIndex, pickup: string, dropoff: string): { from?: ZoneEntry; to?: ZoneEntry } {
  const from = zones.candidates(pickup);
  const to = zones.candidates(dropoff);
  for (const f of from) {
    const sameCity = to.find((t) => t.city === f.city);
    if (sameCity) return { from: f, to: sameCity };
  }
  return { from: from[0], to: to[0] };
}

export function priceDelivery(
  zones: ZoneIndex,
  request: { pickup: PricedPlace; dropoff: PricedPlace; weightKg?: number; cashOnDelivery: boolean },
): Price {
  const { from, to } = resolveRoute(zones, request.pickup.city, request.dropoff.city);
  const pickupZone = from?.zoneId ?? FALLBACK_ZONE_ID;
  const dropoffZone = to?.zoneId ?? FALLBACK_ZONE_ID;

  let delivery: number;
  let basis: Price['basis'];
  let distanceKm: number | undefined;
  if (request.pickup.coords && request.dropoff.coords) {
    const km = haversineKm(request.pickup.coords, request.dropoff.coords);
    distanceKm = Math.round(km * 10) / 10;
    delivery =
      Math.ceil((DISTANCE_BASE_XOF + km * DISTANCE_PER_KM_XOF) / DISTANCE_ROUNDING_XOF) * DISTANCE_ROUNDING_XOF;
    basis = 'distance';
  } else if (from && to && from.city === to.city) {
    delivery = ZONE_TARIFF_XOF[Math.max(from.band, to.band)] ?? FALLBACK_TARIFF_XOF;
    basis = 'zone';
  } else {
    delivery = FALLBACK_TARIFF_XOF;
    basis = 'fallback';
  }

  const subtotal = delivery + weightSurcharge(request.weightKg);
  const platform = Math.round(subtotal * PLATFORM_SHARE);
  const courier = subtotal - platform;
  const codFee = request.cashOnDelivery ? COD_FEE_XOF : undefined;
  const total = subtotal + (codFee ?? 0);
  return {
    total,
    breakdown: { customer: total, courier, platform, ...(codFee === undefined ? {} : { cod_fee: codFee }) },
    pickupZone,
    dropoffZone,
    basis,
    ...(distanceKm === undefined ? {} : { distanceKm }),
  };
}
