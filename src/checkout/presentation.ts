/**
 * What a customer reads beside the price, for both platforms. The merchants write French to their customers,
 * so the words are French. Only the destination neighbourhood and the kind of price are said: never a
 * breakdown (courier, platform, fees), which Relais does not even read for checkout prices.
 */
import type { ShopPolicy } from '../config/shops.js';
import type { CheckoutRateOutcome } from './checkout-rates.js';

type RateOutcome = Extract<CheckoutRateOutcome, { kind: 'rate' }>;

export function rateDescription(outcome: RateOutcome): string {
  if (outcome.basis === 'fallback') {
    return `Livraison à ${outcome.neighbourhood} — tarif forfaitaire (prix exact momentanément indisponible)`;
  }
  return `Livraison à ${outcome.neighbourhood}`;
}

/**
 * Shopify's date form "2013-04-12 14:48:45 -0400", written in UTC: the XOF zone runs on UTC (Dakar, Abidjan,
 * Bamako, Lomé, Ouagadougou) or UTC+1 (Cotonou, Niamey), and a delivery day does not move by an hour.
 */
export function deliveryWindow(days: ShopPolicy['checkoutRates']['deliveryDays'], now: Date): { min: string; max: string } | undefined {
  if (!days) return undefined;
  const at = (n: number) => shopifyDate(new Date(now.getTime() + n * 86_400_000));
  return { min: at(days.min), max: at(days.max) };
}

function shopifyDate(date: Date): string {
  const iso = date.toISOString(); // 2026-05-14T10:11:12.345Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000`;
}
