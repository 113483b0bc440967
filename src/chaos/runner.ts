// `eoswatch chaos`: runs fault scenarios against a local 3-node cluster and pipeline workers it
// starts itself, then verifies each round's sink with the verifier. A round: fresh topics, N
// verification records written up front, the pipeline slowed to last about the scenario's length,
// the faults injected at chosen points of its progress, a supervisor restarting a worker that
// exits on its own (as an orchestrator would), then the sink read read_committed and judged.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { ensureTopics } from '../kafka/admin.js';
import { EndOffsetReader } from '../kafka/offsets.js';
import type { LocalCluster } from '../localcluster/cluster.js';
import { produceVerifyRecords } from '../verify/verify.js';
import type { Scenario, ScenarioContext } from './scenarios.js';
import { RoundNetwork } from './network-faults.js';
import { windowResults, type FaultWindowResult } from './windows.js';
import { committedProgress, restoreBrokers, sinkFigures, verifyRound, waitReplicated, type SinkFigures } from './round-kafka.js';
import { WorkerProcess } from './worker.js';

export interface ChaosOptions {
  records: number;
  rounds: number;
  partitions: number;
  /**
   * No slowing: the pipeline runs as fast as it can, so that every fault finds transactions open
   * with a full checkpoint interval of records. Give it enough records to outlast the faults.
   */
  fullSpeed?: boolean;
  /** Directory for worker logs. */
  workDir: string;
  log(line: string): void;
  /** Every progress reading of a round (about twice a second). */
  progress?(p: ChaosProgress): void;
}

export interface ChaosProgress {
  scenario: string;
  round: number;
  /** Input records committed by the pipeline so far, of `total`. */
  committed: number;
  total: number;
  /** The last fault injected in this round, as listed in the report. */
  lastFault?: string;
}

export interface RoundResult extends SinkFigures {
  scenario: string;
  round: number;
  records: number;
  /** From the end of the last fault until the pipeline committed progress again. */
  recoverySeconds: number | null;
  worstLsoLagRecords: number;
  durationSeconds: number;
  /** Worker restarts by the supervisor (a worker that exited on its own, e.g. FAILED). */
  supervisorRestarts: number;
  faults: string[];
  /** Network faults (networked cluster): when each started and healed, and the recovery after it. */
  windows?: FaultWindowResult[];
  passed: boolean;
  error?: string;
}

const TIMEOUTS = { transaction: 12_000, session: 6_000, request: 10_000, checkpoint: 10_000 };
/** A round whose pipeline commits nothing for this long after its last fault has stalled. */
const STALL_MS = 180_000;
/** The names scenarios start workers under; each gets a namespace on a networked cluster. */
const WORKER_NAMES = ['main', 'b'];

