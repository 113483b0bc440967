import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ExactlyOnceChecker } from '../../../src/verify/checker.js';
import { expectedCounts, makeRecord, parseVerifyRecord, verifyId } from '../../../src/verify/record.js';

const RUN = 'run1';

function out(p: number, seq: number, delta = 1, run = RUN): string {
  const r = makeRecord(run, p, seq, 1000);
  return JSON.stringify({ ...r, value: r.value + delta });
}

function check(expected: number[], values: (string | null)[], delta = 1) {
  const c = new ExactlyOnceChecker({ run: RUN, expected, valueDelta: delta });
  for (const v of values) c.add(v, 1010);
  return c;
}

describe('verification records', () => {
  test('ids derive from run, partition and sequence; counts spread round-robin', () => {
    assert.equal(verifyId('r', 2, 7), 'r-2-7');
    assert.deepEqual(makeRecord('r', 1, 5, 42), { id: 'r-1-5', ts: 42, value: 5, run: 'r', p: 1, seq: 5 });
    assert.deepEqual(expectedCounts(10, 3), [4, 3, 3]);
    assert.deepEqual(expectedCounts(2, 4), [1, 1, 0, 0]);
    assert.equal(parseVerifyRecord('nope'), null);
    assert.equal(parseVerifyRecord(JSON.stringify({ id: 'x', ts: 1, value: 1 })), null, 'a plain seed record lacks run/p/seq');
  });
});

describe('parseVerifyRecord', () => {
  const good = { id: 'r-0-1', ts: 5, value: 1, run: 'r', p: 0, seq: 1 };
  test('a record is read from a string or a Buffer', () => {
    assert.deepEqual(parseVerifyRecord(JSON.stringify(good)), good);
    assert.deepEqual(parseVerifyRecord(Buffer.from(JSON.stringify(good), 'utf8')), good);
  });
  test('null, invalid JSON, JSON null and every member missing or of the wrong type are not records', () => {
    assert.equal(parseVerifyRecord(null), null);
    assert.equal(parseVerifyRecord(Buffer.from('{"id":')), null);
    assert.equal(parseVerifyRecord('null'), null);
    for (const key of ['id', 'run', 'p', 'seq', 'value'] as const) {
      const { [key]: _, ...missing } = good;
      assert.equal(parseVerifyRecord(JSON.stringify(missing)), null, `without ${key}`);
      const wrong = { ...good, [key]: typeof good[key] === 'string' ? 1 : '1' };
      assert.equal(parseVerifyRecord(JSON.stringify(wrong)), null, `${key} of the wrong type`);
    }
  });
  test('makeRecord stamps the current time by default; counts for fewer records than partitions', () => {
    const before = Date.now();
    const r = makeRecord('r', 0, 3);
    assert.ok(r.ts >= before && r.ts <= Date.now());
    assert.deepEqual(expectedCounts(0, 3), [0, 0, 0]);
    assert.deepEqual(expectedCounts(7, 3), [3, 2, 2]);
    assert.deepEqual(expectedCounts(6, 3), [2, 2, 2]);
  });
});

