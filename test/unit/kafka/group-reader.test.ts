// Consumer groups read without kafkajs' admin (src/kafka/group-reader.ts): OffsetFetch and
// DescribeGroups answers against kafkajs 2.2.4's own decoders of the same bytes (the same offsets,
// states and member counts; per-partition, per-group and group-level errors), the coordinator kept
// per group and asked for again only when it moved, and the requests as kafkajs writes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Coordinators, decodeDescribeGroups, decodeOffsetFetch, GroupReader, type GroupBroker, type GroupCluster } from '../../../src/kafka/group-reader.js';
import { Writer } from '../../../src/kafka/wire.js';

const require = createRequire(import.meta.url);
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as { createErrorFromCode(code: number): Error & { type: string } };
type TheirOffsets = { throttleTime?: number; errorCode?: number; responses: { topic: string; partitions: { partition: number; offset: string; metadata: string | null; errorCode: number }[] }[] };
type TheirGroups = { throttleTime?: number; groups: { errorCode: number; groupId: string; state: string; members: unknown[] }[] };
const offsetFetchResponse = (v: number) => require(`kafkajs/src/protocol/requests/offsetFetch/v${v}/response`) as { decode(b: Buffer): Promise<TheirOffsets>; parse(x: TheirOffsets): Promise<TheirOffsets> };
const describeGroupsResponse = (v: number) => require(`kafkajs/src/protocol/requests/describeGroups/v${v}/response`) as { decode(b: Buffer): Promise<TheirGroups>; parse(x: TheirGroups): Promise<TheirGroups> };

const NOT_COORDINATOR = 16;
const UNKNOWN_TOPIC = 3;
const GROUP_AUTHORIZATION_FAILED = 30;

interface Part {
  partition: number;
  offset: bigint;
  metadata: string | null;
  error: number;
}

/** An OffsetFetch response body as a broker writes it at `version`. */
function offsetFetch(version: number, topics: { name: string; parts: Part[] }[], groupError = 0, throttle = 7): Buffer {
  const w = new Writer();
  if (version >= 3) w.int32(throttle);
  w.int32(topics.length);
  for (const t of topics) {
    w.nullableString(t.name).int32(t.parts.length);
    for (const p of t.parts) w.int32(p.partition).int64(p.offset).nullableString(p.metadata).int16(p.error);
  }
  if (version >= 2) w.int16(groupError);
  return w.build();
}

const TOPICS = [
  {
    name: 'orders',
    // Offsets near and beyond 2^53, none committed (-1), with and without metadata.
    parts: Array.from({ length: 200 }, (_, p): Part => ({ partition: p, offset: p === 3 ? -1n : 9_007_199_254_740_993n + BigInt(p), metadata: p % 2 ? null : `m${p}`, error: 0 })),
  },
  { name: 'zahlungsverkehr-ü', parts: [{ partition: 7, offset: 0n, metadata: '', error: 0 }] },
  { name: 'unwatched', parts: [{ partition: 0, offset: 5n, metadata: null, error: 0 }] },
];

for (const v of [1, 2, 3, 4]) {
  test(`OffsetFetch v${v} response: the offsets kafkajs decodes from the same bytes; topics left out as asked`, async () => {
    const body = offsetFetch(v, TOPICS);
    const theirs = await offsetFetchResponse(v).decode(body);
    const ours = decodeOffsetFetch(body, v);
    assert.deepEqual(
      [...ours.offsets].map(([topic, parts]) => ({ topic, partitions: [...parts].map(([partition, offset]) => ({ partition, offset: String(offset) })) })),
      theirs.responses.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ partition: p.partition, offset: p.offset })) })),
    );
    assert.equal(ours.errorCode, 0);
    assert.equal(ours.throttleTimeMs, v >= 3 ? 7 : 0);
    // kafkajs: from v4 on (KIP-219) the client throttles.
    if (v >= 3) assert.equal(ours.throttleTimeMs, v >= 4 ? (theirs as { clientSideThrottleTime?: number }).clientSideThrottleTime : theirs.throttleTime);
    const some = decodeOffsetFetch(body, v, (t) => t !== 'unwatched');
    assert.deepEqual([...some.offsets.keys()], ['orders', 'zahlungsverkehr-ü']);
    assert.equal(some.offsets.get('orders')!.get(3), -1n);
    assert.equal(some.offsets.get('orders')!.get(199), 9_007_199_254_741_192n);
  });
}