/** Java's String.hashCode, as Kafka uses it to place a transactional id on a __transaction_state partition. */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** Broker leading the __transaction_state partition that coordinates a transactional id. */
export async function transactionCoordinator(admin: Admin, transactionalId: string): Promise<number> {
  const meta = await admin.fetchTopicMetadata({ topics: ['__transaction_state'] });
  const partitions = meta.topics[0]!.partitions;
  const p = partitions.find((x) => x.partitionId === (javaStringHash(transactionalId) & 0x7fffffff) % partitions.length)!;
  return p.leader;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function runRound(cluster: LocalCluster, scenario: Scenario, round: number, opts: ChaosOptions): Promise<RoundResult> {
  const t0 = Date.now();
  const id = `chaos-${scenario.name}-${round}-${randomUUID().slice(0, 6)}`;
  const source = `${id}-in`;
  const sink = `${id}-out`;
  const groupId = `${id}-group`;
  const brokers = cluster.brokers;
  const kafka = new Kafka({ clientId: `${id}-runner`, brokers, logLevel: logLevel.NOTHING, retry: { retries: 15, initialRetryTime: 200, maxRetryTime: 2000 } });
  const faults: string[] = [];
  const workers = new Map<string, WorkerProcess>();
  const intended = new Set<WorkerProcess>();
  let supervisorRestarts = 0;
  let finished = false;
  let worstLag = 0n;
  const progressLog: { t: number; committed: bigint }[] = [];
  let total = 0n;
  let lastFaultAt = 0;
  mkdirSync(opts.workDir, { recursive: true });
  if (scenario.network && !cluster.network) throw new Error(`scenario ${scenario.name} needs a networked cluster (LocalCluster.start({ network: true }))`);

  const admin = kafka.admin();
  await admin.connect();
  const offsets = new EndOffsetReader(kafka);
  // Fast enough to finish, slow enough for the faults to land inside the run (0: full speed).
  const rate = opts.fullSpeed || scenario.unthrottled ? 0 : Math.max(50, Math.ceil(opts.records / scenario.seconds));
  const timeouts = { ...TIMEOUTS, ...scenario.timeouts };
  const config = {
    http: { host: '127.0.0.1', port: 0 },
    log: { level: 'info' },
    shutdown: { gracePeriod: '20s' },
    kafka: { brokers, requestTimeout: `${timeouts.request}ms`, healthCheckInterval: '5s' },
    audit: { enabled: false },
    lsoMonitor: { enabled: false },
    pipeline: {
      enabled: true,
      name: id,
      sourceTopic: source,
      sinkTopic: sink,
      groupId,
      transactionalIdPrefix: id,
      startFrom: 'earliest',
      // The default checkpoint interval. A slowed round fetches in small steps (pipeline-service.ts);
      // --full-speed keeps the default fetch sizes, so faults hit transactions as large as a normal run's.
      checkpoint: { timeout: `${timeouts.checkpoint}ms`, tolerableFailedCheckpoints: 10 },
      transactionTimeout: `${timeouts.transaction}ms`,
      sessionTimeout: `${timeouts.session}ms`,
      heartbeatInterval: '1s',
      onFailure: 'exit',
      faultInjection: { maxRecordsPerSecond: rate, ...scenario.faultInjection },
      ...(scenario.unthrottled ? { maxBytesPerPartition: scenario.unthrottled.maxBytesPerPartition } : {}),
    },
  };

  const startWorker = (name = 'main'): WorkerProcess => {
    const w = new WorkerProcess(config, name, { logFile: join(opts.workDir, `${id}-${name}.log`), ...(net ? { command: net.wrapWorker(name) } : {}) });
    workers.set(name, w);
    void w.exited.then(async () => {
      if (finished || intended.has(w) || workers.get(name) !== w) return;
      supervisorRestarts++;
      opts.log(`  worker ${name} exited on its own; restarting it (log: ${join(opts.workDir, `${id}-${name}.log`)})`);
      await sleep(1000);
      if (!finished && workers.get(name) === w) startWorker(name);
    });
    return w;
  };

  /** The latest reading's partitions not committed to their end (for a stall's report). */
  let partitionsBehind: string[] = [];
  const readProgress = async (): Promise<{ committed: bigint; total: bigint }> => {
    const p = await committedProgress(admin, groupId, source);
    partitionsBehind = p.behind;
    return p;
  };

  const pct = () => {
    const last = progressLog[progressLog.length - 1];
    return last && total > 0n ? `${Number((last.committed * 100n) / total)} %` : '0 %';
  };

  let monitor: Promise<void> | undefined;
  // On a networked cluster every worker runs in a namespace of its own, and scenarios cut links.
  const net = cluster.network ? new RoundNetwork(cluster.network, (what) => ctx.fault(what)) : undefined;
  const ctx: ScenarioContext & { net?: RoundNetwork } = {
    net,
    brokers: Object.keys(cluster.pids()).map(Number),
    worker: (name = 'main') => workers.get(name)!,
    startWorker,
    async killWorker(name, how) {
      const w = workers.get(name)!;
      intended.add(w);
      if (how === 'SIGKILL') await w.kill();
      else await w.stop();
    },
    async waitProgress(fraction) {
      const deadline = Date.now() + 30 * 60_000;
      while (Date.now() < deadline) {
        const last = progressLog[progressLog.length - 1];
        if (last && total > 0n && Number(last.committed) >= fraction * Number(total)) return;
        await sleep(200);
      }
      throw new Error(`the pipeline did not reach ${Math.round(fraction * 100)} % of the input`);
    },
    fault(what) {
      lastFaultAt = Date.now();
      faults.push(`${what} at ${pct()}`);
      opts.log(`  ${what} (progress ${pct()})`);
    },
    killBroker: (n) => cluster.kill(n).then(() => void (lastFaultAt = Date.now())),
    stopBroker: (n) => cluster.stop(n).then(() => void (lastFaultAt = Date.now())),
    startBroker: (n) => cluster.start(n).then(() => void (lastFaultAt = Date.now())),
    pauseBroker: (n) => cluster.pause(n),
    resumeBroker: (n) => cluster.resume(n).then(() => void (lastFaultAt = Date.now())),
    async waitReplicated() {
      await waitReplicated(admin, [source, sink, '__transaction_state', '__consumer_offsets']);
      lastFaultAt = Date.now();
    },
    transactionCoordinatorOf: (p) => transactionCoordinator(admin, `${id}-${source}-${p}`),
    async leaderOf(topic, partition) {
      const meta = await admin.fetchTopicMetadata({ topics: [topic === 'source' ? source : sink] });
      return meta.topics[0]!.partitions.find((x) => x.partitionId === partition)!.leader;
    },
    sleep,
    timeouts,
  };

  try {
    await ensureTopics(admin, [source, sink, `${sink}.dlq`].map((topic) => ({ topic, numPartitions: opts.partitions, replicationFactor: 3 })));
    const manifest = await produceVerifyRecords(kafka, source, { records: opts.records, run: id, batch: opts.partitions * 100 });
    total = BigInt(opts.records);
    opts.log(`  ${opts.records} records written in ${(manifest.ms / 1000).toFixed(1)} s; ${rate ? `pipeline limited to ${rate} records/s` : 'pipeline at full speed'}`);

    // Progress and LSO lag, every 500 ms, for the whole round.
    monitor = (async () => {
      while (!finished) {
        try {
          const p = await readProgress();
          total = p.total;
          progressLog.push({ t: Date.now(), committed: p.committed });
          opts.progress?.({ scenario: scenario.name, round, committed: Number(p.committed), total: Number(total), lastFault: faults[faults.length - 1] });
          for (const e of await offsets.read(sink)) if (e.high - e.lso > worstLag) worstLag = e.high - e.lso;
        } catch {
          /* a broker fault: the next reading will do */
        }
        await sleep(500);
      }
    })();

    if (net) for (const name of WORKER_NAMES) await net.addWorker(name);
    await scenario.setup?.(ctx);
    startWorker('main');
    await scenario.inject(ctx);
    const faultEnd = lastFaultAt;
    const atFault = [...progressLog].reverse().find((x) => x.t <= faultEnd)?.committed ?? 0n;

    // Done when every input record is committed (the group's offsets reach the source's end).
    // A round fails when the pipeline stalls (no commit for STALL_MS after the last fault), not
    // when a loaded machine makes it slow; the overall limit only bounds a crawl.
    // A scenario that slows the pipeline itself (unthrottled) is bounded by the pace it expects at worst.
    const crawlMs = scenario.unthrottled ? (opts.records / scenario.unthrottled.minRecordsPerSecond) * 1000 : (opts.records / (rate || 1000)) * 10_000;
    const limit = Date.now() + Math.max(1_800_000, crawlMs);
    let lastCommit = { t: Date.now(), committed: atFault };
    for (;;) {
      const last = progressLog[progressLog.length - 1];
      if (last && last.committed >= total && total > 0n && last.t > faultEnd) break;
      if (last && last.committed > lastCommit.committed) lastCommit = { t: last.t, committed: last.committed };
      if (Date.now() - lastCommit.t > STALL_MS) throw new Error(`the pipeline stalled: no commit for ${STALL_MS / 1000} s, ${pct()} of the input committed`);
      if (Date.now() > limit) throw new Error(`the pipeline did not finish: ${pct()} of the input committed (partitions behind: ${partitionsBehind.join(', ')})`);
      await sleep(500);
    }
    const recovered = progressLog.find((x) => x.t > faultEnd && x.committed > atFault);
    const recoverySeconds = recovered ? (recovered.t - faultEnd) / 1000 : atFault >= total ? 0 : null;

    finished = true;
    if (net?.failure) throw new Error(net.failure);
    opts.log(`  every input record committed; stopping the workers and reading the sink (read_committed, then read_uncommitted)`);
    await Promise.all([...workers.values()].map((w) => w.stop()));
    // The verifier's reads cross no faulty link, but the brokers' own traffic does: heal first.
    await net?.reset();
    const report = await verifyRound(kafka, sink, id, opts.records, opts.partitions);
    return {
      scenario: scenario.name,
      round,
      records: opts.records,
      ...sinkFigures(report),
      recoverySeconds,
      worstLsoLagRecords: Number(worstLag),
      durationSeconds: (Date.now() - t0) / 1000,
      supervisorRestarts,
      faults,
      ...(net ? { windows: windowResults(net.windows, progressLog, t0, total) } : {}),
      passed: report.violations.length === 0,
      ...(report.violations.length ? { error: report.violations.join('; ') } : {}),
    };
  } catch (err) {
    return {
      scenario: scenario.name,
      round,
      records: opts.records,
      ...sinkFigures(),
      recoverySeconds: null,
      worstLsoLagRecords: Number(worstLag),
      durationSeconds: (Date.now() - t0) / 1000,
      supervisorRestarts,
      faults,
      ...(net ? { windows: windowResults(net.windows, progressLog, t0, total) } : {}),
      passed: false,
      error: `${(err as Error).message}${[...workers.values()].map((w) => `\n${w.tail(15)}`).join('')}`,
    };
  } finally {
    finished = true;
    await Promise.all([...workers.values()].map((w) => w.kill()));
    await monitor;
    // Leave the cluster whole for the next round.
    await net?.reset().catch((err: Error) => opts.log(`  resetting the network failed: ${err.message}`));
    await restoreBrokers(cluster, ctx.brokers);
    await offsets.close();
    await admin.disconnect().catch(() => undefined);
  }
}

export interface ChaosRun {
  startedAt: string;
  kafkaVersion: string;
  records: number;
  rounds: number;
  partitions: number;
  results: RoundResult[];
  passed: boolean;
}

/** Runs every round of every scenario on one cluster, in order. */
export async function runScenarios(cluster: LocalCluster, scenarios: Scenario[], opts: ChaosOptions & { kafkaVersion: string }): Promise<ChaosRun> {
  const run: ChaosRun = { startedAt: new Date().toISOString(), kafkaVersion: opts.kafkaVersion, records: opts.records, rounds: opts.rounds, partitions: opts.partitions, results: [], passed: true };
  for (const s of scenarios) {
    for (let r = 1; r <= opts.rounds; r++) {
      opts.log(`${s.name} round ${r}/${opts.rounds}: ${s.description}`);
      const res = await runRound(cluster, s, r, opts);
      opts.log(`  ${res.passed ? 'PASS' : 'FAIL'}: ${res.received} received, ${res.duplicates} duplicates, ${res.lost} lost, ${res.orderViolations} order violations${res.error ? ` (${res.error.split('\n')[0]})` : ''}`);
      run.results.push(res);
      if (!res.passed) run.passed = false;
    }
  }
  return run;
}
