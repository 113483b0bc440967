// Throttle (src/pipeline/throttle.ts, faultInjection.maxRecordsPerSecond) on the manual clock:
// batches take turns for slots of the allowed rate; no rate, or an empty batch, never waits.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, settle } from '../../../src/runtime/clock.js';
import { Throttle } from '../../../src/pipeline/throttle.js';

const T0 = 1_000_000;

/** Starts take(n) for each n at once; records when (ms after T0) each resolved. */
function takeAll(clock: ManualClock, throttle: Throttle, counts: number[]) {
  const at: (number | undefined)[] = counts.map(() => undefined);
  const all = Promise.all(counts.map((n, i) => throttle.take(n).then(() => (at[i] = clock.now() - T0))));
  return { at, all };
}

describe('Throttle on the manual clock', () => {
  test('batches take turns: each holds records/rate seconds, the next waits for them', async () => {
    const clock = new ManualClock(T0);
    const throttle = new Throttle(clock, 1000);
    const { at, all } = takeAll(clock, throttle, [500, 500, 1000, 250]);
    await settle();
    assert.deepEqual(at, [0, undefined, undefined, undefined]);
    await clock.advance(499);
    assert.deepEqual(at, [0, undefined, undefined, undefined]);
    await clock.advance(1);
    assert.deepEqual(at, [0, 500, undefined, undefined]);
    await clock.advance(1500);
    await all;
    assert.deepEqual(at, [0, 500, 1000, 2000]);
    assert.equal(clock.timersPending, 0);
  });

  test('after an idle while, the next batch goes at once (the slots are not saved up)', async () => {
    const clock = new ManualClock(T0);
    const throttle = new Throttle(clock, 100);
    await throttle.take(50); // holds 500 ms
    await clock.advance(10_000);
    const { at } = takeAll(clock, throttle, [100, 100]);
    await settle();
    assert.deepEqual(at, [10_000, undefined]);
    await clock.advance(999);
    assert.deepEqual(at, [10_000, undefined]);
    await clock.advance(1);
    assert.deepEqual(at, [10_000, 11_000]);
  });

  test('no rate (0), or a batch without records: never waits, and takes no slot', async () => {
    const clock = new ManualClock(T0);
    const off = new Throttle(clock, 0);
    const a = takeAll(clock, off, [1_000_000, 1_000_000]);
    await a.all;
    assert.deepEqual(a.at, [0, 0]);
    const on = new Throttle(clock, 10);
    const b = takeAll(clock, on, [0, 0, 10, 0]);
    await settle();
    assert.deepEqual(b.at, [0, 0, 0, 0], 'the first batch with records goes at once; empty ones never wait');
    const c = takeAll(clock, on, [1]);
    await settle();
    assert.deepEqual(c.at, [undefined], 'the 10 records hold the next second');
    await clock.advance(1000);
    assert.deepEqual(c.at, [1000]);
    assert.equal(clock.timersPending, 0);
  });
});
