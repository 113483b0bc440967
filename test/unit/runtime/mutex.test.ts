// Mutex (src/runtime/mutex.ts): runs take turns in call order, one at a time; a run that throws
// rejects only its own caller and the next run still starts; busy is true only while a run is in
// progress.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Mutex } from '../../../src/runtime/mutex.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

const ticks = async (n = 10) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

describe('Mutex', () => {
  test('runs one at a time, in the order run() was called, each after the previous settled', async () => {
    const m = new Mutex();
    const trace: string[] = [];
    const gates = [gate(), gate(), gate()];
    const runs = gates.map((g, i) =>
      m.run(async () => {
        trace.push(`start ${i}`);
        await g.opened;
        trace.push(`end ${i}`);
        return i * 10;
      }),
    );
    await ticks();
    assert.deepEqual(trace, ['start 0'], 'the second waits for the first');
    // Released out of order: the third still waits for the second.
    gates[2]!.open();
    await ticks();
    assert.deepEqual(trace, ['start 0']);
    gates[0]!.open();
    await ticks();
    assert.deepEqual(trace, ['start 0', 'end 0', 'start 1']);
    gates[1]!.open();
    assert.deepEqual(await Promise.all(runs), [0, 10, 20]);
    assert.deepEqual(trace, ['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
  });

  test('a run that throws rejects its caller only; the next run starts after it', async () => {
    const m = new Mutex();
    const trace: string[] = [];
    const failing = m.run(async () => {
      trace.push('fail');
      throw new Error('boom');
    });
    const syncThrow = m.run(() => {
      trace.push('sync');
      throw new Error('sync boom');
    });
    const next = m.run(async () => {
      trace.push('next');
      return 'ok';
    });
    await assert.rejects(failing, /boom/);
    await assert.rejects(syncThrow, /sync boom/);
    assert.equal(await next, 'ok');
    assert.deepEqual(trace, ['fail', 'sync', 'next']);
    assert.equal(m.busy, false);
  });

  test('busy while a run is in progress, and only then', async () => {
    const m = new Mutex();
    assert.equal(m.busy, false);
    const g = gate();
    const first = m.run(() => g.opened);
    await ticks();
    assert.equal(m.busy, true);
    let secondRan = false;
    const second = m.run(async () => {
      secondRan = true;
      assert.equal(m.busy, true, 'busy inside a run');
    });
    g.open();
    await first;
    await second;
    assert.equal(secondRan, true);
    assert.equal(m.busy, false, 'free again once every run settled');
    // A run that fails leaves busy false afterwards.
    await m.run(async () => assert.equal(m.busy, true)).catch(() => undefined);
    await m.run(async () => Promise.reject(new Error('x'))).catch(() => undefined);
    assert.equal(m.busy, false);
  });
});
