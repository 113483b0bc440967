// Benchmark: the transactions service (src/coordinator/transactions-service.ts) tailing
// __transaction_state while 1,000 transactional ids in 100 applications commit 2,000
// transactions/s, beside Kafka's own kafka-transactions.sh (TransactionsCommand) getting the same
// picture once. One real 1-node local cluster (__transaction_state with its default 50
// partitions), in one run:
//
//   load      bench/java/TxnLoad.java: --apps × --ids KafkaProducers (ids app<NNN>-<i>) on
//             --threads threads, paced to --rate transactions/s, --records records each
//   daemon    `eoswatch run` compiled by tsc as the installed CLI runs it (dist/, no tsx), only the
//             transactions service (interval 1 s, a transactions.patterns entry naming app<NNN>);
//             over --seconds after --warmup: CPU (utime+stime from /proc/<pid>/stat ÷ wall),
//             RSS (VmRSS every second, VmHWM), the tail's lag (below), /metrics scraped once a
//             second (its cost is in the CPU), the eos_coordinator_* series count
//   profile   a second daemon, the same, under `node --cpu-prof` (not counted) at the same time
//   peer      while the load goes on: `TransactionsCommand list` (one JVM, as the script runs
//             it), `describe --transactional-id` one JVM per id for --describe-sample ids (the
//             script's way; the 1,000 are extrapolated), and list + describe of every listed id
//             in one warm JVM (bench/java/TxnDescribeAll.java, the tool's own code unchanged)
//
// The tail's lag: at each scrape (time t) the service's count of committed transactions S(t) is
// compared with the generator's cumulative count of commitTransaction() calls that returned, G
// (reported every 100 ms); lag(t) = t − (the first time G reached S(t)), 0 when G had not yet.
//
//   node --import tsx bench/transactions.bench.ts [--apps 100] [--ids 10] [--rate 2000]
//        [--seconds 60] [--warmup 10] [--threads 40] [--records 3] [--describe-sample 20]
//        [--no-profile] [--out bench/RESULTS.md]
//
// The results go into their own section of bench/RESULTS.md (between the TRANSACTIONS BENCH
// markers). Every process started here is stopped by pid, also on failure.
import type { ChildProcess } from 'node:child_process';
import type { TrackedProcess } from '../src/runtime/process.js';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ensureTopics } from '../src/kafka/admin.js';
import { parsePrometheusText } from '../src/metrics/text-format.js';
import { systemClock } from '../src/runtime/clock.js';
import { pollUntil, PollTimeoutError } from '../src/runtime/poll-until.js';
import { kafkaFor } from '../test/harness/index.js';
import {
  BENCH_DIR,
  ROOT,
  buildCompiled,
  execFileP,
  fmt,
  fromRoot,
  generatedBy,
  gitState,
  installEmergencyStop,
  intOption,
  javaVersion,
  keptBlock,
  kafkaDist,
  killByPid,
  loadAverageRow,
  log,
  machine,
  makeOutDir,
  mdTable,
  median,
  printUsageAndExit,
  procCpu,
  procStatusKb,
  profileTables,
  quantile,
  runMain,
  startProcess,
  stopProcess,
  summariseProfile,
  withCluster,
  writeLog4j,
  writeSection,
  untilChild,
} from './common.js';

