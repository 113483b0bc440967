// Which open transaction freezes a partition's read_committed consumers, and whose it is. Pure:
// the caller passes the coordinator's open transactions (its log, or ListTransactions +
// DescribeTransactions), each partition's producer states (DescribeProducers) and ends (high
// watermark, last stable offset), and the time.
//
// A partition's LSO is the first offset of its oldest open transaction. The transaction whose
// start offset equals the LSO (below the high watermark) holds it. It is *hanging* when its
// producer has written nothing to the partition for `idleAfterMs`:
// - `idle`: the coordinator knows it as open (a dead producer's transaction, which the coordinator
//   aborts only at start + transaction timeout; a prepared KIP-939 transaction, never);
// - `unknown-to-coordinator`: no coordinator has an open transaction of that producer id (Kafka's
//   own `kafka-transactions.sh find-hanging` case: nothing will ever end it but an abort).
// A transaction whose coordinator already decided (PrepareCommit / PrepareAbort) is `completing`
// while its markers are not written; held that long, it is reported too.

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface OpenTransaction {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  /** Coordinator state: Ongoing, PrepareCommit, PrepareAbort, PrepareEpochFence. */
  state: string;
  startTimestampMs: number;
  transactionTimeoutMs: number;
  partitions: TopicPartition[];
  /** A KIP-939 prepared (two-phase commit) transaction: the coordinator never times it out. */
  prepared?: boolean;
}

export interface ProducerState {
  producerId: number;
  producerEpoch: number;
  /** When the producer last wrote to the partition: its last record's timestamp, or when eoswatch saw it write (WriteActivity). */
  lastTimestampMs: number;
  /** The sequence number of its last batch (DescribeProducers' LastSequence): it moves with every write. */
  lastSequence?: number;
  /** First offset of the producer's open transaction on the partition; -1 when none. */
  currentTransactionStartOffset: number;
}

export interface PartitionView extends TopicPartition {
  high: bigint;
  lso: bigint;
  producers: ProducerState[];
}

export type HangingKind = 'idle' | 'unknown-to-coordinator' | 'completing';

export interface HangingTransaction extends TopicPartition {
  kind: HangingKind;
  /** null when no coordinator knows the producer id. */
  transactionalId: string | null;
  producerId: number;
  producerEpoch: number;
  /** Coordinator state, or null when unknown to the coordinator. */
  state: string | null;
  startOffset: bigint;
  /** Records (offsets) behind the LSO that read_committed consumers cannot read. */
  heldBack: bigint;
  /** Since the transaction began (coordinator), else since the producer's last write. */
  ageMs: number;
  /** Since the producer last wrote to this partition. */
  idleMs: number;
  /** When the coordinator aborts it (start + timeout); null: never (prepared, or unknown to the coordinator). */
  abortAtMs: number | null;
  /** Every partition of the transaction, as the coordinator knows it. */
  partitions: TopicPartition[];
}

/**
 * The timeout a KIP-939 two-phase-commit transaction carries: Kafka marks one by no new state or
 * field but by its timeout, Integer.MAX_VALUE (TransactionMetadata.isDistributedTwoPhaseCommitTxn,
 * set by InitProducerId with enable2Pc), which its timeout sweep skips. The state stays Ongoing;
 * the value round-trips through DescribeTransactions and __transaction_state alike.
 */
export const TWO_PHASE_COMMIT_TIMEOUT_MS = 2147483647;

/** Whether a transaction with this timeout is a KIP-939 prepared (2PC) one: the coordinator never times it out. */
export function isTwoPhaseCommit(transactionTimeoutMs: number): boolean {
  return transactionTimeoutMs === TWO_PHASE_COMMIT_TIMEOUT_MS;
}

const DECIDED = new Set(['PrepareCommit', 'PrepareAbort']);

