/**
 * A one-line progress indicator on a terminal: each update rewrites the line (carriage return, clear to end
 * of line), with a spinner and the time spent. Only for a TTY: piped or redirected stderr gets nothing, so
 * logs and CI output stay clean. Updates closer than `minIntervalMs` are skipped.
 */
export interface ProgressLine {
  update(text: string): void;
  /** Clears the line. */
  done(): void;
}

interface Tty {
  isTTY?: boolean;
  columns?: number;
  write(text: string): boolean;
}

const SPINNER = ['|', '/', '-', '\\'];

export function terminalProgress(
  stream: Tty,
  options: { minIntervalMs?: number; now?: () => number } = {},
): ProgressLine {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  const now = options.now ?? Date.now;
  const started = now();
  const minIntervalMs = options.minIntervalMs ?? 100;
  let last = Number.NEGATIVE_INFINITY;
  let frame = 0;
  let shown = false;
  return {
    update(text) {
      const at = now();
      if (at - last < minIntervalMs) return;
      last = at;
      const seconds = Math.floor((at - started) / 1000);
      const line = `${SPINNER[frame++ % SPINNER.length] ?? ''} reconciling: ${text} (${seconds}s)`;
      const width = Math.max(20, (stream.columns ?? 80) - 1);
      stream.write(`\r\x1b[K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
      shown = true;
    },
    done() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}
