// Periodic (src/runtime/periodic.ts) on the manual clock: when each run starts, that runs never
// overlap, the drift rule, stop() during a run and during the wait, errors, restart.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, settle } from '../../../src/runtime/clock.js';
import { Periodic } from '../../../src/runtime/periodic.js';
import { holds } from '../../harness/wait.js';

interface Gate {
  promise: Promise<void>;
  resolve(): void;
  reject(e: unknown): void;
}
function gate(): Gate {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** A task that records the clock time of each start and end; run i waits for gates[i] when there is one. */
function recorder(clock: ManualClock, gates: Gate[] = []) {
  const starts: number[] = [];
  const ends: number[] = [];
  let active = 0;
  let maxActive = 0;
  const task = async () => {
    const i = starts.length;
    starts.push(clock.now() - 1_000_000);
    active++;
    maxActive = Math.max(maxActive, active);
    try {
      await gates[i]?.promise;
    } finally {
      active--;
      ends.push(clock.now() - 1_000_000);
    }
  };
  return { task, starts, ends, maxActive: () => maxActive };
}

const noError = (err: unknown) => assert.fail(`unexpected error: ${String(err)}`);

describe('Periodic', () => {
  test('the first run at start, then one every interval after the previous start', async () => {
    const clock = new ManualClock();
    const r = recorder(clock);
    const p = new Periodic(r.task, { name: 'x', intervalMs: 1000, clock, onError: noError });
    assert.equal(p.started, false);
    p.start();
    assert.equal(p.started, true);
    assert.deepEqual(r.starts, [0], 'the first run starts within start(), no timer in between');
    await clock.advance(999);
    assert.deepEqual(r.starts, [0]);
    await clock.advance(1);
    assert.deepEqual(r.starts, [0, 1000]);
    await clock.advance(3000);
    assert.deepEqual(r.starts, [0, 1000, 2000, 3000, 4000]);
    assert.equal(p.runCount, 5);
    await p.stop();
    assert.equal(p.started, false);
    assert.equal(clock.timersPending, 0, 'no timer left behind');
  });

  test('firstDelayMs: the first run waits for it, later ones follow the interval', async () => {
    const clock = new ManualClock();
    const r = recorder(clock);
    const p = new Periodic(r.task, { name: 'x', intervalMs: 1000, firstDelayMs: 300, clock, onError: noError });
    p.start();
    await clock.advance(299);
    assert.deepEqual(r.starts, []);
    await clock.advance(1);
    assert.deepEqual(r.starts, [300]);
    await clock.advance(1000);
    assert.deepEqual(r.starts, [300, 1300]);
    await p.stop();
  });

  test('drift: a run shorter than the interval does not delay the next; a longer one is followed at its end, missed ticks not queued, never overlapping', async () => {
    const clock = new ManualClock();
    const gates = [gate(), gate(), gate()];
    const r = recorder(clock, gates);
    const p = new Periodic(r.task, { name: 'x', intervalMs: 1000, clock, onError: noError });
    p.start();
    await clock.advance(400);
    gates[0]!.resolve(); // run 0 took 400 ms
    await clock.advance(600);
    assert.deepEqual(r.starts, [0, 1000], 'interval after the previous start, not after its end');
    await clock.advance(3500); // run 1 takes 3.5 intervals
    assert.deepEqual(r.starts, [0, 1000], 'no run beside the one in flight');
    assert.ok(p.current, 'a run is in flight');
    gates[1]!.resolve();
    await settle();
    assert.deepEqual(r.starts, [0, 1000, 4500], 'the next run at once (no timer), one, not the three missed');
    gates[2]!.resolve();
    await clock.advance(999);
    assert.deepEqual(r.starts, [0, 1000, 4500]);
    await clock.advance(1);
    assert.deepEqual(r.starts, [0, 1000, 4500, 5500]);
    assert.equal(r.maxActive(), 1);
    assert.equal(p.current, undefined, 'the last run ended at once');
    await p.stop();
  });

  test('a run exactly as long as the interval: the next starts at its end', async () => {
    const clock = new ManualClock();
    const gates = [gate()];
    const r = recorder(clock, gates);
    const p = new Periodic(r.task, { name: 'x', intervalMs: 1000, clock, onError: noError });
    p.start();
    await clock.advance(1000);
    gates[0]!.resolve();
    await settle();
    assert.deepEqual(r.starts, [0, 1000]);
    await p.stop();
  });

  test('stop() during a run waits for it to end and no run follows', async () => {
    const clock = new ManualClock();
    const gates = [gate()];
    const r = recorder(clock, gates);
    const p = new Periodic(r.task, { name: 'x', intervalMs: 1000, clock, onError: noError });
    p.start();
    await clock.advance(10);
    let stopped = false;
    const stopping = p.stop().then(() => (stopped = true));
    await clock.advance(500);
    assert.equal(stopped, false, 'stop() waits for the run in flight');
    assert.deepEqual(r.ends, []);
    gates[0]!.resolve();
    await stopping;
    assert.deepEqual(r.ends, [510]);
    await clock.advance(5000);
    assert.deepEqual(r.starts, [0], 'nothing runs after stop()');
    assert.equal(clock.timersPending, 0);
  });

  test('stop() between runs cancels the next one at once; stop() twice and before start are no-ops', async () => {
    const clock = new ManualClock();
    const r = recorder(clock);
    const p = new Periodic(r.task, { name: 'x', intervalMs: 1000, clock, onError: noError });
    await p.stop();
    p.start();
    await clock.advance(500);
    assert.equal(clock.timersPending, 1, 'the wait for the next run');
    await p.stop();
    await p.stop();
    assert.equal(clock.timersPending, 0, 'the wait was cancelled');
    await clock.advance(5000);
    assert.deepEqual(r.starts, [0]);
  });

  test('stop() during the first delay: no run at all', async () => {
    const clock = new ManualClock();
    const r = recorder(clock);
    const p = new Periodic(r.task, { name: 'x', intervalMs: 1000, firstDelayMs: 500, clock, onError: noError });
    p.start();
    await clock.advance(100);
    await p.stop();
    await clock.advance(5000);
    assert.deepEqual(r.starts, []);
    assert.equal(p.runCount, 0);
  });

  test('start() twice is one schedule; start() after stop() begins again, after the last run, never beside it', async () => {
    const clock = new ManualClock();
    const gates = [gate()];
    const r = recorder(clock, gates);
    const p = new Periodic(r.task, { name: 'x', intervalMs: 1000, clock, onError: noError });
    p.start();
    p.start();
    await clock.advance(0);
    assert.deepEqual(r.starts, [0]);
    const stopping = p.stop();
    p.start(); // while run 0 is still in flight
    await clock.advance(200);
    assert.deepEqual(r.starts, [0], 'not beside the run in flight');
    gates[0]!.resolve();
    await stopping;
    await clock.advance(0);
    assert.deepEqual(r.starts, [0, 200], 'the new schedule starts once the old run ended');
    await clock.advance(1000);
    assert.deepEqual(r.starts, [0, 200, 1200]);
    assert.equal(r.maxActive(), 1);
    await p.stop();
  });

  test('a run that rejects or throws is reported, and the schedule goes on; an onError that throws does not end it', async () => {
    const clock = new ManualClock();
    const errors: string[] = [];
    let n = 0;
    const p = new Periodic(
      () => {
        n++;
        if (n === 1) return Promise.reject(new Error('rejected'));
        if (n === 2) throw new Error('thrown');
        if (n === 3) return Promise.reject(new Error('onError throws'));
        return Promise.resolve();
      },
      {
        name: 'x',
        intervalMs: 1000,
        clock,
        onError: (err) => {
          errors.push((err as Error).message);
          if ((err as Error).message === 'onError throws') throw new Error('boom');
        },
      },
    );
    p.start();
    await clock.advance(3000);
    assert.deepEqual(errors, ['rejected', 'thrown', 'onError throws']);
    assert.equal(n, 4);
    await clock.advance(1000);
    assert.equal(n, 5);
    await p.stop();
  });

  test('a sync task works; a bad interval is refused naming the work', async () => {
    const clock = new ManualClock();
    let n = 0;
    const p = new Periodic(() => void n++, { name: 'x', intervalMs: 50, clock, onError: noError });
    p.start();
    await clock.advance(100);
    assert.equal(n, 3);
    await p.stop();
    for (const intervalMs of [0, -1, Number.NaN]) {
      assert.throws(
        () => new Periodic(() => undefined, { name: 'the lag reading', intervalMs, onError: noError }),
        (e: unknown) => e instanceof RangeError && e.message === `the lag reading: interval must be a positive number of ms, got ${intervalMs}`,
      );
    }
  });

  test('on the system clock by default: real timers, stopped cleanly', async () => {
    let n = 0;
    const p = new Periodic(() => void n++, { name: 'x', intervalMs: 20, onError: noError });
    p.start();
    await settle();
    assert.equal(n, 1, 'first run at once');
    await new Promise((r) => setTimeout(r, 70)); // the measured window, not a wait for a condition
    await p.stop();
    const after = n;
    assert.ok(after >= 3 && after <= 5, `${after} runs in 70 ms at 20 ms`);
    await holds('no run after stop()', () => n === after, 50, { intervalMs: 5 });
  });
});
