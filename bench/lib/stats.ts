/**
 * Small statistics for benchmarks: percentiles of latency samples, and the median and spread of ratios
 * measured round by round. Absolute figures on a shared 2-core machine drift with whatever else runs, so
 * every bench reports candidate/baseline ratios from rounds run back to back, and their spread.
 */

/** The p-th percentile (0..100) by nearest rank of a sample; NaN for an empty one. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  /** Interquartile range bounds (25th and 75th percentiles). */
  q1: number;
  q3: number;
  n: number;
}

export function spread(values: readonly number[]): Spread {
  return {
    median: median(values),
    min: values.length ? Math.min(...values) : Number.NaN,
    max: values.length ? Math.max(...values) : Number.NaN,
    q1: percentile(values, 25),
    q3: percentile(values, 75),
    n: values.length,
  };
}

export function fmt(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return String(value);
  return value.toFixed(digits);
}

/** "0.93 (min 0.88 – max 0.97, n=5)" */
export function formatSpread(s: Spread, digits = 2, unit = ''): string {
  return `${fmt(s.median, digits)}${unit} (min ${fmt(s.min, digits)} – max ${fmt(s.max, digits)}, n=${s.n})`;
}

/** A verdict line against a target, e.g. ratio ≥ 0.8. */
export function verdict(value: number, target: { atLeast?: number; atMost?: number; below?: number }): string {
  if (target.atLeast !== undefined)
    return value >= target.atLeast ? `meets ≥ ${target.atLeast}` : `MISSES ≥ ${target.atLeast}`;
  if (target.atMost !== undefined)
    return value <= target.atMost ? `meets ≤ ${target.atMost}` : `MISSES ≤ ${target.atMost}`;
  if (target.below !== undefined) return value < target.below ? `meets < ${target.below}` : `MISSES < ${target.below}`;
  return '';
}

/** Prints rows of cells as an aligned text table. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
