// The canary's per-partition sequence bookkeeping on crafted arrivals, without Kafka.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CanaryTracker } from '../../../src/canary/tracker.js';

const RUN = 'canary.a.1';
const at = (seq: number, partition = 0, run = RUN, value = seq + 1) => ({ run, partition, seq, value });

function tracker(lostAfterMs = 1000, valueDelta: number | null = 1) {
  return new CanaryTracker({ ownRun: RUN, lostAfterMs, valueDelta: valueDelta ?? undefined });
}

describe('canary tracker', () => {
  test('in-order arrivals are received and hold nothing in memory', () => {
    const t = tracker();
    for (let i = 0; i < 1000; i++) assert.deepEqual(t.arrive(at(Math.floor(i / 3), i % 3), 0), ['received']);
    assert.equal(t.counts.received, 1000);
    assert.equal(t.held(), 0);
    assert.equal(t.sweep(10_000), 0);
    assert.deepEqual({ ...t.counts, received: 0 }, { received: 0, duplicate: 0, out_of_order: 0, lost: 0, late: 0, wrong_value: 0 });
  });

  test('a second arrival of a sequence is a duplicate, before and after the watermark passed it', () => {
    const t = tracker();
    t.arrive(at(0), 0);
    t.arrive(at(2), 0);
    assert.deepEqual(t.arrive(at(2), 0), ['duplicate'], 'above the watermark');
    assert.deepEqual(t.arrive(at(0), 0), ['duplicate'], 'below the watermark');
    assert.equal(t.counts.duplicate, 2);
  });

  test('a gap is lost only after lostAfter, and only when a later sequence arrived', () => {
    const t = tracker(1000);
    t.arrive(at(0), 0);
    t.arrive(at(1), 0);
    assert.equal(t.sweep(60_000), 0, 'nothing after the last arrival: waiting, not lost');
    t.arrive(at(3), 61_000); // 2 is missing
    assert.equal(t.sweep(61_500), 0, 'within the grace period');
    assert.equal(t.sweep(62_100), 1);
    assert.equal(t.counts.lost, 1);
    assert.equal(t.held(), 0);
  });

  test('a gap closed within the grace period is out of order, not lost', () => {
    const t = tracker(1000);
    t.arrive(at(0), 0);
    t.arrive(at(2), 0);
    assert.deepEqual(t.arrive(at(1), 500), ['received', 'out_of_order']);
    assert.equal(t.sweep(5000), 0);
    assert.equal(t.counts.out_of_order, 1);
  });

  test('a record counted lost that arrives later is late, not a duplicate', () => {
    const t = tracker(1000);
    t.arrive(at(1), 0);
    t.sweep(2000); // seq 0 lost
    assert.equal(t.counts.lost, 1);
    assert.deepEqual(t.arrive(at(0), 3000), ['late']);
    assert.deepEqual(t.arrive(at(0), 3001), ['duplicate'], 'a second late copy is a duplicate');
  });

  test('sequences of a failed send are neither lost when missing nor wrong when present', () => {
    const t = tracker(1000);
    t.arrive(at(0), 0);
    t.sendFailed(0, [1, 2], 0);
    t.arrive(at(3), 10);
    assert.equal(t.sweep(10_000), 0);
    assert.equal(t.counts.lost, 0);
    assert.deepEqual(t.arrive(at(2), 10_001), ['received'], 'the send had landed after all');
    assert.equal(t.counts.duplicate, 0);
  });

  test('losses are counted per partition', () => {
    const t = tracker(100);
    t.arrive(at(0, 0), 0);
    t.arrive(at(5, 0), 0); // 1..4 missing on partition 0
    t.arrive(at(0, 1), 0);
    t.arrive(at(1, 1), 0);
    assert.equal(t.sweep(200), 4);
  });

  test('a wrong value is counted (value must be seq + valueDelta), unchecked without valueDelta', () => {
    const t = tracker(1000, 1);
    assert.deepEqual(t.arrive(at(0, 0, RUN, 0), 0), ['received', 'wrong_value']);
    const u = tracker(1000, null);
    assert.deepEqual(u.arrive(at(0, 0, RUN, 42), 0), ['received']);
  });

  test('a run of an earlier start is tracked from its first arrival: the restart is not a loss', () => {
    const t = tracker(100);
    const old = 'canary.a.0';
    t.arrive(at(500, 0, old), 0);
    t.arrive(at(501, 0, old), 0);
    assert.equal(t.sweep(1000), 0);
    assert.deepEqual(t.arrive(at(501, 0, old), 1000), ['duplicate']);
    // and its own run still starts at 0: seq 0 missing while 1 arrived is a gap
    t.arrive(at(1), 1000);
    assert.equal(t.sweep(1200), 1);
  });

  test('an earlier run is forgotten after a long silence; the own run never is', () => {
    const t = new CanaryTracker({ ownRun: RUN, lostAfterMs: 100, forgetAfterMs: 1000 });
    t.arrive(at(7, 0, 'canary.a.0'), 0);
    assert.equal(t.runsTracked(), 2);
    t.sweep(5000);
    assert.equal(t.runsTracked(), 1);
  });

  test('a closed gap stops its timer: a later short reorder is out of order, not lost and then late', () => {
    const t = tracker(1000);
    t.arrive(at(0), 0);
    t.arrive(at(2), 0); // gap at 1 from t=0
    assert.deepEqual(t.arrive(at(1), 500), ['received', 'out_of_order']);
    // A new gap at 3 opens at t=5000; the closed gap's timer (t=0) must not count it lost at once.
    assert.deepEqual(t.arrive(at(4), 5000), ['received']);
    assert.equal(t.counts.lost, 0);
    assert.deepEqual(t.arrive(at(3), 5100), ['received', 'out_of_order']);
    assert.deepEqual({ lost: t.counts.lost, late: t.counts.late }, { lost: 0, late: 0 });
  });

  test('a gap is lost exactly at lostAfter, not a millisecond later', () => {
    const t = tracker(1000);
    t.arrive(at(0), 0);
    t.arrive(at(2), 1000); // gap at 1 opens at t=1000
    assert.equal(t.sweep(1999), 0);
    assert.equal(t.sweep(2000), 1);
    assert.deepEqual(t.lostIds, [`${RUN}/0/1`]);
  });

  test('the log keeps the latest 100 lost ids, oldest dropped first', () => {
    const t = tracker(10);
    t.arrive(at(101), 0); // 0..100 missing
    assert.equal(t.sweep(10), 101);
    assert.equal(t.lostIds.length, 100);
    assert.equal(t.lostIds[0], `${RUN}/0/1`);
    assert.equal(t.lostIds[99], `${RUN}/0/100`);
  });

  test('held() counts sequences waiting above a gap and failed sends not yet resolved', () => {
    const t = tracker(1000);
    t.arrive(at(0), 0);
    t.sendFailed(0, [1, 2], 0);
    assert.equal(t.held(), 2, 'two unknown sends');
    t.arrive(at(4), 0); // 1, 2 skipped as unknown; 3 is a gap; 4 waits above it
    assert.equal(t.held(), 1);
    t.sendFailed(0, [0], 0); // already received: nothing to hold
    assert.equal(t.held(), 1);
  });

  test('an earlier run is forgotten after 10 minutes without arrivals by default, not sooner', () => {
    const t = new CanaryTracker({ ownRun: RUN, lostAfterMs: 100 });
    t.arrive(at(7, 0, 'canary.a.0'), 0);
    t.sweep(10 * 60_000);
    assert.equal(t.runsTracked(), 2, 'exactly 10 minutes: still tracked');
    t.sweep(10 * 60_000 + 1);
    assert.equal(t.runsTracked(), 1);
  });

  test('an earlier run with one partition still active is kept', () => {
    const t = new CanaryTracker({ ownRun: RUN, lostAfterMs: 100, forgetAfterMs: 1000 });
    t.arrive(at(7, 0, 'canary.a.0'), 0);
    t.arrive(at(3, 1, 'canary.a.0'), 4500);
    t.sweep(5000);
    assert.equal(t.runsTracked(), 2);
    assert.deepEqual(t.arrive(at(7, 0, 'canary.a.0'), 5001), ['duplicate'], 'its history is still there');
  });

  test('the last 10,000 sequences counted lost are remembered for "late"; older ones arrive as duplicates', () => {
    const lose = (n: number) => {
      const t = tracker(10);
      t.arrive(at(n), 0); // 0..n-1 missing
      assert.equal(t.sweep(10), n);
      return t;
    };
    const full = lose(10_000);
    assert.deepEqual(full.arrive(at(0), 20), ['late'], 'exactly 10,000: the oldest is still remembered');
    const over = lose(10_001);
    assert.deepEqual(over.arrive(at(0), 20), ['duplicate'], 'the oldest was forgotten');
    assert.deepEqual(over.arrive(at(1), 20), ['late']);
  });

  test('a failed send with nothing after it is not stepped over: it stays held until a later sequence arrives', () => {
    const t = tracker(1000);
    t.arrive(at(0), 0);
    t.sendFailed(0, [1, 2], 0);
    assert.equal(t.sweep(60_000), 0);
    assert.equal(t.held(), 2);
    t.arrive(at(3), 60_001);
    assert.equal(t.held(), 0);
  });

  test("another run's gap is lost only when a later record of it names the missing sequence in ack", () => {
    const t = tracker(1000);
    const B = 'canary.b.1';
    const ack = (seq: number, a: number) => ({ ...at(seq, 0, B), ack: a });
    // Daemon B (this tracker) sees daemon A's run: 0..4 written; 5..9 failed during an outage
    // (never written); 10 was made after, naming 4 as the last acknowledged.
    for (let i = 0; i <= 4; i++) t.arrive(ack(i, i - 1), 0);
    t.arrive(ack(10, 4), 100);
    t.sweep(100);
    assert.equal(t.sweep(5_000), 0, 'failed sends of another process are not lost');
    assert.equal(t.counts.lost, 0);
    assert.deepEqual(t.arrive(ack(7, 4), 6_000), ['received'], 'one that was written after all is a first arrival');
    // 11 acknowledged but lost on the way: 12 names it.
    t.arrive(ack(12, 11), 7_000);
    t.sweep(7_000);
    assert.equal(t.sweep(8_100), 1);
    assert.equal(t.counts.lost, 1);
    assert.equal(t.held(), 0);
  });

  test('a restart makes the earlier own run foreign: its known failed sends stay unknown, the new run counts from 0', () => {
    const t = tracker(1000);
    t.arrive(at(0), 0);
    t.sendFailed(0, [1, 2], 10);
    t.startRun('canary.a.2');
    t.arrive({ ...at(3), ack: 0 }, 20);
    t.sweep(20);
    assert.equal(t.sweep(5_000), 0);
    assert.deepEqual(t.arrive(at(0, 0, 'canary.a.2'), 5_000), ['received']);
    t.arrive(at(2, 0, 'canary.a.2'), 5_000);
    t.sweep(5_000);
    assert.equal(t.sweep(6_100), 1, 'the own run of the new start counts its gap');
  });
});
