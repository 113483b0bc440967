// `npm run chaos -- --engine flink`: fault rounds under the seed's Flink job (flink/job: source
// topic -> value + 1 -> sink topic through the KafkaSink, EXACTLY_ONCE) on a local Flink session
// cluster and the local Kafka cluster, with eoswatch watching the job as its sidecar (flink: and
// the LSO monitor, as a child process) and, when one can be started, a live Prometheus evaluating
// the shipped alert rules against it. A round: fresh topics, the job submitted, N verification
// records written as a steady stream over the scenario's length, the faults injected at points of
// the job's committed progress (its source offsets, committed on checkpoints), then, once every
// record is committed and no transaction is open on the sink, the sink read read_committed and
// judged by the verifier, and what eoswatch showed held to the scenario's expectations.
import { mkdirSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ensureTopics } from '../../src/kafka/admin.js';
import { pollUntil } from '../../src/runtime/poll-until.js';
import { systemClock } from '../../src/runtime/clock.js';
import type { LocalCluster } from '../localcluster/cluster.js';
import type { LocalFlinkCluster } from '../localcluster/flink-cluster.js';
import { produceVerifyRecords, type ProduceManifest } from '../../src/verify/verify.js';
import { ObservationTracker, type FlinkObservations } from './flink-observations.js';
import type { FlinkScenario, FlinkScenarioContext } from './flink-scenarios.js';
import type { LivePrometheus } from './prometheus.js';
import { restoreBrokers, roundClients, RoundProgress, sinkFigures, verifyRound, waitReplicated } from './round-kafka.js';
import { transactionCoordinator, type ChaosProgress, type RoundResult } from './runner.js';
import { WorkerProcess } from './worker.js';
import { EosError, ErrorCodes } from '../../src/errors.js';

export interface FlinkChaosOptions {
  records: number;
  /** --records was given: it overrides a scenario's own count (the seed protocol's 1,000,000). */
  recordsGiven?: boolean;
  /** Write the input over this many seconds instead of the scenario's own (a shorter round in CI). */
  seconds?: number;
  /** Write the input as fast as the job takes it (held back at MAX_AHEAD), not as a steady stream: faults meet full transactions. */
  fullSpeed?: boolean;
  rounds: number;
  partitions: number;
  /** The job's parallelism (the TaskManager needs as many slots). */
  parallelism: number;
  /** The KafkaSink's transactional-id naming (FLIP-511): incrementing (the default) or pooling (the Flink 2.x connector only). */
  transactionNaming?: 'incrementing' | 'pooling';
  /** Worker logs and the daemons' configs. */
  workDir: string;
  /** HTTP port of each round's eoswatch daemon: one fixed port, so one Prometheus scrapes every round. */
  daemonPort: number;
  prometheus?: LivePrometheus;
  log(line: string): void;
  progress?(p: ChaosProgress): void;
}

export interface FlinkRoundResult extends RoundResult {
  flinkVersion: string;
  /** Longest time from a fault until the job committed progress again. */
  outageSeconds: number | null;
  observed: FlinkObservations;
  /** What eoswatch should have shown during the round and did not; each one fails the round. */
  missed: string[];
}

export interface FlinkChaosRun {
  startedAt: string;
  kafkaVersion: string;
  flinkVersion: string;
  records: number;
  rounds: number;
  partitions: number;
  parallelism: number;
  fullSpeed?: boolean;
  transactionNaming?: 'incrementing' | 'pooling';
  results: FlinkRoundResult[];
  passed: boolean;
}

/** The job's Kafka transactions may stay open this long: longer than any recovery here, so only Flink aborts them. */
export const FLINK_TRANSACTION_TIMEOUT_MS = 300_000;

/**
 * Alerts no Flink round may fire: no fault here holds a transaction anywhere near its timeout
 * (FLINK_TRANSACTION_TIMEOUT_MS; a killed process's transaction is aborted by the restored job
 * within about two minutes), so EosTransactionNearTimeout firing is a false page.
 */
