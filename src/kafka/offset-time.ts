// Offset → wall-time table of one partition, built from periodic readings of an end offset (the
// last stable offset, or the high watermark) and the time of each reading. It answers "since when
// has the record at offset o been there?" without fetching the record: o appeared between the last
// reading whose end was ≤ o and the first whose end was > o; linear interpolation between the two
// places it inside that window. The error is therefore at most the time between those two readings,
// i.e. one polling interval (the same method as kafka-lag-exporter's lookup table).

export interface OffsetSample {
  /** Wall time of the reading, ms. */
  at: number;
  /** End offset read at that time. */
  offset: bigint;
}

/** Where an offset's arrival time came from. */
export type ArrivalEstimate =
  /** Between two readings: error ≤ their distance in time. */
  | 'interpolated'
  /** Older than the oldest reading kept: extrapolated at the table's average rate (a rough estimate, never later than the oldest reading). */
  | 'extrapolated';

export class OffsetTimeTable {
  /** Increasing in time, non-decreasing in offset. A flat run keeps its first and its last reading. */
  private readonly samples: OffsetSample[] = [];
  /** The table restarted on an end offset that went backwards: what came before its first reading is unknown. */
  private restarted = false;

  constructor(private readonly capacity = 240) {
    if (capacity < 3) throw new Error('an offset-time table needs at least 3 samples');
  }

  get size(): number {
    return this.samples.length;
  }

  /** Adds a reading. An end offset that went backwards (topic recreated, truncation) restarts the table. */
  add(at: number, offset: bigint): void {
    const s = this.samples;
    const last = s[s.length - 1];
    if (last && (offset < last.offset || at < last.at)) {
      s.length = 0;
      this.restarted = true;
    }
    const prev = s[s.length - 2];
    // In a flat run only the first and the latest reading matter: replace the latest.
    if (last && prev && last.offset === offset && prev.offset === offset) last.at = at;
    else s.push({ at, offset });
    if (s.length > this.capacity) s.splice(0, s.length - this.capacity);
  }

  /**
   * Estimated wall time (ms) at which the record at `offset` appeared below the end offset, or
   * null when it has not appeared yet (offset ≥ latest end) or the table is empty.
   */
  arrival(offset: bigint): { at: number; estimate: ArrivalEstimate } | null {
    const s = this.samples;
    const last = s[s.length - 1];
    if (!last || offset >= last.offset) return null;
    const first = s[0]!;
    if (offset < first.offset) {
      // After a restart the rate since it says nothing of the offsets before it: a new leader's high
      // watermark can lag its predecessor's for a moment (seen in a broker rolling restart), and
      // extrapolating from the few readings since put an open transaction's first record 1,946 s in
      // the past, older than its topic: a false EosTransactionNearTimeout. The restart's reading is
      // then the bound (an age never overstated).
      if (this.restarted) return { at: first.at, estimate: 'extrapolated' };
      // Before the oldest reading: extrapolate at the table's average rate; without one, the oldest reading is the bound.
      const span = last.at - first.at;
      const grown = Number(last.offset - first.offset);
      const behind = Number(first.offset - offset);
      const at = span > 0 && grown > 0 ? first.at - (behind * span) / grown : first.at;
      return { at, estimate: 'extrapolated' };
    }
    // First reading whose end passed the offset (binary search: s is sorted by offset).
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (s[mid]!.offset > offset) hi = mid;
      else lo = mid + 1;
    }
    const after = s[lo]!;
    const before = s[lo - 1]!;
    // The records before.offset … after.offset−1 appeared during (before.at, after.at]; record o is
    // the (o − before.offset + 1)-th of them.
    const share = Number(offset - before.offset + 1n) / Number(after.offset - before.offset);
    return { at: before.at + share * (after.at - before.at), estimate: 'interpolated' };
  }

  /** Seconds the record at `offset` has been there at time `now`; 0 when it is not there yet. */
  ageSeconds(offset: bigint, now: number): number {
    const a = this.arrival(offset);
    return a ? Math.max(0, (now - a.at) / 1000) : 0;
  }
}
