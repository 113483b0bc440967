// What the benchmarks in bench/ share: paths, arguments, the log, the processes they start (tracked
// by pid and stopped on exit, SIGINT, SIGTERM and failure), the local cluster's lifetime, CPU from
// /proc, statistics and formatting, versions of the tools, the CPU profile summary, and the layout
// of bench/RESULTS.md (bench/pipeline.bench.ts rewrites the file but keeps its notes block; the
// other benchmarks write their own sections inside that block).
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { LocalCluster, type ClusterOptions } from '../harness/localcluster/cluster.js';
import { DEFAULT_KAFKA_VERSION, ensureKafka } from '../harness/localcluster/kafka-dist.js';
import { EndOffsetReader } from '../src/kafka/offsets.js';
import { pollUntil } from '../src/runtime/poll-until.js';
import { kafkaFor } from '../test/harness/index.js';
import { atExit, TrackedProcess } from '../src/runtime/process.js';

export const execFileP = promisify(execFile);
export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(BENCH_DIR, '..');

// ---------------------------------------------------------------- arguments and output

/** Prints the header comment of the benchmark at `scriptUrl` (its import.meta.url) as its usage, and exits. */
export function printUsageAndExit(scriptUrl: string): never {
  process.stdout.write(readFileSync(fileURLToPath(scriptUrl), 'utf8').split('\nimport ')[0]! + '\n');
  process.exit(0);
}

/** An integer option of at least `min`. */
export function intOption(value: string | undefined, flag: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`${flag}: expected an integer >= ${min}`);
  return n;
}

/** A comma-separated option (e.g. --skip) as a set. */
export function listOption(value: string | undefined): Set<string> {
  return new Set((value ?? '').split(',').filter(Boolean));
}

/** A fresh directory for this run's artifacts: bench/out/<prefix><timestamp> (git-ignored). */
export function makeOutDir(prefix = ''): string {
  const dir = join(BENCH_DIR, 'out', `${prefix}${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A path as RESULTS.md names it: relative to the repository. */
export function fromRoot(path: string): string {
  return path.replace(`${ROOT}/`, '');
}

export function log(msg: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 23)}] ${msg}\n`);
}

// ---------------------------------------------------------------- processes (tracked by pid)

/**
 * Starts a benchmark's process: a TrackedProcess (src/runtime/process.ts) with its output piped,
 * killed at exit (its own exit hook, src/runtime/process.ts) and under a parent-death signal.
 */
export function startProcess(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: 'pipe'; discardStdout?: boolean; group?: boolean; pipe?: true | 'raw' } = {}): TrackedProcess {
  return TrackedProcess.spawn(cmd, args, { name: cmd, pipe: true, dieWithParent: true, ...opts, cwd: opts.cwd ?? ROOT, env: opts.env ?? process.env });
}

/** Sends `sig` to a process of ours (none once it is gone, or its pid another process's). */
export function killByPid(p: TrackedProcess, sig: NodeJS.Signals = 'SIGKILL'): void {
  p.signal(sig);
}

/** SIGTERM (graceful, needed for --cpu-prof), SIGKILL after graceMs; resolves once it has exited. */
export async function stopProcess(p: TrackedProcess, graceMs = 30_000): Promise<void> {
  await p.end(graceMs);
  await p.exited;
}

/**
 * Polls `probe` (pollUntil) every `intervalMs` until it holds; fails at once when `child` exits,
 * with `tail()` (its output) in the error, and after `timeoutMs` naming `what`. A probe that
 * throws (the daemon not listening yet) is asked again.
 */
export async function untilChild(what: string, child: ChildProcess, probe: () => Promise<boolean>, opts: { timeoutMs: number; intervalMs: number; tail: () => string }): Promise<void> {
  const answer = await pollUntil(what, async () => (child.exitCode !== null || child.signalCode !== null ? 'exited' : probe()), { timeoutMs: opts.timeoutMs, intervalMs: opts.intervalMs });
  if (answer === 'exited') throw new Error(`exited (${child.exitCode ?? child.signalCode}) before ${what}:\n${opts.tail()}`);
}

let clusterRef: LocalCluster | undefined;

/**
 * Kills the brokers of the running cluster (see withCluster) by pid and removes the cluster's
 * temporary directory; the benchmark's own processes are killed by their exit hooks.
 */
