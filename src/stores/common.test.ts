import { describe, expect, it, vi } from 'vitest';
import * as crypto from 'node:crypto';
import { VERIFICATION_FAILURE_STATUS, headerValue, readCoordinates, readXof, signaturesMatch } from './common.js';

// Spy on the real timingSafeEqual (it still does the comparison) to see that signatures go through it.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

describe('signature comparison', () => {
  it('compares signatures with crypto.timingSafeEqual on equal-length buffers, not with ===', () => {
    const spy = vi.mocked(crypto.timingSafeEqual);
    spy.mockClear();
    const expected = crypto.createHmac('sha256', 'k').update('body').digest('base64');
    const forged = `${expected.slice(0, -2)}A=`;

    expect(signaturesMatch(expected, forged)).toBe(false);
    expect(signaturesMatch(expected, expected)).toBe(true);

    expect(spy).toHaveBeenCalledTimes(2);
    for (const [a, b] of spy.mock.calls) expect((a as Buffer).length).toBe((b as Buffer).length);
  });

  it('refuses a signature of another length without throwing', () => {
    const expected = crypto.createHmac('sha256', 'k').update('body').digest('base64');
    expect(signaturesMatch(expected, expected.slice(0, 10))).toBe(false);
    expect(signaturesMatch(expected, '')).toBe(false);
    expect(signaturesMatch(expected, `${expected}=`)).toBe(false);
  });
});

describe('headers', () => {
  it('finds a header whatever its case, taking the first of repeated values', () => {
    const headers = { 'x-shopify-topic': ['orders/create', 'orders/paid'], 'X-Other': 'x', empty: '' };
    expect(headerValue(headers, 'X-Shopify-Topic')).toBe('orders/create');
    expect(headerValue(headers, 'x-other')).toBe('x');
    expect(headerValue(headers, 'empty')).toBeUndefined();
    expect(headerValue(headers, 'absent')).toBeUndefined();
  });

  it('answers 400 for a broken request and 401 for a signature that does not match', () => {
    expect(VERIFICATION_FAILURE_STATUS).toEqual({
      missing_headers: 400,
      malformed_ping: 400,
      invalid_hmac: 401,
      invalid_signature: 401,
    });
  });
});

describe('money and coordinates', () => {
  it('reads shop decimals as whole francs and says whether a refusal is a fraction', () => {
    expect(readXof('15000.00')).toEqual({ ok: true, value: 15000 });
    expect(readXof(15000)).toEqual({ ok: true, value: 15000 });
    expect(readXof('15000.50')).toEqual({ ok: false, problem: 'fraction' });
    expect(readXof('15 000')).toEqual({ ok: false, problem: 'malformed' });
  });

  it('reads coordinates sent as numbers or strings and ignores null, partial, out-of-range or (0, 0) ones', () => {
    expect(readCoordinates(14.7236, -17.4694)).toEqual({ lat: 14.7236, lng: -17.4694 });
    expect(readCoordinates('5.3599', '-3.9866')).toEqual({ lat: 5.3599, lng: -3.9866 });
    expect(readCoordinates(null, null)).toBeUndefined();
    expect(readCoordinates(14.7, undefined)).toBeUndefined();
    expect(readCoordinates('', '-17.4')).toBeUndefined();
    expect(readCoordinates('abc', '1')).toBeUndefined();
    expect(readCoordinates(91, 10)).toBeUndefined();
    expect(readCoordinates(0, 0)).toBeUndefined();
  });
});
