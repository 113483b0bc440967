// Benchmark: what /metrics and the daemon itself cost. One real local cluster; `eoswatch run`
// compiled as the installed CLI runs it (bin/eoswatch.js → dist/), side by side with the same
// daemon built from a baseline commit (--baseline REV; e.g. the commit before the scrape renderer
// and the kafkajs idle fix, whose /metrics is prom-client's own registry.metrics()), interleaved
// (odd rounds this checkout first, even rounds the baseline first) on the same cluster and topics:
//
//   idle        HTTP + audit + Kafka health on the idle cluster: RSS and CPU over --idle-seconds
//   watch       + the LSO monitor (every 5 s) on --partitions partitions (topics of --per-topic):
//               RSS and CPU over --idle-seconds, then /metrics: one scraper (--scrapes sequential
//               GETs), then 20 concurrent scrapers (closed loops over keep-alive connections) for
//               --seconds, with the daemon's RSS before and after
//   watch+lag   + the lag service (--groups groups; each partition committed by one of them, each
//               group on a contiguous run of partitions): the same footprint, one scraper and
//               concurrent scrapers
//
// The 10,000-partition shape: --partitions 10000 --per-topic 1000 --groups 100 --broker-heap 1g
// (10 topics of 1,000 partitions; each group committed on 100 partitions of one topic).
//
// CPU is user + system time of the daemon process from /proc/<pid>/stat over the window, RSS its
// VmRSS from /proc/<pid>/status sampled every second (median and peak). The scrapers run in a
// process of their own (bench/scrape-client.ts). After the rounds, the checkout's daemon runs once
// more under `node --cpu-prof` through the concurrent scrapes (not counted).
//
//   node --import tsx bench/scrape.bench.ts [--baseline REV] [--rounds 3] [--partitions 1000]
//        [--per-topic 100] [--groups 1] [--broker-heap 512m] [--idle-seconds 60] [--seconds 30] [--scrapes 500] [--concurrency 20]
//        [--encoding gzip|identity] [--no-profile]
//        [--out bench/RESULTS.md]
//
// The results go into their own section of bench/RESULTS.md (between the SCRAPE BENCH markers,
// inside the notes block that bench/pipeline.bench.ts keeps); the hand-written SCRAPE NOTES block in
// it is kept. Every process started here is stopped by pid, also on failure.
import type { ChildProcess } from 'node:child_process';
import type { TrackedProcess } from '../src/runtime/process.js';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureTopics } from '../src/kafka/admin.js';
import { GroupOffsetWriter } from '../src/kafka/offsets.js';
import { parsePrometheusText } from '../src/metrics/text-format.js';
import { kafkaFor } from '../test/harness/index.js';
import {
  BENCH_DIR,
  ROOT,
  buildCompiled,
  keptBlock,
  profileTables,
  execFileP,
  fmt,
  fromRoot,
  generatedBy,
  gitState,
  installEmergencyStop,
  intOption,
  kafkaDist,
  kafkajsVersion,
  startProcess,
  stopProcess,
  loadAverageRow,
  log,
  machine,
  makeOutDir,
  mdTable,
  median,
  printUsageAndExit,
  procCpu,
  procStatusKb,
  quantile,
  runMain,
  summariseProfile,
  withCluster,
  writeSection,
  untilChild,
} from './common.js';

const { values: argv } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    partitions: { type: 'string', default: '1000' },
    'per-topic': { type: 'string', default: '100' },
    groups: { type: 'string', default: '1' },
    'broker-heap': { type: 'string', default: '512m' },
    'idle-seconds': { type: 'string', default: '60' },
    seconds: { type: 'string', default: '30' },
    scrapes: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '20' },
    encoding: { type: 'string', default: 'gzip' },
    'no-profile': { type: 'boolean', default: false },
    out: { type: 'string', default: join(BENCH_DIR, 'RESULTS.md') },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (argv.help) printUsageAndExit(import.meta.url);
const ROUNDS = intOption(argv.rounds, '--rounds', 1);
const PARTITIONS = intOption(argv.partitions, '--partitions', 100);
const IDLE_S = intOption(argv['idle-seconds'], '--idle-seconds', 5);
const CONC_S = intOption(argv.seconds, '--seconds', 2);
const SCRAPES = intOption(argv.scrapes, '--scrapes', 20);
const CONCURRENCY = intOption(argv.concurrency, '--concurrency', 2);
/** What the scrapers ask for: gzip, as Prometheus does, or the text (identity). */
const ENCODING = argv.encoding!;
if (ENCODING !== 'gzip' && ENCODING !== 'identity') throw new Error('--encoding: gzip or identity');
const PER_TOPIC = intOption(argv['per-topic'], '--per-topic', 1);
const TOPICS = Array.from({ length: Math.ceil(PARTITIONS / PER_TOPIC) }, (_, i) => `bench-scrape-${String(i).padStart(3, '0')}`);
const GROUP_COUNT = intOption(argv.groups, '--groups', 1);
const GROUPS = GROUP_COUNT === 1 ? ['bench-scrape-group'] : Array.from({ length: GROUP_COUNT }, (_, i) => `bench-scrape-group-${String(i).padStart(3, '0')}`);
/** Partitions each group commits on: partition i of the whole (topic ⌊i / PER_TOPIC⌋) is committed by group ⌊i / PER_GROUP⌋. */
const PER_GROUP = Math.ceil(PARTITIONS / GROUP_COUNT);
if (!/^\d+[mg]$/.test(argv['broker-heap']!)) throw new Error('--broker-heap: a JVM size such as 512m or 1g');
/** Time a fresh daemon gets before a window starts (start-up, first readings, first audit). */
const SETTLE_MS = 15_000;