export function emergencyStop(): void {
  if (clusterRef) {
    clusterRef.killAllSync();
    // After a failure or Ctrl-C the process exits before cluster.down() could remove it.
    rmSync(clusterRef.state.dir, { recursive: true, force: true, maxRetries: 5 });
  }
}

/** emergencyStop on exit, SIGINT and SIGTERM (these then exit with 130). */
export function installEmergencyStop(): void {
  atExit(emergencyStop);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      log(`${sig}: stopping every process started by the benchmark`);
      emergencyStop();
      process.exit(130);
    });
  }
}

/** Runs the benchmark's main: exit 0 when it resolves; when it fails, logs the error, stops everything and exits 1. */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      log(`FAILED: ${(err as Error).stack ?? String(err)}`);
      emergencyStop();
      process.exit(1);
    },
  );
}

// ---------------------------------------------------------------- Kafka and the local cluster

/** The Kafka version to run (EOSWATCH_KAFKA_VERSION or the default) and its libs directory, downloaded if needed. */
export async function kafkaDist(): Promise<{ version: string; libs: string }> {
  const version = process.env.EOSWATCH_KAFKA_VERSION ?? DEFAULT_KAFKA_VERSION;
  const libs = await ensureKafka(version);
  return { version, libs };
}

/** A log4j2 configuration for the Java tools (warnings and errors to stderr), written into `dir`; its path. */
export function writeLog4j(dir: string): string {
  const file = join(dir, 'log4j2.properties');
  writeFileSync(
    file,
    'status = error\nappender.out.type = Console\nappender.out.name = OUT\nappender.out.target = SYSTEM_ERR\nappender.out.layout.type = PatternLayout\nappender.out.layout.pattern = %p %m (%c)%n\nrootLogger.level = WARN\nrootLogger.appenderRef.out.ref = OUT\n',
  );
  return file;
}

/**
 * Starts a local cluster, runs `body` with it, and always stops it: every tracked process and the
 * brokers are killed by pid (also by emergencyStop while it runs), then cluster.down().
 */
export async function withCluster<T>(opts: ClusterOptions, body: (cluster: LocalCluster) => Promise<T>): Promise<T> {
  const c0 = Date.now();
  const cluster = await LocalCluster.start(opts);
  clusterRef = cluster;
  try {
    log(`cluster up in ${((Date.now() - c0) / 1000).toFixed(1)} s: ${cluster.bootstrapServers} (Kafka ${cluster.version})`);
    return await body(cluster);
  } finally {
    emergencyStop();
    await cluster.down().catch((err: unknown) => log(`cluster down: ${(err as Error).message}`));
    clusterRef = undefined;
  }
}

/**
 * Sum of a topic's high watermarks (transactional topics count open and aborted records and
 * commit markers too). Read with EndOffsetReader: kafkajs' admin.fetchTopicOffsets asks ListOffsets
 * with the protocol's default isolation level, READ_COMMITTED, and its `high` is the last stable
 * offset, short of the high watermark while a transaction is open.
 */
export async function sumHighWatermarks(brokers: string[], topic: string): Promise<number> {
  const reader = new EndOffsetReader(kafkaFor(brokers));
  try {
    return (await reader.read(topic)).reduce((a, o) => a + Number(o.high), 0);
  } finally {
    await reader.close();
  }
}

// ---------------------------------------------------------------- the compiled CLI

/**
 * eoswatch as the installed CLI runs it (bin/eoswatch.js → dist/, no tsx): the src/ of the checkout
 * in `srcRoot` compiled by tsc into <dir>/dist, next to a copy of its package.json and a link to its
 * config/ (dist/ finds both one level up, as it does in the package). `dir` must lie inside this
 * repository so that node_modules resolves. The entry to run with `node`, or undefined when the
 * build fails (the failure is logged).
 */
export async function buildCompiled(srcRoot: string, dir: string): Promise<string | undefined> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), readFileSync(join(srcRoot, 'package.json')));
  symlinkSync(join(srcRoot, 'config'), join(dir, 'config'));
  try {
    await execFileP(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(srcRoot, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')], { cwd: srcRoot, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: string; message: string };
    log(`tsc build of ${fromRoot(srcRoot) || '.'} failed: ${(e.stdout ?? e.message).slice(0, 2000)}`);
    return undefined;
  }
  const entry = join(dir, 'eoswatch.mjs');
  // bin/eoswatch.js, pointed at this build.
  writeFileSync(entry, "const { main } = await import('./dist/cli.js');\nprocess.exit(await main(process.argv.slice(2)));\n");
  return entry;
}

// ---------------------------------------------------------------- CPU accounting (/proc)

const CLK_TCK = 100; // getconf CLK_TCK on Linux

/** [own utime+stime, reaped children's cutime+cstime] of a process in seconds, from /proc. */
export function procCpu(pid: number | 'self'): [number, number] {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields 14-17 of stat(5), counted from the state field (3) here
    return [(Number(f[11]) + Number(f[12])) / CLK_TCK, (Number(f[13]) + Number(f[14])) / CLK_TCK];
  } catch {
    return [0, 0];
  }
}

