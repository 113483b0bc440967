// The Metadata response read for brokers and topic names (src/kafka/cluster-metadata.ts) against
// kafkajs 2.2.4's own decoders of the same bytes, every version kafkajs speaks (0–6): the same
// brokers and topic names, the partitions (replica lists of every length) skipped exactly, an
// unknown topic left out, a topic with another error named, a truncated answer an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { decodeMetadata } from '../../../src/kafka/cluster-metadata.js';

const require = createRequire(import.meta.url);
interface Enc {
  writeInt8(v: number): Enc;
  writeInt16(v: number): Enc;
  writeInt32(v: number): Enc;
  writeString(v: string | null): Enc;
  writeBoolean(v: boolean): Enc;
  buffer: Buffer;
}
const Encoder = require('kafkajs/src/protocol/encoder') as new () => Enc;
const kafkajsDecode = (v: number) =>
  (require(`kafkajs/src/protocol/requests/metadata/v${v}/response`) as { decode(b: Buffer): Promise<{ brokers: { nodeId: number; host: string; port: number }[]; topicMetadata: { topic: string; topicErrorCode: number }[] }> }).decode;

interface Partition {
  error: number;
  id: number;
  leader: number;
  replicas: number[];
  isr: number[];
  offline: number[];
}
interface Topic {
  error: number;
  name: string;
  internal: boolean;
  partitions: Partition[];
}

/** A Metadata response body (after the correlation id) of version `v`, as a broker writes it. */
function response(v: number, brokers: { nodeId: number; host: string; port: number; rack: string | null }[], topics: Topic[]): Buffer {
  const e = new Encoder();
  const ints = (xs: number[]) => {
    e.writeInt32(xs.length);
    for (const x of xs) e.writeInt32(x);
  };
  if (v >= 3) e.writeInt32(7);
  e.writeInt32(brokers.length);
  for (const b of brokers) {
    e.writeInt32(b.nodeId).writeString(b.host).writeInt32(b.port);
    if (v >= 1) e.writeString(b.rack);
  }
  if (v >= 2) e.writeString('cluster-x');
  if (v >= 1) e.writeInt32(brokers[0]?.nodeId ?? -1);
  e.writeInt32(topics.length);
  for (const t of topics) {
    e.writeInt16(t.error).writeString(t.name);
    if (v >= 1) e.writeBoolean(t.internal);
    e.writeInt32(t.partitions.length);
    for (const p of t.partitions) {
      e.writeInt16(p.error).writeInt32(p.id).writeInt32(p.leader);
      ints(p.replicas);
      ints(p.isr);
      if (v >= 5) ints(p.offline);
    }
  }
  return e.buffer;
}

const BROKERS = [
  { nodeId: 1, host: 'kafka-1.example', port: 9092, rack: 'a' },
  { nodeId: 2, host: 'kafka-2.example', port: 9093, rack: null },
  { nodeId: 30, host: '10.0.0.3', port: 19092, rack: 'c' },
];

function topics(): Topic[] {
  const out: Topic[] = [];
  for (let t = 0; t < 4; t++) {
    const partitions: Partition[] = [];
    // Replica lists of 0–3 entries, so that a skip of the wrong length lands elsewhere.
    for (let p = 0; p < 50 + t; p++) partitions.push({ error: p % 7 === 0 ? 9 : 0, id: p, leader: (p % 3) + 1, replicas: [1, 2, 30].slice(0, p % 4), isr: [2, 30].slice(0, p % 3), offline: p % 5 === 0 ? [30] : [] });
    out.push({ error: 0, name: `topic-${t}-ü`, internal: t === 3, partitions });
  }
  return out;
}

for (let v = 0; v <= 6; v++) {
  test(`Metadata v${v}: the brokers and topic names kafkajs decodes from the same bytes`, async () => {
    const body = response(v, BROKERS, topics());
    const theirs = await kafkajsDecode(v)(body);
    const ours = decodeMetadata(body, v);
    assert.deepEqual(
      ours.brokers,
      theirs.brokers.map(({ nodeId, host, port }) => ({ nodeId, host, port })),
    );
    assert.deepEqual(
      ours.topics,
      theirs.topicMetadata.map((t) => t.topic),
    );
    assert.equal(ours.throttleTimeMs, v >= 3 ? 7 : 0);
  });
}

test('Metadata: an unknown topic is left out, a topic with another error (no leader yet) is named', () => {
  const t = topics();
  t[1]!.error = 3;
  t[2]!.error = 5;
  const ours = decodeMetadata(response(6, BROKERS, t), 6);
  assert.deepEqual(ours.topics, [t[0]!.name, t[2]!.name, t[3]!.name]);
});

test('Metadata: no brokers and no topics (an empty answer) decode to empty lists', () => {
  assert.deepEqual(decodeMetadata(response(6, [], []), 6), { brokers: [], topics: [], throttleTimeMs: 7 });
});

test('Metadata: a truncated answer fails, naming the message', () => {
  const body = response(6, BROKERS, topics());
  for (const cut of [3, 20, Math.floor(body.length / 2), body.length - 1]) {
    assert.throws(() => decodeMetadata(body.subarray(0, cut), 6), /Metadata v6 response.*truncated/);
  }
});
