/**
 * Money conversion never loses or invents a franc. Shop totals arrive as decimal strings ("15000.00",
 * "15000.0", "15000") or numbers; parseXofDecimal must give back exactly the whole number of francs they
 * say, or refuse with a MoneyError: never round, never drop a digit, never return a neighbouring integer.
 *
 * The oracle is BigInt arithmetic on the digits, independent of the code under test.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MoneyError, parseXofDecimal } from '../../src/domain/money.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** What the text says, exactly, when it is a decimal amount of whole francs; undefined otherwise. */
function exactFrancs(text: string): bigint | 'fraction' | undefined {
  const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!match) return undefined;
  const [, sign, whole = '', fraction] = match;
  if (fraction !== undefined && /[^0]/.test(fraction)) return 'fraction';
  const value = BigInt(whole);
  return sign ? -value : value;
}

function outcome(input: string | number): { ok: true; value: number } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: parseXofDecimal(input) };
  } catch (error) {
    return { ok: false, error };
  }
}

const safeFrancs = fc.maxSafeInteger();
const zeroSuffix = fc.constantFrom('', '.0', '.00', '.000', '.0000000');
const digits = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength, maxLength });

describe('parseXofDecimal never loses or invents a franc', () => {
  it('gives back every whole amount written with ".00", ".0" or no decimals, to the franc', () => {
    fc.assert(
      fc.property(safeFrancs, zeroSuffix, fc.constantFrom('', ' ', '\t'), (francs, suffix, pad) => {
        expect(parseXofDecimal(`${pad}${String(francs)}${suffix}${pad}`)).toBe(francs);
      }),
      { numRuns: 1000 },
    );
  });

  it('gives back every whole amount passed as a number', () => {
    fc.assert(
      fc.property(safeFrancs, (francs) => {
        expect(parseXofDecimal(francs)).toBe(francs);
      }),
      { numRuns: 1000 },
    );
  });

  it('reads leading zeros as the same amount, not as another number', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10_000_000 }), fc.integer({ min: 1, max: 6 }), zeroSuffix, (francs, zeros, suffix) => {
        expect(parseXofDecimal(`${'0'.repeat(zeros)}${String(francs)}${suffix}`)).toBe(francs);
      }),
    );
  });

  it('refuses any amount with a fraction of a franc, as a string or as a number', () => {
    const fraction = digits(1, 6).filter((d) => /[^0]/.test(d));
    fc.assert(
      fc.property(fc.nat({ max: 1_000_000_000 }), fraction, fc.boolean(), (francs, decimals, negative) => {
        const text = `${negative ? '-' : ''}${String(francs)}.${decimals}`;
        expect(() => parseXofDecimal(text)).toThrow(MoneyError);
        // The same amount as a JavaScript number, when it still has a fraction after the float rounding.
        const asNumber = Number(text);
        if (!Number.isInteger(asNumber)) expect(() => parseXofDecimal(asNumber)).toThrow(MoneyError);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses amounts too large to hold exactly instead of returning a rounded neighbour', () => {
    const huge = fc.bigInt({ min: MAX_SAFE + 1n, max: 10n ** 40n });
    fc.assert(
      fc.property(huge, zeroSuffix, (francs, suffix) => {
        const result = outcome(`${francs.toString()}${suffix}`);
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.error).toBeInstanceOf(MoneyError);
      }),
      { numRuns: 500 },
    );
    for (const n of [2 ** 53, 2 ** 53 + 2, 1e20, 1e21, 1e300, Number.MAX_VALUE, Infinity, -Infinity, NaN]) {
      expect(() => parseXofDecimal(n)).toThrow(MoneyError);
    }
    expect(() => parseXofDecimal('9'.repeat(400))).toThrow(MoneyError);
  });

  it('answers any text with the exact amount it states, or a MoneyError, and never anything else', () => {
    const decimalish = fc
      .tuple(
        fc.constantFrom('', '-', '+', ' '),
        digits(0, 22),
        fc.constantFrom('', '.', ','),
        digits(0, 4),
        fc.constantFrom('', ' ', 'F', ' XOF', 'e3'),
      )
      .map((parts) => parts.join(''));
    // Any code point, lone surrogates included (fast-check's 'binary' unit does the same but builds a table for a second first).
    const anyCodePoint = fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c));
    const anyText = fc.oneof(
      decimalish,
      fc.string({ maxLength: 30 }),
      fc.string({ unit: anyCodePoint, maxLength: 30 }),
    );
    fc.assert(
      fc.property(anyText, (text) => {
        const expected = exactFrancs(text);
        const result = outcome(text);
        // Refused only when the text is not a whole, exactly representable amount, and only with a MoneyError.
        if (!result.ok)
          return (
            result.error instanceof MoneyError &&
            !(typeof expected === 'bigint' && expected >= -MAX_SAFE && expected <= MAX_SAFE)
          );
        return typeof expected === 'bigint' && Number.isSafeInteger(result.value) && BigInt(result.value) === expected;
      }),
      { numRuns: 1500 },
    );
  });
});
