// Runs the checkpoint protocol over the participants of one pipeline instance, after Flink's
// CheckpointCoordinator driving TwoPhaseCommitSinkFunction instances:
//
//   trigger(n) → barrier: every participant stops adding records to transaction n
//              → drain: the sends of records before the barrier are acknowledged
//              → preCommit: each participant adds its next offset (true: it has something to commit)
//              → [fault injection: faultInjection.commitDelay]
//              → commit: every pre-committed participant commits          → COMPLETED
//   any error, or checkpoint.timeout from the trigger → abort: every participant not yet committed
//              rewinds to its committed offset                             → FAILED when the
//              consecutive failures exceed the tolerable ones
//
// A failed checkpoint has one reason of a closed set (CheckpointFailureReason, after Flink's):
// TIMEOUT, FENCED, SEND_FAILED, PRE_COMMIT_FAILED or COMMIT_FAILED, from the error and the phase
// it came in, counted in eos_checkpoint_failures_total{reason}.
//
// The state machine is CheckpointCoordinator (checkpoint-coordinator.ts). The participants are the
// partition tasks (partition-task.ts), each committing through the mode's commit strategy
// (commit-strategy.ts). The driver does no I/O of its own: time and timers come from a Clock
// (src/runtime/clock.ts), and it reports every outcome into the checkpoint and pipeline metric
// families (src/metrics/checkpoint-stats.ts, src/metrics/pipeline.ts).
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { CHECKPOINT_FAILURE_REASONS, type CheckpointFailureReason, type PipelineLabels } from '../metrics/checkpoint-stats.js';
import type { PipelineMetrics } from '../metrics/pipeline.js';
import type { Clock } from '../runtime/clock.js';
import { TimeoutError } from '../util/timeout.js';
import { CheckpointCoordinator, type AbortOutcome, type PendingCheckpoint, type Phase } from './checkpoint-coordinator.js';
import type { CommitStrategy } from './commit-strategy.js';

/** Records of a participant's transaction, counted in eos_pipeline_records_total once committed. */
export interface PendingCounts {
  in: number;
  out: number;
  dlq: number;
}

/** One partition of the pipeline as the checkpoint sees it. */
export interface CheckpointParticipant {
  /** An open transaction holds records: aborting it counts in eos_transactions_total{outcome="aborted"}. */
  readonly hasOpenTransaction: boolean;
  /** A send failed: the checkpoint must abort this participant's transaction. */
  readonly error: Error | null;
  /**
   * Fenced by a newer producer of its transactional id: another instance owns the partition. It is
   * never aborted (re-initialising its producer would fence the new owner in turn).
   */
  readonly fenced: boolean;
  /** Checkpoint `id` starts: no record may enter the transaction until releaseBarrier(). */
  setBarrier(id: number): void;
  releaseBarrier(): void;
  /** Resolves once every send of records before the barrier is acknowledged. */
  drain(): Promise<void>;
  /** Adds the next offset to the transaction; false when there is nothing to commit. */
  preCommit(): Promise<boolean>;
  /** Commits; returns the commit latency in ms. */
  commit(): Promise<number>;
  /** The counts of the records committed by the last commit; resets them. */
  takePending(): PendingCounts;
  /** Undoes a failed checkpoint; returns the offset processing resumes from. Throws when it could not. */
  abort(timeoutMs: number): Promise<bigint | null>;
}

export interface DriverConfig {
  intervalMs: number;
  timeoutMs: number;
  minPauseMs: number;
  tolerableFailedCheckpoints: number;
  /** How long a participant's abort may take before its producer is replaced. */
  abortTimeoutMs: number;
  /** Delay between preCommit and commit (0: none), for the first `commitDelayTimes` checkpoints that commit something (0: every one). */
  faultInjection: { commitDelay: number; commitDelayTimes: number };
}

export interface DriverDeps<P extends CheckpointParticipant> {
  clock: Clock;
  strategy: CommitStrategy;
  metrics: PipelineMetrics;
  labels: PipelineLabels;
  logger: Logger;
  /** False while the pipeline stops: its last checkpoint does not set eos_pipeline_up back to 1. */
  running(): boolean;
  /** Too many consecutive failed checkpoints: the pipeline is FAILED (its clients are released). */
  fail(reason: string): Promise<void>;
  /** A participant rewound after an abort: processing resumes at `resume`. */
  rewound(participant: P, resume: bigint | null): void;
  /** A participant could not be aborted or re-initialised. */
  abortFailed(participant: P, err: unknown): Promise<void>;
}