const { values: argv } = parseArgs({
  options: {
    apps: { type: 'string', default: '100' },
    ids: { type: 'string', default: '10' },
    rate: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '10' },
    threads: { type: 'string', default: '40' },
    records: { type: 'string', default: '3' },
    'describe-sample': { type: 'string', default: '20' },
    'no-profile': { type: 'boolean', default: false },
    out: { type: 'string', default: join(BENCH_DIR, 'RESULTS.md') },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (argv.help) printUsageAndExit(import.meta.url);
const APPS = intOption(argv.apps, '--apps', 1);
const IDS = intOption(argv.ids, '--ids', 1);
const RATE = intOption(argv.rate, '--rate', 1);
const SECONDS = intOption(argv.seconds, '--seconds', 5);
const WARMUP = intOption(argv.warmup, '--warmup', 0);
const THREADS = intOption(argv.threads, '--threads', 1);
const RECORDS = intOption(argv.records, '--records', 1);
const SAMPLE = intOption(argv['describe-sample'], '--describe-sample', 1);
const TOTAL_IDS = APPS * IDS;
if (THREADS > TOTAL_IDS) throw new Error('--threads: expected at most --apps × --ids');
const TOPIC = 'bench-txn';
const TOPIC_PARTITIONS = 10;
const PATTERN = '^(?<app>app\\d{3})-\\d+$';

const OUT_DIR = makeOutDir('transactions-');
installEmergencyStop();

const SECTION_BEGIN = '<!-- BEGIN TRANSACTIONS BENCH (written by bench/transactions.bench.ts) -->';
const SECTION_END = '<!-- END TRANSACTIONS BENCH -->';
const NOTES_BEGIN = '<!-- BEGIN TRANSACTIONS NOTES (hand-written; kept when bench/transactions.bench.ts rewrites its section) -->';
const NOTES_END = '<!-- END TRANSACTIONS NOTES -->';

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

// ---------------------------------------------------------------- the load generator

interface Generator {
  proc: TrackedProcess;
  child: ChildProcess;
  /** [epochMs, committed, failed] every 100 ms from GO on. */
  samples: [number, number, number][];
  end?: { at: number; committed: number; failed: number; seconds: number };
  initMs: number;
  send: (line: string) => void;
  ended: Promise<void>;
}

async function startGenerator(classes: string, libs: string, log4j: string, bootstrap: string): Promise<Generator> {
  const args = ['-Xms256m', '-Xmx768m', '-Xss512k', `-Dlog4j2.configurationFile=${log4j}`, '-cp', `${classes}:${libs}/*`, 'TxnLoad', bootstrap, TOPIC, String(APPS), String(IDS), String(RATE), String(WARMUP + SECONDS + 900), String(THREADS), String(RECORDS)];
  const proc = startProcess('java', args, { cwd: OUT_DIR, stdin: 'pipe' });
  const child = proc.child!;
  let err = '';
  child.stderr!.on('data', (d: string) => (err = (err + d).slice(-50_000)));
  const g: Generator = { proc, child, samples: [], initMs: NaN, send: (l) => child.stdin!.write(`${l}\n`), ended: proc.exited!.then(() => undefined) };
  child.once('exit', () => {
    writeFileSync(join(OUT_DIR, 'generator.stderr.log'), err);
  });
  let ready: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const f = line.split(' ');
    if (f[0] === 'C') g.samples.push([Number(f[1]), Number(f[2]), Number(f[3])]);
    else if (f[0] === 'READY') {
      g.initMs = Number(f[2]);
      ready();
    } else if (f[0] === 'END') g.end = { at: Number(f[1]), committed: Number(f[2]), failed: Number(f[3]), seconds: Number(f[4]) };
  });
  const deadline = setTimeout(() => killByPid(proc), 300_000);
  await Promise.race([isReady, g.ended.then(() => Promise.reject(new Error(`the generator exited before READY:\n${err.slice(-3000)}`)))]);
  clearTimeout(deadline);
  return g;
}

// ---------------------------------------------------------------- the daemon

interface Daemon {
  proc: TrackedProcess;
  child: ChildProcess;
  pid: number;
  url: string;
  label: string;
}

function configYaml(brokers: string, port: number): string {
  return [
    `http: { host: 127.0.0.1, port: ${port} }`,
    'log: { level: warn, format: json }',
    `kafka: { brokers: [${brokers}] }`,
    'pipeline: { enabled: false }',
    'lsoMonitor: { enabled: false }',
    'lag: { enabled: false }',
    'audit: { enabled: false }',
    `transactions: { enabled: true, interval: 1s, patterns: ['${PATTERN}'] }`,
    '',
  ].join('\n');
}

/** Sums the samples of `name` (optionally those whose labels match). */
function sumOf(text: string, name: string, where: (l: Record<string, string>) => boolean = () => true): number {
  return parsePrometheusText(text)
    .samples.filter((s) => s.name === name && where(s.labels))
    .reduce((a, s) => a + s.value, 0);
}