const OUT_DIR = makeOutDir('scrape-');
installEmergencyStop();

const SECTION_BEGIN = '<!-- BEGIN SCRAPE BENCH (written by bench/scrape.bench.ts) -->';
const SECTION_END = '<!-- END SCRAPE BENCH -->';
const NOTES_BEGIN = '<!-- BEGIN SCRAPE NOTES (hand-written; kept when bench/scrape.bench.ts rewrites its section) -->';
const NOTES_END = '<!-- END SCRAPE NOTES -->';

// ---------------------------------------------------------------- the daemon under test

type Variant = 'current' | 'baseline';
type Shape = 'idle' | 'watch' | 'lag';

const rssKb = (pid: number) => procStatusKb(pid, 'VmRSS');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function configYaml(shape: Shape, brokers: string, port: number): string {
  const list = (xs: string[]) => `[${xs.join(', ')}]`;
  return [
    `http: { host: 127.0.0.1, port: ${port} }`,
    'log: { level: warn, format: json }',
    `kafka: { brokers: [${brokers}] }`,
    'pipeline: { enabled: false }',
    `lsoMonitor: { enabled: ${shape !== 'idle'}, topics: ${list(shape === 'idle' ? [] : TOPICS)}, interval: 5s }`,
    `lag: { enabled: ${shape === 'lag'}, groups: ${list(GROUPS)}, topics: ${list(TOPICS)}, interval: 15s }`,
    'audit: { enabled: true, cluster: true }',
    '',
  ].join('\n');
}

interface Daemon {
  proc: TrackedProcess;
  child: ChildProcess;
  pid: number;
  url: string;
  stderr: () => string;
}

async function startDaemon(entry: string, shape: Shape, brokers: string, label: string, extraNodeArgs: string[] = []): Promise<Daemon> {
  const port = await freePort();
  const config = join(OUT_DIR, `${label}.yaml`);
  writeFileSync(config, configYaml(shape, brokers, port));
  const proc = startProcess('node', [...extraNodeArgs, entry, 'run', '-c', config]);
  const child = proc.child!;
  let err = '';
  let out = '';
  child.stdout!.on('data', (d: string) => (out = (out + d).slice(-20_000)));
  child.stderr!.on('data', (d: string) => (err = (err + d).slice(-20_000)));
  child.once('exit', () => {
    writeFileSync(join(OUT_DIR, `${label}.log`), `${out}\n--- stderr\n${err}`);
  });
  const url = `http://127.0.0.1:${port}`;
  // Ready, and (when watching) every partition's series present.
  const want = shape === 'idle' ? 0 : PARTITIONS;
  await untilChild(
    `${label} ready with ${want} partitions' series`,
    child,
    async () => {
      if ((await fetch(`${url}/readyz`)).status !== 200) return false;
      const m = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
      const lso = m.samples.filter((s) => s.name === 'eos_partition_lso_lag_records').length;
      const lag = m.samples.filter((s) => s.name === 'eos_consumer_lag_records').length;
      return lso >= want && (shape !== 'lag' || lag >= want);
    },
    { timeoutMs: 180_000, intervalMs: 500, tail: () => `${out.slice(-3000)}\n${err.slice(-3000)}` },
  );
  return { proc, child, pid: child.pid!, url, stderr: () => err };
}

async function stopDaemon(d: Daemon): Promise<void> {
  await stopProcess(d.proc, 30_000);
}

interface Footprint {
  seconds: number;
  cpuPct: number;
  rssMedianMiB: number;
  rssPeakMiB: number;
  rssStartMiB: number;
  rssEndMiB: number;
  ctxSwitchesPerS: number;
}