/** A kB field of /proc/<pid>/status (VmRSS, VmHWM, ...); 0 when the process is gone. */
export function procStatusKb(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** CPU seconds the cluster's brokers have used so far. */
function brokersCpu(cluster: LocalCluster): number {
  return Object.values(cluster.pids()).reduce<number>((a, pid) => a + (pid ? procCpu(pid)[0] : 0), 0);
}

/**
 * CPU seconds used from now until the returned function is called by the processes under test
 * (children of this process that exited in between: their CPU is added to our cutime/cstime when
 * reaped) and by the brokers.
 */
export function cpuMeter(cluster: LocalCluster): () => { pipeline: number; brokers: number } {
  const c0 = procCpu('self')[1];
  const b0 = brokersCpu(cluster);
  return () => ({ pipeline: procCpu('self')[1] - c0, brokers: brokersCpu(cluster) - b0 });
}

// ---------------------------------------------------------------- statistics and formatting

/** Sample quantile, linear interpolation between closest ranks (R type 7 / numpy default); NaN for no samples. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return s[lo]! + (s[hi]! - s[lo]!) * (h - lo);
}

/** The median of the finite values. */
export function median(xs: number[]): number {
  return quantile(xs.filter((x) => Number.isFinite(x)), 0.5);
}

export const fmt = (x: number, d = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }) : 'n/a');

export function mdTable(head: string[], rows: (string | number)[][]): string {
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

// ---------------------------------------------------------------- machine and versions

export function machine(): { nproc: number; model: string; memGiB: number } {
  const cpu = cpus();
  return { nproc: cpu.length, model: cpu[0]?.model ?? 'unknown', memGiB: totalmem() / 2 ** 30 };
}

/** The row of the machine table with the load averages at the start and the end of the run. */
export function loadAverageRow(load0: number[], load1: number[]): [string, string] {
  return ['load average 1/5/15 min, start → end', `${load0.map((x) => x.toFixed(2)).join(' / ')} → ${load1.map((x) => x.toFixed(2)).join(' / ')}`];
}

/** The first line of `java -version`, or 'unknown'. */
export function javaVersion(): Promise<string> {
  return execFileP('java', ['-version']).then(
    (r) => r.stderr.split('\n')[0] ?? '',
    () => 'unknown',
  );
}

export function kafkajsVersion(): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules/kafkajs/package.json'), 'utf8')) as { version: string }).version;
}

/** The short commit of the checkout in `dir` ('' when git cannot tell) and whether `path` in it has uncommitted changes. */
export async function gitState(dir: string, path: string): Promise<{ rev: string; dirty: boolean }> {
  const git = (args: string[]) =>
    execFileP('git', ['-C', dir, ...args]).then(
      (r) => r.stdout.trim(),
      () => '',
    );
  const rev = await git(['rev-parse', '--short', 'HEAD']);
  const dirty = rev ? (await git(['status', '--porcelain', '--', path])) !== '' : false;
  return { rev, dirty };
}

// ---------------------------------------------------------------- CPU profile summary

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface ProfileSummary {
  /** Milliseconds of main-thread samples. */
  totalMs: number;
  /** [category, % of samples], largest first. */
  categories: [string, number][];
  /** The functions with the most self time (idle excluded). */
  top: { name: string; where: string; ms: number; pct: number }[];
  /** [file, % of samples] of the files `opts.fileOf` names, the 10 largest first. */
  files: [string, number][];
}

/**
 * Self time of a `node --cpu-prof` profile by category (`opts.category` of a frame's url and
 * function name), by function (the `opts.top` largest) and, when `opts.fileOf` names a file for a
 * frame (given its category and its path relative to the repository or node_modules), by file.
 */
