import { test } from 'node:test';
import assert from 'node:assert/strict';
import { captureStream } from '../../harness/capture.js';
import { LivePanel } from '../../../src/status/live.js';
import { demoInstructions } from '../../../harness/demo/kafka.js';

const sink = captureStream;

test('on a terminal the summary is redrawn in place, but never over log lines written since', () => {
  const out = sink();
  const panel = new LivePanel(out.stream, true);
  panel.draw('a\nb\n');
  panel.draw('c\nd\n');
  panel.touched();
  panel.draw('e\nf\n');
  assert.equal(out.text(), 'a\nb\n\x1b[2A\x1b[Jc\nd\ne\nf\n');
});

test('not a terminal: printed at most every interval, without escape codes', () => {
  const out = sink();
  let now = 0;
  const panel = new LivePanel(out.stream, false, 30_000, () => now);
  for (let i = 0; i < 13; i++, now += 5000) panel.draw(`s${i}`);
  assert.equal(out.text(), 's0\ns6\ns12\n');
});

test('the demo says how to break it, with the cluster directory of this demo', () => {
  const text = demoInstructions({ dir: '.eoswatch/demo', nodes: 3, url: 'http://127.0.0.1:7395' });
  assert.match(text, /npm run kafka -- kill 2 --dir \.eoswatch\/demo\s+SIGKILL broker 2/);
  assert.match(text, /npx eoswatch status --url http:\/\/127\.0\.0\.1:7395/);
  assert.match(demoInstructions({ dir: 'd', nodes: 1, url: 'u' }), /kill 1 --dir d\s+SIGKILL broker 1: the only broker/);
});
