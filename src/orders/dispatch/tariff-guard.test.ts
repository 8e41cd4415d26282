import { describe, expect, it } from 'vitest';
import { judgeQuote, weightBandOf, weightLabel } from './tariff-guard.js';

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

  it("keys the fallback by weight band, learned at the band's lower weight, and the standard parcel when no weight was sent", () => {
    expect(weightBandOf(0.3)).toEqual({ label: '0-1kg', learnAtKg: 0.1 });
    expect(weightBandOf(1)).toEqual({ label: '0-1kg', learnAtKg: 0.1 });
    expect(weightBandOf(1.5)).toEqual({ label: '1-2kg', learnAtKg: 1 });
    expect(weightBandOf(12)).toEqual({ label: '10-20kg', learnAtKg: 10 });
    expect(weightBandOf(80)).toEqual({ label: '50kg+', learnAtKg: 50 });
    expect(weightBandOf(undefined)).toEqual({ label: 'standard', learnAtKg: undefined });
  });

  it("describes a quote's weight to 100 g (what a saved quote priced)", () => {
    expect(weightLabel(1.46)).toBe('1.5');
    expect(weightLabel(undefined)).toBe('standard');
  });
});
