// What findHanging (./hanging.ts) needs, read from a cluster: the coordinators' open transactions
// (ListTransactions on every broker, filtered to the open states, then DescribeTransactions of
// those ids) and each partition's ends (high watermark, LSO) with its producer states
// (DescribeProducers, asked only where LSO < high watermark: a partition with nothing held back
// has no transaction holding it, which keeps a snapshot of a big cluster cheap).
//
// The order is chosen so that a race can never name a transaction falsely: the coordinators are
// read first, the partitions after. A transaction that begins between the two is at most as idle
// as the snapshot is long, below any idle threshold; one that ends between the two no longer
// holds its partition's LSO when the partition is read.
//
// Every error is an entry (which source, which target, the Kafka error: kind 'permission' for a
// missing ACL), never a throw; `coordinatorsComplete` says whether every coordinator answered for
// every open id, without which "no coordinator knows this producer" cannot be concluded.
// I/O only; the clients are the caller's (a one-shot command or a long-running service).
import type { EndOffsetReader } from '../kafka/offsets.js';
import type { DescribedTransaction, PartitionProducerStates, TxnAdmin } from '../kafka/txn-admin.js';
import { thrownError, type TxnApiError } from '../kafka/txn-errors.js';
import { isTwoPhaseCommit, type OpenTransaction, type PartitionView, type ProducerState, type TopicPartition } from './hanging.js';

/** The coordinator states of a transaction not yet ended. */
import { OPEN_STATES, holdsLso } from '../kafka/txn-log.js';

export { OPEN_STATES };

export interface SnapshotSources {
  txnAdmin: Pick<TxnAdmin, 'listTransactions' | 'describeTransactions' | 'describeProducers'>;
  offsets: Pick<EndOffsetReader, 'readMany'>;
  /** Every topic of the cluster (kafkajs admin.listTopics). */
  listTopics(): Promise<string[]>;
}

export interface SnapshotError {
  source: 'Metadata' | 'ListOffsets' | 'ListTransactions' | 'DescribeTransactions' | 'DescribeProducers';
  /** What the error is about: "broker 2", a transactional id, "topic-3", a topic. */
  target: string;
  error: TxnApiError;
}

/** A producer state as findHanging needs it, plus what DescribeProducers adds (for display and abort). */
export interface PartitionProducer extends ProducerState {
  lastSequence: number;
  /** -1 when no marker of this producer was written on the partition yet. */
  coordinatorEpoch: number;
}

export interface SnapshotPartition extends PartitionView {
  producers: PartitionProducer[];
}

export interface CoordinatorTransaction extends OpenTransaction {
  coordinatorId: number | null;
}

export interface CoordinatorSnapshot {
  /** Time of the last read (the partitions'): the `now` to judge the snapshot at. */
  takenAtMs: number;
  topics: string[];
  /** Every partition read; `producers` only where LSO < high watermark (and DescribeProducers answered). */
  partitions: SnapshotPartition[];
  open: CoordinatorTransaction[];
  /** Every broker listed its transactions and every open id was described. */
  coordinatorsComplete: boolean;
  errors: SnapshotError[];
}

export interface SnapshotOptions {
  /** Topics to read; absent or empty: every topic not starting with "__" (Kafka's internal ones). */
  topics?: readonly string[];
  now?: () => number;
}

const tp = (t: TopicPartition): string => `${t.topic}-${t.partition}`;

/** The open transactions as the coordinators know them (ListTransactions + DescribeTransactions). */
export async function readOpenTransactions(txnAdmin: SnapshotSources['txnAdmin']): Promise<{ open: CoordinatorTransaction[]; complete: boolean; errors: SnapshotError[] }> {
  const errors: SnapshotError[] = [];
  const brokers = await txnAdmin.listTransactions({ states: [...OPEN_STATES] });
  for (const b of brokers) if (b.error) errors.push({ source: 'ListTransactions', target: `broker ${b.nodeId}`, error: b.error });
  const listed = brokers.flatMap((b) => b.transactions.filter((t) => holdsLso(t.state)));
  const described = listed.length ? await txnAdmin.describeTransactions(listed.map((t) => t.transactionalId)) : new Map<string, DescribedTransaction>();
  const open: CoordinatorTransaction[] = [];
  for (const [id, d] of described) {
    if (d.error) {
      errors.push({ source: 'DescribeTransactions', target: id, error: d.error });
      continue;
    }
    const t = d.description!;
    // Ended between the listing and the description: not open any more.
    if (!holdsLso(t.state)) continue;
    open.push({
      transactionalId: id,
      coordinatorId: d.coordinatorId,
      producerId: t.producerId,
      producerEpoch: t.producerEpoch,
      state: t.state,
      startTimestampMs: t.transactionStartTimeMs,
      transactionTimeoutMs: t.transactionTimeoutMs,
      // KIP-939: a timeout of Integer.MAX_VALUE is a two-phase-commit transaction, never timed out.
      ...(isTwoPhaseCommit(t.transactionTimeoutMs) ? { prepared: true } : {}),
      partitions: t.topics.flatMap((x) => x.partitions.map((partition) => ({ topic: x.topic, partition }))).sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition),
    });
  }
  open.sort((a, b) => a.transactionalId.localeCompare(b.transactionalId));
  return { open, complete: errors.length === 0, errors };
}

