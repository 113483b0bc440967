import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../src/log.js';
import { logDestination, resolveLogFormat } from '../../src/log-format.js';

test('auto is pretty on a terminal and JSON otherwise (the sidecar case); json and pretty are forced', () => {
  assert.equal(resolveLogFormat('auto', true), 'pretty');
  assert.equal(resolveLogFormat('auto', false), 'json');
  assert.equal(resolveLogFormat('json', true), 'json');
  assert.equal(resolveLogFormat('pretty', false), 'pretty');
  assert.equal(logDestination('auto', { isTTY: false }), undefined, 'JSON: pino writes to stdout itself');
});

test('pretty lines are readable, one per entry, and secrets are still redacted', async () => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d) => (text += d));
  const logger = createLogger('info', logDestination('pretty', { isTTY: false, destination: out }));
  logger.info({ service: 'pipeline', config: { kafka: { sasl: { password: 'hunter2-secret' } } } }, 'eoswatch starting');
  logger.warn({ partition: 3 }, 'no committed offset: bootstrapping');
  logger.debug('not shown at info');
  await new Promise((r) => setImmediate(r));
  const lines = text.trim().split('\n');
  assert.equal(lines.length, 2, text);
  assert.match(lines[0]!, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: eoswatch starting /);
  assert.match(lines[1]!, /^\[[\d:.]+\] WARN: no committed offset: bootstrapping \{"partition":3\}$/);
  assert.doesNotMatch(text, /hunter2-secret/);
  assert.match(text, /\[REDACTED\]/);
  assert.doesNotMatch(text, /^\{"level"/m, 'no JSON lines');
});
