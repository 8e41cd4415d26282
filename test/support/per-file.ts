/**
 * A service a test file shares (a private Redis, a schema of its own): started before the file's first test,
 * stopped after its last. Read it through the returned function, inside a test or a hook.
 */
import { afterAll, beforeAll } from 'vitest';

export function perFile<T extends { stop(): Promise<void> }>(start: () => Promise<T>): () => T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  });
  afterAll(async () => {
    await started?.stop();
  });
  return () => {
    if (started === undefined) throw new Error('read outside a test: the service starts in beforeAll');
    return started;
  };
}
