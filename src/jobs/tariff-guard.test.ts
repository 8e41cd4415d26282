import { describe, expect, it } from 'vitest';
import { judgeQuote, weightLabel } from './tariff-guard.js';

describe('judging a quote against the fallback tariff', () => {
  it('calls a zone quote at or above the fallback price the fallback, and one below it priced', () => {
    expect(judgeQuote(4_800, 4_800, false)).toEqual({ kind: 'fallback', fallbackXof: 4_800 });
    expect(judgeQuote(5_000, 4_800, false)).toEqual({ kind: 'fallback', fallbackXof: 4_800 });
    expect(judgeQuote(2_300, 4_800, false)).toEqual({ kind: 'priced' });
  });

  it('exempts a quote priced by distance, and says so when the fallback is not known', () => {
    expect(judgeQuote(9_000, 4_800, true).kind).toBe('exempt');
    expect(judgeQuote(9_000, undefined, false)).toEqual({ kind: 'exempt', why: 'fallback tariff not known' });
  });

  it('keys the fallback by weight rounded to 100 g, and the standard parcel when no weight was sent', () => {
    expect(weightLabel(1.46)).toBe('1.5');
    expect(weightLabel(1.5)).toBe('1.5');
    expect(weightLabel(undefined)).toBe('standard');
  });
});
