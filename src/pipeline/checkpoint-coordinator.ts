// The checkpoint state machine of one pipeline instance, after Flink's CheckpointCoordinator
// and TwoPhaseCommitSinkFunction, with no I/O: the checkpoint driver (checkpoint-driver.ts)
// moves it along as it runs the protocol over the participants, with a clock.
//
//   IDLE ──trigger(n)──▶ BARRIER ──barrierReached──▶ PRE_COMMIT ──preCommitted──▶ COMMITTING
//     ▲                                                                         │
//     └──────────── complete(n) ◀──────────────────────────────────────────────┘
//     └──────────── abort(n) ◀── any phase (error or timeout) ── consecutive failures
//                                  > tolerable ──▶ FAILED (terminal)
//
// At most one checkpoint is pending: per-partition commits must be ordered, or a committed
// offset could go backwards.

export type Phase = 'IDLE' | 'BARRIER' | 'PRE_COMMIT' | 'COMMITTING' | 'FAILED';
export type AbortOutcome = 'failed' | 'timeout';

export interface CoordinatorConfig {
  intervalMs: number;
  timeoutMs: number;
  minPauseMs: number;
  tolerableFailedCheckpoints: number;
}

/** What a coordinator of an earlier run hands to the next one: failures since the last completed checkpoint. */
export interface CarriedState {
  consecutiveFailures: number;
}

export interface PendingCheckpoint {
  id: number;
  triggeredAt: number;
  phase: Exclude<Phase, 'IDLE' | 'FAILED'>;
}

export interface CheckpointResult {
  id: number;
  durationMs: number;
  outcome: 'completed' | AbortOutcome;
  /** Set when this abort made the pipeline FAILED. */
  failed?: boolean;
  reason?: string;
}

export class IllegalTransition extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IllegalTransition';
  }
}

export class CheckpointCoordinator {
  private pending: PendingCheckpoint | null = null;
  private lastTriggerAt = -Infinity;
  private lastCompletionAt = -Infinity;
  private nextId = 1;
  private failedReason: string | null = null;
  private failures: number;
  lastCompletedId = 0;

  constructor(
    readonly config: CoordinatorConfig,
    carried: CarriedState = { consecutiveFailures: 0 },
  ) {
    if (config.intervalMs <= 0) throw new RangeError('checkpoint interval must be > 0');
    if (config.timeoutMs <= 0) throw new RangeError('checkpoint timeout must be > 0');
    if (config.minPauseMs < 0) throw new RangeError('min pause must be >= 0');
    if (!Number.isInteger(config.tolerableFailedCheckpoints) || config.tolerableFailedCheckpoints < 0) {
      throw new RangeError('tolerable failed checkpoints must be an integer >= 0');
    }
    if (!Number.isInteger(carried.consecutiveFailures) || carried.consecutiveFailures < 0) {
      throw new RangeError('carried consecutive failures must be an integer >= 0');
    }
    this.failures = carried.consecutiveFailures;
  }

  /** Failed checkpoints since the last completed one, those of earlier runs included. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  get phase(): Phase {
    if (this.failedReason !== null) return 'FAILED';
    return this.pending?.phase ?? 'IDLE';
  }

  get current(): PendingCheckpoint | null {
    return this.pending;
  }

  /** When the pending checkpoint times out (ms), or null when none is pending. */
  get deadline(): number | null {
    return this.pending ? this.pending.triggeredAt + this.config.timeoutMs : null;
  }

  /** Checkpoints triggered and not yet completed or aborted: 0 or 1. */
  get pendingCount(): number {
    return this.pending ? 1 : 0;
  }

  get failureReason(): string | null {
    return this.failedReason;
  }

  /** When the next checkpoint may be triggered (ms), or null while one is pending or the pipeline FAILED. */
  nextTriggerAt(): number | null {
    if (this.failedReason !== null || this.pending) return null;
    return Math.max(this.lastTriggerAt + this.config.intervalMs, this.lastCompletionAt + this.config.minPauseMs);
  }

  shouldTrigger(now: number): boolean {
    const at = this.nextTriggerAt();
    return at !== null && now >= at;
  }

  /** Starts checkpoint n: every task must stop adding records to its transaction n. */
  trigger(now: number): PendingCheckpoint {
    if (this.failedReason !== null) throw new IllegalTransition(`pipeline is FAILED: ${this.failedReason}`);
    if (this.pending) throw new IllegalTransition(`checkpoint ${this.pending.id} is still pending (max concurrent checkpoints is 1)`);
    this.pending = { id: this.nextId++, triggeredAt: now, phase: 'BARRIER' };
    this.lastTriggerAt = now;
    return { ...this.pending };
  }

  private expect(id: number, phase: PendingCheckpoint['phase']): PendingCheckpoint {
    const p = this.pending;
    if (!p || p.id !== id) throw new IllegalTransition(`checkpoint ${id} is not pending (pending: ${p?.id ?? 'none'})`);
    if (p.phase !== phase) throw new IllegalTransition(`checkpoint ${id} is in ${p.phase}, expected ${phase}`);
    return p;
  }

  /** Every task stopped adding records: pre-commit (flush, send offsets) may start. */
  barrierReached(id: number): void {
    this.expect(id, 'BARRIER').phase = 'PRE_COMMIT';
  }

  /** Every task pre-committed: the transactions may be committed. */
  preCommitted(id: number): void {
    this.expect(id, 'PRE_COMMIT').phase = 'COMMITTING';
  }

  complete(id: number, now: number): CheckpointResult {
    const p = this.expect(id, 'COMMITTING');
    this.pending = null;
    this.lastCompletionAt = now;
    this.lastCompletedId = id;
    this.failures = 0;
    return { id, durationMs: now - p.triggeredAt, outcome: 'completed' };
  }

  /** The pending checkpoint is aborted (in any phase). Too many consecutive failures make the pipeline FAILED. */
  abort(id: number, now: number, outcome: AbortOutcome, reason: string): CheckpointResult {
    const p = this.pending;
    if (!p || p.id !== id) throw new IllegalTransition(`checkpoint ${id} is not pending (pending: ${p?.id ?? 'none'})`);
    this.pending = null;
    // An aborted checkpoint also counts as "the last attempt" for min pause: retrying at once would hammer a sick cluster.
    this.lastCompletionAt = now;
    this.failures++;
    const result: CheckpointResult = { id, durationMs: now - p.triggeredAt, outcome, reason };
    if (this.failures > this.config.tolerableFailedCheckpoints) {
      this.failedReason = `${this.failures} consecutive failed checkpoint${this.failures > 1 ? 's' : ''} (tolerable: ${this.config.tolerableFailedCheckpoints}); last: ${reason}`;
      result.failed = true;
    }
    return result;
  }
}