/**
 * Ends of every partition of `topics` and, where `wanted` says so (default: LSO < high
 * watermark), its producer states.
 */
export async function readPartitions(
  sources: Pick<SnapshotSources, 'txnAdmin' | 'offsets'>,
  topics: readonly string[],
  wanted: (p: { topic: string; partition: number; high: bigint; lso: bigint }) => boolean = (p) => p.lso < p.high,
): Promise<{ partitions: SnapshotPartition[]; errors: SnapshotError[] }> {
  const errors: SnapshotError[] = [];
  if (topics.length === 0) return { partitions: [], errors };
  let ends: Map<string, { partition: number; high: bigint; lso: bigint }[]>;
  try {
    ends = await sources.offsets.readMany([...topics]);
  } catch (e) {
    errors.push({ source: 'ListOffsets', target: topics.join(','), error: thrownError(e) });
    return { partitions: [], errors };
  }
  const views: SnapshotPartition[] = [];
  const ask = new Map<string, number[]>();
  for (const topic of topics) {
    for (const e of ends.get(topic) ?? []) {
      views.push({ topic, partition: e.partition, high: e.high, lso: e.lso, producers: [] });
      if (wanted({ topic, ...e })) ask.set(topic, [...(ask.get(topic) ?? []), e.partition]);
    }
  }
  const answers = await Promise.all(
    [...ask].map(async ([topic, partitions]) => {
      try {
        return { topic, states: await sources.txnAdmin.describeProducers(topic, partitions) };
      } catch (e) {
        errors.push({ source: 'DescribeProducers', target: topic, error: thrownError(e) });
        return { topic, states: new Map<number, PartitionProducerStates>() };
      }
    }),
  );
  const byTp = new Map(views.map((v) => [tp(v), v]));
  for (const { topic, states } of answers) {
    for (const [partition, s] of states) {
      if (s.error) {
        errors.push({ source: 'DescribeProducers', target: `${topic}-${partition}`, error: s.error });
        continue;
      }
      const v = byTp.get(`${topic}-${partition}`);
      if (!v) continue;
      v.producers = s.producers.map((p) => ({
        producerId: p.producerId,
        producerEpoch: p.producerEpoch,
        lastTimestampMs: p.lastTimestamp,
        currentTransactionStartOffset: p.currentTxnStartOffset,
        lastSequence: p.lastSequence,
        coordinatorEpoch: p.coordinatorEpoch,
      }));
    }
  }
  views.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
  return { partitions: views, errors };
}

/** The topics to read: the given ones that exist (an unknown one is an error entry), else every non-internal topic. */
export async function resolveTopics(listTopics: () => Promise<string[]>, topics: readonly string[] | undefined): Promise<{ topics: string[]; errors: SnapshotError[] }> {
  let existing: string[];
  try {
    existing = await listTopics();
  } catch (e) {
    return { topics: [], errors: [{ source: 'Metadata', target: topics?.join(',') || '(all topics)', error: thrownError(e) }] };
  }
  if (!topics || topics.length === 0) return { topics: existing.filter((t) => !t.startsWith('__')).sort(), errors: [] };
  const known = new Set(existing);
  const errors: SnapshotError[] = [];
  for (const t of topics) {
    if (!known.has(t)) errors.push({ source: 'Metadata', target: t, error: { code: 3, name: 'UNKNOWN_TOPIC_OR_PARTITION', kind: 'error', message: `topic ${t} does not exist` } });
  }
  return { topics: [...new Set(topics)].filter((t) => known.has(t)), errors };
}

/** One reading of the cluster for findHanging: the coordinators first, then the partitions. */
export async function takeSnapshot(sources: SnapshotSources, opts: SnapshotOptions = {}): Promise<CoordinatorSnapshot> {
  const now = opts.now ?? Date.now;
  const coordinators = await readOpenTransactions(sources.txnAdmin);
  const resolved = await resolveTopics(() => sources.listTopics(), opts.topics);
  const read = await readPartitions(sources, resolved.topics);
  return {
    takenAtMs: now(),
    topics: resolved.topics,
    partitions: read.partitions,
    open: coordinators.open,
    coordinatorsComplete: coordinators.complete,
    errors: [...coordinators.errors, ...resolved.errors, ...read.errors],
  };
}
