/**
 * A wait with a bound: readiness probes, scrape-time counts, the start-up waits and every webhook's Redis work must
 * answer even when the service they ask does not. The work itself is not cancelled; only the wait for it ends.
 * One promise and one timer per call (no Promise.race): the webhook path wraps each request in it.
 */
export function withTimeout<T>(
  work: Promise<T>,
  ms: number,
  timedOut: () => Error = () => new Error(`no answer within ${ms} ms`),
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut()), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
