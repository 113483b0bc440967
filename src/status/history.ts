// The daemon's recent past, for the status page's charts and the summary's windows: a ring of
// compact points (the counters and gauges the summary needs, one point per sample), fixed in
// size. Pure: the sampler (src/status/sampler.ts) reads the registry's samples and passes the time.
import type { Sample, Samples } from '../metrics/samples.js';

/** One sample of the daemon's own counters (summed over its pipelines) and gauges. */
export interface Point {
  atMs: number;
  /** eos_pipeline_records_total by direction; null when no pipeline exports it (a Flink job). */
  recordsIn: number | null;
  recordsOut: number | null;
  deadLetters: number;
  completed: number;
  /** failed + timeout */
  failed: number;
  fenced: number;
  canaryDuplicates: number;
  canaryLost: number;
  pending: number;
  lsoLag: number;
  /** Cumulative commit-latency bucket counts (seconds), summed over pipelines. */
  commit: { le: number; count: number }[];
}

/** What the page charts at one point: rates over the point's window (up to the rate window). */
export interface ChartPoint {
  at: number;
  inPerSecond: number | null;
  outPerSecond: number | null;
  completedPerMinute: number | null;
  failedPerMinute: number | null;
  commitP50Ms: number | null;
  commitP99Ms: number | null;
  pending: number;
  lsoLag: number;
}

const of = (m: Samples, name: string, labels: Record<string, string> = {}): Sample[] =>
  m.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const sum = (m: Samples, name: string, labels: Record<string, string> = {}): number => of(m, name, labels).reduce((a, s) => a + s.value, 0);

export function pointOf(atMs: number, m: Samples): Point {
  const hasRecords = of(m, 'eos_pipeline_records_total').length > 0;
  const buckets = new Map<number, number>();
  for (const s of of(m, 'eos_kafka_transaction_commit_latency_seconds_bucket')) {
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  return {
    atMs,
    recordsIn: hasRecords ? sum(m, 'eos_pipeline_records_total', { direction: 'in' }) : null,
    recordsOut: hasRecords ? sum(m, 'eos_pipeline_records_total', { direction: 'out' }) : null,
    deadLetters: sum(m, 'eos_pipeline_records_total', { direction: 'dlq' }),
    completed: sum(m, 'eos_checkpoints_total', { outcome: 'completed' }),
    failed: sum(m, 'eos_checkpoints_total', { outcome: 'failed' }) + sum(m, 'eos_checkpoints_total', { outcome: 'timeout' }),
    fenced: sum(m, 'eos_producer_fenced_total'),
    canaryDuplicates: sum(m, 'eos_canary_records_total', { result: 'duplicate' }),
    canaryLost: sum(m, 'eos_canary_records_total', { result: 'lost' }),
    pending: sum(m, 'eos_checkpoints_pending'),
    lsoLag: of(m, 'eos_partition_lso_lag_records').reduce((a, s) => Math.max(a, s.value), 0),
    commit: [...buckets].sort((a, b) => a[0] - b[0]).map(([le, count]) => ({ le, count })),
  };
}

/** The counters of a process that has just started: every one at zero. */
export function zeroPoint(atMs: number): Point {
  return { atMs, recordsIn: 0, recordsOut: 0, deadLetters: 0, completed: 0, failed: 0, fenced: 0, canaryDuplicates: 0, canaryLost: 0, pending: 0, lsoLag: 0, commit: [] };
}

/** A fixed number of the newest items; the oldest is overwritten. */
export class Ring<T> {
  private readonly items: (T | undefined)[];
  private next = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`Ring: capacity must be a positive integer, found ${capacity}`);
    this.items = new Array<T | undefined>(capacity);
  }

  push(item: T): void {
    this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
    this.size = Math.min(this.size + 1, this.capacity);
  }

  get length(): number {
    return this.size;
  }

  /** Oldest first. */
  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.size; i++) out.push(this.items[(this.next - this.size + i + this.capacity) % this.capacity]!);
    return out;
  }

  last(): T | undefined {
    return this.size ? this.items[(this.next - 1 + this.capacity) % this.capacity] : undefined;
  }
}

/**
 * The newest point at least `windowMs` before `atMs`, else the oldest point there is (a shorter
 * window, right after start). `points` oldest first. Undefined when there is no earlier point.
 */
export function baseline(points: readonly Point[], atMs: number, windowMs: number): Point | undefined {
  let oldest: Point | undefined;
  let best: Point | undefined;
  for (const p of points) {
    if (p.atMs >= atMs || p.atMs > atMs - windowMs) {
      oldest ??= p.atMs < atMs ? p : undefined;
      break;
    }
    oldest ??= p;
    best = p;
  }
  return best ?? oldest;
}

/** histogram_quantile over the buckets (cumulative counts by upper bound), linear within a bucket, as Prometheus does. */
export function histogramQuantile(q: number, buckets: { le: number; count: number }[]): number | undefined {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted[sorted.length - 1]?.count ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of sorted) {
    if (b.count >= rank) {
      if (b.le === Infinity) return prevLe;
      return prevLe + ((b.le - prevLe) * (rank - prevCount)) / Math.max(b.count - prevCount, Number.EPSILON);
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}

/** Commit latency quantile (ms) of the commits between two points; undefined when none happened. */
export function commitQuantileMs(q: number, from: Point, to: Point): number | undefined {
  const before = new Map(from.commit.map((b) => [b.le, b.count]));
  const window = to.commit.map((b) => ({ le: b.le, count: Math.max(0, b.count - (before.get(b.le) ?? 0)) }));
  const v = histogramQuantile(q, window);
  return v === undefined ? undefined : v * 1000;
}

/** Growth of a counter between two points (never negative: a reset counts from zero). */
export function increase(from: Point, to: Point, key: 'recordsIn' | 'recordsOut' | 'completed' | 'failed' | 'fenced' | 'canaryDuplicates' | 'canaryLost'): number {
  const a = from[key] ?? 0;
  const b = to[key] ?? 0;
  return b >= a ? b - a : b;
}

/** The chart figures at `to`, over the window since `from` (no earlier point: rates are null). */
export function chartPoint(from: Point | undefined, to: Point): ChartPoint {
  const seconds = from ? (to.atMs - from.atMs) / 1000 : 0;
  const per = (key: 'recordsIn' | 'recordsOut' | 'completed' | 'failed', unit: number) => (from && seconds > 0 && to[key] !== null ? (increase(from, to, key) / seconds) * unit : null);
  return {
    at: to.atMs,
    inPerSecond: per('recordsIn', 1),
    outPerSecond: per('recordsOut', 1),
    completedPerMinute: per('completed', 60),
    failedPerMinute: per('failed', 60),
    commitP50Ms: from ? (commitQuantileMs(0.5, from, to) ?? null) : null,
    commitP99Ms: from ? (commitQuantileMs(0.99, from, to) ?? null) : null,
    pending: to.pending,
    lsoLag: to.lsoLag,
  };
}