function ctxSwitches(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(s)?.[1] ?? 0) + Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(s)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The daemon's CPU (from /proc/<pid>/stat), context switches and RSS over `seconds`, nothing else asked of it. */
async function footprint(d: Daemon, seconds: number): Promise<Footprint> {
  const rss: number[] = [];
  const c0 = procCpu(d.pid)[0];
  const s0 = ctxSwitches(d.pid);
  const t0 = performance.now();
  for (let i = 0; i < seconds; i++) {
    rss.push(rssKb(d.pid) / 1024);
    await new Promise((r) => setTimeout(r, 1000));
  }
  rss.push(rssKb(d.pid) / 1024);
  const dt = (performance.now() - t0) / 1000;
  return {
    seconds: dt,
    cpuPct: ((procCpu(d.pid)[0] - c0) / dt) * 100,
    ctxSwitchesPerS: (ctxSwitches(d.pid) - s0) / dt,
    rssMedianMiB: median(rss),
    rssPeakMiB: Math.max(...rss),
    rssStartMiB: rss[0]!,
    rssEndMiB: rss[rss.length - 1]!,
  };
}

interface Scrapes {
  n: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
  perSecond: number;
  /** The last body's bytes (decompressed) and on the wire. */
  bytes: number;
  wireBytes: number;
  /** Scrapes whose body came gzip-compressed. */
  gzipped: number;
  rssBeforeMiB: number;
  rssAfterMiB: number;
  rssPeakMiB: number;
  cpuPct: number;
  /** The daemon's CPU milliseconds per scrape served (load-independent, unlike latency). */
  cpuMsPerScrape: number;
}

async function scrapes(d: Daemon, concurrency: number, limit: { seconds?: number; count?: number }, label: string): Promise<Scrapes> {
  const args = ['--import', 'tsx', join(BENCH_DIR, 'scrape-client.ts'), `${d.url}/metrics`, String(concurrency), '--encoding', ENCODING, ...(limit.seconds ? ['--seconds', String(limit.seconds)] : ['--count', String(limit.count)])];
  const rssBefore = rssKb(d.pid) / 1024;
  let peak = rssBefore;
  const poll = setInterval(() => (peak = Math.max(peak, rssKb(d.pid) / 1024)), 500);
  const c0 = procCpu(d.pid)[0];
  const t0 = performance.now();
  try {
    const proc = startProcess('node', args);
    let out = '';
    let err = '';
    proc.child!.stdout!.on('data', (x: string) => (out += x));
    proc.child!.stderr!.on('data', (x: string) => (err += x));
    const code = await proc.exited;
    if (code !== 0) throw new Error(`${label}: scrape client exited with ${code}: ${err.slice(-2000)}`);
    const r = JSON.parse(out.trim().split('\n').pop()!) as { latencies: number[]; errors: number; firstErrors: string[]; bytes: number; wireBytes: number; gzipped: number; seconds: number };
    writeFileSync(join(OUT_DIR, `${label}.json`), JSON.stringify(r));
    const dt = (performance.now() - t0) / 1000;
    const cpuS = procCpu(d.pid)[0] - c0;
    return {
      cpuMsPerScrape: (cpuS * 1000) / Math.max(1, r.latencies.length),
      n: r.latencies.length,
      errors: r.errors,
      p50: quantile(r.latencies, 0.5),
      p99: quantile(r.latencies, 0.99),
      max: Math.max(...r.latencies),
      perSecond: r.latencies.length / r.seconds,
      bytes: r.bytes,
      wireBytes: r.wireBytes,
      gzipped: r.gzipped,
      rssBeforeMiB: rssBefore,
      rssAfterMiB: rssKb(d.pid) / 1024,
      rssPeakMiB: Math.max(peak, rssKb(d.pid) / 1024),
      cpuPct: (cpuS / dt) * 100,
    };
  } finally {
    clearInterval(poll);
  }
}

// ---------------------------------------------------------------- one round of one variant

interface VariantRun {
  variant: Variant;
  round: number;
  load1m: number;
  idle: Footprint;
  watch: Footprint;
  series: number;
  one: Scrapes;
  many: Scrapes;
  lagSeries: number;
  lagFoot: Footprint;
  oneLag: Scrapes;
  manyLag: Scrapes;
}

function seriesCount(text: string, names: string[]): number {
  return parsePrometheusText(text).samples.filter((s) => names.includes(s.name)).length;
}

const PARTITION_SERIES = ['eos_partition_lso_lag_records', 'eos_partition_lso_stuck_seconds', 'eos_partition_open_transaction_age_seconds'];
const LAG_SERIES = ['eos_consumer_committed_offset', 'eos_consumer_lag_records', 'eos_consumer_lag_seconds', 'eos_consumer_hw_lag_records', 'eos_consumer_group_stuck_seconds'];

