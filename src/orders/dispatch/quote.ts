/**
 * The quote step: a quote for the order under the chosen name, recorded as the order's quote, or the saved one
 * while it is still firm and prices exactly what would be asked now.
 */
import type { ShopConfig } from '../../shops/shops.js';
import type { Quote, QuoteRequest } from '../../domain/delivery.js';
import type { StoreOrder } from '../../domain/order.js';
import type { QuoteProgress } from '../../ledger/order-ledger.js';
import { quoteRequestFor } from '../delivery/delivery-requests.js';
import { weightLabel } from './tariff-guard.js';
import type { Attempt } from './deps.js';

/** A quote closer than this to its expiry is replaced: createShipment would race the clock. */
export const QUOTE_SAFETY_MARGIN_MS = 60_000;

/** What a quote priced, as one comparable string: pickup, drop-off neighbourhood, coordinates, weight, payment mode. */
export function quoteBasis(request: QuoteRequest): string {
  const at = (c: { lat: number; lng: number } | undefined) => (c ? `${c.lat.toFixed(5)},${c.lng.toFixed(5)}` : '-');
  return [
    request.pickup.neighbourhood,
    at(request.pickup.coords),
    request.dropoff.neighbourhood,
    at(request.dropoff.coords),
    weightLabel(request.weightKg),
    request.payment ?? '-',
  ].join('|');
}

/** What decides whether a saved quote may be used again. */
export interface SavedQuoteInput {
  shop: ShopConfig;
  /** The order as it would be quoted now (weights filled in), read only when the saved quote is still firm. */
  order(): Promise<StoreOrder>;
  /** The name the quote would be asked for. */
  name: string;
  saved: QuoteProgress | undefined;
  now: Date;
}

/**
 * The saved quote when it is reused: only while firm and for exactly what it priced, the same pickup, drop-off
 * neighbourhood, coordinates, weight and payment mode. A customer who corrected the address gets a new one.
 */
export async function firmSavedQuote(input: SavedQuoteInput): Promise<QuoteProgress | undefined> {
  const { shop, name, saved, now } = input;
  if (saved?.basis === undefined) return undefined;
  if (Date.parse(saved.expiresAt) - now.getTime() <= QUOTE_SAFETY_MARGIN_MS) return undefined;
  return saved.basis === quoteBasis(quoteRequestFor(shop, await input.order(), name)) ? saved : undefined;
}

/** A new quote for the order under `neighbourhood`, recorded with the attempt's next step. */
export async function newQuote(attempt: Attempt, order: StoreOrder, neighbourhood: string): Promise<QuoteProgress> {
  const { shop, calls, writes } = attempt;
  const request = quoteRequestFor(shop, order, neighbourhood);
  const quote: Quote = await calls.quote(request);
  const progress = {
    quoteId: quote.quoteId,
    expiresAt: quote.expiresAt,
    total: quote.total,
    breakdown: quote.breakdown,
    basis: quoteBasis(request),
  };
  writes.save('quote', progress);
  return progress;
}
