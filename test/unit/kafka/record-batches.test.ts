// The verifier's decoder of Fetch responses and record batches (src/kafka/record-batches.ts), on
// batches written here byte by byte: plain, with keys, headers and null values, transactional with
// ABORT and COMMIT markers, gzip-compressed, LOG_APPEND_TIME, one cut off at the end; the records
// it passes on are compared with kafkajs' own decoder and aborted-transaction filter on the same bytes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { decodeFetchResponse, scanRecordSet } from '../../../src/kafka/record-batches.js';
import { zigzag } from '../../harness/varint.js';

const require = createRequire(import.meta.url);
const KafkajsDecoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => unknown;
const decodeMessages = require('kafkajs/src/protocol/requests/fetch/v4/decodeMessages') as (d: unknown) => Promise<{ offset: string; timestamp: string; value: Buffer | null; isControlRecord?: boolean }[]>;
const filterAbortedMessages = require('kafkajs/src/consumer/filterAbortedMessages') as <M>(r: { messages: M[]; abortedTransactions: { producerId: string; firstOffset: string }[] }) => M[];

const bytes = (b: Buffer | null): number[] => (b === null ? zigzag(-1) : [...zigzag(b.length), ...b]);

interface Rec {
  offsetDelta: number;
  timestampDelta?: number;
  key?: Buffer | null;
  value: Buffer | null;
  headers?: [string, string][];
}

function record(r: Rec): Buffer {
  const body = [
    0,
    ...zigzag(r.timestampDelta ?? 0),
    ...zigzag(r.offsetDelta),
    ...bytes(r.key ?? null),
    ...bytes(r.value),
    ...zigzag(r.headers?.length ?? 0),
    ...(r.headers ?? []).flatMap(([k, v]) => [...bytes(Buffer.from(k)), ...bytes(Buffer.from(v))]),
  ];
  return Buffer.from([...zigzag(body.length), ...body]);
}

function batch(o: { base: number; records: Rec[]; lastOffsetDelta?: number; producerId?: bigint; transactional?: boolean; control?: boolean; logAppendTime?: boolean; gzip?: boolean; baseTs?: number; maxTs?: number }): Buffer {
  const recs = Buffer.concat(o.records.map(record));
  const body = o.gzip ? gzipSync(recs) : recs;
  const attributes = (o.gzip ? 1 : 0) | (o.logAppendTime ? 0x08 : 0) | (o.transactional ? 0x10 : 0) | (o.control ? 0x20 : 0);
  const h = Buffer.alloc(61);
  h.writeBigInt64BE(BigInt(o.base), 0);
  h.writeInt32BE(61 - 12 + body.length, 8);
  h.writeInt32BE(0, 12); // partition leader epoch
  h.writeInt8(2, 16); // magic
  h.writeUInt32BE(0, 17); // crc (neither decoder checks it)
  h.writeInt16BE(attributes, 21);
  h.writeInt32BE(o.lastOffsetDelta ?? Math.max(...o.records.map((r) => r.offsetDelta)), 23);
  h.writeBigInt64BE(BigInt(o.baseTs ?? 1_700_000_000_000), 27);
  h.writeBigInt64BE(BigInt(o.maxTs ?? o.baseTs ?? 1_700_000_000_000), 35);
  h.writeBigInt64BE(o.producerId ?? -1n, 43);
  h.writeInt16BE(0, 51);
  h.writeInt32BE(-1, 53);
  h.writeInt32BE(o.records.length, 57);
  return Buffer.concat([h, body]);
}

/** A control record: key = version int16 0, type int16 (0 abort, 1 commit). */
const marker = (type: 0 | 1): Rec => ({ offsetDelta: 0, key: Buffer.from([0, 0, 0, type]), value: Buffer.from([0, 0, 0, 0, 0, 0]) });
const v = (s: string) => Buffer.from(s);

