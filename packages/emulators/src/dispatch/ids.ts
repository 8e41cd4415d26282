/**
 * Identifiers as the spec describes them: a type prefix, then opaque characters. Random (not counters)
 * so that a client that parses or guesses ids, or mixes them across organisations, fails in tests.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { TRACKING_CODE_LENGTH } from '../relais.js';

const OPAQUE_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** Tracking codes are read aloud and typed on phones: no 0/O, 1/I/L lookalikes. */
export const TRACKING_CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

export function opaqueId(prefix: string, length = 20): string {
  const bytes = randomBytes(length);
  let out = prefix;
  // 256 % 62 bias is irrelevant for an emulator's ids.
  for (const byte of bytes) out += OPAQUE_ALPHABET[byte % OPAQUE_ALPHABET.length];
  return out;
}

export function trackingCode(): string {
  let out = '';
  for (let i = 0; i < TRACKING_CODE_LENGTH; i++)
    out += TRACKING_CODE_ALPHABET[randomInt(TRACKING_CODE_ALPHABET.length)];
  return out;
}
