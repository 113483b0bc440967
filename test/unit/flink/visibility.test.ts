// The visibility latency of a Flink sink: checkpoint completion until the sink's LSO passes the
// records written before the checkpoint was triggered, from LSO readings taken once a second.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_PENDING_PER_JOB, VisibilityTracker } from '../../../src/flink/visibility.js';

const ends = (...parts: [high: number, lso: number][]) => parts.map(([high, lso], partition) => ({ partition, high: BigInt(high), lso: BigInt(lso) }));

test('a checkpoint whose records wait behind the LSO is observed once the LSO passes them, from the first reading that shows it', () => {
  const v = new VisibilityTracker();
  // Two sink partitions; records 100..119 of partition 0 and 50..59 of partition 1 are in an open transaction.
  v.reading('out', ends([100, 100], [50, 50]), 1000);
  v.reading('out', ends([120, 100], [60, 50]), 2000); // a: the last reading before the trigger at 2500
  v.reading('out', ends([130, 100], [65, 50]), 3000); // b: the last reading before the completion at 3100
  // Checkpoint 7 triggered at 2500, last acknowledgement at 3100: its records are not visible yet.
  assert.deepEqual(v.completed('job-a', ['out'], { id: 7, triggerMs: 2500, lastAckMs: 3100 }), []);
  assert.equal(v.pendingSeconds('job-a', 3600), 0.5);
  // Partition 0 committed by 4000; partition 1 only by 5000 (the markers are written per partition).
  assert.deepEqual(v.reading('out', ends([130, 125], [66, 50]), 4000), []);
  assert.equal(v.pendingSeconds('job-a', 4000), 0.9);
  assert.deepEqual(v.reading('out', ends([140, 130], [70, 66]), 5000), [{ job: 'job-a', id: 7, seconds: 1.9 }]);
  assert.equal(v.pendingSeconds('job-a', 5000), 0, 'nothing waits any more');
  assert.deepEqual(v.reading('out', ends([150, 150], [80, 80]), 6000), [], 'observed once');
});

test('a completion reported late (REST cache, poll interval) is judged on the readings already taken', () => {
  const v = new VisibilityTracker();
  v.reading('out', ends([10, 10]), 0);
  v.reading('out', ends([20, 10]), 1000);
  v.reading('out', ends([25, 10]), 2000);
  v.reading('out', ends([30, 22]), 3000); // LSO 22 ≥ 20: visible at 3000
  v.reading('out', ends([40, 30]), 4000);
  // Triggered 1500, acknowledged 2200, seen by the poller at 5000.
  assert.deepEqual(v.completed('j', ['out'], { id: 3, triggerMs: 1500, lastAckMs: 2200 }), [{ job: 'j', id: 3, seconds: 0.8 }]);
});

test('nothing is observed when the records before the trigger were visible before the checkpoint completed, or the readings cannot tell', () => {
  const v = new VisibilityTracker();
  v.reading('out', ends([20, 10]), 1000);
  v.reading('out', ends([25, 20]), 2000); // LSO 20 ≥ H 20 of the reading before the trigger: already visible
  assert.deepEqual(v.completed('j', ['out'], { id: 4, triggerMs: 1500, lastAckMs: 2500 }), []);
  assert.equal(v.pendingSeconds('j', 3000), 0);
  // Triggered before the first reading: no reading at or before the trigger.
  assert.deepEqual(v.completed('j', ['out'], { id: 3, triggerMs: 500, lastAckMs: 2500 }), []);
  // Another job's topic is not this job's sink.
  v.reading('other', ends([20, 0]), 1000);
  v.reading('other', ends([20, 0]), 2000);
  assert.deepEqual(v.completed('j', ['out'], { id: 5, triggerMs: 1500, lastAckMs: 2500 }), []);
  assert.equal(v.pendingSeconds('j', 10_000), 0);
  // An idle partition (LSO = high watermark) says nothing; the busy one decides.
  const w = new VisibilityTracker();
  w.reading('out', ends([5, 5], [10, 0]), 1000);
  w.completed('j', ['out'], { id: 1, triggerMs: 1200, lastAckMs: 1300 });
  assert.deepEqual(w.reading('out', ends([5, 5], [12, 10]), 2000), [{ job: 'j', id: 1, seconds: 0.7 }]);
});

test('consecutive checkpoints waiting on the same commit are observed each against its own completion', () => {
  const v = new VisibilityTracker();
  v.reading('out', ends([0, 0]), 0);
  v.reading('out', ends([10, 0]), 1000);
  v.completed('j', ['out'], { id: 1, triggerMs: 1100, lastAckMs: 1200 });
  v.reading('out', ends([20, 0]), 2000);
  v.completed('j', ['out'], { id: 2, triggerMs: 2100, lastAckMs: 2300 });
  assert.equal(v.pendingSeconds('j', 3000), 1.8, 'the oldest pending completion decides');
  // A coordinator outage: both commits land together at 9000.
  assert.deepEqual(v.reading('out', ends([30, 20]), 9000), [
    { job: 'j', id: 1, seconds: 7.8 },
    { job: 'j', id: 2, seconds: 6.7 },
  ]);
});

test('an aborted transaction moves the LSO too; a vanished partition is dropped; forget drops a job', () => {
  const v = new VisibilityTracker();
  v.reading('out', ends([0, 0], [0, 0]), 0);
  v.reading('out', ends([10, 0], [10, 0]), 1000);
  v.completed('j', ['out'], { id: 1, triggerMs: 1500, lastAckMs: 1600 });
  // Partition 1 is gone (topic re-created with one partition); partition 0 visible at 3000.
  assert.deepEqual(v.reading('out', ends([12, 11]), 3000), [{ job: 'j', id: 1, seconds: 1.4 }]);
  v.reading('out', ends([20, 11]), 4000);
  v.completed('j', ['out'], { id: 2, triggerMs: 4100, lastAckMs: 4200 });
  assert.ok(v.pendingSeconds('j', 5000) > 0);
  v.forget('j');
  assert.equal(v.pendingSeconds('j', 5000), 0);
  assert.deepEqual(v.reading('out', ends([30, 30]), 6000), []);
});

test('readings older than the window are dropped but the last one before it is kept; pending checkpoints are capped per job', () => {
  const v = new VisibilityTracker(10_000);
  v.reading('out', ends([10, 0]), 0);
  v.reading('out', ends([20, 0]), 5000);
  v.reading('out', ends([30, 0]), 16_000); // cutoff 6000: the reading at 5000 is kept, the one at 0 dropped
  assert.deepEqual(v.completed('j', ['out'], { id: 1, triggerMs: 1000, lastAckMs: 15_000 }), [], 'no reading at or before 1000 any more');
  v.completed('j', ['out'], { id: 2, triggerMs: 5500, lastAckMs: 15_000 });
  assert.deepEqual(v.reading('out', ends([30, 20]), 17_000), [{ job: 'j', id: 2, seconds: 2 }]);

  const c = new VisibilityTracker();
  c.reading('out', ends([10, 0]), 0);
  for (let i = 1; i <= MAX_PENDING_PER_JOB + 5; i++) c.completed('j', ['out'], { id: i, triggerMs: 100, lastAckMs: 100 + i });
  assert.equal(c.reading('out', ends([10, 10]), 5000).length, MAX_PENDING_PER_JOB);
});
