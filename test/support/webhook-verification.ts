/**
 * What each shop platform's webhook verification must refuse, whatever its headers are called: a body changed
 * after it was signed (401, as an unauthenticated request), and a delivery signed with another secret.
 */
import { expect, it } from 'vitest';
import { VERIFICATION_FAILURE_STATUS } from '../../src/shops/platforms/common.js';
import { randomSecret } from './factories.js';

/** Headers as Node's http module hands them over: lower-case names. */
export function asNodeHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

type Verdict = { ok: true } | { ok: false; reason: keyof typeof VERIFICATION_FAILURE_STATUS };

export function itRefusesForgedDeliveries(platform: {
  verify(input: { rawBody: Buffer; headers: Record<string, string>; secret: string }): Verdict;
  /** A delivery signed with a fresh secret, and that secret. */
  delivery(): { rawBody: Buffer; headers: Record<string, string>; secret: string };
  /** One amount of the signed body and what a forger makes of it. */
  tamper: [from: string, to: string];
  /** The reason a wrong signature is refused with. */
  refusal: 'invalid_hmac' | 'invalid_signature';
}): void {
  it('refuses a body changed after signing (one byte), with 401', () => {
    const { rawBody, headers, secret } = platform.delivery();
    const tampered = Buffer.from(rawBody.toString('utf8').replace(...platform.tamper));
    expect(tampered.equals(rawBody)).toBe(false);
    const result = platform.verify({ rawBody: tampered, headers, secret });
    expect(result).toEqual({ ok: false, reason: platform.refusal });
    expect(VERIFICATION_FAILURE_STATUS[result.ok ? 'missing_headers' : result.reason]).toBe(401);
  });

  it('refuses a delivery signed with another secret', () => {
    const { rawBody, headers } = platform.delivery();
    expect(platform.verify({ rawBody, headers, secret: randomSecret() })).toEqual({
      ok: false,
      reason: platform.refusal,
    });
  });
}
