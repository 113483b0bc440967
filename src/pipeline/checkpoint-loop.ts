// The pipeline's checkpoint loop. Not a Periodic: when the next checkpoint may start is the
// coordinator's answer (interval, minPause, none pending: CheckpointDriver.nextTriggerAt), and a
// failed send wakes the loop early to abort at once. It waits on the driver's clock, so it is
// unit-tested on the manual clock (test/unit/pipeline/checkpoint-loop.test.ts).
import { errorMessage } from '../errors.js';
import type { Clock } from '../runtime/clock.js';

/** How often the loop asks again while no checkpoint may start (one pending, or FAILED). */
export const LOOP_POLL_MS = 100;

export interface CheckpointLoopDeps {
  clock: Clock;
  /** When the next checkpoint may start (ms), or null while none may. */
  nextTriggerAt(): number | null;
  shouldTrigger(now: number): boolean;
  /** The loop runs while this holds (the pipeline RUNNING). */
  running(): boolean;
  /** A participant's send failed: its checkpoint must abort now, not at the next trigger. */
  mustAbort(): boolean;
  /** Runs one checkpoint (serialized with the pipeline's other control operations). */
  checkpoint(): Promise<unknown>;
  /** A checkpoint threw (a driver error, not a failed checkpoint): the pipeline is FAILED. */
  fail(reason: string): Promise<void>;
}

export class CheckpointLoop {
  private wakeUp: (() => void) | undefined;

  constructor(private readonly deps: CheckpointLoopDeps) {}

  /** Cuts the wait short: the loop checks at once whether to run a checkpoint, or whether to end. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Runs until running() is false; resolves once the checkpoint in flight has ended. */
  async run(): Promise<void> {
    const d = this.deps;
    while (d.running()) {
      const at = d.nextTriggerAt();
      const delay = at === null ? LOOP_POLL_MS : Math.max(0, at - d.clock.now());
      if (delay > 0 && !d.mustAbort()) {
        const woken = new AbortController();
        this.wakeUp = () => woken.abort();
        await d.clock.sleep(delay, woken.signal);
        this.wakeUp = undefined;
      }
      if (!d.running()) break;
      if (d.shouldTrigger(d.clock.now()) || d.mustAbort()) {
        await d.checkpoint().catch((err: unknown) => d.fail(`checkpoint loop: ${errorMessage(err)}`));
      }
    }
  }
}
