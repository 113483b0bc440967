// eoswatch chaos: fault scenarios against a local cluster and pipeline workers, verified end to end.
import { EosError, ErrorCodes, ExitCodes, errorMessage } from '../errors.js';
import { REPORT_FORMATS, choiceOption, parse, positiveIntegerOption, printHelp } from './options.js';

const helpWith = (scenarios: string, kafkaVersion: string) => `Usage: eoswatch chaos [--scenario NAME[,NAME...]|all|process|network] [options]

Starts a local 3-node Kafka cluster (Java and Maven needed, as for the demo) and, per round, fresh
topics, N verification records and pipeline workers (eoswatch run, as child processes); injects
the scenario's faults while the pipeline runs, then reads the sink read_committed and judges it
(duplicates, loss, order per source partition, values). Exit 3 when a round fails.

Network scenarios (net-*) run on a networked cluster: every broker and worker in a Linux network
namespace of its own on a bridge, created and removed by eoswatch. They need root, iproute2,
nftables, iptables and python3; without them eoswatch says what is missing and exits 2
(--scenario process runs the process faults alone).

Scenarios:
${scenarios}
Options:
  --scenario LIST        comma-separated scenario names or groups: all, process (the process
                         faults), network (the net-* faults) (default: all)
  --network              run every selected scenario on the networked cluster (implied when a
                         network scenario is selected)
  --records N            verification records per round (default 10000)
  --rounds N             rounds per scenario (default 1)
  --partitions N         partitions of the round's topics (default 6)
  --full-speed           do not slow the pipeline: faults hit transactions of a full-speed run
                         (give enough --records for the run to outlast the scenario's faults)
  --kafka-version V      Kafka version of the local cluster (default ${kafkaVersion})
  --dir DIR              cluster data and worker logs (default .eoswatch/chaos)
  --format FMT           table | json | markdown (default table)
  --out FILE             also write the report to FILE
`;

/** The help names the scenarios and the default Kafka version, so it is built from their modules. */
export async function help(): Promise<string> {
  const { ALL_SCENARIOS } = await import('../chaos/catalogue.js');
  const { DEFAULT_KAFKA_VERSION } = await import('../localcluster/kafka-dist.js');
  return helpWith(ALL_SCENARIOS.map((s) => `  ${s.name}\n${wrap(s.description, 76).map((l) => `      ${l}\n`).join('')}`).join(''), DEFAULT_KAFKA_VERSION);
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
    scenario: { type: 'string', default: 'all' },
    records: { type: 'string' },
    rounds: { type: 'string' },
    partitions: { type: 'string' },
    'full-speed': { type: 'boolean', default: false },
    network: { type: 'boolean', default: false },
    'kafka-version': { type: 'string' },
    dir: { type: 'string', default: '.eoswatch/chaos' },
    format: { type: 'string', default: 'table' },
    out: { type: 'string' },
  });
  if (values.help) return printHelp(await help());
  const { selectScenarios } = await import('../chaos/catalogue.js');
  const { DEFAULT_KAFKA_VERSION } = await import('../localcluster/kafka-dist.js');
  let scenarios;
  try {
    scenarios = selectScenarios(values.scenario);
  } catch (err) {
    throw new EosError(ErrorCodes.USAGE, `--scenario: ${errorMessage(err)}`);
  }
  const records = positiveIntegerOption('records', values.records, 10_000);
  const rounds = positiveIntegerOption('rounds', values.rounds, 1);
  const partitions = positiveIntegerOption('partitions', values.partitions, 6);
  const format = choiceOption('format', values.format, REPORT_FORMATS);
  const version = values['kafka-version'] ?? DEFAULT_KAFKA_VERSION;
  const dir = values.dir;
  const { resolve, join } = await import('node:path');
  const { mkdir, rm, writeFile } = await import('node:fs/promises');
  const { LocalCluster } = await import('../localcluster/cluster.js');
  const { runScenarios } = await import('../chaos/runner.js');
  const { formatChaosMarkdown, formatChaosTable } = await import('../chaos/report.js');
  const { ProgressLine, fmtDuration } = await import('../progress.js');
  const { fetchKafkaWithProgress } = await import('../localcluster/fetch.js');
  const progress = new ProgressLine();
  const log = (line: string) => progress.log(line);
  const network = values.network || scenarios.some((s) => s.network);
  if (network) {
    const { ClusterNetwork } = await import('../localcluster/network.js');
    const reason = await ClusterNetwork.probe();
    if (reason) {
      const which = scenarios.filter((s) => s.network).map((s) => s.name);
      throw new EosError(ErrorCodes.USAGE, `${which.length ? `scenarios ${which.join(', ')} need` : '--network needs'} a networked cluster, which cannot run here: ${reason} (--scenario process runs the process faults alone)`);
    }
  }
  const clusterDir = resolve(dir, 'cluster');
  await rm(clusterDir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await fetchKafkaWithProgress(version);
  // Ctrl-C: the cluster's nodes and its network namespaces go with this process (exit hooks), or with cluster.down().
  let cluster: import('../localcluster/cluster.js').LocalCluster | undefined;
  const stop = () => void (cluster?.down() ?? Promise.resolve()).finally(() => process.exit(ExitCodes.RUNTIME));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  log(`starting a local 3-node Kafka ${version} cluster in ${clusterDir}${network ? ', each node in a network namespace of its own' : ''}`);
  const started = await LocalCluster.start({ nodes: 3, version, dir: clusterDir, network });
  cluster = started;
  try {
    const t0 = Date.now();
    const totalRounds = scenarios.length * rounds;
    const finished: number[] = [];
    let current = '';
    let roundStart = t0;
    const run = await runScenarios(started, scenarios, {
      records,
      rounds,
      partitions,
      fullSpeed: values['full-speed'],
      workDir: resolve(dir, 'workers'),
      kafkaVersion: version,
      log,
      progress: (p) => {
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
          `[${index}/${totalRounds}] ${p.scenario} round ${p.round}: ${p.lastFault ? `${p.lastFault}; ` : 'before the fault; '}pipeline committed ${pct}% of ${p.total.toLocaleString('en-US')}, ` +
            `round ${fmtDuration((Date.now() - roundStart) / 1000)}, total ${fmtDuration((Date.now() - t0) / 1000)}${eta}`,
        );
      },
    });
    progress.done('');
    const text = format === 'json' ? `${JSON.stringify(run, null, 2)}\n` : format === 'markdown' ? formatChaosMarkdown(run) : formatChaosTable(run);
    process.stdout.write(text);
    if (values.out) await writeFile(values.out, text);
    log(`worker logs: ${join(resolve(dir), 'workers')}`);
    return run.passed ? ExitCodes.OK : ExitCodes.VIOLATION;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await started.down();
  }
}
