/**
 * The benches' processes run what production runs: the project compiled by tsc (the Procfile starts
 * `node dist/src/main/cli.js`), not tsx's on-the-fly transform. tsx compiles with esbuild's `keepNames`, which
 * wraps every named function and closure in a `__name(fn, "…")` call (an Object.defineProperty each time one is
 * created): a cost production never pays, and one that grows with the number of closures a side creates per order,
 * so it weighed on Relais far more than on the bare baselines (2026-11-28: see docs/performance.md).
 *
 * tsconfig.bench.json compiles bench/lib/child.ts and everything it imports, Relais's src/ and the baselines alike,
 * into dist/bench-build/ (incremental: a few seconds when nothing changed).
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** The project's directory (the benches' processes start there). */
export const ROOT = new URL('../../', import.meta.url).pathname;

/** The compiled entry point of a bench process (bench/lib/child.ts). */
export const CHILD_ENTRY = join(ROOT, 'dist/bench-build/bench/lib/child.js');

let built = false;

/** Compiles the bench processes' code once per run; throws with tsc's own output when it does not compile. */
export function buildBenchChildren(): void {
  if (built) return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.bench.json')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (result.error) throw result.error;
  if (result.status !== 0)
    throw new Error(
      `the bench processes' code did not compile (tsc -p tsconfig.bench.json):\n${result.stdout}${result.stderr}`,
    );
  built = true;
}