export const NEVER_FIRES = ['EosTransactionNearTimeout'];

/** The most of a round's records written and not yet committed by the job (a fraction of the round's records). */
export const MAX_AHEAD = 0.15;


export async function runFlinkRound(cluster: LocalCluster, flink: LocalFlinkCluster, scenario: FlinkScenario, round: number, opts: FlinkChaosOptions): Promise<FlinkRoundResult> {
  const t0 = Date.now();
  const records = opts.recordsGiven ? opts.records : (scenario.records ?? opts.records);
  const { id, source, sink, brokers, brokerIds, kafka, admin, offsets } = roundClients(cluster, 'flink', scenario.name, round);
  const groupId = `${id}-group`;
  const progress = new RoundProgress(records, 'job');
  const tracker = new ObservationTracker(id, sink, opts.prometheus !== undefined);
  const stopProducer = new AbortController();
  let finished = false;
  let lastFaultAt = 0;
  let jobId = '';
  let blocked: string | null = null;
  let daemon: WorkerProcess | undefined;
  let producing: Promise<ProduceManifest> | undefined;
  let loops: Promise<void>[] = [];
  mkdirSync(opts.workDir, { recursive: true });

  await admin.connect();
  const rate = Math.max(10, Math.ceil(records / (opts.seconds ?? scenario.seconds)));
  const fault = (text: string) => {
    lastFaultAt = progress.fault(text, opts.log);
    tracker.faultInjected(lastFaultAt);
  };
  const network = () => {
    if (!cluster.network || !flink.state.jobmanager.endpoint) throw new EosError(ErrorCodes.HARNESS_FAILED, `scenario ${scenario.name} needs the networked clusters (Kafka and Flink in network namespaces)`);
    return cluster.network;
  };
  const submit = async (fromPath?: string) => {
    jobId = await flink.submit({
      bootstrap: cluster.bootstrapServers,
      sourceTopic: source,
      sinkTopic: sink,
      parallelism: opts.parallelism,
      fromPath,
      args: {
        name: id,
        group: groupId,
        'transactional-id-prefix': id,
        'transaction-timeout-ms': FLINK_TRANSACTION_TIMEOUT_MS,
        parallelism: opts.parallelism,
        ...(opts.transactionNaming ? { 'transaction-naming': opts.transactionNaming.toUpperCase() } : {}),
      },
    });
    await flink.waitJobRunning(jobId, 300_000);
  };
  const unblock = async () => {
    if (!blocked) return;
    await rm(blocked, { force: true });
    await rename(`${blocked}.aside`, blocked);
    blocked = null;
  };

  const ctx: FlinkScenarioContext = {
    brokers: brokerIds,
    waitProgress: (fraction) => progress.waitFraction(fraction),
    fault,
    async killTaskManager() {
      fault('SIGKILL TaskManager');
      tracker.processKilled('SIGKILL TaskManager', lastFaultAt);
      await flink.kill(flink.taskManager(1));
    },
    async startTaskManager() {
      await flink.startTaskManager(1, { timeoutMs: 300_000 });
      lastFaultAt = Date.now();
    },
    async killJobManager() {
      fault('SIGKILL JobManager');
      tracker.processKilled('SIGKILL JobManager', lastFaultAt);
      await flink.kill(flink.state.jobmanager);
    },
    async startJobManager() {
      await flink.startJobManager(300_000);
      lastFaultAt = Date.now();
    },
    async resubmitFromRetainedCheckpoint() {
      const lost = jobId;
      const path = await flink.latestRetainedCheckpoint(lost);
      if (!path) throw new EosError(ErrorCodes.HARNESS_FAILED, `job ${lost} retained no checkpoint under ${join(flink.dir, 'checkpoints')}`);
      fault(`job resubmitted from ${basename(path)} of the lost job`);
      await submit(path);
      lastFaultAt = Date.now();
      return path;
    },
    async blockCheckpoints() {
      const dir = join(flink.dir, 'checkpoints', jobId);
      fault('checkpoint directory replaced by a file');
      await rename(dir, `${dir}.aside`);
      blocked = dir;
      await writeFile(dir, 'npm run chaos: checkpoints of this job cannot be written here\n');
    },
    async unblockCheckpoints() {
      fault('checkpoint directory put back');
      await unblock();
    },
    killBroker: (n) => cluster.kill(n).then(() => void (lastFaultAt = Date.now())),
    stopBroker: (n) => cluster.stop(n).then(() => void (lastFaultAt = Date.now())),
    // A restarted broker may take minutes to be ready on a loaded machine (the harness' default wait is 2 minutes).
    startBroker: (n) => cluster.start(n, 600_000).then(() => void (lastFaultAt = Date.now())),
    async waitReplicated() {
      await waitReplicated(admin, [source, sink, '__transaction_state', '__consumer_offsets']);
      lastFaultAt = Date.now();
    },
    async leaderOf(topic, partition) {
      const meta = await admin.fetchTopicMetadata({ topics: [topic === 'source' ? source : sink] });
      return meta.topics[0]!.partitions.find((x) => x.partitionId === partition)!.leader;
    },
    async openTransactionCoordinator() {
      // The KafkaSink names its transactions <prefix>-<subtask>-<checkpoint id>; after the barrier of
      // checkpoint n a writer writes the transaction of n + 1.
      const s = await flink.rest<{ history: { id: number }[]; latest: { completed: { id: number } | null } }>(`/jobs/${jobId}/checkpoints`);
      const newest = Math.max(s.latest.completed?.id ?? 0, ...s.history.map((e) => e.id));
      const transactionalId = `${id}-0-${newest + 1}`;
      return { transactionalId, broker: await transactionCoordinator(admin, transactionalId) };
    },
    async isolateJobManager() {
      const net = network();
      fault('JobManager cut off from every TaskManager');
      await net.partition([flink.role(flink.state.jobmanager)], flink.state.taskmanagers.map((tm) => flink.role(tm)));
    },
    async isolateTaskManager() {
      const net = network();
      fault('TaskManager 1 cut off from the JobManager and the brokers');
      // Its open transactions can no longer be aborted by it: they hold the sink's LSO as a killed process's do.
      tracker.processKilled('TaskManager 1 isolated', lastFaultAt);
      await net.partition([flink.role(flink.taskManager(1))], [flink.role(flink.state.jobmanager), ...brokerIds.map((n) => `n${n}`)]);
    },
    gateInput: (fraction) => progress.gateAt(fraction),
    async heal() {
      fault('network healed');
      await network().heal();
    },
    sleep: (ms: number) => systemClock.sleep(ms),
  };

  try {
    await waitSlots(flink, opts.parallelism);
    // The previous round may have restarted a broker: leaders of the internal topics elected again first.
    const internal = (await admin.listTopics()).filter((t) => t === '__consumer_offsets' || t === '__transaction_state');
    await waitReplicated(admin, internal, 600_000);
    await ensureTopics(admin, [source, sink].map((topic) => ({ topic, numPartitions: opts.partitions, replicationFactor: Math.min(3, brokerIds.length) })));
    daemon = new WorkerProcess(daemonConfig(brokers, flink.restUrl, id, sink, opts.daemonPort), 'eoswatch', { logFile: join(opts.workDir, `${id}-eoswatch.log`) });
    await daemon.url;
    await submit();
    opts.log(`  job ${jobId} running (parallelism ${opts.parallelism}); writing ${records} records ${opts.fullSpeed ? 'at full speed' : `at ${rate} records/s`}`);
    // A steady stream, held back while more than MAX_AHEAD of the round's records wait for the job:
    // records still flow when the last fault comes, however long the earlier outages lasted.
    const hold = progress.hold(Math.ceil(records * MAX_AHEAD), () => finished);
    producing = produceVerifyRecords(kafka, source, { records, run: id, ...(opts.fullSpeed ? {} : { perSecond: rate }), signal: stopProducer.signal, hold });
    producing.catch(() => undefined);

    // Progress, the sink's LSOs and eoswatch's metrics, for the whole round.
    loops = [
      progress.follow({ admin, offsets, group: groupId, source, sink }, () => finished, (committed) =>
        opts.progress?.({ scenario: scenario.name, round, committed, total: records, lastFault: progress.lastFault }),
      ),
      (async () => {
        for (let i = 0; !finished; i++) {
          const now = Date.now();
          await daemon!.metricsText().then((text) => tracker.scrape(text, jobId, now), () => undefined);
          if (opts.prometheus && i % 2 === 0) {
            await opts.prometheus.alerts().then((a) => tracker.alerts(a), () => undefined);
            const asked = Date.now();
            await opts.prometheus.query(tracker.consecutiveFailuresClause).then((r) => tracker.clauseResult(r, asked), () => undefined);
          }
          await systemClock.sleep(1000);
        }
      })(),
    ];

    await scenario.inject(ctx);
    const faultEnd = lastFaultAt;
    const manifest = await producing;
    if (manifest.records !== records) throw new EosError(ErrorCodes.HARNESS_FAILED, `only ${manifest.records} of ${records} records were written`);

    // Done when every record is committed and no transaction is open on the sink.
    await progress.waitSettled(faultEnd);
    const { recoverySeconds, outageSeconds } = progress.figures(faultEnd);

    // A last scrape with the whole round in the histograms; then the job and eoswatch stop.
    tracker.scrape(await daemon.metricsText(), jobId, Date.now());
    if (opts.prometheus) tracker.alerts(await opts.prometheus.alerts());
    finished = true;
    opts.log('  every input record committed and the sink settled; cancelling the job and reading the sink (read_committed, then read_uncommitted)');
    await cancelAll(flink);
    const report = await verifyRound(kafka, sink, id, records, opts.partitions, scenario.thresholds);
    const late = scenario.faultsMidRun ? progress.faultsAfterInput.map((f) => `"${f}" landed after the whole input was committed`) : [];
    const falsePages = tracker.o.alertsFired.filter((a) => NEVER_FIRES.includes(a)).map((a) => `${a} fired, which no fault of a Flink round explains (a false page)`);
    const missed = [...scenario.expect(tracker.o), ...late, ...falsePages];
    const problems = [...report.violations, ...missed];
    return {
      scenario: scenario.name,
      round,
      flinkVersion: flink.state.version,
      records: records,
      ...sinkFigures(report),
      recoverySeconds,
      outageSeconds,
      worstLsoLagRecords: Number(progress.worstLag),
      durationSeconds: (Date.now() - t0) / 1000,
      supervisorRestarts: 0,
      faults: progress.faults.map((f) => f.text),
      observed: tracker.o,
      missed,
      passed: problems.length === 0,
      ...(problems.length ? { error: problems.join('; ') } : {}),
    };
  } catch (err) {
    return {
      scenario: scenario.name,
      round,
      flinkVersion: flink.state.version,
      records: records,
      ...sinkFigures(),
      recoverySeconds: null,
      outageSeconds: null,
      worstLsoLagRecords: Number(progress.worstLag),
      durationSeconds: (Date.now() - t0) / 1000,
      supervisorRestarts: 0,
      faults: progress.faults.map((f) => f.text),
      observed: tracker.o,
      missed: [],
      passed: false,
      error: `${(err as Error).message}${daemon ? `\n${daemon.tail(15)}` : ''}`,
    };
  } finally {
    finished = true;
    stopProducer.abort();
    await producing?.catch(() => undefined);
    await Promise.all(loops);
    // Leave the clusters whole for the next round.
    await unblock().catch(() => undefined);
    if (cluster.network) await cluster.network.heal().catch(() => undefined);
    if (flink.status(flink.state.jobmanager) === 'stopped') await flink.startJobManager(300_000).catch(() => undefined);
    if (flink.status(flink.taskManager(1)) === 'stopped') await flink.startTaskManager(1, { timeoutMs: 300_000 }).catch(() => undefined);
    await cancelAll(flink).catch(() => undefined);
    await daemon?.kill();
    await restoreBrokers(cluster, brokerIds).catch((err: Error) => opts.log(`  restoring the brokers failed: ${err.message}`));
    await offsets.close();
    await admin.disconnect().catch(() => undefined);
  }
}

