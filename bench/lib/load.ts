/**
 * A small HTTP load generator (no autocannon on these machines): keep-alive connections through a
 * node:http Agent we own, bounded concurrency, bounded request counts and time.
 *
 *   closedLoop  N requests with C in flight at all times: the maximum rate the server sustains.
 *   openLoop    requests sent on a fixed schedule whatever the server does; each latency counts from the
 *               moment the request was DUE, so a server that stalls shows it (no coordinated omission).
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface RequestSpec {
  path: string;
  headers: Record<string, string>;
  body: Buffer | string;
}

export interface LoadResult {
  /** Requests answered 2xx. */
  ok: number;
  /** Answered, but not 2xx. */
  refused: number;
  /** No answer: connection error or timeout. */
  failed: number;
  /** Open loop only: due while maxInFlight requests were already waiting, so not sent (counted as late). */
  skipped: number;
  statuses: Record<string, number>;
  /** Latency of each 2xx answer, milliseconds. */
  latenciesMs: number[];
  elapsedMs: number;
  /** 2xx answers per second over the whole run. */
  throughput: number;
  firstError?: string;
}

export class HttpLoad {
  readonly #agent: http.Agent;
  readonly #base: URL;

  constructor(baseUrl: string, options: { maxSockets: number }) {
    this.#base = new URL(baseUrl);
    // Idle sockets are dropped after 4 s, before the server's 5 s keep-alive timeout closes them under us
    // (reusing a socket the server is closing fails as "socket hang up").
    this.#agent = new http.Agent({
      keepAlive: true,
      maxSockets: options.maxSockets,
      maxFreeSockets: options.maxSockets,
      timeout: 4_000,
    });
  }

  /** One request; resolves with its status (0 when it got no answer) and never rejects. */
  send(spec: RequestSpec, timeoutMs: number): Promise<{ status: number; error?: string }> {
    return new Promise((resolve) => {
      const body = typeof spec.body === 'string' ? Buffer.from(spec.body) : spec.body;
      const req = http.request(
        {
          host: this.#base.hostname,
          port: this.#base.port,
          method: 'POST',
          path: spec.path,
          agent: this.#agent,
          headers: { ...spec.headers, 'content-length': String(body.length) },
          timeout: timeoutMs,
        },
        (res) => {
          res.on('error', (error) => resolve({ status: 0, error: error.message }));
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (error) => resolve({ status: 0, error: error.message }));
      req.end(body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

function emptyResult(): LoadResult {
  return { ok: 0, refused: 0, failed: 0, skipped: 0, statuses: {}, latenciesMs: [], elapsedMs: 0, throughput: 0 };
}

function record(result: LoadResult, status: number, ms: number, error?: string): void {
  result.statuses[String(status)] = (result.statuses[String(status)] ?? 0) + 1;
  if (status >= 200 && status < 300) {
    result.ok += 1;
    result.latenciesMs.push(ms);
  } else if (status === 0) {
    result.failed += 1;
    result.firstError ??= error;
  } else {
    result.refused += 1;
  }
}

/** `total` requests, `concurrency` in flight at all times, stopping early after `maxDurationMs`. */
export async function closedLoop(
  load: HttpLoad,
  options: {
    total: number;
    concurrency: number;
    make: (i: number) => RequestSpec;
    timeoutMs?: number;
    maxDurationMs?: number;
  },
): Promise<LoadResult> {
  const result = emptyResult();
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = performance.now() + (options.maxDurationMs ?? 10 * 60_000);
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < options.total && performance.now() < deadline) {
      const spec = options.make(next++);
      const t0 = performance.now();
      const { status, error } = await load.send(spec, timeoutMs);
      record(result, status, performance.now() - t0, error);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  result.elapsedMs = performance.now() - started;
  result.throughput = result.ok / (result.elapsedMs / 1000);
  return result;
}

/**
 * Requests due at a fixed rate for `durationMs`. Latency counts from the due time. When `maxInFlight`
 * requests are already waiting, a due request is skipped and counted: the server is not keeping up.
 */
export async function openLoop(
  load: HttpLoad,
  options: {
    ratePerSecond: number;
    durationMs: number;
    make: (i: number) => RequestSpec;
    maxInFlight: number;
    timeoutMs?: number;
  },
): Promise<LoadResult> {
  const result = emptyResult();
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = 1000 / options.ratePerSecond;
  const total = Math.floor((options.durationMs / 1000) * options.ratePerSecond);
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  let sent = 0;
  while (sent < total) {
    const dueAt = started + sent * intervalMs;
    const wait = dueAt - performance.now();
    // Always yield: at intervals under a millisecond a loop that never awaits would starve the sockets.
    if (wait >= 1) await new Promise((r) => setTimeout(r, Math.floor(wait)));
    else await new Promise((r) => setImmediate(r));
    // Everything due by now goes out, in order; a late timer never thins the schedule.
    while (sent < total && started + sent * intervalMs <= performance.now()) {
      const due = started + sent * intervalMs;
      const spec = options.make(sent++);
      if (pending.size >= options.maxInFlight) {
        result.skipped += 1;
        continue;
      }
      const p: Promise<void> = load.send(spec, timeoutMs).then(({ status, error }) => {
        record(result, status, performance.now() - due, error);
        pending.delete(p);
      });
      pending.add(p);
    }
  }
  await Promise.all(pending);
  result.elapsedMs = performance.now() - started;
  result.throughput = result.ok / (result.elapsedMs / 1000);
  return result;
}
