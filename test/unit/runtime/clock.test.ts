// The clocks (src/runtime/clock.ts): the system clock's real timers, and the manual clock that
// fires its timers in due order only when a test advances it.
import { test, describe } from 'node:test';
import { getEventListeners } from 'node:events';
import assert from 'node:assert/strict';
import { ManualClock, settle, systemClock } from '../../../src/runtime/clock.js';
import { TimeoutError } from '../../../src/util/timeout.js';

describe('systemClock', () => {
  test('the wall clock, a real timer, a sleep cut short by its signal, and withTimeout for deadlines', async () => {
    const before = Date.now();
    const now = systemClock.now();
    assert.ok(now >= before && now <= Date.now(), `${now} within [${before}, ${Date.now()}]`);
    const t0 = performance.now();
    await systemClock.sleep(30);
    assert.ok(performance.now() - t0 >= 25, 'sleep waited for its timer');
    const kept = new AbortController();
    await systemClock.sleep(5, kept.signal);
    assert.equal(getEventListeners(kept.signal, 'abort').length, 0, 'a sleep that ran out leaves no listener on its signal');
    const ac = new AbortController();
    const t1 = performance.now();
    const cut = systemClock.sleep(10_000, ac.signal);
    assert.equal(getEventListeners(ac.signal, 'abort').length, 1);
    ac.abort();
    await cut;
    assert.ok(performance.now() - t1 < 1000, 'an aborted sleep resolves at once');
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
    const t2 = performance.now();
    await systemClock.sleep(10_000, ac.signal);
    assert.ok(performance.now() - t2 < 1000, 'a sleep on an aborted signal resolves at once');
    assert.equal(await systemClock.within(Promise.resolve(7), 1000, 'answer'), 7);
    await assert.rejects(systemClock.within(new Promise(() => undefined), 10, 'silence'), (e: unknown) => e instanceof TimeoutError && e.message === 'silence did not finish within 10 ms');
  });
});

describe('ManualClock', () => {
  test('time moves only on advance; timers fire at their due time, in order, equal ones in the order set', async () => {
    const clock = new ManualClock(500);
    assert.equal(clock.now(), 500);
    assert.equal(new ManualClock().now(), 1_000_000);
    const fired: string[] = [];
    void clock.sleep(30).then(() => fired.push(`b@${clock.now()}`));
    void clock.sleep(10).then(() => fired.push(`a@${clock.now()}`));
    void clock.sleep(30).then(() => fired.push(`c@${clock.now()}`));
    void clock.sleep(-5).then(() => fired.push(`neg@${clock.now()}`));
    await settle();
    assert.deepEqual(fired, []);
    assert.equal(clock.timersPending, 4);
    await clock.advance(9);
    assert.deepEqual(fired, ['neg@500']);
    assert.equal(clock.now(), 509);
    await clock.advance(1);
    assert.deepEqual(fired, ['neg@500', 'a@510']);
    await clock.advance(100);
    assert.deepEqual(fired, ['neg@500', 'a@510', 'b@530', 'c@530']);
    assert.equal(clock.now(), 610);
    assert.equal(clock.timersPending, 0);
  });

  test('timers due within one advance fire in order of their due time, whatever the order they were set in', async () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    for (const ms of [30, 10, 20, 10]) void clock.sleep(ms).then(() => fired.push(clock.now()));
    await clock.advance(100);
    assert.deepEqual(fired, [10, 10, 20, 30]);
  });

  test('settle lets callbacks already queued for the next turn of the event loop run', async () => {
    let ran = false;
    setImmediate(() => (ran = true));
    await settle();
    assert.equal(ran, true);
  });

  test('a sleep that ran out or was aborted leaves no listener on its signal', async () => {
    const clock = new ManualClock(0);
    const a = new AbortController();
    const slept = clock.sleep(10, a.signal);
    assert.equal(getEventListeners(a.signal, 'abort').length, 1);
    await clock.advance(10);
    await slept;
    assert.equal(getEventListeners(a.signal, 'abort').length, 0);
    const b = new AbortController();
    const cut = clock.sleep(10, b.signal);
    b.abort();
    await cut;
    assert.equal(getEventListeners(b.signal, 'abort').length, 0);
    assert.equal(clock.timersPending, 0);
  });

  test('a timer set by a callback during advance fires within the same advance when due', async () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    void clock.sleep(10).then(async () => {
      fired.push(clock.now());
      await clock.sleep(10);
      fired.push(clock.now());
    });
    await clock.advance(25);
    assert.deepEqual(fired, [10, 20]);
    assert.equal(clock.now(), 25);
  });

  test('an aborted sleep resolves at once and leaves no timer', async () => {
    const clock = new ManualClock(0);
    const ac = new AbortController();
    let done = false;
    void clock.sleep(1000, ac.signal).then(() => (done = true));
    assert.equal(clock.timersPending, 1);
    ac.abort();
    await settle();
    assert.equal(done, true);
    assert.equal(clock.now(), 0);
    assert.equal(clock.timersPending, 0);
    let again = false;
    void clock.sleep(1000, ac.signal).then(() => (again = true));
    await settle();
    assert.equal(again, true);
    assert.equal(clock.timersPending, 0);
  });

  test('within: the answer before the deadline clears its timer; none by then is a TimeoutError naming what', async () => {
    const clock = new ManualClock(0);
    assert.equal(await clock.within(Promise.resolve(3), 100, 'x'), 3);
    assert.equal(clock.timersPending, 0);
    await assert.rejects(clock.within(Promise.reject(new Error('no')), 100, 'x'), /^Error: no$/);
    assert.equal(clock.timersPending, 0);
    const late = clock.within(new Promise(() => undefined), 100, 'the commit').catch((e: unknown) => e);
    await clock.advance(99);
    assert.equal(clock.timersPending, 1);
    await clock.advance(1);
    const err = (await late) as Error;
    assert.ok(err instanceof TimeoutError);
    assert.equal(err.message, 'the commit did not finish within 100 ms');
    const negative = clock.within(new Promise(() => undefined), -5, 'past').catch((e: unknown) => (e as Error).message);
    await clock.advance(0);
    assert.equal(await negative, 'past did not finish within -5 ms');
  });
});
