// The streaming exactly-once checker: fed the sink's records one by one (read_committed), it
// counts duplicates, losses, unexpected and wrong-valued records and order violations per source
// partition, and end-to-end latency. Memory grows with the number of partitions and with the gaps
// and out-of-order arrivals, never with the number of records: each partition keeps a contiguous
// prefix of sequences and a sorted set of the sequences seen beyond it.
import { parseVerifyRecord } from './record.js';

// ---------------------------------------------------------------- fast path for sink values
//
// The checker reads every value of the sink (a million or more), and JSON.parse of the whole value
// (after decoding it to a string) was its largest cost. A value of this checker's run laid out
// exactly as JSON.stringify writes a verification record,
//   {"id":"<ascii>","ts":<int>,"value":<int>,"run":"<run>","p":<int>,"seq":<int>}
// (what `verify produce` writes, and what the built-in transforms write back), is read here
// straight from the bytes, without building a string or an object. Anything else (other layouts,
// whitespace, escapes, non-ASCII bytes, fractions or exponents, other runs, invalid JSON, strings
// instead of Buffers) goes through parseVerifyRecord as before. For every value this template
// accepts, JSON.parse would build an object with exactly these six members and these values, so
// each value is judged the same either way.

/** Integers of up to 15 digits: exact in a double, and what JSON.parse gives for the same digits. */
const MAX_DIGITS = 15;

/** The run's fixed bytes between the numbers, or undefined when the run id cannot be matched byte for byte. */
function templateFor(run: string): Uint8Array[] | undefined {
  // Printable ASCII without '"' and '\\': JSON.stringify writes such a string unchanged.
  if (!/^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/.test(run)) return undefined;
  return ['","ts":', ',"value":', `,"run":"${run}","p":`, ',"seq":'].map((x) => Buffer.from(x, 'latin1'));
}

const ID_PREFIX = Buffer.from('{"id":"', 'latin1');

/** Template fields of the last scanned value. */
interface Scanned {
  ts: number;
  value: number;
  p: number;
  seq: number;
}

function matchAt(b: Buffer, i: number, lit: Uint8Array): number {
  const n = lit.length;
  if (i + n > b.length) return -1;
  for (let k = 0; k < n; k++) if (b[i + k] !== lit[k]) return -1;
  return i + n;
}

/**
 * Reads b as a record of the run whose template is t; false: not in that layout (fall back). Each
 * of the four numbers is a JSON integer (-?(0|[1-9][0-9]*), at most MAX_DIGITS digits) after its
 * literal and before the next literal's first byte (',' or, after the last one, the closing '}').
 * The numbers are read in one loop here, not by a function per number: 18 % less CPU for the
 * scan of 1,000,000 values (bench/RESULTS.md, checker notes).
 */
function scanTemplate(b: Buffer, t: Uint8Array[], s: Scanned): boolean {
  let i = matchAt(b, 0, ID_PREFIX);
  if (i < 0) return false;
  // The id: printable ASCII without escapes (its value is not used, only that it is a string).
  const len = b.length;
  for (;;) {
    if (i >= len) return false;
    const c = b[i]!;
    if (c === 0x22) break;
    if (c < 0x20 || c >= 0x80 || c === 0x5c) return false;
    i++;
  }
  for (let f = 0; f < 4; f++) {
    i = matchAt(b, i, t[f]!);
    if (i < 0) return false;
    let neg = false;
    if (i < len && b[i] === 0x2d) {
      neg = true;
      i++;
    }
    const start = i;
    let n = 0;
    while (i < len) {
      const c = b[i]!;
      if (c < 0x30 || c > 0x39) break;
      n = n * 10 + (c - 0x30);
      i++;
    }
    const digits = i - start;
    if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && b[start] === 0x30)) return false;
    if (neg) n = -n;
    if (f === 0) s.ts = n;
    else if (f === 1) s.value = n;
    else if (f === 2) s.p = n;
    else s.seq = n;
  }
  return i === len - 1 && b[i] === 0x7d;
}

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

/**
 * Whole-millisecond latencies below this are counted in an array by their value and put in their
 * buckets when a quantile is asked: a logarithm and a map update per record were a tenth of the
 * checker's CPU (bench/RESULTS.md, the checker's profile).
 */
const EXACT_MS = 1 << 16;

/** Log-spaced latency histogram (1 ms .. ~1 h, 5 % resolution): fixed memory for any N. */
class LatencyHistogram {
  private static readonly BASE = 1.05;
  private readonly counts = new Map<number, number>();
  /** Counts of the whole-millisecond latencies below EXACT_MS not yet in `counts`, by value (allocated on first use). */
  private exact: Float64Array | undefined;
  private n = 0;
  private maxMs = 0;
  add(ms: number): void {
    const v = Math.max(0, ms);
    this.n++;
    this.maxMs = Math.max(this.maxMs, v);
    if (Number.isInteger(v) && v < EXACT_MS) (this.exact ??= new Float64Array(EXACT_MS))[v]!++;
    else this.count(LatencyHistogram.bucket(v), 1);
  }
  private static bucket(v: number): number {
    return v < 1 ? 0 : Math.ceil(Math.log(v) / Math.log(LatencyHistogram.BASE));
  }
  private count(b: number, k: number): void {
    this.counts.set(b, (this.counts.get(b) ?? 0) + k);
  }
  /** Moves the exact counts into their buckets. */
  private fold(): void {
    const e = this.exact;
    if (!e) return;
    this.exact = undefined;
    for (let v = 0; v < EXACT_MS; v++) if (e[v]! > 0) this.count(LatencyHistogram.bucket(v), e[v]!);
  }
  quantile(q: number): number {
    this.fold();
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

  constructor(readonly expected: number) {}

  /** Returns 'duplicate', 'unexpected' (sequence outside the run) or 'ok'. */
  add(seq: number): 'ok' | 'duplicate' | 'unexpected' {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.expected) {
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

  /** The run's template for the fast path (undefined: every value goes through parseVerifyRecord). */
  private readonly template: Uint8Array[] | undefined;
  private readonly scanned: Scanned = { ts: 0, value: 0, p: 0, seq: 0 };

  constructor(private readonly opts: CheckerOptions) {
    this.partitions = opts.expected.map((n) => new PartitionTracker(n));
    this.template = templateFor(opts.run);
  }

  /** One sink record (its value, and the sink record's timestamp in ms for latency). */
  add(value: Buffer | string | null, sinkTimestampMs?: number): void {
    this.total++;
    const t = this.template;
    if (t && value !== null && typeof value !== 'string' && scanTemplate(value, t, this.scanned)) {
      const f = this.scanned;
      this.judge(f.p, f.seq, f.value, f.ts, sinkTimestampMs);
      return;
    }
    const r = parseVerifyRecord(value);
    if (!r) {
      this.unexpected++;
      return;
    }
    if (r.run !== this.opts.run) {
      this.foreign++;
      return;
    }
    this.judge(r.p, r.seq, r.value, r.ts, sinkTimestampMs);
  }

  private judge(p: number, seq: number, value: number, ts: unknown, sinkTimestampMs: number | undefined): void {
    const t = this.partitions[p];
    if (!t) {
      this.unexpected++;
      return;
    }
    const verdict = t.add(seq);
    if (verdict === 'unexpected') {
      this.unexpected++;
      return;
    }
    if (verdict === 'duplicate') return;
    if (value !== seq + this.opts.valueDelta) this.wrongValue++;
    if (sinkTimestampMs !== undefined && Number.isFinite(ts)) this.latency.add(sinkTimestampMs - (ts as number));
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
