// The streaming exactly-once checker: fed the sink's records one by one (read_committed), it
// counts duplicates, losses, unexpected and wrong-valued records and order violations per source
// partition, and end-to-end latency. Memory grows with the number of partitions and with the gaps
// and out-of-order arrivals, never with the number of records: each partition keeps a contiguous
// prefix of sequences and a sorted set of the sequences seen beyond it.
import { parseVerifyRecord } from './record.js';

export interface CheckerOptions {
  run: string;
  /** Expected records per source partition (index = partition). */
  expected: number[];
  /** Output value = input value + delta (1 for `increment`, 0 for `identity`). */
  valueDelta: number;
}

export interface PartitionStats {
  partition: number;
  expected: number;
  received: number;
  duplicates: number;
  lost: number;
  orderViolations: number;
}

export interface CheckResult {
  run: string;
  total: number;
  expected: number;
  received: number;
  duplicates: number;
  lost: number;
  unexpected: number;
  foreign: number;
  wrongValue: number;
  orderViolations: number;
  duplicateRate: number;
  lossRate: number;
  outOfOrderRate: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number } | null;
  partitions: PartitionStats[];
}

/** Log-spaced latency histogram (1 ms .. ~1 h, 5 % resolution): fixed memory for any N. */
class LatencyHistogram {
  private static readonly BASE = 1.05;
  private readonly counts = new Map<number, number>();
  private n = 0;
  private maxMs = 0;
  add(ms: number): void {
    const v = Math.max(0, ms);
    const b = v < 1 ? 0 : Math.ceil(Math.log(v) / Math.log(LatencyHistogram.BASE));
    this.counts.set(b, (this.counts.get(b) ?? 0) + 1);
    this.n++;
    this.maxMs = Math.max(this.maxMs, v);
  }
  quantile(q: number): number {
    const target = Math.ceil(q * this.n);
    let acc = 0;
    for (const b of [...this.counts.keys()].sort((a, c) => a - c)) {
      acc += this.counts.get(b)!;
      if (acc >= target) return b === 0 ? 1 : Math.min(this.maxMs, LatencyHistogram.BASE ** b);
    }
    return this.maxMs;
  }
  summary(): CheckResult['latencyMs'] {
    if (this.n === 0) return null;
    const r = (x: number) => Math.round(x * 10) / 10;
    return { p50: r(this.quantile(0.5)), p95: r(this.quantile(0.95)), p99: r(this.quantile(0.99)), max: r(this.maxMs) };
  }
}

class PartitionTracker {
  /** Every sequence below this was seen (once at least). */
  private prefix = 0;
  /** Sequences seen at or above prefix, sorted, without repeats. */
  private beyond: number[] = [];
  private maxSeen = -1;
  received = 0;
  duplicates = 0;
  orderViolations = 0;
  outOfRange = 0;

  constructor(readonly expected: number) {}

  /** Returns 'duplicate', 'unexpected' (sequence outside the run) or 'ok'. */
  add(seq: number): 'ok' | 'duplicate' | 'unexpected' {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.expected) {
      this.outOfRange++;
      return 'unexpected';
    }
    if (seq < this.prefix || this.has(seq)) {
      this.duplicates++;
      return 'duplicate';
    }
    this.received++;
    if (seq < this.maxSeen) this.orderViolations++;
    this.maxSeen = Math.max(this.maxSeen, seq);
    if (seq === this.prefix) {
      this.prefix++;
      while (this.beyond.length && this.beyond[0] === this.prefix) {
        this.beyond.shift();
        this.prefix++;
      }
    } else {
      this.beyond.splice(this.lowerBound(seq), 0, seq);
    }
    return 'ok';
  }

  private lowerBound(x: number): number {
    let lo = 0;
    let hi = this.beyond.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.beyond[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private has(x: number): boolean {
    const i = this.lowerBound(x);
    return this.beyond[i] === x;
  }

  get lost(): number {
    return this.expected - this.received;
  }

  /** Sequences held beyond the contiguous prefix: the checker's memory for this partition. */
  get pendingGaps(): number {
    return this.beyond.length;
  }
}

export class ExactlyOnceChecker {
  private readonly partitions: PartitionTracker[];
  private readonly latency = new LatencyHistogram();
  private total = 0;
  private unexpected = 0;
  private foreign = 0;
  private wrongValue = 0;

  constructor(private readonly opts: CheckerOptions) {
    this.partitions = opts.expected.map((n) => new PartitionTracker(n));
  }

  /** One sink record (its value, and the sink record's timestamp in ms for latency). */
  add(value: Buffer | string | null, sinkTimestampMs?: number): void {
    this.total++;
    const r = parseVerifyRecord(value);
    if (!r) {
      this.unexpected++;
      return;
    }
    if (r.run !== this.opts.run) {
      this.foreign++;
      return;
    }
    const t = this.partitions[r.p];
    if (!t) {
      this.unexpected++;
      return;
    }
    const verdict = t.add(r.seq);
    if (verdict === 'unexpected') {
      this.unexpected++;
      return;
    }
    if (verdict === 'duplicate') return;
    if (r.value !== r.seq + this.opts.valueDelta) this.wrongValue++;
    if (sinkTimestampMs !== undefined && Number.isFinite(r.ts)) this.latency.add(sinkTimestampMs - r.ts);
  }

  /** Memory held beyond counters: out-of-order sequences waiting for their gaps to close. */
  get heldSequences(): number {
    return this.partitions.reduce((a, p) => a + p.pendingGaps, 0);
  }

  result(): CheckResult {
    const expected = this.opts.expected.reduce((a, b) => a + b, 0);
    const received = this.partitions.reduce((a, p) => a + p.received, 0);
    const duplicates = this.partitions.reduce((a, p) => a + p.duplicates, 0);
    const lost = this.partitions.reduce((a, p) => a + p.lost, 0);
    const orderViolations = this.partitions.reduce((a, p) => a + p.orderViolations, 0);
    return {
      run: this.opts.run,
      total: this.total,
      expected,
      received,
      duplicates,
      lost,
      unexpected: this.unexpected,
      foreign: this.foreign,
      wrongValue: this.wrongValue,
      orderViolations,
      duplicateRate: expected ? duplicates / expected : 0,
      lossRate: expected ? lost / expected : 0,
      outOfOrderRate: received ? orderViolations / received : 0,
      latencyMs: this.latency.summary(),
      partitions: this.partitions.map((p, partition) => ({
        partition,
        expected: p.expected,
        received: p.received,
        duplicates: p.duplicates,
        lost: p.lost,
        orderViolations: p.orderViolations,
      })),
    };
  }
}
