// `npm run chaos -- --engine streams`: fault rounds under the seed's Kafka Streams app (streams/app:
// input topic -> value + 1 -> output topic, exactly_once_v2, with a state store) run as instances
// (java processes) on the local Kafka cluster, with eoswatch watching the app as its sidecar
// (streams:, the transactions service, the LSO monitor, as a child process) and, when one can be
// started, a live Prometheus evaluating the shipped alert rules. A round: fresh topics, a fresh
// application id, its instances started, N verification records written as a steady stream over
// the scenario's length, the faults injected at points of the app's committed progress (its
// group's offsets), then, once every record is committed and no transaction is open on the output,
// the output read read_committed and judged by the verifier, and what eoswatch showed held to the
// scenario's expectations. A failure of the harness (a broker or an instance that would not start)
// is an ERROR, never an exactly-once FAIL.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTopics } from '../../src/kafka/admin.js';
import type { LocalCluster } from '../localcluster/cluster.js';
import { StreamsRun } from '../localcluster/streams-app.js';
import { pollUntil } from '../../src/runtime/poll-until.js';
import { systemClock } from '../../src/runtime/clock.js';
import { produceVerifyRecords, type ProduceManifest } from '../../src/verify/verify.js';
import type { LivePrometheus } from './prometheus.js';
import { restoreBrokers, roundClients, RoundProgress, sinkFigures, verifyRound, waitReplicated } from './round-kafka.js';
import { transactionCoordinator, type ChaosProgress, type RoundResult } from './runner.js';
import { STREAMS_COMMIT_INTERVAL_MS, STREAMS_SESSION_TIMEOUT_MS, type StreamsScenario, type StreamsScenarioContext } from './streams-scenarios.js';
import { StreamsObservationTracker, type StreamsObservations } from './streams-observations.js';
import { countVerdicts, harnessStep, HarnessError, roundVerdict, type VerdictCounts } from './verdict.js';
import { WorkerProcess } from './worker.js';

export interface StreamsChaosOptions {
  records: number;
  rounds: number;
  partitions: number;
  /** Instances of the app each round starts. */
  instances: number;
  /** How long each round's input is written, instead of the scenario's own length (a shorter round for CI). */
  seconds?: number;
  /** Instance logs, state directories and the daemons' logs. */
  workDir: string;
  /** HTTP port of each round's eoswatch daemon: one fixed port, so one Prometheus scrapes every round (0: any). */
  daemonPort: number;
  prometheus?: LivePrometheus;
  log(line: string): void;
  progress?(p: ChaosProgress): void;
}

export interface StreamsRoundResult extends RoundResult {
  /** Longest time from a fault until the app committed progress again. */
  outageSeconds: number | null;
  observed: StreamsObservations;
  /** What eoswatch should have shown during the round and did not; each one fails the round. */
  missed: string[];
}

export interface StreamsChaosRun {
  startedAt: string;
  kafkaVersion: string;
  records: number;
  rounds: number;
  partitions: number;
  instances: number;
  results: StreamsRoundResult[];
  counts: VerdictCounts;
  passed: boolean;
}

/** The most of a round's records written and not yet committed by the app (a fraction of the round's records). */
const MAX_AHEAD = 0.15;


