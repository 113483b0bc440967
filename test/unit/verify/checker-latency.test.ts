// The checker's latency histogram: whole milliseconds are counted by value and put in their 5 %
// buckets when a quantile is asked; the quantiles must be those of the buckets, written out here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ExactlyOnceChecker } from '../../../src/verify/checker.js';
import { makeRecord } from '../../../src/verify/record.js';

const RUN = 'run1';

/** A record of RUN written at 1000 ms, as an increment sink writes it (value + 1). */
function out(p: number, seq: number): string {
  const r = makeRecord(RUN, p, seq, 1000);
  return JSON.stringify({ ...r, value: r.value + 1 });
}

test('latency: the quantiles of whole milliseconds (counted by value up to 65,535 ms) are those of the 5 % buckets, at that edge and beyond', () => {
  // The histogram as written out: each latency in its bucket ceil(log_1.05(ms)), 0 below 1 ms;
  // a quantile is the bound of the bucket where the count reaches it, capped at the maximum.
  const reference = (latencies: number[]) => {
    const bucket = (v: number) => (v < 1 ? 0 : Math.ceil(Math.log(v) / Math.log(1.05)));
    const sorted = latencies.map((ms) => Math.max(0, ms)).sort((a, b) => a - b);
    const max = sorted[sorted.length - 1]!;
    const q = (f: number) => {
      const b = bucket(sorted[Math.ceil(f * sorted.length) - 1]!);
      return Math.round((b === 0 ? 1 : Math.min(max, 1.05 ** b)) * 10) / 10;
    };
    return { p50: q(0.5), p95: q(0.95), p99: q(0.99), max: Math.round(max * 10) / 10 };
  };
  const measure = (latencies: number[]) => {
    const c = new ExactlyOnceChecker({ run: RUN, expected: [latencies.length], valueDelta: 1 });
    latencies.forEach((ms, seq) => c.add(out(0, seq), 1000 + ms));
    return c.result().latencyMs;
  };
  const cases: [string, number[]][] = [
    // The 99th of 100 is the one at the edge: counted, it gives p99 its bucket, not the maximum's.
    ['65,536 ms, the first beyond the array', [...Array<number>(98).fill(10), 65_536, 200_000]],
    ['65,535 ms, the last in the array', [...Array<number>(98).fill(10), 65_535, 200_000]],
    ['a fraction of a millisecond below the edge', [...Array<number>(98).fill(10), 3000.5, 50_000]],
    ['a fraction below 1 ms and a negative latency', [...Array<number>(60).fill(0.5), ...Array<number>(40).fill(-5)]],
  ];
  // And a spread of whole and fractional latencies over the whole range.
  let x = 4242;
  const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  cases.push(['a spread', Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? rnd() * 200_000 : Math.floor(rnd() ** 3 * 100_000)))]);
  for (const [what, latencies] of cases) assert.deepEqual(measure(latencies), reference(latencies), what);
  // The quantiles asked twice give the same answer (the counts by value are moved into the buckets once).
  const c = new ExactlyOnceChecker({ run: RUN, expected: [4], valueDelta: 1 });
  [5, 10, 20, 40].forEach((ms, seq) => c.add(out(0, seq), 1000 + ms));
  const first = c.result().latencyMs;
  assert.deepEqual(c.result().latencyMs, first);
  assert.ok(first!.p50 >= 10 && first!.p50 <= 10.5, `p50 ${first!.p50}`);
});
