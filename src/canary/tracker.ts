// The canary's bookkeeping, pure: what was sent and what came back, per run and source partition,
// judged by sequence number as Xinfra Monitor does. A record is
// - received: first arrival of a sequence;
// - duplicate: a sequence that already arrived (or was already resolved);
// - out_of_order: arrived after a higher sequence of the same partition;
// - lost: still missing `lostAfterMs` after a higher sequence arrived (a gap that stayed open);
// - late: arrived after it had been counted lost (the loss was not real; the counter cannot go back).
// A sequence whose send failed with an unknown outcome is neither lost when missing nor a problem
// when present. A partition with nothing after the last arrival is waiting, not losing: a stopped
// pipeline is an outage (other alerts), and its records come once it runs again.
// Runs of earlier starts of the same canary (records still in flight across a restart, or another
// daemon's) are tracked from their first arrival on, so a restart is never counted as loss. Their
// failed sends are unknown to this process, so a gap in such a run is judged by evidence carried
// in the records themselves: each canary record names in `ack` the highest lower sequence of its
// partition that is written whenever it is (acknowledged before it was made, or earlier in the
// same produce request). A missing sequence of another run counts as lost only when an arrived
// record names it; one never named (a send that failed with its daemon) is given up as unknown.

export type CanaryResult = 'received' | 'duplicate' | 'out_of_order' | 'lost' | 'late' | 'wrong_value';

export interface Arrival {
  run: string;
  partition: number;
  seq: number;
  value: number;
  /** The record's `ack`: a lower sequence known written with it (-1 or undefined: none). */
  ack?: number;
}

class Sequence {
  /** Every sequence below `next` is resolved: received, lost, or given up (failed send). */
  next: number;
  readonly above = new Set<number>();
  max = -1;
  gapSince: number | undefined;
  readonly unknown = new Set<number>();
  /** Recently counted lost, to tell a late arrival from a duplicate. Bounded. */
  readonly lostRecently: number[] = [];
  /** Failed sends stepped over while missing: if one arrives after all, it is a first arrival. Bounded. */
  readonly skippedUnknown: number[] = [];
  lastArrival: number;
  /** Another run's sequences named by an arrived record's `ack`: known written. */
  readonly acked = new Set<number>();

  constructor(
    readonly key: string,
    start: number,
    now: number,
    /** A run of another process or start: its failed sends are unknown here. */
    public foreign: boolean,
  ) {
    this.next = start;
    this.lastArrival = now;
  }
}

export interface TrackerOptions {
  /** This process's own run: its sequences start at 0 on every partition. */
  ownRun: string;
  lostAfterMs: number;
  /** Expected value = seq + valueDelta; undefined = values not checked. */
  valueDelta?: number;
  /** Runs of earlier starts are forgotten after this long without an arrival. */
  forgetAfterMs?: number;
}

const MEMORY = 10_000;

function remember(list: number[], seq: number): void {
  list.push(seq);
  if (list.length > MEMORY) list.shift();
}

function takeFrom(list: number[], seq: number): boolean {
  const i = list.indexOf(seq);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}

export class CanaryTracker {
  private readonly runs = new Map<string, Map<number, Sequence>>();
  readonly counts: Record<CanaryResult, number> = { received: 0, duplicate: 0, out_of_order: 0, lost: 0, late: 0, wrong_value: 0 };
  /** The latest sequences counted lost ("run/partition/seq"), for the log. Bounded. */
  readonly lostIds: string[] = [];

  constructor(private readonly opts: TrackerOptions) {
    this.runs.set(opts.ownRun, new Map());
  }

  private seqOf(run: string, partition: number, firstSeq: number, now: number): Sequence {
    let parts = this.runs.get(run);
    if (!parts) this.runs.set(run, (parts = new Map()));
    let s = parts.get(partition);
    const own = run === this.opts.ownRun;
    if (!s) parts.set(partition, (s = new Sequence(`${run}/${partition}`, own ? 0 : firstSeq, now, !own)));
    return s;
  }

  /** The canary started again: `run` is its own run from now on, the previous one is judged as another's. */
  startRun(run: string): void {
    for (const s of this.runs.get(this.opts.ownRun)?.values() ?? []) s.foreign = true;
    this.opts.ownRun = run;
    if (!this.runs.has(run)) this.runs.set(run, new Map());
  }

  /** A send of the own run failed with an unknown outcome: those sequences may or may not exist. */
  sendFailed(partition: number, seqs: number[], now: number): void {
    const s = this.seqOf(this.opts.ownRun, partition, 0, now);
    for (const q of seqs) if (q >= s.next) s.unknown.add(q);
  }

  /** Records one arrival at the sink; returns what it counted (several results are possible). */
  arrive(a: Arrival, now: number): CanaryResult[] {
    const s = this.seqOf(a.run, a.partition, a.seq, now);
    s.lastArrival = now;
    if (s.foreign && a.ack !== undefined && a.ack >= s.next) s.acked.add(a.ack);
    const out: CanaryResult[] = [];
    if (a.seq < s.next && takeFrom(s.lostRecently, a.seq)) {
      out.push('late');
    } else if (a.seq < s.next && takeFrom(s.skippedUnknown, a.seq)) {
      out.push('received');
    } else if (a.seq < s.next || s.above.has(a.seq)) {
      out.push('duplicate');
    } else {
      s.above.add(a.seq);
      s.unknown.delete(a.seq);
      out.push('received');
      if (a.seq < s.max) out.push('out_of_order');
      s.max = Math.max(s.max, a.seq);
      if (this.opts.valueDelta !== undefined && a.value !== a.seq + this.opts.valueDelta) out.push('wrong_value');
    }
    this.advance(s, now);
    for (const r of out) this.counts[r]++;
    return out;
  }

  /** Resolves gaps that stayed open too long; returns how many sequences were counted lost now. */
  sweep(now: number): number {
    let lost = 0;
    for (const [run, parts] of this.runs) {
      for (const s of parts.values()) lost += this.advance(s, now);
      const idle = [...parts.values()].every((s) => now - s.lastArrival > (this.opts.forgetAfterMs ?? 10 * 60_000));
      if (run !== this.opts.ownRun && idle) this.runs.delete(run);
    }
    return lost;
  }

  private advance(s: Sequence, now: number): number {
    let lost = 0;
    for (;;) {
      if (s.above.delete(s.next)) {
        s.acked.delete(s.next);
        s.next++;
        s.gapSince = undefined;
        continue;
      }
      if (s.max > s.next && s.unknown.delete(s.next)) {
        remember(s.skippedUnknown, s.next);
        s.next++;
        continue;
      }
      if (s.max > s.next) {
        s.gapSince ??= now;
        if (now - s.gapSince >= this.opts.lostAfterMs) {
          if (s.foreign && !s.acked.delete(s.next)) {
            // No arrived record says it was written: its send may have failed in the other process.
            remember(s.skippedUnknown, s.next);
            s.next++;
            continue;
          }
          remember(s.lostRecently, s.next);
          this.lostIds.push(`${s.key}/${s.next}`);
          if (this.lostIds.length > 100) this.lostIds.shift();
          s.next++;
          lost++;
          continue;
        }
      }
      break;
    }
    this.counts.lost += lost;
    return lost;
  }

  /** Sequences waiting for a lower one (held in memory): grows only with gaps. */
  held(): number {
    let n = 0;
    for (const parts of this.runs.values()) for (const s of parts.values()) n += s.above.size + s.unknown.size + s.acked.size;
    return n;
  }

  runsTracked(): number {
    return this.runs.size;
  }
}
