// The end offsets of many partitions (src/kafka/offsets.ts listEnds): one ListOffsets per leader,
// every partition in the request of its own leader, every answer back in its topic; the log start
// offsets (listStarts) the same way; an EndOffsetReader over a cluster its caller owns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { EndOffsetReader, freshOnFailure, listEnds, listStarts, type OffsetCluster } from '../../../src/kafka/offsets.js';
import type { Kafka } from 'kafkajs';

type Req = { replicaId: number; isolationLevel: number; topics: { topic: string; partitions: { partition: number; timestamp: number }[] }[] };

const require = createRequire(import.meta.url);
interface Dec {
  readInt8(): number;
  readInt32(): number;
  readString(): string;
  readInt64(): { toString(): string };
  readArray<T>(f: (d: Dec) => T): T[];
}
const Decoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => Dec;
interface Enc {
  writeInt16(v: number): Enc;
  writeInt32(v: number): Enc;
  writeInt64(v: number): Enc;
  writeString(v: string): Enc;
  buffer: Buffer;
}
const Encoder = require('kafkajs/src/protocol/encoder') as new () => Enc;

/** A ListOffsets v3 request body as a broker reads it. */
function readRequest(body: Buffer): Req {
  const d = new Decoder(body);
  return {
    replicaId: d.readInt32(),
    isolationLevel: d.readInt8(),
    topics: d.readArray((t) => ({ topic: t.readString(), partitions: t.readArray((p) => ({ partition: p.readInt32(), timestamp: Number(p.readInt64().toString()) })) })),
  };
}

function fakeCluster(metadata: Record<string, { partitionId: number; leader?: number | null }[]>) {
  const requests: { nodeId: string; req: Req }[] = [];
  const refreshed: string[][] = [];
  const cluster = {
    addMultipleTargetTopics: async (topics: string[]) => void refreshed.push(topics),
    refreshMetadataIfNecessary: async () => undefined,
    findTopicPartitionMetadata: (topic: string) => metadata[topic] ?? [],
    findBroker: async ({ nodeId }: { nodeId: string }) => ({
      lookupRequest: () => () => ({ request: { apiKey: 2, apiVersion: 3, apiName: 'ListOffsets' } }),
      connectionPool: {
        // The broker's side: the request's bytes read, an answer's bytes written and handed to the caller's decoder.
        send: async ({ request, response }: { request: { encode(): Promise<{ buffer: Buffer }> }; response: { decode(b: Buffer): Promise<unknown>; parse(x: unknown): Promise<unknown> } }) => {
          const req = readRequest((await request.encode()).buffer);
          requests.push({ nodeId, req });
          const e = new Encoder().writeInt32(0).writeInt32(req.topics.length);
          for (const t of req.topics) {
            e.writeString(t.topic).writeInt32(t.partitions.length);
            // Each partition's end: 1000 × leader + partition, so an answer shows who gave it.
            for (const p of t.partitions) e.writeInt32(p.partition).writeInt16(0).writeInt64(-1).writeInt64(Number(nodeId) * 1000 + p.partition);
          }
          return response.parse(await response.decode(e.buffer));
        },
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
    assert.equal(req.replicaId, -1);
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

test('end offsets on kept metadata: a failed read is tried once more after a refresh; a refresh that fails leaves the read\'s error', async () => {
  const events: string[] = [];
  const cluster = (refresh: () => Promise<void>) => ({
    refreshMetadata: async () => {
      events.push('refresh');
      await refresh();
    },
  });
  const reads = (results: (string | Error)[]) => async () => {
    const r = results.shift()!;
    events.push(r instanceof Error ? `read fails: ${r.message}` : `read: ${r}`);
    if (r instanceof Error) throw r;
    return r;
  };
  assert.equal(await freshOnFailure(cluster(async () => undefined), reads(['ok'])), 'ok');
  assert.deepEqual(events.splice(0), ['read: ok'], 'no refresh while reads succeed');
  assert.equal(await freshOnFailure(cluster(async () => undefined), reads([new Error('not the leader'), 'ok'])), 'ok');
  assert.deepEqual(events.splice(0), ['read fails: not the leader', 'refresh', 'read: ok']);
  await assert.rejects(freshOnFailure(cluster(async () => undefined), reads([new Error('first'), new Error('second')])), /second/);
  assert.deepEqual(events.splice(0), ['read fails: first', 'refresh', 'read fails: second'], 'tried once more only');
  await assert.rejects(
    freshOnFailure(
      cluster(async () => {
        throw new Error('refresh failed');
      }),
      reads([new Error('the read\'s'), 'ok']),
    ),
    /the read's/,
  );
  assert.deepEqual(events.splice(0), ["read fails: the read's", 'refresh']);
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
