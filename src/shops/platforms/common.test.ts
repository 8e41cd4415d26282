import { describe, expect, it, vi } from 'vitest';
import * as crypto from 'node:crypto';
import {
  MAX_JSON_DEPTH,
  VERIFICATION_FAILURE_STATUS,
  headerValue,
  parseJson,
  readCoordinates,
  readXof,
  signaturesMatch,
} from './common.js';

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

describe('webhook bodies', () => {
  const nested = (levels: number, open = '[', close = ']') =>
    Buffer.from(`{"id":1,"note":${open.repeat(levels - 1)}1${close.repeat(levels - 1)}}`);

  it(`reads a body nested exactly ${MAX_JSON_DEPTH} levels, and refuses one level more`, () => {
    expect(parseJson(nested(MAX_JSON_DEPTH))).toMatchObject({ id: 1 });
    expect(parseJson(nested(MAX_JSON_DEPTH + 1))).toBeUndefined();
    expect(parseJson(nested(MAX_JSON_DEPTH + 1, '{"a":', '}'))).toBeUndefined();
    expect(
      parseJson(Buffer.from(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`)),
    ).toBeUndefined();
  });

  it('refuses a body nested 100 000 levels deep without overflowing the stack', () => {
    expect(parseJson(nested(100_000))).toBeUndefined();
  });

  it('does not count brackets inside strings, and refuses what is not JSON', () => {
    expect(parseJson(Buffer.from(JSON.stringify({ note: '['.repeat(500) })))).toEqual({ note: '['.repeat(500) });
    expect(parseJson(Buffer.from('{"id": 1, "broken'))).toBeUndefined();
    expect(parseJson(Buffer.from('null'))).toBeNull();
  });
});
