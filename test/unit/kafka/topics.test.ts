import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateConfig } from '../../../src/config/load.js';
import { EosError } from '../../../src/errors.js';
import { planTopics, topicsOfConfig, wantedTopics } from '../../../src/kafka/topics.js';

const req = { names: [], partitions: 6, allowUnsafe: false };
const t = [{ topic: 'a', role: 'named' }];

test('replication from the cluster size: RF 3 / min ISR 2 from 3 brokers on', () => {
  for (const brokers of [3, 5]) {
    const p = planTopics(brokers, t, req);
    assert.deepEqual([p.replicationFactor, p.minInsyncReplicas, p.unsafe], [3, 2, undefined]);
  }
});

test('unsafe settings are refused with the reason, unless allowed or nothing would be created', () => {
  assert.throws(() => planTopics(1, t, req), (e: Error) => e instanceof EosError && /replication factor 1 \(exactly-once needs 3, which a cluster of 1 broker cannot hold\); min\.insync\.replicas 1/.test(e.message));
  assert.throws(() => planTopics(3, t, { ...req, minInsyncReplicas: 3 }), /min\.insync\.replicas 3 equal to the replication factor/);
  assert.throws(() => planTopics(3, t, { ...req, replicationFactor: 4 }), /the cluster has only 3 brokers/);
  assert.throws(() => planTopics(3, t, { ...req, minInsyncReplicas: 4 }), /expected 1 to the replication factor \(3\)/);
  const allowed = planTopics(1, t, { ...req, allowUnsafe: true });
  assert.deepEqual([allowed.replicationFactor, allowed.minInsyncReplicas], [1, 1]);
  assert.match(allowed.unsafe ?? '', /replication factor 1/);
  assert.equal(planTopics(1, t, req, new Set(['a'])).replicationFactor, 1, 'existing topics are left alone: nothing to refuse');
});

test("a config's topics: the pipeline's three (start offsets for the source) and the canary's, once each", () => {
  const config = validateConfig({ pipeline: { enabled: true, sourceTopic: 'in', sinkTopic: 'out', groupId: 'g' }, canary: { enabled: true } }, '(test)');
  assert.deepEqual(topicsOfConfig(config), [
    { topic: 'in', role: 'pipeline source, canary source', startOffsetsFor: 'g' },
    { topic: 'out', role: 'pipeline sink, canary sink' },
    { topic: 'out.dlq', role: 'pipeline dead letters' },
  ]);
  assert.deepEqual(wantedTopics(config, ['in', 'extra']).map((x) => x.topic), ['in', 'out', 'out.dlq', 'extra']);
  assert.throws(() => planTopics(3, wantedTopics(validateConfig({}, '(test)'), []), req), /no topics to create/);
});