async function runVariant(variant: Variant, entry: string, brokers: string, round: number): Promise<VariantRun> {
  const tag = `${variant}-r${round}`;
  const load1m = loadavg()[0]!;
  log(`${tag}: idle daemon, ${IDLE_S} s`);
  let d = await startDaemon(entry, 'idle', brokers, `${tag}-idle`);
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const idle = await footprint(d, IDLE_S);
  await stopDaemon(d);
  log(`  RSS ${fmt(idle.rssMedianMiB, 1)} MiB (peak ${fmt(idle.rssPeakMiB, 1)}), CPU ${fmt(idle.cpuPct, 2)} %, ${fmt(idle.ctxSwitchesPerS)} context switches/s`);

  log(`${tag}: watching ${PARTITIONS} partitions, ${IDLE_S} s, then scrapes`);
  d = await startDaemon(entry, 'watch', brokers, `${tag}-watch`);
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const watch = await footprint(d, IDLE_S);
  log(`  RSS ${fmt(watch.rssMedianMiB, 1)} MiB (peak ${fmt(watch.rssPeakMiB, 1)}), CPU ${fmt(watch.cpuPct, 2)} %, ${fmt(watch.ctxSwitchesPerS)} context switches/s`);
  const series = seriesCount(await (await fetch(`${d.url}/metrics`)).text(), PARTITION_SERIES);
  await scrapes(d, 1, { count: 50 }, `${tag}-warm`);
  const one = await scrapes(d, 1, { count: SCRAPES }, `${tag}-one`);
  log(`  one scraper: p50 ${fmt(one.p50, 2)} ms, p99 ${fmt(one.p99, 2)} ms (${one.n} scrapes, ${fmt(one.bytes / 1024)} KiB, ${fmt(one.wireBytes / 1024)} KiB on the wire)`);
  const many = await scrapes(d, CONCURRENCY, { seconds: CONC_S }, `${tag}-many`);
  log(`  ${CONCURRENCY} scrapers: p50 ${fmt(many.p50, 1)} ms, p99 ${fmt(many.p99, 1)} ms, ${fmt(many.perSecond)} scrapes/s, ${many.errors} errors, RSS ${fmt(many.rssBeforeMiB)} → ${fmt(many.rssAfterMiB)} MiB`);
  await stopDaemon(d);

  log(`${tag}: watching ${PARTITIONS} partitions with the lag service (${GROUPS.length} groups), ${IDLE_S} s, then scrapes`);
  d = await startDaemon(entry, 'lag', brokers, `${tag}-lag`);
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const lagFoot = await footprint(d, IDLE_S);
  log(`  RSS ${fmt(lagFoot.rssMedianMiB, 1)} MiB (peak ${fmt(lagFoot.rssPeakMiB, 1)}), CPU ${fmt(lagFoot.cpuPct, 2)} %`);
  const lagSeries = seriesCount(await (await fetch(`${d.url}/metrics`)).text(), [...PARTITION_SERIES, ...LAG_SERIES]);
  await scrapes(d, 1, { count: 50 }, `${tag}-lag-warm`);
  const oneLag = await scrapes(d, 1, { count: SCRAPES }, `${tag}-lag-one`);
  log(`  one scraper: p50 ${fmt(oneLag.p50, 2)} ms, p99 ${fmt(oneLag.p99, 2)} ms (${fmt(oneLag.bytes / 1024)} KiB, ${fmt(oneLag.wireBytes / 1024)} KiB on the wire)`);
  const manyLag = await scrapes(d, CONCURRENCY, { seconds: CONC_S }, `${tag}-lag-many`);
  log(`  ${CONCURRENCY} scrapers: p50 ${fmt(manyLag.p50, 1)} ms, p99 ${fmt(manyLag.p99, 1)} ms, ${fmt(manyLag.perSecond)} scrapes/s, ${manyLag.errors} errors`);
  await stopDaemon(d);
  return { variant, round, load1m, idle, watch, series, one, many, lagSeries, lagFoot, oneLag, manyLag };
}

// ---------------------------------------------------------------- the report

/** What the local cluster took for the partitions. */
interface Setup {
  /** Creating the topics (to every partition having a leader). */
  topicsS: number;
  /** Topics, one record per partition, the groups' commits. */
  setupS: number;
  heap: string;
  brokerFds: number;
  brokerRssMiB: number;
}

interface Report {
  setup: Setup;
  startedAt: Date;
  totalS: number;
  load0: number[];
  load1: number[];
  kafka: string;
  baseline?: string;
  current: { rev: string; dirty: boolean };
  runs: VariantRun[];
  profile?: { file: string; many: Scrapes };
  /** This checkout's idle daemon under `node --max-semi-space-size=1` (not counted). */
  smallYoung?: Footprint;
}

const CATEGORY = (url: string, fn: string): string => {
  if (fn === '(garbage collector)') return 'garbage collector';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'V8/native (program)';
  if (url.includes('/prom-client/')) return 'prom-client';
  if (url.includes('/express/') || url.includes('/router/') || url.includes('/body-parser/') || url.includes('/send/') || url.includes('/finalhandler/')) return 'express';
  if (url.includes('/kafkajs/')) return 'kafkajs';
  if (url.includes('/node_modules/')) return 'other node_modules';
  if (url.includes('/dist/')) return 'eoswatch';
  if (url.startsWith('node:') || url === '') return 'node core / builtins';
  return 'other';
};

