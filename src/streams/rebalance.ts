// Rebalances of a Kafka Streams application's consumer group, from the group's state and members
// as successive DescribeGroups readings show them. Pure: no I/O, no clock of its own (each
// reading carries its time).
//
// A rebalance starts at the first reading that finds the group in PreparingRebalance or
// CompletingRebalance and completes at the first later reading that finds it Stable; its duration
// is the time between those two readings, so it is off by at most one interval either way. A
// rebalance that begins and ends between two readings is seen only as a change of the members
// between two Stable readings: it is counted, with no duration. A rebalance after which the group
// is Empty or Dead (every member left) did not complete: it is not counted.

export const REBALANCING_STATES = ['PreparingRebalance', 'CompletingRebalance'] as const;

export interface GroupReading {
  /** The group state DescribeGroups reported (Stable, PreparingRebalance, CompletingRebalance, Empty, Dead, …). */
  state: string;
  /** Member ids. */
  members: readonly string[];
  /** When the reading was taken (ms). */
  atMs: number;
}

export type RebalanceEvent =
  /** Seen in progress and seen to complete. */
  | { kind: 'completed'; startedAtMs: number; endedAtMs: number; durationMs: number }
  /** Not seen in progress: the members changed between two Stable readings. */
  | { kind: 'unobserved'; endedAtMs: number; joined: number; left: number };

export interface TrackerView {
  /** The group's state as last read. */
  state: string;
  members: number;
  /** When the rebalance in progress was first seen; null when none is. */
  rebalancingSinceMs: number | null;
  /** Stable with at least one member: every partition has an owner processing it. */
  up: boolean;
}

export function isRebalancing(state: string): boolean {
  return (REBALANCING_STATES as readonly string[]).includes(state);
}

export class RebalanceTracker {
  private last: GroupReading | undefined;
  private since: number | null = null;

  /** One reading: the rebalances it completes (at most one) and the group as it is now. */
  observe(r: GroupReading): { events: RebalanceEvent[]; view: TrackerView } {
    const events: RebalanceEvent[] = [];
    const prev = this.last;
    if (isRebalancing(r.state)) {
      if (this.since === null) this.since = r.atMs;
    } else if (r.state === 'Stable') {
      if (this.since !== null) {
        events.push({ kind: 'completed', startedAtMs: this.since, endedAtMs: r.atMs, durationMs: r.atMs - this.since });
      } else if (prev !== undefined && (prev.state === 'Stable' || prev.state === 'Empty')) {
        const before = new Set(prev.members);
        const now = new Set(r.members);
        const joined = r.members.filter((m) => !before.has(m)).length;
        const left = prev.members.filter((m) => !now.has(m)).length;
        if (joined > 0 || left > 0) events.push({ kind: 'unobserved', endedAtMs: r.atMs, joined, left });
      }
      this.since = null;
    } else {
      // Empty, Dead, Unknown: no rebalance is in progress, and the one that was did not complete.
      this.since = null;
    }
    this.last = { state: r.state, members: [...r.members], atMs: r.atMs };
    return { events, view: this.view() };
  }

  view(): TrackerView {
    const state = this.last?.state ?? 'Unknown';
    const members = this.last?.members.length ?? 0;
    return { state, members, rebalancingSinceMs: this.since, up: state === 'Stable' && members > 0 };
  }
}
