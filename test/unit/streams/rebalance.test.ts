// Rebalance tracking of a Kafka Streams application's group from recorded DescribeGroups readings
// (src/streams/rebalance.ts), the Streams service's metrics from the same readings (its apply(),
// no Kafka), and the lag service's configuration when it covers the applications' groups.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { RebalanceTracker, isRebalancing } from '../../../src/streams/rebalance.js';
import { StreamsService, streamsLabels } from '../../../src/streams/streams-service.js';
import { createDaemon } from '../../../src/create-daemon.js';
import { lagCovering } from '../../../src/lag/lag-service.js';
import { classifyGroups } from '../../../src/streams/streams-service.js';
import { lagLabels } from '../../../src/lag/lag-service.js';
import { createRegistry } from '../../../src/metrics/registry.js';
import { createLogger } from '../../../src/log.js';
import { validateConfig } from '../../../src/config/load.js';
import type { EosError } from '../../../src/errors.js';
import { parsePrometheusText, sampleValue } from '../../harness/promtext.js';

const silent = createLogger('silent');

describe('rebalance tracker', () => {
  test('a rebalance seen in progress is timed from its first reading to the first Stable one', () => {
    const t = new RebalanceTracker();
    assert.deepEqual(t.observe({ state: 'Stable', members: ['a', 'b'], atMs: 1000 }).events, []);
    const r1 = t.observe({ state: 'PreparingRebalance', members: ['a', 'b', 'c'], atMs: 6000 });
    assert.deepEqual(r1.events, []);
    assert.deepEqual(r1.view, { state: 'PreparingRebalance', members: 3, rebalancingSinceMs: 6000, up: false });
    const r2 = t.observe({ state: 'CompletingRebalance', members: ['b', 'c'], atMs: 11_000 });
    assert.equal(r2.view.rebalancingSinceMs, 6000, 'the same rebalance: its start stays');
    const r3 = t.observe({ state: 'Stable', members: ['b', 'c'], atMs: 46_000 });
    assert.deepEqual(r3.events, [{ kind: 'completed', startedAtMs: 6000, endedAtMs: 46_000, durationMs: 40_000 }]);
    assert.deepEqual(r3.view, { state: 'Stable', members: 2, rebalancingSinceMs: null, up: true });
    assert.deepEqual(t.observe({ state: 'Stable', members: ['c', 'b'], atMs: 51_000 }).events, [], 'the same members in another order: nothing happened');
  });

  test('members that changed between two Stable readings are a rebalance not seen in progress', () => {
    const t = new RebalanceTracker();
    t.observe({ state: 'Stable', members: ['a', 'b'], atMs: 0 });
    assert.deepEqual(t.observe({ state: 'Stable', members: ['a', 'c', 'd'], atMs: 5000 }).events, [{ kind: 'unobserved', endedAtMs: 5000, joined: 2, left: 1 }]);
    // From Empty straight to Stable (a first member joined and the group settled between readings).
    const u = new RebalanceTracker();
    u.observe({ state: 'Empty', members: [], atMs: 0 });
    assert.deepEqual(u.observe({ state: 'Stable', members: ['a'], atMs: 5000 }).events, [{ kind: 'unobserved', endedAtMs: 5000, joined: 1, left: 0 }]);
  });

  test('the first reading is no rebalance, and one that ends Empty or Dead is not counted', () => {
    const t = new RebalanceTracker();
    assert.deepEqual(t.observe({ state: 'Stable', members: ['a'], atMs: 0 }).events, [], 'nothing to compare the first reading with');
    t.observe({ state: 'PreparingRebalance', members: ['a'], atMs: 5000 });
    const e = t.observe({ state: 'Empty', members: [], atMs: 10_000 });
    assert.deepEqual(e.events, []);
    assert.deepEqual(e.view, { state: 'Empty', members: 0, rebalancingSinceMs: null, up: false });
    // A new rebalance after that starts afresh.
    t.observe({ state: 'PreparingRebalance', members: ['b'], atMs: 15_000 });
    assert.deepEqual(t.observe({ state: 'Stable', members: ['b'], atMs: 17_500 }).events, [{ kind: 'completed', startedAtMs: 15_000, endedAtMs: 17_500, durationMs: 2500 }]);
    assert.equal(t.observe({ state: 'Dead', members: [], atMs: 20_000 }).view.up, false);
  });

  test('a Stable group without members is not up; the rebalancing states are exactly two', () => {
    const t = new RebalanceTracker();
    assert.equal(t.observe({ state: 'Stable', members: [], atMs: 0 }).view.up, false);
    assert.deepEqual(['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead', 'Unknown'].filter(isRebalancing), ['PreparingRebalance', 'CompletingRebalance']);
    assert.deepEqual(new RebalanceTracker().view(), { state: 'Unknown', members: 0, rebalancingSinceMs: null, up: false });
  });
});