test('OffsetFetch response: a partition error or the group error is the error kafkajs raises; a truncated body an error naming the field', async () => {
  const withPartitionError = offsetFetch(4, [{ name: 't', parts: [{ partition: 0, offset: 1n, metadata: null, error: 0 }, { partition: 1, offset: -1n, metadata: null, error: UNKNOWN_TOPIC }] }]);
  assert.equal(decodeOffsetFetch(withPartitionError, 4).errorCode, UNKNOWN_TOPIC);
  await assert.rejects(offsetFetchResponse(4).parse(await offsetFetchResponse(4).decode(withPartitionError)), (e: Error & { type?: string }) => e.type === 'UNKNOWN_TOPIC_OR_PARTITION');
  const withGroupError = offsetFetch(3, [], NOT_COORDINATOR);
  assert.equal(decodeOffsetFetch(withGroupError, 3).errorCode, NOT_COORDINATOR);
  await assert.rejects(offsetFetchResponse(3).parse(await offsetFetchResponse(3).decode(withGroupError)), (e: Error & { type?: string }) => e.type === 'NOT_COORDINATOR_FOR_GROUP');
  const body = offsetFetch(4, TOPICS);
  for (const cut of [3, 9, 40, body.length - 1]) assert.throws(() => decodeOffsetFetch(body.subarray(0, cut), 4), /OffsetFetch v4 response: (truncated at byte \d+ of \d+, reading |partitions count 200 exceeds)/);
  assert.throws(() => decodeOffsetFetch(Buffer.concat([body, Buffer.from([0])]), 4), /1 bytes left over/);
});

interface Group {
  id: string;
  error: number;
  state: string;
  members: number;
}

/** A DescribeGroups response body at `version` (0–3): each member with metadata and assignment bytes. */
function describeGroups(version: number, groups: Group[]): Buffer {
  const w = new Writer();
  if (version >= 1) w.int32(3);
  w.int32(groups.length);
  for (const g of groups) {
    w.int16(g.error).nullableString(g.id).nullableString(g.state).nullableString('consumer').nullableString('range').int32(g.members);
    for (let i = 0; i < g.members; i++) {
      w.nullableString(`member-${i}`).nullableString('client').nullableString('/127.0.0.1');
      w.int32(5).bytes(Buffer.from('meta' + i)).int32(3).bytes(Buffer.from([1, 2, 3]));
    }
    if (version >= 3) w.int32(0b1000);
  }
  return w.build();
}

const GROUPS: Group[] = [
  { id: 'orders-eos', error: 0, state: 'Stable', members: 3 },
  { id: 'idle', error: 0, state: 'Empty', members: 0 },
  { id: 'gruppe-ä', error: 0, state: 'PreparingRebalance', members: 1 },
];

for (const v of [0, 1, 2]) {
  test(`DescribeGroups v${v} response: the states and member counts kafkajs decodes from the same bytes`, async () => {
    const body = describeGroups(v, GROUPS);
    const theirs = await describeGroupsResponse(v).decode(body);
    const ours = decodeDescribeGroups(body, v);
    assert.deepEqual(
      ours.groups,
      theirs.groups.map((g) => ({ groupId: g.groupId, errorCode: g.errorCode, state: g.state, members: g.members.length })),
    );
    assert.equal(ours.throttleTimeMs, v >= 1 ? 3 : 0);
  });
}

