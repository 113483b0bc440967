// A pipeline worker for fault injection: `eoswatch run` as a child process with a generated
// config, tracked by pid, its output kept (the tail in memory, all of it in a log file when asked)
// and its /metrics readable. The config's temporary directory goes when the worker exits (or is
// killed when this process exits). The chaos runner and the integration tests both use it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { EosError, ErrorCodes } from '../../src/errors.js';

/** How to start this eoswatch's CLI as a child: the compiled one from dist, or src through tsx. */
export function cliCommand(): string[] {
  const here = fileURLToPath(import.meta.url);
  const ts = here.endsWith('.ts');
  const cli = join(dirname(here), '..', ts ? 'cli.ts' : 'cli.js');
  return ts ? ['--import', 'tsx', cli] : [cli];
}

const KEEP_CHARS = 200_000;

/** Workers still running, killed by pid when this process exits (Ctrl-C of a chaos run, a crashed test). */
const live = new Set<WorkerProcess>();
let exitHook = false;
function killLiveSync(): void {
  for (const w of live) {
    try {
      process.kill(w.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    rmSync(w.dir, { recursive: true, force: true });
  }
}

export class WorkerProcess {
  readonly child: ChildProcess;
  /** The latest output (stdout and stderr), up to KEEP_CHARS characters. */
  output = '';
  readonly url: Promise<string>;
  /** The HTTP server's URL once it is listening (undefined before). */
  urlNow: string | undefined;
  readonly exited: Promise<number | null>;
  private readonly log: WriteStream | undefined;
  /** The temporary directory of its configuration file, removed when the worker exits. */
  readonly dir: string;

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
    this.log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
    const args = [...cliCommand(), 'run', '--config', file];
    const [cmd, argv] = opts.command ? opts.command(process.execPath, args) : [process.execPath, args];
    this.child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    const take = (d: Buffer) => {
      this.output += d;
      if (this.output.length > KEEP_CHARS) this.output = this.output.slice(-KEEP_CHARS / 2);
      this.log?.write(d);
    };
    this.child.stdout!.on('data', take);
    this.child.stderr!.on('data', take);
    live.add(this);
    if (!exitHook) {
      exitHook = true;
      process.once('exit', killLiveSync);
    }
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        live.delete(this);
        this.log?.end();
        rmSync(dir, { recursive: true, force: true });
        resolve(code ?? (signal ? -1 : null));
      }),
    );
    this.url = this.waitFor(/"url":"(http:\/\/[^"]+)".*HTTP server listening/).then((m) => m[1]!);
    this.url.then(
      (u) => void (this.urlNow = u),
      () => undefined,
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves when a line of output matches (lines written before the call count too). */
  waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        for (const line of this.output.split('\n')) {
          const m = line.match(pattern);
          if (m) {
            resolve(m);
            return true;
          }
        }
        return false;
      };
      if (check()) return;
      const onData = () => {
        if (check()) cleanup();
      };
      const onExit = () => {
        if (!check()) reject(new EosError(ErrorCodes.HARNESS_FAILED, `worker ${this.name} exited before a line matched ${pattern}:\n${this.tail(30)}`));
        cleanup();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new EosError(ErrorCodes.HARNESS_FAILED, `no line matching ${pattern} within ${timeoutMs} ms from worker ${this.name}:\n${this.tail(30)}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.child.stdout!.off('data', onData);
        this.child.off('exit', onExit);
      };
      this.child.stdout!.on('data', onData);
      this.child.once('exit', onExit);
    });
  }

  /** The last lines of output, kafkajs connection chatter left out. */
  tail(lines = 25): string {
    const kept = this.output.split('\n').filter((l) => l && !l.includes('"namespace":"Connection"') && !l.includes('concurrent operation'));
    return `--- ${this.name} (pid ${this.pid}):\n${kept.slice(-lines).join('\n')}`;
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
    if (this.alive) process.kill(this.pid, sig);
  }

  async kill(): Promise<void> {
    this.signal('SIGCONT');
    this.signal('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, then SIGKILL if it has not exited after timeoutMs. */
  async stop(timeoutMs = 30_000): Promise<number | null> {
    this.signal('SIGCONT');
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
