// npm run chaos: fault scenarios against a local cluster and pipeline workers, verified end to end.
import { EosError, ErrorCodes, ExitCodes, errorMessage } from '../../src/errors.js';
import type { FlinkScenario } from '../chaos/flink-scenarios.js';
import type { StreamsScenario } from '../chaos/streams-scenarios.js';
import type { Scenario } from '../chaos/scenarios.js';
import { REPORT_FORMATS, choiceOption, parse, positiveIntegerOption, printHelp } from '../../src/commands/options.js';

const helpWith = (scenarios: string, flinkScenarios: string, streamsScenarios: string, kafkaVersion: string, flinkLines: string, flinkDefault: string) => `Usage: npm run chaos -- [--engine eoswatch|flink|streams] [--scenario NAME[,NAME...]|all|process|network] [options]

Starts a local 3-node Kafka cluster (Java and Maven needed, as for the demo) and, per round, fresh
topics, N verification records and pipeline workers (eoswatch run, as child processes); injects
the scenario's faults while the pipeline runs, then reads the sink read_committed and judges it
(duplicates, loss, order per source partition, values). Exit 3 when a round fails.

Network scenarios (net-*) run on a networked cluster: every broker and worker in a Linux network
namespace of its own on a bridge, created and removed by eoswatch. They need root, iproute2,
nftables, iptables and python3; without them eoswatch says what is missing and exits 2
(--scenario process runs the process faults alone).

--engine flink runs the seed's Flink job (flink/job, KafkaSink EXACTLY_ONCE) on a local Flink
session cluster instead, for each Flink line asked for, with eoswatch watching it as its sidecar
and a live Prometheus (the prometheus binary, or $PROMETHEUS) evaluating the shipped alert rules;
a round also fails when eoswatch did not show what its faults must show. Its network scenarios
(jm-isolated, tm-isolated, seed-protocol) put the JobManager and the TaskManager in namespaces of
their own beside the brokers. seed-protocol is the seed's own run: 1,000,000 records (unless
--records), 12 faults spread over the input (TaskManager kill -9, JobManager isolated, broker
rolling restart, four of each), judged against the seed's bounds (0 duplicated, 0 lost, at most
0.1 % out of order).

--engine streams runs instances of the seed's Kafka Streams app (streams/app, exactly_once_v2, a
state store; built with Maven) instead, with eoswatch watching it as its sidecar (streams:, the
transactions service, the LSO monitor); a round also fails when eoswatch did not show what its
faults must show. A round the harness could not run is an ERROR (exit 1), never a FAIL.

Scenarios (--engine eoswatch):
${scenarios}
Scenarios (--engine flink):
${flinkScenarios}
Scenarios (--engine streams):
${streamsScenarios}
Options:
  --engine E             eoswatch (its own pipeline, default), flink or streams
  --scenario LIST        comma-separated scenario names or groups: all; with --engine eoswatch
                         or flink also process (the process faults) and network (the network
                         faults) (default: process with --engine eoswatch, the faults that run
                         on any machine; all and network need root for the net-* faults;
                         --engine flink: all, its process faults; streams: all)
  --network              run every selected scenario on the networked cluster (implied when a
                         network scenario is selected; --engine eoswatch or flink)
  --records N            verification records per round (default 10000)
  --rounds N             rounds per scenario (default 1)
  --partitions N         partitions of the round's topics (default 6)
  --full-speed           do not slow the pipeline: faults hit transactions of a full-speed run
                         (give enough --records for the run to outlast the scenario's faults);
                         --engine flink: the input written as fast as the job takes it (still
                         held back at 15 % ahead of the job), not as a steady stream
  --kafka-version V      Kafka version of the local cluster (default ${kafkaVersion})
  --flink-version LIST   Flink lines for --engine flink, comma-separated (${flinkLines}; default ${flinkDefault})
  --parallelism N        the Flink job's parallelism (default 2)
  --transaction-naming N the KafkaSink's transactional ids, --engine flink: incrementing (default)
                         or pooling (FLIP-511, Flink 2.2's connector only)
  --instances N          instances of the Streams app per round, --engine streams (default 2)
  --dir DIR              cluster data and worker logs (default .eoswatch/chaos)
  --format FMT           table | json | markdown (default table)
  --out FILE             also write the report to FILE
`;

