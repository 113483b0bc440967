// `npm run chaos`: runs fault scenarios against a local 3-node cluster and pipeline workers it
// starts itself, then verifies each round's sink with the verifier. A round: fresh topics, N
// verification records written up front, the pipeline slowed to last about the scenario's length,
// the faults injected at chosen points of its progress, a supervisor restarting a worker that
// exits on its own (as an orchestrator would), then the sink read read_committed and judged.
// Beside that exactly-once verdict, the workers' /metrics are scraped every second for the
// round's availability (./availability.ts); a round the harness itself cannot run (a broker that
// will not start again, a topic that never reached every broker) is an ERROR, not a FAIL (./verdict.ts).
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { ensureTopics } from '../../src/kafka/admin.js';
import { pollUntil, PollTimeoutError } from '../../src/runtime/poll-until.js';
import { systemClock } from '../../src/runtime/clock.js';
import { EndOffsetReader } from '../../src/kafka/offsets.js';
import type { LocalCluster } from '../localcluster/cluster.js';
import { produceVerifyRecords } from '../../src/verify/verify.js';
import type { Scenario, ScenarioContext } from './scenarios.js';
import { RoundNetwork } from './network-faults.js';
import { windowResults, type FaultWindowResult } from './windows.js';
import { committedProgress, restoreBrokers, retryStep, sinkFigures, startBroker, verifyRound, waitReplicated, waitTopicsOnEveryBroker, type SinkFigures } from './round-kafka.js';
import { WorkerProcess } from './worker.js';
import { roundAvailability, workerMetrics, type RoundAvailability, type Scrape } from './availability.js';
import { HarnessError, countVerdicts, harnessStep, roundVerdict, runVerdict, type Verdict, type VerdictCounts } from './verdict.js';
import { EosError, ErrorCodes } from '../../src/errors.js';

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
  /**
   * Workers the runner restarted after they exited on their own (e.g. a FAILED pipeline under
   * onFailure: exit); the same count as availability.workerExits.
   */
  supervisorRestarts: number;
  faults: string[];
  /** Network faults (networked cluster): when each started and healed, and the recovery after it. */
  windows?: FaultWindowResult[];
  /** Failed checkpoints, pipeline restarts, worker exits, the longest commit stall, the scenario's expectation. */
  availability?: RoundAvailability;
  /** What the harness had to do again (a broker restarted after it exited during start-up), or could not do. */
  harnessNotes?: string[];
  /** PASS, FAIL (exactly-once or the pipeline broken), ERROR (the harness could not run the round). */
  verdict?: Verdict;
  /** verdict === 'PASS'. */
  passed: boolean;
  error?: string;
}

