// Benchmark: eoswatch's transactional pipeline against Kafka's own TransactionalMessageCopier and
// ProducerPerformance (acks=all, the ceiling), on one real local 3-node cluster, same input.
//
//   node --import tsx bench/pipeline.bench.ts [--records N] [--rounds R] [--no-warmup]
//        [--transform identity|increment] [--checkpoint-interval 1s] [--copier-txn-size N]
//        [--no-profile] [--out bench/RESULTS.md]
//        experiments: [--skip copier,eoscopy,perf] [--eos-preload FILE]
//        [--eoswatch-dir DIR]   (benchmark the eoswatch of another checkout, e.g. to compare commits)
//
// One source topic (6 partitions, RF 3) is seeded once with N JSON seed records of ~100 bytes
// (plus a 36-byte key); every run reads it from the beginning into a fresh sink topic with fresh
// group and transactional ids. After a warm-up round, rounds of eoswatch, the copier, EosCopy
// (bench/java/EosCopy.java: the copier's loop with default producer batching) and producer-perf run
// interleaved in ABBA order, and the medians are reported. A last, separate eoswatch run under
// `node --cpu-prof` gives the profile summarised in RESULTS.md, whose hand-written notes block is
// kept. Every process started here is stopped by pid, also on failure.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { stringify } from 'yaml';
import type { LocalCluster } from '../harness/localcluster/cluster.js';
import { createTopic, kafkaFor, uniqueName } from '../test/harness/index.js';
import { checkSink, produceSeed, sourceRecords, type SentRecord } from '../test/harness/seed.js';
import { parsePrometheusText, sampleValue, type Parsed } from '../test/harness/promtext.js';
import ts from 'typescript';
import { BENCH_DIR, ROOT, buildCompiled, cpuMeter, execFileP, fmt, fromRoot, generatedBy, gitState, installEmergencyStop, intOption, javaVersion, kafkaDist, kafkajsVersion, keptNotes, killByPid, listOption, loadAverageRow, log, machine, makeOutDir, mdTable, median, printUsageAndExit, quantile, runMain, startProcess, stopProcess, summariseProfile, untilChild, withCluster, writeLog4j } from './common.js';
import type { TrackedProcess } from '../src/runtime/process.js';

const PARTITIONS = 6;
const RF = 3;
const VALUE_BYTES = 100;

// ---------------------------------------------------------------- arguments

