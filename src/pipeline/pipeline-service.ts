// The pipeline service: a read_committed consumer in a group, one PartitionTask per assigned
// partition, and the checkpoint loop that has the CheckpointDriver (checkpoint-driver.ts) run
// two-phase commit across them. See docs/architecture.md "The pipeline".
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { PipelineConfig } from '../config/types.js';
import { EosError, ErrorCodes, errorMessage } from '../errors.js';
import { neededPermissions } from '../kafka/needed-acls.js';
import { fetchCommittedOffsets } from '../kafka/offsets.js';
import { refusedKinds, type PermissionWatch } from '../kafka/permissions.js';
import { permissionWatch } from '../kafka/permission-probe.js';
import type { Logger } from '../log.js';
import type { PipelineLabels } from '../metrics/checkpoint-stats.js';
import { pipelineMetrics, type PipelineMetrics } from '../metrics/pipeline.js';
import { pipelineTransactionAgeMetrics } from '../metrics/lag.js';
import type { RestartPolicy, Service, ServiceContext, ServiceHealth } from '../service.js';
import { restartDelay } from '../restart.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { CheckpointDriver } from './checkpoint-driver.js';
import { commitStrategy, type CommitStrategy } from './commit-strategy.js';
import { PartitionTask } from './partition-task.js';
import { createTransformer, type Transformer } from './transforms/index.js';
import { defineService } from '../service.js';

/** The consumer group the instances join to split partitions; offsets are never read from it. */
export function membershipGroup(groupId: string): string {
  return `${groupId}.members`;
}

/**
 * The pipeline refuses to start on purpose (no committed offset and startFrom none): with
 * onFailure exit the process exits; with keep-serving the start is retried (an operator may
 * commit offsets meanwhile).
 */
class StartRefused extends EosError {
  constructor(message: string) {
    super(ErrorCodes.SERVICE_START_FAILED, message);
  }
}

/** Longest wait for one client to close when the pipeline fails or stops. */
const RELEASE_TIMEOUT_MS = 10_000;

export type PipelineState = 'STARTING' | 'RUNNING' | 'FAILED' | 'STOPPING' | 'STOPPED';

export class PipelineService implements Service {
  readonly name = 'pipeline';
  state: PipelineState = 'STARTING';
  /** Runs the checkpoints; restarted by each start (failures since the last completed checkpoint carried). */
  readonly driver: CheckpointDriver<PartitionTask>;
  readonly restartPolicy: RestartPolicy;
  private readonly strategy: CommitStrategy;
  private readonly metrics: PipelineMetrics;
  private readonly labels: PipelineLabels;
  private readonly logger: Logger;
  /** The driver's clock, which the partition tasks and the checkpoint loop share. */
  private readonly clock: Clock = systemClock;
  private readonly tasks = new Map<number, PartitionTask>();
  private consumer: Consumer | undefined;
  private admin: Admin | undefined;
  private transform: Transformer | undefined;
  private sinkPartitions = 0;
  private dlqPartitions = 0;
  private readonly dlqTopic: string;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private failure: string | undefined;
  /** The disconnect of the previous run's consumer, which the next start waits for. */
  private previousConsumer: Promise<unknown> | undefined;
  private control: Promise<unknown> = Promise.resolve();
  private assigned = new Set<number>();
  /** Names the ACLs the brokers refuse after a failure (eos_permission_missing, the FAILED detail). */
  private readonly permissions: PermissionWatch;

