// The end offsets of many partitions (src/kafka/offsets.ts listEnds): one ListOffsets per leader,
// every partition in the request of its own leader, every answer back in its topic; the log start
// offsets (listStarts) the same way; an EndOffsetReader over a cluster its caller owns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EndOffsetReader, listEnds, listStarts, type OffsetCluster } from '../../../src/kafka/offsets.js';
import type { Kafka } from 'kafkajs';

type Req = { isolationLevel: number; topics: { topic: string; partitions: { partition: number; timestamp: number }[] }[] };

function fakeCluster(metadata: Record<string, { partitionId: number; leader?: number | null }[]>) {
  const requests: { nodeId: string; req: Req }[] = [];
  const refreshed: string[][] = [];
  const cluster = {
    addMultipleTargetTopics: async (topics: string[]) => void refreshed.push(topics),
    refreshMetadataIfNecessary: async () => undefined,
    findTopicPartitionMetadata: (topic: string) => metadata[topic] ?? [],
    findBroker: async ({ nodeId }: { nodeId: string }) => ({
      listOffsets: async (req: Req) => {
        requests.push({ nodeId, req });
        // Each partition's end: 1000 × leader + partition, so an answer shows who gave it.
        return { responses: req.topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ partition: p.partition, offset: String(Number(nodeId) * 1000 + p.partition) })) })) };
      },
    }),
  } as unknown as OffsetCluster;
  return { cluster, requests, refreshed };
}

test('end offsets: one request per leader holding exactly its partitions of every topic, latest, at the isolation level asked', async () => {
  const leaders = [1, 2, 3];
  const metadata: Record<string, { partitionId: number; leader: number }[]> = {};
  for (const topic of ['a', 'b']) metadata[topic] = Array.from({ length: 1000 }, (_, i) => ({ partitionId: i, leader: leaders[(i * 7 + topic.length) % 3]! }));
  const { cluster, requests, refreshed } = fakeCluster(metadata);
  const ends = await listEnds(cluster, 1, ['a', 'b', 'gone']);
  assert.deepEqual(refreshed, [['a', 'b', 'gone']]);
  assert.equal(requests.length, 3, 'one ListOffsets per leader');
  for (const { nodeId, req } of requests) {
    assert.equal(req.isolationLevel, 1);
    assert.deepEqual(
      req.topics.map((t) => t.topic),
      ['a', 'b'],
    );
    for (const t of req.topics) {
      const mine = metadata[t.topic]!.filter((p) => String(p.leader) === nodeId).map((p) => p.partitionId);
      assert.deepEqual(
        t.partitions.map((p) => p.partition),
        mine,
        `leader ${nodeId} asked for exactly its partitions of ${t.topic}`,
      );
      assert.ok(t.partitions.every((p) => p.timestamp === -1), 'the latest offset');
    }
  }
  assert.deepEqual([...ends.keys()].sort(), ['a', 'b'], 'a topic without partitions in the metadata stays out');
  for (const topic of ['a', 'b']) {
    assert.equal(ends.get(topic)!.size, 1000);
    for (const p of metadata[topic]!) assert.equal(ends.get(topic)!.get(p.partitionId), BigInt(p.leader * 1000 + p.partitionId));
  }
});

test('end offsets: a partition without a leader fails the reading, naming it', async () => {
  const { cluster, requests } = fakeCluster({ t: [{ partitionId: 0, leader: 1 }, { partitionId: 1, leader: null }] });
  await assert.rejects(listEnds(cluster, 0, ['t']), /no leader for partition 1 of t/);
  assert.equal(requests.length, 0);
  const noLeader = fakeCluster({ t: [{ partitionId: 3, leader: -1 }] });
  await assert.rejects(listEnds(noLeader.cluster, 0, ['t']), /no leader for partition 3 of t/);
});

test('log start offsets: ListOffsets at the earliest timestamp, one request per leader, every partition back', async () => {
  const metadata = { t: [0, 1, 2, 3].map((i) => ({ partitionId: i, leader: (i % 2) + 1 })) };
  const { cluster, requests } = fakeCluster(metadata);
  const starts = await listStarts(cluster, ['t']);
  assert.equal(requests.length, 2);
  for (const { req } of requests) assert.ok(req.topics[0]!.partitions.every((p) => p.timestamp === -2), 'the earliest offset');
  assert.deepEqual([...starts.get('t')!].sort(([a], [b]) => a - b), [
    [0, 1000n],
    [1, 2001n],
    [2, 1002n],
    [3, 2003n],
  ]);
});

test('an end offset reader over a shared cluster: both isolation levels over it, connected once, left connected at close', async () => {
  const { cluster, requests } = fakeCluster({ t: [{ partitionId: 0, leader: 1 }] });
  const calls: string[] = [];
  Object.assign(cluster, { connect: async () => void calls.push('connect'), disconnect: async () => void calls.push('disconnect') });
  const kafka = {} as Kafka; // a shared cluster needs nothing of the client
  const reader = new EndOffsetReader(kafka, cluster);
  assert.deepEqual(await reader.read('t'), [{ partition: 0, high: 1000n, lso: 1000n }]);
  await reader.read('t');
  await reader.close();
  assert.deepEqual(calls, ['connect'], 'connected once (kafkajs: a no-op when already connected), never disconnected');
  assert.deepEqual(
    requests.map((r) => r.req.isolationLevel).sort(),
    [0, 0, 1, 1],
    'each reading asks for the high watermark (read_uncommitted) and the LSO (read_committed)',
  );
});