/** Offsets 0-11 and a cut-off batch: what a read_committed consumer gets are 0, 1, 2, 6, 7, 9, 10, 11. */
function recordSet(): Buffer {
  return Buffer.concat([
    batch({ base: 0, records: [{ offsetDelta: 0, key: v('k0'), value: v('a'), headers: [['h', 'x']] }, { offsetDelta: 1, timestampDelta: 5, value: null }, { offsetDelta: 2, timestampDelta: 300_000, value: v('c') }] }),
    batch({ base: 3, producerId: 7n, transactional: true, records: [{ offsetDelta: 0, value: v('aborted-3') }, { offsetDelta: 1, value: v('aborted-4') }] }),
    batch({ base: 5, producerId: 7n, transactional: true, control: true, records: [marker(0)] }),
    batch({ base: 6, producerId: 8n, transactional: true, records: [{ offsetDelta: 0, value: v('committed-6') }, { offsetDelta: 1, timestampDelta: -2, value: v('committed-7') }] }),
    batch({ base: 8, producerId: 8n, transactional: true, control: true, records: [marker(1)] }),
    batch({ base: 9, gzip: true, records: [{ offsetDelta: 0, value: v('gz-9') }, { offsetDelta: 1, timestampDelta: 1, value: v('gz-10'.repeat(50)) }] }),
    batch({ base: 11, logAppendTime: true, baseTs: 1_700_000_000_000, maxTs: 1_800_000_000_000, records: [{ offsetDelta: 0, timestampDelta: 7, value: v('lat-11') }] }),
    batch({ base: 12, records: [{ offsetDelta: 0, value: v('cut') }] }).subarray(0, 70),
  ]);
}

const ABORTED = [{ producerId: 7n, firstOffset: 3 }];

function ours(records: Buffer, from = 0, end = Infinity) {
  const got: { offset: number; timestamp: number; value: string | null }[] = [];
  const r = scanRecordSet(records, from, end, ABORTED, (value, timestamp, offset) => got.push({ offset, timestamp, value: value && value.toString() }));
  return { got, ...r };
}

