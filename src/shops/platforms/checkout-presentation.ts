/**
 * What a customer reads beside the price, for both platforms. The merchants write French to their customers,
 * so the words are French. Only the destination neighbourhood and the kind of price are said: never a
 * breakdown (courier, platform, fees), which Relais does not even read for checkout prices.
 */
import type { ShopPolicy } from '../shops.js';
import type { CheckoutRateOutcome } from '../../checkout/checkout-rates.js';

type RateOutcome = Extract<CheckoutRateOutcome, { kind: 'rate' }>;

/**
 * The answer both platforms get when there is no rate to show:
 *  - no_rate: empty rates with a 2xx, Shopify's "this carrier service cannot handle this shipping request";
 *  - unavailable: "to force backup rates instead, return a 40x or 50x HTTP code" (Shopify). 503 says what
 *    happened, and Shopify keeps an error only 30 s (a success 15 min): a recovered service is asked again within
 *    half a minute. The WooCommerce plugin adds nothing;
 *  - disabled: 404, as for a shop without checkout prices.
 */
export function noRateAnswer(outcome: Exclude<CheckoutRateOutcome, RateOutcome>): {
  status: 200 | 503 | 404;
  body: { rates: [] } | { error: string };
} {
  switch (outcome.kind) {
    case 'no_rate':
      return { status: 200, body: { rates: [] } };
    case 'unavailable':
      return { status: 503, body: { rates: [] } };
    case 'disabled':
      return { status: 404, body: { error: 'checkout_rates_disabled' } };
  }
}

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
export function deliveryWindow(
  days: ShopPolicy['checkoutRates']['deliveryDays'],
  now: Date,
): { min: string; max: string } | undefined {
  if (!days) return undefined;
  const at = (n: number) => shopifyDate(new Date(now.getTime() + n * 86_400_000));
  return { min: at(days.min), max: at(days.max) };
}

function shopifyDate(date: Date): string {
  const iso = date.toISOString(); // 2026-05-14T10:11:12.345Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000`;
}
