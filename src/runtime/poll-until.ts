// The one wait for a condition: ask `probe` every `intervalMs` until it answers, or fail at the
// deadline with an error that says what was awaited, for how long, and what the probe said last.
import { errorMessage } from '../errors.js';
import { redactText } from '../redact.js';
import { systemClock, type Clock } from './clock.js';
import { TimeoutError } from '../util/timeout.js';

export interface PollOptions<T> {
  /** How long to wait in all; the probe is asked once more at the deadline. */
  timeoutMs: number;
  /** Pause between one probe's answer and the next probe (default 250). */
  intervalMs?: number;
  clock?: Clock;
  /** When the wait is over; default: the probe answered something other than undefined, null or false. */
  done?: (value: T) => boolean;
}

/** The wait ran out: `what` was awaited for `waitedMs`; `last` is the probe's last value or error. */
export class PollTimeoutError extends TimeoutError {
  constructor(
    readonly what: string,
    readonly waitedMs: number,
    readonly last: { kind: 'value'; value: unknown } | { kind: 'error'; error: unknown } | { kind: 'none' },
  ) {
    super(`timed out after ${waitedMs} ms waiting for ${what} (${describeLast(last)})`);
    this.name = 'PollTimeoutError';
  }
}

const MAX_SHOWN = 300;

function describeLast(last: PollTimeoutError['last']): string {
  if (last.kind === 'none') return 'the probe never answered';
  if (last.kind === 'error') return `last error: ${shown(errorMessage(last.error))}`;
  return `last value: ${shown(show(last.value))}`;
}

function show(v: unknown): string {
  try {
    return JSON.stringify(v, (_, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x)) ?? String(v);
  } catch {
    return String(v);
  }
}

/** Secrets never reach an error message; a long value is cut. */
function shown(text: string): string {
  const t = redactText(text);
  return t.length > MAX_SHOWN ? `${t.slice(0, MAX_SHOWN)}…` : t;
}

const answered = (v: unknown) => v !== undefined && v !== null && v !== false;

/**
 * Resolves with the probe's first answer that is done (by default: not undefined, null or false).
 * A probe that throws counts as not done (its error is the last seen). A probe is given the time
 * left, and at least `intervalMs`: one still running then is not waited for (so a wait ends at
 * most `intervalMs` after its deadline). Rejects with a PollTimeoutError.
 */
export async function pollUntil<T>(what: string, probe: () => Promise<T> | T, opts: PollOptions<T>): Promise<T> {
  const clock = opts.clock ?? systemClock;
  const interval = opts.intervalMs ?? 250;
  const done = opts.done ?? answered;
  const started = clock.now();
  const deadline = started + opts.timeoutMs;
  let last: PollTimeoutError['last'] = { kind: 'none' };
  for (;;) {
    const left = deadline - clock.now();
    const stop = new AbortController();
    try {
      const answer = await Promise.race([
        Promise.resolve()
          .then(probe)
          .then((value) => ({ value })),
        // Still running when its time is up: not waited for.
        clock.sleep(Math.max(left, interval), stop.signal).then(() => undefined),
      ]);
      if (answer) {
        if (done(answer.value)) return answer.value;
        last = { kind: 'value', value: answer.value };
      }
    } catch (err) {
      last = { kind: 'error', error: err };
    } finally {
      stop.abort();
    }
    const now = clock.now();
    if (now >= deadline) throw new PollTimeoutError(what, now - started, last);
    await clock.sleep(Math.min(interval, deadline - now));
  }
}
