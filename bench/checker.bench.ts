// Benchmark: `eoswatch verify check` over N verification records against plain consumers reading
// the same topic to the end, read_committed: kcat (librdkafka) and Kafka's own ConsumerPerformance
// (the Java client), on one real local cluster, interleaved, in one invocation.
//
//   node --import tsx bench/checker.bench.ts [--records 1000000] [--rounds 4] [--nodes 1|3]
//        [--small-records 100000] [--no-warmup] [--no-profile] [--skip tsx,kcat,kcat-fw10,perf]
//        [--fuzz-cases 100000] [--out bench/RESULTS.md]
//
// One topic of 6 partitions gets N records from `produceVerifyRecords` (the records `eoswatch
// verify produce` writes; nothing transforms them, so the check runs with --value-delta 0). After
// a warm-up round (not counted), rounds of the checker (`eoswatch verify check` compiled by tsc, as
// the installed CLI, bin/eoswatch.js → dist/, runs it; a child process), kcat (`-C -e -o beginning
// -q -X isolation.level=read_committed` to /dev/null) and ConsumerPerformance (`--num-records N`,
// isolation.level=read_committed from a --command-config file) run in ABBA order, with two extras:
// the same checker run from the source under tsx (`node --import tsx src/cli.ts`), and kcat with
// `-X fetch.wait.max.ms=10` (by default librdkafka's last, empty fetch waits up to 500 ms before kcat
// sees the end of a partition). Each run is timed from spawn to exit, with its peak RSS and
// CPU from GNU time (or /proc when /usr/bin/time is missing). The checker also runs on a topic of
// --small-records records, to show that its memory does not grow with N, and once under
// `node --cpu-prof` (not counted). Before measuring, bench/checker-scan-fuzz.ts checks that the
// checker's fast path judges values exactly as its JSON.parse path.
//
// The results go into their own section of bench/RESULTS.md, between the CHECKER BENCH markers,
// which sits inside the notes block that bench/pipeline.bench.ts keeps when it rewrites the file;
// the hand-written CHECKER NOTES block inside the section is kept too. Every process started here is
// stopped by pid, also on failure; the cluster with cluster.down().
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { LocalCluster } from '../harness/localcluster/cluster.js';
import { produceVerifyRecords } from '../src/verify/verify.js';
import { createTopic, kafkaFor, uniqueName } from '../test/harness/index.js';
import { fuzzCheckerScan } from './checker-scan-fuzz.js';
import { BENCH_DIR, ROOT, buildCompiled, keptBlock, profileTables, cpuMeter, execFileP, fmt, fromRoot, generatedBy, gitState, installEmergencyStop, intOption, javaVersion, kafkaDist, kafkajsVersion, killByPid, listOption, loadAverageRow, log, machine, makeOutDir, mdTable, median, printUsageAndExit, procStatusKb, runMain, startProcess, sumHighWatermarks, summariseProfile, withCluster, writeLog4j, writeSection } from './common.js';

const PARTITIONS = 6;
/** Targets: records/s at least this share of kcat's and of ConsumerPerformance's, peak RSS at most this. */
const KCAT_GOAL = 0.6;
const PERF_GOAL = 1.0;
const RSS_GOAL_MIB = 150;
const GNU_TIME = '/usr/bin/time';

// ---------------------------------------------------------------- arguments

