/**
 * Staying within the services' limits: a call that failed with a retryable error (429, 5xx, THROTTLED, a
 * timeout) is tried again after exactly the wait the service asked for (`retryAfterMs`, from Retry-After or
 * Shopify's cost figures), or after a short exponential backoff; anything else fails at once. Calls run
 * one after another, or a few at a time with mapLimit, never all at once.
 */
import { isTransient, RelaisError } from '../../domain/errors.js';

export interface RetryOptions {
  /** Tries in all, the first included. */
  attempts?: number;
  /** A wait longer than this is not worth holding a run for: the error is thrown instead. */
  maxWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
  onRetry?: (info: { what: string; attempt: number; waitMs: number; error: string }) => void;
}

export const sleepFor = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** True for the errors of every client Relais has (src/domain/errors.ts RelaisError) that a retry can help. */
export function isRetryable(error: unknown): boolean {
  return isTransient(error);
}

export function retryAfterMsOf(error: unknown): number | undefined {
  const value = error instanceof RelaisError ? error.retryAfterMs : undefined;
  return value !== undefined && Number.isFinite(value) && value >= 0 ? value : undefined;
}

export async function withRetries<T>(what: string, call: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = Math.max(1, options.attempts ?? 5);
  const maxWaitMs = options.maxWaitMs ?? 60_000;
  const sleep = options.sleep ?? sleepFor;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (!isRetryable(error) || attempt >= attempts) throw error;
      const waitMs = retryAfterMsOf(error) ?? Math.min(500 * 2 ** (attempt - 1), 8_000);
      if (waitMs > maxWaitMs) throw error;
      options.onRetry?.({ what, attempt, waitMs, error: error instanceof Error ? error.message : String(error) });
      await sleep(waitMs);
    }
  }
}

/** `fn` over `items`, at most `limit` at a time; results in the order of `items`. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}