  constructor(
    private readonly config: PipelineConfig,
    private readonly kafka: Kafka,
    private readonly ctx: ServiceContext,
  ) {
    this.logger = ctx.logger;
    this.labels = { pipeline: config.name, engine: 'eoswatch', job_id: '' };
    this.dlqTopic = config.deadLetterTopic ?? `${config.sinkTopic}.dlq`;
    const restart = config.restartStrategy;
    this.restartPolicy = { delay: (attempt) => restartDelay(restart, attempt), resetAfterMs: restart.type === 'none' ? Infinity : restart.resetAfter };
    this.metrics = pipelineMetrics(ctx.registry);
    const names = { source: config.sourceTopic, sink: config.sinkTopic, dlq: this.dlqTopic, group: config.groupId, prefix: config.transactionalIdPrefix };
    this.permissions = permissionWatch({ service: 'pipeline', kafka, needed: () => neededPermissions(names, ['pipeline']), registry: ctx.registry, logger: ctx.logger });
    pipelineTransactionAgeMetrics(ctx.registry, config.name, config.transactionTimeout, () => new Map([...this.tasks].map(([p, t]) => [p, t.openSince ?? 0])));
    const m = this.metrics;
    m.up.set(this.labels, 0);
    m.assignedPartitions.set(this.labels, 0);
    m.fenced.inc(this.labels, 0);
    this.strategy = commitStrategy(config.mode);
    const cp = config.checkpoint;
    this.driver = new CheckpointDriver<PartitionTask>(
      {
        intervalMs: cp.interval,
        timeoutMs: cp.timeout,
        minPauseMs: cp.minPause,
        tolerableFailedCheckpoints: cp.tolerableFailedCheckpoints,
        abortTimeoutMs: Math.max(5_000, cp.timeout),
        faultInjection: config.faultInjection,
      },
      {
        clock: this.clock,
        strategy: this.strategy,
        metrics: m,
        labels: this.labels,
        logger: this.logger,
        running: () => this.state === 'RUNNING',
        fail: (reason) => this.fail(reason),
        rewound: (t, resume) => {
          if (resume !== null && t.state === 'ready') this.seek(t.partition, resume);
        },
        abortFailed: async (t, err) => {
          // The next batch of this partition initialises a fresh task.
          this.logger.error({ partition: t.partition, err: errorMessage(err) }, 'could not abort or re-initialise the partition task; starting it over');
          await this.startOver(t);
        },
      },
    );
  }

  ready(): ServiceHealth {
    // A failing checkpoint means nothing is committed: not ready, even if failures are still tolerated.
    if (this.state === 'RUNNING' && this.driver.consecutiveFailures > 0) {
      return { ready: false, detail: `RUNNING, ${this.driver.consecutiveFailures} consecutive failed checkpoint(s): ${this.driver.lastAbortReason}` };
    }
    if (this.state === 'RUNNING') return { ready: true, detail: `RUNNING, ${this.tasks.size} partition(s), last checkpoint ${this.driver.lastCompletedId}` };
    if (this.state === 'FAILED') return { ready: false, detail: `FAILED: ${this.failure}` };
    return { ready: false, detail: this.state };
  }

  /**
   * Starts (or, after stop(), restarts) from the committed offsets. A failed start releases
   * everything and throws: the supervisor retries it (src/daemon.ts), whatever onFailure says.
   */
  async start(): Promise<void> {
    this.driver.restart();
    this.state = 'STARTING';
    this.failure = undefined;
    this.control = Promise.resolve();
    try {
      await this.prepare();
    } catch (err) {
      if (this.state === 'STARTING') this.state = 'FAILED';
      this.failure = errorMessage(err);
      this.metrics.up.set(this.labels, 0);
      await this.releaseClients();
      // Refusing to start is the pipeline's own verdict, as FAILED is: onFailure applies to it.
      if (err instanceof StartRefused && this.config.onFailure === 'exit') this.ctx.fatal(err);
      // A refusal (or a topic the metadata hides): the brokers say which ACL is missing.
      const missing = await this.permissions.failed(err);
      if (missing) {
        this.failure = `${this.failure}; ${missing}`;
        throw new EosError(ErrorCodes.SERVICE_START_FAILED, `pipeline: ${this.failure}`, { cause: err });
      }
      throw err;
    }
  }

  /** A stop() during start() makes the start give up at its next step. */
  private assertStarting(): void {
    if (this.state !== 'STARTING') throw new Error(`pipeline start interrupted (${this.state})`);
  }