describe('verifier record batches', () => {
  test('read_committed: aborted records and markers left out, everything else with its offset, timestamp and value', () => {
    const { got, nextOffset, batches } = ours(recordSet());
    assert.deepEqual(
      got.map((g) => g.offset),
      [0, 1, 2, 6, 7, 9, 10, 11],
    );
    assert.deepEqual(got[0], { offset: 0, timestamp: 1_700_000_000_000, value: 'a' });
    assert.deepEqual(got[1], { offset: 1, timestamp: 1_700_000_000_005, value: null });
    assert.equal(got[2]!.timestamp, 1_700_000_300_000);
    assert.equal(got[4]!.timestamp, 1_699_999_999_998, 'a negative timestamp delta');
    assert.equal(got[6]!.value, 'gz-10'.repeat(50), 'gzip batch');
    assert.equal(got[7]!.timestamp, 1_800_000_000_000, 'LOG_APPEND_TIME: the batch max timestamp');
    assert.equal(nextOffset, 12, 'the cut-off batch comes again in the next fetch');
    assert.equal(batches, 7);
  });

  test('the same records as kafkajs decodes and filters from the same bytes', async () => {
    const records = recordSet();
    const size = Buffer.alloc(4);
    size.writeInt32BE(records.length);
    const theirs = filterAbortedMessages({ messages: await decodeMessages(new KafkajsDecoder(Buffer.concat([size, records]))), abortedTransactions: [{ producerId: '7', firstOffset: '3' }] })
      .filter((m) => !m.isControlRecord)
      .map((m) => ({ offset: Number(m.offset), timestamp: Number(m.timestamp), value: m.value && m.value.toString() }));
    assert.deepEqual(ours(records).got, theirs);
  });

  test('a batch left empty by compaction is its header alone, and still moves the position', () => {
    const empty = batch({ base: 50, records: [], lastOffsetDelta: 4 });
    assert.equal(empty.length, 61);
    assert.equal(scanRecordSet(empty, 50, 100, [], () => assert.fail('no record')).nextOffset, 55);
  });

  test('records below the fetch offset (inside a batch) and at or past the end offset are not passed on', () => {
    assert.deepEqual(
      ours(recordSet(), 1, 10).got.map((g) => g.offset),
      [1, 2, 6, 7, 9],
    );
    assert.deepEqual(ours(recordSet(), 9).got.map((g) => g.offset), [9, 10, 11]);
    assert.equal(ours(recordSet(), 9).nextOffset, 12);
  });

  test('an aborted transaction spanning two fetches: the second response starts inside it', () => {
    const second = Buffer.concat([
      batch({ base: 4, producerId: 7n, transactional: true, records: [{ offsetDelta: 0, value: v('aborted-4') }] }),
      batch({ base: 5, producerId: 7n, transactional: true, control: true, records: [marker(0)] }),
      batch({ base: 6, producerId: 7n, transactional: true, records: [{ offsetDelta: 0, value: v('next-txn-6') }] }),
    ]);
    const got: number[] = [];
    scanRecordSet(second, 4, 100, ABORTED, (_v, _t, o) => got.push(o));
    assert.deepEqual(got, [6], 'after its ABORT marker the producer\'s next transaction is read');
  });

  test('read_uncommitted (no aborted list): aborted records are passed on, markers are not', () => {
    const got: number[] = [];
    scanRecordSet(recordSet(), 0, Infinity, [], (_v, _t, o) => got.push(o));
    assert.deepEqual(got, [0, 1, 2, 3, 4, 6, 7, 9, 10, 11]);
  });

  test('edge values: an empty value is not null, producer id 0 is a producer, a control batch without a producer id is skipped', () => {
    const set = Buffer.concat([
      batch({ base: 0, records: [{ offsetDelta: 0, value: Buffer.alloc(0) }, { offsetDelta: 1, key: Buffer.alloc(0), value: v('k-empty') }] }),
      batch({ base: 2, producerId: 0n, transactional: true, records: [{ offsetDelta: 0, value: v('aborted-by-0') }] }),
      batch({ base: 3, producerId: 0n, transactional: true, control: true, records: [marker(0)] }),
      batch({ base: 4, control: true, records: [marker(1)] }),
      batch({ base: 5, producerId: 0n, records: [{ offsetDelta: 0, value: v('idempotent-0') }] }),
    ]);
    const got: [number, string | null][] = [];
    const r = scanRecordSet(set, 0, 100, [{ producerId: 0n, firstOffset: 2 }], (value, _t, o) => got.push([o, value && value.toString()]));
    assert.deepEqual(got, [
      [0, ''],
      [1, 'k-empty'],
      [5, 'idempotent-0'],
    ]);
    assert.deepEqual(r, { nextOffset: 6, batches: 5 });
  });

  test('a record set shorter than a batch header, or ending exactly after one, reads what is whole', () => {
    const one = batch({ base: 40, records: [{ offsetDelta: 0, value: v('x') }] });
    assert.deepEqual(scanRecordSet(one.subarray(0, 60), 40, 100, [], () => assert.fail('no record')), { nextOffset: 40, batches: 0 });
    const got: number[] = [];
    assert.deepEqual(scanRecordSet(one, 40, 100, [], (_v, _t, o) => got.push(o)), { nextOffset: 41, batches: 1 });
    assert.deepEqual(got, [40]);
    assert.deepEqual(scanRecordSet(Buffer.alloc(0), 7, 100, [], () => undefined), { nextOffset: 7, batches: 0 });
  });

  test('a batch wholly below the fetch offset or at the end offset moves the position without records', () => {
    const set = Buffer.concat([batch({ base: 0, records: [{ offsetDelta: 0, value: v('a') }, { offsetDelta: 1, value: v('b') }] }), batch({ base: 2, records: [{ offsetDelta: 0, value: v('c') }] })]);
    const got: number[] = [];
    assert.equal(scanRecordSet(set, 2, 100, [], (_v, _t, o) => got.push(o)).nextOffset, 3);
    assert.deepEqual(got, [2]);
    got.length = 0;
    assert.equal(scanRecordSet(set, 0, 2, [], (_v, _t, o) => got.push(o)).nextOffset, 3);
    assert.deepEqual(got, [0, 1]);
  });

  test('broken bytes are errors, not silently short reads', () => {
    const b = batch({ base: 0, records: [{ offsetDelta: 0, value: v('abc') }] });
    // The record's length varint says 100 bytes.
    const longRecord = Buffer.from(b);
    longRecord[61] = 100 * 2;
    assert.throws(() => scanRecordSet(longRecord, 0, 10, [], () => undefined), /runs past the batch/);
    // A varint whose last byte has the continuation bit, at the end of the batch.
    const h = Buffer.from(b.subarray(0, 61));
    h.writeInt32BE(61 - 12 + 1, 8);
    assert.throws(() => scanRecordSet(Buffer.concat([h, Buffer.from([0x80])]), 0, 10, [], () => undefined), /varint runs past the end/);
    const tooLong = Buffer.concat([h.subarray(0, 61), Buffer.alloc(11, 0x80)]);
    tooLong.writeInt32BE(61 - 12 + 11, 8);
    assert.throws(() => scanRecordSet(tooLong, 0, 10, [], () => undefined), /longer than 10 bytes/);
    const huge = Buffer.from(b);
    huge.writeBigInt64BE(2n ** 60n, 0);
    assert.throws(() => scanRecordSet(huge, 0, 10, [], () => undefined), /beyond 2\^53/);
    const odd = batch({ base: 0, records: [{ offsetDelta: 0, value: v('x') }] });
    odd.writeInt16BE(6, 21);
    assert.throws(() => scanRecordSet(odd, 0, 10, [], () => undefined), /compressed with codec 6/);
  });

  test('varints: zigzag signs and multi-byte values (timestamp deltas and lengths)', () => {
    const deltas = [0, -1, 1, 63, -64, 64, 8191, -8192, 1_000_000, -1_000_000, 2 ** 35];
    const set = batch({ base: 0, baseTs: 2_000_000_000_000, records: deltas.map((d, k) => ({ offsetDelta: k, timestampDelta: d, value: v('y'.repeat(k * 40)) })) });
    const got: [number, number][] = [];
    scanRecordSet(set, 0, 100, [], (value, t) => got.push([t - 2_000_000_000_000, value!.length]));
    assert.deepEqual(
      got,
      deltas.map((d, k) => [d, k * 40]),
    );
  });

  test('aborted ranges: by first offset (a one-record batch at it too), per producer, only transactional batches', () => {
    const set = Buffer.concat([
      batch({ base: 0, producerId: 7n, transactional: true, records: [{ offsetDelta: 0, value: v('committed-0') }] }),
      batch({ base: 1, producerId: 7n, transactional: true, control: true, records: [marker(1)] }),
      batch({ base: 2, producerId: 9n, transactional: true, records: [{ offsetDelta: 0, value: v('aborted-2') }] }),
      batch({ base: 3, producerId: 9n, records: [{ offsetDelta: 0, value: v('idempotent-3') }] }),
      batch({ base: 4, producerId: 9n, transactional: true, control: true, records: [marker(0)] }),
      batch({ base: 5, producerId: 7n, transactional: true, records: [{ offsetDelta: 0, value: v('aborted-5') }, { offsetDelta: 1, value: v('aborted-6') }] }),
      batch({ base: 7, producerId: 7n, transactional: true, control: true, records: [marker(0)] }),
    ]);
    const got: number[] = [];
    scanRecordSet(
      set,
      0,
      100,
      [
        { producerId: 9n, firstOffset: 2 },
        { producerId: 7n, firstOffset: 5 },
      ],
      (_v, _t, o) => got.push(o),
    );
    assert.deepEqual(got, [0, 3], 'producer 7\'s later abort does not hide its earlier commit; 9\'s non-transactional record is read');
  });

  test('an empty batch (all its records compacted away) at the end still moves the position', () => {
    const set = Buffer.concat([batch({ base: 0, records: [{ offsetDelta: 0, value: v('a') }] }), batch({ base: 1, lastOffsetDelta: 4, records: [] })]);
    assert.equal(set.length - batch({ base: 0, records: [{ offsetDelta: 0, value: v('a') }] }).length, 61);
    assert.deepEqual(scanRecordSet(set, 0, 100, [], () => undefined), { nextOffset: 6, batches: 2 });
  });

  test('a ten-byte varint (the longest) is read', () => {
    const b = batch({ base: 0, records: [{ offsetDelta: 0, value: v('z') }] });
    // The record with its timestamp delta 0 written in ten bytes instead of one.
    const rec = b.subarray(61);
    const body = Buffer.concat([rec.subarray(1, 2), Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]), rec.subarray(3)]);
    const h = Buffer.from(b.subarray(0, 61));
    h.writeInt32BE(61 - 12 + 1 + body.length, 8);
    const got: [number, string][] = [];
    scanRecordSet(Buffer.concat([h, Buffer.from(zigzag(body.length)), body]), 0, 10, [], (value, t) => got.push([t, value!.toString()]));
    assert.deepEqual(got, [[1_700_000_000_000, 'z']]);
  });

  test('unsupported batches say what they are', () => {
    const snappy = batch({ base: 0, records: [{ offsetDelta: 0, value: v('x') }] });
    snappy.writeInt16BE(2, 21);
    assert.throws(() => scanRecordSet(snappy, 0, 10, [], () => undefined), /compressed with snappy/);
    snappy.writeInt16BE(3, 21);
    assert.throws(() => scanRecordSet(snappy, 0, 10, [], () => undefined), /compressed with lz4/);
    snappy.writeInt16BE(4, 21);
    assert.throws(() => scanRecordSet(snappy, 0, 10, [], () => undefined), /compressed with zstd; the verifier reads uncompressed and gzip batches/);
    const old = batch({ base: 0, records: [{ offsetDelta: 0, value: v('x') }] });
    old.writeInt8(1, 16);
    assert.throws(() => scanRecordSet(old, 0, 10, [], () => undefined), /magic 1/);
  });

  test('a Fetch v11 response: partitions with their error codes, offsets, aborted transactions (sorted) and record sets', () => {
    const records = recordSet();
    const parts: Buffer[] = [];
    const int = (n: number, w: 2 | 4) => {
      const b = Buffer.alloc(w);
      if (w === 2) b.writeInt16BE(n);
      else b.writeInt32BE(n);
      return b;
    };
    const long = (n: bigint) => {
      const b = Buffer.alloc(8);
      b.writeBigInt64BE(n);
      return b;
    };
    parts.push(int(250, 4), int(0, 2), int(99, 4)); // throttle, error, session
    parts.push(int(1, 4), int(5, 2), Buffer.from('sink1'), int(4, 4)); // one topic, four partitions
    parts.push(int(4, 4), int(6, 2), long(-1n), long(-1n), long(-1n), int(0, 4), int(-1, 4), int(-1, 4));
    parts.push(int(5, 4), int(0, 2), long(0n), long(0n), long(0n), int(0, 4), int(-1, 4), int(0, 4));
    parts.push(int(3, 4), int(0, 2), long(20n), long(12n), long(0n), int(2, 4), long(9n), long(8n), long(7n), long(3n), int(-1, 4), int(records.length, 4), records);
    // After a partition with records: read where its records end.
    parts.push(int(8, 4), int(0, 2), long(1n), long(1n), long(0n), int(0, 4), int(-1, 4), int(0, 4));
    const res = decodeFetchResponse(Buffer.concat(parts));
    assert.equal(res.throttleTimeMs, 250);
    assert.equal(res.errorCode, 0);
    assert.equal(res.partitions.length, 4);
    const [b, empty, a, last] = res.partitions;
    assert.deepEqual(last, { topic: 'sink1', partition: 8, errorCode: 0, highWatermark: 1, lastStableOffset: 1, logStartOffset: 0, aborted: [], records: null });
    assert.equal(empty!.records, null, 'an empty record set');
    assert.equal(empty!.partition, 5);
    assert.deepEqual({ ...a!, records: a!.records!.length }, { topic: 'sink1', partition: 3, errorCode: 0, highWatermark: 20, lastStableOffset: 12, logStartOffset: 0, aborted: [{ producerId: 7n, firstOffset: 3 }, { producerId: 9n, firstOffset: 8 }], records: records.length });
    assert.deepEqual({ ...b!, records: b!.records }, { topic: 'sink1', partition: 4, errorCode: 6, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, aborted: [], records: null });
  });
});
