// One tracked-process type for every process the harnesses, the tests and the benchmarks start
// (Kafka nodes, Flink JobManager and TaskManagers, Streams instances, chaos workers, Prometheus,
// packet delayers, the processes a test starts): spawned with its output in a log file or kept in
// memory, known by pid and start time (./proc.ts) so that a pid the kernel gave to another process
// is never signalled, signalled only while it is ours, waited for with a deadline and SIGKILLed
// after it, and killed by the one exit hook of this process unless it is meant to outlive it.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants as fsConstants, createWriteStream, fstatSync, openSync, writeFileSync, existsSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { delimiter, join } from 'node:path';
import { EosError, ErrorCodes } from '../errors.js';
import { systemClock, type Clock } from './clock.js';
import { pollUntil, PollTimeoutError } from './poll-until.js';
import { processStatus, systemProc, type ProcessRecord, type ProcessStatus, type ProcReader } from './proc.js';

/** What a tracked process needs of the system: /proc to judge a pid, kill(2) to signal it. A unit test passes a table of its own. */
export interface ProcessTable extends ProcReader {
  /** Throws when there is no such pid (ESRCH) or it may not be signalled. */
  kill(pid: number, sig: NodeJS.Signals): void;
}

export const systemProcesses: ProcessTable = { ...systemProc, kill: (pid, sig) => void process.kill(pid, sig) };

// ---- The one exit hook -------------------------------------------------------------------------

const exitHooks = new Set<() => void>();
let exitInstalled = false;

function runExitHooks(): void {
  // In the order they were added: a network's namespaces (added first) go after nothing; each hook once.
  for (const hook of [...exitHooks]) {
    exitHooks.delete(hook);
    try {
      hook();
    } catch {
      /* exiting anyway: the next hook still runs */
    }
  }
}

/**
 * SIGINT or SIGTERM while something is to be killed at exit: Node's default action ends the process
 * without any exit hook, so with no other listener (a chaos run's armInterrupt, a daemon's
 * shutdown: they exit when done, and the hook runs then) this one exits, running the hooks.
 */
function onSignal(sig: NodeJS.Signals): void {
  if (process.listenerCount(sig) > 1) return;
  process.exit(128 + (osConstants.signals[sig] ?? 0));
}
const onSigint = () => onSignal('SIGINT');
const onSigterm = () => onSignal('SIGTERM');

/**
 * Runs `hook` (synchronous: the process is exiting) when this process exits, also on SIGINT and
 * SIGTERM when nothing else handles them. Returns the function that removes it. One listener per
 * event for the whole process, however many hooks.
 */
export function atExit(hook: () => void): () => void {
  if (!exitInstalled) {
    exitInstalled = true;
    process.on('exit', runExitHooks);
  }
  if (exitHooks.size === 0) {
    // First in line: when it runs, every other listener is still there to be counted (a `once`
    // listener removes itself before it is called).
    process.prependListener('SIGINT', onSigint);
    process.prependListener('SIGTERM', onSigterm);
  }
  exitHooks.add(hook);
  return () => {
    if (!exitHooks.delete(hook) || exitHooks.size > 0) return;
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
  };
}

/** Hooks added and not yet removed or run. */
export function exitHooksPending(): number {
  return exitHooks.size;
}

// ---- Parent-death signal -----------------------------------------------------------------------

let setprivFound: string | null | undefined;

/** util-linux's setpriv on PATH (it sets PR_SET_PDEATHSIG, then execs the command: the pid stays), or null. */
export function setprivPath(): string | null {
  if (setprivFound !== undefined) return setprivFound;
  setprivFound = null;
  if (process.platform !== 'linux') return null;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const file = join(dir || '.', 'setpriv');
    try {
      accessSync(file, fsConstants.X_OK);
      setprivFound = file;
      break;
    } catch {
      /* not here */
    }
  }
  return setprivFound;
}

// ---- The type ----------------------------------------------------------------------------------

/**
 * What happens to a spawned process when this one exits: 'kill', the exit hook SIGKILLs it;
 * 'owner', its owner's exit hook does (a cluster's, which records it in the state file too);
 * 'outlive', it outlives this process (a cluster left running by the CLI: not waited for either).
 */
