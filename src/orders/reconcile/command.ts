/**
 * `relais reconcile [--shop id] [--since date] [--until date] [--json|--csv] [--repair]`: the command's
 * work, apart from commander (src/main/cli.ts only declares the options and calls this).
 *
 * Exit codes: 0 when nothing is left for anyone to do, 2 when findings need a person or a --repair, 1 on error.
 */
import type { Runtime } from '../../main/runtime.js';
import { reconcileDepsFor, SCHEDULED_WINDOW_DAYS } from './index.js';
import { countActions, reportCsv, reportJson, reportText } from './output.js';
import { terminalProgress } from './progress.js';
import { reconcile } from './run.js';

export interface ReconcileCommandOptions {
  shop?: string[];
  since?: string;
  until?: string;
  json?: boolean;
  csv?: boolean;
  repair?: boolean;
}

interface Output {
  write(text: string): boolean;
}

interface ErrorOutput extends Output {
  isTTY?: boolean;
  columns?: number;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A date (YYYY-MM-DD, a whole UTC day) or an ISO instant. As --until, a bare date includes that day: the
 * window ends at the next midnight.
 */
export function parseWindowDate(text: string, role: 'since' | 'until'): Date {
  const trimmed = text.trim();
  const at = Date.parse(DATE_ONLY.test(trimmed) ? `${trimmed}T00:00:00Z` : trimmed);
  if (Number.isNaN(at)) throw new Error(`--${role} "${text}" is not a date (YYYY-MM-DD) or an ISO instant`);
  return new Date(role === 'until' && DATE_ONLY.test(trimmed) ? at + 86_400_000 : at);
}

export async function runReconcileCommand(
  runtime: Runtime,
  options: ReconcileCommandOptions,
  io: { stdout: Output; stderr: ErrorOutput },
): Promise<number> {
  if (options.json && options.csv) throw new Error('choose one of --json and --csv');
  const now = runtime.now();
  const since = options.since
    ? parseWindowDate(options.since, 'since')
    : new Date(now.getTime() - SCHEDULED_WINDOW_DAYS * 86_400_000);
  const until = options.until ? parseWindowDate(options.until, 'until') : now;
  if (options.repair) await Promise.all(runtime.queues.all().map((q) => q.waitUntilReady()));
  const progress = terminalProgress(io.stderr);
  try {
    const report = await reconcile(reconcileDepsFor(runtime, { progress: (line) => progress.update(line) }), {
      ...(options.shop && options.shop.length > 0 ? { shopIds: options.shop } : {}),
      since,
      until,
      repair: options.repair === true,
    });
    progress.done();
    io.stdout.write(options.json ? reportJson(report) : options.csv ? reportCsv(report) : reportText(report));
    const counts = countActions(report);
    return counts.alerts > 0 || counts.repairable > 0 ? 2 : 0;
  } finally {
    progress.done();
  }
}
