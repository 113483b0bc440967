// A Flink KafkaSink's commit latency per checkpoint, from its transactions as the transaction
// coordinator logged them (the transactions service's events, src/coordinator/events.ts) joined
// with the checkpoint's completion from Flink's REST API. Pure: events and checkpoints in,
// observations out; every time comes from the records (the coordinators' clocks) and from the
// JobManager's latest_ack_timestamp.
//
// The KafkaSink (connector 3.x, EXACTLY_ONCE) names each transaction
// `<transactionalIdPrefix>-<subtask>-<checkpointId>`: the records a writer subtask sends before
// checkpoint N's barrier go into transaction N, which it pre-commits at the barrier; the committer
// commits it when the JobManager notifies that N completed (notifyCheckpointComplete), or, after a
// failover, when the job restores from N. A subtask that wrote nothing in a checkpoint has no
// transaction for it.
//
// The span (docs/flink.md): from the checkpoint's completion (its latest_ack_timestamp: the last
// acknowledgement, when the JobManager decided the commit) to the last of its transactions' markers
// written (CompleteCommit: read_committed consumers see the whole checkpoint), in seconds: the
// commit phase of the two-phase commit, as eoswatch's own pipeline measures from the end of preCommit.
// When one of the checkpoint's EndTxn (PrepareCommit) is logged before that completion the
// JobManager's clock is ahead of the coordinators' (the committer commits only after the
// notification): the span then starts at the first EndTxn instead, on the coordinators' clocks only.
//
// When a checkpoint's transactions are all seen: a checkpoint is complete when every transaction of
// it that began has its markers written. The log is read partition after partition, so one pass may
// hold a subtask's CompleteCommit and not yet another's Ongoing (logged before the checkpoint
// completed, in a partition read earlier in the pass); that Ongoing is in the next pass at the
// latest. So a checkpoint is taken once it is complete at the end of a pass that brought nothing
// new for it. A checkpoint with a transaction seen only from its EndTxn on (it began before the
// transactions service's first pass), or one aborted and not begun again, is never observed.
// After a gap (the service's first pass, or its first after the log could not be read, a baseline
// whose events are lost; or a tracker new to the stream) a checkpoint may have had a transaction
// wholly inside the gap while another's Ongoing was logged just after the partition was read:
// that Ongoing is in the first pass after the gap, so the checkpoints that pass touches are not
// observed either.
//
// Pooled naming (FLIP-511, TransactionNamingStrategy.POOLING of the Flink 2.x connector): the last
// number is then an index into a pool of ids, the lowest not in use, starting at 0, and an id is
// used again once its transaction is committed; it says nothing about the checkpoint. INCREMENTING
// never writes a 0 (checkpoint ids start at 1) and never begins a transaction under an id whose
// transaction was committed. Either sign makes the tracker stop for good (`pooled`): a commit
// latency joined to the wrong checkpoint would be a false signal, so none is better.
import type { TxnEvent } from '../coordinator/events.js';

/** The subtask and checkpoint of a KafkaSink transactional id of `prefix`; null when it is not one. */
export function parseSinkTransactionalId(transactionalId: string, prefix: string): { subtask: number; checkpointId: number } | null {
  if (!transactionalId.startsWith(`${prefix}-`)) return null;
  const m = /^(\d+)-(\d+)$/.exec(transactionalId.slice(prefix.length + 1));
  if (!m) return null;
  return { subtask: Number(m[1]), checkpointId: Number(m[2]) };
}

export interface SinkCommitObservation {
  checkpointId: number;
  /** The commit phase in seconds (never negative). */
  seconds: number;
  /** Transactions (subtasks) the checkpoint committed. */
  transactions: number;
  /** Where the span started: the checkpoint's completion, or its first EndTxn when the JobManager's clock was ahead. */
  from: 'checkpoint' | 'first-end-txn';
}

interface SubtaskTxn {
  /** Its Ongoing was seen (not only a later state). */
  began: boolean;
  /** PrepareCommit (the client's EndTxn), ms. */
  decidedAtMs?: number;
  /** CompleteCommit (markers written), ms. */
  doneAtMs?: number;
  aborted: boolean;
}

interface Group {
  subtasks: Map<number, SubtaskTxn>;
  /** Complete at the end of a pass that brought nothing for it. */
  settled: boolean;
}

export interface SinkCommitTrackerOptions {
  prefix: string;
  /** Checkpoints kept waiting at most (events or completion); the oldest go first. Default 64. */
  maxPending?: number;
}

/** Per-checkpoint commit latency of one KafkaSink (one transactional id prefix) of one job. */
export class SinkCommitTracker {
  readonly prefix: string;
  private readonly maxPending: number;
  private readonly groups = new Map<number, Group>();
  /** Completed checkpoints (REST): id → latest_ack_timestamp (ms). */
  private readonly completedAt = new Map<number, number>();
  /** Checkpoints observed, failed or not fully seen: their later events are ignored. */
  private readonly closed = new Set<number>();
  /** The next pass follows a gap (a baseline, or this tracker is new): the checkpoints it touches are not observed. */
  private afterBaseline = true;
  /** Ids whose transaction was committed (markers written): one beginning again means pooled naming. */
  private readonly committedIds = new Set<string>();
  private pooledBy: string | null = null;

  constructor(opts: SinkCommitTrackerOptions) {
    this.prefix = opts.prefix;
    this.maxPending = opts.maxPending ?? 64;
  }

