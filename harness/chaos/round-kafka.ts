// Kafka readings shared by the chaos rounds of both engines (harness/chaos/runner.ts for eoswatch's
// pipeline, harness/chaos/flink-runner.ts for a Flink job): committed progress of the pipeline's group
// on its source topic, waiting for every replica to be back in sync after a broker fault, the
// cluster made whole again after a round, and the verifier's figures of a round.
import { Kafka as KafkaClient, logLevel, type Admin, type Kafka } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import { createCluster, EndOffsetReader } from '../../src/kafka/offsets.js';
import type { LocalCluster } from '../localcluster/cluster.js';
import { checkSinkTopic, type VerifyReport } from '../../src/verify/verify.js';
import { pollUntil, PollTimeoutError } from '../../src/runtime/poll-until.js';
import { systemClock } from '../../src/runtime/clock.js';
import { HarnessError } from './verdict.js';
import { EosError, ErrorCodes } from '../../src/errors.js';


/**
 * Input records committed by `groupId` on `topic` (sum of its committed offsets), the topic's end,
 * and the partitions not yet committed to their end ("3 at 120 of 500", for a stall's report).
 */
export async function committedProgress(admin: Admin, groupId: string, topic: string): Promise<{ committed: bigint; total: bigint; behind: string[] }> {
  const ends = await admin.fetchTopicOffsets(topic);
  const committed = (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]?.partitions ?? [];
  let c = 0n;
  let t = 0n;
  const behind: string[] = [];
  for (const e of ends) {
    t += BigInt(e.high);
    const o = committed.find((p) => p.partition === e.partition)?.offset;
    const at = o !== undefined && o !== '-1' ? BigInt(o) : 0n;
    c += at;
    if (at < BigInt(e.high)) behind.push(`${e.partition} at ${at} of ${e.high}`);
  }
  return { committed: c, total: t, behind };
}

/** Waits until every partition of `topics` has a leader and its full ISR (errors of a restarting cluster are retried until the deadline). */
export async function waitReplicated(admin: Admin, topics: string[], timeoutMs = 180_000): Promise<void> {
  await pollUntil(
    'every partition with a leader and its full ISR',
    async () => {
      const meta = await admin.fetchTopicMetadata({ topics });
      const short = meta.topics.flatMap((t) => t.partitions.filter((p) => p.isr.length < p.replicas.length || p.leader < 0).map((p) => `${t.name}-${p.partitionId}`));
      return short.length ? { underReplicated: short.slice(0, 5) } : true;
    },
    { timeoutMs, intervalMs: 500, done: (v) => v === true },
  );
}

/** The kafkajs cluster calls of one broker's Metadata answer (kafkajs' own cluster object, src/kafka/offsets.ts createCluster). */
interface MetadataCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findBroker(req: { nodeId: string }): Promise<{ metadata(topics: string[]): Promise<{ topicMetadata: { topic: string; partitionMetadata: { partitionId: number; leader: number }[] }[] }> }>;
}

/**
 * What a broker's Metadata answer lacks of `topics` (each with `partitions` partitions, each with
 * a leader): "" when it has them all. Pure, for the per-broker wait below.
 */
export function metadataShortfall(answer: { topicMetadata: { topic: string; partitionMetadata: { partitionId: number; leader: number }[] }[] }, topics: string[], partitions: number): string {
  const short: string[] = [];
  for (const t of topics) {
    const m = answer.topicMetadata.find((x) => x.topic === t);
    if (!m) short.push(`${t} unknown`);
    else if (m.partitionMetadata.length < partitions) short.push(`${t} has ${m.partitionMetadata.length} of ${partitions} partitions`);
    else {
      const leaderless = m.partitionMetadata.filter((p) => p.leader < 0).map((p) => p.partitionId);
      if (leaderless.length) short.push(`${t} partitions ${leaderless.join(', ')} without a leader`);
    }
  }
  return short.join('; ');
}

/**
 * Waits until every broker's own Metadata answer has each of `topics` with a leader for every
 * partition: a topic just created is known to the controller first and to each broker only when
 * the metadata reaches it, and a client sent to a broker that has not seen it yet gets "This
 * server does not host this topic-partition". A HarnessError after timeoutMs names what was missing where.
 */
