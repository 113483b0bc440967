// pollUntil (src/runtime/poll-until.ts) on the manual clock: when the probe is asked, what it
// resolves with, and the timeout's message (what, how long, the last value or error).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/runtime/clock.js';
import { pollUntil, PollTimeoutError } from '../../../src/runtime/poll-until.js';
import { TimeoutError } from '../../../src/util/timeout.js';

/** Runs pollUntil on a manual clock, advancing it by `step` until the wait settles; the probe's ask times. */
async function run<T>(probe: (i: number) => Promise<T> | T, opts: { timeoutMs: number; intervalMs?: number; done?: (v: T) => boolean }, step = 50) {
  const clock = new ManualClock(0);
  const asked: number[] = [];
  let outcome: { ok: true; value: T } | { ok: false; err: unknown } | undefined;
  void pollUntil(
    'the thing',
    () => {
      asked.push(clock.now());
      return probe(asked.length - 1);
    },
    { ...opts, clock },
  ).then(
    (value) => (outcome = { ok: true, value }),
    (err: unknown) => (outcome = { ok: false, err }),
  );
  for (let i = 0; i < 10_000 && !outcome; i++) await clock.advance(step);
  return { outcome: outcome!, asked, clock };
}

function timeout(outcome: unknown): PollTimeoutError {
  const o = outcome as { ok: boolean; err: unknown };
  assert.equal(o.ok, false);
  assert.ok(o.err instanceof PollTimeoutError, String(o.err));
  assert.ok(o.err instanceof TimeoutError, 'a TimeoutError too');
  assert.equal(o.err.name, 'PollTimeoutError');
  return o.err;
}