export function summariseProfile(
  file: string,
  opts: { category: (url: string, fn: string) => string; top: number; fileOf?: (category: string, short: string) => string | undefined },
): ProfileSummary {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  prof.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
  let total = 0;
  const cats = new Map<string, number>();
  const fns = new Map<string, { name: string; where: string; us: number }>();
  const files = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id);
    if (!n) continue;
    total += us;
    const { functionName, url, lineNumber } = n.callFrame;
    const c = opts.category(url, functionName);
    cats.set(c, (cats.get(c) ?? 0) + us);
    const short = url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '').replace(/^node_modules\//, '');
    const f = opts.fileOf?.(c, short);
    if (f !== undefined) files.set(f, (files.get(f) ?? 0) + us);
    if (functionName === '(idle)') continue;
    const key = `${functionName}|${url}|${lineNumber}`;
    // tsx-compiled modules report line 0 for everything: the file alone then.
    const e = fns.get(key) ?? { name: functionName || '(anonymous)', where: short ? (lineNumber > 0 ? `${short}:${lineNumber + 1}` : short) : '', us: 0 };
    e.us += us;
    fns.set(key, e);
  }
  const pct = ([k, v]: [string, number]): [string, number] => [k, (100 * v) / total];
  return {
    totalMs: total / 1000,
    categories: [...cats.entries()].sort((a, b) => b[1] - a[1]).map(pct),
    top: [...fns.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, opts.top)
      .map((f) => ({ name: f.name, where: f.where, ms: f.us / 1000, pct: (100 * f.us) / total })),
    files: [...files.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10).map(pct),
  };
}

// ---------------------------------------------------------------- RESULTS.md

/** A profile summary as two tables: categories, then the top functions by self time. */
export function profileTables(s: ProfileSummary): string {
  return [
    mdTable(['where the main thread was', '% of samples'], s.categories.map(([k, v]) => [k, v.toFixed(1)])),
    '',
    mdTable(['function (self time, idle excluded)', 'where', 'ms', '%'], s.top.map((f) => [`\`${f.name}\``, f.where, fmt(f.ms), f.pct.toFixed(1)])),
  ].join('\n');
}

/** The hand-written block between `begin` and `end` in `file` (markers included), or an empty one. */
export function keptBlock(file: string, begin: string, end: string): string {
  const old = existsSync(file) ? between(readFileSync(file, 'utf8'), begin, end) : undefined;
  return old ?? `${begin}\n${end}`;
}

/** The first sentence of a results section: the command, when it ran and how long it took. */
export function generatedBy(command: string, script: string, startedAt: Date, totalS: number): string {
  return `Generated by \`${command}\` (= \`node --import tsx ${script} ...\`) on ${startedAt.toISOString()}; the whole run took ${fmt(totalS / 60, 1)} min.`;
}

/** The hand-written notes block of RESULTS.md, which bench/pipeline.bench.ts keeps when it rewrites the file. */
export const NOTES_BEGIN = '<!-- BEGIN NOTES (kept when the benchmark rewrites this file) -->';
export const NOTES_END = '<!-- END NOTES -->';

/** The notes block of `file`, markers included (an empty block when there is none). */
export function keptNotes(file: string): string {
  if (!existsSync(file)) return `${NOTES_BEGIN}\n${NOTES_END}`;
  const text = readFileSync(file, 'utf8');
  const a = text.indexOf(NOTES_BEGIN);
  const b = text.indexOf(NOTES_END);
  return a >= 0 && b > a ? text.slice(a, b + NOTES_END.length) : `${NOTES_BEGIN}\n${NOTES_END}`;
}

/** The text from marker `a` to the next marker `b`, both included; undefined when they are not there. */
export function between(text: string, a: string, b: string): string | undefined {
  const i = text.indexOf(a);
  const j = text.indexOf(b, i + a.length);
  return i >= 0 && j > i ? text.slice(i, j + b.length) : undefined;
}

/**
 * Puts a section (which starts with `begin` and ends with `end`) into the file: in place of the old
 * one, else just before the end of the notes block (so bench/pipeline.bench.ts keeps it), else at the end.
 */
export function writeSection(file: string, begin: string, end: string, section: string): void {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const old = between(text, begin, end);
  let out: string;
  if (old) out = text.replace(old, () => section);
  else if (text.includes(NOTES_END)) {
    const k = text.indexOf(NOTES_END);
    out = `${text.slice(0, k).replace(/\n*$/, '\n\n')}${section}\n${text.slice(k)}`;
  } else out = `${text.replace(/\n*$/, text ? '\n\n' : '')}${section}\n`;
  writeFileSync(file, out);
}