export async function waitTopicsOnEveryBroker(brokers: string[], nodeIds: number[], topics: string[], partitions: number, timeoutMs = 60_000): Promise<void> {
  const kafka = new KafkaClient({ clientId: 'eoswatch-chaos-metadata', brokers, logLevel: logLevel.NOTHING, connectionTimeout: 2000, requestTimeout: 5000, retry: { retries: 0 } });
  const cluster = createCluster<MetadataCluster>(kafka, 0);
  const missing = new Map<number, string>(nodeIds.map((id) => [id, 'not asked yet']));
  try {
    await pollUntil(
      "the round's topics in every broker's metadata",
      async () => {
        for (const id of [...missing.keys()]) {
          try {
            await cluster.connect();
            const answer = await (await cluster.findBroker({ nodeId: String(id) })).metadata(topics);
            const short = metadataShortfall(answer, topics, partitions);
            if (short) missing.set(id, short);
            else missing.delete(id);
          } catch (err) {
            // kafkajs throws on a topic error in the answer (UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE).
            missing.set(id, (err as Error).message);
          }
        }
        return missing.size === 0;
      },
      { timeoutMs, intervalMs: 200 },
    );
  } catch (err) {
    if (!(err instanceof PollTimeoutError)) throw err;
    throw new HarnessError(`the round's topics did not reach every broker's metadata within ${timeoutMs / 1000} s: ${[...missing].map(([id, why]) => `broker ${id}: ${why}`).join('; ')}`);
  } finally {
    await cluster.disconnect().catch(() => undefined);
  }
}

/**
 * An idempotent harness step tried again (every 2 s) until it succeeds or budgetMs is spent, then
 * a HarnessError naming the step and its last error. Only for steps that can be repeated safely
 * (creating topics that may exist), never for writing the input.
 */
export async function retryStep<T>(what: string, fn: () => Promise<T>, budgetMs = 60_000): Promise<T> {
  let attempts = 0;
  let failure: unknown;
  try {
    const done = await pollUntil(
      what,
      async () => {
        attempts++;
        try {
          return { value: await fn() };
        } catch (err) {
          failure = err;
          return undefined;
        }
      },
      { timeoutMs: budgetMs, intervalMs: 2000 },
    );
    return done!.value;
  } catch (err) {
    if (!(err instanceof PollTimeoutError)) throw err;
    throw new HarnessError(`${what} (${attempts} attempts): ${failure === undefined ? `no answer within ${budgetMs} ms` : (failure as Error).message}`, { cause: failure ?? err });
  }
}

/**
 * One line of a failed broker start for the report: the error's first line and the first error
 * line of the broker's log it quotes (LocalCluster.start's "First errors in ..."), else the last
 * line of the log's tail.
 */
export function startFailureSummary(message: string): string {
  const lines = message.split('\n').map((l) => l.trim());
  const at = lines.findIndex((l) => l.startsWith('First errors in '));
  const tailAt = lines.findIndex((l) => l.startsWith('Tail of '));
  const detail = at >= 0 ? lines[at + 1] : tailAt >= 0 ? lines.slice(tailAt + 1).filter(Boolean).pop() : undefined;
  const clip = (s: string) => (s.length > 240 ? `${s.slice(0, 237)}...` : s);
  return clip(detail && detail !== lines[0] ? `${lines[0]} ${detail}` : lines[0]!);
}

export interface BrokerStartOptions {
  /** The whole time the start may take, retries included (ms). */
  budgetMs: number;
  /** A failed attempt, summarised, for the round's report. */
  note(line: string): void;
}

/**
 * Starts a stopped broker; a node that exits during start-up (or never becomes ready) is started
 * again until the budget is spent, each failure summarised through `note`. A HarnessError when it
 * never came up: the harness could not run the round, the pipeline did nothing wrong.
 */
export async function startBroker(cluster: LocalCluster, id: number, opts: BrokerStartOptions): Promise<void> {
  const clock = systemClock;
  const begun = clock.now();
  let last = '';
  let attempt = 0;
  // Each attempt is bounded by the budget left (at least 10 s) and never abandoned: the budget is
  // judged between attempts (no new one with less than 5 s left), pollUntil's timeout only backs it up.
  const outcome = await pollUntil(
    `broker ${id} to start`,
    async () => {
      const left = opts.budgetMs - (clock.now() - begun);
      if (attempt > 0 && left < 5000) return 'spent';
      attempt++;
      try {
        if (cluster.status(id) === 'running') await cluster.waitReady([id], Math.max(10_000, left));
        else await cluster.start(id, Math.max(10_000, Math.min(120_000, left)));
        if (attempt > 1) opts.note(`broker ${id} started on attempt ${attempt}`);
        return 'started';
      } catch (err) {
        last = startFailureSummary((err as Error).message);
        opts.note(`broker ${id} start attempt ${attempt} failed: ${last}`);
        // Up but never ready: start it over.
        if (cluster.status(id) !== 'stopped') await cluster.kill(id).catch(() => undefined);
        return undefined;
      }
    },
    { timeoutMs: opts.budgetMs + 180_000, intervalMs: 3000, clock },
  ).catch((err: unknown) => {
    if (!(err instanceof PollTimeoutError)) throw err;
    return 'spent' as const;
  });
  if (outcome === 'spent') throw new HarnessError(`broker ${id} did not start again within ${Math.round(opts.budgetMs / 1000)} s (${attempt} attempts; last: ${last})`);
}