/** The shape's options where they are not the defaults. */
function shapeArgs(): string {
  const given: [string, string | undefined, string][] = [
    ['--partitions', argv.partitions, '1000'],
    ['--per-topic', argv['per-topic'], '100'],
    ['--groups', argv.groups, '1'],
    ['--broker-heap', argv['broker-heap'], '512m'],
    ['--encoding', argv.encoding, 'gzip'],
  ];
  return given.map(([flag, v, d]) => (v !== d ? ` ${flag} ${v}` : '')).join('');
}

function fdLimit(): number {
  try {
    return Number(/^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

function section(r: Report): string {
  const L: string[] = [];
  const line = (s = '') => L.push(s);
  const m = machine();
  const cur = r.runs.filter((x) => x.variant === 'current');
  const base = r.runs.filter((x) => x.variant === 'baseline');
  const med = (xs: VariantRun[], f: (x: VariantRun) => number) => median(xs.map(f));
  line(SECTION_BEGIN);
  line(`## /metrics and the daemon's footprint (scrapers asking for ${ENCODING === 'gzip' ? 'gzip, as Prometheus does' : 'the text, without gzip'})`);
  line();
  line(
    `${generatedBy(`npm run bench:scrape -- --rounds ${ROUNDS}${r.baseline ? ` --baseline ${r.baseline}` : ''}${shapeArgs()}`, 'bench/scrape.bench.ts', r.startedAt, r.totalS)} ${m.nproc} cores (${m.model}), ${fmt(m.memGiB, 1)} GiB, a 1-node local cluster (Kafka ${r.kafka}) on the same machine; kafkajs ${kafkajsVersion()}, Node ${process.versions.node}. The machine was shared with other work (load average 1/5/15 min ${loadAverageRow(r.load0, r.load1)[1]}; 1-minute load at the start of each run in the last table).`,
  );
  line();
  line(
    `**What runs**: \`eoswatch run\` compiled by tsc as the installed CLI runs it (no tsx), this checkout (${r.current.rev}${r.current.dirty ? ' with uncommitted changes' : ''})${r.baseline ? ` and the baseline ${r.baseline} built the same way, in ${ROUNDS} rounds (odd rounds this checkout first, even rounds the baseline first)` : ''}. The baseline is the peer on the same cluster, topics and HTTP stack (what its /metrics renderer is, the notes say). Shapes: **idle** = HTTP + audit (cluster source) + Kafka health on the idle cluster; **watch** = the same + the LSO monitor every 5 s on ${PARTITIONS} partitions (${TOPICS.length} topics of ${PER_TOPIC}); **watch + lag** = the same + the lag service every 15 s (${GROUPS.length === 1 ? 'one group committed on every partition' : `${GROUPS.length} groups, each committed on ${fmt(PER_GROUP)} partitions${PER_GROUP <= PER_TOPIC ? ' of one topic' : ''}, every partition by one group`}: ${fmt(TOPICS.length * PER_TOPIC)} group-partitions). Footprints are measured over ${IDLE_S} s after ${SETTLE_MS / 1000} s of settling, with nothing scraping; CPU = utime + stime of the daemon from /proc/<pid>/stat over the window. Scrapes come from a separate Node process over keep-alive connections on loopback: one scraper sends ${SCRAPES} GETs one after the other (after 50 not counted); ${CONCURRENCY} scrapers are ${CONCURRENCY} closed loops for ${CONC_S} s. ${ENCODING === 'gzip' ? 'Every request sends `Accept-Encoding: gzip`, as Prometheus does; the scrapers count a gzip body without decompressing it (Prometheus decompresses on its own machine; here the client shares the 2 cores with the daemon), the last one decompressed once to check it. Latency = request sent → last byte of the body' : 'Every request sends `Accept-Encoding: identity` (the text; `--encoding gzip` measures what Prometheus gets). Latency = request sent → last byte of the body'}. Medians over rounds.`,
  );
  line();
  const rows: (string | number)[][] = [];
  const target = (v: number, max: number) => (Number.isFinite(v) ? (v <= max ? 'yes' : '**no**') : '');
  const add = (what: string, f: (x: VariantRun) => number, d: number, unit: string, max?: number) => {
    const c = med(cur, f);
    const b = base.length ? med(base, f) : NaN;
    // A ratio only of two positive figures (not of error counts or RSS differences).
    const ratio = b > 0 && c >= 0 ? (c / b).toFixed(2) : '';
    rows.push([what, base.length ? `${fmt(b, d)} ${unit}` : '', `**${fmt(c, d)} ${unit}**`, ratio, max === undefined ? '' : `≤ ${max} ${unit}`, max === undefined ? '' : target(c, max)]);
  };
  // The idle and watch targets are those of 1,000 partitions; at 10,000 the targets are the watch + lag shape's.
  const large = PARTITIONS >= 10_000;
  add('idle daemon: RSS (median of the window)', (x) => x.idle.rssMedianMiB, 1, 'MiB', large ? undefined : 80);
  add('idle daemon: CPU', (x) => x.idle.cpuPct, 2, '% of a core', large ? undefined : 1);
  add('idle daemon: context switches', (x) => x.idle.ctxSwitchesPerS, 0, '/s');
  add(`watching ${PARTITIONS} partitions: RSS (median)`, (x) => x.watch.rssMedianMiB, 1, 'MiB', large ? undefined : 120);
  add(`watching ${PARTITIONS} partitions: CPU`, (x) => x.watch.cpuPct, 2, '% of a core', large ? undefined : 3);
  add(`/metrics, one scraper: p50`, (x) => x.one.p50, 2, 'ms');
  add(`/metrics, one scraper: p99`, (x) => x.one.p99, 2, 'ms', large ? 25 : 5);
  add(`/metrics, one scraper: daemon CPU per scrape`, (x) => x.one.cpuMsPerScrape, 2, 'ms');
  add(`watching ${PARTITIONS} partitions + lag: RSS (median)`, (x) => x.lagFoot.rssMedianMiB, 1, 'MiB', large ? 200 : undefined);
  add(`watching ${PARTITIONS} partitions + lag: CPU`, (x) => x.lagFoot.cpuPct, 2, '% of a core', large ? 5 : undefined);
  add(`/metrics with the lag series, one scraper: p50`, (x) => x.oneLag.p50, 2, 'ms');
  add(`/metrics with the lag series, one scraper: p99`, (x) => x.oneLag.p99, 2, 'ms', large ? 25 : 5);
  add(`/metrics with the lag series, one scraper: daemon CPU per scrape`, (x) => x.oneLag.cpuMsPerScrape, 2, 'ms');
  add(`/metrics, ${CONCURRENCY} concurrent scrapers: p50`, (x) => x.many.p50, 1, 'ms');
  add(`/metrics, ${CONCURRENCY} concurrent scrapers: p99`, (x) => x.many.p99, 1, 'ms', large ? 100 : 15);
  add(`/metrics, ${CONCURRENCY} concurrent scrapers: scrapes/s`, (x) => x.many.perSecond, 0, '');
  add(`/metrics, ${CONCURRENCY} concurrent scrapers: daemon CPU per scrape`, (x) => x.many.cpuMsPerScrape, 2, 'ms');
  add(`/metrics with the lag series, ${CONCURRENCY} concurrent scrapers: p50`, (x) => x.manyLag.p50, 1, 'ms');
  add(`/metrics with the lag series, ${CONCURRENCY} concurrent scrapers: p99`, (x) => x.manyLag.p99, 1, 'ms', large ? 100 : 15);
  add(`/metrics with the lag series, ${CONCURRENCY} concurrent scrapers: daemon CPU per scrape`, (x) => x.manyLag.cpuMsPerScrape, 2, 'ms');
  add(`/metrics, ${CONCURRENCY} concurrent scrapers: errors`, (x) => x.many.errors, 0, '');
  add(`/metrics, ${CONCURRENCY} concurrent scrapers: RSS after − before`, (x) => x.many.rssAfterMiB - x.many.rssBeforeMiB, 1, 'MiB');
  line(mdTable(['figure', r.baseline ? `baseline ${r.baseline}` : 'baseline', 'this checkout', 'ratio', 'target', 'met'], rows));
  line();
  const c0 = cur[0];
  line(
    `Local setup: broker heap ${r.setup.heap}; the topics created in ${fmt(r.setup.topicsS, 1)} s, everything (topics, one record per partition, the groups' commits) in ${fmt(r.setup.setupS, 1)} s; the broker then held ${fmt(r.setup.brokerFds)} file descriptors (\`ulimit -n\` ${fmt(fdLimit())}) with an RSS of ${fmt(r.setup.brokerRssMiB)} MiB.`,
  );
  const size = (x: Scrapes) => `${fmt(x.bytes / 1024)} KiB per scrape${x.wireBytes !== x.bytes ? `, ${fmt(x.wireBytes / 1024)} KiB on the wire` : ''}`;
  if (c0) line(`Series: ${fmt(c0.series)} partition series of the LSO monitor (${size(c0.one)}), ${fmt(c0.lagSeries)} with the lag service's (${size(c0.oneLag)}).`);
  const b0 = base[0];
  if (b0 && ENCODING === 'gzip') line(`The baseline's bodies: ${b0.one.gzipped ? `gzip-compressed (${size(b0.one)})` : 'the text (it does not compress)'}.`);
  if (r.smallYoung)
    line(
      `Extra (not counted): this checkout's idle daemon under \`node --max-semi-space-size=1\` (V8's young generation capped at 1 MiB per semi-space instead of growing to 16 MiB during start-up): RSS ${fmt(r.smallYoung.rssMedianMiB, 1)} MiB median (peak ${fmt(r.smallYoung.rssPeakMiB, 1)}), CPU ${fmt(r.smallYoung.cpuPct, 2)} % of a core.`,
    );
  line();
  line('### Every run');
  line();
  line(
    mdTable(
      ['round', 'daemon', 'load 1m', 'idle: RSS MiB median / peak, CPU %, cs/s', 'watch: RSS MiB median / peak, CPU %', 'one scraper p50 / p99 ms', 'with lag: RSS MiB median, CPU %; one scraper p50 / p99 ms; ' + `${CONCURRENCY} scrapers p50 / p99 ms`, `${CONCURRENCY} scrapers p50 / p99 ms, scrapes/s, errors, daemon CPU %`, 'RSS MiB before → after / peak'],
      r.runs.map((x) => [
        x.round,
        x.variant === 'current' ? 'this checkout' : `baseline ${r.baseline}`,
        x.load1m.toFixed(1),
        `${fmt(x.idle.rssMedianMiB, 1)} / ${fmt(x.idle.rssPeakMiB, 1)}, ${fmt(x.idle.cpuPct, 2)}, ${fmt(x.idle.ctxSwitchesPerS)}`,
        `${fmt(x.watch.rssMedianMiB, 1)} / ${fmt(x.watch.rssPeakMiB, 1)}, ${fmt(x.watch.cpuPct, 2)}`,
        `${fmt(x.one.p50, 2)} / ${fmt(x.one.p99, 2)}`,
        `${fmt(x.lagFoot.rssMedianMiB, 1)}, ${fmt(x.lagFoot.cpuPct, 2)}; ${fmt(x.oneLag.p50, 2)} / ${fmt(x.oneLag.p99, 2)}; ${fmt(x.manyLag.p50, 1)} / ${fmt(x.manyLag.p99, 1)}`,
        `${fmt(x.many.p50, 1)} / ${fmt(x.many.p99, 1)}, ${fmt(x.many.perSecond)}, ${x.many.errors}, ${fmt(x.many.cpuPct)}`,
        `${fmt(x.many.rssBeforeMiB)} → ${fmt(x.many.rssAfterMiB)} / ${fmt(x.many.rssPeakMiB)}`,
      ]),
    ),
  );
  line();
  if (r.profile) {
    const s = summariseProfile(r.profile.file, { category: CATEGORY, top: 12 });
    line(`### CPU profile of this checkout's daemon under ${CONCURRENCY} concurrent scrapers (\`node --cpu-prof\`, not counted)`);
    line();
    line(`The whole process (start-up, first readings, ${CONC_S} s of scrapes): ${fmt(s.totalMs / 1000, 1)} s of main-thread samples; in this run p50 ${fmt(r.profile.many.p50, 1)} ms, p99 ${fmt(r.profile.many.p99, 1)} ms, ${fmt(r.profile.many.perSecond)} scrapes/s.`);
    line();
    line(profileTables(s));
    line();
  }
  line(`Raw outputs (daemon logs, configurations, every scrape's latency, the profile): \`${fromRoot(OUT_DIR)}/\` (git-ignored).`);
  line();
  line('### Notes');
  line();
  line(keptBlock(argv.out!, NOTES_BEGIN, NOTES_END));
  line(SECTION_END);
  return L.join('\n');
}

// ---------------------------------------------------------------- main

/** The baseline commit's src/, package.json, tsconfigs and config/, unpacked inside bench/out and compiled. */
async function buildBaseline(rev: string): Promise<string> {
  const dir = join(OUT_DIR, 'baseline-src');
  mkdirSync(dir, { recursive: true });
  const tar = join(OUT_DIR, 'baseline.tar');
  await execFileP('git', ['-C', ROOT, 'archive', '-o', tar, rev, 'src', 'config', 'package.json', 'tsconfig.json', 'tsconfig.build.json']);
  await execFileP('tar', ['-xf', tar, '-C', dir]);
  const entry = await buildCompiled(dir, join(OUT_DIR, 'baseline'));
  if (!entry) throw new Error(`the baseline ${rev} does not build`);
  return entry;
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const load0 = loadavg();
  // The commit whose src/ is compiled now (src/ may change while the rounds run).
  const currentRev = await gitState(ROOT, 'src');
  const current = await buildCompiled(ROOT, join(OUT_DIR, 'current'));
  if (!current) throw new Error('this checkout does not build');
  const baseline = argv.baseline ? await buildBaseline(argv.baseline) : undefined;
  const { version } = await kafkaDist();
  const out = await withCluster({ nodes: 1, version, heap: argv['broker-heap']! }, async (cluster) => {
    const kafka = kafkaFor(cluster.brokers);
    const admin = kafka.admin();
    const t0 = performance.now();
    await admin.connect();
    // A topic per request: KRaft's controller refuses a request of more than 10,000 records
    // (POLICY_VIOLATION), and each partition is a record (10 topics of 1,000 are 10,010).
    for (const topic of TOPICS) await ensureTopics(admin, [{ topic, numPartitions: PER_TOPIC, replicationFactor: 1 }], 600_000);
    await admin.disconnect();
    const topicsS = (performance.now() - t0) / 1000;
    // One record per partition, so that the groups' committed offsets (1) stand at the end.
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (const topic of TOPICS) await producer.send({ topic, messages: Array.from({ length: PER_TOPIC }, (_, p) => ({ partition: p, value: `r${p}` })) });
    await producer.disconnect();
    // Partition i of the whole (topic ⌊i / PER_TOPIC⌋) is committed by group ⌊i / PER_GROUP⌋.
    const writer = new GroupOffsetWriter(kafka);
    const byGroupTopic = new Map<string, { group: string; topic: string; partitions: number[] }>();
    for (let i = 0; i < TOPICS.length * PER_TOPIC; i++) {
      const group = GROUPS[Math.min(Math.floor(i / PER_GROUP), GROUPS.length - 1)]!;
      const topic = TOPICS[Math.floor(i / PER_TOPIC)]!;
      const k = `${group}\u0000${topic}`;
      let e = byGroupTopic.get(k);
      if (!e) byGroupTopic.set(k, (e = { group, topic, partitions: [] }));
      e.partitions.push(i % PER_TOPIC);
    }
    for (const e of byGroupTopic.values()) await writer.commit(e.group, e.topic, e.partitions.map((partition) => ({ partition, offset: 1n })));
    await writer.close();
    const setupS = (performance.now() - t0) / 1000;
    const brokerPid = Object.values(cluster.pids())[0] ?? null;
    const setup: Setup = {
      topicsS,
      setupS,
      heap: argv['broker-heap']!,
      brokerFds: brokerPid ? readdirSync(`/proc/${brokerPid}/fd`).length : NaN,
      brokerRssMiB: brokerPid ? rssKb(brokerPid) / 1024 : NaN,
    };
    log(
      `${TOPICS.length} topics × ${PER_TOPIC} partitions created in ${fmt(topicsS, 1)} s; ${GROUPS.length} group(s) committed on ${fmt(PER_GROUP)} partitions each; set up in ${fmt(setupS, 1)} s; broker: ${setup.brokerFds} fds, RSS ${fmt(setup.brokerRssMiB)} MiB (heap ${setup.heap})`,
    );
    const brokers = cluster.brokers.join(', ');
    const runs: VariantRun[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const order: [Variant, string][] = [['current', current]];
      if (baseline) order.push(['baseline', baseline]);
      if (round % 2 === 0) order.reverse();
      for (const [v, entry] of order) runs.push(await runVariant(v, entry, brokers, round));
    }
    log(`extra: this checkout's idle daemon under node --max-semi-space-size=1, ${IDLE_S} s (not counted)`);
    const sy = await startDaemon(current, 'idle', brokers, 'extra-small-young-idle', ['--max-semi-space-size=1']);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const smallYoung = await footprint(sy, IDLE_S);
    await stopDaemon(sy);
    log(`  RSS ${fmt(smallYoung.rssMedianMiB, 1)} MiB (peak ${fmt(smallYoung.rssPeakMiB, 1)}), CPU ${fmt(smallYoung.cpuPct, 2)} %`);
    let profile: Report['profile'];
    if (!argv['no-profile']) {
      const dir = join(OUT_DIR, 'profile');
      mkdirSync(dir, { recursive: true });
      log('this checkout under --cpu-prof: concurrent scrapes (not counted)');
      const d = await startDaemon(current, 'watch', brokers, 'profile', ['--cpu-prof', '--cpu-prof-dir', dir]);
      const many = await scrapes(d, CONCURRENCY, { seconds: CONC_S }, 'profile-many');
      await stopDaemon(d);
      const f = readdirSync(dir).find((n) => n.endsWith('.cpuprofile'));
      if (f) profile = { file: join(dir, f), many };
    }
    return { kafka: cluster.version, runs, profile, smallYoung, setup };
  });
  const report: Report = {
    startedAt,
    totalS: (Date.now() - startedAt.getTime()) / 1000,
    load0,
    load1: loadavg(),
    kafka: out.kafka,
    ...(argv.baseline ? { baseline: argv.baseline } : {}),
    current: currentRev,
    runs: out.runs,
    ...(out.profile ? { profile: out.profile } : {}),
    smallYoung: out.smallYoung,
    setup: out.setup,
  };
  writeFileSync(join(OUT_DIR, 'results.json'), JSON.stringify(report, null, 1));
  writeSection(argv.out!, SECTION_BEGIN, SECTION_END, section(report));
  log(`written to ${argv.out}`);
}

runMain(main);
