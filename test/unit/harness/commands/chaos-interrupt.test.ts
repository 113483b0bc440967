import { test } from 'node:test';
import assert from 'node:assert/strict';
import { armInterrupt } from '../../../../harness/commands/chaos.js';

/** The listeners armInterrupt added for a signal, as registered (once-wrappers included). */
const added = (signal: NodeJS.Signals, before: readonly unknown[]) => process.rawListeners(signal).filter((l) => !before.includes(l)) as ((...args: unknown[]) => void)[];

test('chaos: a repeated SIGINT or SIGTERM while the cluster goes down finds the handler still there and is ignored', async () => {
  const beforeInt = process.rawListeners('SIGINT');
  const beforeTerm = process.rawListeners('SIGTERM');
  let downs = 0;
  let exits = 0;
  let finishDown!: () => void;
  const disarm = armInterrupt(
    () => {
      downs++;
      return new Promise<void>((r) => (finishDown = r));
    },
    () => void exits++,
  );
  try {
    const [onInt] = added('SIGINT', beforeInt);
    const [onTerm] = added('SIGTERM', beforeTerm);
    assert.ok(onInt && onTerm, 'listening for SIGINT and SIGTERM');
    onInt('SIGINT');
    // Still listening: with no listener left a second signal ends the process without the clean-up.
    assert.deepEqual(added('SIGINT', beforeInt), [onInt], 'SIGINT still has the listener after the first signal');
    assert.deepEqual(added('SIGTERM', beforeTerm), [onTerm]);
    onInt('SIGINT');
    onTerm('SIGTERM');
    assert.equal(downs, 1, 'the cluster is taken down once');
    await new Promise((r) => setImmediate(r));
    assert.equal(exits, 0, 'no exit before the cluster is down');
    finishDown();
    await new Promise((r) => setImmediate(r));
    assert.equal(exits, 1);
  } finally {
    disarm();
  }
  assert.deepEqual(added('SIGINT', beforeInt), [], 'disarmed');
  assert.deepEqual(added('SIGTERM', beforeTerm), []);
});

test('chaos: a clean-up that fails still exits', async () => {
  const before = process.rawListeners('SIGINT');
  let exits = 0;
  const disarm = armInterrupt(() => Promise.reject(new Error('nodes did not exit')), () => void exits++);
  try {
    added('SIGINT', before)[0]!('SIGINT');
    await new Promise((r) => setImmediate(r));
    assert.equal(exits, 1);
  } finally {
    disarm();
  }
});
