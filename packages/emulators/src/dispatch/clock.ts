/**
 * The emulator's clock and its scheduled tasks (courier stages, webhook retries).
 *
 * 'manual': time stands still until advance(ms); tasks due in that window run in time order, each
 * awaited, so a test sees a deterministic sequence. 'realtime': time is the wall clock (plus whatever
 * advance() added), and one unref'd timer wakes up for the earliest task, so a demo moves by itself and
 * a forgotten emulator never keeps the process alive. Both modes share one task list and one runner.
 */
export type ClockMode = 'manual' | 'realtime';

interface Task {
  dueAt: number;
  seq: number;
  run: () => Promise<void> | void;
}

export class EmulatorClock {
  readonly mode: ClockMode;
  private offsetMs = 0;
  private manualNow: number;
  private tasks: Task[] = [];
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** advance() and timer wake-ups take turns, so two of them never run the same task. */
  private turn: Promise<void> = Promise.resolve();

  constructor(
    mode: ClockMode,
    private readonly onTaskError: (error: unknown) => void,
    /** Runs after each task (the webhook sender waits for its deliveries there). */
    private readonly afterEachTask: () => Promise<void> = async () => {},
    startAt: number = Date.now(),
  ) {
    this.mode = mode;
    this.manualNow = startAt;
  }

  now(): number {
    return this.mode === 'manual' ? this.manualNow : Date.now() + this.offsetMs;
  }

  schedule(delayMs: number, run: () => Promise<void> | void): void {
    if (this.closed) return;
    this.tasks.push({ dueAt: this.now() + Math.max(0, delayMs), seq: this.seq++, run });
    this.tasks.sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq);
    this.arm();
  }

  nextDueAt(): number | undefined {
    return this.tasks[0]?.dueAt;
  }

  pendingTasks(): number {
    return this.tasks.length;
  }

  advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) return Promise.reject(new RangeError('advance(ms) needs a finite ms >= 0'));
    return this.takeTurn(async () => {
      const target = this.now() + ms;
      await this.runDue(target);
      if (this.mode === 'manual') this.manualNow = Math.max(this.manualNow, target);
      else this.offsetMs += Math.max(0, target - this.now());
      this.arm();
    });
  }

  close(): void {
    this.closed = true;
    this.tasks = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private takeTurn(work: () => Promise<void>): Promise<void> {
    const next = this.turn.then(work);
    this.turn = next.catch(() => {});
    return next;
  }

  /** Runs every task due at or before `until`, moving the clock to each task's time first. */
  private async runDue(until: number): Promise<void> {
    for (;;) {
      const task = this.tasks[0];
      if (!task || task.dueAt > until || this.closed) return;
      this.tasks.shift();
      if (this.mode === 'manual') this.manualNow = Math.max(this.manualNow, task.dueAt);
      else if (task.dueAt > this.now()) this.offsetMs += task.dueAt - this.now();
      try {
        await task.run();
        await this.afterEachTask();
      } catch (error) {
        this.onTaskError(error);
      }
    }
  }

  private arm(): void {
    if (this.mode !== 'realtime' || this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const first = this.tasks[0];
    if (!first) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.takeTurn(async () => {
          await this.runDue(this.now());
          this.arm();
        });
      },
      Math.max(0, first.dueAt - this.now()),
    );
    this.timer.unref();
  }
}
