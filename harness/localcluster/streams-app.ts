// Instances of the seed's Kafka Streams app (streams/app) on this machine, next to the local Kafka
// cluster: the app is built with Maven once per content of its sources into the cache
// (~/.cache/eoswatch/streams-app/<hash>: the jar and lib/ with kafka-streams and its dependencies),
// and each instance is its own `java` process with its own state directory and log, a tracked
// process (pid and start time, src/runtime/process.ts) recorded in the run directory's state file (streams.json). As for the Kafka and
// Flink clusters, the state file is the shared truth: read before every action and written after
// every start and stop, so a later command (the CLI, another process) finds the instances, and
// only the processes we started are ever signalled.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { explainLog } from './cluster.js';
import { cacheRoot, withLock } from './kafka-dist.js';
import { describeSurvivors, processesReferencing, type ProcessRecord, type ProcessStatus } from '../../src/runtime/proc.js';
import { atExit, killAllSync, TrackedProcess } from '../../src/runtime/process.js';
import { pollUntil, PollTimeoutError } from '../../src/runtime/poll-until.js';
import { EosError, ErrorCodes } from '../../src/errors.js';

const run = promisify(execFile);
const STATE_FILE = 'streams.json';
const MAIN_CLASS = 'eoswatch.streams.IncrementApp';

/** What every instance of the run's application is started with. */
export interface StreamsAppOptions {
  bootstrap: string;
  applicationId: string;
  input: string;
  output: string;
  /** num.stream.threads of each instance (default 1). */
  threads?: number;
  /** A persistent state store (a count per key): Streams then keeps the process UUID in the state directory. */
  stateful?: boolean;
  /** commit.interval.ms (default 200). */
  commitIntervalMs?: number;
  /** More Streams and client properties (written to the run's streams.properties, applied last). */
  properties?: Record<string, string>;
  /** slf4j-simple's level for the instance logs (default warn; info shows every rebalance). */
  logLevel?: 'error' | 'warn' | 'info' | 'debug';
}

export interface StreamsInstance extends ProcessRecord {
  /** 1, 2, …: the instance's number in the run. */
  n: number;
  logFile: string;
  /** The log's length when the instance was last started: what this process printed starts there. */
  logFrom?: number;
  stateDir: string;
}

export interface StreamsRunState {
  dir: string;
  jar: string;
  lib: string;
  app: StreamsAppOptions;
  propertiesFile: string;
  instances: StreamsInstance[];
}

/** The app module in this repository. */
export function appModuleDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'streams', 'app');
}

async function sourceFiles(module: string): Promise<string[]> {
  const javaDir = join(module, 'src', 'main', 'java', 'eoswatch', 'streams');
  const java = (await readdir(javaDir)).filter((f) => f.endsWith('.java')).sort().map((f) => join(javaDir, f));
  return [join(module, 'pom.xml'), ...java];
}

/** The cache key of the app: a hash of its pom and sources (names and contents). Exported for tests. */
export async function appSourceHash(module = appModuleDir()): Promise<string> {
  const hash = createHash('sha256');
  for (const f of await sourceFiles(module)) {
    hash.update(f.slice(module.length));
    hash.update('\0');
    hash.update(await readFile(f));
  }
  return hash.digest('hex').slice(0, 12);
}

/** Builds the app into the cache once per content of its sources; returns the jar and the directory of its dependencies. */
export async function ensureStreamsApp(): Promise<{ jar: string; lib: string }> {
  const module = appModuleDir();
  const out = join(cacheRoot(), 'streams-app', await appSourceHash(module));
  const jar = join(out, 'eoswatch-streams-app.jar');
  const lib = join(out, 'lib');
  const marker = join(out, '.complete');
  if (existsSync(marker)) return { jar, lib };
  await mkdir(out, { recursive: true });
  return withLock(join(out, '.lock'), async () => {
    if (existsSync(marker)) return { jar, lib };
    const build = join(out, 'build');
    try {
      await run('mvn', ['-q', '-B', '-f', join(module, 'pom.xml'), 'package', `-Dapp.build.dir=${build}`], { maxBuffer: 64 * 1024 * 1024 });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      const tail = `${e.stdout ?? ''}${e.stderr ?? ''}`.split('\n').slice(-30).join('\n');
      throw new EosError(ErrorCodes.HARNESS_FAILED, `building the Streams app (${module}) with Maven failed (is mvn installed and Maven Central reachable?):\n${tail}`, { cause: err });
    }
    await copyFile(join(build, 'eoswatch-streams-app.jar'), jar);
    await rm(lib, { recursive: true, force: true });
    await cp(join(build, 'lib'), lib, { recursive: true });
    await rm(build, { recursive: true, force: true });
    await writeFile(marker, new Date().toISOString());
    return { jar, lib };
  });
}

