// src/memory.ts: the daemon's one young-generation collection after start-up runs, and leaves no
// `gc` exposed to code that runs later.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { collectYoungGeneration, trimAfterStartup } from '../../src/memory.js';

test('a minor collection on request; the flag that reaches it is unset again', () => {
  assert.equal(collectYoungGeneration(), true);
  assert.equal(runInNewContext('typeof gc'), 'undefined', 'no gc in contexts made afterwards');
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
  assert.equal(collectYoungGeneration(), true, 'and again');
});

test('trimAfterStartup: an unref\'d one-shot timer', () => {
  const t = trimAfterStartup(60_000);
  assert.equal(t.hasRef(), false);
  clearTimeout(t);
});