/** eoswatch as the job's sidecar: the Flink poller (the round's job, its sink for the visibility latency) and the LSO monitor, each second. */
export function daemonConfig(brokers: string[], restUrl: string, jobName: string, sink: string, port: number): Record<string, unknown> {
  const job = jobName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return {
    http: { host: '127.0.0.1', port },
    log: { level: 'info' },
    kafka: { brokers, healthCheckInterval: '5s' },
    audit: { enabled: false },
    pipeline: { enabled: false },
    flink: { enabled: true, restUrls: [restUrl], jobs: { names: [job] }, pollInterval: '1s', requestTimeout: '3s', sinks: [{ job, topics: [sink] }] },
    lsoMonitor: { enabled: true, interval: '1s', hangingAfter: `${FLINK_TRANSACTION_TIMEOUT_MS}ms` },
  };
}

/** Cancels every job of the cluster that has not ended, and waits until they have. */
async function cancelAll(flink: LocalFlinkCluster): Promise<void> {
  await pollUntil(
    'every job ended after cancel',
    async () => {
      const { jobs } = await flink.rest<{ jobs: { jid: string; state: string }[] }>('/jobs/overview', undefined, 10_000);
      const live = jobs.filter((j) => !['FINISHED', 'CANCELED', 'FAILED'].includes(j.state));
      for (const j of live) if (j.state !== 'CANCELLING') await flink.cancel(j.jid).catch(() => undefined);
      return live.length ? live.map((j) => `${j.jid} ${j.state}`) : true;
    },
    { timeoutMs: 120_000, intervalMs: 1000, done: (v) => v === true },
  );
}