const { values: argv } = parseArgs({
  options: {
    records: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '2' },
    transform: { type: 'string', default: 'identity' },
    'checkpoint-interval': { type: 'string', default: '1s' },
    'copier-txn-size': { type: 'string' },
    'no-warmup': { type: 'boolean', default: false },
    skip: { type: 'string', default: '' },
    'eos-preload': { type: 'string', multiple: true, default: [] },
    'no-profile': { type: 'boolean', default: false },
    'eoswatch-dir': { type: 'string', default: ROOT },
    out: { type: 'string', default: join(BENCH_DIR, 'RESULTS.md') },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (argv.help) printUsageAndExit(import.meta.url);
const N = intOption(argv.records, '--records', PARTITIONS);
const ROUNDS = intOption(argv.rounds, '--rounds', 1);
const WARMUP = !argv['no-warmup'];
// Runs left out (experiments): any of copier, eoscopy, perf.
const SKIP = listOption(argv.skip);
// Extra modules preloaded into the eoswatch process (experiments, e.g. bench/experiments/*.ts).
const EOS_PRELOADS = (argv['eos-preload'] ?? []).map((f) => pathToFileURL(resolve(f)).href);
const TRANSFORM = argv.transform!;
const CHECKPOINT_INTERVAL = argv['checkpoint-interval']!;
// The eoswatch checkout whose `run` is benchmarked, compiled as installed (default: this one; another one to compare commits).
const EOS_DIR = resolve(argv['eoswatch-dir']!);
const FIXED_COPIER_TXN = argv['copier-txn-size'] === undefined ? undefined : Number(argv['copier-txn-size']);
if (!['identity', 'increment'].includes(TRANSFORM)) throw new Error('--transform: identity or increment');
if (FIXED_COPIER_TXN !== undefined && !(Number.isInteger(FIXED_COPIER_TXN) && FIXED_COPIER_TXN > 0)) throw new Error('--copier-txn-size: a positive integer');

const OUT_DIR = makeOutDir();
installEmergencyStop();

// ---------------------------------------------------------------- processes (TrackedProcesses: each killed by its own exit hook)

interface Proc {
  proc: TrackedProcess;
  child: ChildProcess;
  /** Every line of its output (stdout and stderr), in order. */
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitLine(re: RegExp, timeoutMs: number): Promise<string>;
}

function start(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Proc {
  const proc = startProcess(cmd, args, { cwd: opts.cwd ?? ROOT, ...(opts.env ? { env: opts.env } : {}) });
  const child = proc.child!;
  const lines: string[] = [];
  const feed = (stream: NodeJS.ReadableStream | null) => {
    let buf = '';
    stream?.on('data', (d: Buffer | string) => {
      buf += d.toString();
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        lines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
  };
  feed(child.stdout);
  feed(child.stderr);
  const exited = proc.exited!.then(() => ({ code: proc.error ? -1 : child.exitCode, signal: child.signalCode }));
  const waitLine = async (re: RegExp, timeoutMs: number) => (await proc.waitFor(re, timeoutMs)).input!;
  return { proc, child, lines, exited, waitLine };
}

/** SIGTERM (graceful, needed for --cpu-prof), SIGKILL after graceMs. */
async function stop(p: Proc, graceMs = 30_000): Promise<void> {
  await stopProcess(p.proc, graceMs);
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`${what}: timed out after ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

// ---------------------------------------------------------------- statistics

/** histogram_quantile() as PromQL computes it: linear interpolation inside the bucket. */
function histogramQuantile(parsed: Parsed, name: string, q: number): number {
  const buckets = parsed.samples
    .filter((s) => s.name === `${name}_bucket`)
    .map((s) => ({ le: s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), count: s.value }))
    .sort((a, b) => a.le - b.le);
  const total = buckets[buckets.length - 1]?.count ?? 0;
  if (total === 0) return NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of buckets) {
    if (b.count >= rank) {
      if (b.le === Infinity) return prevLe;
      return prevLe + ((b.le - prevLe) * (rank - prevCount)) / Math.max(1e-12, b.count - prevCount);
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}

// ---------------------------------------------------------------- Kafka helpers

/**
 * The exactly-once check of one run: the sink read read_committed by an independent reader (a plain
 * kafkajs consumer, test/harness) must hold every source record exactly once (ids compared as a
 * multiset), with the source value + valueDelta, in its input partition and input order. Throws
 * (which ends the run and the benchmark) on any difference; returns the summary for the table.
 */
async function checkExactlyOnce(ctx: Ctx, sink: string, valueDelta: number, dir: string, extra: string[] = []): Promise<string> {
  const report = await checkSink(ctx.cluster.brokers, sink, ctx.sent, { valueDelta, timeoutMs: 120_000 });
  const { examples, stable, ...counts } = report;
  const expected = { total: ctx.sent.length, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0 };
  if (!isDeepStrictEqual(counts, expected) || extra.length) {
    throw new Error(
      `exactly-once check failed for ${sink}: ${JSON.stringify(counts)}, expected ${JSON.stringify(expected)}${extra.length ? `; ${extra.join('; ')}` : ''}\n${stable ?? ''}\n${(examples ?? []).join('\n')}\nlogs in ${dir}`,
    );
  }
  return `ok: ${fmt(counts.total)} ids once each, values and order kept (${stable ?? 'sink stable'})`;
}

async function committedSum(brokers: string[], groupId: string, topic: string): Promise<number> {
  const admin = kafkaFor(brokers).admin();
  await admin.connect();
  try {
    const parts = (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]?.partitions ?? [];
    return parts.reduce((a, p) => a + Math.max(0, Number(p.offset)), 0);
  } finally {
    await admin.disconnect();
  }
}

// ---------------------------------------------------------------- runs

/** What every transactional run reports. */
interface TxnRunResult {
  round: number;
  recordsPerSec: number;
  wallRecordsPerSec: number;
  windowMs: number;
  wallMs: number;
  /** CPU seconds of the process(es) under test and of the 3 brokers during the run. */
  cpu: { pipeline: number; brokers: number };
  /** 1-minute load average when the run started. */
  load1m?: number;
  commitMs: number[];
  p50: number;
  p99: number;
}

interface EosResult extends TxnRunResult {
  kind: 'eoswatch';
  histP50: number;
  histP99: number;
  transactions: number;
  aborted: number;
  avgTxnSize: number;
  checkpoints: number;
  exactCheck: string;
  profile?: string;
}

interface CopierResult extends TxnRunResult {
  kind: 'copier';
  variant: CopierVariant;
  txnSizeArg: number;
  transactions: number;
  commitsSeen: number;
  /** tuned only: producer.flush() before the offsets and the commit. */
  flushMs: number[];
  avgTxnSize: number;
  exactCheck: string;
}

interface PerfResult {
  kind: 'perf';
  round: number;
  cpu: { pipeline: number; brokers: number };
  /** 1-minute load average when the run started. */
  load1m?: number;
  recordsPerSec: number;
  mbPerSec: number;
  latencyP50: number;
  latencyP99: number;
  line: string;
}

interface Ctx {
  cluster: LocalCluster;
  /** eoswatch as installed: the checkout's src/ compiled by tsc (buildCompiled), and the probe as JavaScript. */
  eoswatch: { entry: string; probe: string };
  source: string;
  /** The source topic as read back read_committed: what every sink must hold exactly once. */
  sent: SentRecord[];
  records: number;
  classes: string;
  log4j: string;
}

async function runEoswatch(ctx: Ctx, round: number, profile = false): Promise<EosResult> {
  const N = ctx.records;
  const brokers = ctx.cluster.brokers;
  const name = uniqueName(`eos-r${round}${profile ? '-prof' : ''}`);
  const dir = join(OUT_DIR, name);
  mkdirSync(dir, { recursive: true });
  const sink = `${name}-sink`;
  await createTopic(brokers, sink, PARTITIONS, RF);
  await createTopic(brokers, `${sink}.dlq`, 1, RF);
  const groupId = `${name}-group`;
  const config = {
    http: { host: '127.0.0.1', port: 0 },
    log: { level: 'info' },
    shutdown: { gracePeriod: '20s' },
    kafka: { brokers },
    pipeline: {
      enabled: true,
      sourceTopic: ctx.source,
      sinkTopic: sink,
      groupId,
      transactionalIdPrefix: name,
      startFrom: 'earliest',
      transform: TRANSFORM,
      partitioning: 'input',
      checkpoint: { interval: CHECKPOINT_INTERVAL, timeout: '30s' },
    },
  };
  const cfgFile = join(dir, 'eoswatch.yaml');
  writeFileSync(cfgFile, stringify(config));
  const probeFile = join(dir, 'probe.txt');
  writeFileSync(probeFile, '');
  const nodeArgs = [
    '--import',
    pathToFileURL(ctx.eoswatch.probe).href,
    ...EOS_PRELOADS.flatMap((u) => ['--import', u]),
    ...(profile ? ['--cpu-prof', '--cpu-prof-dir', dir] : []),
    ctx.eoswatch.entry,
    'run',
    '--config',
    cfgFile,
  ];
  log(`eoswatch round ${round}${profile ? ' (profiled)' : ''}: ${sink}`);
  const meter = cpuMeter(ctx.cluster);
  const t0 = Date.now();
  const p = start('node', nodeArgs, { cwd: EOS_DIR, env: { ...process.env, EOSBENCH_PROBE_FILE: probeFile } });
  let metricsText = '';
  try {
    const urlLine = await p.waitLine(/HTTP server listening/, 60_000);
    const url = (JSON.parse(urlLine) as { url: string }).url;
    const runningLine = await p.waitLine(/"msg":"pipeline running"/, 60_000);
    const tRunning = Date.parse((JSON.parse(runningLine) as { time: string }).time);
    await untilChild(
      `eoswatch to process ${N} records`,
      p.child,
      async () => {
        metricsText = await (await fetch(`${url}/metrics`)).text();
        return (sampleValue(parsePrometheusText(metricsText), 'eos_pipeline_records_total', { direction: 'in' }) ?? 0) >= N;
      },
      { timeoutMs: Math.max(180_000, N * 2), intervalMs: 200, tail: () => p.lines.slice(-30).join('\n') },
    );
    await stop(p);
    const wallEnd = Date.now();
    const cpu = meter();
    writeFileSync(join(dir, 'eoswatch.log'), p.lines.join('\n'));
    const parsed = parsePrometheusText(metricsText);
    const probe = readFileSync(probeFile, 'utf8').split('\n').filter(Boolean);
    const commitMs = probe.filter((l) => l.startsWith('C ')).map((l) => Number(l.split(' ')[2]) * 1000);
    let cum = 0;
    let tEnd = NaN;
    for (const l of probe.filter((x) => x.startsWith('R '))) {
      const [, t, n] = l.split(' ');
      cum += Number(n);
      if (cum >= N && Number.isNaN(tEnd)) tEnd = Number(t);
    }
    const transactions = sampleValue(parsed, 'eos_transactions_total', { outcome: 'committed' }) ?? 0;
    const aborted = sampleValue(parsed, 'eos_transactions_total', { outcome: 'aborted' }) ?? 0;
    const checkpoints = sampleValue(parsed, 'eos_checkpoints_total', { outcome: 'completed' }) ?? 0;
    const committed = await committedSum(brokers, groupId, ctx.source);
    const offsetProblems = [
      ...(committed === N ? [] : [`group committed ${committed} source offsets, expected ${N}`]),
      ...(aborted === 0 ? [] : [`${aborted} transactions aborted`]),
    ];
    const exactCheck = await checkExactlyOnce(ctx, sink, TRANSFORM === 'increment' ? 1 : 0, dir, offsetProblems);
    let profilePath: string | undefined;
    if (profile) {
      const f = readdirSync(dir).find((x) => x.endsWith('.cpuprofile'));
      profilePath = f ? join(dir, f) : undefined;
    }
    const windowMs = tEnd - tRunning;
    return {
      kind: 'eoswatch',
      round,
      recordsPerSec: (N / windowMs) * 1000,
      wallRecordsPerSec: (N / (tEnd - t0)) * 1000,
      windowMs,
      wallMs: wallEnd - t0,
      cpu,
      commitMs,
      p50: quantile(commitMs, 0.5),
      p99: quantile(commitMs, 0.99),
      histP50: histogramQuantile(parsed, 'eos_kafka_transaction_commit_latency_seconds', 0.5) * 1000,
      histP99: histogramQuantile(parsed, 'eos_kafka_transaction_commit_latency_seconds', 0.99) * 1000,
      transactions,
      aborted,
      avgTxnSize: N / Math.max(1, transactions),
      checkpoints,
      exactCheck,
      ...(profilePath ? { profile: profilePath } : {}),
    };
  } finally {
    killByPid(p.proc);
    await p.exited;
    if (!existsSync(join(dir, 'eoswatch.log'))) writeFileSync(join(dir, 'eoswatch.log'), p.lines.join('\n'));
  }
}

type CopierVariant = 'tool' | 'tuned';

/**
 * One JVM per input partition. 'tool': Kafka's TransactionalMessageCopier, unchanged, under
 * CopierProbe (commit latency from its producer's txn-commit-time-ns-total). 'tuned': EosCopy, the
 * same loop with the producer's default batching and a flush before the timed commit.
 */
async function runCopier(ctx: Ctx, round: number, txnSize: number, variant: CopierVariant): Promise<CopierResult> {
  const N = ctx.records;
  const brokers = ctx.cluster.brokers;
  const name = uniqueName(`${variant === 'tool' ? 'copier' : 'eoscopy'}-r${round}`);
  const dir = join(OUT_DIR, name);
  mkdirSync(dir, { recursive: true });
  const sink = `${name}-sink`;
  await createTopic(brokers, sink, PARTITIONS, RF);
  log(`${variant === 'tool' ? 'TransactionalMessageCopier' : 'EosCopy (tuned)'} round ${round}: ${sink}, transaction size ${txnSize}, ${PARTITIONS} JVMs`);
  const meter = cpuMeter(ctx.cluster);
  const t0 = Date.now();
  const procs: Proc[] = [];
  const jvm = ['-Xms64m', '-Xmx256m', `-Dlog4j2.configurationFile=${ctx.log4j}`, '-cp', `${ctx.classes}:${ctx.cluster.state.libs}/*`];
  try {
    for (let p = 0; p < PARTITIONS; p++) {
      const args =
        variant === 'tool'
          ? [
              'CopierProbe',
              '--input-topic',
              ctx.source,
              '--input-partition',
              String(p),
              '--output-topic',
              sink,
              '--broker-list',
              ctx.cluster.bootstrapServers,
              '--transaction-size',
              String(txnSize),
              '--transactional-id',
              `${name}-${p}`,
              '--consumer-group',
              `${name}-group-${p}`,
            ]
          : ['EosCopy', ctx.cluster.bootstrapServers, ctx.source, String(p), sink, String(txnSize), `${name}-${p}`, `${name}-group-${p}`];
      procs.push(start('java', [...jvm, ...args]));
    }
    const exits = await withTimeout(Promise.all(procs.map((p) => p.exited)), Math.max(240_000, N * 3), name);
    const wallEnd = Date.now();
    const cpu = meter();
    procs.forEach((p, i) => writeFileSync(join(dir, `${variant}-${i}.log`), p.lines.join('\n')));
    const bad = exits.map((e, i) => ({ ...e, i })).filter((e) => e.code !== 0);
    if (bad.length) throw new Error(`${name}: processes failed: ${bad.map((b) => `${b.i}: ${b.code ?? b.signal}`).join(', ')}; logs in ${dir}`);
    let first = Infinity;
    let last = -Infinity;
    const commitMs: number[] = [];
    const flushMs: number[] = [];
    let transactions = 0;
    let processed = 0;
    for (const p of procs) {
      if (variant === 'tuned') {
        const ev = p.lines.map((l) => l.split(' ')).filter((f) => ['S', 'C', 'D'].includes(f[0]!));
        const s = ev.find((f) => f[0] === 'S');
        const d = ev.find((f) => f[0] === 'D');
        const cs = ev.filter((f) => f[0] === 'C');
        if (!s || !d) throw new Error(`${name}: output incomplete; logs in ${dir}`);
        first = Math.min(first, Number(s[1]));
        last = Math.max(last, cs.length ? Number(cs[cs.length - 1]![1]) : Number(d[1]));
        transactions += cs.length;
        processed += Number(d[2]);
        commitMs.push(...cs.map((f) => Number(f[2]) / 1e6));
        flushMs.push(...cs.map((f) => Number(f[4]) / 1e6));
        continue;
      }
      const status: { t: number; json: Record<string, unknown> }[] = [];
      const commits: { t: number; ns: number }[] = [];
      for (const l of p.lines) {
        const m = l.match(/^([PC]) (\d+) (.*)$/);
        if (!m) continue;
        if (m[1] === 'C') commits.push({ t: Number(m[2]), ns: Number(m[3]!.split(' ')[0]) });
        else if (m[3]!.startsWith('{')) status.push({ t: Number(m[2]), json: JSON.parse(m[3]!) as Record<string, unknown> });
      }
      const loop = status.filter((s) => s.json.stage === 'ProcessLoop');
      // Kafka 4.x prints {"stage":"ShutdownComplete"}; older versions {"shutdown_complete": id}.
      const shutdown = status.find((s) => s.json.stage === 'ShutdownComplete' || 'shutdown_complete' in s.json);
      if (!loop.length || !shutdown) throw new Error(`${name}: output incomplete; logs in ${dir}`);
      // The status line is formatted before the probe prints it: its own time marks "ready".
      first = Math.min(first, loop[0]!.t);
      // One transaction per increase of totalProcessed (the last one shows only in the shutdown line).
      const totals = new Set<number>([...loop.map((s) => Number(s.json.totalProcessed)), Number(shutdown.json.totalProcessed)]);
      totals.delete(0);
      transactions += totals.size;
      processed += Number(shutdown.json.totalProcessed);
      commitMs.push(...commits.map((c) => c.ns / 1e6));
      // The last commit ends the copy; without its C line (MBean gone too soon) the shutdown line bounds it.
      last = Math.max(last, commits.length === totals.size ? commits[commits.length - 1]!.t : shutdown.t);
    }
    // The copiers copy values unchanged.
    const exactCheck = await checkExactlyOnce(ctx, sink, 0, dir, processed === N ? [] : [`copied ${processed}, expected ${N}`]);
    const windowMs = last - first;
    return {
      kind: 'copier',
      variant,
      round,
      txnSizeArg: txnSize,
      recordsPerSec: (N / windowMs) * 1000,
      wallRecordsPerSec: (N / (last - t0)) * 1000,
      windowMs,
      wallMs: wallEnd - t0,
      cpu,
      commitMs,
      flushMs,
      p50: quantile(commitMs, 0.5),
      p99: quantile(commitMs, 0.99),
      transactions,
      commitsSeen: commitMs.length,
      avgTxnSize: N / Math.max(1, transactions),
      exactCheck,
    };
  } finally {
    for (const p of procs) killByPid(p.proc);
    await Promise.all(procs.map((p) => p.exited));
  }
}

async function runPerf(ctx: Ctx, round: number, recordSize: number): Promise<PerfResult> {
  const N = ctx.records;
  const brokers = ctx.cluster.brokers;
  const topic = uniqueName(`perf-r${round}`);
  await createTopic(brokers, topic, PARTITIONS, RF);
  log(`producer-perf round ${round}: ${topic}, ${N} x ${recordSize} B, acks=all`);
  const meter = cpuMeter(ctx.cluster);
  const p = start('java', [
    '-Xms64m',
    '-Xmx512m',
    `-Dlog4j2.configurationFile=${ctx.log4j}`,
    '-cp',
    `${ctx.cluster.state.libs}/*`,
    'org.apache.kafka.tools.ProducerPerformance',
    '--bootstrap-server',
    ctx.cluster.bootstrapServers,
    '--topic',
    topic,
    '--num-records',
    String(N),
    '--record-size',
    String(recordSize),
    '--throughput',
    '-1',
    '--command-property',
    'acks=all',
  ]);
  try {
    const e = await withTimeout(p.exited, Math.max(120_000, N), 'producer-perf');
    const cpu = meter();
    writeFileSync(join(OUT_DIR, `${topic}.log`), p.lines.join('\n'));
    const re = /^(\d+) records sent, ([\d.]+) records\/sec \(([\d.]+) MB\/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th/;
    const line = p.lines.find((l) => re.test(l));
    if (e.code !== 0 || !line) throw new Error(`ProducerPerformance failed (${e.code}):\n${p.lines.slice(-20).join('\n')}`);
    const m = line.match(re)!;
    return { kind: 'perf', round, cpu, recordsPerSec: Number(m[2]), mbPerSec: Number(m[3]), latencyP50: Number(m[6]), latencyP99: Number(m[8]), line };
  } finally {
    killByPid(p.proc);
    await p.exited;
  }
}

// ---------------------------------------------------------------- CPU profile summary

function category(url: string, fn: string): string {
  if (fn === '(idle)') return 'idle (waiting for I/O)';
  if (fn === '(garbage collector)') return 'garbage collector';
  if (fn === '(program)') return 'V8/native (program)';
  if (url.includes('node_modules/kafkajs/')) return 'kafkajs';
  if (url.includes('node_modules/pino') || url.includes('node_modules/thread-stream') || url.includes('node_modules/sonic-boom')) return 'pino (logging)';
  if (url.includes('node_modules/prom-client')) return 'prom-client';
  if (url.includes('node_modules/tsx') || url.includes('node_modules/esbuild')) return 'tsx/esbuild (start-up)';
  if (url.includes('node_modules/')) return 'other node_modules';
  if (url.includes('/src/') || url.includes('/compiled/dist/')) return 'eoswatch src/ (compiled)';
  if (url.includes('eos-probe')) return 'bench probe';
  if (url.startsWith('node:') || url === '') return 'node core / builtins';
  return 'other';
}

// ---------------------------------------------------------------- environment

async function versions(libs: string, bootstrap: string): Promise<Record<string, string>> {
  const java = await javaVersion();
  const kafkajs = kafkajsVersion();
  let txnVersion = 'unknown';
  try {
    const r = await execFileP('java', ['-cp', `${libs}/*`, 'org.apache.kafka.tools.FeatureCommand', '--bootstrap-server', bootstrap, 'describe']);
    const line = r.stdout.split('\n').find((l) => l.includes('transaction.version'));
    const m = line?.match(/FinalizedVersionLevel:\s*(\d+)/);
    if (m) txnVersion = m[1]!;
  } catch {
    /* left unknown */
  }
  // Which eoswatch was measured: the checkout's commit, and whether src/ had uncommitted changes.
  const { rev, dirty } = await gitState(EOS_DIR, 'src');
  const eoswatch = rev ? `${EOS_DIR === ROOT ? 'this checkout' : EOS_DIR} at ${rev}${dirty ? ', with uncommitted changes in src/' : ''}` : EOS_DIR;
  return { node: process.version, java, kafkajs, txnVersion, eoswatch };
}

// ---------------------------------------------------------------- main

/**
 * eoswatch as the installed CLI runs it: EOS_DIR's src/ compiled by tsc (bench/common.ts
 * buildCompiled), and bench/eos-probe.ts transpiled to JavaScript beside it (no tsx in the process).
 */
async function compileEoswatch(): Promise<{ entry: string; probe: string }> {
  const dir = join(OUT_DIR, 'compiled');
  const entry = await buildCompiled(EOS_DIR, dir);
  if (!entry) throw new Error(`the tsc build of ${EOS_DIR} failed (see above): the pipeline is measured as the installed CLI runs it`);
  const probe = join(dir, 'eos-probe.mjs');
  const source = readFileSync(join(BENCH_DIR, 'eos-probe.ts'), 'utf8');
  const js = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } }).outputText;
  writeFileSync(probe, js);
  return { entry, probe };
}

async function seedTopic(cluster: LocalCluster, records: number, label: string): Promise<{ source: string; ms: number; valueAvg: number }> {
  const source = uniqueName(`bench-${label}`);
  await createTopic(cluster.brokers, source, PARTITIONS, RF);
  // Seed records {"id","ts","value","pad"}: the value padded to ~100 bytes, the key a 36-byte uuid.
  const base = JSON.stringify({ id: '00000000-0000-0000-0000-000000000000', ts: Date.now(), value: 100000, pad: '' }).length;
  const pad = 'x'.repeat(Math.max(0, VALUE_BYTES - base));
  let bytes = 0;
  for (let v = 0; v < records; v++) bytes += base + pad.length - (6 - Math.min(6, String(v).length));
  log(`seeding ${source} with ${records} records (value ~${(bytes / records).toFixed(1)} B + 36 B key)`);
  const s0 = Date.now();
  await produceSeed(cluster.brokers, source, PARTITIONS, records, { extra: { pad }, batch: 5000 });
  return { source, ms: Date.now() - s0, valueAvg: bytes / records };
}

interface Round {
  eos: EosResult;
  tool?: CopierResult;
  tuned?: CopierResult;
  perf?: PerfResult;
  /** The order the runs of this round ran in. */
  order: string[];
}

type RunKind = 'eoswatch' | 'copier' | 'eoscopy' | 'perf';
// eoswatch and producer-perf side by side in every round: each round is a pair of the two.
const FORWARD: RunKind[] = ['eoswatch', 'perf', 'eoscopy', 'copier'];

/**
 * One round. Odd rounds run eoswatch → producer-perf → EosCopy → copier, even rounds the reverse
 * (an ABBA order): the brokers keep getting faster over the first minutes (JIT) and other work on
 * the machine comes and goes, and with both orders every run gets the same average position; eoswatch
 * and producer-perf always run one right after the other (a pair).
 * The copiers' transaction size is eoswatch's average of this round, or of the last one before.
 */
async function runRound(ctx: Ctx, r: number, perfRecordSize: number, skip: Set<string>, state: { txn: number }): Promise<Round> {
  const order = (r > 0 && r % 2 === 0 ? [...FORWARD].reverse() : FORWARD).filter((k) => k === 'eoswatch' || !skip.has(k));
  const out: Partial<Round> = { order };
  const cpuText = (c: { pipeline: number; brokers: number }) => `CPU ${c.pipeline.toFixed(1)} s + brokers ${c.brokers.toFixed(1)} s`;
  const txnSize = () => FIXED_COPIER_TXN ?? (state.txn || 5000);
  for (const kind of order) {
    const l = loadavg()[0]!;
    if (kind === 'eoswatch') {
      const e = (out.eos = Object.assign(await runEoswatch(ctx, r), { load1m: l }));
      // Copier transactions as large as what eoswatch committed per partition per checkpoint.
      state.txn = Math.max(1, Math.round(e.avgTxnSize));
      log(`  eoswatch: ${fmt(e.recordsPerSec)} rec/s, commit p50 ${fmt(e.p50, 1)} ms p99 ${fmt(e.p99, 1)} ms, ${e.transactions} txns (avg ${fmt(e.avgTxnSize)}), ${cpuText(e.cpu)}, ${e.exactCheck}`);
    } else if (kind === 'copier') {
      const c = (out.tool = Object.assign(await runCopier(ctx, r, txnSize(), 'tool'), { load1m: l }));
      log(`  copier:   ${fmt(c.recordsPerSec)} rec/s, commit p50 ${fmt(c.p50, 1)} ms p99 ${fmt(c.p99, 1)} ms, ${c.transactions} txns (avg ${fmt(c.avgTxnSize)}), ${c.commitsSeen} samples, ${cpuText(c.cpu)}, ${c.exactCheck}`);
    } else if (kind === 'eoscopy') {
      const t = (out.tuned = Object.assign(await runCopier(ctx, r, txnSize(), 'tuned'), { load1m: l }));
      log(`  EosCopy:  ${fmt(t.recordsPerSec)} rec/s, commit p50 ${fmt(t.p50, 1)} ms p99 ${fmt(t.p99, 1)} ms, ${t.transactions} txns (avg ${fmt(t.avgTxnSize)}), ${cpuText(t.cpu)}, ${t.exactCheck}`);
    } else {
      const p = (out.perf = Object.assign(await runPerf(ctx, r, perfRecordSize), { load1m: l }));
      log(`  perf:     ${fmt(p.recordsPerSec)} rec/s, ${cpuText(p.cpu)}`);
    }
  }
  return out as Round;
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const load0 = loadavg();
  log(`records ${N}, rounds ${ROUNDS}, warm-up ${WARMUP ? 'yes' : 'no'}, transform ${TRANSFORM}, checkpoint ${CHECKPOINT_INTERVAL}; artifacts in ${OUT_DIR}`);
  // The Java probes, compiled against this Kafka's jars before the cluster starts.
  const { version, libs } = await kafkaDist();
  const classes = join(OUT_DIR, 'classes');
  mkdirSync(classes, { recursive: true });
  await execFileP('javac', ['-nowarn', '-cp', `${libs}/*`, '-d', classes, join(BENCH_DIR, 'java', 'CopierProbe.java'), join(BENCH_DIR, 'java', 'EosCopy.java')]);
  const log4j = writeLog4j(OUT_DIR);
  const eoswatch = await compileEoswatch();
  const { env, seed, rounds, warm, prof } = await withCluster({ nodes: 3, version }, async (cluster) => {
    const env: Record<string, string> = { ...(await versions(cluster.state.libs, cluster.bootstrapServers)), kafka: cluster.version };
    const seed = await seedTopic(cluster, N, 'source');
    const perfRecordSize = Math.round(seed.valueAvg + 36);
    const sent = await sourceRecords(cluster.brokers, seed.source);
    if (sent.length !== N) throw new Error(`${seed.source} holds ${sent.length} records, expected ${N}`);
    const ctx: Ctx = { cluster, eoswatch, source: seed.source, sent, records: N, classes, log4j };
    const state = { txn: 0 };
    const rounds: Round[] = [];
    let warm: Round | undefined;
    let prof: EosResult | undefined;
    if (WARMUP) {
      // Fresh brokers run interpreted code for a while (their CPU per record keeps falling over the
      // first minutes): one round of eoswatch, EosCopy and producer-perf on the same input first,
      // not reported. Kafka's copier is left out: at ~2k records/s it would take minutes.
      log('warm-up round (not counted)');
      warm = await runRound(ctx, 0, perfRecordSize, new Set(['copier']), state);
    }
    for (let r = 1; r <= ROUNDS; r++) {
      log(`round ${r} of ${ROUNDS}`);
      rounds.push(await runRound(ctx, r, perfRecordSize, SKIP, state));
    }
    if (!argv['no-profile']) {
      prof = await runEoswatch(ctx, ROUNDS + 1, true);
      log(`  eoswatch (profiled): ${fmt(prof.recordsPerSec)} rec/s; profile ${prof.profile ?? 'missing'}`);
    }
    return { env, seed, rounds, warm, prof };
  });
  const load1 = loadavg();
  const totalS = (Date.now() - startedAt.getTime()) / 1000;
  report({ startedAt, load0, load1, totalS, env, seed, rounds, warm, prof });
}

// ---------------------------------------------------------------- RESULTS.md

// The file is rewritten but for its notes block (keptNotes, common.ts), where the other benchmarks write their sections.

function report(r: {
  startedAt: Date;
  load0: number[];
  load1: number[];
  totalS: number;
  env: Record<string, string>;
  seed: { source: string; ms: number; valueAvg: number };
  rounds: Round[];
  warm: Round | undefined;
  prof: EosResult | undefined;
}): void {
  const { rounds } = r;
  const eos = rounds.map((x) => x.eos);
  const tool = rounds.flatMap((x) => (x.tool ? [x.tool] : []));
  const tuned = rounds.flatMap((x) => (x.tuned ? [x.tuned] : []));
  const perf = rounds.flatMap((x) => (x.perf ? [x.perf] : []));
  type Row = { tput: number; wall: number; p50: number; p99: number; txn: number; cpu: string };
  const us = (x: { cpu: { pipeline: number; brokers: number } }) => [(x.cpu.pipeline / N) * 1e6, (x.cpu.brokers / N) * 1e6] as const;
  const cpuMed = (xs: { cpu: { pipeline: number; brokers: number } }[]) =>
    xs.length ? `${fmt(median(xs.map((x) => us(x)[0])))} / ${fmt(median(xs.map((x) => us(x)[1])))}` : 'n/a';
  const medOf = (xs: (EosResult | CopierResult)[]): Row => ({
    cpu: cpuMed(xs),
    tput: median(xs.map((x) => x.recordsPerSec)),
    wall: median(xs.map((x) => x.wallRecordsPerSec)),
    p50: median(xs.map((x) => x.p50)),
    p99: median(xs.map((x) => x.p99)),
    txn: median(xs.map((x) => x.avgTxnSize)),
  });
  const mE = medOf(eos);
  const mC = medOf(tool);
  const mT = tuned.length ? medOf(tuned) : undefined;
  const mP = median(perf.map((p) => p.recordsPerSec));
  const tputRatio = mE.tput / mC.tput;
  const p99Ratio = mE.p99 / mC.p99;
  const ratio = (x: number) => (Number.isFinite(x) ? (x >= 0.1 ? x.toFixed(2) : x.toPrecision(2)) : 'n/a');
  const cpu = machine();
  const L: string[] = [];
  const line = (s = '') => L.push(s);
  const recordBytes = (r.seed.valueAvg + 36).toFixed(0);
  line('# Pipeline benchmark: eoswatch vs Kafka TransactionalMessageCopier vs ProducerPerformance');
  line();
  line(
    generatedBy(
      `npm run bench:pipeline -- --records ${N} --rounds ${ROUNDS}${WARMUP ? '' : ' --no-warmup'}${TRANSFORM !== 'identity' ? ` --transform ${TRANSFORM}` : ''}${CHECKPOINT_INTERVAL !== '1s' ? ` --checkpoint-interval ${CHECKPOINT_INTERVAL}` : ''}${SKIP.size ? ` --skip ${[...SKIP].join(',')}` : ''}${(argv['eos-preload'] ?? []).map((f) => ` --eos-preload ${f}`).join('')}${FIXED_COPIER_TXN ? ` --copier-txn-size ${FIXED_COPIER_TXN}` : ''}`,
      'bench/pipeline.bench.ts',
      r.startedAt,
      r.totalS,
    ),
  );
  line();
  line('## Machine and versions');
  line();
  line(
    mdTable(
      ['what', 'value'],
      [
        ['CPU', `nproc ${cpu.nproc}: ${cpu.model}`],
        ['memory', `${cpu.memGiB.toFixed(1)} GiB`],
        loadAverageRow(r.load0, r.load1),
        ['Node', r.env.node ?? ''],
        ['Java', r.env.java ?? ''],
        ['Kafka (brokers, tools, Java clients)', `${r.env.kafka ?? ''}: 3 KRaft broker+controller nodes on loopback (harness/localcluster), heap 512m each, min.insync.replicas 2`],
        ['transaction.version finalized (2 = KIP-890 transactions v2)', r.env.txnVersion ?? ''],
        ['kafkajs', r.env.kafkajs ?? ''],
        ['eoswatch measured', r.env.eoswatch ?? ''],
      ],
    ),
  );
  line();
  line('All processes (3 brokers, the pipeline under test, the benchmark) share the 2 cores; other work may run on this machine at the same time, which is why the runs are interleaved and the load average is recorded with every run.');
  line();
  line('## Setup');
  line();
  line(`- **Input**: ${N.toLocaleString('en-US')} records seeded once (in ${(r.seed.ms / 1000).toFixed(1)} s, kafkajs idempotent producer) into one source topic with ${PARTITIONS} partitions, RF ${RF}; JSON seed records \`{"id","ts","value","pad"}\`, value ${r.seed.valueAvg.toFixed(1)} B on average plus a 36-byte key (${recordBytes} B per record). Every run reads this same topic from offset 0, read_committed, into a fresh sink topic (${PARTITIONS} partitions, RF ${RF}) with fresh group and transactional ids; output partition = input partition everywhere.`);
  line(`- **eoswatch**: one \`eoswatch run\` process compiled by tsc as the installed CLI runs it (\`node <out>/compiled/eoswatch.mjs run\`: bin/eoswatch.js pointed at the build, no tsx), transform \`${TRANSFORM}\`, EXACTLY_ONCE, checkpoint every ${CHECKPOINT_INTERVAL} (one transaction per input partition per checkpoint, offsets inside it), log level info.`);
  line(`- **copier**: Kafka's \`org.apache.kafka.tools.TransactionalMessageCopier\` (kafka-tools ${r.env.kafka ?? ''}), unchanged, one JVM per input partition, \`--transaction-size\` = eoswatch's average transaction size in the same round. It hard-codes its producer's \`batch.size=512\` (to force many in-flight requests per transaction in Kafka's system tests), so every produce request carries ~3 records.`);
  if (mT)
    line(`- **EosCopy** (extra, not asked for): \`bench/java/EosCopy.java\`, the copier's loop (one JVM per partition, one transaction per poll of the same size) with the Java producer's default batching (batch.size 16384, linger.ms 5) and a \`flush()\` before the offsets, so its timed \`commitTransaction()\` is EndTxn only, the same span eoswatch times. It shows what the copier's design does without its test-only batch size.`);
  line(`- **producer-perf**: \`org.apache.kafka.tools.ProducerPerformance --num-records ${N} --record-size ${recordBytes} --throughput -1 --command-property acks=all\` into a fresh topic of the same layout: the ceiling for just writing the same number of records of the same size (no reading, no transactions).`);
  line(
    `- **Order**: ${r.warm ? `a warm-up round (${r.warm.order.join(' → ')}) on the same input, not counted: fresh brokers run interpreted code for a while and their CPU per record keeps falling over the first minutes (see the CPU column below); then ` : ''}` +
      `${ROUNDS} round${ROUNDS > 1 ? 's' : ''} in ABBA order (odd rounds ${FORWARD.filter((k) => k === 'eoswatch' || !SKIP.has(k)).join(' → ')}, even rounds the reverse), so that this drift and background load hit every pipeline alike on average. ` +
      `Tables show the **median over rounds** (with 2 rounds, the mean of the two).`,
  );
  line();
  line('## Results (median over rounds)');
  line();
  line(
    mdTable(
      ['', 'records/s', 'records/s incl. process start', 'commit p50 ms', 'commit p99 ms', 'avg records per transaction', 'CPU µs per record: under test / brokers'],
      [
        ['**eoswatch**', `**${fmt(mE.tput)}**`, fmt(mE.wall), `**${fmt(mE.p50, 1)}**`, `**${fmt(mE.p99, 1)}**`, fmt(mE.txn), mE.cpu],
        ...(tool.length ? [['**TransactionalMessageCopier** ×6', `**${fmt(mC.tput)}**`, fmt(mC.wall), `**${fmt(mC.p50, 1)}**`, `**${fmt(mC.p99, 1)}**`, fmt(mC.txn), mC.cpu]] : []),
        ...(mT ? [['EosCopy ×6 (copier loop, default batching)', fmt(mT.tput), fmt(mT.wall), fmt(mT.p50, 1), fmt(mT.p99, 1), fmt(mT.txn), mT.cpu]] : []),
        ['ProducerPerformance acks=all (ceiling)', fmt(mP), '', '', '', 'no transactions', cpuMed(perf)],
      ],
    ),
  );
  line();
  // The issue's headline: eoswatch timed from its process start against producer-perf's own rate,
  // one ratio per round (the two ran one right after the other), the median of those.
  const pairs = rounds.flatMap((x) => (x.perf ? [x.eos.wallRecordsPerSec / x.perf.recordsPerSec] : []));
  const pairRatio = median(pairs);
  const cpuPerRecord = median(eos.map((x) => us(x)[0]));
  const met = (ok: boolean) => (ok ? 'yes' : '**no**');
  const ratioRows: string[][] = [
    [
      '**eoswatch (timed from its process start) / producer-perf**, median of the per-round pairs',
      `**${ratio(pairRatio)}** (${pairs.map(ratio).join(', ')})`,
      '>= 1.0',
      pairs.length ? met(pairRatio >= 1) : 'n/a',
    ],
    ['eoswatch CPU µs per record (median)', fmt(cpuPerRecord, 1), '<= 15', met(cpuPerRecord <= 15)],
  ];
  if (mT) {
    ratioRows.push(['throughput eoswatch / EosCopy', ratio(mE.tput / mT.tput), '>= 2.0', met(mE.tput / mT.tput >= 2)]);
    ratioRows.push(['commit p99 eoswatch / EosCopy (same span: EndTxn only)', ratio(mE.p99 / mT.p99), '<= 1.0', met(mE.p99 / mT.p99 <= 1)]);
  }
  ratioRows.push(['eoswatch / producer-perf (both from "ready": ratio of the medians)', ratio(mE.tput / mP), '(information)', '']);
  if (tool.length) {
    ratioRows.push(['throughput eoswatch / copier', ratio(tputRatio), '>= 1.0', met(tputRatio >= 1)]);
    ratioRows.push(['commit p99 eoswatch / copier', ratio(p99Ratio), '<= 1.2', met(p99Ratio <= 1.2)]);
    ratioRows.push(['copier / producer-perf', ratio(mC.tput / mP), '(information)', '']);
  }
  line(mdTable(['ratio', 'value', 'target', 'met'], ratioRows));
  line();
  line('**Read the copier commit latency with care**: it is `commitTransaction()` of the Java producer, which first waits for the transaction\'s produce requests still in flight (the Java producer sends asynchronously) and then runs EndTxn; eoswatch\'s is EndTxn alone, because its sends were acknowledged before it commits. So the p99 ratio against the copier is not like for like' + (mT ? '; the ratio against EosCopy is.' : '.'));
  line();
  line('### Every run');
  line();
  const rows: (string | number)[][] = [];
  const cpuCell = (c: { pipeline: number; brokers: number }) => `${c.pipeline.toFixed(1)} / ${c.brokers.toFixed(1)}`;
  const runRow = (round: string | number, label: string, x: EosResult | CopierResult, extra: string) => [
    round,
    label,
    fmt(x.recordsPerSec),
    fmt(x.windowMs / 1000, 2),
    fmt(x.p50, 1),
    fmt(x.p99, 1),
    `${x.commitMs.length}`,
    `${x.transactions} (avg ${fmt(x.avgTxnSize)})${extra}`,
    cpuCell(x.cpu),
    x.load1m === undefined ? '' : x.load1m.toFixed(1),
    x.exactCheck,
  ];
  const addRound = (label: string | number, x: Round) => {
    for (const kind of x.order) {
      if (kind === 'eoswatch') rows.push(runRow(label, 'eoswatch', x.eos, `, ${x.eos.checkpoints} checkpoints`));
      if (kind === 'copier' && x.tool) rows.push(runRow(label, `copier (--transaction-size ${x.tool.txnSizeArg})`, x.tool, ''));
      if (kind === 'eoscopy' && x.tuned) rows.push(runRow(label, `EosCopy (transaction size ${x.tuned.txnSizeArg})`, x.tuned, `, flush p50 ${fmt(quantile(x.tuned.flushMs, 0.5), 1)} ms`));
      if (kind === 'perf' && x.perf)
        rows.push([label, 'producer-perf', fmt(x.perf.recordsPerSec), '', '', '', '', `send latency p50 ${x.perf.latencyP50} ms, p99 ${x.perf.latencyP99} ms`, cpuCell(x.perf.cpu), (x.perf.load1m ?? NaN).toFixed(1), '']);
    }
  };
  rounds.forEach((x, i) => addRound(i + 1, x));
  if (r.warm) addRound('warm-up (not counted)', r.warm);
  if (r.prof) rows.push(runRow('extra', 'eoswatch under --cpu-prof (not counted)', r.prof, ''));
  line('Runs are listed in the order they ran.');
  line();
  line(mdTable(['round', 'run', 'records/s', 'window s', 'commit p50 ms', 'commit p99 ms', 'commit samples', 'transactions', 'CPU s: under test / 3 brokers', 'load avg 1m at start', 'exactly-once check'], rows));
  line();
  line('CPU seconds are read from /proc: the process(es) under test (all 6 JVMs for the copiers) from start to exit, start-up included, and the 3 brokers over the same time; the machine has 2 cores, so a run of W seconds has at most 2·W CPU seconds.');
  line();
  line(
    `eoswatch's own histogram \`eos_kafka_transaction_commit_latency_seconds\` read with PromQL-style interpolation inside its buckets, as a cross-check of the exact values: p50 ${eos.map((e) => fmt(e.histP50, 1)).join(' / ')} ms, p99 ${eos.map((e) => fmt(e.histP99, 1)).join(' / ')} ms (rounds ${eos.map((e) => e.round).join(' / ')}).`,
  );
  line();
  line('## How it is measured');
  line();
  line('- **records/s**: records divided by the time from "ready to consume" to "last input offset committed", leaving JVM and Node start-up out for all (the headline pair ratio against producer-perf is the exception: eoswatch timed from its process start):');
  line('  - eoswatch: from its `pipeline running` log line (consumer group joined; the 6 transactional producers are initialised inside the window, on the first batch of each partition) to the checkpoint that made `eos_pipeline_records_total{direction="in"}` reach the record count. Records are committed by checkpoints, so up to one checkpoint interval of tail is inside the window.');
  line('  - copier: from the first `ProcessLoop` status line of any of the 6 JVMs (printed after `initTransactions()`, before the first poll) to the end of the last `commitTransaction()` of any of them. EosCopy: the same points.');
  line('  - "incl. process start" counts from the moment the process(es) were spawned instead.');
  line('- **commit latency**, exact per transaction (no histogram binning); quantiles by linear interpolation between closest ranks over all transactions of a run, then the median over rounds:');
  line('  - eoswatch: every value it observes into `eos_kafka_transaction_commit_latency_seconds` (kafkajs `transaction.commit()` after the records were acknowledged and the offsets sent), captured unbinned by `bench/eos-probe.ts`, a preload (`node --import`) that wraps prom-client\'s histogram observe in the benchmarked process; src/ is unchanged.');
  line('  - copier: its own producer\'s metric `txn-commit-time-ns-total` (cumulative nanoseconds in `KafkaProducer.commitTransaction()`), read from the in-JVM MBeanServer by `bench/java/CopierProbe.java`, which runs the unchanged tool in the same JVM. The copier commits at most one transaction between two of its status lines, so the metric is read at each status line (and, for the last transaction, by a 1 ms poller, before `close()` unregisters it) and each increase is one commit.');
  if (mT) line('  - EosCopy: `System.nanoTime()` around `commitTransaction()`, after `flush()` and `sendOffsetsToTransaction()`.');
  line(`- **exactly-once check**: after each run an independent reader (a plain kafkajs consumer, read_committed, \`test/harness/seed.ts\` checkSink) reads the whole sink and compares it with the source as read back after seeding: every source id exactly once (ids compared as a multiset, so one loss and one duplicate do not cancel out), its value unchanged (\`increment\`: + 1), in its input partition and input order; for eoswatch also the group's committed source offsets = the record count and no aborted transaction; for the copiers the records they report copied = the record count. A failed check ends the run and the benchmark with an error (no figures are written).`);
  line(`- Raw logs, probe outputs, per-run JSON and the CPU profile: \`${fromRoot(OUT_DIR)}/\` (git-ignored).`);
  line();
  if (r.prof?.profile) {
    const s = summariseProfile(r.prof.profile, { category, top: 20, fileOf: (c, short) => (c.startsWith('kafkajs') ? short.replace(/^kafkajs\//, '') : undefined) });
    line('## CPU profile of eoswatch (`node --cpu-prof`, separate run after the rounds)');
    line();
    line(`The whole \`eoswatch run\` process, start-up included: ${fmt(s.totalMs / 1000, 1)} s of samples of the main thread; ${fmt(r.prof.recordsPerSec)} records/s in this run (profiling costs a little).`);
    line();
    line(mdTable(['where the main thread was', '% of samples'], s.categories.map(([k, v]) => [k, v.toFixed(1)])));
    line();
    line('Top functions by self time (idle excluded):');
    line();
    line(mdTable(['function', 'where', 'self ms', '% of samples'], s.top.map((f) => [`\`${f.name}\``, f.where, fmt(f.ms), f.pct.toFixed(1)])));
    line();
    line('kafkajs self time by file:');
    line();
    line(mdTable(['kafkajs file', '% of samples'], s.files.map(([k, v]) => [k, v.toFixed(1)])));
    line();
  }
  line('## What limits eoswatch, and what was tried');
  line();
  line(keptNotes(argv.out!));
  line();
  writeFileSync(argv.out!, L.join('\n'));
  writeFileSync(
    join(OUT_DIR, 'results.json'),
    JSON.stringify({ rounds, warm: r.warm, prof: r.prof, env: r.env }, null, 1),
  );
  process.stdout.write(
    `\n${mdTable(
      ['', 'records/s', 'commit p50 ms', 'commit p99 ms', 'avg txn size'],
      [
        ['eoswatch', fmt(mE.tput), fmt(mE.p50, 1), fmt(mE.p99, 1), fmt(mE.txn)],
        ...(tool.length ? [['copier', fmt(mC.tput), fmt(mC.p50, 1), fmt(mC.p99, 1), fmt(mC.txn)]] : []),
        ...(mT ? [['EosCopy', fmt(mT.tput), fmt(mT.p50, 1), fmt(mT.p99, 1), fmt(mT.txn)]] : []),
        ['producer-perf', fmt(mP), '', '', ''],
      ],
    )}\n\n${ratioRows.map((x) => `${x[0]!.replace(/\*\*/g, '')}: ${x[1]!.replace(/\*\*/g, '')} (target ${x[2]})`).join('\n')}\nwritten to ${argv.out}\n`,
  );
}

runMain(main);
