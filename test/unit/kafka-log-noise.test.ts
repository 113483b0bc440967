import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { logLevel } from 'kafkajs';
import { kafkaLogCreator } from '../../src/kafka/client.js';
import { classifyKafkaNoise, SettlingNoise } from '../../src/kafka/log-noise.js';
import { createLogger } from '../../src/log.js';

const CONCURRENT = 'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing';
const LOADING = "The coordinator is loading and hence can't process requests for this group";

function capture(level: 'info' | 'debug' = 'info') {
  const lines: { level: string; msg: string; [k: string]: unknown }[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { lines, logger: createLogger(level, sink) };
}

describe('kafkajs log noise', () => {
  test('classifies by message or error field; other errors are not noise', () => {
    assert.deepEqual(classifyKafkaNoise(`Failed to send messages: ${CONCURRENT}`, undefined), { kind: 'concurrent-transactions' });
    assert.deepEqual(classifyKafkaNoise('Response AddPartitionsToTxn(key: 24, version: 1)', CONCURRENT), { kind: 'concurrent-transactions' });
    assert.deepEqual(classifyKafkaNoise('Response InitProducerId(key: 22, version: 1)', LOADING), { kind: 'settling', what: 'coordinator loading' });
    assert.equal(classifyKafkaNoise('Failed to send messages: Messages are rejected since there are fewer in-sync replicas than required', undefined), undefined);
    assert.equal(classifyKafkaNoise('Response Produce', 'The producer has been fenced'), undefined);
  });

  test('a healthy pipeline logs no error: concurrent-transaction retries are debug, real errors stay error', () => {
    const { lines, logger } = capture('info');
    let now = 0;
    const log = kafkaLogCreator(logger, () => now)!(logLevel.ERROR);
    for (let i = 0; i < 100; i++) {
      now += 300;
      log({ namespace: 'Producer', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: `Failed to send messages: ${CONCURRENT}`, retryCount: 0 } });
      log({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'Response AddPartitionsToTxn(key: 24, version: 1)', error: CONCURRENT } });
    }
    assert.equal(lines.length, 0, 'concurrent-transaction retries are not logged at info or above, however long they go on');
    log({ namespace: 'Producer', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'Failed to send messages: The producer has been fenced' } });
    assert.deepEqual(lines.map((l) => l.level), ['error']);
  });

  test('settling errors: debug while transient, summarised at warn when they persist, never dropped', () => {
    const { lines, logger } = capture('debug');
    let now = 1_000_000;
    const log = kafkaLogCreator(logger, () => now)!(logLevel.ERROR);
    const entry = () => log({ namespace: 'Connection', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: '', logger: 'kafkajs', message: 'Response InitProducerId', error: LOADING } });
    // 20 s of errors: transient, debug only.
    for (let t = 0; t < 20; t++, now += 1000) entry();
    assert.equal(lines.filter((l) => l.level !== 'debug').length, 0);
    assert.equal(lines.length, 20, 'each one is still logged at debug');
    // Persisting past 30 s: one warn summary, then at most one a minute.
    for (let t = 0; t < 100; t++, now += 1000) entry();
    const warns = lines.filter((l) => l.level === 'warn');
    assert.equal(warns.length, 2, `one summary at 30 s, one at 90 s (got ${warns.length})`);
    assert.match(warns[0]!.msg, /not settled for 30 s: 31 retriable/);
    assert.deepEqual(warns[0]!.errors, { 'coordinator loading': 31 });
    assert.deepEqual(warns[1]!.errors, { 'coordinator loading': 60 });
  });

  test('a gap longer than the summary interval starts a new streak', () => {
    const s = new SettlingNoise(30_000, 60_000);
    assert.equal(s.record('x', 0), undefined);
    assert.equal(s.record('x', 29_000), undefined);
    assert.equal(s.record('x', 29_000 + 61_000), undefined, 'new streak after a quiet minute');
    assert.ok(s.record('x', 29_000 + 61_000 + 30_000));
  });
});