export type AtExit = 'kill' | 'owner' | 'outlive';

export interface TrackedOptions {
  /** For messages: 'node 2', 'taskmanager-1', 'worker w1'. */
  name: string;
  /** A string its command line contains: with the start time, what makes a recorded pid ours. */
  needle?: string;
  /** Signals go to its whole process group (it leads one: spawned with `group`), e.g. a command under GNU time. */
  group?: boolean;
  clock?: Clock;
  table?: ProcessTable;
}

export interface SpawnTrackedOptions extends TrackedOptions {
  /** Where pid and start time are written (a state file's entry, which the caller saves); a fresh record by default. */
  record?: ProcessRecord;
  /** Output (stdout and stderr) appended to this file: by the child itself, or copied by this process when `pipe`. */
  logFile?: string;
  /**
   * Output through this process: its tail kept in memory (`output`, `waitFor`, `tail`), and copied
   * to logFile if given; 'raw': pipes the caller reads itself (`child.stdout`, Buffers), nothing kept.
   */
  pipe?: boolean | 'raw';
  /** In a process group of its own (a terminal's Ctrl-C does not reach it). */
  detached?: boolean;
  /** stdin a pipe (`child.stdin`) instead of /dev/null. */
  stdin?: 'pipe';
  /** stdout to /dev/null even when piped (only stderr kept): output that would cost this process to read. */
  discardStdout?: boolean;
  /** Default 'kill'. */
  atExit?: AtExit;
  /**
   * SIGKILLed by the kernel when this process dies, even by SIGKILL, where no exit hook runs
   * (PR_SET_PDEATHSIG, through util-linux's setpriv when present; without it, the exit hook alone).
   * Only for children that must not outlive this process.
   */
  dieWithParent?: boolean;
  /** Wraps the command line, e.g. to run it in a network namespace (`ip netns exec`, which execs: the pid stays). */
  wrap?: (cmd: string, args: string[]) => [string, string[]];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** The output kept in memory of a piped process. */
const KEEP_CHARS = 200_000;

/** The command line a spawn runs: wrapped, then under setpriv's parent-death signal when asked and present. Pure. */
export function commandLine(cmd: string, args: string[], opts: Pick<SpawnTrackedOptions, 'wrap' | 'dieWithParent'>, setpriv: string | null): [string, string[]] {
  const [c, a] = opts.wrap ? opts.wrap(cmd, args) : [cmd, args];
  return opts.dieWithParent && setpriv ? [setpriv, ['--pdeathsig', 'KILL', '--', c, ...a]] : [c, a];
}

export class TrackedProcess {
  readonly name: string;
  readonly needle: string | undefined;
  private readonly group: boolean;
  private readonly clock: Clock;
  private readonly table: ProcessTable;
  /** The ChildProcess when this process spawned it (undefined for one known only by its record). */
  readonly child: ChildProcess | undefined;
  /** The latest output of a piped process (stdout and stderr), up to KEEP_CHARS characters. */
  output = '';
  /** The log file's length when the process was started: what it printed starts there. */
  readonly logFrom: number;
  /** Resolves with the exit code (-1: killed by a signal) of a spawned process; undefined for a recorded one. */
  readonly exited: Promise<number | null> | undefined;
  /** Why the spawn failed (no such command…), once the child's 'error' has come. */
  error: Error | undefined;
  private readonly listeners = new Set<() => void>();
  /** Its output is complete: the pipes closed (piped), or it exited. */
  private ended = false;
  private disarm: (() => void) | undefined;

  /** A process known by its record (a state file's entry, the record read again before each action). */
  constructor(
    readonly record: ProcessRecord,
    opts: TrackedOptions,
    spawned?: { child: ChildProcess; logFrom: number; exited: Promise<number | null> },
  ) {
    this.name = opts.name;
    this.needle = opts.needle;
    this.group = opts.group ?? false;
    this.clock = opts.clock ?? systemClock;
    this.table = opts.table ?? systemProcesses;
    this.child = spawned?.child;
    this.logFrom = spawned?.logFrom ?? 0;
    this.exited = spawned?.exited;
  }