/**
 * When each producer last wrote to each partition, on eoswatch's own clock. The timestamp
 * DescribeProducers reports is the last record's, set by the producer (CreateTime): Kafka Streams
 * and Flink forward their input's event time, so an app catching up on old data, or a producer
 * whose clock is behind, would look idle by it while it writes. Its LastSequence moves with every
 * batch it writes instead: the time eoswatch first saw a sequence dates the write. A producer seen
 * for the first time counts from then (after a restart of eoswatch, idleness is measured anew:
 * late, never false). An entry not observed for `forgetAfterMs` is forgotten (a pass that could not
 * read a partition does not reset its producers).
 */
export class WriteActivity {
  private readonly seen = new Map<string, { sequence: number; sinceMs: number; observedMs: number }>();

  constructor(private readonly forgetAfterMs: number) {}

  /** The views with each producer's lastTimestampMs replaced by when eoswatch saw its current sequence first. */
  observe(views: PartitionView[], now: number): PartitionView[] {
    const out = views.map((v) => ({
      ...v,
      producers: v.producers.map((s) => {
        if (s.lastSequence === undefined) return s;
        const key = `${v.topic}\u0000${v.partition}\u0000${s.producerId}\u0000${s.producerEpoch}`;
        const before = this.seen.get(key);
        const sinceMs = before && before.sequence === s.lastSequence ? before.sinceMs : now;
        this.seen.set(key, { sequence: s.lastSequence, sinceMs, observedMs: now });
        return { ...s, lastTimestampMs: sinceMs };
      }),
    }));
    for (const [key, e] of this.seen) if (now - e.observedMs > this.forgetAfterMs) this.seen.delete(key);
    return out;
  }

  get size(): number {
    return this.seen.size;
  }
}

/** The open transaction holding each partition's LSO, where it is hanging; oldest first. */
export function findHanging(partitions: PartitionView[], open: OpenTransaction[], now: number, idleAfterMs: number): HangingTransaction[] {
  const byProducer = new Map<number, OpenTransaction>();
  for (const t of open) byProducer.set(t.producerId, t);
  const out: HangingTransaction[] = [];
  for (const p of partitions) {
    if (p.lso >= p.high) continue;
    const holder = p.producers.find((s) => s.currentTransactionStartOffset >= 0 && BigInt(s.currentTransactionStartOffset) === p.lso);
    if (!holder) continue;
    const idleMs = Math.max(0, now - holder.lastTimestampMs);
    if (idleMs < idleAfterMs) continue;
    const txn = byProducer.get(holder.producerId);
    const kind: HangingKind = !txn ? 'unknown-to-coordinator' : DECIDED.has(txn.state) ? 'completing' : 'idle';
    out.push({
      topic: p.topic,
      partition: p.partition,
      kind,
      transactionalId: txn?.transactionalId ?? null,
      producerId: holder.producerId,
      producerEpoch: txn?.producerEpoch ?? holder.producerEpoch,
      state: txn?.state ?? null,
      startOffset: p.lso,
      heldBack: p.high - p.lso,
      ageMs: Math.max(0, now - (txn ? txn.startTimestampMs : holder.lastTimestampMs)),
      idleMs,
      abortAtMs: txn && !txn.prepared && kind !== 'completing' ? txn.startTimestampMs + txn.transactionTimeoutMs : null,
      partitions: txn?.partitions ?? [{ topic: p.topic, partition: p.partition }],
    });
  }
  return out.sort((a, b) => b.ageMs - a.ageMs || a.topic.localeCompare(b.topic) || a.partition - b.partition);
}

/** "in 4m 12s", "overdue by 3s" or "never": when the coordinator will abort a hanging transaction. */
export function abortDue(h: Pick<HangingTransaction, 'abortAtMs'>, now: number): string {
  if (h.abortAtMs === null) return 'never';
  const d = h.abortAtMs - now;
  return d >= 0 ? `in ${formatMs(d)}` : `overdue by ${formatMs(-d)}`;
}

function formatMs(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}
