// How a partition's records and its next offset become durable at a checkpoint: pipeline.mode
// picks one of two strategies, each an object with the same interface (Flink's KafkaSink with
// DeliveryGuarantee EXACTLY_ONCE or AT_LEAST_ONCE).
//
// - EXACTLY_ONCE: a transactional producer per partition (transactional.id
//   <prefix>-<topic>-<partition>); records go into the transaction, preCommit adds the next offset
//   to it (sendOffsets), commit commits it. Records and offset become visible together or not at all.
// - AT_LEAST_ONCE: an idempotent producer without transactions; records are visible once sent, and
//   commit writes the next offset to the group after every send was acknowledged (the checkpoint
//   drains the sends before preCommit). A crash in between replays records: duplicates, no loss.
//
// The checkpoint driver (checkpoint-driver.ts) runs the protocol; a partition task
// (partition-task.ts) holds one PartitionOutput of its strategy and has the strategy undo a failed
// checkpoint (undo: keep, rollback or replace, steps the task offers).
import type { Kafka, Message, Producer, ProducerConfig, Transaction } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import { GroupOffsetWriter } from '../kafka/offsets.js';
import { sendPerPartition } from '../kafka/send.js';
import type { Logger } from '../log.js';
import type { PipelineLabels } from '../metrics/checkpoint-stats.js';
import type { PipelineMetrics } from '../metrics/pipeline.js';

export type CheckpointMode = 'EXACTLY_ONCE' | 'AT_LEAST_ONCE';

/** Where one partition stands: what preCommit adds and commit makes durable. */
export interface PartitionPosition {
  groupId: string;
  topic: string;
  partition: number;
  /** Offset of the next record to process: the offset a commit makes durable. */
  next: bigint | null;
  /** The offset known committed. */
  committed: bigint | null;
}

/** One partition's producer, as its strategy uses it. */
export interface PartitionOutput {
  /** Records (or an offset alone) wait in an open transaction for the commit; never at-least-once, which holds nothing back. */
  readonly hasData: boolean;
  /** Sends the records of one batch, one partition per request (src/kafka/send.ts). */
  send(batches: { topic: string; messages: Message[] }[]): Promise<void>;
  /** Adds the next offset to what commit() makes durable; false when there is nothing to commit. */
  preCommit(position: PartitionPosition): Promise<boolean>;
  /** Makes the records sent and the next offset durable. */
  commit(position: PartitionPosition): Promise<void>;
  /** Drops the records of a failed checkpoint where they can be dropped (an open transaction holding records). */
  rollback(): Promise<void>;
  /** Aborts an open transaction before the producer is closed. */
  abortOpen(): Promise<void>;
  disconnect(): Promise<void>;
}

/**
 * What a partition task offers its strategy to undo a failed checkpoint (partition-task.ts); each
 * step returns the offset processing resumes from:
 * - keep: the records sent stay (at-least-once); wait for the sends in flight, then rewind to the
 *   committed offset;
 * - rollback: abort the transaction in place, then rewind (if that fails: replace);
 * - replace: the outcome of the producer's last operation is unknown (stuck, or failed): throw the
 *   producer away and initialise a new one, which fences the old one and completes or aborts what
 *   the broker holds for the transactional id; then re-read the committed offset (KAFKA-17754).
 */
export interface UndoTarget {
  /** An operation of the producer is still running (a commit that timed out). */
  readonly busy: boolean;
  /** A send or an operation of the producer failed. */
  readonly failed: boolean;
  keep(): Promise<bigint | null>;
  rollback(timeoutMs: number): Promise<bigint | null>;
  replace(): Promise<bigint | null>;
}

export interface CommitStrategy {
  readonly mode: CheckpointMode;
  /** A connected producer for one partition, ready to send. */
  open(kafka: Kafka, transactionalId: string, transactionTimeoutMs: number): Promise<PartitionOutput>;
  /** Undoes a failed checkpoint of one partition; returns the offset processing resumes from. Throws when it could not. */
  undo(task: UndoTarget, timeoutMs: number): Promise<bigint | null>;
  /** Counts a checkpoint's partition commits and aborts in eos_transactions_total. */
  countTransactions(metrics: PipelineMetrics, labels: PipelineLabels, counts: { committed: number; aborted: number }): void;
  /** Logs that a partition task is ready (and, exactly-once, that it fenced any zombie). */
  logInitialised(logger: Logger, task: { partition: number; committed: bigint | null; transactionalId: string }): void;
  /** Releases what the strategy shares between partitions; it opens them again on demand. */
  close(): Promise<void>;
}

/** Connects a producer; a failed connect (or first step) leaves nothing connected. */
async function connected<T>(p: Producer, then: (p: Producer) => Promise<T>): Promise<T> {
  try {
    await p.connect();
    return await then(p);
  } catch (err) {
    await p.disconnect().catch(() => undefined);
    throw err;
  }
}

class TransactionalOutput implements PartitionOutput {
  private txnHasData = false;

  constructor(
    private readonly producer: Producer,
    private txn: Transaction | null,
  ) {}

  get hasData(): boolean {
    return this.txn !== null && this.txnHasData;
  }