const TIMEOUTS = { transaction: 12_000, session: 6_000, request: 10_000, checkpoint: 10_000 };
/** How often the runner scrapes its workers' /metrics, and how long it waits for an answer. */
const SCRAPE_MS = 1000;
const SCRAPE_TIMEOUT_MS = 2000;
/** A broker a scenario stopped may take this long to start again, retries included, unless the scenario says otherwise. */
const BROKER_START_BUDGET_MS = 240_000;
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
  const scrapes: Scrape[] = [];
  const harnessNotes: string[] = [];
  /** Workers' HTTP addresses on a networked cluster (each in its own namespace); 127.0.0.1 otherwise. */
  const workerHosts = new Map<string, string>();
  const brokerStart = {
    budgetMs: scenario.brokerStartBudgetMs ?? BROKER_START_BUDGET_MS,
    note: (line: string) => {
      harnessNotes.push(line);
      opts.log(`  harness: ${line}`);
    },
  };
  let finished = false;
  let worstLag = 0n;
  const progressLog: { t: number; committed: bigint }[] = [];
  let total = 0n;
  let lastFaultAt = 0;
  mkdirSync(opts.workDir, { recursive: true });
  if (scenario.network && !cluster.network) throw new EosError(ErrorCodes.USAGE, `scenario ${scenario.name} needs a networked cluster (LocalCluster.start({ network: true }))`);

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
    const host = workerHosts.get(name);
    const w = new WorkerProcess(host ? { ...config, http: { ...config.http, host } } : config, name, { logFile: join(opts.workDir, `${id}-${name}.log`), ...(net ? { command: net.wrapWorker(name) } : {}) });
    workers.set(name, w);
    void w.exited.then(async () => {
      if (finished || intended.has(w) || workers.get(name) !== w) return;
      supervisorRestarts++;
      opts.log(`  worker ${name} exited on its own; restarting it (log: ${join(opts.workDir, `${id}-${name}.log`)})`);
      await systemClock.sleep(1000);
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
      await pollUntil(
        `the pipeline to reach ${Math.round(fraction * 100)} % of the input`,
        () => {
          const last = progressLog[progressLog.length - 1];
          return last && total > 0n && Number(last.committed) >= fraction * Number(total) ? true : { committed: last?.committed, total };
        },
        { timeoutMs: 30 * 60_000, intervalMs: 200, done: (v) => v === true },
      );
    },
    fault(what) {
      lastFaultAt = Date.now();
      faults.push(`${what} at ${pct()}`);
      opts.log(`  ${what} (progress ${pct()})`);
    },
    // The cluster's own operations are the harness's: their failures make the round an ERROR.
    killBroker: (n) => harnessStep(`killing broker ${n}`, () => cluster.kill(n)).then(() => void (lastFaultAt = Date.now())),
    stopBroker: (n) => harnessStep(`stopping broker ${n}`, () => cluster.stop(n)).then(() => void (lastFaultAt = Date.now())),
    // A node that exits during start-up (e.g. it could not reach the others yet) is started again within the budget.
    startBroker: (n) => startBroker(cluster, n, brokerStart).then(() => void (lastFaultAt = Date.now())),
    pauseBroker: (n) => harnessStep(`pausing broker ${n}`, () => cluster.pause(n)),
    resumeBroker: (n) => harnessStep(`resuming broker ${n}`, () => cluster.resume(n)).then(() => void (lastFaultAt = Date.now())),
    async waitReplicated() {
      await harnessStep('waiting for the replicas to be in sync', () => waitReplicated(admin, [source, sink, '__transaction_state', '__consumer_offsets']));
      lastFaultAt = Date.now();
    },
    transactionCoordinatorOf: (p) => harnessStep('finding the transaction coordinator', () => transactionCoordinator(admin, `${id}-${source}-${p}`)),
    leaderOf: (topic, partition) =>
      harnessStep(`finding the leader of ${topic} partition ${partition}`, async () => {
        const meta = await admin.fetchTopicMetadata({ topics: [topic === 'source' ? source : sink] });
        return meta.topics[0]!.partitions.find((x) => x.partitionId === partition)!.leader;
      }),
    sleep: (ms: number) => systemClock.sleep(ms),
    timeouts,
  };

  /** Every current worker's /metrics once; a worker down, not listening yet or not answering is a gap. */
  const scrapeAll = async () => {
    await Promise.all(
      [...workers.entries()].map(async ([name, w]) => {
        const t = Date.now();
        const text = await w.scrape(SCRAPE_TIMEOUT_MS);
        let metrics;
        try {
          metrics = text === undefined ? undefined : workerMetrics(text);
        } catch {
          /* a page cut short: a gap */
        }
        scrapes.push({ t, worker: name, pid: w.pid, ...(metrics ? { metrics } : {}) });
      }),
    );
  };
  // Input is pending from the start of the round until the first reading that has it all committed.
  // A round the harness could not run has its figures, but its expectation is not judged.
  const judgeAvailability = (judge = true) =>
    roundAvailability({
      scrapes,
      workerExits: supervisorRestarts,
      inputDoneAt: progressLog.find((x) => total > 0n && x.committed >= total)?.t ?? null,
      endAt: Date.now(),
      ...(judge && scenario.availability ? { expectation: scenario.availability } : {}),
      brokers: ctx.brokers.length,
    });
  let scraper: Promise<void> | undefined;
  let scraping = true;

  try {
    // A round starts on a whole cluster (a broker the previous round could not start again gets another try).
    await restoreBrokers(cluster, ctx.brokers, brokerStart);
    const topics = [source, sink, `${sink}.dlq`];
    await retryStep('creating the round\'s topics', () => ensureTopics(admin, topics.map((topic) => ({ topic, numPartitions: opts.partitions, replicationFactor: 3 }))));
    await waitTopicsOnEveryBroker(brokers, ctx.brokers, topics, opts.partitions);
    const manifest = await harnessStep('writing the input', () => produceVerifyRecords(kafka, source, { records: opts.records, run: id, batch: opts.partitions * 100 }));
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
        await systemClock.sleep(500);
      }
    })();

    if (net) for (const name of WORKER_NAMES) workerHosts.set(name, await net.addWorker(name));
    await scenario.setup?.(ctx);
    startWorker('main');
    scraper = (async () => {
      while (scraping && !finished) {
        await Promise.all([scrapeAll(), systemClock.sleep(SCRAPE_MS)]);
      }
    })();
    await scenario.inject(ctx);
    const faultEnd = lastFaultAt;
    const atFault = [...progressLog].reverse().find((x) => x.t <= faultEnd)?.committed ?? 0n;

    // Done when every input record is committed (the group's offsets reach the source's end).
    // A round fails when the pipeline stalls (no commit for STALL_MS after the last fault), not
    // when a loaded machine makes it slow; the overall limit only bounds a crawl.
    // A scenario that slows the pipeline itself (unthrottled) is bounded by the pace it expects at worst.
    const crawlMs = scenario.unthrottled ? (opts.records / scenario.unthrottled.minRecordsPerSecond) * 1000 : (opts.records / (rate || 1000)) * 10_000;
    let lastCommit = { t: Date.now(), committed: atFault };
    const outcome = await pollUntil(
      'the pipeline to commit every input record',
      () => {
        const last = progressLog[progressLog.length - 1];
        if (last && last.committed >= total && total > 0n && last.t > faultEnd) return 'done';
        if (last && last.committed > lastCommit.committed) lastCommit = { t: last.t, committed: last.committed };
        // A stall ends the wait at once.
        return Date.now() - lastCommit.t > STALL_MS ? 'stalled' : undefined;
      },
      { timeoutMs: Math.max(1_800_000, crawlMs), intervalMs: 500 },
    ).catch((err: unknown) => {
      if (!(err instanceof PollTimeoutError)) throw err;
      throw new EosError(ErrorCodes.CHAOS_ROUND_FAILED, `the pipeline did not finish: ${pct()} of the input committed (partitions behind: ${partitionsBehind.join(', ')})`);
    });
    if (outcome === 'stalled') throw new EosError(ErrorCodes.CHAOS_ROUND_FAILED, `the pipeline stalled: no commit for ${STALL_MS / 1000} s, ${pct()} of the input committed`);
    const recovered = progressLog.find((x) => x.t > faultEnd && x.committed > atFault);
    const recoverySeconds = recovered ? (recovered.t - faultEnd) / 1000 : atFault >= total ? 0 : null;

    // The last counters before the workers stop (their final checkpoint on SIGTERM is not the round's).
    scraping = false;
    await scraper;
    await scrapeAll();
    finished = true;
    if (net?.failure) throw new HarnessError(`the network fault was not what it claimed: ${net.failure}`);
    opts.log(`  every input record committed; stopping the workers and reading the sink (read_committed, then read_uncommitted)`);
    await Promise.all([...workers.values()].map((w) => w.stop()));
    // The verifier's reads cross no faulty link, but the brokers' own traffic does: heal first.
    await net?.reset();
    const report = await harnessStep('reading the sink', () => verifyRound(kafka, sink, id, opts.records, opts.partitions));
    const availability = judgeAvailability();
    const enforcedMisses = availability.enforced ? availability.missed : [];
    const verdict = roundVerdict({ violations: report.violations, enforcedMisses });
    const errors = [...report.violations, ...enforcedMisses.map((m) => `availability: ${m}`)];
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
      availability,
      ...(harnessNotes.length ? { harnessNotes } : {}),
      verdict,
      passed: verdict === 'PASS',
      ...(errors.length ? { error: errors.join('; ') } : {}),
    };
  } catch (err) {
    const verdict = roundVerdict({ error: err, violations: [], enforcedMisses: [] });
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
      // No worker started (the round ended before its pipeline ran): no availability to speak of.
      ...(scrapes.length ? { availability: judgeAvailability(verdict !== 'ERROR') } : {}),
      ...(harnessNotes.length ? { harnessNotes } : {}),
      verdict,
      passed: false,
      error: `${verdict === 'ERROR' ? 'harness: ' : ''}${(err as Error).message}${[...workers.values()].map((w) => `\n${w.tail(15)}`).join('')}`,
    };
  } finally {
    finished = true;
    scraping = false;
    await Promise.all([...workers.values()].map((w) => w.kill()));
    await monitor;
    await scraper;
    // Leave the cluster whole for the next round (which checks again before it starts).
    await net?.reset().catch((err: Error) => opts.log(`  resetting the network failed: ${err.message}`));
    await restoreBrokers(cluster, ctx.brokers, brokerStart).catch((err: Error) => opts.log(`  restoring the brokers failed: ${err.message}`));
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
  /** Every round PASS. */
  passed: boolean;
  /** Rounds by verdict: an ERROR (harness) is never counted as a FAIL. */
  counts?: VerdictCounts;
  verdict?: Verdict;
}

