// Lag arithmetic of consumer groups, apart from I/O. A read_committed consumer can never read past
// the last stable offset (LSO): records of open transactions, and offsets of aborted records and
// commit markers up to the LSO, are never lag it could work off. Lag is therefore measured to the
// LSO; the high-watermark (HW) lag that other exporters report is kept beside it for comparison.
import type { PartitionEnds } from '../kafka/offsets.js';
import { OffsetTimeTable } from '../kafka/offset-time.js';

export interface PartitionLag {
  group: string;
  topic: string;
  partition: number;
  committed: bigint;
  /** LSO − committed (offsets, so aborted records and markers below the LSO count), never negative. */
  lsoLag: number;
  /** HW − committed: what HW-based exporters call lag. */
  hwLag: number;
  /** How long the first unconsumed committed record (offset `committed`) has been readable; 0 without LSO lag. */
  lagSeconds: number;
  /** How long the committed offset has not moved while lsoLag > 0. */
  stuckSeconds: number;
}

const key = (...parts: (string | number)[]): string => parts.join('\u0000');

/**
 * Keeps the LSO history of every watched partition (one table per partition, shared by all groups)
 * and, per group and partition, since when the committed offset has stood still.
 */
export class LagCalculator {
  private readonly tables = new Map<string, OffsetTimeTable>();
  /** Per group, per topic-partition key (a group's reading touches its own entries only). */
  private readonly stillSince = new Map<string, Map<string, { committed: bigint; since: number }>>();
  /** Each reading's ends of a topic by partition, made once per reading for every group reading the topic. */
  private readonly byPartitionOf = new WeakMap<PartitionEnds[], Map<number, PartitionEnds>>();

  constructor(private readonly tableCapacity = 240) {}

  /** Records one reading of end offsets at time `now` (ms). Partitions not in the reading are forgotten. */
  observe(ends: Map<string, PartitionEnds[]>, now: number): void {
    const seen = new Set<string>();
    for (const [topic, parts] of ends) {
      for (const e of parts) {
        const k = key(topic, e.partition);
        seen.add(k);
        let t = this.tables.get(k);
        if (!t) this.tables.set(k, (t = new OffsetTimeTable(this.tableCapacity)));
        t.add(now, e.lso);
      }
    }
    for (const k of this.tables.keys()) if (!seen.has(k)) this.tables.delete(k);
  }

  /**
   * Lag of one group on the partitions it has committed offsets for, at time `now`. Partitions
   * without end offsets in `ends` (topic gone, not watched) are left out. Stuck-clocks of partitions
   * the group no longer reports are dropped.
   */
  lag(
    group: string,
    committed: Map<string, Map<number, bigint>>,
    ends: Map<string, PartitionEnds[]>,
    now: number,
    nothingToRead: (topic: string, partition: number, committed: bigint) => boolean = () => false,
  ): PartitionLag[] {
    const out: PartitionLag[] = [];
    const before = this.stillSince.get(group);
    const still = new Map<string, { committed: bigint; since: number }>();
    for (const [topic, offsets] of committed) {
      const byPartition = this.byPartition(ends.get(topic));
      for (const [partition, c] of offsets) {
        const e = byPartition.get(partition);
        if (!e) continue;
        // Only markers or aborted records between the committed offset and the LSO (a consumer that
        // committed before a trailing marker, as kafkajs consumers do): nothing to read, no lag.
        const lsoLag = e.lso > c && !nothingToRead(topic, partition, c) ? Number(e.lso - c) : 0;
        const hwLag = e.high > c ? Number(e.high - c) : 0;
        const sk = key(topic, partition);
        let st = still.get(sk) ?? before?.get(sk);
        if (!st || st.committed !== c || lsoLag === 0) st = { committed: c, since: now };
        still.set(sk, st);
        const table = this.tables.get(key(topic, partition));
        out.push({
          group,
          topic,
          partition,
          committed: c,
          lsoLag,
          hwLag,
          lagSeconds: lsoLag > 0 && table ? table.ageSeconds(c, now) : 0,
          stuckSeconds: lsoLag > 0 ? (now - st.since) / 1000 : 0,
        });
      }
    }
    // Partitions the group no longer reports are dropped with the rest.
    this.stillSince.set(group, still);
    return out;
  }

  private byPartition(ends: PartitionEnds[] | undefined): Map<number, PartitionEnds> {
    if (!ends) return new Map();
    let m = this.byPartitionOf.get(ends);
    if (!m) {
      m = new Map(ends.map((e) => [e.partition, e]));
      this.byPartitionOf.set(ends, m);
    }
    return m;
  }

  /** The group's committed offset on the partition was `committed` at the previous reading too. */
  unmoved(group: string, topic: string, partition: number, committed: bigint): boolean {
    return this.stillSince.get(group)?.get(key(topic, partition))?.committed === committed;
  }

  /** Forgets a group that vanished. */
  forgetGroup(group: string): void {
    this.stillSince.delete(group);
  }
}