async function startDaemon(entry: string, brokers: string, label: string, nodeArgs: string[] = []): Promise<Daemon> {
  const port = await freePort();
  const config = join(OUT_DIR, `${label}.yaml`);
  writeFileSync(config, configYaml(brokers, port));
  const proc = startProcess('node', [...nodeArgs, entry, 'run', '-c', config]);
  const child = proc.child!;
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: string) => (out = (out + d).slice(-50_000)));
  child.stderr!.on('data', (d: string) => (err = (err + d).slice(-50_000)));
  child.once('exit', () => {
    writeFileSync(join(OUT_DIR, `${label}.log`), `${out}\n--- stderr\n${err}`);
  });
  const url = `http://127.0.0.1:${port}`;
  // Ready, with every transactional id of the generator known (the baseline read). A fetch that
  // fails (not listening yet) is asked again.
  await untilChild(
    `${label} ready with ${TOTAL_IDS} transactional ids`,
    child,
    async () => (await fetch(`${url}/readyz`)).status === 200 && sumOf(await (await fetch(`${url}/metrics`)).text(), 'eos_coordinator_transactional_ids') >= TOTAL_IDS,
    { timeoutMs: 180_000, intervalMs: 500, tail: () => `${out.slice(-3000)}\n${err.slice(-3000)}` },
  );
  return { proc, child, pid: child.pid!, url, label };
}

// ---------------------------------------------------------------- the peer

interface PeerRun {
  wallMs: number;
  cpuS: number;
  ok: boolean;
  out: string;
}

/** One process to its end: wall time and its CPU (our reaped children's cutime+cstime grow by it; no other child of ours exits meanwhile). */
async function timedProcess(cmd: string, args: string[]): Promise<PeerRun> {
  const c0 = procCpu('self')[1];
  const t0 = performance.now();
  let ok = true;
  let out = '';
  try {
    const r = await execFileP(cmd, args, { cwd: OUT_DIR, maxBuffer: 64 * 1024 * 1024 });
    out = r.stdout;
  } catch (err) {
    ok = false;
    out = String((err as { stdout?: string }).stdout ?? '') + String((err as { stderr?: string }).stderr ?? (err as Error).message);
  }
  return { wallMs: performance.now() - t0, cpuS: procCpu('self')[1] - c0, ok, out };
}

// ---------------------------------------------------------------- the report

interface Sample {
  at: number;
  serviceCommitted: number;
  rssKb: number;
  load1: number;
}

interface Report {
  startedAt: Date;
  totalS: number;
  load0: number[];
  load1: number[];
  loadDuring: number[];
  kafka: string;
  java: string;
  rev: { rev: string; dirty: boolean };
  initMs: number;
  /** After the load stopped: the generator's committed and failed transactions, the service's committed count. */
  totals: { generator: number; generatorFailed: number; service: number };
  window: { s: number; genCommitted: number; genFailed: number; serviceCommitted: number; serviceAborted: number; cpuS: number; rssMedianMiB: number; rssEndMiB: number; hwmMiB: number; brokerCpuS: number; generatorCpuS: number };
  lags: number[];
  series: { total: number; byName: [string, number][]; applications: number; withId: number; bytes: number };
  peer: { list: PeerRun; listIds: number; describes: PeerRun[]; describeOk: number; warm?: PeerRun & { listMs: number; describeMs: number; ids: number; lines: number; failures: number } };
  profile?: string;
}

const CATEGORY = (url: string, fn: string): string => {
  if (fn === '(garbage collector)') return 'garbage collector';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'V8/native (program)';
  if (url.includes('/prom-client/')) return 'prom-client';
  if (url.includes('/kafkajs/')) return 'kafkajs';
  if (url.includes('/node_modules/')) return 'other node_modules';
  if (url.includes('/dist/kafka/')) return 'eoswatch: src/kafka (fetch, decode)';
  if (url.includes('/dist/coordinator/')) return 'eoswatch: src/coordinator';
  if (url.includes('/dist/')) return 'eoswatch: other';
  if (url.startsWith('node:') || url === '') return 'node core / builtins';
  return 'other';
};