/** Runs every round of every scenario on one cluster, in order. */
export async function runScenarios(cluster: LocalCluster, scenarios: Scenario[], opts: ChaosOptions & { kafkaVersion: string }): Promise<ChaosRun> {
  const run: ChaosRun = { startedAt: new Date().toISOString(), kafkaVersion: opts.kafkaVersion, records: opts.records, rounds: opts.rounds, partitions: opts.partitions, results: [], passed: true };
  for (const s of scenarios) {
    for (let r = 1; r <= opts.rounds; r++) {
      opts.log(`${s.name} round ${r}/${opts.rounds}: ${s.description}`);
      const res = await runRound(cluster, s, r, opts);
      const a = res.availability;
      opts.log(`  ${res.verdict ?? (res.passed ? 'PASS' : 'FAIL')}: ${res.received} received, ${res.duplicates} duplicates, ${res.lost} lost, ${res.orderViolations} order violations${a ? `; availability ${a.expectation}: ${a.failedCheckpoints} failed checkpoints, ${a.pipelineRestarts} pipeline restarts, ${a.workerExits} worker exits` : ''}${res.error ? ` (${res.error.split('\n')[0]})` : ''}`);
      run.results.push(res);
      if (!res.passed) run.passed = false;
    }
  }
  run.counts = countVerdicts(run.results);
  run.verdict = runVerdict(run.counts);
  return run;
}