test('DescribeGroups response: each group its own error; v3 with authorized operations; truncated member bytes an error', () => {
  const ours = decodeDescribeGroups(describeGroups(3, [...GROUPS, { id: 'secret', error: GROUP_AUTHORIZATION_FAILED, state: '', members: 0 }]), 3);
  assert.deepEqual(
    ours.groups.map((g) => [g.groupId, g.errorCode, g.members, g.authorizedOperations]),
    [
      ['orders-eos', 0, 3, 8],
      ['idle', 0, 0, 8],
      ['gruppe-ä', 0, 1, 8],
      ['secret', GROUP_AUTHORIZATION_FAILED, 0, 8],
    ],
  );
  const body = describeGroups(2, GROUPS);
  assert.throws(() => decodeDescribeGroups(body.subarray(0, body.length - 20), 2), /DescribeGroups v2 response: (truncated|member_)/);
});

test('Coordinators: asked once per group and kept; asked again only after a stale coordinator or a broken connection', async () => {
  let where = 1;
  const asked: string[] = [];
  const c = new Coordinators(async (g) => {
    asked.push(g);
    return where;
  });
  const sentTo: number[] = [];
  const ok = async (n: number) => {
    sentTo.push(n);
    return n;
  };
  assert.equal(await c.call('a', ok), 1);
  assert.equal(await c.call('a', ok), 1);
  assert.equal(await c.call('b', ok), 1);
  assert.deepEqual(asked, ['a', 'b']);

  // The coordinator of a moved: the old one answers NOT_COORDINATOR, the new one is asked for and answers.
  where = 2;
  const moved = async (n: number) => {
    sentTo.push(n);
    if (n === 1) throw createErrorFromCode(NOT_COORDINATOR);
    return n;
  };
  assert.equal(await c.call('a', moved), 2);
  assert.deepEqual(asked, ['a', 'b', 'a']);
  assert.equal(await c.call('a', moved), 2, 'kept at its new place');
  assert.equal(c.lookups, 3);

  // A broken connection to b's coordinator: asked again.
  const broken = async (n: number) => {
    if (n === 1) throw Object.assign(new Error('Connection error: connect ECONNREFUSED'), { name: 'KafkaJSConnectionError' });
    return n;
  };
  assert.equal(await c.call('b', broken), 2);
  assert.equal(c.lookups, 4);

  // Another error is the call's own: thrown, the coordinator kept.
  await assert.rejects(
    c.call('b', async () => {
      throw createErrorFromCode(GROUP_AUTHORIZATION_FAILED);
    }),
    (e: Error & { type?: string }) => e.type === 'GROUP_AUTHORIZATION_FAILED',
  );
  assert.equal(c.lookups, 4);
  // Stale twice in a row: the second failure is thrown (one more try per call).
  await assert.rejects(
    c.call('a', async () => {
      throw createErrorFromCode(NOT_COORDINATOR);
    }),
    (e: Error & { type?: string }) => e.type === 'NOT_COORDINATOR_FOR_GROUP',
  );
  assert.equal(c.lookups, 5);

  // Groups no longer read are forgotten.
  c.retain(new Set(['b']));
  await c.call('b', ok);
  await c.call('a', ok);
  assert.deepEqual(asked.slice(-1), ['a']);
  assert.equal(c.lookups, 6);
});

/**
 * A cluster of brokers 1 and 2 answering OffsetFetch and DescribeGroups at the newest versions
 * kafkajs speaks, from `answer(nodeId, request bytes)`; FindCoordinator answers `coordinator`.
 */
function fakeCluster(coordinator: (g: string) => number, answer: (nodeId: number, apiName: string, sent: Buffer) => Buffer) {
  const sent: { nodeId: number; apiName: string; apiVersion: number; bytes: Buffer }[] = [];
  const broker = (nodeId: number): GroupBroker => ({
    lookupRequest: (apiKey, definition) => (args) => {
      // kafkajs' own request at its newest version (what lookupRequest picks against Kafka 4).
      const d = definition as { protocol(o: { version: number }): (a: object) => { request: { apiKey: number; apiVersion: number; apiName: string; encode(): Promise<unknown> } }; versions: string[] };
      const version = Math.max(...d.versions.map(Number));
      assert.ok(apiKey === 9 || apiKey === 15);
      return d.protocol({ version })(args);
    },
    connectionPool: {
      send: async ({ request, response }) => {
        const bytes = ((await request.encode()) as { buffer: Buffer }).buffer;
        sent.push({ nodeId, apiName: request.apiName, apiVersion: request.apiVersion, bytes });
        return response.parse(await response.decode(answer(nodeId, request.apiName, bytes)));
      },
    },
  });
  const cluster: GroupCluster = {
    findBroker: async ({ nodeId }) => broker(Number(nodeId)),
    findGroupCoordinatorMetadata: async ({ groupId }) => ({ coordinator: { nodeId: coordinator(groupId) } }),
  };
  return { cluster, sent };
}

