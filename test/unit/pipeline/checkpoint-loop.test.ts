// CheckpointLoop (src/pipeline/checkpoint-loop.ts) on the manual clock, over a fake coordinator:
// a checkpoint starts when the coordinator's next trigger time comes, a failed send starts one at
// once (woken early, or without waiting at all), no trigger time means asking again every 100 ms,
// a checkpoint that throws fails the pipeline, and the loop ends when the pipeline stops running.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, settle } from '../../../src/runtime/clock.js';
import { CheckpointLoop, LOOP_POLL_MS } from '../../../src/pipeline/checkpoint-loop.js';

const T0 = 1_000_000;

/** A loop whose coordinator allows a checkpoint every `interval` ms after the last one started. */
function setup(interval = 1000) {
  const clock = new ManualClock(T0);
  const state = {
    running: true,
    mustAbort: false,
    next: (T0 + interval) as number | null,
    runs: [] as number[],
    failures: [] as string[],
    throwOnce: null as Error | null,
  };
  const loop = new CheckpointLoop({
    clock,
    nextTriggerAt: () => state.next,
    shouldTrigger: (now) => state.next !== null && now >= state.next,
    running: () => state.running,
    mustAbort: () => state.mustAbort,
    checkpoint: async () => {
      state.runs.push(clock.now() - T0);
      state.mustAbort = false;
      state.next = clock.now() + interval;
      const err = state.throwOnce;
      state.throwOnce = null;
      if (err) throw err;
    },
    fail: async (reason) => void state.failures.push(reason),
  });
  return { clock, state, loop };
}

/** Stops the loop and checks it ended and left no timer behind. */
async function end(s: ReturnType<typeof setup>, done: Promise<void>): Promise<void> {
  s.state.running = false;
  s.loop.wake();
  await done;
  assert.equal(s.clock.timersPending, 0, 'no timer left behind');
}

describe('CheckpointLoop on the manual clock', () => {
  test('a checkpoint starts when the coordinator says, not before', async () => {
    const s = setup();
    const done = s.loop.run();
    await s.clock.advance(999);
    assert.deepEqual(s.state.runs, []);
    await s.clock.advance(1);
    assert.deepEqual(s.state.runs, [1000]);
    await s.clock.advance(2500);
    assert.deepEqual(s.state.runs, [1000, 2000, 3000]);
    await end(s, done);
  });

  test('a failed send wakes the loop: the checkpoint starts at once, not at the next trigger time', async () => {
    const s = setup();
    const done = s.loop.run();
    await s.clock.advance(300);
    s.state.mustAbort = true;
    s.loop.wake();
    await settle();
    assert.deepEqual(s.state.runs, [300]);
    // The next one is due 1000 ms after it again.
    await s.clock.advance(999);
    assert.deepEqual(s.state.runs, [300]);
    await s.clock.advance(1);
    assert.deepEqual(s.state.runs, [300, 1300]);
    await end(s, done);
  });

  test('a failed send seen before the wait: no wait at all', async () => {
    const s = setup();
    s.state.mustAbort = true;
    const done = s.loop.run();
    await settle();
    assert.deepEqual(s.state.runs, [0]);
    await end(s, done);
  });

  test('woken with nothing to do: it waits on until the trigger time', async () => {
    const s = setup();
    const done = s.loop.run();
    await s.clock.advance(500);
    s.loop.wake();
    await s.clock.advance(499);
    assert.deepEqual(s.state.runs, []);
    await s.clock.advance(1);
    assert.deepEqual(s.state.runs, [1000]);
    await end(s, done);
  });

  test('no trigger time (a checkpoint pending, or FAILED): asks again every 100 ms', async () => {
    const s = setup();
    s.state.next = null;
    let asked = 0;
    const next = () => (asked++, null);
    const loop = new CheckpointLoop({
      clock: s.clock,
      nextTriggerAt: next,
      shouldTrigger: () => false,
      running: () => s.state.running,
      mustAbort: () => false,
      checkpoint: async () => assert.fail('no checkpoint may start'),
      fail: async () => assert.fail('nothing fails'),
    });
    const done = loop.run();
    await settle();
    assert.equal(asked, 1);
    await s.clock.advance(LOOP_POLL_MS - 1);
    assert.equal(asked, 1);
    await s.clock.advance(1);
    assert.equal(asked, 2);
    await s.clock.advance(LOOP_POLL_MS * 3);
    assert.equal(asked, 5);
    s.state.running = false;
    loop.wake();
    await done;
    assert.equal(s.clock.timersPending, 0);
  });

  test('a checkpoint that throws fails the pipeline with the reason; the loop goes on while it runs', async () => {
    const s = setup();
    s.state.throwOnce = new Error('IllegalTransition: checkpoint 3 is still pending');
    const done = s.loop.run();
    await s.clock.advance(1000);
    assert.deepEqual(s.state.failures, ['checkpoint loop: IllegalTransition: checkpoint 3 is still pending']);
    await s.clock.advance(1000);
    assert.deepEqual(s.state.runs, [1000, 2000]);
    assert.equal(s.state.failures.length, 1);
    await end(s, done);
  });

  test('stops: woken while waiting, it ends without running a checkpoint, even one that is due', async () => {
    const s = setup();
    const done = s.loop.run();
    let ended = false;
    void done.then(() => (ended = true));
    await s.clock.advance(500);
    assert.equal(ended, false);
    s.state.running = false;
    s.state.mustAbort = true;
    s.loop.wake();
    await done;
    assert.deepEqual(s.state.runs, []);
    assert.equal(s.clock.timersPending, 0);
  });
});