const { values: argv } = parseArgs({
  options: {
    records: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '4' },
    nodes: { type: 'string', default: '1' },
    'small-records': { type: 'string', default: '100000' },
    'no-warmup': { type: 'boolean', default: false },
    'no-profile': { type: 'boolean', default: false },
    skip: { type: 'string', default: '' },
    'fuzz-cases': { type: 'string', default: '100000' },
    out: { type: 'string', default: join(BENCH_DIR, 'RESULTS.md') },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (argv.help) printUsageAndExit(import.meta.url);
const N = intOption(argv.records, '--records', PARTITIONS);
const ROUNDS = intOption(argv.rounds, '--rounds', 1);
const NODES = Number(argv.nodes);
const SMALL = Number(argv['small-records']);
const FUZZ = Number(argv['fuzz-cases']);
const WARMUP = !argv['no-warmup'];
const SKIP = listOption(argv.skip);
if (NODES !== 1 && NODES !== 3) throw new Error('--nodes: 1 or 3');
if (!Number.isInteger(SMALL) || SMALL < 0 || SMALL >= N) throw new Error('--small-records: an integer >= 0 and below --records (0: no small topic)');
if (!Number.isInteger(FUZZ) || FUZZ < 0) throw new Error('--fuzz-cases: an integer >= 0');
for (const s of SKIP) if (!['tsx', 'kcat', 'kcat-fw10', 'perf'].includes(s)) throw new Error(`--skip: any of tsx, kcat, kcat-fw10, perf, not ${s}`);
const RF = NODES === 3 ? 3 : 1;

const OUT_DIR = makeOutDir('checker-');
installEmergencyStop();

// ---------------------------------------------------------------- measured runs (TrackedProcesses: each killed by its own exit hook)

interface Measured {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** spawn → exit, ms (our clock). */
  wallMs: number;
  /** Peak resident set size of the measured process, MiB. */
  peakRssMiB: number;
  /** user + system CPU seconds of the measured process. */
  cpuS: number;
  /** CPU seconds of the brokers over the same time. */
  brokerCpuS: number;
  stdout: string;
  stderr: string;
  /** Newlines seen on stdout when `countLines` (stdout is not kept then). */
  lines: number;
  how: 'GNU time' | '/proc';
}

const HAVE_GNU_TIME = existsSync(GNU_TIME);

/**
 * Runs one command to its end and measures it: under GNU time (peak RSS = its ru_maxrss, CPU =
 * user + sys) when /usr/bin/time exists, else by polling /proc/<pid>/status VmHWM every 20 ms and
 * the CPU of reaped children. stdout goes to /dev/null when `devNull`, is only counted in lines
 * when `countLines`, else it is kept.
 */
async function measure(
  cmd: string,
  args: string[],
  opts: { devNull?: boolean; countLines?: boolean; timeoutMs: number; label: string; cluster: LocalCluster; env?: NodeJS.ProcessEnv },
): Promise<Measured> {
  const timeFile = join(OUT_DIR, `${opts.label}.time`);
  const [file, fargs] = HAVE_GNU_TIME ? [GNU_TIME, ['-o', timeFile, '-f', '%e %M %U %S', cmd, ...args]] : [cmd, args];
  const meter = cpuMeter(opts.cluster);
  const t0 = performance.now();
  // A process group of its own: under GNU time the checker is time's child, and a kill reaches it too.
  const proc = startProcess(file, fargs, { ...(opts.env ? { env: opts.env } : {}), discardStdout: opts.devNull ?? false, group: true, pipe: 'raw' });
  const child = proc.child!;
  let stdout = '';
  let stderr = '';
  let lines = 0;
  if (opts.countLines)
    child.stdout?.on('data', (d: Buffer) => {
      for (let i = d.indexOf(10); i >= 0; i = d.indexOf(10, i + 1)) lines++;
    });
  else child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let hwm = 0;
  const poller = HAVE_GNU_TIME ? undefined : setInterval(() => (hwm = Math.max(hwm, child.pid ? procStatusKb(child.pid, 'VmHWM') : 0)), 20);
  const timer = setTimeout(() => killByPid(proc), opts.timeoutMs);
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((res) => {
      child.once('exit', (c, s) => res([c, s]));
      child.once('error', () => res([-1, null]));
    });
    const wallMs = performance.now() - t0;
    const cpu = meter();
    const brokerCpuS = cpu.brokers;
    // Let the pipes drain.
    await new Promise((r) => setImmediate(r));
    if (HAVE_GNU_TIME) {
      const t = readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
      return { code, signal, wallMs, peakRssMiB: t[1]! / 1024, cpuS: t[2]! + t[3]!, brokerCpuS, stdout, stderr, lines, how: 'GNU time' };
    }
    return { code, signal, wallMs, peakRssMiB: hwm / 1024, cpuS: cpu.pipeline, brokerCpuS, stdout, stderr, lines, how: '/proc' };
  } finally {
    clearTimeout(timer);
    if (poller) clearInterval(poller);
    killByPid(proc);
  }
}

// ---------------------------------------------------------------- formatting

const ratio = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');

// ---------------------------------------------------------------- the runs

type Kind = 'checker' | 'tsx' | 'kcat' | 'kcat-fw10' | 'perf';
const KINDS: Kind[] = ['checker', 'tsx', 'kcat', 'kcat-fw10', 'perf'];
const LABEL: Record<Kind, string> = {
  checker: 'checker',
  tsx: 'checker under tsx (source)',
  kcat: 'kcat',
  'kcat-fw10': 'kcat, fetch.wait.max.ms=10',
  perf: 'ConsumerPerformance',
};

interface Run {
  kind: Kind;
  round: number | 'warm-up' | 'small' | 'profile';
  records: number;
  wallMs: number;
  /** The tool's own time for the read, where it reports one (checker: checkSinkTopic; perf: start.time → end.time). */
  readMs: number;
  peakRssMiB: number;
  cpuS: number;
  brokerCpuS: number;
  load1m: number;
  check: string;
  /** perf only: fetch.nMsg.sec (the rate without its group join). */
  fetchRate?: number;
}

interface Ctx {
  cluster: LocalCluster;
  /** The entry of the compiled checker (see buildCompiled): the CLI as installed. */
  compiled: string;
  libs: string;
  log4j: string;
  consumerConfig: string;
}

interface Topic {
  name: string;
  run: string;
  records: number;
}

async function runChecker(ctx: Ctx, topic: Topic, round: Run['round'], opts: { profileDir?: string; tsx?: boolean } = {}): Promise<Run> {
  const kind: Kind = opts.tsx ? 'tsx' : 'checker';
  const label = `${kind}-${round}-${Date.now()}`;
  const load1m = loadavg()[0]!;
  const args = [
    ...(opts.tsx ? ['--import', 'tsx'] : []),
    ...(opts.profileDir ? ['--cpu-prof', '--cpu-prof-dir', opts.profileDir] : []),
    opts.tsx ? 'src/cli.ts' : ctx.compiled,
    'verify',
    'check',
    '-b',
    ctx.cluster.bootstrapServers,
    '--topic',
    topic.name,
    '--run',
    topic.run,
    '--records',
    String(topic.records),
    '--partitions',
    String(PARTITIONS),
    '--value-delta',
    '0',
    '--timeout',
    '10m',
    '--format',
    'json',
  ];
  const m = await measure('node', args, { timeoutMs: 15 * 60_000, label, cluster: ctx.cluster });
  writeFileSync(join(OUT_DIR, `${label}.out`), `${m.stdout}\n--- stderr\n${m.stderr}`);
  if (m.code !== 0) throw new Error(`verify check exited with ${m.code ?? m.signal}:\n${m.stdout.slice(-2000)}\n${m.stderr.slice(-2000)}`);
  const report = JSON.parse(m.stdout) as { ms: number; received: number; duplicates: number; lost: number; unexpected: number; wrongValue: number; orderViolations: number; violations: string[] };
  const bad = report.received !== topic.records || report.duplicates || report.lost || report.unexpected || report.wrongValue || report.orderViolations || report.violations.length;
  const check = bad ? `CHECK: ${JSON.stringify({ ...report, partitions: undefined })}` : `ok: ${fmt(report.received)} received, 0 duplicates/lost/unexpected/wrong/out of order`;
  return { kind, round, records: topic.records, wallMs: m.wallMs, readMs: report.ms, peakRssMiB: m.peakRssMiB, cpuS: m.cpuS, brokerCpuS: m.brokerCpuS, load1m, check };
}

/** kcat to /dev/null; `count` (the warm-up) pipes its stdout here instead and counts the records (one line each). */
async function runKcat(ctx: Ctx, topic: Topic, round: Run['round'], opts: { count?: boolean; noWait?: boolean } = {}): Promise<Run> {
  const kind: Kind = opts.noWait ? 'kcat-fw10' : 'kcat';
  const count = opts.count ?? false;
  const label = `${kind}-${round}-${Date.now()}`;
  const load1m = loadavg()[0]!;
  const args = ['-C', '-b', ctx.cluster.bootstrapServers, '-t', topic.name, '-X', 'isolation.level=read_committed', ...(opts.noWait ? ['-X', 'fetch.wait.max.ms=10'] : []), '-e', '-o', 'beginning', '-q'];
  const m = await measure('kcat', args, { devNull: !count, countLines: count, timeoutMs: 10 * 60_000, label, cluster: ctx.cluster });
  writeFileSync(join(OUT_DIR, `${label}.err`), m.stderr);
  if (m.code !== 0) throw new Error(`kcat exited with ${m.code ?? m.signal}:\n${m.stderr.slice(-2000)}`);
  let check = 'not counted (stdout to /dev/null)';
  if (count) {
    const lines = m.lines;
    check = lines === topic.records ? `ok: ${fmt(lines)} records counted` : `CHECK: ${lines} records counted, expected ${topic.records}`;
  }
  return { kind, round, records: topic.records, wallMs: m.wallMs, readMs: NaN, peakRssMiB: m.peakRssMiB, cpuS: m.cpuS, brokerCpuS: m.brokerCpuS, load1m, check };
}

async function runPerf(ctx: Ctx, topic: Topic, round: Run['round']): Promise<Run> {
  const label = `perf-${round}-${Date.now()}`;
  const load1m = loadavg()[0]!;
  // The JVM options of kafka-consumer-perf-test.sh (-Xmx512M) and kafka-run-class.sh.
  const args = [
    '-Xmx512M',
    '-server',
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:InitiatingHeapOccupancyPercent=35',
    '-XX:+ExplicitGCInvokesConcurrent',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${ctx.log4j}`,
    '-cp',
    `${ctx.libs}/*`,
    'org.apache.kafka.tools.ConsumerPerformance',
    '--bootstrap-server',
    ctx.cluster.bootstrapServers,
    '--topic',
    topic.name,
    '--num-records',
    String(topic.records),
    '--group',
    uniqueName('bench-perf'),
    '--command-config',
    ctx.consumerConfig,
    '--timeout',
    '60000',
  ];
  const m = await measure('java', args, { timeoutMs: 10 * 60_000, label, cluster: ctx.cluster });
  writeFileSync(join(OUT_DIR, `${label}.out`), `${m.stdout}\n--- stderr\n${m.stderr}`);
  if (m.code !== 0) throw new Error(`ConsumerPerformance exited with ${m.code ?? m.signal}:\n${m.stdout.slice(-2000)}\n${m.stderr.slice(-2000)}`);
  const lines = m.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
  const hi = lines.findIndex((l) => l.startsWith('start.time'));
  if (hi < 0 || !lines[hi + 1]) throw new Error(`ConsumerPerformance printed no result:\n${m.stdout}\n${m.stderr}`);
  const head = lines[hi]!.split(',').map((x) => x.trim());
  const vals = lines[hi + 1]!.split(',').map((x) => x.trim());
  const get = (k: string) => vals[head.indexOf(k)] ?? '';
  const consumed = Number(get('data.consumed.in.nMsg'));
  const parseTime = (s: string) => Date.parse(s.replace(/^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d):(\d{3})$/, '$1T$2.$3'));
  const readMs = parseTime(get('end.time')) - parseTime(get('start.time'));
  const check = consumed === topic.records ? `ok: ${fmt(consumed)} consumed` : `CHECK: ${consumed} consumed, expected ${topic.records}`;
  return {
    kind: 'perf',
    round,
    records: topic.records,
    wallMs: m.wallMs,
    readMs,
    peakRssMiB: m.peakRssMiB,
    cpuS: m.cpuS,
    brokerCpuS: m.brokerCpuS,
    load1m,
    check,
    fetchRate: Number(get('fetch.nMsg.sec')),
  };
}

// ---------------------------------------------------------------- CPU profile summary

function category(url: string, fn: string): string {
  if (fn === '(idle)') return 'idle (waiting for I/O)';
  if (fn === '(garbage collector)') return 'garbage collector';
  if (fn === '(program)') return 'V8/native (program)';
  if (url.includes('node_modules/kafkajs/')) return 'kafkajs';
  if (url.includes('node_modules/tsx') || url.includes('node_modules/esbuild')) return 'tsx/esbuild (start-up)';
  if (url.includes('node_modules/')) return 'other node_modules';
  // The compiled checker runs from <out>/compiled/dist/, the one under tsx from src/.
  if (/\/(src|dist)\/verify\//.test(url)) return 'eoswatch verify/ (checker, reader)';
  if (/\/(src|dist)\//.test(url)) return 'eoswatch, other modules';
  if (url.startsWith('node:') || url === '') return 'node core / builtins';
  return 'other';
}

// ---------------------------------------------------------------- environment

async function versions(): Promise<Record<string, string>> {
  const java = await javaVersion();
  const kcat = SKIP.has('kcat')
    ? 'not run'
    : await execFileP('kcat', ['-V']).then(
        (r) => {
          const m = /Version (\S+) \(.*librdkafka (\S+)/.exec(r.stdout + r.stderr);
          return m ? `${m[1]} (librdkafka ${m[2]})` : (r.stdout + r.stderr).split('\n')[0]!;
        },
        () => 'not installed',
      );
  const kafkajs = kafkajsVersion();
  const { rev, dirty } = await gitState(ROOT, 'src/verify');
  const eoswatch = rev ? `this checkout at ${rev}${dirty ? ' with uncommitted changes in src/verify/' : ''}` : ROOT;
  return { node: process.version, java, kcat, kafkajs, eoswatch };
}

// ---------------------------------------------------------------- RESULTS.md

const SECTION_BEGIN = '<!-- BEGIN CHECKER BENCH (written by bench/checker.bench.ts; inside the notes block, so bench/pipeline.bench.ts keeps it) -->';
const SECTION_END = '<!-- END CHECKER BENCH -->';
const CHECKER_NOTES_BEGIN = '<!-- BEGIN CHECKER NOTES (hand-written; kept when bench/checker.bench.ts rewrites its section) -->';
const CHECKER_NOTES_END = '<!-- END CHECKER NOTES -->';

interface Report {
  startedAt: Date;
  totalS: number;
  load0: number[];
  load1: number[];
  env: Record<string, string>;
  kafka: string;
  produceMs: number;
  smallProduceMs: number;
  recordBytes: number;
  fuzz?: { cases: number; scannedShare: number };
  rounds: Run[][];
  warm: Run[];
  small: Run[];
  prof?: { run: Run; file?: string };
}

function section(r: Report): string {
  const L: string[] = [];
  const line = (s = '') => L.push(s);
  const all = r.rounds.flat();
  const of = (k: Kind) => all.filter((x) => x.kind === k);
  const rate = (x: Run) => (x.records / x.wallMs) * 1000;
  const ownClock = (k: Kind) => k === 'checker' || k === 'tsx' || k === 'perf';
  const readRate = (x: Run) => (ownClock(x.kind) ? (x.records / x.readMs) * 1000 : rate(x));
  const med = (k: Kind, f: (x: Run) => number) => median(of(k).map(f));
  /** The fastest counted run: the one least disturbed by the other work on the machine. */
  const best = (k: Kind, f: (x: Run) => number) => Math.max(...of(k).map(f).filter((v) => Number.isFinite(v)));
  const cpuUs = (x: Run) => (x.cpuS / x.records) * 1e6;
  const has = (k: Kind) => of(k).length > 0;
  const cmd = `npm run bench:checker${N !== 1_000_000 ? ` -- --records ${N}` : ''}`;
  const opts = [ROUNDS !== 4 ? `--rounds ${ROUNDS}` : '', NODES !== 1 ? `--nodes ${NODES}` : '', SMALL !== 100_000 ? `--small-records ${SMALL}` : '', WARMUP ? '' : '--no-warmup', SKIP.size ? `--skip ${[...SKIP].join(',')}` : '']
    .filter(Boolean)
    .join(' ');
  line(SECTION_BEGIN);
  line(`## verify check (${fmt(N)} records)`);
  line();
  line(
    `${generatedBy(`${cmd}${opts ? `${N !== 1_000_000 ? ' ' : ' -- '}${opts}` : ''}`, 'bench/checker.bench.ts', r.startedAt, r.totalS)} ` +
      '`eoswatch verify check` against two plain consumers reading the same topic to its end, read_committed, one process each, side by side in one invocation.',
  );
  line();
  const cpu = machine();
  line(
    mdTable(
      ['what', 'value'],
      [
        ['machine', `nproc ${cpu.nproc} (${cpu.model}), ${fmt(cpu.memGiB, 1)} GiB memory; **shared**: other people's tests and benchmarks ran on it at the same time`],
        loadAverageRow(r.load0, r.load1),
        ['Node', r.env.node ?? ''],
        ['Kafka (broker, ConsumerPerformance)', `${r.kafka}: ${NODES} KRaft broker+controller node${NODES > 1 ? 's' : ''} on loopback (harness/localcluster), heap 512m`],
        ['Java', r.env.java ?? ''],
        ['kcat', r.env.kcat ?? ''],
        ['kafkajs (the checker\'s client)', r.env.kafkajs ?? ''],
        ['eoswatch measured', r.env.eoswatch ?? ''],
      ],
    ),
  );
  line();
  line(
    `**Input**: one topic, ${PARTITIONS} partitions, RF ${RF}, holding ${fmt(N)} records written by \`produceVerifyRecords\` (what \`eoswatch verify produce\` writes; idempotent producer, not transactional, in ${fmt(r.produceMs / 1000, 1)} s): JSON values of ${fmt(r.recordBytes, 1)} bytes on average plus a key, ${fmt((N * r.recordBytes) / 2 ** 20, 0)} MiB of values. Nothing transforms them, so the check runs with \`--value-delta 0\`.`,
  );
  line();
  line('**Runs**, each a fresh process timed from spawn to exit, stdout of the peers to /dev/null:');
  line();
  line(`- **checker**: \`node <out>/eoswatch.mjs verify check -b … --topic … --run … --records ${N} --partitions ${PARTITIONS} --value-delta 0 --format json\`; it reads every partition from the beginning to the end it had at the start (read_committed, raw Fetch requests over kafkajs' connections, record batches decoded by src/kafka/record-batches.ts, no consumer group), judges every record, and must report all ${fmt(N)} received with no duplicate, loss, unexpected or wrong value and no order violation.`);
  if (!SKIP.has('kcat')) line('- **kcat**: `kcat -C -b … -t … -X isolation.level=read_committed -e -o beginning -q > /dev/null` (librdkafka, every partition assigned, exits at the end of all partitions); the warm-up run piped its output here instead and counted the records.');
  if (!SKIP.has('tsx')) line('- extra, **checker under tsx**: the same command run from the TypeScript source, `node --import tsx src/cli.ts` (how the tests and a checkout without a build run it): the same code with tsx\'s loader and compilation in its start-up.');
  if (!SKIP.has('kcat-fw10')) line('- extra, **kcat, fetch.wait.max.ms=10**: kcat as above plus `-X fetch.wait.max.ms=10`. kcat only sees the end of a partition in a fetch response that returns nothing, and by default the broker holds such a fetch for 500 ms (librdkafka\'s fetch.wait.max.ms): the plain kcat runs above include that wait (it took 1.0–1.5 s on an empty topic here, 0.03 s with this option).');
  if (!SKIP.has('perf')) line(`- **ConsumerPerformance**: \`java -Xmx512M … -cp '<kafka libs>/*' org.apache.kafka.tools.ConsumerPerformance --num-records ${N} --command-config <isolation.level=read_committed> --group <fresh>\` (the JVM options of \`kafka-consumer-perf-test.sh\`); it must report ${fmt(N)} consumed.`);
  line(`- **Order**: ${WARMUP ? 'one warm-up round of every run, not counted; then ' : ''}${ROUNDS} rounds in ABBA order (odd rounds ${KINDS.filter((k) => !SKIP.has(k)).map((k) => LABEL[k]).join(' → ')}, even rounds the reverse). Tables show the median over rounds.`);
  line(`- **Rates**: "records/s" is records / (spawn → exit), process start-up included (Node loading the CLI's modules, the JVM). "read records/s" uses the tool's own clock where it has one: the checker's \`ms\` (admin connect, metadata, read, judgement: everything in \`checkSinkTopic\`), ConsumerPerformance's start.time → end.time (group join included); kcat has none, so only its records/s is given (its process starts in a few ms, but see the end-of-partition wait below).`);
  line(`- **Peak RSS** and CPU (user + sys) from ${HAVE_GNU_TIME ? 'GNU `/usr/bin/time` (ru_maxrss of the measured process)' : '/proc (VmHWM polled every 20 ms; CPU of the reaped child)'}; broker CPU from /proc over the same time.`);
  line();
  line('### Results (median over rounds)');
  line();
  const rows: (string | number)[][] = [];
  const row = (k: Kind, label: string) => {
    if (!has(k)) return;
    rows.push([
      label,
      fmt(med(k, rate)),
      fmt(best(k, rate)),
      fmt(med(k, (x) => x.wallMs / 1000), 2),
      ownClock(k) ? `${fmt(med(k, readRate))} (${fmt(best(k, readRate))})` : '',
      fmt(med(k, (x) => x.peakRssMiB)),
      `${fmt(med(k, cpuUs), 1)} / ${fmt(med(k, (x) => (x.brokerCpuS / x.records) * 1e6), 1)}`,
    ]);
  };
  row('checker', '**eoswatch verify check** (compiled, as installed)');
  row('kcat', '**kcat**');
  row('perf', '**ConsumerPerformance**');
  row('tsx', 'extra: eoswatch verify check under tsx (`node --import tsx src/cli.ts`)');
  row('kcat-fw10', 'extra: kcat -X fetch.wait.max.ms=10');
  line(mdTable(['', 'records/s (incl. start-up)', 'best run records/s', 'wall s', 'read records/s, own clock (best run)', 'peak RSS MiB', 'CPU µs per record: tool / broker'], rows));
  line();
  const ratioRows: string[][] = [];
  const target = (x: number, goal: number) => (Number.isFinite(x) ? (x >= goal ? 'yes' : '**no**') : '');
  /** A ratio of the medians and of the best runs; `goal`: the target it is compared with, if any. */
  const addRatio = (name: string, a: Kind, fa: (x: Run) => number, b: Kind, fb: (x: Run) => number, goal?: number) => {
    if (!has(a) || !has(b)) return;
    const m = med(a, fa) / med(b, fb);
    const x = best(a, fa) / best(b, fb);
    ratioRows.push([name, goal ? `**${ratio(m)}**` : ratio(m), ratio(x), goal ? `>= ${goal}` : '(information)', goal ? `${target(m, goal)} / ${target(x, goal)}` : '']);
  };
  addRatio('**checker / kcat**, records/s incl. start-up', 'checker', rate, 'kcat', rate, KCAT_GOAL);
  addRatio('checker / kcat, the checker\'s read records/s (own clock, no start-up)', 'checker', readRate, 'kcat', rate, KCAT_GOAL);
  addRatio('**checker / ConsumerPerformance**, records/s incl. start-up', 'checker', rate, 'perf', rate, PERF_GOAL);
  addRatio('checker / ConsumerPerformance, read records/s (both own clocks)', 'checker', readRate, 'perf', readRate, PERF_GOAL);
  addRatio('checker under tsx / kcat, records/s incl. start-up', 'tsx', rate, 'kcat', rate);
  addRatio('checker under tsx / ConsumerPerformance, records/s incl. start-up', 'tsx', rate, 'perf', rate);
  addRatio('the checker\'s read records/s / kcat -X fetch.wait.max.ms=10', 'checker', readRate, 'kcat-fw10', rate);
  {
    const rss = med('checker', (x) => x.peakRssMiB);
    ratioRows.push([`**checker peak RSS** (${fmt(N)} records), MiB`, `**${fmt(rss)}**`, fmt(Math.min(...of('checker').map((x) => x.peakRssMiB))), `<= ${RSS_GOAL_MIB}`, rss <= RSS_GOAL_MIB ? 'yes' : '**no**']);
  }
  if (has('kcat')) ratioRows.push(['CPU per record, checker / kcat', ratio(med('checker', cpuUs) / med('kcat', cpuUs)), '', '(information)', '']);
  if (has('perf')) ratioRows.push(['CPU per record, checker / ConsumerPerformance', ratio(med('checker', cpuUs) / med('perf', cpuUs)), '', '(information)', '']);
  if (has('kcat')) ratioRows.push(['peak RSS, checker / kcat', ratio(med('checker', (x) => x.peakRssMiB) / med('kcat', (x) => x.peakRssMiB)), '', '(information)', '']);
  if (has('perf')) ratioRows.push(['peak RSS, checker / ConsumerPerformance', ratio(med('checker', (x) => x.peakRssMiB) / med('perf', (x) => x.peakRssMiB)), '', '(information)', '']);
  line(mdTable(['ratio', 'medians', 'best runs', 'target', 'met: medians / best runs'], ratioRows));
  line();
  line('"best runs" divides the fastest counted run of each by the other\'s fastest: on a shared machine the fastest run is the one least disturbed by other work.');
  line();
  if (r.small.length) {
    const big = of('checker');
    line(
      `**Memory in N**: the checker's peak RSS was ${fmt(median(r.small.map((x) => x.peakRssMiB)))} MiB for ${fmt(SMALL)} records (${r.small.map((x) => fmt(x.peakRssMiB)).join(' / ')}; ${fmt(median(r.small.map((x) => (x.records / x.readMs) * 1000)))} read records/s) and ${fmt(median(big.map((x) => x.peakRssMiB)))} MiB for ${fmt(N)} (${big.map((x) => fmt(x.peakRssMiB)).join(' / ')}): ${fmt(N / SMALL)}× the records, ${ratio(median(big.map((x) => x.peakRssMiB)) / median(r.small.map((x) => x.peakRssMiB)))}× the peak memory.`,
    );
    line();
  }
  if (r.fuzz)
    line(
      `**Same verdicts**: before measuring, \`bench/checker-scan-fuzz.ts\` fed ${fmt(r.fuzz.cases)} generated values (canonical records, other layouts, wrong types, repeated keys, escapes, non-ASCII, mutated bytes) both as Buffers and as strings to two checkers; ${fmt(r.fuzz.scannedShare * 100, 1)}% took the byte fast path, the rest JSON.parse, and every result was identical.`,
    );
  line();
  line('### Every run');
  line();
  const runRows: (string | number)[][] = [];
  const label = (x: Run) => LABEL[x.kind];
  const add = (x: Run) =>
    runRows.push([
      String(x.round),
      label(x),
      fmt(x.records),
      fmt(x.wallMs / 1000, 2),
      fmt(rate(x)),
      !ownClock(x.kind) ? '' : `${fmt(readRate(x))}${x.fetchRate ? ` (fetch only: ${fmt(x.fetchRate)})` : ''}`,
      fmt(x.peakRssMiB),
      `${fmt(x.cpuS, 2)} / ${fmt(x.brokerCpuS, 2)}`,
      x.load1m.toFixed(1),
      x.check,
    ]);
  r.warm.forEach(add);
  all.forEach(add);
  r.small.forEach(add);
  if (r.prof) add(r.prof.run);
  line('In the order they ran. "fetch only" is ConsumerPerformance\'s fetch.nMsg.sec, which leaves its group join out.');
  line();
  line(mdTable(['round', 'run', 'records', 'wall s', 'records/s', 'read records/s', 'peak RSS MiB', 'CPU s: tool / broker', 'load 1m', 'check'], runRows));
  line();
  if (r.prof?.file) {
    const s = summariseProfile(r.prof.file, { category, top: 12 });
    line(`### CPU profile of the checker (\`node --cpu-prof\`, one separate run, not counted)`);
    line();
    line(`The whole \`verify check\` process, start-up included: ${fmt(s.totalMs / 1000, 2)} s of main-thread samples; ${fmt((r.prof.run.records / r.prof.run.readMs) * 1000)} read records/s in this run.`);
    line();
    line(profileTables(s));
    line();
  }
  line(`Raw outputs, GNU time files and the profile: \`${fromRoot(OUT_DIR)}/\` (git-ignored).`);
  line();
  line('### Notes');
  line();
  line(keptBlock(argv.out!, CHECKER_NOTES_BEGIN, CHECKER_NOTES_END));
  line(SECTION_END);
  return L.join('\n');
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const startedAt = new Date();
  const load0 = loadavg();
  log(`records ${N}, rounds ${ROUNDS}, nodes ${NODES}; artifacts in ${OUT_DIR}`);
  let fuzz: Report['fuzz'];
  if (FUZZ > 0) {
    const f = fuzzCheckerScan(FUZZ);
    if (f.mismatch) throw new Error(`the checker's fast path and its JSON.parse path disagree: ${f.mismatch}`);
    fuzz = { cases: f.cases, scannedShare: f.scannedShare };
    log(`fuzz: ${f.cases} values, ${(f.scannedShare * 100).toFixed(1)}% on the fast path, identical results`);
  }
  const env = await versions();
  if (!SKIP.has('kcat') && env.kcat === 'not installed') throw new Error('kcat is not installed (Debian: apt-get install kcat), or run with --skip kcat');
  const { version, libs } = await kafkaDist();
  const log4j = writeLog4j(OUT_DIR);
  const consumerConfig = join(OUT_DIR, 'consumer.properties');
  writeFileSync(consumerConfig, 'isolation.level=read_committed\n');
  const compiled = await buildCompiled(ROOT, join(OUT_DIR, 'compiled'));
  if (!compiled) throw new Error('the tsc build of this checkout failed (see above): the checker is measured as the installed CLI runs it');
  const measured = await withCluster({ nodes: NODES as 1 | 3, version }, async (cluster) => {
    const ctx: Ctx = { cluster, libs, log4j, consumerConfig, compiled };
    const rounds: Run[][] = [];
    const warm: Run[] = [];
    const small: Run[] = [];
    let prof: Report['prof'];
    let smallProduceMs = 0;
    const kafka = kafkaFor(cluster.brokers);
    const make = async (records: number, label: string): Promise<[Topic, number]> => {
      const name = uniqueName(`bench-checker-${label}`);
      await createTopic(cluster.brokers, name, PARTITIONS, RF);
      log(`producing ${records} verification records into ${name}`);
      const m = await produceVerifyRecords(kafka, name, { records });
      const end = await sumHighWatermarks(cluster.brokers, name);
      if (end !== records) throw new Error(`${name} holds ${end} records, expected ${records}`);
      return [{ name, run: m.run, records }, m.ms];
    };
    const [topic, produceMs] = await make(N, 'big');
    // JSON.stringify of a record of this run at a typical sequence: the value size.
    const recordBytes = JSON.stringify({ id: `${topic.run}-0-${Math.floor(N / PARTITIONS / 2)}`, ts: Date.now(), value: Math.floor(N / PARTITIONS / 2), run: topic.run, p: 0, seq: Math.floor(N / PARTITIONS / 2) }).length;
    let smallTopic: Topic | undefined;
    if (SMALL > 0) [smallTopic, smallProduceMs] = await make(SMALL, 'small');
    const describe = (x: Run) =>
      `${x.kind}: ${fmt(x.wallMs / 1000, 2)} s wall, ${fmt((x.records / x.wallMs) * 1000)} rec/s${Number.isFinite(x.readMs) ? `, read ${fmt((x.records / x.readMs) * 1000)} rec/s` : ''}, peak RSS ${fmt(x.peakRssMiB)} MiB, CPU ${fmt(x.cpuS, 2)} s, ${x.check}`;
    const one = async (k: Kind, round: Run['round'], count = false): Promise<Run> => {
      const x =
        k === 'checker' || k === 'tsx'
          ? await runChecker(ctx, topic, round, { tsx: k === 'tsx' })
          : k === 'kcat' || k === 'kcat-fw10'
            ? await runKcat(ctx, topic, round, { count, noWait: k === 'kcat-fw10' })
            : await runPerf(ctx, topic, round);
      log(`  ${describe(x)}`);
      if (x.check.startsWith('CHECK')) throw new Error(`${k} in round ${round}: ${x.check}`);
      return x;
    };
    const kinds = KINDS.filter((k) => !SKIP.has(k));
    if (WARMUP) {
      log('warm-up round (not counted)');
      for (const k of kinds) warm.push(await one(k, 'warm-up', k === 'kcat'));
    } else if (!SKIP.has('kcat')) {
      warm.push(await one('kcat', 'warm-up', true));
    }
    for (let r = 1; r <= ROUNDS; r++) {
      log(`round ${r} of ${ROUNDS}`);
      const order = r % 2 === 1 ? kinds : [...kinds].reverse();
      const runs: Run[] = [];
      for (const k of order) runs.push(await one(k, r));
      rounds.push(runs);
    }
    if (smallTopic) {
      log(`checker on ${SMALL} records (memory in N)`);
      for (let i = 0; i < Math.min(2, ROUNDS); i++) {
        const x = await runChecker(ctx, smallTopic, 'small');
        log(`  ${describe(x)}`);
        if (x.check.startsWith('CHECK')) throw new Error(`checker on the small topic: ${x.check}`);
        small.push(x);
      }
    }
    if (!argv['no-profile']) {
      const dir = join(OUT_DIR, 'profile');
      mkdirSync(dir, { recursive: true });
      log('checker under --cpu-prof (not counted)');
      const x = await runChecker(ctx, topic, 'profile', { profileDir: dir });
      log(`  ${describe(x)}`);
      const f = readdirSync(dir).find((n) => n.endsWith('.cpuprofile'));
      prof = { run: x, ...(f ? { file: join(dir, f) } : {}) };
    }
    return { kafka: cluster.version, produceMs, smallProduceMs, recordBytes, rounds, warm, small, prof };
  });
  const { kafka, produceMs, smallProduceMs, recordBytes, rounds, warm, small, prof } = measured;
  const report: Report = {
    startedAt,
    totalS: (Date.now() - startedAt.getTime()) / 1000,
    load0,
    load1: loadavg(),
    env,
    kafka,
    produceMs,
    smallProduceMs,
    recordBytes,
    ...(fuzz ? { fuzz } : {}),
    rounds,
    warm,
    small,
    ...(prof ? { prof } : {}),
  };
  writeFileSync(join(OUT_DIR, 'results.json'), JSON.stringify(report, null, 1));
  const text = section(report);
  writeSection(argv.out!, SECTION_BEGIN, SECTION_END, text);
  const all = rounds.flat();
  const medRate = (k: Kind) => median(all.filter((x) => x.kind === k).map((x) => (x.records / x.wallMs) * 1000));
  process.stdout.write(
    `\nrecords/s incl. start-up (median): ${KINDS.map((k) => `${LABEL[k]} ${fmt(medRate(k))}`).join(', ')}\n` +
      `checker/kcat ${ratio(medRate('checker') / medRate('kcat'))}, checker/ConsumerPerformance ${ratio(medRate('checker') / medRate('perf'))} (targets >= ${KCAT_GOAL} and >= ${PERF_GOAL})\nwritten to ${argv.out}\n`,
  );
}

runMain(main);