export class CheckpointDriver<P extends CheckpointParticipant> {
  private coordinator: CheckpointCoordinator;
  private commitDelaysDone = 0;
  private abortReason = '';

  constructor(
    private readonly config: DriverConfig,
    private readonly deps: DriverDeps<P>,
  ) {
    this.coordinator = this.newCoordinator(0);
    const { metrics: m, labels } = deps;
    m.checkpointsPending.set(labels, 0);
    m.consecutiveFailures.set(labels, 0);
    m.tolerableFailures.set(labels, config.tolerableFailedCheckpoints);
    m.checkpointInterval.set(labels, config.intervalMs / 1000);
    for (const outcome of ['completed', 'failed', 'timeout']) m.checkpoints.inc({ ...labels, outcome }, 0);
    for (const reason of CHECKPOINT_FAILURE_REASONS) m.checkpointFailures.inc({ ...labels, reason }, 0);
    for (const outcome of ['committed', 'aborted']) m.transactions.inc({ ...labels, outcome }, 0);
    for (const direction of ['in', 'out', 'dlq']) m.records.inc({ ...labels, direction }, 0);
  }

  private newCoordinator(consecutiveFailures: number): CheckpointCoordinator {
    const c = this.config;
    return new CheckpointCoordinator(
      { intervalMs: c.intervalMs, timeoutMs: c.timeoutMs, minPauseMs: c.minPauseMs, tolerableFailedCheckpoints: c.tolerableFailedCheckpoints },
      { consecutiveFailures },
    );
  }

  /**
   * The pipeline starts again: no checkpoint pending, not FAILED. Failures since the last completed
   * checkpoint stay counted, so eos_checkpoint_consecutive_failures and EosCheckpointFailing stay up
   * until a checkpoint completes, and a restarted pipeline that keeps failing is FAILED again.
   */
  restart(): void {
    this.coordinator = this.newCoordinator(this.coordinator.consecutiveFailures);
  }

  get phase(): Phase {
    return this.coordinator.phase;
  }

  get current(): PendingCheckpoint | null {
    return this.coordinator.current;
  }

  get consecutiveFailures(): number {
    return this.coordinator.consecutiveFailures;
  }

  get lastCompletedId(): number {
    return this.coordinator.lastCompletedId;
  }

  /** Why the last checkpoint was aborted ('' when none was). */
  get lastAbortReason(): string {
    return this.abortReason;
  }

  /** When the next checkpoint may start (ms), or null while one is pending or the pipeline is FAILED. */
  nextTriggerAt(): number | null {
    return this.coordinator.nextTriggerAt();
  }

  shouldTrigger(now: number): boolean {
    return this.coordinator.shouldTrigger(now);
  }

  /** One checkpoint over `participants`: true when it completed. Throws IllegalTransition while one is pending or the pipeline is FAILED. */
  async run(participants: readonly P[]): Promise<boolean> {
    const { clock, metrics: m, labels } = this.deps;
    const cp = this.coordinator.trigger(clock.now());
    m.checkpointsPending.set(labels, 1);
    const deadline = this.coordinator.deadline!;
    const left = () => deadline - clock.now();
    const committed: P[] = [];
    /** The errors of the sends that failed before preCommit: what a participant's preCommit throws then. */
    let failedSends: ReadonlySet<Error> = new Set();
    try {
      for (const p of participants) p.setBarrier(cp.id);
      await clock.within(Promise.all(participants.map((p) => p.drain())), left(), `checkpoint ${cp.id} barrier`);
      this.coordinator.barrierReached(cp.id);
      failedSends = new Set(participants.flatMap((p) => (p.error ? [p.error] : [])));
      const flags = await clock.within(Promise.all(participants.map((p) => p.preCommit())), left(), `checkpoint ${cp.id} preCommit`);
      const toCommit = participants.filter((_, i) => flags[i]);
      this.coordinator.preCommitted(cp.id);
      await this.injectCommitDelay(cp.id, toCommit.length);
      if (left() <= 0) throw new TimeoutError(`checkpoint ${cp.id} timed out before commit`);
      const latencies = await clock.within(
        Promise.all(
          toCommit.map(async (p) => {
            const ms = await p.commit();
            committed.push(p);
            return ms;
          }),
        ),
        left(),
        `checkpoint ${cp.id} commit`,
      );
      for (const ms of latencies) m.commitLatency.observe(labels, ms / 1000);
      this.countRecords(toCommit);
      this.deps.strategy.countTransactions(m, labels, { committed: toCommit.length, aborted: 0 });
      const r = this.coordinator.complete(cp.id, clock.now());
      m.checkpoints.inc({ ...labels, outcome: 'completed' });
      m.checkpointDuration.observe({ ...labels, outcome: 'completed' }, r.durationMs / 1000);
      m.lastCompleted.set(labels, clock.now() / 1000);
      m.consecutiveFailures.set(labels, 0);
      if (this.deps.running()) m.up.set(labels, 1);
      this.deps.logger.debug({ checkpoint: cp.id, transactions: toCommit.length, ms: r.durationMs }, 'checkpoint completed');
      return true;
    } catch (err) {
      const failure = this.failureReason(err, participants, failedSends);
      const outcome: AbortOutcome = failure === 'TIMEOUT' ? 'timeout' : 'failed';
      await this.abort(cp.id, participants, committed, outcome, failure, errorMessage(err));
      return false;
    } finally {
      for (const p of participants) p.releaseBarrier();
      m.checkpointsPending.set(labels, this.coordinator.pendingCount);
    }
  }

