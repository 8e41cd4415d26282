import { describe, expect, it } from 'vitest';
import { DispatchError } from '../../adapters/dispatch-api/errors.js';
import { terminalProgress } from './progress.js';
import { mapLimit, withRetries } from './pacing.js';

const rateLimited = (retryAfterMs?: number) =>
  new DispatchError({
    operation: 'listShipments',
    kind: 'http',
    status: 429,
    code: 'RATE_LIMITED',
    retryable: true,
    message: 'slow down',
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });

describe("retries within the services' limits", () => {
  it('waits exactly what the service asked before trying again', async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await withRetries(
      'list',
      async () => {
        calls += 1;
        if (calls < 3) throw rateLimited(1_500);
        return 'page';
      },
      {
        sleep: async (ms) => {
          waits.push(ms);
        },
      },
    );
    expect(result).toBe('page');
    expect(waits).toEqual([1_500, 1_500]);
  });

  it('backs off exponentially when the service gave no wait', async () => {
    const waits: number[] = [];
    await expect(
      withRetries(
        'list',
        async () => {
          throw rateLimited();
        },
        {
          attempts: 4,
          sleep: async (ms) => {
            waits.push(ms);
          },
        },
      ),
    ).rejects.toThrow('slow down');
    expect(waits).toEqual([500, 1_000, 2_000]);
  });

  it('never retries a refusal, and gives up on a wait longer than the run should hold', async () => {
    let calls = 0;
    const refused = new DispatchError({
      operation: 'markReady',
      kind: 'http',
      status: 409,
      retryable: false,
      message: 'cancelled',
    });
    await expect(
      withRetries(
        'ready',
        async () => {
          calls += 1;
          throw refused;
        },
        { sleep: async () => undefined },
      ),
    ).rejects.toBe(refused);
    expect(calls).toBe(1);
    await expect(
      withRetries(
        'list',
        async () => {
          throw rateLimited(120_000);
        },
        { maxWaitMs: 60_000, sleep: async () => undefined },
      ),
    ).rejects.toThrow('slow down');
  });

  it('runs at most `limit` calls at a time and keeps the results in order', async () => {
    let running = 0;
    let peak = 0;
    const results = await mapLimit([5, 1, 4, 2, 3, 6], 2, async (n) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, n));
      running -= 1;
      return n * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30, 60]);
    expect(peak).toBe(2);
  });
});

describe('the progress line', () => {
  it('writes nothing when stderr is not a terminal', () => {
    const written: string[] = [];
    const progress = terminalProgress({
      isTTY: false,
      write: (t) => {
        written.push(t);
        return true;
      },
    });
    progress.update('12 orders read');
    progress.done();
    expect(written).toEqual([]);
  });

  it('rewrites one line on a terminal, skips updates that come too fast, and clears it at the end', () => {
    const written: string[] = [];
    let now = 0;
    const progress = terminalProgress(
      {
        isTTY: true,
        columns: 80,
        write: (t) => {
          written.push(t);
          return true;
        },
      },
      { now: () => now, minIntervalMs: 100 },
    );
    progress.update('12 orders read');
    now = 50;
    progress.update('13 orders read');
    now = 2_000;
    progress.update('40 orders read');
    progress.done();
    expect(written).toEqual([
      '\r\x1b[K| reconciling: 12 orders read (0s)',
      '\r\x1b[K/ reconciling: 40 orders read (2s)',
      '\r\x1b[K',
    ]);
  });
});