describe('streams service metrics from recorded readings', () => {
  const config = { enabled: true, interval: 5000, discover: false, applications: [{ applicationId: 'orders-app', name: 'orders' }, { applicationId: 'other-app' }] };
  const member = (id: string) => ({ memberId: id, clientId: `orders-app-11111111-2222-3333-4444-555555555555-StreamThread-1-consumer`, clientHost: '/127.0.0.1' });

  test('up, the rebalance in progress, its count and duration, per application', async () => {
    const registry = createRegistry();
    const s = new StreamsService({} as never, config, { logger: silent, registry, fatal: () => undefined });
    const scrape = async () => parsePrometheusText(await registry.metrics());
    s.apply([{ groupId: 'orders-app', state: 'Stable', members: [member('m1'), member('m2')] }], 0);
    let p = await scrape();
    assert.equal(sampleValue(p, 'eos_pipeline_up', { pipeline: 'orders', engine: 'streams', job_id: '' }), 1);
    assert.equal(sampleValue(p, 'eos_pipeline_up', { pipeline: 'other-app', engine: 'streams', job_id: '' }), 0, 'a group DescribeGroups does not know is Dead: down');
    const r = s.apply([{ groupId: 'orders-app', state: 'PreparingRebalance', members: [member('m2'), member('m3')] }], 5000);
    assert.equal(r.applications[0]!.rebalancingSince, new Date(5000).toISOString());
    s.apply([{ groupId: 'orders-app', state: 'PreparingRebalance', members: [member('m2'), member('m3')] }], 12_500);
    p = await scrape();
    assert.equal(sampleValue(p, 'eos_streams_rebalance_in_progress_seconds', { application: 'orders-app' }), 7.5);
    assert.equal(sampleValue(p, 'eos_pipeline_up', { pipeline: 'orders', engine: 'streams', job_id: '' }), 0);
    const done = s.apply([{ groupId: 'orders-app', state: 'Stable', members: [member('m2'), member('m3')] }], 45_000);
    p = await scrape();
    assert.equal(sampleValue(p, 'eos_streams_rebalances_total', { application: 'orders-app' }), 1);
    assert.equal(sampleValue(p, 'eos_streams_rebalance_duration_seconds_sum', { application: 'orders-app' }), 40);
    assert.equal(sampleValue(p, 'eos_streams_rebalance_duration_seconds_bucket', { application: 'orders-app', le: '30' }), 0);
    assert.equal(sampleValue(p, 'eos_streams_rebalance_duration_seconds_bucket', { application: 'orders-app', le: '45' }), 1);
    assert.equal(sampleValue(p, 'eos_streams_rebalance_in_progress_seconds', { application: 'orders-app' }), 0);
    assert.equal(sampleValue(p, 'eos_pipeline_up', { pipeline: 'orders', engine: 'streams', job_id: '' }), 1);
    assert.deepEqual(done.applications[0]!.lastRebalance, { kind: 'completed', startedAtMs: 5000, endedAtMs: 45_000, durationMs: 40_000, at: new Date(45_000).toISOString() });
    assert.equal(done.applications[0]!.members.length, 2);
    assert.equal(sampleValue(p, 'eos_streams_rebalances_total', { application: 'other-app' }), undefined, 'nothing happened to the other application');
  });

  test('the labels of a Streams application: its name or its application.id, engine streams', () => {
    assert.deepEqual(streamsLabels({ applicationId: 'a', name: 'orders' }), { pipeline: 'orders', engine: 'streams', job_id: '' });
    assert.deepEqual(streamsLabels({ applicationId: 'a' }), { pipeline: 'a', engine: 'streams', job_id: '' });
  });
});

