// One input partition of the pipeline, a participant of the checkpoint (checkpoint-driver.ts):
// its producer (an output of the mode's commit strategy, commit-strategy.ts; exactly-once with
// transactional.id <prefix>-<topic>-<partition>), the records of the current checkpoint, and the
// offsets.
//
// Invariants:
// - the producer is initialised (fencing any zombie of the same id and completing or aborting
//   its open transaction) before the committed offset is read from the broker;
// - a record is processed only if its offset >= nextOffset, so re-delivered records after a
//   seek or a rebalance never enter a transaction twice;
// - a batch is used only if its fetch started at or before nextOffset: a batch fetched further
//   on (before a seek took effect, or by another broker's fetcher after a leader change) would
//   leave a gap, so it is refused and the consumer sent back to nextOffset (planBatch,
//   transforms/route.ts);
// - committedOffset is local truth while this producer's commits are observed; after a commit
//   or abort with an unknown outcome the producer is thrown away, re-initialised, and the
//   committed offset re-read (KAFKA-17754);
// - once a barrier is set, nothing is added to the transaction until the checkpoint ends.
import type { Kafka } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import type { PipelineConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { CheckpointParticipant, PendingCounts } from './checkpoint-driver.js';
import type { CommitStrategy, PartitionOutput, PartitionPosition } from './commit-strategy.js';
import { planBatch, routeMessages, type BatchRecord, type BatchSpan, type KeyPartitioner, type RouteTarget, type Transformer } from './transforms/route.js';
import type { Clock } from '../runtime/clock.js';
import { Mutex } from '../runtime/mutex.js';

export type TaskState = 'new' | 'ready' | 'fenced' | 'closed';

export interface TaskContext {
  kafka: Kafka;
  config: PipelineConfig;
  strategy: CommitStrategy;
  transform: Transformer;
  sinkPartitions: number;
  dlqTopic: string;
  dlqPartitions: number;
  logger: Logger;
  /** The checkpoint driver's clock: the task's times (transaction open, fenced, commit latency) and timeouts. */
  clock: Clock;
  /** The group's committed offset of the partition, read from the broker (after fencing). */
  readCommitted(partition: number): Promise<bigint | null>;
  /** Called when a producer of this task was fenced by a newer epoch. */
  onFenced(task: PartitionTask): void;
  /**
   * Whether this instance may initialise the partition's producer now: the group has lately
   * confirmed it and the partition is in its assignment (membership.ts). Initialising on an old
   * word would fence the partition's new owner.
   */
  owns(partition: number): Promise<boolean>;
}

/** The group has not lately confirmed that the partition is this instance's: its producer is not initialised. */
export class NotOwnerError extends Error {
  constructor(partition: number) {
    super(`partition ${partition}: its producer is not initialised: the group has not lately confirmed this instance's assignment (paused past its session?), and initialising would fence the partition's new owner`);
    this.name = 'NotOwnerError';
  }
}

const CLOSE_ABORT_TIMEOUT_MS = 5000;

// A refused Write on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) is not fencing:
// no other instance owns the partition, and starting the task over would refuse again, forever.
// It fails the send like any other error, so the pipeline fails and names the missing ACL.
const FENCED_TYPES = new Set(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH']);

export function isFencedError(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const type = (e as { type?: string }).type;
    if (type && FENCED_TYPES.has(type)) return true;
    if (/fenced|INVALID_PRODUCER_EPOCH/i.test((e as Error).message ?? '')) return true;
  }
  return false;
}

export class PartitionTask implements CheckpointParticipant {
  readonly transactionalId: string;
  state: TaskState = 'new';
  /** Offset of the next record to process; what preCommit sends as the committed offset. */
  nextOffset: bigint | null = null;
  /** Last offset known committed (for this group) by this task's producer. */
  committedOffset: bigint | null = null;
  /** A send failed: the checkpoint must abort this transaction. */
  error: Error | null = null;
  readonly pending: PendingCounts = { in: 0, out: 0, dlq: 0 };

  private output: PartitionOutput | null = null;
  private readonly keyPartitioner: KeyPartitioner;
  private readonly route: RouteTarget;
  private readonly lock = new Mutex();
  private barrier: { id: number; released: Promise<void>; release: () => void } | null = null;
  private generation = 0;
  private fencedReported = false;
  /** When this task learnt it was fenced (ms), or null. */
  fencedAt: number | null = null;
  private readonly logger: Logger;

  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly ctx: TaskContext,
  ) {
    this.transactionalId = `${ctx.config.transactionalIdPrefix}-${topic}-${partition}`;
    this.logger = ctx.logger.child({ partition, transactionalId: this.transactionalId });
    const c = ctx.config;
    this.route = {
      pipeline: c.name,
      source: { topic, partition },
      sink: { topic: c.sinkTopic, partitions: ctx.sinkPartitions, partitioning: c.partitioning },
      dlq: { topic: ctx.dlqTopic, partitions: ctx.dlqPartitions },
    };
    // Key partitioning: the partition is chosen here (kafkajs' Java-compatible murmur2
    // partitioner), so that the sends can go one partition per request. It needs only the number
    // of sink partitions (keyed records ignore leaders).
    const partitioner = Partitioners.DefaultPartitioner();
    const partitionMetadata = Array.from({ length: ctx.sinkPartitions }, (_, partitionId) => ({ partitionId, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0 }));
    this.keyPartitioner = (t, message) => partitioner({ topic: t, partitionMetadata, message });
  }

  /** A transaction holding records (an empty one is kept open between checkpoints). */
  get hasOpenTransaction(): boolean {
    return this.output?.hasData ?? false;
  }

  get fenced(): boolean {
    return this.state === 'fenced';
  }

  /** When the open transaction got its first record (ms), for eos_pipeline_transaction_open_seconds. */
  private openedAt = 0;
  get openSince(): number | null {
    return this.hasOpenTransaction ? this.openedAt : null;
  }

  get busy(): boolean {
    return this.lock.busy;
  }

  private position(): PartitionPosition {
    return { groupId: this.ctx.config.groupId, topic: this.topic, partition: this.partition, next: this.nextOffset, committed: this.committedOffset };
  }

  /** Initialises the producer: exactly-once, InitProducerId bumps the epoch, fencing any zombie of this transactional id. */
  async initProducer(): Promise<void> {
    if (!(await this.ctx.owns(this.partition))) throw new NotOwnerError(this.partition);
    const out = await this.ctx.strategy.open(this.ctx.kafka, this.transactionalId, this.ctx.config.transactionTimeout);
    if (this.state === 'closed') {
      // Closed while the producer was being initialised (a rewind cut short): nothing may hold it.
      await out.disconnect().catch(() => undefined);
      throw new Error('partition task closed');
    }
    this.output = out;
    this.generation++;
  }

  /** First use after assignment: fence, then read the committed offset. */
  async init(): Promise<bigint | null> {
    return this.lock.run(async () => {
      await this.initProducer();
      const committed = await this.ctx.readCommitted(this.partition);
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
   * Processes records of one fetched batch into the current transaction. `span` is where the
   * fetch started and the batch's last offset, control records included. Returns false when the
   * batch was not used (stale, task not ready or failed), 'gap' when it does not start at or
   * before nextOffset: the caller must seek back to nextOffset.
   */
  async process(records: BatchRecord[], isStale: () => boolean, span: BatchSpan): Promise<boolean | 'gap'> {
    for (;;) {
      await this.waitForBarrier();
      const r = await this.lock.run(() => this.append(records, isStale, span));
      // A barrier went up while this batch waited for the lock: wait for the checkpoint, then try again.
      if (r !== 'barrier') return r;
    }
  }

  /** A fetched batch held only control records or aborted data (kafkajs does not pass it on): step over it. */
  async skipEmpty(span: BatchSpan): Promise<void> {
    await this.process([], () => false, span);
  }

  private async append(records: BatchRecord[], isStale: () => boolean, span: BatchSpan): Promise<boolean | 'barrier' | 'gap'> {
    if (this.barrier) return 'barrier';
    if (this.state !== 'ready' || this.error || isStale() || this.nextOffset === null) return false;
    const plan = planBatch(records, span, this.nextOffset);
    if (plan.kind === 'gap') return 'gap';
    if (plan.kind === 'skip') {
      this.nextOffset = plan.next;
      return true;
    }
    const routed = await this.ctx.transform.run(plan.records, { topic: this.topic, partition: this.partition });
    // Closed or re-initialised while an async transform ran: this batch is no longer ours.
    if (this.state !== 'ready' || this.error || isStale()) return false;
    const topicMessages = routeMessages(routed, this.route, this.keyPartitioner);
    const gen = this.generation;
    try {
      if (topicMessages.length) {
        if (!this.hasOpenTransaction) this.openedAt = this.ctx.clock.now();
        await this.output!.send(topicMessages);
      }
    } catch (err) {
      if (gen === this.generation) this.fail(err as Error);
      return false;
    }
    if (gen !== this.generation) return false;
    this.nextOffset = plan.next;
    this.pending.in += plan.records.length;
    this.pending.out += routed.out.length;
    this.pending.dlq += routed.dlq.length;
    return true;
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
    this.fencedAt = this.ctx.clock.now();
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
   * preCommit: adds the next offset to what the commit makes durable (exactly-once: sendOffsets
   * into the transaction). Returns true when there is something to commit.
   */
  async preCommit(): Promise<boolean> {
    return this.lock.run(async () => {
      if (this.error) throw this.error;
      if (this.state !== 'ready') return false;
      const gen = this.generation;
      try {
        return await this.output!.preCommit(this.position());
      } catch (err) {
        if (gen === this.generation) this.fail(err as Error);
        throw err;
      }
    });
  }

  /** Commits the records and the next offset of this checkpoint; returns the commit latency in ms. */
  async commit(): Promise<number> {
    return this.lock.run(async () => {
      const gen = this.generation;
      const t0 = this.ctx.clock.now();
      try {
        await this.output!.commit(this.position());
      } catch (err) {
        if (gen === this.generation) this.fail(err as Error);
        throw err;
      }
      const ms = this.ctx.clock.now() - t0;
      if (gen === this.generation) this.committedOffset = this.nextOffset;
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
   * Undoes a failed checkpoint: the commit strategy does (commit-strategy.ts, undo) with the steps
   * below: keep what was sent, roll the transaction back, or replace the producer when it is stuck
   * in an operation (a commit that timed out) or its abort fails; a replaced producer's successor
   * completes or aborts whatever the broker holds for this transactional id, and the committed
   * offset is re-read from the broker. Returns the offset processing must resume from.
   */
  async abort(timeoutMs: number): Promise<bigint | null> {
    this.pending.in = this.pending.out = this.pending.dlq = 0;
    if (this.state === 'fenced' || this.state === 'closed') return this.committedOffset;
    return this.ctx.strategy.undo(
      {
        busy: this.lock.busy,
        failed: this.error !== null,
        keep: () => this.keep(),
        rollback: (ms) => this.rollback(ms),
        replace: () => this.reinit(),
      },
      timeoutMs,
    );
  }

  /** No transaction: sent records stay; processing resumes at the committed offset. */
  private async keep(): Promise<bigint | null> {
    await this.drain();
    return this.rewind();
  }

  /** Aborts the transaction in place within `timeoutMs`, then rewinds; a failed abort replaces the producer. */
  private async rollback(timeoutMs: number): Promise<bigint | null> {
    try {
      await this.ctx.clock.within(
        this.lock.run(async () => this.output?.rollback()),
        timeoutMs,
        'abort',
      );
      return this.rewind();
    } catch (err) {
      if (isFencedError(err)) {
        this.markFenced(err as Error);
        return this.committedOffset;
      }
      this.logger.warn({ err: (err as Error).message }, 'abort failed; re-initialising the producer');
    }
    return this.reinit();
  }

  private rewind(): bigint | null {
    this.error = null;
    this.nextOffset = this.committedOffset;
    return this.committedOffset;
  }

  /** Throws the producer away (outcome of its last operation unknown) and fences it with a new one. */
  private async reinit(): Promise<bigint | null> {
    this.generation++;
    const old = this.output;
    this.output = null;
    void old?.disconnect().catch(() => undefined);
    try {
      await this.initProducer();
    } catch (err) {
      if (isFencedError(err)) this.markFenced(err as Error);
      throw err;
    }
    // The group may have no committed offset yet (a partition bootstrapped by startFrom that never
    // committed): then its bootstrap position still holds.
    const committed = (await this.ctx.readCommitted(this.partition)) ?? this.committedOffset;
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
    const out = this.output;
    this.output = null;
    this.releaseBarrier();
    if (wasReady && out && !this.lock.busy) {
      // Bounded: during an outage the abort retries for long; the next owner's InitProducerId aborts it anyway.
      await this.ctx.clock.within(out.abortOpen(), CLOSE_ABORT_TIMEOUT_MS, 'abort on close').catch((err: unknown) => {
        // A zombie learns here that it was replaced: say so rather than swallow it.
        if (isFencedError(err)) this.markFenced(err as Error);
      });
    }
    await out?.disconnect().catch(() => undefined);
  }
}
