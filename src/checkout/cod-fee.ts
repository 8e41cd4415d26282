/**
 * The cash-collection fee at checkout.
 *
 * Spec, section 2: the quote's total is what the customer pays for the delivery, and "a cash collection at
 * delivery adds its own fee, which appears in the breakdown". Checkout prices come from simulatePrice, whose
 * fields are "not shown" and which knows no payment mode: the emulator's (and, we must assume, the service's)
 * simulated price is the price without collection. A cash-on-delivery customer would pay the fee on top at the
 * door. So Relais learns the fee and adds it.
 *
 * How it is learned: two firm quotes on the same route, one cash on delivery and one prepaid; the fee is the
 * difference of their totals. Not the breakdown: its spelling is "not shown" (the wire profile guesses it) and it
 * is "meant for the client's accounting", while the difference of totals is by definition what the customer
 * pays more for a collection, whatever the breakdown calls it. When the COD quote's breakdown does name a fee
 * that differs, the difference of totals wins and a warn line says so.
 *
 * Kept per service (serviceId: base URL and key, tariffs are the organisation's) in Redis for a day, like the
 * fallback tariff (tariff-guard.ts): one pair of quotes per service per day, never on the hot path once known.
 * Assumption, stated: the fee is flat for a service. The quote request carries no goods value, so a fee that
 * grew with the amount collected could not be quoted at checkout at all; a fee that varied by route or weight
 * would show as a difference between our rate and the firm quote, which the order's quote makes visible.
 */
import type { RedisClient } from '../redis.js';
import type { ShopConfig } from '../shops/shops.js';
import { xof, type Xof } from '../domain/money.js';
import type { QuoteRequest } from '../domain/delivery.js';
import type { PaymentFamily } from '../domain/order.js';
import { FALLBACK_TTL_SECONDS } from '../orders/dispatch/tariff-guard.js';
import type { Logger } from '../log.js';
import type { PriceSource } from './price-source.js';

const WHOLE_FRANCS = /^\d{1,15}$/;

export class CodFeeMemory {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(service: string): string {
    return `${this.prefix}:tariff:${service}:cod-fee`;
  }

  async get(service: string): Promise<Xof | undefined> {
    const raw = await this.redis.get(this.key(service));
    return raw !== null && WHOLE_FRANCS.test(raw) ? xof(Number(raw)) : undefined;
  }

  async set(service: string, fee: Xof): Promise<void> {
    await this.redis.set(this.key(service), String(fee), 'EX', FALLBACK_TTL_SECONDS);
  }
}

/**
 * Whether the rate must include the collection fee. A payment method the platform names decides by the shop's
 * gateways (cash on delivery and deposit-then-balance both collect at the door); an unknown one (Shopify never
 * names it at checkout) follows the shop's `checkoutRates.includeCodFee`.
 */
export function collectsAtDoor(shop: ShopConfig, paymentMethod: string | undefined): boolean {
  const method = paymentMethod?.trim().toLowerCase();
  if (!method) return shop.policy.checkoutRates.includeCodFee;
  const collecting = [...shop.policy.codGateways, ...shop.policy.depositGateways].map((g) => g.trim().toLowerCase());
  return collecting.includes(method);
}

/** Two quotes, cash on delivery and prepaid, on the same route: the fee is what the first costs more. */
export async function learnCodFee(
  shop: ShopConfig,
  prices: PriceSource,
  dropoffNeighbourhood: string,
  timeoutMs: number,
  log: () => Logger,
): Promise<Xof> {
  const route = (payment: PaymentFamily): QuoteRequest => ({
    pickup: { neighbourhood: shop.pickup.neighbourhood, address: shop.pickup.address },
    dropoff: { neighbourhood: dropoffNeighbourhood, address: dropoffNeighbourhood },
    payment,
  });
  const [cod, prepaid] = await Promise.all([
    prices.quote(shop, route('cash_on_delivery'), { timeoutMs }),
    prices.quote(shop, route('prepaid'), { timeoutMs }),
  ]);
  const fee = cod.total - prepaid.total;
  if (!Number.isSafeInteger(fee) || fee < 0) {
    throw new Error(
      `cannot learn the cash-collection fee: a cash-on-delivery quote of ${String(cod.total)} XOF against a prepaid one of ${String(prepaid.total)} XOF`,
    );
  }
  const named = cod.breakdown?.codFee;
  if (named !== undefined && named !== fee) {
    log().warn(
      { breakdownFee: named, differenceOfTotals: fee },
      'the quote breakdown names another collection fee than the difference of totals; using the difference',
    );
  }
  return xof(fee);
}
