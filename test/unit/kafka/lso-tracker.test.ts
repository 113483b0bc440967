// How long a partition's last stable offset has stood still with records behind it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LsoTracker } from '../../../src/kafka/lso-tracker.js';

const ends = (high: number, lso: number, partition = 0) => [{ partition, high: BigInt(high), lso: BigInt(lso) }];

test('an LSO that keeps up is never stuck', () => {
  const t = new LsoTracker(10_000);
  assert.deepEqual(t.update('t', ends(10, 10), 0), [{ topic: 't', partition: 0, lag: 0, stuckMs: 0, openAgeMs: 0, hanging: false, wasHanging: false }]);
  assert.equal(t.update('t', ends(20, 15), 5000)[0]!.stuckMs, 0, 'moved since the last reading');
  assert.equal(t.update('t', ends(30, 28), 60_000)[0]!.stuckMs, 0);
});

test('an LSO held by an open transaction counts up, turns hanging after the threshold, and clears when it moves', () => {
  const t = new LsoTracker(10_000);
  t.update('t', ends(100, 100), 0);
  assert.equal(t.update('t', ends(120, 100), 1000)[0]!.stuckMs, 0, 'first reading with a backlog starts the clock');
  const s = t.update('t', ends(150, 100), 9000)[0]!;
  assert.deepEqual([s.lag, s.stuckMs, s.hanging], [50, 8000, false]);
  const h = t.update('t', ends(150, 100), 11_000)[0]!;
  assert.deepEqual([h.stuckMs, h.hanging], [10_000, true]);
  const c = t.update('t', ends(152, 152), 12_000)[0]!;
  assert.equal(c.wasHanging, true, 'the previous reading was hanging');
  assert.deepEqual([c.lag, c.stuckMs, c.hanging], [0, 0, false]);
});

test('partitions are independent and forgotten when they vanish', () => {
  const t = new LsoTracker(1000);
  t.update('t', [...ends(10, 5, 0), ...ends(10, 10, 1)], 0);
  const r = t.update('t', [...ends(10, 5, 0), ...ends(12, 12, 1)], 2000);
  assert.deepEqual(r.map((x) => x.hanging), [true, false]);
  t.update('t', ends(12, 12, 1), 3000);
  assert.equal(t.update('t', [...ends(10, 5, 0), ...ends(12, 12, 1)], 4000)[0]!.wasHanging, false, 'partition 0 was forgotten while it was gone');
});

test('the age of the oldest record held behind the LSO comes from when the high watermark passed it', () => {
  const t = new LsoTracker(60_000);
  t.update('t', ends(100, 100), 0);
  // A transaction opened between 0 and 5 s: its first record is offset 100; the HW passed it in that window.
  const a = t.update('t', ends(110, 100), 5000)[0]!;
  assert.ok(a.openAgeMs >= 0 && a.openAgeMs <= 5000, `age ${a.openAgeMs}`);
  const b = t.update('t', ends(140, 100), 35_000)[0]!;
  assert.equal(b.openAgeMs - a.openAgeMs, 30_000, 'grows with the wall clock while the LSO stands');
  assert.ok(b.openAgeMs >= 30_000 && b.openAgeMs <= 35_000);
  assert.equal(t.update('t', ends(140, 140), 36_000)[0]!.openAgeMs, 0, 'committed: nothing held back');
});

test('a reading of one topic never forgets another; forget(topic) drops only that topic', () => {
  const t = new LsoTracker(1000);
  t.update('a', ends(10, 5), 0);
  t.update('b', ends(10, 5), 0);
  t.update('a', ends(10, 5), 500);
  assert.equal(t.update('b', ends(10, 5), 2000)[0]!.stuckMs, 2000, 'b kept its clock across a reading of a');
  t.forget('a');
  assert.equal(t.update('a', ends(10, 5), 3000)[0]!.stuckMs, 0, 'a starts over');
  assert.equal(t.update('b', ends(10, 5), 3000)[0]!.stuckMs, 3000, 'b untouched by forget(a)');
});

test('nothing held back is never stuck or hanging, whatever the threshold or the history', () => {
  const zero = new LsoTracker(0);
  assert.deepEqual(zero.update('t', ends(10, 10), 0)[0], { topic: 't', partition: 0, lag: 0, stuckMs: 0, hanging: false, wasHanging: false, openAgeMs: 0 });
  assert.equal(zero.update('t', ends(12, 10), 1)[0]!.hanging, true, 'threshold 0: any held record hangs at once');
  // A reading below the LSO (another broker's view, a truncated log) is no lag, not a negative one.
  assert.deepEqual(zero.update('t', ends(5, 10), 2)[0], { topic: 't', partition: 0, lag: 0, stuckMs: 0, hanging: false, wasHanging: true, openAgeMs: 0 });
  const t = new LsoTracker(10_000);
  t.update('t', ends(150, 100), 0);
  // The high watermark back at the same LSO with no lag: not stuck, even long after the clock started.
  const r = t.update('t', ends(100, 100), 20_000)[0]!;
  assert.deepEqual([r.lag, r.stuckMs, r.hanging], [0, 0, false]);
});
