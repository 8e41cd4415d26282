/**
 * WooCommerce line items carry no weight: it lives on the product (or the variation), as a string in the
 * shop's weight unit ("" when the merchant never filled it in). This module reads those weights, converts
 * them to grams, caches them in Redis, and fills `unitGrams` per line and `weightGrams` on the order
 * before the pipeline asks for a quote.
 *
 * Decisions:
 *  - All or nothing: when ANY shipped line has no known weight, the order gets no `weightGrams` at all
 *    (a standard parcel). A partial sum would under-declare the parcel, and the service adjusts an
 *    under-declared weight at pickup (spec: "a wrong value exposes the client to an adjustment"), while an
 *    absent weight is priced as a standard parcel, which is what the service documents. WooCommerce's own
 *    cart weight counts a missing weight as 0; Relais prefers no figure to a wrong one.
 *  - A weight of "0" counts as unknown (as Shopify's total_weight 0 does in the Shopify normaliser): it is
 *    what a merchant leaves when they never weighed the product.
 *  - Virtual products do not ship: their lines count for nothing and never make the weight unknown.
 *  - A variation whose weight is "" takes its parent product's (WooCommerce shows it that way too, but a
 *    plugin or an older store may not).
 *  - Exact conversion: the decimal string is read as an integer number of milligrams with BigInt
 *    arithmetic (1 lbs = 453.59237 g and 1 oz = 28.349523125 g exactly, by definition), rounded up to the
 *    milligram; the order total is rounded up to the gram, so a parcel is never declared lighter than it is.
 *  - Cache: each product or variation's weight (in milligrams, or "none") is kept for `ttlSeconds`
 *    (default 6 h) under the shop's id, so a busy shop costs one GET per product per 6 hours. "None" is
 *    cached too: a shop that never fills weights in must not cost a GET per line per order.
 *  - Errors: a retryable failure (429, 5xx, network) is thrown so the job retries later; a product or
 *    variation that no longer exists (404) is "no weight", logged and cached; any other refusal
 *    (a key without read access) is "no weight" and logged, not cached, so the fix takes effect at once.
 *  - The shop's weight unit is read at most once per order, and only when some line misses the cache.
 */
import type { RedisClient } from '../../redis.js';
import type { StoreLineItem, StoreOrder } from '../../domain/order.js';
import { silentLogger, type Logger } from '../../log.js';
import { WooApiError, type WooRest } from './rest-types.js';

export type WeightSource = Pick<WooRest, 'getProduct' | 'getVariation' | 'getWeightUnit'>;

export interface WooWeightDeps {
  rest: WeightSource;
  redis: RedisClient;
  prefix: string;
  now?: () => Date;
  logger?: Logger;
  /** How long a product's weight is trusted; default 6 hours. */
  ttlSeconds?: number;
}

export const WOO_WEIGHT_TTL_SECONDS = 6 * 3600;

/** Milligrams in one unit of each WooCommerce weight unit (exact by definition). */
const MILLIGRAMS_PER_UNIT: Readonly<Record<string, { numerator: bigint; denominator: bigint }>> = {
  kg: { numerator: 1_000_000n, denominator: 1n },
  g: { numerator: 1_000n, denominator: 1n },
  // 1 lb = 453.59237 g = 453 592.37 mg
  lbs: { numerator: 45_359_237n, denominator: 100n },
  // 1 oz = 1/16 lb = 28.349523125 g = 28 349.523125 mg
  oz: { numerator: 28_349_523_125n, denominator: 1_000_000n },
};

export function isWooWeightUnit(unit: string): boolean {
  return Object.hasOwn(MILLIGRAMS_PER_UNIT, unit);
}

/**
 * A WooCommerce weight string in `unit` → milligrams (rounded up), or undefined for "", "0", or anything
 * that is not a plain non-negative decimal number. Throws for a unit WooCommerce does not have.
 */