/** The group ids of a DescribeGroups v0–v2 request body. */
function groupIdsOf(b: Buffer): string[] {
  const out: string[] = [];
  let o = 4;
  for (let i = 0; i < b.readInt32BE(0); i++) {
    const n = b.readInt16BE(o);
    out.push(b.toString('utf8', o + 2, o + 2 + n));
    o += 2 + n;
  }
  return out;
}

test('GroupReader: OffsetFetch of all topics as kafkajs writes it, to the kept coordinator; a moved group described again at its new coordinator, a refused one failed alone', async () => {
  const place = new Map([
    ['a', 1],
    ['b', 1],
    ['c', 2],
  ]);
  let moved = false;
  const { cluster, sent } = fakeCluster(
    (g) => place.get(g)!,
    (nodeId, api, bytes) => {
      if (api === 'OffsetFetch') return offsetFetch(4, nodeId === 1 ? TOPICS : [], nodeId === 1 ? 0 : NOT_COORDINATOR);
      const ids = groupIdsOf(bytes);
      return describeGroups(
        2,
        ids.map((id) => {
          if (id === 'b' && moved && nodeId === 1) return { id, error: NOT_COORDINATOR, state: '', members: 0 };
          if (id === 'c') return { id, error: GROUP_AUTHORIZATION_FAILED, state: '', members: 0 };
          return { id, error: 0, state: 'Stable', members: nodeId };
        }),
      );
    },
  );
  const reader = new GroupReader(cluster);
  const offsets = await reader.offsets('a', (t) => t === 'orders');
  assert.deepEqual([...offsets.keys()], ['orders']);
  assert.equal(offsets.get('orders')!.size, 200);
  // kafkajs' OffsetFetch v4 of every topic: the group id, then a null topic array.
  assert.deepEqual(sent[0], { nodeId: 1, apiName: 'OffsetFetch', apiVersion: 4, bytes: new Writer().nullableString('a').int32(-1).build() });
  await reader.offsets('a');
  assert.equal(reader.coordinators.lookups, 1, 'one FindCoordinator for two readings');

  // c's coordinator answers NOT_COORDINATOR on both tries: kafkajs' error for it.
  await assert.rejects(reader.offsets('c'), (e: Error & { type?: string }) => e.type === 'NOT_COORDINATOR_FOR_GROUP');

  // b moved to 2 after its coordinator was kept: described again there; c refused; a as before.
  await reader.coordinators.of('b');
  moved = true;
  place.set('b', 2);
  sent.length = 0;
  const d = await reader.describe(['a', 'b', 'c']);
  assert.deepEqual(
    d.groups.map((g) => [g.groupId, g.state, g.members]).sort(),
    [
      ['a', 'Stable', 1],
      ['b', 'Stable', 2],
    ],
  );
  assert.deepEqual(
    d.failed.map((f) => [f.groupId, (f.error as Error & { type?: string }).type]),
    [['c', 'GROUP_AUTHORIZATION_FAILED']],
  );
  // One DescribeGroups per coordinator, then b alone at its new one.
  assert.deepEqual(
    sent.map((s) => [s.nodeId, s.apiName, groupIdsOf(s.bytes)]),
    [
      [1, 'DescribeGroups', ['a', 'b']],
      [2, 'DescribeGroups', ['c']],
      [2, 'DescribeGroups', ['b']],
    ],
  );
});