/** The properties file of a run: one `key=value` a line (java.util.Properties escaping for the few characters it needs). Pure. */
export function propertiesText(props: Record<string, string>): string {
  const esc = (s: string, key: boolean) => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(key ? /[=: #!]/g : /^[ #!]/, (c) => `\\${c}`);
  return Object.entries(props)
    .map(([k, v]) => `${esc(k, true)}=${esc(v, false)}`)
    .join('\n')
    .concat('\n');
}

/** The java command line of an instance. Pure. */
export function instanceArgs(state: Pick<StreamsRunState, 'jar' | 'lib' | 'app' | 'propertiesFile'>, inst: Pick<StreamsInstance, 'stateDir'>): string[] {
  const a = state.app;
  return [
    '-Xmx256m',
    // Two small JIT tiers and the serial collector: a handful of instances share a small machine.
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    `-Dorg.slf4j.simpleLogger.defaultLogLevel=${a.logLevel ?? 'warn'}`,
    '-Dorg.slf4j.simpleLogger.showDateTime=true',
    '-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS',
    '-cp',
    `${state.lib}/*:${state.jar}`,
    MAIN_CLASS,
    '--bootstrap',
    a.bootstrap,
    '--application-id',
    a.applicationId,
    '--input',
    a.input,
    '--output',
    a.output,
    '--threads',
    String(a.threads ?? 1),
    '--commit-interval-ms',
    String(a.commitIntervalMs ?? 200),
    '--properties',
    state.propertiesFile,
    ...(a.stateful ? ['--stateful'] : []),
    // Last: the instance's identity on its command line (src/runtime/proc.ts checks it), NUL-terminated there.
    '--state-dir',
    inst.stateDir,
  ];
}

/** The Streams states an instance's log names (its state listener prints "eoswatch-streams state OLD -> NEW"), oldest first. Pure. */
export function parseStateLines(log: string): string[] {
  const out: string[] = [];
  for (const m of log.matchAll(/^eoswatch-streams state (\S+) -> (\S+)$/gm)) out.push(m[2]!);
  return out;
}

/** Whether two app option sets start the same application (what a later `start` may not change). Pure. */
export function sameApp(a: StreamsAppOptions, b: StreamsAppOptions): string | null {
  for (const k of ['bootstrap', 'applicationId', 'input', 'output'] as const) {
    if (a[k] !== b[k]) return `${k} is ${JSON.stringify(a[k])} in the run, not ${JSON.stringify(b[k])}`;
  }
  if (Boolean(a.stateful) !== Boolean(b.stateful)) return `the run's app is ${a.stateful ? '' : 'not '}stateful`;
  return null;
}

/** A run directory holding the instances of one Streams application. */
export class StreamsRun {
  /** Removes the exit hook that kills what the state file names (armed at the first start of an instance). */
  private disarmExit: (() => void) | undefined;

  private constructor(
    readonly state: StreamsRunState,
    private readonly killOnExit: boolean,
  ) {}

  get dir(): string {
    return this.state.dir;
  }

  /** A new run (building the app if needed); a directory holding a run with live instances is refused. */
  static async create(app: StreamsAppOptions, opts: { dir?: string; killOnExit?: boolean } = {}): Promise<StreamsRun> {
    const built = await ensureStreamsApp();
    const dir = resolve(opts.dir ?? (await mkdtemp(join(tmpdir(), 'eoswatch-streams-'))));
    if (existsSync(join(dir, STATE_FILE))) {
      const prev = await StreamsRun.load(dir);
      const up = prev.state.instances.filter((i) => prev.status(i.n) !== 'stopped');
      if (up.length) throw new EosError(ErrorCodes.HARNESS_FAILED, `Streams instances are already running in ${dir} (${up.map((i) => `instance ${i.n} pid ${i.pid}`).join(', ')}); stop them first with 'stop'`);
    }
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const propertiesFile = join(dir, 'streams.properties');
    await writeFile(propertiesFile, propertiesText(app.properties ?? {}));
    const r = new StreamsRun({ dir, jar: built.jar, lib: built.lib, app, propertiesFile, instances: [] }, opts.killOnExit ?? true);
    await r.save();
    return r;
  }

  static async load(dir: string, killOnExit = false): Promise<StreamsRun> {
    const file = join(resolve(dir), STATE_FILE);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      throw new EosError(ErrorCodes.HARNESS_FAILED, `no Streams run at ${file}: start one with 'start --bootstrap … --application-id … --input … --output …'`);
    }
    return new StreamsRun(JSON.parse(text) as StreamsRunState, killOnExit);
  }

  private async save(): Promise<void> {
    await writeFile(join(this.state.dir, STATE_FILE), JSON.stringify(this.state, null, 2));
  }

  /** Reads the state file again (another process may have started or killed an instance). */
  refreshSync(): void {
    let recorded: StreamsRunState;
    try {
      recorded = JSON.parse(readFileSync(join(this.state.dir, STATE_FILE), 'utf8')) as StreamsRunState;
    } catch {
      return;
    }
    if (recorded.dir !== this.state.dir) return;
    for (const r of recorded.instances) {
      const ours = this.state.instances.find((i) => i.n === r.n);
      if (ours) {
        ours.pid = r.pid;
        ours.startTime = r.startTime ?? null;
        ours.logFrom = r.logFrom;
      } else this.state.instances.push(r);
    }
    this.state.instances.sort((a, b) => a.n - b.n);
  }

  /** An instance's process: its record in the state file, ours only while its command line ends with its state directory. */
  private proc(i: StreamsInstance): TrackedProcess {
    return new TrackedProcess(i, { name: `Streams instance ${i.n}`, needle: `${i.stateDir}\0` });
  }

  instance(n: number): StreamsInstance {
    this.refreshSync();
    const i = this.state.instances.find((x) => x.n === n);
    if (!i) throw new EosError(ErrorCodes.USAGE, `no Streams instance ${n} in ${this.state.dir} (instances: ${this.state.instances.map((x) => x.n).join(', ') || 'none'})`);
    return i;
  }

  status(n: number): ProcessStatus {
    const i = this.instance(n);
    return this.proc(i).status();
  }

  /** The Streams states the instance's log has printed since its last start, oldest first. */
  streamsStates(n: number): string[] {
    const i = this.instance(n);
    try {
      // Only what the process of the last start printed.
      return parseStateLines(readFileSync(i.logFile).subarray(i.logFrom ?? 0).toString('utf8'));
    } catch {
      return [];
    }
  }

  /**
   * Starts instance n (a stopped one again, with its state directory as it was), or a new one
   * (n omitted: the next number). Waits until it is RUNNING unless wait is false.
   */
  async start(n?: number, opts: { wait?: boolean; timeoutMs?: number } = {}): Promise<StreamsInstance> {
    this.refreshSync();
    let inst: StreamsInstance;
    if (n === undefined || !this.state.instances.some((i) => i.n === n)) {
      const next = n ?? Math.max(0, ...this.state.instances.map((i) => i.n)) + 1;
      if (!Number.isInteger(next) || next < 1) throw new EosError(ErrorCodes.USAGE, `instance number: expected a positive integer, found ${n}`);
      inst = { n: next, logFile: join(this.state.dir, `instance-${next}.log`), stateDir: join(this.state.dir, `instance-${next}`, 'state'), pid: null };
      this.state.instances.push(inst);
      this.state.instances.sort((a, b) => a.n - b.n);
    } else {
      inst = this.instance(n);
      if (this.proc(inst).alive) throw new EosError(ErrorCodes.HARNESS_FAILED, `Streams instance ${n} is already running (pid ${inst.pid})`);
    }
    await mkdir(inst.stateDir, { recursive: true });
    const p = TrackedProcess.spawn('java', instanceArgs(this.state, inst), {
      name: `Streams instance ${inst.n}`,
      needle: `${inst.stateDir}\0`,
      record: inst,
      logFile: inst.logFile,
      // Detached: the instances of a run the CLI started outlive it; else the run's exit hook kills (and records) them.
      detached: true,
      atExit: this.killOnExit ? 'owner' : 'outlive',
    });
    inst.logFrom = p.logFrom;
    if (inst.pid === null) throw new EosError(ErrorCodes.HARNESS_FAILED, `could not start java for Streams instance ${inst.n}`);
    await this.save();
    if (this.killOnExit) this.disarmExit ??= atExit(() => this.killAllSync({ record: true }));
    if (opts.wait !== false) await this.waitState(inst.n, 'RUNNING', opts.timeoutMs ?? 120_000);
    return inst;
  }

  /** Waits until instance n's last printed Streams state is `state`; throws if the process exits first. */
  async waitState(n: number, state: string, timeoutMs = 120_000): Promise<void> {
    const inst = this.instance(n);
    const answer = await pollUntil(
      `Streams instance ${n} ${state}`,
      // Reached, or exited (which ends the wait at once).
      () => (this.streamsStates(n).at(-1) === state ? 'reached' : this.proc(inst).alive ? undefined : 'exited'),
      { timeoutMs, intervalMs: 200 },
    ).catch((err: unknown) => {
      if (!(err instanceof PollTimeoutError)) throw err;
      throw new EosError(ErrorCodes.HARNESS_FAILED, `Streams instance ${n} not ${state} after ${timeoutMs} ms (states: ${this.streamsStates(n).join(' -> ') || 'none yet'}).\n${explainLog(inst.logFile)}`);
    });
    if (answer === 'exited') throw new EosError(ErrorCodes.HARNESS_FAILED, `Streams instance ${n} exited before reaching ${state}.\n${explainLog(inst.logFile)}`);
  }

  /** SIGKILL instance n: it leaves the group only when its session times out, its transaction only when it is fenced or times out. */
  async kill(n: number): Promise<void> {
    await this.end(this.instance(n), 0);
    await this.save();
  }

  /** SIGTERM instance n (KafkaStreams.close: it leaves the group and commits), SIGKILL after graceMs. */
  async stop(n: number, graceMs = 40_000): Promise<void> {
    await this.end(this.instance(n), graceMs);
    await this.save();
  }

  /** Ends one instance (graceMs 0: SIGKILL at once, else SIGTERM first) and forgets its pid; the caller saves the state file. */
  private end(i: StreamsInstance, graceMs: number): Promise<void> {
    return this.proc(i).end(graceMs);
  }

  async pause(n: number): Promise<void> {
    const i = this.instance(n);
    if (!this.proc(i).signal('SIGSTOP')) throw new EosError(ErrorCodes.HARNESS_FAILED, `Streams instance ${n} is not running`);
  }

  async resume(n: number): Promise<void> {
    const p = this.proc(this.instance(n));
    const status = p.status();
    if (status !== 'paused') throw new EosError(ErrorCodes.HARNESS_FAILED, `Streams instance ${n} is not paused (${status})`);
    p.signal('SIGCONT');
  }

  /** SIGKILL every instance the state file names, by identity (the exit hook; record: write the state file). */
  killAllSync(opts: { record?: boolean } = {}): void {
    this.refreshSync();
    killAllSync(
      this.state.instances.map((i) => this.proc(i)),
      opts.record ? { file: join(this.state.dir, STATE_FILE), state: this.state } : undefined,
    );
  }

  /** Processes naming this run's directory (ours or not): none may be left after stopAll. */
  survivors(): { pid: number; cmdline: string }[] {
    return processesReferencing([`${this.state.dir}/`]);
  }

  /**
   * Stops every instance (SIGTERM, SIGKILL after graceMs; graceMs 0: SIGKILL at once), then checks
   * that no process naming the run directory is left (throws naming them). remove: also delete the
   * run directory (state directories and logs).
   */
  async stopAll(opts: { graceMs?: number; remove?: boolean } = {}): Promise<void> {
    this.refreshSync();
    const grace = opts.graceMs ?? 40_000;
    // In parallel, one write of the state file after (concurrent writes of one file could interleave).
    const ended = await Promise.allSettled(this.state.instances.map((i) => this.end(i, grace)));
    await this.save();
    const failed = ended.find((r) => r.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    this.disarmExit?.();
    this.disarmExit = undefined;
    const left = this.survivors();
    if (left.length) throw new EosError(ErrorCodes.HARNESS_FAILED, `Streams run in ${this.state.dir}: its instances are stopped, but ${describeSurvivors(left)} still names its directory and is not in its record; directory kept, stop it by pid`);
    if (opts.remove) await rm(this.state.dir, { recursive: true, force: true });
  }
}
