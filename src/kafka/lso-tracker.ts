// Pure state behind hanging-transaction detection. A partition's last stable offset (LSO) stops
// at the first record of the oldest open transaction; while that transaction is open, the high
// watermark can move on and read_committed consumers see nothing past the LSO. The tracker
// remembers, per partition, since when the LSO has stood still with records behind it.
import type { PartitionEnds } from './offsets.js';
import { OffsetTimeTable } from './offset-time.js';

export interface LsoState {
  topic: string;
  partition: number;
  /** High watermark − LSO: records held back from read_committed consumers. */
  lag: number;
  /** How long the LSO has not moved while lag > 0; 0 when nothing is held back. */
  stuckMs: number;
  /**
   * Age of the oldest record held behind the LSO (the first record of the oldest open transaction):
   * when the high watermark passed the LSO, from the table of sampled high watermarks, error at
   * most one reading interval; 0 when nothing is held back.
   */
  openAgeMs: number;
  /** stuckMs ≥ the hanging threshold. */
  hanging: boolean;
  /** What the previous reading of this partition said (to log transitions). */
  wasHanging: boolean;
}

interface Entry {
  lso: bigint;
  lag: number;
  /** The first reading since the LSO last moved or records last waited behind it. */
  since: number;
  hanging: boolean;
  /** High watermarks over time. */
  highs: OffsetTimeTable;
}

export class LsoTracker {
  /** Per topic, per partition (a reading of a topic touches its own partitions only). */
  private readonly topics = new Map<string, Map<number, Entry>>();

  constructor(private readonly hangingAfterMs: number) {}

  /**
   * Takes one reading of a topic's partitions at time `now` (ms) and returns their state. A
   * partition that vanished from the reading is forgotten.
   */
  update(topic: string, ends: PartitionEnds[], now: number): LsoState[] {
    const before = this.topics.get(topic);
    const entries = new Map<number, Entry>();
    const out: LsoState[] = [];
    for (const e of ends) {
      const lag = e.high > e.lso ? Number(e.high - e.lso) : 0;
      let entry = entries.get(e.partition) ?? before?.get(e.partition);
      const wasHanging = entry?.hanging ?? false;
      if (!entry) entry = { lso: e.lso, lag, since: now, hanging: false, highs: new OffsetTimeTable() };
      else if (entry.lso !== e.lso || entry.lag === 0) {
        // (hanging is set below, from the new since.)
        entry.lso = e.lso;
        entry.since = now;
      }
      entries.set(e.partition, entry);
      entry.lag = lag;
      const stuckMs = lag > 0 ? now - entry.since : 0;
      entry.hanging = lag > 0 && stuckMs >= this.hangingAfterMs;
      entry.highs.add(now, e.high);
      const openAgeMs = lag > 0 ? entry.highs.ageSeconds(e.lso, now) * 1000 : 0;
      out.push({ topic, partition: e.partition, lag, stuckMs, openAgeMs, hanging: entry.hanging, wasHanging });
    }
    this.topics.set(topic, entries);
    return out;
  }

  forget(topic: string): void {
    this.topics.delete(topic);
  }
}
