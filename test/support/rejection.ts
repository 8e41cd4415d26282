/**
 * The error a call that must fail was rejected with, checked to be of the class the test expects: a call that
 * succeeds, or fails with another error, fails the test.
 */
import { expect } from 'vitest';

export async function rejectionOf<E extends Error>(
  promise: Promise<unknown>,
  kind: abstract new (...args: never[]) => E,
): Promise<E> {
  const outcome = await promise.then(
    () => ({ failed: false as const }),
    (error: unknown) => ({ failed: true as const, error }),
  );
  if (!outcome.failed) throw new Error('the call succeeded but was expected to fail');
  expect(outcome.error).toBeInstanceOf(kind);
  return outcome.error as E;
}
