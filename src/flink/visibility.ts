// Visibility latency of a Flink job's Kafka sink: from a checkpoint's completion until the sink
// topic's last stable offset (LSO) has passed the records the checkpoint covers, i.e. until
// read_committed consumers can read them. Flink's KafkaSink commits its transactions only after
// the checkpoint completed (notifyCheckpointComplete), so this is the part of end-to-end latency
// that Flink's own checkpoint figures do not show: a slow or failing committer, a transaction
// coordinator that is away. Pure: the LSO monitor's readings (src/kafka/lso-monitor.ts) and the
// completed checkpoints the Flink poller sees (src/flink/flink-service.ts) come in as arguments.
//
// For checkpoint N (trigger T, last acknowledgement C) and each sink partition:
//   a = the last reading at or before T: every record below its high watermark H was written
//       before N was triggered, so it belongs to a transaction of N or an earlier checkpoint;
//   b = the last reading at or before C: if its LSO is already at or past H, those records were
//       visible before N completed and the partition says nothing about N;
//   otherwise the records wait, and the first reading whose LSO reaches H is when they became
//       visible. The checkpoint's latency is the latest such moment over its partitions, minus C.
// Readings come every lsoMonitor.interval, so a figure is at most one interval above the true one
// (never below). Checkpoints whose partitions all had nothing waiting are not observed.
import type { PartitionEnds } from '../kafka/offsets.js';

interface Reading {
  t: number;
  lso: bigint;
  high: bigint;
}

export interface CompletedCheckpoint {
  id: number;
  /** Flink's trigger_timestamp and latest_ack_timestamp (ms). */
  triggerMs: number;
  lastAckMs: number;
}

export interface VisibilityObservation {
  job: string;
  id: number;
  seconds: number;
}

interface Pending {
  job: string;
  id: number;
  completedMs: number;
  /** Partition key → the LSO it must reach. */
  waiting: Map<string, bigint>;
  /** The latest moment one of its partitions was seen visible so far. */
  visibleMs: number;
}

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;
const topicOf = (k: string) => k.slice(0, k.indexOf('\u0000'));

/** Pending checkpoints kept per job: past this many, newer ones are not tracked (the oldest decide the pending age). */
export const MAX_PENDING_PER_JOB = 1000;

export class VisibilityTracker {
  private readonly readings = new Map<string, Reading[]>();
  private readonly pending: Pending[] = [];

  /** @param keepMs how long readings are kept (a checkpoint triggered before that cannot be judged). */
  constructor(private readonly keepMs = 10 * 60_000) {}

  /** One reading of a topic's partitions at `now` (ms); returns the checkpoints it shows visible. */
  reading(topic: string, ends: PartitionEnds[], now: number): VisibilityObservation[] {
    const seen = new Set<string>();
    for (const e of ends) {
      const k = key(topic, e.partition);
      seen.add(k);
      let list = this.readings.get(k);
      if (!list) this.readings.set(k, (list = []));
      list.push({ t: now, lso: e.lso, high: e.high });
      // Keep one reading older than the window: it is the "at or before the trigger" of a checkpoint triggered just inside it.
      const cutoff = now - this.keepMs;
      let drop = 0;
      while (drop + 1 < list.length && list[drop + 1]!.t <= cutoff) drop++;
      if (drop) list.splice(0, drop);
    }
    for (const k of [...this.readings.keys()]) if (topicOf(k) === topic && !seen.has(k)) this.readings.delete(k);

    const out: VisibilityObservation[] = [];
    for (const p of [...this.pending]) {
      let touched = false;
      for (const [k, target] of p.waiting) {
        if (topicOf(k) !== topic) continue;
        touched = true;
        const e = ends.find((x) => key(topic, x.partition) === k);
        if (!e) p.waiting.delete(k);
        else if (e.lso >= target) {
          p.waiting.delete(k);
          p.visibleMs = Math.max(p.visibleMs, now);
        }
      }
      if (touched && p.waiting.size === 0) {
        this.pending.splice(this.pending.indexOf(p), 1);
        if (p.visibleMs > p.completedMs) out.push({ job: p.job, id: p.id, seconds: (p.visibleMs - p.completedMs) / 1000 });
      }
    }
    return out;
  }

  /**
   * Checkpoint `cp` of `job`, whose sink is `topics`, completed. Returns its observation when the
   * readings already show its records visible; otherwise it waits for later readings.
   */
  completed(job: string, topics: string[], cp: CompletedCheckpoint): VisibilityObservation[] {
    const waiting = new Map<string, bigint>();
    let visibleMs = cp.lastAckMs;
    let waited = false;
    for (const [k, list] of this.readings) {
      if (!topics.includes(topicOf(k))) continue;
      const a = lastAtOrBefore(list, cp.triggerMs);
      const b = lastAtOrBefore(list, cp.lastAckMs);
      if (!a || !b || b.lso >= a.high) continue;
      waited = true;
      const v = list.find((r) => r.t > cp.lastAckMs && r.lso >= a.high);
      if (v) visibleMs = Math.max(visibleMs, v.t);
      else waiting.set(k, a.high);
    }
    if (!waited) return [];
    if (waiting.size === 0) return [{ job, id: cp.id, seconds: (visibleMs - cp.lastAckMs) / 1000 }];
    if (this.pending.filter((p) => p.job === job).length < MAX_PENDING_PER_JOB) {
      this.pending.push({ job, id: cp.id, completedMs: cp.lastAckMs, waiting, visibleMs });
    }
    return [];
  }

  /** Seconds since the oldest completed checkpoint of `job` whose records are still behind the LSO; 0 when none. */
  pendingSeconds(job: string, now: number): number {
    const oldest = Math.min(...this.pending.filter((p) => p.job === job).map((p) => p.completedMs));
    return Number.isFinite(oldest) ? Math.max(0, now - oldest) / 1000 : 0;
  }

  /** A job no longer watched: its pending checkpoints are dropped. */
  forget(job: string): void {
    for (let i = this.pending.length - 1; i >= 0; i--) if (this.pending[i]!.job === job) this.pending.splice(i, 1);
  }
}

function lastAtOrBefore(list: Reading[], t: number): Reading | undefined {
  for (let i = list.length - 1; i >= 0; i--) if (list[i]!.t <= t) return list[i];
  return undefined;
}