export async function runStreamsRound(cluster: LocalCluster, scenario: StreamsScenario, round: number, opts: StreamsChaosOptions): Promise<StreamsRoundResult> {
  const t0 = Date.now();
  const { id, source, sink, brokers, brokerIds, kafka, admin, offsets } = roundClients(cluster, 'streams', scenario.name, round);
  const progress = new RoundProgress(opts.records, 'app');
  const tracker = new StreamsObservationTracker(id, sink, opts.prometheus !== undefined);
  const stopProducer = new AbortController();
  let finished = false;
  let lastFaultAt = 0;
  let app: StreamsRun | undefined;
  let daemon: WorkerProcess | undefined;
  let producing: Promise<ProduceManifest> | undefined;
  let loops: Promise<void>[] = [];
  let violations: string[] = [];
  let missed: string[] = [];
  let figures = sinkFigures();
  let recoverySeconds: number | null = null;
  let outageSeconds: number | null = null;
  let error: unknown;
  mkdirSync(opts.workDir, { recursive: true });

  const rate = Math.max(10, Math.ceil(opts.records / (opts.seconds ?? scenario.seconds)));
  const fault = (text: string) => void (lastFaultAt = progress.fault(text, opts.log));
  const ctx: StreamsScenarioContext = {
    brokers: brokerIds,
    waitProgress: (fraction) => progress.waitFraction(fraction, 15 * 60_000),
    fault,
    async killInstance(n) {
      fault(`SIGKILL instance ${n}`);
      tracker.processKilled(`SIGKILL instance ${n}`, lastFaultAt);
      await harnessStep(`SIGKILL of instance ${n}`, () => app!.kill(n));
    },
    async stopInstance(n) {
      fault(`SIGTERM instance ${n}`);
      await harnessStep(`SIGTERM of instance ${n}`, () => app!.stop(n, 30_000));
      lastFaultAt = Date.now();
    },
    async startInstance(n) {
      const inst = await harnessStep(`starting instance ${n ?? '(new)'}`, () => app!.start(n, { timeoutMs: 300_000 }));
      if (n === undefined) fault(`instance ${inst.n} started`);
      lastFaultAt = Date.now();
      return inst.n;
    },
    async pauseInstance(n) {
      fault(`SIGSTOP instance ${n}`);
      await harnessStep(`SIGSTOP of instance ${n}`, () => app!.pause(n));
    },
    async resumeInstance(n) {
      fault(`SIGCONT instance ${n}`);
      await harnessStep(`SIGCONT of instance ${n}`, () => app!.resume(n));
    },
    killBroker: (n) => harnessStep(`SIGKILL of broker ${n}`, () => cluster.kill(n)).then(() => void (lastFaultAt = Date.now())),
    stopBroker: (n) => harnessStep(`SIGTERM of broker ${n}`, () => cluster.stop(n)).then(() => void (lastFaultAt = Date.now())),
    // A restarted broker may take minutes to be ready on a loaded machine.
    startBroker: (n) => harnessStep(`starting broker ${n}`, () => cluster.start(n, 600_000)).then(() => void (lastFaultAt = Date.now())),
    async waitReplicated() {
      await harnessStep('the partitions back in sync', () => waitReplicated(admin, [source, sink, '__transaction_state', '__consumer_offsets']));
      lastFaultAt = Date.now();
    },
    leaderOf: (topic, partition) =>
      harnessStep(`the leader of ${topic} partition ${partition}`, async () => {
        const meta = await admin.fetchTopicMetadata({ topics: [topic === 'source' ? source : sink] });
        return meta.topics[0]!.partitions.find((x) => x.partitionId === partition)!.leader;
      }),
    openTransactionCoordinator: () => harnessStep('an open transaction of the app and its coordinator', async () => {
      // eoswatch's own transactions service names the app's open transactions (ids <application.id>-<process UUID>-<thread>).
      const transactionalId: string = await pollUntil<string | undefined>(
        `an open transaction of ${id} on eoswatch's /transactions`,
        async () => {
          const r = (await (await fetch(`${await daemon!.url}/transactions`)).json()) as { oldestOpen?: { transactionalId: string; application: string }[] };
          return r.oldestOpen?.find((t) => t.application === id)?.transactionalId;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      ).then((x) => x!);
      return { transactionalId, broker: await transactionCoordinator(admin, transactionalId) };
    }),
    sleep: (ms: number) => systemClock.sleep(ms),
  };

  try {
    if (scenario.needsBrokers && brokerIds.length < 3) throw new HarnessError(`${scenario.name} takes brokers away: it needs a 3-node cluster, this one has ${brokerIds.length}`);
    await harnessStep('the round set up (topics, the app, eoswatch)', async () => {
      await admin.connect();
      // The previous round may have restarted a broker: leaders of the internal topics elected again first.
      const internal = (await admin.listTopics()).filter((t) => t === '__consumer_offsets' || t === '__transaction_state');
      await waitReplicated(admin, internal, 600_000);
      const rf = Math.min(3, brokerIds.length);
      await ensureTopics(admin, [source, sink].map((topic) => ({ topic, numPartitions: opts.partitions, replicationFactor: rf })));
      app = await StreamsRun.create(
        {
          bootstrap: cluster.bootstrapServers,
          applicationId: id,
          input: source,
          output: sink,
          stateful: true,
          // Transactions open for a second, each record sent as it comes: a kill or a pause almost
          // always leaves a transaction with records open (with 200 ms commits and the producer's
          // linger, often none: the fault would leave nothing for eoswatch to show).
          commitIntervalMs: STREAMS_COMMIT_INTERVAL_MS,
          properties: {
            'replication.factor': String(rf),
            ...(rf === 3 ? { 'topic.min.insync.replicas': '2' } : {}),
            'session.timeout.ms': String(STREAMS_SESSION_TIMEOUT_MS),
            'producer.linger.ms': '0',
          },
        },
        { dir: join(opts.workDir, id), killOnExit: true },
      );
      for (let i = 0; i < opts.instances; i++) await app.start(undefined, { timeoutMs: 300_000 });
      // eoswatch after the instances: an app not started yet is down (EosPipelineDown pending), which is no fault of the round.
      daemon = new WorkerProcess(streamsDaemonConfig(brokers, id, sink, opts.daemonPort), 'eoswatch', { logFile: join(opts.workDir, `${id}-eoswatch.log`) });
      await daemon.url;
    });
    opts.log(`  ${opts.instances} instances of ${id} RUNNING; writing ${opts.records} records at ${rate} records/s`);
    const hold = progress.hold(Math.ceil(opts.records * MAX_AHEAD), () => finished);
    producing = produceVerifyRecords(kafka, source, { records: opts.records, run: id, perSecond: rate, signal: stopProducer.signal, hold });
    producing.catch(() => undefined);
    loops = [
      progress.follow({ admin, offsets, group: id, source, sink }, () => finished, (committed) =>
        opts.progress?.({ scenario: scenario.name, round, committed, total: opts.records, lastFault: progress.lastFault }),
      ),
      (async () => {
        for (let i = 0; !finished; i++) {
          await daemon!.metricsText().then((text) => tracker.scrape(text, Date.now()), () => undefined);
          if (opts.prometheus && i % 2 === 0) await opts.prometheus.alerts().then((a) => tracker.alerts(a), () => undefined);
          await systemClock.sleep(1000);
        }
      })(),
    ];
    // The counters count from the first records on: the instances' first joins are not the round's.
    await ctx.waitProgress(Math.min(0.05, 1 / opts.records));
    await systemClock.sleep(1500);
    tracker.startCounting();

    await scenario.inject(ctx);
    const faultEnd = lastFaultAt;
    const manifest = await harnessStep('writing the input', () => producing!);
    if (manifest.records !== opts.records) throw new HarnessError(`only ${manifest.records} of ${opts.records} records were written`);
    // Done when every record is committed and no transaction is open on the output.
    await progress.waitSettled(faultEnd);
    ({ recoverySeconds, outageSeconds } = progress.figures(faultEnd));
    // A last scrape with the whole round in the counters; then the app and eoswatch stop.
    tracker.scrape(await harnessStep("eoswatch's last scrape", () => daemon!.metricsText()), Date.now());
    if (opts.prometheus) tracker.alerts(await harnessStep("Prometheus' alerts", () => opts.prometheus!.alerts()));
    finished = true;
    opts.log('  every input record committed and the output settled; stopping the app and reading the output (read_committed, then read_uncommitted)');
    await harnessStep('stopping the instances', () => app!.stopAll({ graceMs: 30_000 }));
    const report = await harnessStep('reading the output topic', () => verifyRound(kafka, sink, id, opts.records, opts.partitions));
    figures = sinkFigures(report);
    violations = report.violations;
    missed = scenario.expect(tracker.o);
  } catch (err) {
    error = err;
  } finally {
    finished = true;
    stopProducer.abort();
    await producing?.catch(() => undefined);
    await Promise.all(loops);
    await app?.stopAll({ graceMs: 0 }).catch((err: Error) => opts.log(`  stopping the instances failed: ${err.message}`));
    await daemon?.kill();
    await restoreBrokers(cluster, brokerIds).catch((err: Error) => opts.log(`  restoring the brokers failed: ${err.message}`));
    await offsets.close();
    await admin.disconnect().catch(() => undefined);
  }
  const verdict = roundVerdict({ error, violations, enforcedMisses: missed });
  const problems = [...(error !== undefined ? [`${(error as Error).message}${daemon ? `\n${daemon.tail(15)}` : ''}`] : []), ...violations, ...missed];
  return {
    scenario: scenario.name,
    round,
    records: opts.records,
    ...figures,
    recoverySeconds,
    outageSeconds,
    worstLsoLagRecords: Number(progress.worstLag),
    durationSeconds: (Date.now() - t0) / 1000,
    supervisorRestarts: 0,
    faults: progress.faults.map((f) => f.text),
    observed: tracker.o,
    missed,
    verdict,
    passed: verdict === 'PASS',
    ...(problems.length ? { error: problems.join('; ') } : {}),
  };
}

/** eoswatch as the app's sidecar: its group (streams:), its transactions from the coordinator, the output's LSO, each second. */
export function streamsDaemonConfig(brokers: string[], applicationId: string, sink: string, port: number): Record<string, unknown> {
  return {
    http: { host: '127.0.0.1', port },
    log: { level: 'info' },
    kafka: { brokers, healthCheckInterval: '5s' },
    audit: { enabled: false },
    pipeline: { enabled: false },
    streams: { enabled: true, interval: '1s', applications: [{ applicationId }] },
    transactions: { enabled: true, interval: '1s' },
    lsoMonitor: { enabled: true, interval: '1s', topics: [sink] },
  };
}

/** Runs every round of every scenario on one Kafka cluster, in order. */
export async function runStreamsScenarios(cluster: LocalCluster, scenarios: StreamsScenario[], opts: StreamsChaosOptions & { kafkaVersion: string }): Promise<StreamsChaosRun> {
  const results: StreamsRoundResult[] = [];
  const startedAt = new Date().toISOString();
  for (const s of scenarios) {
    for (let r = 1; r <= opts.rounds; r++) {
      opts.log(`${s.name} round ${r}/${opts.rounds} (Kafka Streams): ${s.description}`);
      const res = await runStreamsRound(cluster, s, r, opts);
      opts.log(`  ${res.verdict}: ${res.received} received, ${res.duplicates} duplicates, ${res.lost} lost, ${res.orderViolations} order violations${res.error ? ` (${res.error.split('\n')[0]})` : ''}`);
      results.push(res);
    }
  }
  const counts = countVerdicts(results);
  return { startedAt, kafkaVersion: opts.kafkaVersion, records: opts.records, rounds: opts.rounds, partitions: opts.partitions, instances: opts.instances, results, counts, passed: counts.fail === 0 && counts.error === 0 };
}