function section(r: Report): string {
  const L: string[] = [];
  const line = (s = '') => L.push(s);
  const m = machine();
  const w = r.window;
  const genRate = w.genCommitted / w.s;
  const svcRate = w.serviceCommitted / w.s;
  const cpuPct = (100 * w.cpuS) / w.s;
  const lagP50 = quantile(r.lags, 0.5);
  const lagP90 = quantile(r.lags, 0.9);
  const lagMax = Math.max(...r.lags);
  const p = r.peer;
  const dWall = median(p.describes.map((d) => d.wallMs));
  const dCpu = median(p.describes.map((d) => d.cpuS));
  const met = (ok: boolean) => (ok ? 'yes' : '**no**');
  line(SECTION_BEGIN);
  line('## The transactions service at 2,000 transactions/s (1,000 transactional ids, 100 applications)');
  line();
  line(
    `${generatedBy('npm run bench:transactions', 'bench/transactions.bench.ts', r.startedAt, r.totalS)} ${m.nproc} cores (${m.model}), ${fmt(m.memGiB, 1)} GiB, a 1-node local cluster (Kafka ${r.kafka}, \`__transaction_state\` with its default 50 partitions) on the same machine; ${r.java}, Node ${process.versions.node}; eoswatch ${r.rev.rev}${r.rev.dirty ? ' with uncommitted changes in src/' : ''}. **The 2 cores were shared** with the cluster, the load generator, the peer and other engineers' work: load average 1/5/15 min ${loadAverageRow(r.load0, r.load1)[1]}; 1-minute load during the measured window ${fmt(Math.min(...r.loadDuring), 1)}–${fmt(Math.max(...r.loadDuring), 1)}.`,
  );
  line();
  line(
    `**Load**: \`bench/java/TxnLoad.java\`, one JVM: ${fmt(TOTAL_IDS)} KafkaProducers (transactional ids \`app000-0\` … \`app${String(APPS - 1).padStart(3, '0')}-${IDS - 1}\`: ${APPS} applications × ${IDS} ids) driven by ${THREADS} threads paced to ${fmt(RATE)} transactions/s; each transaction ${RECORDS} records of 32 bytes to one partition of \`${TOPIC}\` (${TOPIC_PARTITIONS} partitions) and \`commitTransaction()\`. initTransactions() of all ${fmt(TOTAL_IDS)} took ${fmt(r.initMs / 1000, 1)} s. **Daemon**: \`eoswatch run\` compiled by tsc as the installed CLI runs it, only the transactions service (\`interval: 1s\`, \`patterns: ['${PATTERN}']\`, other services off), started after the producers' initTransactions() (its baseline read knows all ${fmt(TOTAL_IDS)} ids) and before the first transaction; measured over ${fmt(w.s, 0)} s after ${WARMUP} s of load; /metrics scraped once a second throughout (its cost is in the daemon's CPU). A second daemon, the same, ran at the same time under \`node --cpu-prof\` (not counted; the profile below).`,
  );
  line();
  line(
    mdTable(
      ['figure', 'value', 'target', 'met'],
      [
        ['transactions committed/s, generator (commitTransaction() returned)', `**${fmt(genRate)}**/s (${fmt(w.genCommitted)} in ${fmt(w.s, 1)} s; ${fmt(w.genFailed)} failed)`, `${fmt(RATE)}/s asked`, met(genRate >= 0.95 * RATE)],
        ['transactions committed/s, the service\'s own counter (eos_coordinator_transactions_total{outcome="committed"})', `**${fmt(svcRate)}**/s (${fmt(w.serviceCommitted)}; aborted ${fmt(w.serviceAborted)})`, 'the generator\'s (the same wall window, shifted by the lag)', met(Math.abs(svcRate - genRate) <= 0.05 * genRate)],
        ['every transaction counted: after the load stopped, the service\'s committed total / the generator\'s', `${fmt(r.totals.service)} / ${fmt(r.totals.generator)} (${fmt(r.totals.generatorFailed)} failed in the generator)`, 'equal', met(r.totals.service === r.totals.generator)],
        ['daemon CPU (utime+stime ÷ wall)', `**${fmt(cpuPct, 1)} %** of a core (${fmt(w.cpuS, 1)} s in ${fmt(w.s, 1)} s; ${fmt((1e6 * w.cpuS) / Math.max(1, w.serviceCommitted), 0)} µs per transaction)`, '≤ 10 %', met(cpuPct <= 10)],
        ['daemon RSS: median of the window / at the end / peak (VmHWM)', `${fmt(w.rssMedianMiB, 1)} / ${fmt(w.rssEndMiB, 1)} / **${fmt(w.hwmMiB, 1)}** MiB`, '≤ 150 MiB', met(w.hwmMiB <= 150)],
        [`the tail's lag: p50 / p90 / max (${r.lags.length} scrapes)`, `**${fmt(lagP50 / 1000, 2)}** / ${fmt(lagP90 / 1000, 2)} / ${fmt(lagMax / 1000, 2)} s`, '≤ 1 s', met(lagP50 <= 1000)],
        ['eos_coordinator_* series on /metrics', `**${fmt(r.series.total)}** (${r.series.applications} application labels; ${r.series.withId} with a transactional_id label; ${fmt(r.series.bytes / 1024)} KiB of /metrics)`, `bounded by applications, not ${fmt(TOTAL_IDS)} ids`, met(r.series.applications <= APPS + 2 && r.series.withId <= 10)],
        ['brokers / generator CPU over the window', `${fmt((100 * w.brokerCpuS) / w.s)} % / ${fmt((100 * w.generatorCpuS) / w.s)} % of a core`, '', ''],
      ],
    ),
  );
  line();
  line(`Series by name: ${r.series.byName.map(([n, c]) => `${n} ${c}`).join(', ')}.`);
  line();
  line(
    `**The tail's lag**, defined: at each scrape (time t) the service's committed count S(t) is compared with the generator's cumulative count G of commitTransaction() calls that had returned (reported every 100 ms); lag(t) = t − the first time G reached S(t) (0 when G had not reached it yet: the service counts a commit at the coordinator's PrepareCommit, before the client's call returns). So it is how old the newest commit the scrape reflects is, as seen by the client; its resolution is the generator's 100 ms. It includes the wait for the next pass: the service reads every \`interval\` (1 s) after the previous pass ended, so a scrape sees the log as it was between 0 and interval + one pass ago; the median is the figure held to the target.`,
  );
  line();
  line('### The peer: kafka-transactions.sh on the same cluster, during the same load');
  line();
  const warm = p.warm;
  const rows: (string | number)[][] = [
    ['`list` (one JVM, as the script runs it)', `${fmt(p.list.wallMs / 1000, 2)} s`, `${fmt(p.list.cpuS, 2)} s`, `${fmt(p.listIds)} ids listed${p.list.ok ? '' : ', **failed**'}`],
    [`\`describe --transactional-id\`, one JVM each, ${p.describes.length} ids (median of one)`, `${fmt(dWall / 1000, 2)} s`, `${fmt(dCpu, 2)} s`, `${p.describeOk} of ${p.describes.length} succeeded`],
    [`list + describe of all ${fmt(TOTAL_IDS)} ids the script's way (extrapolated: list + ${fmt(TOTAL_IDS)} × the median describe)`, `**${fmt((p.list.wallMs + TOTAL_IDS * dWall) / 1000 / 60, 1)} min**`, `**${fmt(p.list.cpuS + TOTAL_IDS * dCpu, 0)} s**`, 'sequential'],
  ];
  if (warm) rows.push([`list + describe of every listed id in one warm JVM (TxnDescribeAll: the tool's own code, one Admin client)`, `${fmt(warm.wallMs / 1000, 1)} s (list ${fmt(warm.listMs)} ms, describes ${fmt(warm.describeMs / 1000, 1)} s)`, `${fmt(warm.cpuS, 1)} s`, `${fmt(warm.ids)} ids, ${fmt(warm.lines)} lines, ${warm.failures} failed calls${warm.ok ? '' : ', **exited with an error**'}`]);
  line(mdTable(['peer run', 'wall', 'CPU', 'result'], rows));
  line();
  const svcPerS = w.cpuS / w.s;
  const scriptCpu = p.list.cpuS + TOTAL_IDS * dCpu;
  line(
    `**What each side delivers.** The service: continuously, per application (${APPS} label values, never per id), counts of committed / aborted / timed-out / fenced transactions, durations and commit-completion histograms from the coordinator's own timestamps, open transactions and the oldest one's age, live ids and their client transaction versions, hanging transactions named on /transactions — ${fmt(svcPerS, 3)} s of CPU per second of log at ${fmt(svcRate)} transactions/s. The peer: one snapshot — each id's state, producer id/epoch, timeout, start time and partitions of an open transaction at the moment it was asked (no outcomes, no durations, no rates: the history between two runs is gone, and at ${fmt(genRate)} transactions/s every id went through about ${fmt(genRate / TOTAL_IDS, 0)} transactions a second). One picture the script's way costs ${fmt(scriptCpu, 0)} s of CPU, what the service spends in ${fmt(scriptCpu / svcPerS / 3600, 1)} h${warm ? `; in one warm JVM ${fmt(warm.cpuS, 1)} s (${fmt(warm.cpuS / svcPerS / 60, 1)} min of the service)` : ''}.`,
  );
  line();
  if (r.profile) {
    const s = summariseProfile(r.profile, { category: CATEGORY, top: 12 });
    line(`### CPU profile of the second daemon (\`node --cpu-prof\`, the same load, not counted)`);
    line();
    line(`The whole process (start-up, baseline read, load, the peer's runs): ${fmt(s.totalMs / 1000, 1)} s of main-thread samples. V8's profiler samples wall time: on a contended machine a sample that finds the thread runnable but descheduled is charged to the function it was in, so the shares below are the distribution of the work, not its CPU cost (the CPU is the table above, from /proc).`);
    line();
    line(profileTables(s));
    line();
  }
  line(`Raw outputs (generator and daemon logs, configurations, every sample, the peer's output, the profile): \`${fromRoot(OUT_DIR)}/\` (git-ignored).`);
  line();
  line('### Notes');
  line();
  line(keptBlock(argv.out!, NOTES_BEGIN, NOTES_END));
  line(SECTION_END);
  return L.join('\n');
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const startedAt = new Date();
  const load0 = loadavg();
  const rev = await gitState(ROOT, 'src');
  log('building the compiled daemon');
  const entry = await buildCompiled(ROOT, join(OUT_DIR, 'current'));
  if (!entry) throw new Error('this checkout does not build');
  const { version, libs } = await kafkaDist();
  const classes = join(OUT_DIR, 'classes');
  mkdirSync(classes, { recursive: true });
  await execFileP('javac', ['-nowarn', '-cp', `${libs}/*`, '-d', classes, join(BENCH_DIR, 'java', 'TxnLoad.java'), join(BENCH_DIR, 'java', 'TxnDescribeAll.java')]);
  const log4j = writeLog4j(OUT_DIR);
  const java = await javaVersion();
  const out = await withCluster({ nodes: 1, version }, async (cluster) => {
    const kafka = kafkaFor(cluster.brokers);
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [{ topic: TOPIC, numPartitions: TOPIC_PARTITIONS, replicationFactor: 1 }], 120_000);
    await admin.disconnect();
    const bootstrap = cluster.bootstrapServers;
    log(`generator: ${TOTAL_IDS} producers, initTransactions()`);
    const gen = await startGenerator(classes, cluster.state.libs, log4j, bootstrap);
    log(`  ready in ${fmt(gen.initMs / 1000, 1)} s`);
    const brokers = cluster.brokers.join(', ');
    const d = await startDaemon(entry, brokers, 'daemon');
    let prof: Daemon | undefined;
    const profDir = join(OUT_DIR, 'profile');
    if (!argv['no-profile']) {
      mkdirSync(profDir, { recursive: true });
      prof = await startDaemon(entry, brokers, 'daemon-profile', ['--cpu-prof', '--cpu-prof-dir', profDir]);
    }
    log('daemon ready (baseline read); GO');
    gen.send('GO');
    const samples: Sample[] = [];
    let lastText = '';
    const scrape = async (): Promise<Sample> => {
      lastText = await (await fetch(`${d.url}/metrics`)).text();
      const s = { at: Date.now(), serviceCommitted: sumOf(lastText, 'eos_coordinator_transactions_total', (l) => l.outcome === 'committed'), rssKb: procStatusKb(d.pid, 'VmRSS'), load1: loadavg()[0]! };
      samples.push(s);
      return s;
    };
    // Scrapes once a second until `until`: the measured window, not a wait for a condition.
    const tick = async (until: number) => {
      while (Date.now() < until) {
        await scrape();
        if (prof) await fetch(`${prof.url}/metrics`).then((r) => r.text());
        await systemClock.sleep(1000);
      }
    };
    await tick(Date.now() + WARMUP * 1000);
    const brokerPid = Object.values(cluster.pids())[0] ?? 0;
    const w0 = { at: Date.now(), cpu: procCpu(d.pid)[0], gen: gen.samples.at(-1)!, svc: (await scrape()).serviceCommitted, broker: brokerPid ? procCpu(brokerPid)[0] : 0, genCpu: procCpu(gen.child.pid!)[0], n: samples.length };
    log(`measuring ${SECONDS} s`);
    await tick(w0.at + SECONDS * 1000);
    const last = await scrape();
    const w1 = { at: Date.now(), cpu: procCpu(d.pid)[0], gen: gen.samples.at(-1)!, broker: brokerPid ? procCpu(brokerPid)[0] : 0, genCpu: procCpu(gen.child.pid!)[0] };
    const hwmMiB = procStatusKb(d.pid, 'VmHWM') / 1024;
    const text = lastText;
    const parsed = parsePrometheusText(text).samples.filter((s) => s.name.startsWith('eos_coordinator_'));
    const byName = new Map<string, number>();
    for (const s of parsed) byName.set(s.name, (byName.get(s.name) ?? 0) + 1);
    const series = {
      total: parsed.length,
      byName: [...byName].sort((a, b) => b[1] - a[1]),
      applications: new Set(parsed.map((s) => s.labels.application).filter(Boolean)).size,
      withId: parsed.filter((s) => s.labels.transactional_id !== undefined).length,
      bytes: Buffer.byteLength(text),
    };
    const windowSamples = samples.slice(w0.n);
    // The tail's lag at each scrape of the window.
    const lags = windowSamples.map((s) => {
      const reached = gen.samples.find(([, c]) => c >= s.serviceCommitted);
      return reached ? Math.max(0, s.at - reached[0]) : 0;
    });
    const window = {
      s: (w1.at - w0.at) / 1000,
      genCommitted: w1.gen[1] - w0.gen[1],
      genFailed: w1.gen[2] - w0.gen[2],
      serviceCommitted: last.serviceCommitted - w0.svc,
      serviceAborted: sumOf(text, 'eos_coordinator_transactions_total', (l) => l.outcome !== 'committed'),
      cpuS: w1.cpu - w0.cpu,
      rssMedianMiB: median(windowSamples.map((s) => s.rssKb)) / 1024,
      rssEndMiB: procStatusKb(d.pid, 'VmRSS') / 1024,
      hwmMiB,
      brokerCpuS: w1.broker - w0.broker,
      generatorCpuS: w1.genCpu - w0.genCpu,
    };
    log(`  generator ${fmt(window.genCommitted / window.s)}/s, service ${fmt(window.serviceCommitted / window.s)}/s, CPU ${fmt((100 * window.cpuS) / window.s, 1)} %, RSS peak ${fmt(hwmMiB, 1)} MiB, lag p50 ${fmt(quantile(lags, 0.5))} ms max ${fmt(Math.max(...lags))} ms, ${series.total} series`);
    const loadDuring = windowSamples.map((s) => s.load1);

    // The peer, while the load goes on (the measured daemon is no longer counted).
    log('peer: TransactionsCommand list');
    const tool = (...a: string[]) => ['-Xmx256m', `-Dlog4j2.configurationFile=${log4j}`, '-cp', `${cluster.state.libs}/*`, 'org.apache.kafka.tools.TransactionsCommand', '--bootstrap-server', bootstrap, ...a];
    const list = await timedProcess('java', tool('list'));
    writeFileSync(join(OUT_DIR, 'peer-list.txt'), list.out);
    const listed = list.out
      .split('\n')
      .slice(1)
      .map((l) => l.trim().split(/\s+/)[0]!)
      .filter((id) => /^app\d{3}-\d+$/.test(id));
    log(`  ${listed.length} ids in ${fmt(list.wallMs)} ms, ${fmt(list.cpuS, 2)} s CPU`);
    const sample = Array.from({ length: Math.min(SAMPLE, TOTAL_IDS) }, (_, i) => listed[Math.floor((i * listed.length) / Math.min(SAMPLE, TOTAL_IDS))] ?? `app000-${i % IDS}`);
    const describes: PeerRun[] = [];
    let describeText = '';
    for (const id of sample) {
      const r = await timedProcess('java', tool('describe', '--transactional-id', id));
      describes.push(r);
      describeText += r.out;
    }
    writeFileSync(join(OUT_DIR, 'peer-describe-sample.txt'), describeText);
    const describeOk = describes.filter((r) => r.ok && sample.some((id) => r.out.includes(id))).length;
    log(`  describe ×${describes.length}: median ${fmt(median(describes.map((x) => x.wallMs)))} ms, ${fmt(median(describes.map((x) => x.cpuS)), 2)} s CPU`);
    log('peer: list + describe of every id in one JVM');
    const warmRun = await timedProcess('java', ['-Xmx256m', `-Dlog4j2.configurationFile=${log4j}`, '-cp', `${classes}:${cluster.state.libs}/*`, 'org.apache.kafka.tools.TxnDescribeAll', bootstrap, join(OUT_DIR, 'peer-describe-all.txt')]);
    const lm = /LIST (\d+) (\d+)/.exec(warmRun.out);
    const dm = /DESCRIBED (\d+) (\d+) (\d+) (\d+)/.exec(warmRun.out);
    const warm = lm && dm ? { ...warmRun, listMs: Number(lm[1]), describeMs: Number(dm[1]), ids: Number(dm[2]), lines: Number(dm[3]), failures: Number(dm[4]) } : undefined;
    if (!warm) log(`  TxnDescribeAll output not understood: ${warmRun.out.slice(0, 2000)}`);
    else log(`  ${warm.ids} ids in ${fmt(warm.wallMs / 1000, 1)} s, ${fmt(warm.cpuS, 1)} s CPU, ${warm.failures} failures`);

    gen.send('STOP');
    await Promise.race([gen.ended, systemClock.sleep(30_000)]);
    killByPid(gen.proc);
    // Every transaction counted? The service's total once it reached the generator's, or stood
    // still for 4 reads 1.5 s apart (a pass under load can take longer than one read's gap).
    const generatorTotal = gen.end?.committed ?? gen.samples.at(-1)![1];
    let serviceTotal = -1;
    let still = 0;
    // At most 60 s: the totals are reported (and compared) whatever they are then.
    await pollUntil(
      "the service's total reaching the generator's or standing still",
      async () => {
        const t = sumOf(await (await fetch(`${d.url}/metrics`)).text(), 'eos_coordinator_transactions_total', (l) => l.outcome === 'committed');
        still = t === serviceTotal ? still + 1 : 0;
        serviceTotal = t;
        return t === generatorTotal || still >= 4;
      },
      { timeoutMs: 60_000, intervalMs: 1500 },
    ).catch((e: unknown) => {
      if (!(e instanceof PollTimeoutError)) throw e;
    });
    const totals = { generator: generatorTotal, generatorFailed: gen.end?.failed ?? gen.samples.at(-1)![2], service: serviceTotal };
    log(`  totals: generator ${totals.generator} committed (${totals.generatorFailed} failed), service ${totals.service}`);
    await stopProcess(d.proc);
    let profile: string | undefined;
    if (prof) {
      await stopProcess(prof.proc);
      const f = readdirSync(profDir).find((n) => n.endsWith('.cpuprofile'));
      if (f) profile = join(profDir, f);
    }
    writeFileSync(join(OUT_DIR, 'samples.json'), JSON.stringify({ samples, generator: gen.samples, lags, end: gen.end }, null, 0));
    return { kafka: cluster.version, initMs: gen.initMs, totals, window, lags, series, loadDuring, peer: { list, listIds: listed.length, describes, describeOk, ...(warm ? { warm } : {}) }, profile };
  });
  const report: Report = { startedAt, totalS: (Date.now() - startedAt.getTime()) / 1000, load0, load1: loadavg(), java, rev, ...out, ...(out.profile ? { profile: out.profile } : {}) };
  writeFileSync(join(OUT_DIR, 'results.json'), JSON.stringify({ ...report, peer: { ...report.peer, list: { ...report.peer.list, out: undefined }, describes: report.peer.describes.map((x) => ({ ...x, out: undefined })) } }, null, 1));
  const text = section(report);
  writeSection(argv.out!, SECTION_BEGIN, SECTION_END, text);
  process.stdout.write(`${text}\n`);
  log(`written to ${argv.out}`);
}

runMain(main);
