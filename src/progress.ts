// A live progress line for long commands. On a terminal one line is rewritten in place (at most
// 10 times a second); in CI logs (not a terminal) a plain line is written at most every
// `everyMs` and at the end, so the log stays complete without carriage-return spam.
export interface ProgressOptions {
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  isTTY?: boolean;
  /** Not a terminal: the least time between two lines. */
  everyMs?: number;
  now?: () => number;
}

export class ProgressLine {
  private readonly stream: NodeJS.WritableStream;
  private readonly tty: boolean;
  private readonly everyMs: number;
  private readonly now: () => number;
  private lastAt = -Infinity;
  private shown = false;
  /** The latest state not yet written: its text, or the function that makes it (called only when written). */
  private pending: string | (() => string) | undefined;

  constructor(opts: ProgressOptions = {}) {
    this.stream = opts.stream ?? process.stderr;
    this.tty = opts.isTTY ?? Boolean((opts.stream ?? process.stderr).isTTY);
    this.everyMs = opts.everyMs ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * The current state. A function is called only when the line is written (at most 10 times a
   * second on a terminal, once per interval otherwise, and at done()): a caller that updates on
   * every batch does not format a line it will not show.
   */
  update(state: string | (() => string)): void {
    const t = this.now();
    this.pending = state;
    if (t - this.lastAt < (this.tty ? 100 : this.everyMs)) return;
    this.lastAt = t;
    this.pending = undefined;
    const text = typeof state === 'string' ? state : state();
    if (this.tty) {
      this.stream.write(`\r\x1b[K${text}`);
      this.shown = true;
    } else this.stream.write(`${text}\n`);
  }

  /** A line that stays (a log line between progress updates). */
  log(line: string): void {
    this.clear();
    this.stream.write(`${line}\n`);
  }

  /** Ends the progress: the last state (or `text`) stays as a plain line. */
  done(text?: string): void {
    const pending = this.pending;
    const last = text ?? (typeof pending === 'function' ? pending() : pending);
    this.clear();
    if (last) this.stream.write(`${last}\n`);
    this.pending = undefined;
    this.lastAt = -Infinity;
  }

  private clear(): void {
    if (this.tty && this.shown) this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}

export function fmtDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/**
 * An integer with commas between groups of three digits, as toLocaleString('en-US') writes it.
 * Written out because the first toLocaleString of a process loads ICU's number formatting (15–20 ms
 * of CPU, most of a short command's progress cost); anything but a safe integer still goes there.
 */
export function groupDigits(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return n < 0 ? `-${out}` : out;
}

/** "4,500/10,000 records (45%), 1,200/s, 3s elapsed, ETA 5s" */
export function countProgress(what: string, done: number, total: number, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const pct = total > 0 ? Math.floor((done * 100) / total) : 0;
  const eta = rate > 0 && done < total ? `, ETA ${fmtDuration((total - done) / rate)}` : '';
  return `${what}: ${groupDigits(done)}/${groupDigits(total)} (${pct}%), ${groupDigits(Math.round(rate))}/s, ${fmtDuration(elapsedMs / 1000)} elapsed${eta}`;
}
