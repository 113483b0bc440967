// Kafka readings shared by the chaos rounds of both engines (src/chaos/runner.ts for eoswatch's
// pipeline, src/chaos/flink-runner.ts for a Flink job): committed progress of the pipeline's group
// on its source topic, waiting for every replica to be back in sync after a broker fault, the
// cluster made whole again after a round, and the verifier's figures of a round.
import type { Admin, Kafka } from 'kafkajs';
import type { LocalCluster } from '../localcluster/cluster.js';
import { checkSinkTopic, type VerifyReport } from '../verify/verify.js';

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
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const meta = await admin.fetchTopicMetadata({ topics });
      const short = meta.topics.flatMap((t) => t.partitions.filter((p) => p.isr.length < p.replicas.length || p.leader < 0).map((p) => `${t.name}-${p.partitionId}`));
      if (!short.length) return;
      if (Date.now() > deadline) throw new Error(`partitions still under-replicated after ${timeoutMs / 1000} s: ${short.slice(0, 5).join(', ')}`);
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Every broker a round paused or stopped, running again for the next round. */
export async function restoreBrokers(cluster: LocalCluster, ids: number[]): Promise<void> {
  for (const n of ids) {
    if (cluster.status(n) === 'paused') await cluster.resume(n).catch(() => undefined);
    if (cluster.status(n) === 'stopped') await cluster.start(n).catch(() => undefined);
  }
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
export function verifyRound(kafka: Kafka, sink: string, run: string, records: number, partitions: number): Promise<VerifyReport> {
  return checkSinkTopic(kafka, sink, {
    run,
    records,
    partitions,
    valueDelta: 1,
    thresholds: { maxDuplicateRate: 0, maxLossRate: 0, maxOutOfOrderRate: 0 },
    uncommittedPass: true,
    timeoutMs: 180_000,
  });
}