/** The help names the scenarios and the default versions, so it is built from their modules. */
export async function help(): Promise<string> {
  const { ALL_SCENARIOS } = await import('../chaos/catalogue.js');
  const { FLINK_SCENARIOS, FLINK_NETWORK_SCENARIOS } = await import('../chaos/flink-scenarios.js');
  const { STREAMS_SCENARIOS } = await import('../chaos/streams-scenarios.js');
  const { DEFAULT_KAFKA_VERSION } = await import('../localcluster/kafka-dist.js');
  const { DEFAULT_FLINK_LINE, FLINK_LINES } = await import('../localcluster/flink-dist.js');
  const list = (l: { name: string; description: string }[]) => l.map((s) => `  ${s.name}\n${wrap(s.description, 76).map((line) => `      ${line}\n`).join('')}`).join('');
  return helpWith(list(ALL_SCENARIOS), list([...FLINK_SCENARIOS, ...FLINK_NETWORK_SCENARIOS]), list(STREAMS_SCENARIOS), DEFAULT_KAFKA_VERSION, Object.entries(FLINK_LINES).map(([l, x]) => `${l} = ${x.version}`).join(', '), DEFAULT_FLINK_LINE);
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : lines;
}

export async function handler(args: string[]): Promise<number> {
  const { values } = parse(args, {
    engine: { type: 'string', default: 'eoswatch' },
    // No default here: it depends on the engine (eoswatch: process, which needs no root; flink: all).
    scenario: { type: 'string' },
    records: { type: 'string' },
    rounds: { type: 'string' },
    partitions: { type: 'string' },
    'full-speed': { type: 'boolean', default: false },
    network: { type: 'boolean', default: false },
    'kafka-version': { type: 'string' },
    'flink-version': { type: 'string' },
    'transaction-naming': { type: 'string' },
    parallelism: { type: 'string' },
    instances: { type: 'string' },
    dir: { type: 'string', default: '.eoswatch/chaos' },
    format: { type: 'string', default: 'table' },
    out: { type: 'string' },
  });
  if (values.help) return printHelp(await help());
  const engine = choiceOption('engine', values.engine, ['eoswatch', 'flink', 'streams']);
  const { selectScenarios } = await import('../chaos/catalogue.js');
  const { findFlinkScenarios } = await import('../chaos/flink-scenarios.js');
  const { findStreamsScenarios } = await import('../chaos/streams-scenarios.js');
  const { DEFAULT_KAFKA_VERSION } = await import('../localcluster/kafka-dist.js');
  let scenarios: Scenario[] = [];
  let flinkScenarios: FlinkScenario[] = [];
  let streamsScenarios: StreamsScenario[] = [];
  const scenarioList = values.scenario ?? (engine === 'eoswatch' ? 'process' : 'all');
  try {
    if (engine === 'flink') flinkScenarios = findFlinkScenarios(scenarioList);
    else if (engine === 'streams') streamsScenarios = findStreamsScenarios(scenarioList);
    else scenarios = selectScenarios(scenarioList);
  } catch (err) {
    throw new EosError(ErrorCodes.USAGE, `--scenario: ${errorMessage(err)}`);
  }
  if (engine !== 'flink') for (const flag of ['flink-version', 'parallelism', 'transaction-naming'] as const) if (values[flag] !== undefined) throw new EosError(ErrorCodes.USAGE, `--${flag}: only with --engine flink`);
  if (engine !== 'streams' && values.instances !== undefined) throw new EosError(ErrorCodes.USAGE, '--instances: only with --engine streams');
  if (engine !== 'eoswatch') {
    if (values['full-speed'] && engine === 'streams') throw new EosError(ErrorCodes.USAGE, '--full-speed: only with --engine eoswatch or flink (a Streams round writes its input as a steady stream)');
    if (values.network && engine === 'streams') throw new EosError(ErrorCodes.USAGE, '--network: only with --engine eoswatch or flink (the Streams rounds run on the plain local cluster)');
  }
  const transactionNaming = values['transaction-naming'] === undefined ? undefined : choiceOption('transaction-naming', values['transaction-naming'], ['incrementing', 'pooling'] as const);
  let flinkLines: string[] = [];
  if (engine === 'flink') {
    const { resolveFlinkLine, DEFAULT_FLINK_LINE } = await import('../localcluster/flink-dist.js');
    flinkLines = (values['flink-version'] ?? DEFAULT_FLINK_LINE).split(',').map((v) => v.trim());
    const withoutPool: string[] = [];
    for (const v of flinkLines) {
      try {
        if (!resolveFlinkLine(v).pooledNaming) withoutPool.push(v);
      } catch (err) {
        throw new EosError(ErrorCodes.USAGE, `--flink-version: ${errorMessage(err)}`);
      }
    }
    if (transactionNaming === 'pooling' && withoutPool.length) {
      throw new EosError(ErrorCodes.USAGE, `--transaction-naming pooling: the Kafka connector of Flink ${withoutPool.join(', ')} has no pooled naming (FLIP-511, the connector of the Flink 2.x line); use --flink-version 2.2`);
    }
  }
  const records = positiveIntegerOption('records', values.records, 10_000);
  const rounds = positiveIntegerOption('rounds', values.rounds, 1);
  const partitions = positiveIntegerOption('partitions', values.partitions, 6);
  const parallelism = positiveIntegerOption('parallelism', values.parallelism, 2);
  const instances = positiveIntegerOption('instances', values.instances, 2);
  const format = choiceOption('format', values.format, REPORT_FORMATS);
  const version = values['kafka-version'] ?? DEFAULT_KAFKA_VERSION;
  const dir = values.dir;
  const { resolve, join } = await import('node:path');
  const { mkdir, rm, writeFile } = await import('node:fs/promises');
  const { LocalCluster } = await import('../localcluster/cluster.js');
  const { ProgressLine, fmtDuration } = await import('../../src/progress.js');
  const { fetchKafkaWithProgress } = await import('../localcluster/fetch.js');
  const progress = new ProgressLine();
  const log = (line: string) => progress.log(line);
  const network = values.network || scenarios.some((s) => s.network) || flinkScenarios.some((s) => s.network);
  if (network) {
    const { ClusterNetwork } = await import('../localcluster/network.js');
    const reason = await ClusterNetwork.probe();
    if (reason) {
      const which = [...scenarios, ...flinkScenarios].filter((s) => s.network).map((s) => s.name);
      throw new EosError(ErrorCodes.USAGE, `${which.length ? `scenarios ${which.join(', ')} need` : '--network needs'} a networked cluster, which cannot run here: ${reason} (--scenario process runs the process faults alone)`);
    }
  }
  const clusterDir = resolve(dir, 'cluster');
  await rm(clusterDir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await fetchKafkaWithProgress(version);
  // Ctrl-C: the cluster's nodes and its network namespaces go with this process (exit hooks), or with cluster.down().
  let started: import('../localcluster/cluster.js').LocalCluster | undefined;
  const disarm = armInterrupt(
    async () => {
      await started?.down().catch((err: unknown) => log(`taking the cluster down after the signal failed: ${errorMessage(err)}`));
    },
    () => process.exit(ExitCodes.RUNTIME),
  );
  if (values.scenario === undefined && engine === 'eoswatch') log('no --scenario: running the process faults (--scenario all adds the net-* faults, which need root, iproute2, nftables, iptables and python3)');
  log(`starting a local 3-node Kafka ${version} cluster in ${clusterDir}${network ? ', each node in a network namespace of its own' : ''}`);
  const cluster = await LocalCluster.start({ nodes: 3, version, dir: clusterDir, network });
  started = cluster;

  const t0 = Date.now();
  const totalRounds = (scenarios.length + flinkScenarios.length * flinkLines.length + streamsScenarios.length) * rounds;
  const finished: number[] = [];
  let current = '';
  let roundStart = t0;
  const onProgress = (p: import('../chaos/runner.js').ChaosProgress, what = 'pipeline') => {
    const key = `${p.scenario}#${p.round}`;
    if (key !== current) {
      if (current) finished.push(Date.now() - roundStart);
      current = key;
      roundStart = Date.now();
    }
    const index = finished.length + 1;
    const avg = finished.length ? finished.reduce((a, b) => a + b, 0) / finished.length : undefined;
    const eta = avg === undefined ? '' : `, ETA ~${fmtDuration((Math.max(0, avg - (Date.now() - roundStart)) + avg * (totalRounds - index)) / 1000)}`;
    const pct = p.total > 0 ? Math.floor((p.committed * 100) / p.total) : 0;
    progress.update(
      `[${index}/${totalRounds}] ${p.scenario} round ${p.round}: ${p.lastFault ? `${p.lastFault}; ` : 'before the fault; '}${what} committed ${pct}% of ${p.total.toLocaleString('en-US')}, ` +
        `round ${fmtDuration((Date.now() - roundStart) / 1000)}, total ${fmtDuration((Date.now() - t0) / 1000)}${eta}`,
    );
  };
  try {
    let text: string;
    let code: number;
    const workDir = resolve(dir, 'workers');
    if (engine === 'flink') {
      const runs = await runFlinkLines(cluster, flinkScenarios, flinkLines, {
        records,
        recordsGiven: values.records !== undefined,
        fullSpeed: values['full-speed'],
        ...(transactionNaming ? { transactionNaming } : {}),
        rounds,
        partitions,
        parallelism,
        dir: resolve(dir),
        workDir,
        kafkaVersion: version,
        log,
        progress: (p) => onProgress(p, 'job'),
      });
      const { formatFlinkChaosMarkdown, formatFlinkChaosTable } = await import('../chaos/report.js');
      text = format === 'json' ? `${JSON.stringify(runs, null, 2)}\n` : format === 'markdown' ? formatFlinkChaosMarkdown(runs) : formatFlinkChaosTable(runs);
      code = runs.every((r) => r.passed) ? ExitCodes.OK : ExitCodes.VIOLATION;
    } else if (engine === 'streams') {
      const run = await runStreamsWithPrometheus(cluster, streamsScenarios, { records, rounds, partitions, instances, dir: resolve(dir), workDir, kafkaVersion: version, log, progress: (p) => onProgress(p, 'app') });
      const { formatStreamsChaosMarkdown, formatStreamsChaosTable } = await import('../chaos/report.js');
      const { exitCodeOf, summaryLine } = await import('../chaos/verdict.js');
      text = format === 'json' ? `${JSON.stringify(run, null, 2)}\n` : format === 'markdown' ? formatStreamsChaosMarkdown(run) : formatStreamsChaosTable(run);
      code = exitCodeOf(run.counts);
      log(`chaos --engine streams: ${summaryLine(run.counts)}`);
    } else {
      const { runScenarios } = await import('../chaos/runner.js');
      const { formatChaosMarkdown, formatChaosTable, runSummary } = await import('../chaos/report.js');
      const { countVerdicts, exitCodeOf } = await import('../chaos/verdict.js');
      const run = await runScenarios(cluster, scenarios, { records, rounds, partitions, fullSpeed: values['full-speed'], workDir, kafkaVersion: version, log, progress: (p) => onProgress(p) });
      text = format === 'json' ? `${JSON.stringify(run, null, 2)}\n` : format === 'markdown' ? formatChaosMarkdown(run) : formatChaosTable(run);
      // 3 when a round FAILed (exactly-once), 1 when the harness could not run a round (ERROR) and none failed.
      code = exitCodeOf(run.counts ?? countVerdicts(run.results));
      log(`chaos: ${runSummary(run)}`);
    }
    progress.done('');
    process.stdout.write(text);
    if (values.out) await writeFile(values.out, text);
    log(`worker logs: ${join(resolve(dir), 'workers')}`);
    return code;
  } finally {
    try {
      await cluster.down();
    } finally {
      disarm();
    }
  }
}

/**
 * SIGINT and SIGTERM during a chaos run: the first takes the cluster down (`down`), then `exit`;
 * any later one is ignored meanwhile. The listeners stay until disarmed. With none left, a repeated
 * signal cut the clean-up short: Node's default action runs no exit hook, and the tsx CLI's
 * preflight handler calls process.exit(130), whose synchronous exit hooks (an `ip` per namespace)
 * keep the process from answering a signal tsx relays, and tsx SIGKILLs a child that has not
 * answered within 30 ms, leaving the network namespaces behind. Repeats are usual: a terminal's
 * Ctrl-C reaches every process of the job, and tsx and timeout pass a signal on again. Returns the
 * function that removes the listeners.
 */
export function armInterrupt(down: () => Promise<void>, exit: () => void): () => void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void down().then(
      () => exit(),
      () => exit(),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
}

/**
 * The Flink rounds: per Flink line a local session cluster (one TaskManager with a slot per
 * subtask) and the scenarios on it; one live Prometheus for all of them, scraping the fixed port
 * every round's eoswatch daemon listens on. Without a prometheus binary the rounds run, and the
 * scenarios that need an alert to fire fail on that.
 */
async function runFlinkLines(
  cluster: import('../localcluster/cluster.js').LocalCluster,
  scenarios: FlinkScenario[],
  lines: string[],
  opts: Omit<import('../chaos/flink-runner.js').FlinkChaosOptions, 'daemonPort' | 'prometheus'> & { dir: string; kafkaVersion: string },
): Promise<import('../chaos/flink-runner.js').FlinkChaosRun[]> {
  const { join } = await import('node:path');
  const { LocalFlinkCluster } = await import('../localcluster/flink-cluster.js');
  const { runFlinkScenarios } = await import('../chaos/flink-runner.js');
  return withLivePrometheus(opts, async (daemonPort, prometheus) => {
    const runs = [];
    for (const line of lines) {
      const flinkDir = join(opts.dir, `flink-${line}`);
      opts.log(`starting a local Flink ${line} session cluster in ${flinkDir} (first run fetches the jars and builds the job with Maven)`);
      const flink = await LocalFlinkCluster.start({ version: line, dir: flinkDir, taskManagers: 1, slots: opts.parallelism, ...(cluster.network ? { network: cluster.network } : {}) });
      try {
        runs.push(await runFlinkScenarios(cluster, flink, scenarios, { ...opts, daemonPort, prometheus }));
      } finally {
        await flink.down({ keepData: true });
      }
    }
    return runs;
  });
}

/**
 * One live Prometheus for a run's engine rounds, scraping the fixed port every round's eoswatch
 * daemon listens on, stopped and its directory removed after. Without a prometheus binary the
 * rounds run, and alerts are not checked (the scenarios that need one fire fail on that).
 */
async function withLivePrometheus<T>(opts: { dir: string; log(line: string): void }, fn: (daemonPort: number, prometheus: import('../chaos/prometheus.js').LivePrometheus | undefined) => Promise<T>): Promise<T> {
  const { join } = await import('node:path');
  const { rm } = await import('node:fs/promises');
  const { freePort } = await import('../localcluster/cluster.js');
  const { LivePrometheus } = await import('../chaos/prometheus.js');
  const daemonPort = await freePort();
  const promDir = join(opts.dir, 'prometheus');
  await rm(promDir, { recursive: true, force: true });
  const prometheus = await LivePrometheus.start({ dir: promDir, target: `127.0.0.1:${daemonPort}` }).catch((err: Error) => {
    opts.log(`no live Prometheus, alerts will not be checked: ${err.message.split('\n')[0]}`);
    return undefined;
  });
  try {
    return await fn(daemonPort, prometheus);
  } finally {
    await prometheus?.stop();
    await rm(promDir, { recursive: true, force: true });
  }
}

/** The Streams rounds, under one live Prometheus. */
async function runStreamsWithPrometheus(
  cluster: import('../localcluster/cluster.js').LocalCluster,
  scenarios: StreamsScenario[],
  opts: Omit<import('../chaos/streams-runner.js').StreamsChaosOptions, 'daemonPort' | 'prometheus'> & { dir: string; kafkaVersion: string },
): Promise<import('../chaos/streams-runner.js').StreamsChaosRun> {
  const { runStreamsScenarios } = await import('../chaos/streams-runner.js');
  return withLivePrometheus(opts, (daemonPort, prometheus) => runStreamsScenarios(cluster, scenarios, { ...opts, daemonPort, prometheus }));
}