  /** Why the pending checkpoint failed with `err` (asked before the abort, in the phase it failed in). */
  private failureReason(err: unknown, participants: readonly P[], failedSends: ReadonlySet<Error>): CheckpointFailureReason {
    if (err instanceof TimeoutError) return 'TIMEOUT';
    if (participants.some((p) => p.fenced)) return 'FENCED';
    const phase = this.coordinator.phase;
    if (phase === 'BARRIER' || failedSends.has(err as Error)) return 'SEND_FAILED';
    return phase === 'COMMITTING' ? 'COMMIT_FAILED' : 'PRE_COMMIT_FAILED';
  }

  private async injectCommitDelay(id: number, transactions: number): Promise<void> {
    const fi = this.config.faultInjection;
    if (fi.commitDelay > 0 && transactions > 0 && (fi.commitDelayTimes === 0 || this.commitDelaysDone++ < fi.commitDelayTimes)) {
      this.deps.logger.warn({ checkpoint: id, delayMs: fi.commitDelay, transactions }, 'fault injection: pre-committed, waiting before commit');
      await this.deps.clock.sleep(fi.commitDelay);
    }
  }

  private countRecords(participants: readonly P[]): void {
    const { metrics: m, labels } = this.deps;
    for (const p of participants) {
      const c = p.takePending();
      m.records.inc({ ...labels, direction: 'in' }, c.in);
      m.records.inc({ ...labels, direction: 'out' }, c.out);
      m.records.inc({ ...labels, direction: 'dlq' }, c.dlq);
    }
  }

  /**
   * The outcome is counted (and eos_pipeline_up drops) the moment the checkpoint fails, before
   * the rewind: during an outage the rewind (abort, or re-initialising the producer) waits for
   * the cluster, and no next checkpoint starts meanwhile. It is not cut short: a second producer
   * initialised for the same transactional id while the first still retries would fence it and
   * be fenced in turn. A FAILED pipeline skips the rewind; its clients close within bounds.
   */
  private async abort(id: number, participants: readonly P[], committed: P[], outcome: AbortOutcome, failure: CheckpointFailureReason, reason: string): Promise<void> {
    const { clock, metrics: m, labels, logger } = this.deps;
    const toAbort = participants.filter((p) => !committed.includes(p));
    const aborted = toAbort.filter((p) => p.hasOpenTransaction || p.error).length;
    const r = this.coordinator.abort(id, clock.now(), outcome, reason);
    this.abortReason = reason;
    m.checkpoints.inc({ ...labels, outcome });
    m.checkpointFailures.inc({ ...labels, reason: failure });
    m.checkpointDuration.observe({ ...labels, outcome }, r.durationMs / 1000);
    m.consecutiveFailures.set(labels, this.coordinator.consecutiveFailures);
    m.up.set(labels, 0);
    this.countRecords(committed);
    this.deps.strategy.countTransactions(m, labels, { committed: committed.length, aborted });
    logger.warn({ checkpoint: id, outcome, failure, reason, transactions: aborted }, 'checkpoint aborted; rewinding to the committed offsets');
    if (r.failed) {
      // Closing the participants aborts their transactions; the restart re-reads the committed offsets.
      await this.deps.fail(this.coordinator.failureReason ?? reason);
      return;
    }
    await Promise.all(
      toAbort
        .filter((p) => !p.fenced)
        .map(async (p) => {
          try {
            this.deps.rewound(p, await p.abort(this.config.abortTimeoutMs));
          } catch (err) {
            await this.deps.abortFailed(p, err);
          }
        }),
    );
  }
}
