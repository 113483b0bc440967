// Periodic work: an async task run every interval on a Clock, the one way a service schedules
// what it does on its own timer (probes, readings, the canary's sends and sweeps).
//
// The drift rule: a run starts `intervalMs` after the previous run started; a run that took
// longer than the interval is followed by the next one as soon as it ends. Ticks missed meanwhile
// are not queued (one run follows, never a burst), and two runs never overlap. The first run
// starts `firstDelayMs` after start() (0: at once). stop() cancels the next run and resolves once
// the run in flight, if any, has ended; start() after stop() begins again. A run that throws or
// rejects is reported to `onError` and the schedule goes on.
import { systemClock, type Clock } from './clock.js';

export interface PeriodicOptions {
  /** What runs (named in a bad interval's error). */
  name: string;
  intervalMs: number;
  /** Delay before the first run (default 0: at once). */
  firstDelayMs?: number;
  clock?: Clock;
  /** A run failed: called with what it threw; the next run is scheduled as usual. */
  onError: (err: unknown) => void;
}

export class Periodic {
  private readonly clock: Clock;
  private cancel: AbortController | undefined;
  private loop: Promise<void> | undefined;
  private inFlight: Promise<void> | undefined;
  private runs = 0;

  constructor(
    private readonly task: () => Promise<void> | void,
    private readonly opts: PeriodicOptions,
  ) {
    if (!(opts.intervalMs > 0)) throw new RangeError(`${opts.name}: interval must be a positive number of ms, got ${opts.intervalMs}`);
    this.clock = opts.clock ?? systemClock;
  }

  /** Between start() and stop(). */
  get started(): boolean {
    return this.cancel !== undefined;
  }

  /** Runs started since this object was made. */
  get runCount(): number {
    return this.runs;
  }

  /** Starts the schedule; a no-op while it is started. */
  start(): void {
    if (this.cancel) return;
    const cancel = new AbortController();
    this.cancel = cancel;
    // Started again while the last run before a stop() is still under way: after it, never beside it.
    const previous = this.loop;
    this.loop = previous ? previous.then(() => this.schedule(cancel.signal)) : this.schedule(cancel.signal);
  }

  private async schedule(signal: AbortSignal): Promise<void> {
    const first = this.opts.firstDelayMs ?? 0;
    if (first > 0) await this.clock.sleep(first, signal);
    while (!signal.aborted) {
      const started = this.clock.now();
      this.runs++;
      this.inFlight = this.runOnce();
      await this.inFlight;
      this.inFlight = undefined;
      // Stopped meanwhile: the sleep returns at once and the loop ends.
      const wait = started + this.opts.intervalMs - this.clock.now();
      if (wait > 0) await this.clock.sleep(wait, signal);
    }
  }

  private async runOnce(): Promise<void> {
    try {
      await this.task();
    } catch (err) {
      try {
        this.opts.onError(err);
      } catch {
        // A failing error report must not end the schedule.
      }
    }
  }

  /** Cancels the next run; resolves once the run in flight has ended. */
  async stop(): Promise<void> {
    const cancel = this.cancel;
    if (!cancel) return;
    this.cancel = undefined;
    cancel.abort();
    await this.loop;
  }

  /** The run in flight, if one is (resolves when it ends; never rejects). */
  get current(): Promise<void> | undefined {
    return this.inFlight;
  }
}