  async send(batches: { topic: string; messages: Message[] }[]): Promise<void> {
    const txn = (this.txn ??= await this.producer.transaction());
    this.txnHasData = true;
    // One partition per request (src/kafka/send.ts): otherwise a leader change could commit the
    // transaction without some of its records.
    for (const b of batches) await sendPerPartition(txn, b.topic, b.messages);
  }

  async preCommit(p: PartitionPosition): Promise<boolean> {
    if (!this.txnHasData) {
      // No record since the last commit. If the position moved over transaction markers or
      // aborted input, commit the offset alone, or the group's lag never reaches the end.
      if (p.next === null || p.next === p.committed) return false;
      this.txn ??= await this.producer.transaction();
      this.txnHasData = true;
    }
    const txn = (this.txn ??= await this.producer.transaction());
    await txn.sendOffsets({
      consumerGroupId: p.groupId,
      topics: [{ topic: p.topic, partitions: [{ partition: p.partition, offset: String(p.next) }] }],
    });
    return true;
  }

  async commit(): Promise<void> {
    await this.txn!.commit();
    this.txn = null;
    this.txnHasData = false;
  }

  async rollback(): Promise<void> {
    if (this.txn && this.txnHasData) await this.txn.abort();
    else if (this.txn) return; // an empty transaction stays open for the next records
    this.txn = null;
    this.txnHasData = false;
  }

  async abortOpen(): Promise<void> {
    const txn = this.txn;
    this.txn = null;
    this.txnHasData = false;
    await txn?.abort();
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }
}

export class ExactlyOnce implements CommitStrategy {
  readonly mode = 'EXACTLY_ONCE';

  open(kafka: Kafka, transactionalId: string, transactionTimeoutMs: number): Promise<PartitionOutput> {
    const producer = kafka.producer({
      transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: transactionTimeoutMs,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    } satisfies ProducerConfig);
    // kafkajs' connect() initialises only a plain idempotent producer id; InitProducerId with the
    // transactional id (which fences a zombie and completes or aborts its transaction) runs on the
    // first transaction(). Begin one now, so fencing happens before the offset is read.
    return connected(producer, async (p) => new TransactionalOutput(p, await p.transaction()));
  }

  /** A producer stuck in an operation, or one that failed, is replaced; otherwise its transaction is rolled back. */
  undo(task: UndoTarget, timeoutMs: number): Promise<bigint | null> {
    return task.busy || task.failed ? task.replace() : task.rollback(timeoutMs);
  }

  countTransactions(m: PipelineMetrics, labels: PipelineLabels, counts: { committed: number; aborted: number }): void {
    m.transactions.inc({ ...labels, outcome: 'committed' }, counts.committed);
    m.transactions.inc({ ...labels, outcome: 'aborted' }, counts.aborted);
  }

  logInitialised(logger: Logger, t: { partition: number; committed: bigint | null; transactionalId: string }): void {
    logger.info({ partition: t.partition, committed: t.committed?.toString(), transactionalId: t.transactionalId }, 'partition task initialised (producer fenced any zombie)');
  }

  async close(): Promise<void> {}
}

class IdempotentOutput implements PartitionOutput {
  readonly hasData = false;

  constructor(
    private readonly producer: Producer,
    private readonly offsets: () => GroupOffsetWriter,
  ) {}

  async send(batches: { topic: string; messages: Message[] }[]): Promise<void> {
    for (const b of batches) await sendPerPartition(this.producer, b.topic, b.messages);
  }

  async preCommit(p: PartitionPosition): Promise<boolean> {
    return p.next !== null && p.next !== p.committed;
  }

  /** The offsets group has no members (the consumer joins `<groupId>.members`), so a plain commit is accepted. */
  commit(p: PartitionPosition): Promise<void> {
    return this.offsets().commit(p.groupId, p.topic, [{ partition: p.partition, offset: p.next! }]);
  }

  async rollback(): Promise<void> {}

  async abortOpen(): Promise<void> {}

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }
}

export class AtLeastOnce implements CommitStrategy {
  readonly mode = 'AT_LEAST_ONCE';
  /** One offset writer for every partition, opened by the first commit. */
  private writer: GroupOffsetWriter | undefined;

  open(kafka: Kafka): Promise<PartitionOutput> {
    const producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    } satisfies ProducerConfig);
    return connected(producer, async (p) => new IdempotentOutput(p, () => (this.writer ??= new GroupOffsetWriter(kafka))));
  }

  /** No transaction: the records sent stay, whatever failed. */
  undo(task: UndoTarget): Promise<bigint | null> {
    return task.keep();
  }

  countTransactions(): void {}

  logInitialised(logger: Logger, t: { partition: number; committed: bigint | null }): void {
    logger.info({ partition: t.partition, committed: t.committed?.toString() }, 'partition task initialised (at-least-once: no fencing)');
  }

  async close(): Promise<void> {
    const w = this.writer;
    this.writer = undefined;
    await w?.close();
  }
}

export function commitStrategy(mode: CheckpointMode): CommitStrategy {
  return mode === 'EXACTLY_ONCE' ? new ExactlyOnce() : new AtLeastOnce();
}