describe('exactly-once checker', () => {
  test('a perfect stream', () => {
    const r = check([3, 2], [out(0, 0), out(1, 0), out(0, 1), out(0, 2), out(1, 1)]).result();
    assert.deepEqual(
      { received: r.received, duplicates: r.duplicates, lost: r.lost, unexpected: r.unexpected, wrongValue: r.wrongValue, orderViolations: r.orderViolations },
      { received: 5, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0 },
    );
    assert.equal(r.latencyMs?.p50, 10);
  });

  test('duplicates are counted once per extra copy, also far behind the contiguous prefix', () => {
    const r = check([4], [out(0, 0), out(0, 1), out(0, 0), out(0, 2), out(0, 3), out(0, 1), out(0, 3)]).result();
    assert.equal(r.duplicates, 3);
    assert.equal(r.received, 4);
    assert.equal(r.lost, 0);
    assert.equal(r.duplicateRate, 3 / 4);
  });

  test('gaps are losses', () => {
    const r = check([5, 2], [out(0, 0), out(0, 2), out(0, 4), out(1, 1)]).result();
    assert.equal(r.lost, 3);
    assert.deepEqual(r.partitions.map((p) => p.lost), [2, 1]);
    assert.equal(r.lossRate, 3 / 7);
  });

  test('reordering within a partition is an order violation, not a loss or duplicate', () => {
    const c = check([5], [out(0, 0), out(0, 3), out(0, 1), out(0, 2), out(0, 4)]);
    assert.equal(c.heldSequences, 0, 'the gap closed: nothing held');
    const r = c.result();
    assert.equal(r.orderViolations, 2);
    assert.equal(r.lost + r.duplicates, 0);
    assert.equal(r.outOfOrderRate, 2 / 5);
  });

  test('wrong values: not input + 1', () => {
    const r = check([2], [out(0, 0, 2), out(0, 1, 0)]).result();
    assert.equal(r.wrongValue, 2);
    const identity = check([2], [out(0, 0, 0), out(0, 1, 0)], 0).result();
    assert.equal(identity.wrongValue, 0);
  });

  test('records of other runs are foreign; garbage and out-of-range sequences are unexpected', () => {
    const r = check([2], [out(0, 0, 1, 'other'), 'garbage', null, out(0, 9), out(5, 0), out(0, 0), out(0, 1)]).result();
    assert.equal(r.foreign, 1);
    assert.equal(r.unexpected, 4);
    assert.equal(r.received, 2);
    assert.equal(r.total, 7);
  });

  test('aborted records that reached a read_uncommitted pass show up as duplicates or unexpected, never as received twice', () => {
    // An aborted attempt wrote seq 0..1, the retry committed them again: a read_uncommitted pass sees both.
    const r = check([2], [out(0, 0), out(0, 1), out(0, 0), out(0, 1)]).result();
    assert.equal(r.received, 2);
    assert.equal(r.duplicates, 2);
  });

  test('empty topic and partitions with no records', () => {
    const empty = check([0, 0], []).result();
    assert.deepEqual([empty.received, empty.lost, empty.duplicates], [0, 0, 0]);
    assert.equal(empty.latencyMs, null);
    assert.equal(empty.outOfOrderRate, 0);
    const none = check([0, 3], [out(1, 0), out(1, 1), out(1, 2)]).result();
    assert.equal(none.lost, 0);
    assert.deepEqual(none.partitions.map((p) => p.received), [0, 3]);
  });

  test('memory stays flat on an in-order stream of 20,000 records', () => {
    const c = new ExactlyOnceChecker({ run: RUN, expected: [10_000, 10_000], valueDelta: 1 });
    let maxHeld = 0;
    for (let s = 0; s < 10_000; s++) {
      c.add(out(0, s), 1005);
      c.add(out(1, s), 1005);
      maxHeld = Math.max(maxHeld, c.heldSequences);
    }
    assert.equal(maxHeld, 0);
    assert.equal(c.result().received, 20_000);
  });

  test('latency percentiles', () => {
    const c = new ExactlyOnceChecker({ run: RUN, expected: [100], valueDelta: 1 });
    for (let s = 0; s < 100; s++) c.add(out(0, s), 1000 + (s + 1) * 10);
    const l = c.result().latencyMs!;
    assert.ok(l.p50 >= 480 && l.p50 <= 530, `p50 ${l.p50}`);
    assert.ok(l.p99 >= 950 && l.p99 <= 1000, `p99 ${l.p99}`);
    assert.equal(l.max, 1000);
  });

  test('a repeat of a sequence held beyond a gap is a duplicate, not a second arrival: 0,2,2,4 of 5', () => {
    const r = check([5], [out(0, 0), out(0, 2), out(0, 2), out(0, 4)]).result();
    assert.deepEqual({ received: r.received, duplicates: r.duplicates, lost: r.lost }, { received: 3, duplicates: 1, lost: 2 });
    assert.deepEqual(r.partitions[0], { partition: 0, expected: 5, received: 3, duplicates: 1, lost: 2, orderViolations: 0 });
  });

  test('a shuffled stream with repeats and holes is judged exactly, and holds only what lies beyond its gaps', () => {
    // Reproducible shuffle of 0..499 with every 7th sequence missing and every 11th sent twice.
    let x = 12345;
    const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const seqs: number[] = [];
    for (let s = 0; s < 500; s++) if (s % 7 !== 3) seqs.push(s, ...(s % 11 === 5 ? [s] : []));
    for (let i = seqs.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [seqs[i], seqs[j]] = [seqs[j]!, seqs[i]!];
    }
    const c = check([500], seqs.map((s) => out(0, s)));
    const missing = Array.from({ length: 500 }, (_, s) => s).filter((s) => s % 7 === 3);
    const repeated = Array.from({ length: 500 }, (_, s) => s).filter((s) => s % 7 !== 3 && s % 11 === 5);
    const r = c.result();
    assert.deepEqual({ received: r.received, duplicates: r.duplicates, lost: r.lost }, { received: 500 - missing.length, duplicates: repeated.length, lost: missing.length });
    assert.equal(c.heldSequences, 500 - missing.length - 3, 'every sequence received above the first hole (3) waits for it');
    assert.equal(r.duplicateRate, repeated.length / 500);
    assert.equal(r.lossRate, missing.length / 500);
  });

  test('sequences outside the run and non-integer ones are unexpected; so is a partition beyond the expected ones', () => {
    const r = check([3], [out(0, -1), out(0, 3), out(0, 1.5), out(1, 0), out(0, 0)]).result();
    assert.equal(r.unexpected, 4);
    assert.equal(r.received, 1);
    assert.equal(r.lost, 2);
  });

  test('order violations count arrivals below the highest sequence seen, per partition', () => {
    const r = check([4, 4], [out(0, 2), out(1, 0), out(0, 0), out(1, 1), out(0, 3), out(0, 1), out(1, 3), out(1, 2)]).result();
    assert.deepEqual(r.partitions.map((p) => p.orderViolations), [2, 1]);
    assert.equal(r.orderViolations, 3);
    assert.equal(r.outOfOrderRate, 3 / 8);
  });

  test('latency: only records with a sink timestamp and a numeric ts count; max and quantiles in ms', () => {
    const c = new ExactlyOnceChecker({ run: RUN, expected: [3], valueDelta: 1 });
    c.add(out(0, 0)); // no sink timestamp
    c.add(JSON.stringify({ ...makeRecord(RUN, 0, 1, 0), ts: 'x', value: 2 }), 5000); // ts not a number
    assert.equal(c.result().latencyMs, null);
    c.add(out(0, 2), 1000 + 250); // written at 1000
    assert.deepEqual(c.result().latencyMs, { p50: 250, p95: 250, p99: 250, max: 250 });
  });

  test('latency quantiles are the upper bounds of 5 % buckets, never above the maximum, in tenths of a ms', () => {
    const c = new ExactlyOnceChecker({ run: RUN, expected: [3], valueDelta: 1 });
    for (const [seq, ms] of [[0, 1000], [1, 100], [2, 10]] as const) c.add(out(0, seq), 1000 + ms); // largest first: buckets are sorted
    const l = c.result().latencyMs!;
    assert.ok(l.p50 >= 100 && l.p50 <= 105, `p50 ${l.p50} is the second of three samples`);
    assert.equal(l.p99, 1000, 'the top bucket is capped at the maximum');
    assert.equal(l.max, 1000);
    for (const v of [l.p50, l.p95, l.p99]) assert.ok(Number.isInteger(Math.round(v * 10)) && Math.abs(v * 10 - Math.round(v * 10)) < 1e-9, `${v} in tenths`);
    const fast = new ExactlyOnceChecker({ run: RUN, expected: [2], valueDelta: 1 });
    fast.add(out(0, 0), 1000.4); // 0.4 ms
    fast.add(out(0, 1), 990); // the sink clock behind the source: no negative latency
    assert.deepEqual(fast.result().latencyMs, { p50: 1, p95: 1, p99: 1, max: 0.4 }, 'under 1 ms reads as the first bucket\'s bound, 1 ms');
  });

  test('rates of an empty run are 0, not NaN; held sequences add up over partitions', () => {
    const r = check([0, 0], [out(0, 0)]).result();
    assert.deepEqual([r.duplicateRate, r.lossRate, r.outOfOrderRate], [0, 0, 0]);
    const c = check([5, 5], [out(0, 2), out(0, 4), out(1, 3)]);
    assert.equal(c.heldSequences, 3);
  });

  test('values in the exact layout of a record are decided by the byte scanner, without JSON.parse', () => {
    const run = 'run-fast path 1';
    const values = [
      { p: 0, seq: 0, ts: 1764493509317, value: 1 },
      { p: 1, seq: 123456789012345, ts: 0, value: -5 },
      { p: 2, seq: 7, ts: -1, value: 9 },
    ].map(({ p, seq, ts, value }) => Buffer.from(JSON.stringify({ id: `${run}-${p}-${seq}`, ts, value, run, p, seq })));
    const parse = JSON.parse;
    let parsed = 0;
    const c = new ExactlyOnceChecker({ run, expected: [1, 1, 8], valueDelta: 1 });
    try {
      JSON.parse = (text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
        parsed++;
        return parse(text, reviver);
      };
      for (const v of values) c.add(v, 2000);
    } finally {
      JSON.parse = parse;
    }
    assert.equal(parsed, 0, 'every value scanned');
    const r = c.result();
    assert.deepEqual({ received: r.received, unexpected: r.unexpected, wrongValue: r.wrongValue }, { received: 2, unexpected: 1, wrongValue: 1 });
  });

  test('bytes before or after the record, or a broken prefix, make a value unexpected, as JSON.parse would', () => {
    const v = JSON.stringify({ id: 'run1-0-0', ts: 1000, value: 1, run: RUN, p: 0, seq: 0 });
    for (const bad of [`${v}x`, `${v}}`, `x${v}`, v.replace('{"id":"', '{"ie":"'), `${v.slice(0, -1)}`, `${v.slice(0, -1)}]`, `${v.slice(0, -1)} `]) {
      const c = new ExactlyOnceChecker({ run: RUN, expected: [1], valueDelta: 1 });
      c.add(Buffer.from(bad), 1010);
      const r = c.result();
      assert.deepEqual([r.received, r.unexpected], [0, 1], bad);
    }
    // Valid JSON in another layout: not scanned, but JSON.parse reads the record.
    const spaced = new ExactlyOnceChecker({ run: RUN, expected: [1], valueDelta: 1 });
    spaced.add(Buffer.from(v.replace('{"id":"', '{"id" :"')), 1010);
    assert.equal(spaced.result().received, 1);
  });

  test('a duplicate is not judged again: its value and latency do not count', () => {
    const r = check([1], [out(0, 0), out(0, 0, 5)]).result();
    assert.deepEqual([r.received, r.duplicates, r.wrongValue], [1, 1, 0]);
  });
});
