// The rules between configuration keys (src/config/rules.ts) on typed configurations: each rule
// names the key it is about, and a configuration that keeps every rule has no problem.
// (test/unit/config/load.test.ts holds the same rules to their file positions in a loaded file.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfig } from '../../../src/config/load.js';
import { crossFieldProblems } from '../../../src/config/rules.js';
import type { Config } from '../../../src/config/types.js';

const base = (): Config => validateConfig({ kafka: { brokers: ['localhost:9092'] } }, 'test.yaml', {});
const paths = (c: Config) => crossFieldProblems(c).map((p) => p.path.join('/'));

test('the defaults keep every rule', () => {
  assert.deepEqual(crossFieldProblems(base()), []);
});

test('pipeline: checkpoint timeout below the transaction timeout, heartbeat at most a third of the session, two topics', () => {
  const c = base();
  c.pipeline.enabled = true;
  c.pipeline.transactionTimeout = 10_000;
  c.pipeline.checkpoint.timeout = 10_000;
  c.pipeline.sessionTimeout = 9_000;
  c.pipeline.heartbeatInterval = 3_001;
  c.pipeline.sourceTopic = 'orders';
  c.pipeline.sinkTopic = 'orders';
  assert.deepEqual(paths(c), ['pipeline/checkpoint/timeout', 'pipeline/heartbeatInterval', 'pipeline/sinkTopic']);
  c.pipeline.checkpoint.timeout = 9_999;
  c.pipeline.heartbeatInterval = 3_000;
  c.pipeline.sinkTopic = 'orders-out';
  assert.deepEqual(paths(c), [], 'at the edges the rules hold');
  c.pipeline.enabled = false;
  c.pipeline.sinkTopic = 'orders';
  c.canary.enabled = false;
  assert.deepEqual(paths(c), [], 'a disabled pipeline is not judged');
});

test('canary without the pipeline needs its own topics', () => {
  const c = base();
  c.pipeline.enabled = false;
  c.canary.enabled = true;
  c.canary.sourceTopic = '';
  c.canary.sinkTopic = 'canary-out';
  assert.deepEqual(paths(c), ['canary/sourceTopic']);
});

test('lag selectors compile; Flink sinks need the LSO monitor; Streams needs applications, each once; the audit a cron', () => {
  const c = base();
  c.lag.groups = ['orders', '/orders-[/'];
  c.flink.enabled = true;
  c.flink.sinks = [{ job: 'j', topics: ['t'] }];
  c.lsoMonitor.enabled = false;
  c.streams.enabled = true;
  c.streams.discover = false;
  c.streams.applications = [];
  c.audit.enabled = true;
  c.audit.schedule = 'every minute';
  assert.deepEqual(paths(c), ['lag/groups/1', 'flink/sinks', 'streams/applications', 'audit/schedule']);
  const twice = { ...c.streams, applications: [{ applicationId: 'a' }, { applicationId: 'b' }, { applicationId: 'a' }] } as Config['streams'];
  const d = { ...base(), streams: twice };
  const problems = crossFieldProblems(d);
  assert.deepEqual(problems.map((p) => p.path.join('/')), ['streams/applications/2/applicationId']);
  assert.match(problems[0]!.text, /also at \/streams\/applications\/0\/applicationId/);
});