  private async prepare(): Promise<void> {
    const c = this.config;
    this.transform ??= await createTransformer(c, this.logger);
    // An unreachable cluster fails the start in seconds, not after the long retries the runtime
    // clients keep for failovers: the supervisor retries the start with its own backoff.
    const probe = this.kafka.admin({ retry: { retries: 3, maxRetryTime: 1000 } });
    try {
      await probe.connect();
    } finally {
      await probe.disconnect().catch(() => undefined);
    }
    this.assertStarting();
    this.admin = this.kafka.admin();
    await this.admin.connect();
    this.assertStarting();
    const meta = await this.admin.fetchTopicMetadata({ topics: [] });
    const partitionsOf = (topic: string): number => meta.topics.find((t) => t.name === topic)?.partitions.length ?? 0;
    const missing = [c.sourceTopic, c.sinkTopic, this.dlqTopic].filter((t) => partitionsOf(t) === 0);
    if (missing.length) {
      throw new EosError(ErrorCodes.SERVICE_START_FAILED, `pipeline: topic${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not found; create ${missing.length > 1 ? 'them' : 'it'} first (eoswatch never auto-creates topics)`);
    }
    this.sinkPartitions = partitionsOf(c.sinkTopic);
    this.dlqPartitions = partitionsOf(this.dlqTopic);

    const committed = await fetchCommittedOffsets(this.admin, c.groupId, c.sourceTopic);
    this.assertStarting();
    const without = [...committed.entries()].filter(([, o]) => o === null).map(([p]) => p);
    if (without.length && c.startFrom === 'none') {
      throw new StartRefused(
        `pipeline: consumer group "${c.groupId}" has no committed offset for ${c.sourceTopic} partition${without.length > 1 ? 's' : ''} ${without.join(', ')}; ` +
          `refusing to start (auto.offset.reset=none). To bootstrap, set pipeline.startFrom: earliest (or latest) for one run, ` +
          `or commit offsets with kafka-consumer-groups.sh --group ${c.groupId} --topic ${c.sourceTopic} --reset-offsets --to-earliest --execute`,
      );
    }
    if (without.length) {
      this.logger.warn({ partitions: without, startFrom: c.startFrom }, `no committed offset for some partitions: starting them from ${c.startFrom} (pipeline.startFrom)`);
    }

    // kafkajs commits offsets on its own in one place (an OFFSET_OUT_OF_RANGE reset commits the
    // default offset), which would overwrite the offsets our transactions commit. So the consumer
    // joins a membership group of its own, and offsets live only in pipeline.groupId, written by
    // the transactions (old-style TxnOffsetCommit needs no membership) and read after fencing.
    // The previous run's consumer must have left the group: a second consumer of ours would be
    // assigned partitions whose batches nobody processes.
    await this.previousConsumer;
    this.previousConsumer = undefined;
    this.assertStarting();
    const consumer = this.kafka.consumer({
      groupId: membershipGroup(c.groupId),
      readUncommitted: false,
      sessionTimeout: c.sessionTimeout,
      heartbeatInterval: c.heartbeatInterval,
      rebalanceTimeout: Math.max(c.sessionTimeout, c.checkpoint.timeout + 10_000),
      maxWaitTimeInMs: 250,
      // Throttled (fault-injection runs): small fetches, so that batches are small steps of progress.
      // With whole 1 MiB batches waiting their turn, a coordinator kill left the consumer crashing and
      // re-fetching while batches held their slots, and the pipeline stalled (coordinator-kill chaos);
      // `npm run chaos -- --full-speed` runs faults at default fetch sizes instead, unthrottled.
      ...(c.faultInjection.maxRecordsPerSecond > 0 ? { maxBytesPerPartition: Math.min(16_384, c.maxBytesPerPartition), maxBytes: 65_536 } : { maxBytesPerPartition: c.maxBytesPerPartition }),
      allowAutoTopicCreation: false,
      // A consumer of an earlier run never restarts itself after a crash: it would rejoin the group
      // and hold partitions whose batches nobody processes.
      retry: { retries: 10, restartOnFailure: async () => consumer === this.consumer },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      // One left behind by an earlier run (a disconnect during kafkajs' crash-restart delay, after
      // which kafkajs started it again): it must leave, or it keeps partitions nobody processes
      // (found by the soak: 3 such members held 2 of 3 partitions after broker outages).
      if (consumer !== this.consumer) {
        this.logger.warn({ groupId: membershipGroup(c.groupId) }, 'a consumer of an earlier run rejoined the group; disconnecting it');
        void consumer.disconnect().catch(() => undefined);
        return;
      }
      const assigned = new Set(payload.memberAssignment[c.sourceTopic] ?? []);
      // From now on batches of other partitions are stale: never start a task for them.
      this.assigned = assigned;
      // kafkajs' positions do not survive a rejoin (a consumer restarted after a crash, or a
      // rebalance): the membership group holds no offsets, so it would fetch from startFrom again.
      // Each ready task's partition goes on from the task's position.
      for (const [p, t] of this.tasks) if (assigned.has(p) && t.state === 'ready' && t.nextOffset !== null) this.seek(p, t.nextOffset);
      this.metrics.assignedPartitions.set(this.labels, assigned.size);
      void this.serialized(() => this.onAssignment(assigned));
    });
    // Batches holding only control records (transaction markers) or aborted data never reach
    // eachBatch; the task must still step over them, or its next batch would look like a gap.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      if (consumer !== this.consumer) return;
      if (payload.batchSize !== 0 || payload.topic !== c.sourceTopic) return;
      const t = this.tasks.get(payload.partition);
      const first = (payload as { firstOffset?: string | null }).firstOffset;
      if (t?.state === 'ready' && first != null) void t.skipEmpty({ fetched: BigInt(first), last: BigInt(payload.lastOffset) });
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart && consumer === this.consumer) void this.fail(`consumer crashed: ${payload.error.message}`);
    });
    await consumer.connect();
    this.assertStarting();
    await consumer.subscribe({ topics: [c.sourceTopic], fromBeginning: c.startFrom === 'earliest' });
    this.assertStarting();
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: true,
      partitionsConsumedConcurrently: 64,
      eachBatch: (payload) => (consumer === this.consumer ? this.heartbeating(payload, () => this.onBatch(payload)) : Promise.resolve()),
    });
    this.assertStarting();
    this.state = 'RUNNING';
    this.metrics.up.set(this.labels, this.driver.consecutiveFailures > 0 ? 0 : 1);
    this.loop = this.checkpointLoop();
    this.logger.info({ source: c.sourceTopic, sink: c.sinkTopic, dlq: this.dlqTopic, mode: c.mode, groupId: c.groupId }, 'pipeline running');
  }

  /** Control operations (checkpoints, rebalances, shutdown) never interleave. */
  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.control.then(fn);
    this.control = next.catch(() => undefined);
    return next;
  }

  /**
   * Sends the consumer to `offset` of a source partition. kafkajs refuses a seek while its consumer
   * restarts after a crash (a broker failover exhausts its retries: "Consumer group was not
   * initialized"); that is no failure of ours: the restarted consumer's join seeks every ready
   * task to its position (GROUP_JOIN above), and a partition without a ready task is positioned
   * by the batch that initialises its task. A seek to at most a task's next offset is always safe:
   * records before it are never added twice (planBatch).
   */
  private seek(partition: number, offset: bigint | string): void {
    const consumer = this.consumer;
    if (!consumer) return;
    try {
      consumer.seek({ topic: this.config.sourceTopic, partition, offset: String(offset) });
    } catch (err) {
      this.logger.debug({ partition, offset: String(offset), err: errorMessage(err) }, 'seek deferred: the consumer is restarting');
    }
  }

  private async readCommitted(partition: number): Promise<bigint | null> {
    const offsets = await fetchCommittedOffsets(this.admin!, this.config.groupId, this.config.sourceTopic);
    return offsets.get(partition) ?? null;
  }

  private taskFor(partition: number): PartitionTask {
    let t = this.tasks.get(partition);
    if (!t) {
      t = new PartitionTask(this.config.sourceTopic, partition, {
        kafka: this.kafka,
        config: this.config,
        strategy: this.strategy,
        transform: this.transform!,
        sinkPartitions: this.sinkPartitions,
        dlqTopic: this.dlqTopic,
        dlqPartitions: this.dlqPartitions,
        logger: this.logger,
        clock: this.clock,
        readCommitted: (p) => this.readCommitted(p),
        onFenced: () => this.metrics.fenced.inc(this.labels),
      });
      this.tasks.set(partition, t);
    }
    return t;
  }

  private async onAssignment(assigned: Set<number>): Promise<void> {
    const revoked = [...this.tasks.keys()].filter((p) => !assigned.has(p));
    // Through startOver, not a bare close: assignments queue behind a running checkpoint, so this
    // one may be older than the group's current one (this.assigned). A partition it revokes that
    // the current one gave back, and a fenced task's partition, must be read again from the
    // committed offset: kafkajs may already have fetched to the end of the partition, and with no
    // new input no batch would ever re-create the task (found by full-speed chaos: a silent stall).
    for (const p of revoked) await this.startOver(this.tasks.get(p)!);
    // Fenced tasks of partitions we own again start over: their next batch re-initialises them.
    for (const t of [...this.tasks.values()]) if (t.state === 'fenced') await this.startOver(t);
    this.logger.info({ assigned: [...assigned].sort((a, b) => a - b), revoked }, 'partitions assigned');
  }

  /**
   * kafkajs heartbeats only between batches. At default fetch sizes a batch can wait for a
   * checkpoint (its barrier, then preCommit and commit of large transactions) longer than the
   * session timeout; without a heartbeat meanwhile the group evicts this member mid-checkpoint and
   * hands its partitions on, and their next owner fences the checkpoint (found by full-speed chaos;
   * slow links in net-slow-links chaos gave the same eviction, again and again).
   * A rebalance is still noticed: kafkajs' own heartbeat after the batch reports it.
   */
  private async heartbeating(payload: EachBatchPayload, fn: () => Promise<void>): Promise<void> {
    const beat = setInterval(() => void payload.heartbeat().catch(() => undefined), this.config.heartbeatInterval);
    try {
      await fn();
    } finally {
      clearInterval(beat);
    }
  }

  private async onBatch({ batch, isStale, isRunning }: EachBatchPayload): Promise<void> {
    if (this.state !== 'RUNNING' || !isRunning() || isStale() || !this.assigned.has(batch.partition)) return;
    // kafkajs' Batch carries the offset the fetch was issued from, but its typings omit it.
    const fetchedOffset = String((batch as unknown as { fetchedOffset: string }).fetchedOffset);
    let task = this.tasks.get(batch.partition);
    if (!task || task.state === 'new') {
      task = this.taskFor(batch.partition);
      await task.waitForBarrier();
      if (task.state === 'new') {
        try {
          await this.initTask(task, BigInt(fetchedOffset));
        } catch (err) {
          // Refused (no Write on the transactional id, no Read on the group): every retry would be
          // refused too. The brokers are asked; a missing ACL fails the pipeline, which names it
          // and is restarted at restartStrategy's pace. Anything else (a coordinator moving) is
          // retried here, as before.
          if (await this.permissions.failed(err)) {
            if (this.tasks.get(batch.partition) === task) this.tasks.delete(batch.partition);
            await task.close();
            void this.fail(`partition ${batch.partition}: initialising its transactional producer was refused: ${errorMessage(err)}`);
            return;
          }
          this.logger.warn({ partition: batch.partition, err: errorMessage(err) }, 'task initialisation failed; will retry on the next batch');
          // Only this task: an assignment handled meanwhile may have started the partition over.
          if (this.tasks.get(batch.partition) === task) this.tasks.delete(batch.partition);
          await task.close();
          await this.clock.sleep(500);
          this.seek(batch.partition, fetchedOffset);
          return;
        }
        // The batch was fetched from kafkajs' idea of the position; continue only from ours.
        if (task.nextOffset !== BigInt(fetchedOffset)) {
          this.seek(batch.partition, task.nextOffset!);
          return;
        }
      }
    }
    if (task.state !== 'ready') return;
    await this.throttle(batch.messages.length);
    const used = await task.process(batch.messages, isStale, { fetched: BigInt(fetchedOffset), last: BigInt(batch.lastOffset()) });
    if (used === 'gap' && task.nextOffset !== null) {
      this.logger.debug({ partition: batch.partition, fetched: fetchedOffset, next: task.nextOffset.toString() }, 'batch starts past the task position; seeking back');
      this.seek(batch.partition, task.nextOffset);
    } else if (!used && task.error) this.wake?.(); // abort now, not at the next interval
  }

  /** faultInjection.maxRecordsPerSecond: batches take turns for slots of the allowed rate. */
  private throttledUntil = 0;
  private async throttle(records: number): Promise<void> {
    const rate = this.config.faultInjection.maxRecordsPerSecond;
    if (rate <= 0 || records === 0) return;
    const now = this.clock.now();
    const start = Math.max(now, this.throttledUntil);
    this.throttledUntil = start + (records * 1000) / rate;
    if (start > now) await this.clock.sleep(start - now);
  }

  /** Where each partition without a committed offset was first bootstrapped by this process. */
  private readonly bootstrapOffsets = new Map<number, bigint>();

  private async initTask(task: PartitionTask, fetchedOffset: bigint): Promise<void> {
    const committed = await task.init();
    if (committed === null) {
      if (this.config.startFrom === 'none') {
        void this.fail(`no committed offset for ${task.topic}-${task.partition} and pipeline.startFrom is none`);
        throw new Error('no committed offset');
      }
      // kafkajs' position moves on with every batch fetched, also of transactions later aborted (a
      // task revoked or re-created before its first commit): a partition that never committed
      // starts again where this process first bootstrapped it, or those records would be skipped.
      const at = this.bootstrapOffsets.get(task.partition) ?? fetchedOffset;
      this.bootstrapOffsets.set(task.partition, at);
      task.bootstrapAt(at);
      this.logger.warn({ partition: task.partition, offset: at.toString(), startFrom: this.config.startFrom }, 'no committed offset: bootstrapping');
    }
    this.strategy.logInitialised(this.logger, { partition: task.partition, committed: task.committedOffset, transactionalId: task.transactionalId });
  }

  /**
   * Not a Periodic: when the next checkpoint may start is the coordinator's answer (interval,
   * minPause, none pending), and a failed send wakes the loop early to abort at once.
   */
  private async checkpointLoop(): Promise<void> {
    while (this.state === 'RUNNING') {
      const at = this.driver.nextTriggerAt();
      const delay = at === null ? 100 : Math.max(0, at - this.clock.now());
      if (delay > 0 && !this.hasErroredTask()) {
        const woken = new AbortController();
        this.wake = () => woken.abort();
        await this.clock.sleep(delay, woken.signal);
        this.wake = undefined;
      }
      if (this.state !== 'RUNNING') break;
      if (this.driver.shouldTrigger(this.clock.now()) || this.hasErroredTask()) {
        await this.serialized(() => this.runCheckpoint()).catch((err) => this.fail(`checkpoint loop: ${errorMessage(err)}`));
      }
    }
  }

  /**
   * A task fenced while its partition stays assigned to us: by now the group has settled (the
   * instance that fenced us was a zombie, or we were and have rejoined). Starting it over
   * re-initialises the producer and re-reads the committed offset.
   */
  private dropLongFencedTasks(now: number): void {
    for (const [p, t] of this.tasks) {
      if (t.state === 'fenced' && t.fencedAt !== null && now - t.fencedAt > this.config.sessionTimeout) {
        this.logger.info({ partition: p }, 'partition still assigned after being fenced; starting its task over');
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
  private async startOver(t: PartitionTask): Promise<void> {
    if (this.tasks.get(t.partition) === t) this.tasks.delete(t.partition);
    await t.close();
    // A task that never became ready has no position; the batch initialising it seeks back itself.
    if (this.state === 'RUNNING' && this.assigned.has(t.partition) && t.committedOffset !== null) {
      this.seek(t.partition, t.committedOffset);
    }
  }

  private hasErroredTask(): boolean {
    for (const t of this.tasks.values()) if (t.error && t.state === 'ready') return true;
    return false;
  }

  /** One checkpoint over the ready tasks (checkpoint-driver.ts): barrier → preCommit → commit, or abort on error/timeout. */
  async runCheckpoint(): Promise<boolean> {
    if (this.state !== 'RUNNING' && this.state !== 'STOPPING') return false;
    this.dropLongFencedTasks(this.clock.now());
    const completed = await this.driver.run([...this.tasks.values()].filter((t) => t.state === 'ready'));
    if (completed) this.permissions.succeeded();
    return completed;
  }

  private async fail(reason: string): Promise<void> {
    if (this.state === 'FAILED' || this.state === 'STOPPED') return;
    this.state = 'FAILED';
    this.failure = reason;
    this.metrics.up.set(this.labels, 0);
    this.logger.error({ reason, onFailure: this.config.onFailure }, 'pipeline FAILED');
    this.wake?.();
    await this.releaseClients();
    const missing = await this.permissions.failed(reason);
    if (missing) this.failure = `${reason}; ${missing}`;
    const err = new EosError(ErrorCodes.PIPELINE_FAILED, `pipeline FAILED: ${this.failure}`);
    // exit: the orchestrator restarts the process; keep-serving: the supervisor restarts the
    // pipeline after pipeline.restartStrategy's delay (src/daemon.ts). A missing ACL is not
    // mended by a new process: the daemon stays up whatever onFailure says (the other services
    // keep watching, /readyz names the permission) and retries in-process until it is granted.
    if (this.config.onFailure === 'exit' && !missing && refusedKinds(reason).size === 0) this.ctx.fatal(err);
    else if (this.state === 'FAILED') (this.ctx.failed ?? this.ctx.fatal)(err);
  }

  /**
   * Closes the tasks first (a batch stuck in a send returns once its producer is gone), then the
   * consumer, each step bounded: during an outage a disconnect can wait on retries for minutes,
   * and a FAILED pipeline must reach its restart. A consumer left behind is ignored (onBatch and
   * its events check that it is the current one) and the next start waits until it has left.
   */
  private async releaseClients(): Promise<void> {
    const bounded = (p: Promise<unknown> | undefined, what: string) =>
      this.clock.within(Promise.resolve(p).catch(() => undefined), RELEASE_TIMEOUT_MS, what).catch((err: unknown) =>
        this.logger.warn({ err: errorMessage(err) }, 'a client did not close in time; left behind'),
      );
    await bounded(Promise.all([...this.tasks.values()].map((t) => t.close())), 'closing the partition tasks');
    this.tasks.clear();
    const consumer = this.consumer;
    this.consumer = undefined;
    if (consumer) {
      const gone = consumer.disconnect().catch(() => undefined);
      this.previousConsumer = gone;
      await bounded(gone, 'consumer disconnect');
    }
    this.metrics.assignedPartitions.set(this.labels, 0);
    await bounded(this.strategy.close(), 'offset writer close');
    await bounded(this.admin?.disconnect(), 'admin disconnect');
    // A worker thread stuck in a transform must not outlive the run; the next start spawns a fresh one.
    await this.transform?.close();
  }

  /** Finishes the checkpoint in flight, commits what was processed, leaves the group, closes producers. */
  async stop(): Promise<void> {
    if (this.state === 'STOPPED') return;
    const wasRunning = this.state === 'RUNNING';
    this.state = 'STOPPING';
    this.wake?.();
    await this.loop;
    if (wasRunning && this.consumer) {
      await this.consumer.stop().catch(() => undefined);
      // Commit what was processed since the last checkpoint rather than redo it after restart.
      await this.serialized(() => this.runCheckpoint()).catch(() => false);
    }
    await this.releaseClients();
    this.state = 'STOPPED';
    this.metrics.up.set(this.labels, 0);
    this.metrics.checkpointsPending.set(this.labels, 0);
  }
}

export const pipelineService = defineService({
  name: 'pipeline',
  section: 'pipeline',
  enabled: (config) => config.pipeline.enabled,
  create: ({ config, ctx, kafka }) => ({
    // Short first retries: after a commit, the next transaction's AddPartitionsToTxn meets
    // CONCURRENT_TRANSACTIONS until the markers are written (a few ms), and kafkajs retries with this.
    // Enough of them (about 35 s) to ride out a leader or coordinator failover; a send stuck longer
    // is cut by the checkpoint timeout, which aborts and re-initialises the producer.
    service: new PipelineService(
      config.pipeline,
      kafka({ requestTimeout: pipelineRequestTimeout(config.kafka.requestTimeout, config.pipeline.checkpoint.timeout) }, { initialRetryTime: 20, maxRetryTime: 1000, retries: 40 }),
      ctx,
    ),
  }),
});

/**
 * The pipeline's request timeout: kafka.requestTimeout, at most a third of the checkpoint timeout.
 * A request to a broker that stopped answering (SIGSTOP, a partition of the network) waits its
 * whole request timeout before kafkajs sends it to the partition's new leader; with the default
 * 30 s against a 30 s checkpoint, one paused broker of three would fail every checkpoint it
 * touches instead of slowing it down. Never below 1 s.
 */
export function pipelineRequestTimeout(requestTimeoutMs: number, checkpointTimeoutMs: number): number {
  return Math.min(requestTimeoutMs, Math.max(1_000, Math.floor(checkpointTimeoutMs / 3)));
}
