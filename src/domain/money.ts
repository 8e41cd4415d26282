/**
 * XOF amounts. The West African CFA franc has no sub-unit: 10000 means ten thousand francs, and the
 * dispatch service never divides by 100. An `Xof` is a branded safe integer, so a float, a fraction or
 * an amount "in cents" cannot be passed where francs are expected without going through `xof()` or
 * `parseXofDecimal()`, which refuse anything that is not a whole number of francs.
 *
 * There is deliberately no division helper: sharing an amount is a business decision, not arithmetic.
 */
import { RelaisError } from './errors.js';

declare const xofBrand: unique symbol;
export type Xof = number & { readonly [xofBrand]: true };

/** An amount that is not a whole number of francs: the same data gives the same error. */
export class MoneyError extends RelaisError {
  override readonly name = 'MoneyError';
  constructor(message: string) {
    super({ failure: 'permanent', message });
  }
}

/** Wraps a whole number of francs. Throws on fractions, NaN, infinities and unsafe integers. */
export function xof(amount: number): Xof {
  if (!Number.isSafeInteger(amount)) {
    throw new MoneyError(`not a whole number of XOF francs: ${String(amount)}`);
  }
  return amount as Xof;
}

/** True when `value` can be used as an Xof (a safe integer). */
export function isXof(value: unknown): value is Xof {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

export const ZERO_XOF: Xof = xof(0);

export function addXof(a: Xof, b: Xof): Xof {
  return xof(a + b);
}

export function subtractXof(a: Xof, b: Xof): Xof {
  return xof(a - b);
}

/** Multiplies by a whole count (quantity of items, never a rate). */
export function multiplyXof(a: Xof, count: number): Xof {
  if (!Number.isSafeInteger(count)) throw new MoneyError(`not a whole count: ${String(count)}`);
  return xof(a * count);
}

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

/**
 * Converts a shop's decimal string ("15000.00", "15000", 15000) to francs exactly, with no floating point.
 * Any non-zero digit after the decimal point is a fraction of a franc and is refused: XOF has none, so
 * such an amount means the shop is misconfigured (or not in XOF) and a person must look at it.
 */
export function parseXofDecimal(input: string | number): Xof {
  const text = typeof input === 'number' ? numberToPlainString(input) : input.trim();
  const match = DECIMAL.exec(text);
  if (!match) throw new MoneyError(`not a decimal amount: "${text}"`);
  const [, sign, whole, fraction] = match;
  if (fraction !== undefined && /[^0]/.test(fraction)) {
    throw new MoneyError(`"${text}" has a fraction of a franc; XOF amounts are whole francs`);
  }
  const francs = Number(whole);
  if (!Number.isSafeInteger(francs)) throw new MoneyError(`amount too large: "${text}"`);
  return xof(sign ? -francs : francs);
}

function numberToPlainString(value: number): string {
  if (!Number.isFinite(value)) throw new MoneyError(`not a finite amount: ${String(value)}`);
  // toString gives exponent notation for very large or tiny numbers; toFixed(20) keeps digits readable.
  const text = String(value);
  return /e/i.test(text) ? value.toFixed(20).replace(/\.?0+$/, '') : text;
}

/**
 * Shopify wants carrier-service prices in sub-units, and for a currency without sub-units it still
 * multiplies by 100 (2500 XOF is "250000"). This is the one place that factor appears.
 */
export function toShopifySubunits(amount: Xof): string {
  return String(amount * 100);
}

export function formatXof(amount: Xof): string {
  return `${formatFrancs(amount)} XOF`;
}

/** The figure alone, grouped the French way ("15 000"), for lines that name the currency once. */
export function formatFrancs(amount: Xof): string {
  return amount.toLocaleString('fr-FR').replace(/\u202f|\u00a0/g, ' ');
}