export function wooWeightToMilligrams(weight: string, unit: string): number | undefined {
  const factor = MILLIGRAMS_PER_UNIT[unit];
  if (!factor) throw new RangeError(`unknown WooCommerce weight unit "${unit}"`);
  // wc_format_decimal() stores "." decimals; a "," slips in through imports and some plugins.
  const text = weight.trim().replace(',', '.');
  const match = /^(\d*)(?:\.(\d*))?$/.exec(text);
  if (!match || text === '' || text === '.') return undefined;
  const whole = match[1] ?? '';
  const fraction = match[2] ?? '';
  const digits = BigInt(`${whole}${fraction}` || '0');
  const scale = 10n ** BigInt(fraction.length);
  const numerator = digits * factor.numerator;
  const denominator = scale * factor.denominator;
  const milligrams = (numerator + denominator - 1n) / denominator;
  if (milligrams <= 0n) return undefined;
  if (milligrams > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  return Number(milligrams);
}

/** Same, in grams (to the milligram). */
export function wooWeightToGrams(weight: string, unit: string): number | undefined {
  const mg = wooWeightToMilligrams(weight, unit);
  return mg === undefined ? undefined : mg / 1000;
}

/** What the cache and a lookup know about one product or variation. */
type KnownWeight = { milligrams: number } | { milligrams: null; why: string } | { virtual: true };

export async function fillWooWeights(order: StoreOrder, deps: WooWeightDeps): Promise<StoreOrder> {
  const logger = (deps.logger ?? silentLogger).child({ shop: order.shopId, order: order.orderName });
  const ttl = deps.ttlSeconds ?? WOO_WEIGHT_TTL_SECONDS;
  let unit: Promise<string> | undefined;
  const weightUnit = () => (unit ??= deps.rest.getWeightUnit());

  const lineItems: StoreLineItem[] = [];
  let totalMilligrams = 0;
  let allKnown = true;
  for (const line of order.lineItems) {
    const { unitGrams: _unknown, ...bare } = line;
    if (!line.productId || !/^\d+$/.test(line.productId) || line.productId === '0') {
      logger.info({ line: line.name }, 'line without a product: the order ships as a standard parcel');
      allKnown = false;
      lineItems.push(bare);
      continue;
    }
    const known = await weightOf(deps, order.shopId, line.productId, line.variantId, weightUnit, ttl, logger);
    if ('virtual' in known) {
      lineItems.push(bare);
      continue;
    }
    if (known.milligrams === null) {
      allKnown = false;
      lineItems.push(bare);
      continue;
    }
    lineItems.push({ ...bare, unitGrams: known.milligrams / 1000 });
    totalMilligrams += known.milligrams * Math.max(0, line.quantity);
  }

  const { weightGrams: _unfilled, ...rest } = order;
  const filled: StoreOrder = { ...rest, lineItems };
  if (allKnown && totalMilligrams > 0) filled.weightGrams = Math.ceil(totalMilligrams / 1000);
  return filled;
}

async function weightOf(
  deps: WooWeightDeps,
  shopId: string,
  productId: string,
  variantId: string | undefined,
  weightUnit: () => Promise<string>,
  ttl: number,
  logger: Logger,
): Promise<KnownWeight> {
  const variation = variantId && /^\d+$/.test(variantId) && variantId !== '0' ? variantId : undefined;
  const key = `${deps.prefix}:woo-weight:v1:${shopId}:${productId}:${variation ?? '-'}`;
  const cached = readCached(await deps.redis.get(key));
  if (cached) return cached;

  const fetched = await fetchWeight(deps.rest, productId, variation, weightUnit, logger);
  if (fetched.cache) {
    const value = { ...fetched.known, cachedAt: (deps.now?.() ?? new Date()).toISOString() };
    await deps.redis.set(key, JSON.stringify(value), 'EX', ttl);
  }
  return fetched.known;
}

async function fetchWeight(
  rest: WeightSource,
  productId: string,
  variationId: string | undefined,
  weightUnit: () => Promise<string>,
  logger: Logger,
): Promise<{ known: KnownWeight; cache: boolean }> {
  try {
    let weight: string;
    if (variationId) {
      const variation = await rest.getVariation(productId, variationId);
      if (variation.virtual === true) return { known: { virtual: true }, cache: true };
      weight = variation.weight;
      // A variation without its own weight ships at its parent's.
      if (weight.trim() === '') weight = (await rest.getProduct(productId)).weight;
    } else {
      const product = await rest.getProduct(productId);
      if (product.virtual === true) return { known: { virtual: true }, cache: true };
      weight = product.weight;
    }
    if (weight.trim() === '') return { known: { milligrams: null, why: 'no weight set' }, cache: true };
    const unit = await weightUnit();
    if (!isWooWeightUnit(unit)) {
      logger.warn({ unit }, "the shop's weight unit is not one WooCommerce defines; weights ignored");
      return { known: { milligrams: null, why: `unknown unit ${unit}` }, cache: false };
    }
    const milligrams = wooWeightToMilligrams(weight, unit);
    if (milligrams === undefined)
      return { known: { milligrams: null, why: `unreadable weight "${weight}"` }, cache: true };
    return { known: { milligrams }, cache: true };
  } catch (error) {
    if (!(error instanceof WooApiError) || error.retryable) throw error;
    if (error.notFound) {
      logger.warn(
        { product: productId, variation: variationId },
        'product or variation no longer exists: counted as having no weight',
      );
      return { known: { milligrams: null, why: 'product deleted' }, cache: true };
    }
    logger.error(
      { product: productId, variation: variationId, status: error.status, code: error.code },
      `weight not readable: ${error.message}`,
    );
    return { known: { milligrams: null, why: error.code ?? `status ${error.status ?? 'unknown'}` }, cache: false };
  }
}

function readCached(raw: string | null): KnownWeight | undefined {
  if (raw === null) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    if (!value || typeof value !== 'object') return undefined;
    const entry = value as { milligrams?: unknown; why?: unknown; virtual?: unknown };
    if (entry.virtual === true) return { virtual: true };
    if (typeof entry.milligrams === 'number' && Number.isSafeInteger(entry.milligrams) && entry.milligrams > 0)
      return { milligrams: entry.milligrams };
    if (entry.milligrams === null)
      return { milligrams: null, why: typeof entry.why === 'string' ? entry.why : 'cached' };
    return undefined;
  } catch {
    return undefined;
  }
}
