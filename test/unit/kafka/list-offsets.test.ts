// ListOffsets without kafkajs' objects (src/kafka/list-offsets.ts) against kafkajs 2.2.4's own
// request encoders (the same bytes, v2 and v3) and response decoders (the same offsets for the same
// bytes; the partitions with an error listed, not given an end), and what a request does with an
// answer's error (kafkajs' error for the code, as its own parse throws).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { decodeListOffsets, encodeListOffsets, listOffsets, type ListOffsetsArgs, type ListOffsetsBroker } from '../../../src/kafka/list-offsets.js';

const require = createRequire(import.meta.url);
interface Enc {
  writeInt16(v: number): Enc;
  writeInt32(v: number): Enc;
  writeInt64(v: string | number): Enc;
  writeString(v: string): Enc;
  buffer: Buffer;
}
const Encoder = require('kafkajs/src/protocol/encoder') as new () => Enc;
type Theirs = { responses: { topic: string; partitions: { partition: number; errorCode: number; offset: string }[] }[] };
const kafkajsRequest = (v: number) => require(`kafkajs/src/protocol/requests/listOffsets/v${v}/request`) as (a: ListOffsetsArgs) => { apiVersion: number; encode(): Promise<{ buffer: Buffer }> };
const kafkajsResponse = (v: number) => require(`kafkajs/src/protocol/requests/listOffsets/v${v}/response`) as { decode(b: Buffer): Promise<Theirs>; parse(x: Theirs): Promise<Theirs> };

const args = (isolationLevel: number): ListOffsetsArgs => ({
  replicaId: -1,
  isolationLevel,
  topics: [
    { topic: 'orders', partitions: Array.from({ length: 300 }, (_, p) => ({ partition: p, timestamp: -1 })) },
    { topic: 'zahlungsverkehr-ü', partitions: [{ partition: 7, timestamp: -2 }, { partition: 2_000_000, timestamp: 1_764_000_000_123 }] },
    { topic: 'empty', partitions: [] },
  ],
});

for (const v of [2, 3]) {
  test(`ListOffsets v${v} request: the bytes kafkajs writes`, async () => {
    for (const level of [0, 1]) assert.deepEqual(encodeListOffsets(args(level)), (await kafkajsRequest(v)(args(level)).encode()).buffer);
  });
}

/** A response body as a broker writes it: offsets near and beyond 2^53, errors on some partitions. */
function response(): Buffer {
  const e = new Encoder().writeInt32(11).writeInt32(2);
  e.writeString('orders').writeInt32(500);
  for (let p = 0; p < 500; p++) {
    const error = p === 17 ? 6 : p === 400 ? 74 : 0;
    e.writeInt32(p).writeInt16(error).writeInt64(-1).writeInt64(error ? '-1' : String(9_007_199_254_740_000n + BigInt(p) * 997n));
  }
  e.writeString('zahlungsverkehr-ü').writeInt32(1).writeInt32(3).writeInt16(0).writeInt64(-1).writeInt64(0);
  return e.buffer;
}

for (const v of [2, 3]) {
  test(`ListOffsets v${v} response: the offsets kafkajs decodes from the same bytes, the errors apart`, async () => {
    const theirs = await kafkajsResponse(v).decode(response());
    const ours = decodeListOffsets(response());
    assert.equal(ours.throttleTimeMs, 11);
    const errors = [];
    for (const t of theirs.responses) {
      for (const p of t.partitions) {
        if (p.errorCode) errors.push({ topic: t.topic, partition: p.partition, errorCode: p.errorCode });
        else assert.equal(ours.ends.get(t.topic)?.get(p.partition), BigInt(p.offset), `${t.topic} ${p.partition}`);
      }
    }
    assert.deepEqual(ours.errors, errors);
    assert.equal(ours.errors.length, 2);
    assert.deepEqual(
      [...ours.ends].map(([t, m]) => [t, m.size]),
      [
        ['orders', 498],
        ['zahlungsverkehr-ü', 1],
      ],
    );
  });
}

test('ListOffsets response: added to the ends already read (other leaders), a truncated body an error', () => {
  const ends = new Map([['orders', new Map([[1000, 5n]])]]);
  decodeListOffsets(response(), ends);
  assert.equal(ends.get('orders')!.get(1000), 5n);
  assert.equal(ends.get('orders')!.size, 499);
  const body = response();
  for (const cut of [4, 12, 100, body.length - 1]) assert.throws(() => decodeListOffsets(body.subarray(0, cut)), /ListOffsets response: truncated/);
});

/** A broker that answers `body` to any ListOffsets at version `version`. */
function broker(version: number, body: Buffer): ListOffsetsBroker & { sent: Buffer[] } {
  const sent: Buffer[] = [];
  return {
    sent,
    lookupRequest: () => () => ({ request: { apiKey: 2, apiVersion: version, apiName: 'ListOffsets' } }),
    connectionPool: {
      send: async ({ request, response }) => {
        sent.push(((await request.encode()) as { buffer: Buffer }).buffer);
        return response.parse(await response.decode(body));
      },
    },
  };
}

test('ListOffsets over a connection: the request as encoded; a partition error fails it with the error kafkajs raises for the code', async () => {
  const b = broker(3, response());
  const ends = new Map<string, Map<number, bigint>>();
  const theirs = kafkajsResponse(3).parse(await kafkajsResponse(3).decode(response()));
  await assert.rejects(theirs, (e: Error) => e.name === 'KafkaJSProtocolError' && (e as Error & { type?: string }).type === 'NOT_LEADER_FOR_PARTITION');
  await assert.rejects(listOffsets(b, 1, args(1).topics, ends), (e: Error & { type?: string; retriable?: boolean }) => {
    assert.equal(e.name, 'KafkaJSProtocolError');
    assert.equal(e.type, 'NOT_LEADER_FOR_PARTITION');
    assert.equal(e.retriable, true);
    return true;
  });
  assert.deepEqual(b.sent, [encodeListOffsets(args(1))]);
});

test('ListOffsets over a connection: an answer without errors fills the ends; a broker below v2 is refused', async () => {
  const e = new Encoder().writeInt32(0).writeInt32(1).writeString('t').writeInt32(2);
  e.writeInt32(0).writeInt16(0).writeInt64(-1).writeInt64(42).writeInt32(1).writeInt16(0).writeInt64(-1).writeInt64(7);
  const ends = new Map<string, Map<number, bigint>>();
  await listOffsets(broker(2, e.buffer), 0, [{ topic: 't', partitions: [{ partition: 0, timestamp: -1 }, { partition: 1, timestamp: -1 }] }], ends);
  assert.deepEqual([...ends.get('t')!], [
    [0, 42n],
    [1, 7n],
  ]);
  await assert.rejects(listOffsets(broker(1, e.buffer), 0, [], new Map()), /ListOffsets up to v1 only/);
});
