// One input partition of the pipeline: its transactional producer (transactional.id
// <prefix>-<topic>-<partition>), the transaction of the current checkpoint, and the offsets.
//
// Invariants:
// - the producer is initialised (fencing any zombie of the same id and completing or aborting
//   its open transaction) before the committed offset is read from the broker;
// - a record is processed only if its offset >= nextOffset, so re-delivered records after a
//   seek or a rebalance never enter a transaction twice;
// - a batch is used only if its fetch started at or before nextOffset: a batch fetched further
//   on (before a seek took effect, or by another broker's fetcher after a leader change) would
//   leave a gap, so it is refused and the consumer sent back to nextOffset;
// - committedOffset is local truth while this producer's commits are observed; after a commit
//   or abort with an unknown outcome the producer is thrown away, re-initialised, and the
//   committed offset re-read (KAFKA-17754);
// - once a barrier is set, nothing is added to the transaction until the checkpoint ends.
import type { Kafka, Message, Producer, Transaction } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { PipelineConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { OutputRecord } from './transforms/index.js';
import type { BatchRecord, Transformer } from './transforms/route.js';
import { withTimeout } from '../util/timeout.js';
import { sendPerPartition } from '../kafka/send.js';

export { TimeoutError, withTimeout } from '../util/timeout.js';
export { transformBatch, type BatchRecord } from './transforms/route.js';

export type TaskState = 'new' | 'ready' | 'fenced' | 'closed';

export interface TaskContext {
  kafka: Kafka;
  config: PipelineConfig;
  transform: Transformer;
  sinkPartitions: number;
  dlqTopic: string;
  dlqPartitions: number;
  logger: Logger;
  /** Called when a producer of this task was fenced by a newer epoch. */
  onFenced(task: PartitionTask): void;
}

export interface PendingCounts {
  in: number;
  out: number;
  dlq: number;
}

const CLOSE_ABORT_TIMEOUT_MS = 5000;

const FENCED_TYPES = new Set(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED']);

export function isFencedError(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const type = (e as { type?: string }).type;
    if (type && FENCED_TYPES.has(type)) return true;
    if (/fenced|INVALID_PRODUCER_EPOCH/i.test((e as Error).message ?? '')) return true;
  }
  return false;
}

class Lock {
  private tail: Promise<unknown> = Promise.resolve();
  private held = 0;
  get busy(): boolean {
    return this.held > 0;
  }
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(async () => {
      this.held++;
      try {
        return await fn();
      } finally {
        this.held--;
      }
    });
    this.tail = next.catch(() => undefined);
    return next;
  }
}

export class PartitionTask {
  readonly transactionalId: string;
  state: TaskState = 'new';
  /** Offset of the next record to process; what preCommit sends as the committed offset. */
  nextOffset: bigint | null = null;
  /** Last offset known committed (for this group) by this task's producer. */
  committedOffset: bigint | null = null;
  /** A send failed: the checkpoint must abort this transaction. */
  error: Error | null = null;
  readonly pending: PendingCounts = { in: 0, out: 0, dlq: 0 };

