import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withStartFrom } from '../../../src/commands/run.js';
import { validateConfig } from '../../../src/config/load.js';
import { pipelineFacts } from '../../../src/audit/sources/pipeline.js';
import { consumerChecks } from '../../../src/audit/checks/consumer.js';
import { EosError } from '../../../src/errors.js';

const base = validateConfig({ pipeline: { enabled: true, sourceTopic: 'in', sinkTopic: 'out' } }, '(test)');
const autoOffsetReset = consumerChecks.find((c) => c.id === 'consumer.auto-offset-reset')!;
const judge = (config: typeof base) => autoOffsetReset.evaluate({ clients: pipelineFacts(config.pipeline).clients, checkpoints: [] })[0]!;

test('run --start-from bootstraps this run only; the audit judges the configured startFrom', () => {
  const run = withStartFrom(base, 'earliest');
  assert.equal(run.pipeline.startFrom, 'earliest', 'the pipeline of this run starts there');
  assert.equal(run.pipeline.configuredStartFrom, 'none');
  assert.equal(judge(run).passed, true);
  assert.equal(withStartFrom(base, undefined), base);
});

test('a standing startFrom: earliest fails, and the fix names pipeline.startFrom and the one-run flag', () => {
  const r = judge(validateConfig({ pipeline: { enabled: true, sourceTopic: 'in', sinkTopic: 'out', startFrom: 'earliest' } }, '(test)'));
  assert.equal(r.passed, false);
  assert.equal(r.observed, 'pipeline.startFrom: earliest (re-reads the retained log: duplicates)');
  assert.match(r.remediation ?? '', /^Set pipeline\.startFrom: none\. .*eoswatch run --start-from earliest/);
});

test('--start-from takes earliest or latest, and needs an enabled pipeline', () => {
  assert.throws(() => withStartFrom(base, 'none'), (e: Error) => e instanceof EosError && /expected earliest or latest, found "none"/.test(e.message));
  assert.throws(() => withStartFrom(validateConfig({}, '(test)'), 'latest'), /no enabled pipeline/);
});
