// A pipeline worker for fault injection: `eoswatch run` as a child process with a generated
// config, a tracked process (src/runtime/process.ts), its output kept (the tail in memory, all of
// it in a log file when asked) and its /metrics readable. The config's temporary directory goes when the worker exits (or is
// killed when this process exits). The chaos runner and the integration tests both use it.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { atExit, TrackedProcess } from '../../src/runtime/process.js';

/** How to start this eoswatch's CLI as a child: the compiled one from dist, or src through tsx. */
export function cliCommand(): string[] {
  const here = fileURLToPath(import.meta.url);
  const ts = here.endsWith('.ts');
  const cli = join(dirname(here), '..', ts ? 'cli.ts' : 'cli.js');
  return ts ? ['--import', 'tsx', cli] : [cli];
}

/**
 * A running `eoswatch run`. Its process is a TrackedProcess (src/runtime/process.ts): output kept
 * in memory and copied to the log file, killed by the exit hook of this process, and started under
 * a parent-death signal (where setpriv is present), so that not even a SIGKILLed chaos run or test
 * leaves a worker behind.
 */
export class WorkerProcess {
  readonly process: TrackedProcess;
  readonly url: Promise<string>;
  /** The HTTP server's URL once it is listening (undefined before). */
  urlNow: string | undefined;
  readonly exited: Promise<number | null>;
  /** The temporary directory of its configuration file, removed when the worker exits. */
  readonly dir: string;
  private readonly disarmDir: () => void;

  constructor(
    config: Record<string, unknown>,
    readonly name: string,
    opts: {
      logFile?: string;
      /** Wraps the command line, e.g. to run the worker in a network namespace (ClusterNetwork.wrap). */
      command?: (cmd: string, args: string[]) => [string, string[]];
    } = {},
  ) {
    const dir = (this.dir = mkdtempSync(join(tmpdir(), 'eoswatch-worker-')));
    const file = join(dir, 'eoswatch.yaml');
    writeFileSync(file, stringify(config));
    this.process = TrackedProcess.spawn(process.execPath, [...cliCommand(), 'run', '--config', file], {
      name: `worker ${name}`,
      pipe: true,
      dieWithParent: true,
      ...(opts.logFile ? { logFile: opts.logFile } : {}),
      ...(opts.command ? { wrap: opts.command } : {}),
    });
    // The directory goes at exit too, after the worker's kill (exit hooks run in the order they were added).
    this.disarmDir = atExit(() => rmSync(dir, { recursive: true, force: true }));
    this.exited = this.process.exited!.then((code) => {
      this.disarmDir();
      rmSync(dir, { recursive: true, force: true });
      return code;
    });
    this.url = this.waitFor(/"url":"(http:\/\/[^"]+)".*HTTP server listening/).then((m) => m[1]!);
    this.url.then(
      (u) => void (this.urlNow = u),
      () => undefined,
    );
  }

  /** The latest output (stdout and stderr). */
  get output(): string {
    return this.process.output;
  }

  get child(): ChildProcess {
    return this.process.child!;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.process.alive;
  }

  /** Resolves when a line of output matches (lines written before the call count too). */
  waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    return this.process.waitFor(pattern, timeoutMs);
  }

  /** The last lines of output, kafkajs connection chatter left out. */
  tail(lines = 25): string {
    return this.process.tail(lines, (l) => !l.includes('"namespace":"Connection"') && !l.includes('concurrent operation'));
  }

  async metricsText(): Promise<string> {
    return (await fetch(`${await this.url}/metrics`)).text();
  }

  /**
   * One /metrics page within timeoutMs, or undefined when the worker is down, not listening yet,
   * paused or slow to answer (for the runner's availability scrapes: a gap, not a zero).
   */
  async scrape(timeoutMs = 2000): Promise<string | undefined> {
    if (!this.alive || !this.urlNow) return undefined;
    try {
      const res = await fetch(`${this.urlNow}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
      return res.ok ? await res.text() : undefined;
    } catch {
      return undefined;
    }
  }

  signal(sig: NodeJS.Signals): void {
    this.process.signal(sig);
  }

  /** SIGKILL (continued first if paused), and its exit. */
  async kill(): Promise<void> {
    await this.process.end(0);
    await this.exited;
  }

  /** SIGTERM, then SIGKILL if it has not exited after timeoutMs. */
  async stop(timeoutMs = 30_000): Promise<number | null> {
    await this.process.end(timeoutMs);
    return this.exited;
  }
}
