// The tests' one wait for a condition: pollUntil (src/runtime/poll-until.ts) with what a failed
// integration test needs in its message (the processes' log tails, the state it was waiting on),
// and a way to give up at once (the process under test exited). No sleep-then-assert: poll for the
// condition.
import { pollUntil, PollTimeoutError } from '../../src/runtime/poll-until.js';

/** A child process under test: its output's tail explains a failed wait, and its exit ends one. */
export interface Watched {
  readonly child: { exitCode: number | null; signalCode: NodeJS.Signals | null };
  tail(lines?: number): string;
}

export interface UntilOptions<T> {
  /** Pause between probes (default 250 ms). */
  intervalMs?: number;
  /** When the wait is over (default: the probe answered something other than undefined, null or false). */
  done?: (value: T) => boolean;
  /** Appended to the timeout's message: what a reader needs to see why (the state waited on); may be read asynchronously. */
  context?: () => string | Promise<string>;
  /** Asked before each probe: a reason ends the wait at once, rejecting with it. */
  giveUp?: () => string | undefined;
  /** The process under test: the wait ends at once when it exits, and its log tail (40 lines) follows a failure's message. */
  process?: Watched;
}

/** The context's text, or what reading it failed with (a failed explanation never hides the failure). */
async function explained(context: (() => string | Promise<string>) | undefined, p: Watched | undefined): Promise<string> {
  const parts: string[] = [];
  if (context) parts.push(await Promise.resolve().then(context).catch((e: unknown) => `(the context could not be read: ${(e as Error).message})`));
  if (p) parts.push(p.tail(40));
  const text = parts.filter((s) => s !== '').join('\n');
  return text === '' ? '' : `\n${text}`;
}

function exited(p: Watched | undefined): string | undefined {
  if (!p || (p.child.exitCode === null && p.child.signalCode === null)) return undefined;
  return `the process exited (${p.child.exitCode ?? p.child.signalCode})`;
}

/**
 * Resolves with the probe's first answer that is done; rejects after `timeoutMs` with an error
 * naming `what`, the time waited and the probe's last value or error (and `context`, and the
 * process's log tail).
 */
export async function until<T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 60_000, opts: UntilOptions<T> = {}): Promise<T> {
  let gaveUp: string | undefined;
  const done = opts.done;
  try {
    const v = await pollUntil(
      what,
      async () => {
        gaveUp = opts.giveUp?.() ?? exited(opts.process);
        if (gaveUp !== undefined) return undefined;
        return probe();
      },
      { timeoutMs, intervalMs: opts.intervalMs ?? 250, done: (x) => gaveUp !== undefined || (done ? done(x as T) : x !== undefined && x !== null && x !== false) },
    );
    if (gaveUp !== undefined) throw new Error(`gave up waiting for ${what}: ${gaveUp}${await explained(opts.context, opts.process)}`);
    return v as T;
  } catch (err) {
    if (err instanceof PollTimeoutError && (opts.context || opts.process)) throw new Error(`${err.message}${await explained(opts.context, opts.process)}`, { cause: err });
    throw err;
  }
}

/**
 * Asserts that `probe` holds for `forMs` (that nothing happens: a second member joins, a record
 * is counted lost), asked every `intervalMs` and failing at the first time it does not, naming what.
 */
export async function holds(what: string, probe: () => Promise<boolean> | boolean, forMs: number, opts: { intervalMs?: number; context?: () => string | Promise<string>; process?: Watched } = {}): Promise<void> {
  const started = Date.now();
  let broke: string | undefined;
  const finished = await pollUntil(
    what,
    async () => {
      try {
        if (!(await probe())) broke = 'it did not hold';
      } catch (err) {
        broke = `the probe failed: ${(err as Error).message}`;
      }
      broke ??= exited(opts.process);
      return broke !== undefined;
    },
    { timeoutMs: forMs, intervalMs: opts.intervalMs ?? 250, done: (v) => v },
  ).then(
    () => false,
    (err: unknown) => {
      if (err instanceof PollTimeoutError) return true;
      throw err;
    },
  );
  if (!finished) throw new Error(`${what}: ${broke} after ${Date.now() - started} ms of ${forMs} ms${await explained(opts.context, opts.process)}`);
}
