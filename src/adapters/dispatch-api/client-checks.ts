/**
 * What the dispatch client accepts before it makes any call: its key and base URLs, refused with a message an
 * operator can act on (DispatchConfigError), and the arguments of each operation, refused as programmer errors
 * (TypeError, RangeError).
 */
import type { Logger } from '../../log.js';
import { DispatchConfigError } from './errors.js';
import { LIST_MAX_LIMIT, LIVE_KEY_PREFIX, TEST_KEY_PREFIX } from './wire.js';

export const SANDBOX_KEY_MESSAGE =
  'The dispatch API key is a sandbox key (it begins with pk_test_). The dispatch service refuses every ' +
  'pk_test_ key with 403 SANDBOX_KEY_NOT_SUPPORTED: it has no test keys, because a test call would create ' +
  'real shipments and send real text messages. Use a live key (pk_live_...) against the real service, or run ' +
  '`relais emulate dispatch` and point Relais at the emulator to try things safely.';

export function checkApiKey(apiKey: unknown, logger: Logger): string {
  if (typeof apiKey !== 'string' || apiKey.length === 0) {
    throw new DispatchConfigError(
      'The dispatch API key is missing. Create a live key (pk_live_...) in the dispatch console under Developer, then API Keys.',
    );
  }
  if (apiKey.startsWith(TEST_KEY_PREFIX)) throw new DispatchConfigError(SANDBOX_KEY_MESSAGE);
  if (!/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new DispatchConfigError(
      'The dispatch API key contains a space, a line break or a non-ASCII character (a trailing newline from a secret file?).',
    );
  }
  // Only warned: the spec documents live keys as pk_live_..., but refusing any other shape would also refuse
  // whatever key format the service introduces next. The key itself is never written.
  if (!apiKey.startsWith(LIVE_KEY_PREFIX))
    logger.warn('the dispatch API key does not begin with pk_live_, as live keys do');
  return apiKey;
}

export function checkBaseUrl(value: unknown, name: string): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new DispatchConfigError(`dispatch ${name} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new DispatchConfigError(`dispatch ${name} must be http or https`);
  if (url.username || url.password) throw new DispatchConfigError(`dispatch ${name} must not carry credentials`);
  if (url.search || url.hash) throw new DispatchConfigError(`dispatch ${name} must not carry a query or a fragment`);
  return url;
}

export function requireText(value: unknown, name: string): asserts value is string {
  if (typeof value !== 'string' || value.trim() === '') throw new TypeError(`${name} must be a non-empty string`);
}

export function requireObject(value: unknown, name: string): void {
  if (typeof value !== 'object' || value === null) throw new TypeError(`${name} must be an object`);
}

export function requirePageSize(value: number, name: string): void {
  if (!Number.isInteger(value) || value < 1 || value > LIST_MAX_LIMIT) {
    throw new RangeError(`${name} must be an integer from 1 to ${LIST_MAX_LIMIT}`);
  }
}

export function requirePositiveNumber(value: number, name: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number`);
}
