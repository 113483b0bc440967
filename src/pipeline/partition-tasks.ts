// The partition tasks of one pipeline run (partition-task.ts), one per assigned source partition,
// and what the consumer's batches and assignments do to them: a batch goes to its partition's task
// (initialised by the partition's first batch: fenced, committed offset read, or bootstrapped), a
// task that refused batches is started over with the consumer sent back to its committed offset,
// an assignment starts the revoked and fenced tasks over. Knows nothing of kafkajs: the batches
// and the seeks go through the consumer adapter (source-consumer.ts).
import type { PipelineConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { PermissionWatch } from '../kafka/permissions.js';
import type { Logger } from '../log.js';
import type { PipelineLabels } from '../metrics/checkpoint-stats.js';
import type { PipelineMetrics } from '../metrics/pipeline.js';
import type { Clock } from '../runtime/clock.js';
import type { CommitStrategy } from './commit-strategy.js';
import type { PartitionTask } from './partition-task.js';
import type { SourceBatch } from './source-consumer.js';
import { Throttle } from './throttle.js';
import type { BatchSpan } from './transforms/route.js';

export interface PartitionTasksDeps {
  config: PipelineConfig;
  strategy: CommitStrategy;
  clock: Clock;
  logger: Logger;
  metrics: PipelineMetrics;
  labels: PipelineLabels;
  permissions: PermissionWatch;
  /** Runs `fn` among the pipeline's control operations (checkpoints, rebalances, shutdown), which never interleave. */
  serialized<T>(fn: () => Promise<T>): Promise<T>;
  /** A new task for a partition (not yet initialised). */
  newTask(partition: number): PartitionTask;
  /** The pipeline is RUNNING. */
  running(): boolean;
  fail(reason: string): Promise<void>;
  /** Sends the consumer to `offset` of a source partition. */
  seek(partition: number, offset: bigint | string): void;
  /** A send failed: the checkpoint loop aborts now, not at the next interval. */
  wake(): void;
}

export class PartitionTasks {
  private readonly tasks = new Map<number, PartitionTask>();
  /** The partitions of the consumer's last join: batches of others are stale. */
  private assignedNow = new Set<number>();
  /** Where each partition without a committed offset was first bootstrapped by this process. */
  private readonly bootstrapOffsets = new Map<number, bigint>();
  private readonly throttle: Throttle;

  constructor(private readonly deps: PartitionTasksDeps) {
    this.throttle = new Throttle(deps.clock, deps.config.faultInjection.maxRecordsPerSecond);
  }

  get size(): number {
    return this.tasks.size;
  }

  get(partition: number): PartitionTask | undefined {
    return this.tasks.get(partition);
  }

  all(): PartitionTask[] {
    return [...this.tasks.values()];
  }

  /** The partition is in the consumer's last assignment. */
  owns(partition: number): boolean {
    return this.assignedNow.has(partition);
  }

  /** The participants of the next checkpoint. */
  ready(): PartitionTask[] {
    return this.all().filter((t) => t.state === 'ready');
  }

  /** When each partition's open transaction got its first record (0: none open), for eos_pipeline_transaction_open_seconds. */
  openSince(): Map<number, number> {
    return new Map([...this.tasks].map(([p, t]) => [p, t.openSince ?? 0]));
  }

  /** The tasks are closed (or left behind): forget them. */
  clear(): void {
    this.tasks.clear();
  }

  /** A ready task whose send failed: the checkpoint must abort it. */
  hasErrored(): boolean {
    for (const t of this.tasks.values()) if (t.error && t.state === 'ready') return true;
    return false;
  }

  /** The consumer joined the group with `assigned`. */
  assigned(assigned: Set<number>): void {
    // From now on batches of other partitions are stale: never start a task for them.
    this.assignedNow = assigned;
    // kafkajs' positions do not survive a rejoin (a consumer restarted after a crash, or a
    // rebalance): the membership group holds no offsets, so it would fetch from startFrom again.
    // Each ready task's partition goes on from the task's position.
    for (const [p, t] of this.tasks) if (assigned.has(p) && t.state === 'ready' && t.nextOffset !== null) this.deps.seek(p, t.nextOffset);
    this.deps.metrics.assignedPartitions.set(this.deps.labels, assigned.size);
    void this.deps.serialized(() => this.onAssignment(assigned));
  }

  /** A fetched batch held only control records or aborted data: its ready task steps over it. */
  emptyBatch(partition: number, span: BatchSpan): void {
    const t = this.tasks.get(partition);
    if (t?.state === 'ready') void t.skipEmpty(span);
  }

  async batch({ partition, fetchedOffset, lastOffset, messages, isStale }: SourceBatch): Promise<void> {
    if (!this.deps.running() || !this.assignedNow.has(partition)) return;
    let task = this.tasks.get(partition);
    if (!task || task.state === 'new') {
      task = this.taskFor(partition);
      await task.waitForBarrier();
      if (task.state === 'new') {
        try {
          await this.initTask(task, BigInt(fetchedOffset));
        } catch (err) {
          // Refused (no Write on the transactional id, no Read on the group): every retry would be
          // refused too. The brokers are asked; a missing ACL fails the pipeline, which names it
          // and is restarted at restartStrategy's pace. Anything else (a coordinator moving) is
          // retried here, as before.
          if (await this.deps.permissions.failed(err)) {
            if (this.tasks.get(partition) === task) this.tasks.delete(partition);
            await task.close();
            void this.deps.fail(`partition ${partition}: initialising its transactional producer was refused: ${errorMessage(err)}`);
            return;
          }
          this.deps.logger.warn({ partition, err: errorMessage(err) }, 'task initialisation failed; will retry on the next batch');
          // Only this task: an assignment handled meanwhile may have started the partition over.
          if (this.tasks.get(partition) === task) this.tasks.delete(partition);
          await task.close();
          await this.deps.clock.sleep(500);
          this.deps.seek(partition, fetchedOffset);
          return;
        }
        // The batch was fetched from kafkajs' idea of the position; continue only from ours.
        if (task.nextOffset !== BigInt(fetchedOffset)) {
          this.deps.seek(partition, task.nextOffset!);
          return;
        }
      }
    }
    if (task.state !== 'ready') return;
    await this.throttle.take(messages.length);
    const used = await task.process(messages, isStale, { fetched: BigInt(fetchedOffset), last: BigInt(lastOffset) });
    if (used === 'gap' && task.nextOffset !== null) {
      this.deps.logger.debug({ partition, fetched: fetchedOffset, next: task.nextOffset.toString() }, 'batch starts past the task position; seeking back');
      this.deps.seek(partition, task.nextOffset);
    } else if (!used && task.error) this.deps.wake(); // abort now, not at the next interval
  }

  private taskFor(partition: number): PartitionTask {
    let t = this.tasks.get(partition);
    if (!t) {
      t = this.deps.newTask(partition);
      this.tasks.set(partition, t);
    }
    return t;
  }

  private async initTask(task: PartitionTask, fetchedOffset: bigint): Promise<void> {
    const { config, logger } = this.deps;
    const committed = await task.init();
    if (committed === null) {
      if (config.startFrom === 'none') {
        void this.deps.fail(`no committed offset for ${task.topic}-${task.partition} and pipeline.startFrom is none`);
        throw new Error('no committed offset');
      }
      // kafkajs' position moves on with every batch fetched, also of transactions later aborted (a
      // task revoked or re-created before its first commit): a partition that never committed
      // starts again where this process first bootstrapped it, or those records would be skipped.
      const at = this.bootstrapOffsets.get(task.partition) ?? fetchedOffset;
      this.bootstrapOffsets.set(task.partition, at);
      task.bootstrapAt(at);
      logger.warn({ partition: task.partition, offset: at.toString(), startFrom: config.startFrom }, 'no committed offset: bootstrapping');
    }
    this.deps.strategy.logInitialised(logger, { partition: task.partition, committed: task.committedOffset, transactionalId: task.transactionalId });
  }

  private async onAssignment(assigned: Set<number>): Promise<void> {
    const revoked = [...this.tasks.keys()].filter((p) => !assigned.has(p));
    // Through startOver, not a bare close: assignments queue behind a running checkpoint, so this
    // one may be older than the group's current one (assignedNow). A partition it revokes that
    // the current one gave back, and a fenced task's partition, must be read again from the
    // committed offset: kafkajs may already have fetched to the end of the partition, and with no
    // new input no batch would ever re-create the task (found by full-speed chaos: a silent stall).
    for (const p of revoked) await this.startOver(this.tasks.get(p)!);
    // Fenced tasks of partitions we own again start over: their next batch re-initialises them.
    for (const t of [...this.tasks.values()]) if (t.state === 'fenced') await this.startOver(t);
    this.deps.logger.info({ assigned: [...assigned].sort((a, b) => a - b), revoked }, 'partitions assigned');
  }

  /**
   * A task fenced while its partition stays assigned to us: by now the group has settled (the
   * instance that fenced us was a zombie, or we were and have rejoined). Starting it over
   * re-initialises the producer and re-reads the committed offset.
   */
  dropLongFenced(now: number): void {
    for (const [p, t] of this.tasks) {
      if (t.state === 'fenced' && t.fencedAt !== null && now - t.fencedAt > this.deps.config.sessionTimeout) {
        this.deps.logger.info({ partition: p }, 'partition still assigned after being fenced; starting its task over');
        void this.startOver(t);
      }
    }
  }

  /**
   * Drops a task whose partition stays assigned; the next batch of the partition initialises a
   * fresh one. kafkajs has moved its position past the batches the old task refused, and a source
   * that receives nothing new would never send another batch: so the consumer is sent back to
   * the last committed offset we know, and the fresh task seeks to the real one after fencing.
   */
  async startOver(t: PartitionTask): Promise<void> {
    if (this.tasks.get(t.partition) === t) this.tasks.delete(t.partition);
    await t.close();
    // A task that never became ready has no position; the batch initialising it seeks back itself.
    if (this.deps.running() && this.assignedNow.has(t.partition) && t.committedOffset !== null) {
      this.deps.seek(t.partition, t.committedOffset);
    }
  }
}