/** Every broker a round paused or stopped, running again for the next round (started again as startBroker does). */
export async function restoreBrokers(cluster: LocalCluster, ids: number[], opts: BrokerStartOptions = { budgetMs: 120_000, note: () => undefined }): Promise<void> {
  const failures: string[] = [];
  for (const n of ids) {
    if (cluster.status(n) === 'paused') await cluster.resume(n).catch(() => undefined);
    if (cluster.status(n) === 'stopped') await startBroker(cluster, n, opts).catch((err: Error) => failures.push(err.message));
  }
  if (failures.length) throw new HarnessError(failures.join('; '));
}

export interface SinkFigures {
  /** Records of the round found in the sink (first copies). */
  received: number;
  duplicates: number;
  lost: number;
  unexpected: number;
  wrongValue: number;
  orderViolations: number;
  /** Records of aborted transactions, visible only to read_uncommitted (never counted above). */
  abortedRecords: number;
}

/** The verifier's figures of a round; all 0 when the round failed before its sink was read. */
export function sinkFigures(report?: VerifyReport): SinkFigures {
  if (!report) return { received: 0, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0, abortedRecords: 0 };
  const { received, duplicates, lost, unexpected, wrongValue, orderViolations } = report;
  return { received, duplicates, lost, unexpected, wrongValue, orderViolations, abortedRecords: report.abortedRecords ?? 0 };
}

/** The round's sink judged by the verifier: read_committed (nothing duplicated, lost, out of order or with a wrong value), then read_uncommitted for the aborted records. */
export function verifyRound(
  kafka: Kafka,
  sink: string,
  run: string,
  records: number,
  partitions: number,
  thresholds = { maxDuplicateRate: 0, maxLossRate: 0, maxOutOfOrderRate: 0 },
): Promise<VerifyReport> {
  return checkSinkTopic(kafka, sink, {
    run,
    records,
    partitions,
    valueDelta: 1,
    thresholds,
    uncommittedPass: true,
    timeoutMs: 180_000,
  });
}

/**
 * An engine round's progress (harness/chaos/flink-runner.ts, harness/chaos/streams-runner.ts): the
 * engine's committed input (its group's offsets on the source) and whether the sink has settled
 * (no transaction open), read every 500 ms while the round runs; the waits on it (a fraction of
 * the input committed, every record committed and the sink settled), the writer's back-pressure,
 * and the outage and recovery figures of the faults.
 */
export class RoundProgress {
  readonly log: { t: number; committed: bigint; settled: boolean }[] = [];
  /** The faults injected, each with the input committed at that moment ("SIGKILL instance 1 at 45 %"). */
  readonly faults: { t: number; text: string; committed: bigint }[] = [];
  /** The largest HW − LSO of a sink partition seen. */
  worstLag = 0n;
  private readonly total: bigint;
  private gate: number | null = null;

  constructor(
    private readonly records: number,
    /** Who commits: "job", "app". */
    private readonly who: string,
  ) {
    this.total = BigInt(records);
  }

  private get last(): { t: number; committed: bigint; settled: boolean } | undefined {
    return this.log[this.log.length - 1];
  }

  /** "42 %": the input committed so far. */
  get pct(): string {
    const last = this.last;
    return last ? `${Number((last.committed * 100n) / this.total)} %` : '0 %';
  }

  /** A fault injected now: recorded with the progress at this moment and logged; returns its time. */
  fault(text: string, log: (line: string) => void): number {
    const t = Date.now();
    this.faults.push({ t, text: `${text} at ${this.pct}`, committed: this.last?.committed ?? 0n });
    log(`  ${text} (progress ${this.pct})`);
    return t;
  }

  /** The faults injected once the whole input was committed (they tested nothing of the job's exactly-once). */
  get faultsAfterInput(): string[] {
    return this.faults.filter((f) => f.committed >= this.total).map((f) => f.text);
  }

  /** The last fault's text, for the progress line. */
  get lastFault(): string | undefined {
    return this.faults[this.faults.length - 1]?.text;
  }