describe('pollUntil', () => {
  test('resolves with the first answer that is not undefined, null or false; asks every intervalMs', async () => {
    const answers = [undefined, null, false, 0, 7];
    const { outcome, asked, clock } = await run((i) => Promise.resolve(answers[i]), { timeoutMs: 10_000, intervalMs: 100 });
    assert.deepEqual(outcome, { ok: true, value: 0 }, '0 is an answer');
    assert.deepEqual(asked, [0, 100, 200, 300]);
    assert.equal(clock.timersPending, 0, "no probe's time limit left behind");
  });

  test('the probe is asked at once, and the default interval is 250 ms', async () => {
    const { outcome, asked } = await run((i) => (i === 2 ? 'yes' : undefined), { timeoutMs: 10_000 });
    assert.deepEqual(outcome, { ok: true, value: 'yes' });
    assert.deepEqual(asked, [0, 250, 500]);
  });

  test('done() decides, and its value is what resolves', async () => {
    const { outcome, asked } = await run((i) => ({ n: i }), { timeoutMs: 10_000, intervalMs: 100, done: (v) => v.n >= 3 });
    assert.deepEqual(outcome, { ok: true, value: { n: 3 } });
    assert.equal(asked.length, 4);
  });

  test('the timeout names what, the time waited and the last value; the probe is asked once more at the deadline', async () => {
    const { outcome, asked } = await run((i) => ({ partitions: i, lag: 10n }), { timeoutMs: 1000, intervalMs: 300, done: () => false });
    const err = timeout(outcome);
    assert.equal(err.message, 'timed out after 1000 ms waiting for the thing (last value: {"partitions":4,"lag":"10n"})');
    assert.deepEqual(asked, [0, 300, 600, 900, 1000]);
    assert.equal(err.what, 'the thing');
    assert.equal(err.waitedMs, 1000);
    assert.deepEqual(err.last, { kind: 'value', value: { partitions: 4, lag: 10n } });
  });

  test('the last value is the last one seen: false, a string, undefined', async () => {
    assert.equal(timeout((await run(() => false, { timeoutMs: 100 })).outcome).message, 'timed out after 100 ms waiting for the thing (last value: false)');
    assert.equal(timeout((await run(() => '', { timeoutMs: 100, done: (v) => v !== '' })).outcome).message, 'timed out after 100 ms waiting for the thing (last value: "")');
    assert.equal(timeout((await run(() => undefined, { timeoutMs: 100 })).outcome).message, 'timed out after 100 ms waiting for the thing (last value: undefined)');
  });

  test('a probe that throws or rejects is asked again; the last error is named, unless a value came after it', async () => {
    const { outcome, asked } = await run(
      (i) => {
        if (i === 0) throw new Error('connection refused');
        return Promise.reject(new Error(`not ready ${i}`));
      },
      { timeoutMs: 500, intervalMs: 200 },
    );
    assert.equal(timeout(outcome).message, 'timed out after 500 ms waiting for the thing (last error: not ready 3)');
    assert.deepEqual(asked, [0, 200, 400, 500]);
    const later = await run((i) => (i === 0 ? Promise.reject(new Error('early')) : undefined), { timeoutMs: 300, intervalMs: 200 });
    assert.equal(timeout(later.outcome).message, 'timed out after 300 ms waiting for the thing (last value: undefined)');
    const recovers = await run((i) => (i < 2 ? Promise.reject(new Error('x')) : 'up'), { timeoutMs: 5000, intervalMs: 200 });
    assert.deepEqual(recovers.outcome, { ok: true, value: 'up' });
  });

  test('a probe that never answers is not waited for past the deadline', async () => {
    const { outcome, asked } = await run(() => new Promise<never>(() => undefined), { timeoutMs: 1000, intervalMs: 100 });
    assert.equal(timeout(outcome).message, 'timed out after 1000 ms waiting for the thing (the probe never answered)');
    assert.deepEqual(asked, [0], 'asked once: never beside itself');
  });

  test('a slow probe at the deadline is given intervalMs, not cut at 0', async () => {
    const clock = new ManualClock(0);
    let i = 0;
    const p = pollUntil('slow', () => (i++ < 2 ? undefined : clock.sleep(150).then(() => 'late')), { timeoutMs: 400, intervalMs: 200, clock });
    await clock.advance(550);
    assert.equal(await p, 'late', 'asked at 400, answered at 550');
    const clock2 = new ManualClock(0);
    let j = 0;
    const p2 = pollUntil('slower', () => (j++ < 2 ? undefined : clock2.sleep(250).then(() => 'too late')), { timeoutMs: 400, intervalMs: 200, clock: clock2 });
    const settled = p2.catch((e: unknown) => e);
    await clock2.advance(700);
    assert.equal(((await settled) as Error).message, 'timed out after 600 ms waiting for slower (last value: undefined)');
  });

  test('a long value is cut and secrets are redacted in the message', async () => {
    const { outcome } = await run(() => 'x'.repeat(1000), { timeoutMs: 100, done: () => false });
    const m = timeout(outcome).message;
    assert.equal(m, `timed out after 100 ms waiting for the thing (last value: "${'x'.repeat(299)}…)`);
    const fits = await run(() => 'y'.repeat(298), { timeoutMs: 100, done: () => false });
    assert.equal(timeout(fits.outcome).message, `timed out after 100 ms waiting for the thing (last value: "${'y'.repeat(298)}")`, '300 characters are shown whole');
    const secret = await run(() => Promise.reject(new Error('auth failed for password=hunter2')), { timeoutMs: 100 });
    const sm = timeout(secret.outcome).message;
    assert.ok(!sm.includes('hunter2'), sm);
    assert.match(sm, /^timed out after 100 ms waiting for the thing \(last error: auth failed for password=/);
  });

  test('a value JSON cannot show is named as a string', async () => {
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    const { outcome } = await run(() => cyclic, { timeoutMs: 100, done: () => false });
    assert.equal(timeout(outcome).message, 'timed out after 100 ms waiting for the thing (last value: [object Object])');
    const sym = await run(() => Symbol('s'), { timeoutMs: 100, done: () => false });
    assert.equal(timeout(sym.outcome).message, 'timed out after 100 ms waiting for the thing (last value: Symbol(s))');
  });

  test('the time waited is counted from the start of the wait, not from 0', async () => {
    const clock = new ManualClock(5000);
    const p = pollUntil('late', () => undefined, { timeoutMs: 300, intervalMs: 100, clock }).catch((e: unknown) => e as PollTimeoutError);
    await clock.advance(300);
    const err = (await p) as PollTimeoutError;
    assert.equal(err.waitedMs, 300);
    assert.equal(err.message, 'timed out after 300 ms waiting for late (last value: undefined)');
  });

  test('on the system clock by default', async () => {
    let n = 0;
    const t0 = Date.now();
    assert.equal(await pollUntil('three asks', () => (++n === 3 ? n : undefined), { timeoutMs: 5000, intervalMs: 10 }), 3);
    assert.ok(Date.now() - t0 >= 15, 'waited between asks');
    await assert.rejects(pollUntil('nothing', () => undefined, { timeoutMs: 30, intervalMs: 10 }), /^PollTimeoutError: timed out after \d+ ms waiting for nothing \(last value: undefined\)$/);
  });
});
