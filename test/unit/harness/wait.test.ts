// The tests' wait (test/harness/wait.ts): what a failed wait says (its context, read
// asynchronously, and the watched process's log tail) and that a process's exit ends it at once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { holds, until, type Watched } from '../../harness/wait.js';

/** A process as the harness sees one: running until `exit` says otherwise, with a log tail. */
function watched(): Watched & { exit(code: number): void } {
  const child = { exitCode: null as number | null, signalCode: null as NodeJS.Signals | null };
  return {
    child,
    tail: (lines = 25) => `last ${lines} lines of the log`,
    exit: (code) => {
      child.exitCode = code;
    },
  };
}

describe('until', () => {
  test('a timeout names what and the last value, then the context (read asynchronously) and the process tail', async () => {
    const p = watched();
    const err = await until('seven', () => 6, 60, { intervalMs: 10, done: (v) => v === 7, context: async () => 'the state waited on', process: p }).catch((e: Error) => e);
    assert.ok(err instanceof Error);
    assert.match(err.message, /^timed out after \d+ ms waiting for seven \(last value: 6\)\nthe state waited on\nlast 40 lines of the log$/);
  });

  test('a context that fails to read does not hide the timeout', async () => {
    const err = await until('seven', () => false, 30, { intervalMs: 10, context: () => Promise.reject(new Error('no coordinator')) }).catch((e: Error) => e);
    assert.match((err as Error).message, /^timed out after \d+ ms waiting for seven \(last value: false\)\n\(the context could not be read: no coordinator\)$/);
  });

  test('the watched process exiting ends the wait at once, with its tail', async () => {
    const p = watched();
    let probes = 0;
    const started = Date.now();
    const waiting = until('ready', () => (++probes === 3 ? (p.exit(2), false) : false), 10_000, { intervalMs: 10, process: p });
    const err = await waiting.catch((e: Error) => e);
    assert.ok(Date.now() - started < 5000, 'not waited out');
    assert.equal((err as Error).message, 'gave up waiting for ready: the process exited (2)\nlast 40 lines of the log');
    assert.equal(probes, 3, 'no probe after the exit');
  });

  test('a running process changes nothing: the first answer that is done', async () => {
    let n = 0;
    assert.equal(await until('three', () => ++n, 5000, { intervalMs: 1, done: (v) => v >= 3, process: watched() }), 3);
  });
});

describe('holds', () => {
  test('the watched process exiting breaks it, naming the exit and the tail', async () => {
    const p = watched();
    let probes = 0;
    const err = await holds('nothing lost', () => (++probes === 2 && p.exit(1), true), 10_000, { intervalMs: 10, process: p }).catch((e: Error) => e);
    assert.match((err as Error).message, /^nothing lost: the process exited \(1\) after \d+ ms of 10000 ms\nlast 40 lines of the log$/);
  });

  test('it holds for the time with the process running', async () => {
    let probes = 0;
    await holds('nothing lost', () => (probes++, true), 60, { intervalMs: 10, process: watched() });
    assert.ok(probes >= 3, `asked ${probes} times`);
  });
});