describe('the lag service covering Streams applications', () => {
  test('lag.groups gains the groups when lag is enabled; only they are read when it is not', () => {
    const lag = { enabled: true, groups: ['/^billing-/', 'x'], topics: ['t'], interval: 15_000 };
    assert.deepEqual(lagCovering(lag, ['x', 'orders-app'], 5000), { enabled: true, groups: ['/^billing-/', 'x', 'orders-app'], topics: ['t'], interval: 15_000 });
    assert.deepEqual(lagCovering({ ...lag, enabled: false }, ['orders-app'], 5000), { enabled: true, groups: ['orders-app'], topics: [], interval: 5000 });
    assert.equal(lagCovering(lag, [], 5000), lag);
    assert.deepEqual(lagCovering(lag, [], 5000, true).groups, lag.groups, 'discovering with lag on: lag.groups, the discovered ones added as found');
    assert.deepEqual(lagCovering({ ...lag, enabled: false }, [], 5000, true), { enabled: true, groups: [], topics: [], interval: 5000 }, 'discovering with lag off: no group but those found');
  });

  test("a Streams application's group lag carries the application's labels, before a Flink topic's", () => {
    const own = { pipeline: 'main', engine: 'eoswatch' as const, job_id: '' };
    const flink = { pipeline: 'job', engine: 'flink' as const, job_id: 'f' };
    const l = { pipeline: 'main', groupId: 'main-group', topicLabels: () => flink, groupLabels: (g: string) => (g === 'orders-app' ? streamsLabels({ applicationId: g }) : undefined) };
    assert.deepEqual(lagLabels(l, own, 'orders-app', 'in'), { pipeline: 'orders-app', engine: 'streams', job_id: '' });
    assert.deepEqual(lagLabels(l, own, 'someone', 'in'), flink);
    assert.deepEqual(lagLabels(l, own, 'main-group', 'in'), own);
  });
});

describe('streams config', () => {
  test('a daemon with the Streams and transactions services builds: the Streams service defines eos_pipeline_up alone, not the pipeline family whose eos_transactions_total the transactions service owns', () => {
    const config = validateConfig({ kafka: { brokers: ['127.0.0.1:1'] }, pipeline: { enabled: false }, transactions: { enabled: true }, streams: { enabled: true, applications: [{ applicationId: 'a' }] } }, 't.yaml');
    const { daemon } = createDaemon(config, silent);
    assert.ok(daemon);
  });

  test('defaults, and an application named twice is refused naming both places', () => {
    const c = validateConfig({ kafka: { brokers: ['b:9092'] }, streams: { enabled: true, applications: [{ applicationId: 'a' }] } }, 't.yaml');
    assert.deepEqual(c.streams, { enabled: true, interval: 5000, discover: false, applications: [{ applicationId: 'a' }] });
    assert.throws(
      () => validateConfig({ kafka: { brokers: ['b:9092'] }, streams: { applications: [{ applicationId: 'a' }, { applicationId: 'a' }] } }, 't.yaml'),
      (err: EosError) => {
        assert.deepEqual(err.details, ['t.yaml: /streams/applications/1/applicationId: found "a" again (also at /streams/applications/0/applicationId), expected each application once']);
        return true;
      },
    );
    assert.throws(
      () => validateConfig({ kafka: { brokers: ['b:9092'] }, streams: { applications: [{ name: 'x' }] } }, 't.yaml'),
      (err: EosError) => err.details.some((d) => d.includes('applicationId')),
    );
  });

  test('streams.enabled without an application is refused, naming the key (it would watch nothing, silently)', () => {
    assert.throws(
      () => validateConfig({ kafka: { brokers: ['b:9092'] }, streams: { enabled: true } }, 't.yaml'),
      (err: EosError) => {
        assert.deepEqual(err.details, ['t.yaml: /streams/applications: empty, expected at least one application (applicationId), or streams.discover: true, when streams.enabled is true: there is nothing to watch otherwise']);
        return true;
      },
    );
    assert.equal(validateConfig({ kafka: { brokers: ['b:9092'] }, streams: { enabled: false } }, 't.yaml').streams.applications.length, 0, 'disabled, none is fine');
    assert.equal(validateConfig({ kafka: { brokers: ['b:9092'] }, streams: { enabled: true, discover: true } }, 't.yaml').streams.discover, true, 'discovering, none named is fine');
  });
});

test('discovery: a group is a Streams application when its members use Kafka Streams\' assignor; a Stable group with another is not; the rest are asked again (the assignor is named only while Stable)', () => {
  const g = (groupId: string, state: string, protocol: string, members: number) => ({ groupId, state, protocol, members: Array.from({ length: members }, (_, i) => ({ memberId: `m${i}` })) });
  assert.deepEqual(
    classifyGroups([g('orders-app', 'Stable', 'stream', 2), g('billing', 'Stable', 'range', 1), g('idle-app', 'Empty', '', 0), g('zz-app', 'Stable', 'stream', 1), g('moving-app', 'PreparingRebalance', '', 2), g('gone', 'Dead', '', 0)]),
    { found: ['orders-app', 'zz-app'], notStreams: ['billing'], later: ['gone', 'idle-app', 'moving-app'] },
  );
  assert.deepEqual(classifyGroups([]), { found: [], notStreams: [], later: [] });
});
