// What the engine rounds (harness/chaos/flink-runner.ts, harness/chaos/streams-runner.ts) read off
// eoswatch the same way, whatever the engine: the open transaction a killed process leaves holding
// the sink's LSO, and the alerts a live Prometheus fired for the round. Pure.

/** After one process kill: how long the sink's LSO stayed held, and when it moved again (the transaction aborted). */
export interface Lingering {
  fault: string;
  stuckMaxSeconds: number;
  clearedAfterSeconds: number | null;
}

/**
 * The held LSO of each killed process, from the largest eos_partition_lso_stuck_seconds of the
 * sink's partitions at each scrape: it grows while the killed process's transaction lingers, and
 * drops when it is aborted. A window ends where the next kill's begins: a later kill's hold is
 * that kill's.
 */
export class LingeringWindows {
  private readonly windows: { fault: string; at: number; stuckMax: number; prev: number; cleared: number | null }[] = [];

  killed(fault: string, at: number): void {
    this.windows.push({ fault, at, stuckMax: 0, prev: 0, cleared: null });
  }

  /** The sink's largest stuck seconds at `now`. */
  observe(stuck: number, now: number): void {
    for (const [i, w] of this.windows.entries()) {
      const next = this.windows[i + 1];
      if (now < w.at || (next && now >= next.at)) continue;
      w.stuckMax = Math.max(w.stuckMax, stuck);
      if (w.cleared === null && w.stuckMax >= 2 && stuck < w.prev) w.cleared = now - w.at;
      w.prev = stuck;
    }
  }

  get list(): Lingering[] {
    return this.windows.map((w) => ({ fault: w.fault, stuckMaxSeconds: Math.round(w.stuckMax * 10) / 10, clearedAfterSeconds: w.cleared === null ? null : Math.round(w.cleared / 100) / 10 }));
  }
}

/** The open transaction of each killed process must have held the LSO visibly (≥ minHeldSeconds), and been aborted before the round ended. */
export function lingeringSeen(list: Lingering[], kills: number, minHeldSeconds = 3): string[] {
  const out: string[] = [];
  if (list.length !== kills) out.push(`${kills} process kills expected, ${list.length} recorded`);
  for (const l of list) {
    if (l.stuckMaxSeconds < minHeldSeconds) out.push(`after "${l.fault}" the LSO monitor saw the sink's LSO held for at most ${l.stuckMaxSeconds} s (expected the killed process's open transaction to hold it ≥ ${minHeldSeconds} s)`);
    if (l.clearedAfterSeconds === null) out.push(`after "${l.fault}" the held LSO never moved again (the lingering transaction was not aborted)`);
  }
  return out;
}

/**
 * Alerts active now in Prometheus added to those seen so far: firing ones of the round (`mine`) or
 * of no pipeline or application at all (the cluster's), and the round's pending ones that never fired. EosExporterDown is left out:
 * each round's daemon starts and stops under Prometheus.
 */
export function mergeAlerts(
  seen: { fired: readonly string[]; pending: readonly string[] },
  active: { labels: Record<string, string>; state: string }[],
  mine: (labels: Record<string, string>) => boolean,
): { fired: string[]; pending: string[] } {
  const fired = new Set(seen.fired);
  const pending = new Set(seen.pending);
  for (const a of active) {
    const name = a.labels.alertname!;
    if (name === 'EosExporterDown') continue;
    const ours = mine(a.labels);
    if (a.state === 'firing' && (ours || (a.labels.pipeline === undefined && a.labels.application === undefined))) fired.add(name);
    else if (ours) pending.add(name);
  }
  return { fired: [...fired].sort(), pending: [...pending].filter((n) => !fired.has(n)).sort() };
}
