// The pipeline service: its lifecycle (start from the committed offsets, stop, FAILED and the
// supervisor's restarts), readiness, and the glue between its layers: the kafkajs consumer
// adapter (source-consumer.ts), the partition tasks its batches feed (partition-tasks.ts), and
// the checkpoint loop (checkpoint-loop.ts) that has the CheckpointDriver (checkpoint-driver.ts)
// run two-phase commit across them. See docs/architecture.md "The pipeline".
import type { Admin, Kafka } from 'kafkajs';
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
import { Mutex } from '../runtime/mutex.js';
import { CheckpointDriver } from './checkpoint-driver.js';
import { CheckpointLoop } from './checkpoint-loop.js';
import { commitStrategy, type CommitStrategy } from './commit-strategy.js';
import { PartitionTask } from './partition-task.js';
import { PartitionTasks } from './partition-tasks.js';
import { GroupMembership } from './membership.js';
import { SourceConsumer } from './source-consumer.js';
import { checkTopicsAndOffsets, StartRefused } from './start-checks.js';
import { createTransformer, type Transformer } from './transforms/index.js';
import { defineService } from '../service.js';

export { membershipGroup } from './source-consumer.js';

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
  private readonly tasks: PartitionTasks;
  private source: SourceConsumer | undefined;
  /** What the group lately said about this run's consumer; asked before a partition's producer is initialised. */
  private membership: GroupMembership;
  private admin: Admin | undefined;
  private transform: Transformer | undefined;
  private sinkPartitions = 0;
  private dlqPartitions = 0;
  private readonly dlqTopic: string;
  private loop: CheckpointLoop | undefined;
  private looping: Promise<void> | undefined;
  private failure: string | undefined;
  /** The disconnect of the previous run's consumer, which the next start waits for. */
  private previousConsumer: Promise<unknown> | undefined;
  /** Control operations (checkpoints, rebalances, shutdown) never interleave. */
  private control = new Mutex();
  /** Names the ACLs the brokers refuse after a failure (eos_permission_missing, the FAILED detail). */
  private readonly permissions: PermissionWatch;

  constructor(
    private readonly config: PipelineConfig,
    private readonly kafka: Kafka,
    private readonly ctx: ServiceContext,
  ) {
    this.logger = ctx.logger;
    this.membership = new GroupMembership(this.clock, config.sessionTimeout);
    this.labels = { pipeline: config.name, engine: 'eoswatch', job_id: '' };
    this.dlqTopic = config.deadLetterTopic ?? `${config.sinkTopic}.dlq`;
    const restart = config.restartStrategy;
    this.restartPolicy = { delay: (attempt) => restartDelay(restart, attempt), resetAfterMs: restart.type === 'none' ? Infinity : restart.resetAfter };
    this.metrics = pipelineMetrics(ctx.registry);
    const names = { source: config.sourceTopic, sink: config.sinkTopic, dlq: this.dlqTopic, group: config.groupId, prefix: config.transactionalIdPrefix };
    this.permissions = permissionWatch({ service: 'pipeline', kafka, needed: () => neededPermissions(names, ['pipeline']), registry: ctx.registry, logger: ctx.logger });
    pipelineTransactionAgeMetrics(ctx.registry, config.name, config.transactionTimeout, () => this.tasks.openSince());
    const m = this.metrics;
    m.up.set(this.labels, 0);
    m.assignedPartitions.set(this.labels, 0);
    m.fenced.inc(this.labels, 0);
    this.strategy = commitStrategy(config.mode);
    this.tasks = new PartitionTasks({
      config,
      strategy: this.strategy,
      clock: this.clock,
      logger: this.logger,
      metrics: m,
      labels: this.labels,
      permissions: this.permissions,
      serialized: (fn) => this.control.run(fn),
      newTask: (partition) => this.newTask(partition),
      running: () => this.state === 'RUNNING',
      fail: (reason) => this.fail(reason),
      seek: (partition, offset) => this.source?.seek(partition, offset),
      wake: () => this.loop?.wake(),
    });
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
          if (resume !== null && t.state === 'ready') this.source?.seek(t.partition, resume);
        },
        abortFailed: async (t, err) => {
          // The next batch of this partition initialises a fresh task.
          this.logger.error({ partition: t.partition, err: errorMessage(err) }, 'could not abort or re-initialise the partition task; starting it over');
          await this.tasks.startOver(t);
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
    this.control = new Mutex();
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
    ({ sinkPartitions: this.sinkPartitions, dlqPartitions: this.dlqPartitions } = await checkTopicsAndOffsets(this.admin, c, this.dlqTopic, this.logger, () => this.assertStarting()));

    // The previous run's consumer must have left the group: a second consumer of ours would be
    // assigned partitions whose batches nobody processes.
    await this.previousConsumer;
    this.previousConsumer = undefined;
    this.assertStarting();
    this.membership = new GroupMembership(this.clock, c.sessionTimeout);
    this.source = new SourceConsumer(
      this.kafka,
      c,
      this.logger,
      {
        assigned: (partitions) => this.tasks.assigned(partitions),
        emptyBatch: (partition, span) => this.tasks.emptyBatch(partition, span),
        batch: (batch) => this.tasks.batch(batch),
        crashed: (message) => void this.fail(`consumer crashed: ${message}`),
      },
      this.membership,
    );
    await this.source.start(() => this.assertStarting());
    this.assertStarting();
    this.state = 'RUNNING';
    this.metrics.up.set(this.labels, this.driver.consecutiveFailures > 0 ? 0 : 1);
    this.loop = new CheckpointLoop({
      clock: this.clock,
      nextTriggerAt: () => this.driver.nextTriggerAt(),
      shouldTrigger: (now) => this.driver.shouldTrigger(now),
      running: () => this.state === 'RUNNING',
      mustAbort: () => this.tasks.hasErrored(),
      checkpoint: () => this.control.run(() => this.runCheckpoint()),
      fail: (reason) => this.fail(reason),
    });
    this.looping = this.loop.run();
    this.logger.info({ source: c.sourceTopic, sink: c.sinkTopic, dlq: this.dlqTopic, mode: c.mode, groupId: c.groupId }, 'pipeline running');
  }

  private async readCommitted(partition: number): Promise<bigint | null> {
    const offsets = await fetchCommittedOffsets(this.admin!, this.config.groupId, this.config.sourceTopic);
    return offsets.get(partition) ?? null;
  }

  private newTask(partition: number): PartitionTask {
    return new PartitionTask(this.config.sourceTopic, partition, {
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
      // At least once there is no fencing: any instance may open its producer.
      owns: async (p) => this.strategy.mode !== 'EXACTLY_ONCE' || ((await this.membership.confirm()) && this.tasks.owns(p)),
    });
  }

  /** One checkpoint over the ready tasks (checkpoint-driver.ts): barrier → preCommit → commit, or abort on error/timeout. */
  async runCheckpoint(): Promise<boolean> {
    if (this.state !== 'RUNNING' && this.state !== 'STOPPING') return false;
    this.tasks.dropLongFenced(this.clock.now());
    const completed = await this.driver.run(this.tasks.ready());
    if (completed) this.permissions.succeeded();
    return completed;
  }

  private async fail(reason: string): Promise<void> {
    if (this.state === 'FAILED' || this.state === 'STOPPED') return;
    this.state = 'FAILED';
    this.failure = reason;
    this.metrics.up.set(this.labels, 0);
    this.logger.error({ reason, onFailure: this.config.onFailure }, 'pipeline FAILED');
    this.loop?.wake();
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
   * and a FAILED pipeline must reach its restart. A consumer left behind is ignored (nothing of a
   * released consumer reaches the pipeline: source-consumer.ts) and the next start waits until it has left.
   */
  private async releaseClients(): Promise<void> {
    const bounded = (p: Promise<unknown> | undefined, what: string) =>
      this.clock.within(Promise.resolve(p).catch(() => undefined), RELEASE_TIMEOUT_MS, what).catch((err: unknown) =>
        this.logger.warn({ err: errorMessage(err) }, 'a client did not close in time; left behind'),
      );
    await bounded(Promise.all(this.tasks.all().map((t) => t.close())), 'closing the partition tasks');
    this.tasks.clear();
    const source = this.source;
    this.source = undefined;
    if (source) {
      const gone = source.release();
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
    this.loop?.wake();
    await this.looping;
    if (wasRunning && this.source) {
      await this.source.stop().catch(() => undefined);
      // Commit what was processed since the last checkpoint rather than redo it after restart.
      await this.control.run(() => this.runCheckpoint()).catch(() => false);
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