  private producer: Producer | null = null;
  private txn: Transaction | null = null;
  private readonly keyPartitioner = Partitioners.DefaultPartitioner();
  private metadataCache: { partitionId: number; leader: number; replicas: number[]; isr: number[]; partitionErrorCode: number }[] | undefined;
  /** What the partitioner needs: the number of sink partitions (keyed records ignore leaders). */
  private get sinkPartitionMetadata() {
    return (this.metadataCache ??= Array.from({ length: this.ctx.sinkPartitions }, (_, partitionId) => ({ partitionId, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0 })));
  }
  /** Records were sent into txn (an empty transaction needs no commit). */
  private txnHasData = false;
  private readonly lock = new Lock();
  private barrier: { id: number; released: Promise<void>; release: () => void } | null = null;
  private generation = 0;
  private fencedReported = false;
  /** When this task learnt it was fenced (ms), or null. */
  fencedAt: number | null = null;
  private readonly logger: Logger;
  private readonly exactlyOnce: boolean;

  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly ctx: TaskContext,
  ) {
    this.transactionalId = `${ctx.config.transactionalIdPrefix}-${topic}-${partition}`;
    this.logger = ctx.logger.child({ partition, transactionalId: this.transactionalId });
    this.exactlyOnce = ctx.config.mode === 'EXACTLY_ONCE';
  }

  /** A transaction holding records (an empty one is kept open between checkpoints). */
  get hasOpenTransaction(): boolean {
    return this.txn !== null && this.txnHasData;
  }

  /** When the open transaction got its first record (ms), for eos_pipeline_transaction_open_seconds. */
  private openedAt = 0;
  get openSince(): number | null {
    return this.hasOpenTransaction ? this.openedAt : null;
  }

  get busy(): boolean {
    return this.lock.busy;
  }

  private newProducer(): Producer {
    const c = this.ctx.config;
    return this.exactlyOnce
      ? this.ctx.kafka.producer({
          transactionalId: this.transactionalId,
          idempotent: true,
          maxInFlightRequests: 1,
          transactionTimeout: c.transactionTimeout,
          allowAutoTopicCreation: false,
          createPartitioner: Partitioners.DefaultPartitioner,
        })
      : this.ctx.kafka.producer({
          idempotent: true,
          maxInFlightRequests: 1,
          allowAutoTopicCreation: false,
          createPartitioner: Partitioners.DefaultPartitioner,
        });
  }

  /** Initialises the producer: InitProducerId bumps the epoch, fencing any zombie of this transactional id. */
  async initProducer(): Promise<void> {
    const p = this.newProducer();
    let txn: Transaction | null = null;
    try {
      await p.connect();
      // kafkajs' connect() initialises only a plain idempotent producer id; InitProducerId with the
      // transactional id (which fences a zombie and completes or aborts its transaction) runs on
      // the first transaction(). Begin one now, so fencing happens before the offset is read.
      if (this.exactlyOnce) txn = await p.transaction();
    } catch (err) {
      await p.disconnect().catch(() => undefined);
      throw err;
    }
    if (this.state === 'closed') {
      // Closed while the producer was being initialised (a rewind cut short): nothing may hold it.
      await p.disconnect().catch(() => undefined);
      throw new Error('partition task closed');
    }
    this.producer = p;
    this.txn = txn;
    this.txnHasData = false;
    this.generation++;
  }

  /** First use after assignment: fence, then take the committed offset the caller read after fencing. */
  async init(readCommitted: () => Promise<bigint | null>): Promise<bigint | null> {
    return this.lock.run(async () => {
      await this.initProducer();
      const committed = await readCommitted();
      // Closed (revoked, started over) while reading: it must not come back to life as ready.
      if (this.state === 'closed') throw new Error('partition task closed');
      this.committedOffset = committed;
      this.nextOffset = committed;
      this.state = 'ready';
      return committed;
    });
  }

  /** Position where processing starts when the group had no committed offset (startFrom earliest/latest). */
  bootstrapAt(offset: bigint): void {
    this.committedOffset = offset;
    this.nextOffset = offset;
  }

  /** Blocks while a checkpoint barrier is up. */
  async waitForBarrier(): Promise<void> {
    while (this.barrier) await this.barrier.released;
  }

  /**
   * Processes records of one fetched batch into the current transaction. Returns false when
   * the batch was not used (stale, barrier raced, task not ready): the caller must not treat
   * it as consumed.
   */
  /**
   * Processes records of one fetched batch into the current transaction. `span` is where the
   * fetch started and the batch's last offset, control records included. Returns false when the
   * batch was not used (stale, task not ready or failed), 'gap' when it does not start at or
   * before nextOffset: the caller must seek back to nextOffset.
   */
  async process(records: BatchRecord[], isStale: () => boolean, span: { fetched: bigint; last: bigint }): Promise<boolean | 'gap'> {
    for (;;) {
      await this.waitForBarrier();
      const r = await this.lock.run(() => this.append(records, isStale, span));
      // A barrier went up while this batch waited for the lock: wait for the checkpoint, then try again.
      if (r !== 'barrier') return r;
    }
  }

  /** A fetched batch held only control records or aborted data (kafkajs does not pass it on): step over it. */
  async skipEmpty(span: { fetched: bigint; last: bigint }): Promise<void> {
    await this.process([], () => false, span);
  }

  private async append(records: BatchRecord[], isStale: () => boolean, span: { fetched: bigint; last: bigint }): Promise<boolean | 'barrier' | 'gap'> {
    if (this.barrier) return 'barrier';
    if (this.state !== 'ready' || this.error || isStale() || this.nextOffset === null) return false;
    if (span.fetched > this.nextOffset) return 'gap';
    const floor = this.nextOffset;
    const fresh = records.filter((r) => BigInt(r.offset) >= floor);
    const end = span.last + 1n;
    if (fresh.length === 0) {
      if (end > this.nextOffset) this.nextOffset = end;
      return true;
    }
    const { out, dlq } = await this.ctx.transform.run(fresh, { topic: this.topic, partition: this.partition });
    // Closed or re-initialised while an async transform ran: this batch is no longer ours.
    if (this.state !== 'ready' || this.error || isStale()) return false;
    const topicMessages = this.messagesFor(out, dlq);
    const gen = this.generation;
    try {
      if (topicMessages.length) {
        if (this.exactlyOnce) {
          if (!this.hasOpenTransaction) this.openedAt = Date.now();
          this.txn ??= await this.producer!.transaction();
          this.txnHasData = true;
          // One partition per request (src/kafka/send.ts): otherwise a leader change could commit
          // the transaction without some of its records.
          for (const tm of topicMessages) await sendPerPartition(this.txn, tm.topic, tm.messages);
        } else {
          for (const tm of topicMessages) await sendPerPartition(this.producer!, tm.topic, tm.messages);
        }
      }
    } catch (err) {
      if (gen === this.generation) this.fail(err as Error);
      return false;
    }
    if (gen !== this.generation) return false;
    const afterLast = BigInt(fresh[fresh.length - 1]!.offset) + 1n;
    // Trailing control records of the batch are consumed too, so the committed offset steps over them.
    this.nextOffset = end > afterLast ? end : afterLast;
    this.pending.in += fresh.length;
    this.pending.out += out.length;
    this.pending.dlq += dlq.length;
    return true;
  }

  private messagesFor(out: OutputRecord[], dlq: { record: BatchRecord; reason: string }[]) {
    const c = this.ctx.config;
    const topicMessages: { topic: string; messages: Message[] }[] = [];
    if (out.length) {
      if (c.partitioning === 'input') {
        const partition = this.partition % this.ctx.sinkPartitions;
        topicMessages.push({ topic: c.sinkTopic, messages: out.map((o) => ({ key: o.key ?? null, value: o.value, headers: o.headers, partition })) });
      } else {
        // Key partitioning: the partition is chosen here (kafkajs' Java-compatible murmur2
        // partitioner), so that the sends can go one partition per request.
        const messages = out.map((o) => {
          const m: Message = { key: o.key ?? null, value: o.value, headers: o.headers };
          return { ...m, partition: this.keyPartitioner({ topic: c.sinkTopic, partitionMetadata: this.sinkPartitionMetadata, message: m }) };
        });
        topicMessages.push({ topic: c.sinkTopic, messages });
      }
    }
    if (dlq.length) {
      topicMessages.push({
        topic: this.ctx.dlqTopic,
        messages: dlq.map(({ record, reason }) => ({
          key: record.key,
          value: record.value,
          partition: this.partition % this.ctx.dlqPartitions,
          headers: {
            ...flatHeaders(record.headers),
            'eos.dlq.reason': reason,
            'eos.dlq.source.topic': this.topic,
            'eos.dlq.source.partition': String(this.partition),
            'eos.dlq.source.offset': record.offset,
            'eos.dlq.pipeline': c.name,
          },
        })),
      });
    }
    return topicMessages;
  }

  private fail(err: Error): void {
    this.error = err;
    if (isFencedError(err)) this.markFenced(err);
    else this.logger.warn({ err: err.message }, 'send failed; the checkpoint will abort this transaction');
  }

  private markFenced(err: Error): void {
    if (this.fencedReported) return;
    this.fencedReported = true;
    if (this.state !== 'closed') this.state = 'fenced';
    this.fencedAt = Date.now();
    this.logger.error({ err: err.message }, 'producer fenced by a newer epoch of its transactional id: another instance owns this partition now');
    this.ctx.onFenced(this);
  }

  setBarrier(id: number): void {
    if (this.barrier) return;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    this.barrier = { id, released, release };
  }

  releaseBarrier(): void {
    const b = this.barrier;
    this.barrier = null;
    b?.release();
  }

  /** Waits until no process() is running (all sends of records before the barrier are acknowledged). */
  async drain(): Promise<void> {
    await this.lock.run(async () => undefined);
  }

  /**
   * preCommit: sends the next offset into the transaction. Returns true when there is a
   * transaction (or, at-least-once, offsets) to commit.
   */
  async preCommit(groupId: string): Promise<boolean> {
    return this.lock.run(async () => {
      if (this.error) throw this.error;
      if (this.state !== 'ready') return false;
      if (!this.exactlyOnce) return this.nextOffset !== null && this.nextOffset !== this.committedOffset;
      if (!this.txnHasData) {
        // No record since the last commit. If the position moved over transaction markers or
        // aborted input, commit the offset alone, or the group's lag never reaches the end.
        if (this.nextOffset === null || this.nextOffset === this.committedOffset) return false;
        this.txn ??= await this.producer!.transaction();
        this.txnHasData = true;
      }
      const gen = this.generation;
      const txn = (this.txn ??= await this.producer!.transaction());
      try {
        await txn.sendOffsets({
          consumerGroupId: groupId,
          topics: [{ topic: this.topic, partitions: [{ partition: this.partition, offset: String(this.nextOffset) }] }],
        });
      } catch (err) {
        if (gen === this.generation) this.fail(err as Error);
        throw err;
      }
      return true;
    });
  }

  /** Commits the transaction of this checkpoint; returns the commit latency in ms. */
  async commit(commitOffsets?: (offset: bigint) => Promise<void>): Promise<number> {
    return this.lock.run(async () => {
      const gen = this.generation;
      const t0 = performance.now();
      try {
        if (this.exactlyOnce) await this.txn!.commit();
        else await commitOffsets!(this.nextOffset!);
      } catch (err) {
        if (gen === this.generation) this.fail(err as Error);
        throw err;
      }
      const ms = performance.now() - t0;
      if (gen === this.generation) {
        this.txn = null;
        this.txnHasData = false;
        this.committedOffset = this.nextOffset;
      }
      return ms;
    });
  }

  /** Counts of the records committed by the last commit; resets them. */
  takePending(): PendingCounts {
    const p = { ...this.pending };
    this.pending.in = this.pending.out = this.pending.dlq = 0;
    return p;
  }

  /**
   * Aborts the open transaction. When the task is stuck in an operation (a commit that timed
   * out) or the abort itself fails, the producer is discarded and a new one initialised, which
   * completes or aborts whatever the broker holds for this transactional id; the committed
   * offset is then re-read from the broker. Returns the offset processing must resume from.
   */
  async abort(readCommitted: () => Promise<bigint | null>, timeoutMs: number): Promise<bigint | null> {
    this.pending.in = this.pending.out = this.pending.dlq = 0;
    if (this.state === 'fenced' || this.state === 'closed') return this.committedOffset;
    if (!this.exactlyOnce) {
      // No transaction: sent records stay (at-least-once); processing resumes at the committed offset.
      await this.drain();
      this.error = null;
      this.nextOffset = this.committedOffset;
      return this.committedOffset;
    }
    const soft = !this.lock.busy && !this.error;
    if (soft) {
      try {
        await withTimeout(
          this.lock.run(async () => {
            if (this.txn && this.txnHasData) await this.txn.abort();
            else if (this.txn) return; // an empty transaction stays open for the next records
            this.txn = null;
            this.txnHasData = false;
          }),
          timeoutMs,
          'abort',
        );
        this.nextOffset = this.committedOffset;
        return this.committedOffset;
      } catch (err) {
        if (isFencedError(err)) {
          this.markFenced(err as Error);
          return this.committedOffset;
        }
        this.logger.warn({ err: (err as Error).message }, 'abort failed; re-initialising the producer');
      }
    }
    return this.reinit(readCommitted);
  }

  /** Throws the producer away (outcome of its last operation unknown) and fences it with a new one. */
  private async reinit(readCommitted: () => Promise<bigint | null>): Promise<bigint | null> {
    this.generation++;
    const old = this.producer;
    this.producer = null;
    this.txn = null;
    void old?.disconnect().catch(() => undefined);
    try {
      await this.initProducer();
    } catch (err) {
      if (isFencedError(err)) this.markFenced(err as Error);
      throw err;
    }
    // The group may have no committed offset yet (a partition bootstrapped by startFrom that never
    // committed): then its bootstrap position still holds.
    const committed = (await readCommitted()) ?? this.committedOffset;
    this.committedOffset = committed;
    this.nextOffset = committed;
    this.error = null;
    this.logger.info({ committed: committed?.toString() }, 'producer re-initialised; resuming from the committed offset');
    return committed;
  }

  /** Revoked or shutting down: aborts any open transaction and closes the producer. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    const wasReady = this.state === 'ready';
    this.state = 'closed';
    this.generation++;
    const p = this.producer;
    this.producer = null;
    const txn = this.txn;
    this.txn = null;
    this.releaseBarrier();
    if (wasReady && txn && !this.lock.busy) {
      // Bounded: during an outage the abort retries for long; the next owner's InitProducerId aborts it anyway.
      await withTimeout(txn.abort(), CLOSE_ABORT_TIMEOUT_MS, 'abort on close').catch((err: unknown) => {
        // A zombie learns here that it was replaced: say so rather than swallow it.
        if (isFencedError(err)) this.markFenced(err as Error);
      });
    }
    await p?.disconnect().catch(() => undefined);
  }
}

function flatHeaders(h: BatchRecord['headers']): Record<string, Buffer | string> {
  const out: Record<string, Buffer | string> = {};
  for (const [k, v] of Object.entries(h ?? {})) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v[v.length - 1]! : v;
  }
  return out;
}
