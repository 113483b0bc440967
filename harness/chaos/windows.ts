// Fault windows of a chaos round: when a fault (a network partition, a link down, slow links)
// started and healed, what the pipeline committed meanwhile, and how long after the heal it
// committed again. Pure: the runner's progress readings and the window times are arguments.

export interface FaultWindow {
  fault: string;
  /** Epoch ms. */
  startedAt: number;
  /** Epoch ms; null while the fault lasts (or when it lasted until the end of the round). */
  healedAt: number | null;
}

export interface FaultWindowResult {
  fault: string;
  /** Seconds from the start of the round. */
  startedSeconds: number;
  healedSeconds: number | null;
  /** Input committed when the fault started, in percent of the round's records. */
  progressAtStart: number;
  /** Input records committed while the fault lasted. */
  committedDuring: number;
  /**
   * From the heal until the pipeline committed more than it had at the heal (0 when it had
   * already committed everything); null when it never did, or the fault never healed.
   */
  recoverySeconds: number | null;
}

export interface ProgressReading {
  t: number;
  committed: bigint;
}

/** The last reading taken at or before t (readings are in time order). */
function committedAt(readings: readonly ProgressReading[], t: number): bigint {
  let c = 0n;
  for (const r of readings) {
    if (r.t > t) break;
    c = r.committed;
  }
  return c;
}

export function windowResults(windows: readonly FaultWindow[], readings: readonly ProgressReading[], roundStart: number, total: bigint): FaultWindowResult[] {
  return windows.map((w) => {
    const atStart = committedAt(readings, w.startedAt);
    const end = w.healedAt ?? readings[readings.length - 1]?.t ?? w.startedAt;
    const atEnd = committedAt(readings, end);
    let recoverySeconds: number | null = null;
    if (w.healedAt !== null) {
      if (total > 0n && atEnd >= total) recoverySeconds = 0;
      else {
        const next = readings.find((r) => r.t > end && r.committed > atEnd);
        if (next) recoverySeconds = (next.t - end) / 1000;
      }
    }
    return {
      fault: w.fault,
      startedSeconds: (w.startedAt - roundStart) / 1000,
      healedSeconds: w.healedAt === null ? null : (w.healedAt - roundStart) / 1000,
      progressAtStart: total > 0n ? Number((atStart * 1000n) / total) / 10 : 0,
      committedDuring: Number(atEnd - atStart),
      recoverySeconds,
    };
  });
}
