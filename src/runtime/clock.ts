// Time and timers for everything that waits: the system's in the daemon, a manual one in tests.
// Code that reads the time or waits takes a Clock (the checkpoint driver, PartitionTask,
// Periodic, pollUntil), so a unit test moves time itself and reaches timeouts without waiting.
import { TimeoutError, withTimeout } from '../util/timeout.js';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; at once (resolving, not rejecting) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** `p`, or a TimeoutError naming `what` once `ms` have passed. */
  within<T>(p: Promise<T>, ms: number, what: string): Promise<T>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener('abort', done);
    }),
  within: withTimeout,
};

/** Lets every promise callback queued so far run (a manual clock's timers never wait on a real one). */
export const settle = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

interface ManualTimer {
  at: number;
  fire: () => void;
}

/**
 * Time that moves only when a test says so. `advance(ms)` lets what is ready run, then moves time
 * on, firing the timers due on the way in order of their due time (equal ones in the order they
 * were set), letting the callbacks each one releases run before the next.
 */
export class ManualClock implements Clock {
  /** In the order they were set (a stable sort keeps equal due times in that order). */
  private timers: ManualTimer[] = [];

  constructor(public t = 1_000_000) {}

  now(): number {
    return this.t;
  }

  private add(ms: number, fire: () => void): ManualTimer {
    const timer = { at: this.t + Math.max(0, ms), fire };
    this.timers.push(timer);
    return timer;
  }

  private remove(timer: ManualTimer): void {
    this.timers = this.timers.filter((x) => x !== timer);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        this.remove(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.add(ms, done);
      signal?.addEventListener('abort', done);
    });
  }

  within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = this.add(ms, () => reject(new TimeoutError(`${what} did not finish within ${ms} ms`)));
      p.then(
        (v) => {
          this.remove(timer);
          resolve(v);
        },
        (e: unknown) => {
          this.remove(timer);
          reject(e);
        },
      );
    });
  }

  /** Timers set and neither fired nor cancelled. */
  get timersPending(): number {
    return this.timers.length;
  }

  /** Lets what is ready run, then moves time on by `ms`, firing the timers due on the way. */
  async advance(ms: number): Promise<void> {
    await settle();
    const until = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.remove(due);
      this.t = due.at;
      due.fire();
      await settle();
    }
    this.t = until;
    await settle();
  }
}