  /** Why the sink's ids are pooled, not checkpoint ids (then nothing is observed any more); null while they look incrementing. */
  get pooled(): string | null {
    return this.pooledBy;
  }

  /** Checkpoints waiting (for their transactions or their completion), for tests and /readyz-style details. */
  get pending(): number {
    return this.groups.size;
  }

  /**
   * The events of one pass over the transaction log (every event of the pass, in the order read;
   * an empty list for a pass that read nothing): the checkpoints whose commits are now all seen
   * and whose completion is known.
   */
  pass(events: readonly TxnEvent[], baseline = false): SinkCommitObservation[] {
    if (baseline) {
      this.groups.clear();
      this.afterBaseline = true;
      return [];
    }
    if (this.pooledBy) return [];
    const tainted = this.afterBaseline;
    this.afterBaseline = false;
    const touched = new Set<number>();
    for (const ev of events) {
      const id = parseSinkTransactionalId(ev.transactionalId, this.prefix);
      if (!id) continue;
      const reused = ev.kind === 'began' && this.committedIds.has(ev.transactionalId);
      if (id.checkpointId === 0 || reused) {
        this.stopPooled(reused ? `${ev.transactionalId} began a transaction again after one was committed under it` : `${ev.transactionalId} ends in 0, which no checkpoint id is`);
        return [];
      }
      if (ev.kind === 'completed' && ev.committed) this.remember(ev.transactionalId);
      if (this.closed.has(id.checkpointId)) continue;
      if (tainted) {
        this.close(id.checkpointId);
        continue;
      }
      const g = this.group(id.checkpointId);
      touched.add(id.checkpointId);
      let t = g.subtasks.get(id.subtask);
      if (ev.kind === 'began') {
        // A new transaction under this id (after the abort of a lingering one at a restore).
        g.subtasks.set(id.subtask, { began: true, aborted: false });
        continue;
      }
      if (!t) g.subtasks.set(id.subtask, (t = { began: false, aborted: false }));
      if (ev.kind === 'ended') {
        if (ev.outcome === 'committed') t.decidedAtMs = ev.atMs;
        else t.aborted = true;
      } else if (ev.kind === 'completed') {
        if (ev.committed) {
          t.decidedAtMs ??= ev.decidedAtMs;
          t.doneAtMs = ev.atMs;
        } else t.aborted = true;
      }
    }
    for (const [cid, g] of this.groups) g.settled = !touched.has(cid) && complete(g);
    this.trim();
    return this.ready();
  }

  /** A checkpoint of the job reached a terminal state (REST): completed, with its latest_ack_timestamp (ms), or failed. */
  checkpoint(checkpointId: number, completed: boolean, lastAckMs: number): SinkCommitObservation[] {
    if (this.pooledBy || this.closed.has(checkpointId)) return [];
    if (!completed) {
      this.close(checkpointId);
      return [];
    }
    this.completedAt.set(checkpointId, lastAckMs);
    this.trim();
    return this.ready();
  }

  private stopPooled(why: string): void {
    this.pooledBy = why;
    this.groups.clear();
    this.completedAt.clear();
    this.committedIds.clear();
  }

  /** Bounded like the checkpoints kept: an id committed long ago and begun again is caught by its 0 sooner or later. */
  private remember(transactionalId: string): void {
    this.committedIds.add(transactionalId);
    if (this.committedIds.size > 16 * this.maxPending) this.committedIds.delete(this.committedIds.values().next().value!);
  }

  private group(checkpointId: number): Group {
    let g = this.groups.get(checkpointId);
    if (!g) this.groups.set(checkpointId, (g = { subtasks: new Map(), settled: false }));
    return g;
  }

  private close(checkpointId: number): void {
    this.groups.delete(checkpointId);
    this.completedAt.delete(checkpointId);
    this.closed.add(checkpointId);
    if (this.closed.size > 4 * this.maxPending) this.closed.delete(Math.min(...this.closed));
  }

  private trim(): void {
    for (const m of [this.groups, this.completedAt] as Map<number, unknown>[]) {
      while (m.size > this.maxPending) m.delete(Math.min(...m.keys()));
    }
  }

  private ready(): SinkCommitObservation[] {
    const out: SinkCommitObservation[] = [];
    for (const [cid, g] of [...this.groups].sort((a, b) => a[0] - b[0])) {
      const ackMs = this.completedAt.get(cid);
      if (!g.settled || ackMs === undefined) continue;
      const txns = [...g.subtasks.values()];
      // complete() holds: every transaction began here, none aborted, all decided and done.
      const firstDecision = Math.min(...txns.map((t) => t.decidedAtMs!));
      const lastDone = Math.max(...txns.map((t) => t.doneAtMs!));
      const skewed = firstDecision < ackMs;
      const from = skewed ? firstDecision : ackMs;
      out.push({ checkpointId: cid, seconds: Math.max(0, lastDone - from) / 1000, transactions: txns.length, from: skewed ? 'first-end-txn' : 'checkpoint' });
      this.close(cid);
    }
    return out;
  }
}

/** Every transaction of the checkpoint seen from its start and committed with markers written. */
function complete(g: Group): boolean {
  if (!g.subtasks.size) return false;
  for (const t of g.subtasks.values()) if (!t.began || t.aborted || t.decidedAtMs === undefined || t.doneAtMs === undefined) return false;
  return true;
}