  /** Starts a process; pid and start time (read from /proc right after the exec) go into its record. */
  static spawn(cmd: string, args: string[], opts: SpawnTrackedOptions): TrackedProcess {
    const [c, a] = commandLine(cmd, args, opts, opts.dieWithParent ? setprivPath() : null);
    const fd = !opts.pipe && opts.logFile ? openSync(opts.logFile, 'a') : undefined;
    const logFrom = fd !== undefined ? fstatSync(fd).size : 0;
    let child: ChildProcess;
    try {
      child = spawn(c, a, {
        // A group's leader: signals to the group reach every process of it.
        detached: (opts.detached ?? false) || (opts.group ?? false),
        stdio: [opts.stdin ?? 'ignore', opts.discardStdout ? 'ignore' : opts.pipe ? 'pipe' : (fd ?? 'ignore'), opts.pipe ? 'pipe' : (fd ?? 'ignore')],
        ...(opts.env ? { env: opts.env } : {}),
        ...(opts.cwd ? { cwd: opts.cwd } : {}),
      });
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    const record = opts.record ?? { pid: null, startTime: null };
    let resolveExit!: (code: number | null) => void;
    const exited = new Promise<number | null>((r) => (resolveExit = r));
    const p = new TrackedProcess(record, opts, { child, logFrom, exited });
    record.pid = child.pid ?? null;
    // spawn() returns after the exec: this start time is the command's (null if it already died).
    record.startTime = record.pid === null ? null : (p.table.stat(record.pid)?.startTime ?? null);
    const atExitMode = opts.atExit ?? 'kill';
    if (atExitMode === 'outlive') child.unref();
    else if (atExitMode === 'kill' && record.pid !== null) p.disarm = atExit(() => p.killSync());
    if (opts.pipe === true) {
      const log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
      // Strings, decoded across chunks (a character split between two reads stays whole).
      child.stdout?.setEncoding('utf8');
      child.stderr?.setEncoding('utf8');
      const take = (d: string) => {
        p.output += d;
        if (p.output.length > KEEP_CHARS) p.output = p.output.slice(-KEEP_CHARS / 2);
        log?.write(d);
        for (const l of [...p.listeners]) l();
      };
      child.stdout?.on('data', take);
      child.stderr?.on('data', take);
      child.once('close', () => {
        log?.end();
        p.markEnded();
      });
    }
    child.once('error', (err) => {
      p.error = err;
      p.disarm?.();
      // No process was started: no 'exit' comes.
      if (child.pid === undefined) {
        p.markEnded();
        resolveExit(null);
      }
    });
    child.once('exit', (code, signal) => {
      p.disarm?.();
      // A piped process's last output may come after its exit: its end is when the pipes close.
      if (opts.pipe !== true) p.markEnded();
      resolveExit(code ?? (signal ? -1 : null));
    });
    return p;
  }

  private markEnded(): void {
    this.ended = true;
    for (const l of [...this.listeners]) l();
  }

  get pid(): number | null {
    return this.record.pid;
  }

  /** Running, paused (SIGSTOP) or stopped: checked against the recorded identity, never the pid alone. */
  status(): ProcessStatus {
    if (this.child && (this.child.exitCode !== null || this.child.signalCode !== null || this.error)) return 'stopped';
    return processStatus(this.record, this.needle, this.table);
  }

  get alive(): boolean {
    return this.status() !== 'stopped';
  }

  /** Sends `sig` while the process is ours; false when it is not (gone, or its pid another process's). */
  signal(sig: NodeJS.Signals): boolean {
    if (this.status() === 'stopped') return false;
    try {
      this.table.kill(this.group ? -this.record.pid! : this.record.pid!, sig);
      return true;
    } catch {
      return false;
    }
  }

  /** Whether the process is gone within timeoutMs. */
  async waitExit(timeoutMs: number): Promise<boolean> {
    return this.waitStatus((s) => s === 'stopped', timeoutMs, 'to exit');
  }

  /** Whether the process is (paused) or is no longer (not paused) stopped by SIGSTOP within timeoutMs. */
  async waitPaused(paused: boolean, timeoutMs = 2000): Promise<boolean> {
    return this.waitStatus((s) => (s === 'paused') === paused, timeoutMs, paused ? 'to pause' : 'to resume');
  }

  private async waitStatus(ok: (s: ProcessStatus) => boolean, timeoutMs: number, what: string): Promise<boolean> {
    try {
      await pollUntil(`${this.name} ${what}`, () => ok(this.status()), { timeoutMs, intervalMs: 50, clock: this.clock });
      return true;
    } catch (err) {
      if (err instanceof PollTimeoutError) return false;
      throw err;
    }
  }

  /**
   * Ends the process: graceMs 0, SIGKILL at once; else SIGTERM (after SIGCONT if it is paused) and
   * SIGKILL when it has not exited after graceMs. Throws when it has not exited killWaitMs after
   * SIGKILL; otherwise its record forgets the pid.
   */
  async end(graceMs: number, killWaitMs = 10_000): Promise<void> {
    if (this.status() === 'paused') this.signal('SIGCONT');
    if (graceMs > 0 && this.signal('SIGTERM') && (await this.waitExit(graceMs))) return this.forget();
    if (this.signal('SIGKILL') && !(await this.waitExit(killWaitMs))) throw new EosError(ErrorCodes.HARNESS_FAILED, `${this.name} (pid ${this.record.pid}) did not exit after SIGKILL`);
    this.forget();
  }

  /** The record no longer names a process. */
  forget(): void {
    this.record.pid = null;
    this.record.startTime = null;
  }

  /** SIGKILL now (a paused process continued first, so that it dies at once); whether it is gone or going. For exit hooks. */
  killSync(): boolean {
    if (this.status() === 'paused') this.signal('SIGCONT');
    return this.signal('SIGKILL') || this.status() === 'stopped';
  }

  /**
   * Resolves when a line of a piped process's output matches (lines printed before the call count
   * too); rejects when the process exits first or after timeoutMs, with the output's tail.
   */
  waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const stop = new AbortController();
      const find = (): RegExpMatchArray | null => {
        for (const line of this.output.split('\n')) {
          const m = line.match(pattern);
          if (m) return m;
        }
        return null;
      };
      const check = () => {
        const m = find();
        if (m) {
          finish();
          resolve(m);
        } else if (this.ended || (!this.child && this.status() === 'stopped')) {
          finish();
          reject(new EosError(ErrorCodes.HARNESS_FAILED, `${this.name} exited${this.error ? ` (${this.error.message})` : ''} before a line matched ${pattern}:\n${this.tail(30)}`));
        }
      };
      const finish = () => {
        this.listeners.delete(check);
        stop.abort();
      };
      this.listeners.add(check);
      void this.clock.sleep(timeoutMs, stop.signal).then(() => {
        if (stop.signal.aborted) return;
        finish();
        reject(new EosError(ErrorCodes.HARNESS_FAILED, `no line matching ${pattern} within ${timeoutMs} ms from ${this.name}:\n${this.tail(30)}`));
      });
      check();
    });
  }

  /** The last lines of a piped process's output (those `keep` accepts). */
  tail(lines = 25, keep: (line: string) => boolean = () => true): string {
    const kept = this.output.split('\n').filter((l) => l && keep(l));
    return `--- ${this.name} (pid ${this.child?.pid ?? this.record.pid}):\n${kept.slice(-lines).join('\n')}`;
  }
}

/**
 * SIGKILLs each process still ours (for an exit hook: it cannot wait); returns those gone or going.
 * `record`: their records forget the pids and the state file is written, so that a later `status`
 * tells the truth (SIGKILL cannot be refused: a signalled process is as good as gone).
 */
export function killAllSync(procs: readonly TrackedProcess[], record?: { file: string; state: unknown }): TrackedProcess[] {
  const gone = procs.filter((p) => p.killSync());
  if (record && existsSync(record.file)) {
    for (const p of gone) p.forget();
    try {
      writeFileSync(record.file, JSON.stringify(record.state, null, 2));
    } catch {
      /* exiting anyway: the next `status` finds the pids gone */
    }
  }
  return gone;
}