  /** Reads the progress every 500 ms until `finished()`; a reading that fails (a broker fault) is skipped. */
  async follow(read: { admin: Admin; offsets: { read(topic: string): Promise<{ high: bigint; lso: bigint }[]> }; group: string; source: string; sink: string }, finished: () => boolean, onReading?: (committed: number) => void): Promise<void> {
    while (!finished()) {
      try {
        const p = await committedProgress(read.admin, read.group, read.source);
        const ends = await read.offsets.read(read.sink);
        for (const e of ends) if (e.high - e.lso > this.worstLag) this.worstLag = e.high - e.lso;
        this.log.push({ t: Date.now(), committed: p.committed, settled: ends.every((e) => e.lso === e.high) });
        onReading?.(Number(p.committed));
      } catch {
        /* a broker fault: the next reading will do */
      }
      await systemClock.sleep(500);
    }
  }

  /** Resolves once this fraction of the input is committed. */
  async waitFraction(fraction: number, timeoutMs = 30 * 60_000): Promise<void> {
    await pollUntil(
      `the ${this.who} to reach ${Math.round(fraction * 100)} % of the input`,
      () => {
        const last = this.last;
        return last && Number(last.committed) >= fraction * this.records ? true : { committed: last?.committed, records: this.records };
      },
      { timeoutMs, intervalMs: 200, done: (v) => v === true },
    );
  }

  /** The writer's hold: it waits while more than `ahead` records written are not committed yet (until `finished()`). */
  hold(ahead: number, finished: () => boolean): (written: number) => Promise<void> {
    return async (written) => {
      while (!finished() && (written - Number(this.last?.committed ?? 0n) > ahead || (this.gate !== null && written >= this.gate))) await systemClock.sleep(200);
    };
  }

  /**
   * The writer writes no further than this fraction of the input until the gate moves (null: no
   * gate). A scenario of many faults moves it ahead of each fault's point while that fault runs
   * (harness/chaos/flink-scenarios.ts, seed-protocol), so the input is never all written, let alone
   * committed, before its last fault, however long each fault took.
   */
  gateAt(fraction: number | null): void {
    this.gate = fraction === null ? null : Math.ceil(fraction * this.records);
  }

  /** Resolves once every record is committed and the sink settled, in a reading taken after `after`. */
  async waitSettled(after: number, timeoutMs = 300_000): Promise<void> {
    await pollUntil(
      'every input record committed and the sink settled (no open transaction)',
      () => {
        const last = this.last;
        return last && last.committed >= this.total && last.settled && last.t > after ? true : this.pct;
      },
      { timeoutMs, intervalMs: 500, done: (v) => v === true },
    ).catch(() => {
      throw new EosError(ErrorCodes.CHAOS_ROUND_FAILED, `the ${this.who} did not finish: ${this.pct} of the input committed`);
    });
  }

  /** recoverySeconds: from the end of the last fault until progress was committed again; outageSeconds: the longest from a fault until it was. */
  figures(faultEnd: number, faultTimes: number[] = this.faults.map((f) => f.t)): { recoverySeconds: number | null; outageSeconds: number | null } {
    const committedAt = (t: number) => [...this.log].reverse().find((x) => x.t <= t)?.committed ?? 0n;
    const resumed = (t: number) => this.log.find((x) => x.t > t && x.committed > committedAt(t));
    const recovered = resumed(faultEnd);
    const recoverySeconds = recovered ? (recovered.t - faultEnd) / 1000 : committedAt(faultEnd) >= this.total ? 0 : null;
    const outages = faultTimes.map((t) => resumed(t)).map((r, i) => (r ? (r.t - faultTimes[i]!) / 1000 : null));
    const outageSeconds = outages.some((x) => x === null) ? null : outages.length ? Math.max(...(outages as number[])) : 0;
    return { recoverySeconds, outageSeconds };
  }
}

/** An engine round's names and clients: `<engine>-<scenario>-<round>-<random>`, its topics, the runner's kafkajs client (patient retries: brokers come and go), an admin and an end-offset reader. */
export function roundClients(cluster: LocalCluster, engine: string, scenario: string, round: number): { id: string; source: string; sink: string; brokers: string[]; brokerIds: number[]; kafka: Kafka; admin: Admin; offsets: EndOffsetReader } {
  const id = `${engine}-${scenario}-${round}-${randomUUID().slice(0, 6)}`;
  const brokers = cluster.brokers;
  const kafka = new KafkaClient({ clientId: `${id}-runner`, brokers, logLevel: logLevel.NOTHING, retry: { retries: 15, initialRetryTime: 200, maxRetryTime: 2000 } });
  return { id, source: `${id}-in`, sink: `${id}-out`, brokers, brokerIds: Object.keys(cluster.pids()).map(Number), kafka, admin: kafka.admin(), offsets: new EndOffsetReader(kafka) };
}
