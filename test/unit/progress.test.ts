import { test } from 'node:test';
import assert from 'node:assert/strict';
import { captureStream } from '../harness/capture.js';
import { countProgress, groupDigits, ProgressLine } from '../../src/progress.js';

const sink = captureStream;

test('not a terminal: plain lines, at most one per interval, and the last state at the end (no carriage returns)', () => {
  const out = sink();
  let now = 0;
  const p = new ProgressLine({ stream: out.stream, isTTY: false, everyMs: 10_000, now: () => now });
  for (let i = 1; i <= 300; i++) {
    now += 100;
    p.update(`step ${i}`);
  }
  p.log('a log line');
  p.done();
  const text = out.text();
  // eslint-disable-next-line no-control-regex -- ESC (\x1b) is what the assertion looks for: no ANSI escape is written
  assert.doesNotMatch(text, /\r|\x1b/);
  assert.deepEqual(text.trim().split('\n'), ['step 1', 'step 101', 'step 201', 'a log line', 'step 300']);
});

test('a terminal: one line rewritten in place, cleared before a log line, left as a plain line at the end', () => {
  const out = sink();
  let now = 0;
  const p = new ProgressLine({ stream: out.stream, isTTY: true, now: () => now });
  p.update('10%');
  now += 50;
  p.update('15%'); // within 100 ms: not drawn
  now += 100;
  p.update('20%');
  p.log('round 2');
  now += 200;
  p.update('30%');
  p.done('done');
  assert.equal(out.text(), '\r\x1b[K10%\r\x1b[K20%\r\x1b[Kround 2\n\r\x1b[K30%\r\x1b[Kdone\n');
});

test('count progress: rate and ETA', () => {
  assert.equal(countProgress('writing t', 2500, 10000, 2000), 'writing t: 2,500/10,000 (25%), 1,250/s, 2s elapsed, ETA 6s');
  assert.equal(countProgress('writing t', 10000, 10000, 125_000), 'writing t: 10,000/10,000 (100%), 80/s, 2m05s elapsed');
});

test('digit groups: the same as toLocaleString en-US for integers of every length and sign, other numbers through it', () => {
  const cases = [0, 7, 12, 999, 1000, 1001, 12_345, 100_000, 999_999, 1_000_000, 1_234_567_890, Number.MAX_SAFE_INTEGER, -1, -999, -1000, -1_234_567];
  for (let d = 1, n = 1; d <= 16; d++, n = n * 10 + (d % 10)) cases.push(n, -n);
  for (const n of cases) assert.equal(groupDigits(n), n.toLocaleString('en-US'), String(n));
  for (const n of [1.5, 2 ** 60, NaN, Infinity]) assert.equal(groupDigits(n), n.toLocaleString('en-US'));
});

test('a state given as a function is formatted only when its line is written, the last one at done()', () => {
  const out = sink();
  let now = 0;
  const p = new ProgressLine({ stream: out.stream, isTTY: false, everyMs: 10_000, now: () => now });
  const made: number[] = [];
  for (let i = 1; i <= 250; i++) {
    now += 100;
    p.update(() => {
      made.push(i);
      return `step ${i}`;
    });
  }
  p.done();
  assert.deepEqual(made, [1, 101, 201, 250]);
  assert.deepEqual(out.text().trim().split('\n'), ['step 1', 'step 101', 'step 201', 'step 250']);
});
