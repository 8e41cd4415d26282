/**
 * Weight bands for checkout prices. A checkout price is cached per band, not per gram, so that two baskets
 * of 1.2 kg and 1.8 kg share one cached price. To keep that honest, the delivery service is always asked
 * the price of the band's UPPER bound: the cached price is then exactly the answer to what was asked, and it
 * is never below the firm quote the order will get later (the quote uses the real weight, which is at most
 * the bound, and a heavier parcel never costs less).
 *
 * The bands are finer than any tariff we have seen (the emulator's steps are 1, 5, 10, 20, 50 kg), so a
 * customer rarely pays a higher band than their parcel needs. Above the last band the service decides:
 * one band per whole kilogram.
 */

/** Upper bounds, in kg, of the bands. */
export const WEIGHT_BAND_LIMITS_KG: readonly number[] = [0.5, 1, 2, 3, 5, 7, 10, 15, 20, 30, 40, 50];

export interface WeightBand {
  /** Stable text for cache keys: "std" (no weight known), "le2" (≤ 2 kg), "kg63" (62–63 kg). */
  key: string;
  /** The weight to send to simulatePrice; absent when the parcel's weight is unknown. */
  priceAtKg?: number;
}

/**
 * No weight (0 g: digital goods, or a shop that never filled in weights) is sent as no weight at all: the
 * spec prices an absent weight as a standard parcel, which is also what the order pipeline sends.
 */
export function weightBand(totalGrams: number): WeightBand {
  if (!Number.isFinite(totalGrams) || totalGrams < 0)
    throw new RangeError(`not a weight in grams: ${String(totalGrams)}`);
  if (totalGrams === 0) return { key: 'std' };
  const kg = totalGrams / 1000;
  const limit = WEIGHT_BAND_LIMITS_KG.find((l) => kg <= l);
  if (limit !== undefined) return { key: `le${String(limit)}`, priceAtKg: limit };
  const whole = Math.ceil(kg);
  return { key: `kg${String(whole)}`, priceAtKg: whole };
}