/** Waits until the cluster has `slots` free task slots (a cancelled job releases them with a delay). */
async function waitSlots(flink: LocalFlinkCluster, slots: number): Promise<void> {
  await pollUntil(
    `${slots} free task slots`,
    async () => {
      const free = (await flink.rest<{ 'slots-available': number }>('/overview', undefined, 10_000))['slots-available'];
      return free >= slots ? true : { free };
    },
    { timeoutMs: 300_000, intervalMs: 1000, done: (v) => v === true },
  );
}

/** Runs every round of every scenario on one Kafka and one Flink cluster, in order. */
export async function runFlinkScenarios(cluster: LocalCluster, flink: LocalFlinkCluster, scenarios: FlinkScenario[], opts: FlinkChaosOptions & { kafkaVersion: string }): Promise<FlinkChaosRun> {
  const run: FlinkChaosRun = {
    startedAt: new Date().toISOString(),
    kafkaVersion: opts.kafkaVersion,
    flinkVersion: flink.state.version,
    records: opts.records,
    rounds: opts.rounds,
    partitions: opts.partitions,
    parallelism: opts.parallelism,
    ...(opts.fullSpeed ? { fullSpeed: true } : {}),
    ...(opts.transactionNaming ? { transactionNaming: opts.transactionNaming } : {}),
    results: [],
    passed: true,
  };
  for (const s of scenarios) {
    for (let r = 1; r <= opts.rounds; r++) {
      opts.log(`${s.name} round ${r}/${opts.rounds} (Flink ${flink.state.version}): ${s.description}`);
      const res = await runFlinkRound(cluster, flink, s, r, opts);
      opts.log(`  ${res.passed ? 'PASS' : 'FAIL'}: ${res.received} received, ${res.duplicates} duplicates, ${res.lost} lost, ${res.orderViolations} order violations${res.error ? ` (${res.error.split('\n')[0]})` : ''}`);
      run.results.push(res);
      if (!res.passed) run.passed = false;
    }
  }
  return run;
}
