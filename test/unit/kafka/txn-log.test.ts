// The __transaction_state decoder (src/kafka/txn-log.ts) on keys and values that Kafka's own
// generated classes wrote (kafka-transaction-coordinator 4.4.0, MessageUtil.toVersionPrefixedBytes;
// test/fixtures/txn-messages/KafkaMessageFixtures.java): value v0, v1 without tags, v1 with every
// tag (previous/next producer id, next epoch, client transaction version), v1 with an unknown tag.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { TRANSACTION_STATES, applyTxnLogRecord, logRecords, decodeTxnLogKey, decodeTxnLogRecord, decodeTxnLogValue, holdsLso, transactionStateName, type TxnLogValue } from '../../../src/kafka/txn-log.js';
import { zigzag } from '../../harness/varint.js';

const KAFKA = {
  logKey: '000000056170702d31',
  logValueV0Ongoing:
    '000000000000000003e800030000ea60010000000200036f757400000002000000000000000300096368616e67656c6f6700000001000000070000019adb8c5ee70000019adb8c5b7b',
  logValueV1NoTags: '000100000000000003e800030000ea600103046f7574030000000000000003000a6368616e67656c6f670200000007000000019adb8c5ee70000019adb8c5b7b00',
  logValueV1CompleteCommitTags: '000100000000000003e800030000ea6004000000019adb8c5ee70000019adb8c5b7b04000800000000000003e7010800000000000003e90202000203020000',
  logValueV1FenceUnknownTag: '000100000000000003e800030000ea600703046f7574030000000000000003000a6368616e67656c6f670200000007000000019adb8c5ee70000019adb8c5b7b012a020909',
  logValueV0Empty: '000000000000000003e800030000ea6000ffffffff0000019adb8c5ee7ffffffffffffffff',
};
const hex = (k: keyof typeof KAFKA): Buffer => Buffer.from(KAFKA[k], 'hex');

const ongoing: TxnLogValue = {
  version: 0,
  producerId: 1000,
  previousProducerId: -1,
  nextProducerId: -1,
  nextProducerEpoch: -1,
  producerEpoch: 3,
  transactionTimeoutMs: 60000,
  stateId: 1,
  state: 'Ongoing',
  partitions: [
    { topic: 'out', partitionIds: [0, 3] },
    { topic: 'changelog', partitionIds: [7] },
  ],
  lastUpdateTimestampMs: 1764620000999,
  startTimestampMs: 1764620000123,
  clientTransactionVersion: 0,
  unknownTags: [],
};

describe('__transaction_state decoder', () => {
  test('key v0: the transactional id', () => {
    assert.deepEqual(decodeTxnLogKey(hex('logKey')), { version: 0, transactionalId: 'app-1' });
  });

  test('value v0 (non-flexible): an ongoing transaction with its partitions', () => {
    assert.deepEqual(decodeTxnLogValue(hex('logValueV0Ongoing')), ongoing);
  });

  test('value v0 with null partitions (Empty)', () => {
    const v = decodeTxnLogValue(hex('logValueV0Empty'));
    assert.equal(v.state, 'Empty');
    assert.equal(v.partitions, null);
    assert.equal(v.startTimestampMs, -1);
  });

  test('value v1 without tags: the same fields, tags at their defaults', () => {
    assert.deepEqual(decodeTxnLogValue(hex('logValueV1NoTags')), { ...ongoing, version: 1 });
  });

  test('value v1 with every tag: previous and next producer id, next epoch, client transaction version', () => {
    assert.deepEqual(decodeTxnLogValue(hex('logValueV1CompleteCommitTags')), {
      ...ongoing,
      version: 1,
      stateId: 4,
      state: 'CompleteCommit',
      partitions: null,
      previousProducerId: 999,
      nextProducerId: 1001,
      nextProducerEpoch: 0,
      clientTransactionVersion: 2,
    });
  });

  test('value v1 with a tag this decoder does not know: skipped and reported', () => {
    const v = decodeTxnLogValue(hex('logValueV1FenceUnknownTag'));
    assert.equal(v.state, 'PrepareEpochFence');
    assert.deepEqual(v.unknownTags, [42]);
    assert.deepEqual(v.partitions, ongoing.partitions);
  });

  test('records: a value, a tombstone (expired id), an unknown key version', () => {
    assert.deepEqual(decodeTxnLogRecord(hex('logKey'), hex('logValueV0Ongoing')), { kind: 'transaction', transactionalId: 'app-1', value: ongoing });
    assert.deepEqual(decodeTxnLogRecord(hex('logKey'), null), { kind: 'tombstone', transactionalId: 'app-1' });
    assert.deepEqual(decodeTxnLogRecord(Buffer.from('00050000', 'hex'), hex('logValueV0Ongoing')), { kind: 'unknown-key', keyVersion: 5 });
    assert.throws(() => decodeTxnLogRecord(null, null), /null key/);
  });

  test('the last record of an id wins; a tombstone removes it', () => {
    const state = new Map<string, TxnLogValue>();
    applyTxnLogRecord(state, decodeTxnLogRecord(hex('logKey'), hex('logValueV0Ongoing')));
    applyTxnLogRecord(state, decodeTxnLogRecord(hex('logKey'), hex('logValueV1CompleteCommitTags')));
    assert.equal(state.get('app-1')?.state, 'CompleteCommit');
    applyTxnLogRecord(state, decodeTxnLogRecord(hex('logKey'), null));
    assert.equal(state.size, 0);
  });

  test('states by byte value, and which of them hold the LSO', () => {
    assert.deepEqual(
      TRANSACTION_STATES.map((_, i) => transactionStateName(i)),
      ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'],
    );
    assert.deepEqual(
      TRANSACTION_STATES.filter(holdsLso),
      ['Ongoing', 'PrepareCommit', 'PrepareAbort', 'PrepareEpochFence'],
    );
    assert.throws(() => transactionStateName(8), /unknown TransactionStatus 8 \(expected 0-7\)/);
  });

  test('bad input: an unknown value version, a truncated value, trailing bytes, an unknown state', () => {
    assert.throws(() => decodeTxnLogValue(Buffer.from('0002', 'hex')), /__transaction_state value: version 2 is not known \(expected 0-1\)/);
    const v0 = hex('logValueV0Ongoing');
    assert.throws(() => decodeTxnLogValue(v0.subarray(0, v0.length - 3)), /__transaction_state value: truncated at byte \d+ of \d+, reading TransactionStartTimestampMs/);
    assert.throws(() => decodeTxnLogValue(Buffer.concat([v0, Buffer.from([0])])), /1 bytes left over/);
    const bad = Buffer.from(v0);
    bad[16] = 9; // TransactionStatus: after version (2), producer id (8), epoch (2), timeout (4)
    assert.throws(() => decodeTxnLogValue(bad), /unknown TransactionStatus 9/);
  });
});

/** A magic-2 record batch as the coordinator writes it (CRC not checked by the walker, left 0). */
function batch(baseOffset: number, records: { key: Buffer; value: Buffer | null; tsDelta: number }[], attributes = 0): Buffer {
  const recs = records.map((r, i) => {
    const body = Buffer.from([0, ...zigzag(r.tsDelta), ...zigzag(i), ...zigzag(r.key.length), ...r.key, ...(r.value ? [...zigzag(r.value.length), ...r.value] : zigzag(-1)), ...zigzag(0)]);
    return Buffer.concat([Buffer.from(zigzag(body.length)), body]);
  });
  const h = Buffer.alloc(61);
  h.writeBigInt64BE(BigInt(baseOffset), 0);
  h.writeInt8(2, 16);
  h.writeInt16BE(attributes, 21);
  h.writeInt32BE(records.length - 1, 23);
  h.writeBigInt64BE(1764620000000n, 27);
  h.writeBigInt64BE(-1n, 43);
  h.writeInt32BE(records.length, 57);
  const b = Buffer.concat([h, ...recs]);
  b.writeInt32BE(b.length - 12, 8);
  return b;
}

describe('record batches of __transaction_state', () => {
  const key = hex('logKey');
  const value = hex('logValueV0Ongoing');

  test('keys and values (a tombstone as null) with offsets and timestamps; a cut-off batch is left for the next fetch', () => {
    const b1 = batch(10, [
      { key, value, tsDelta: 0 },
      { key, value: null, tsDelta: 5 },
    ]);
    const b2 = batch(12, [{ key, value, tsDelta: 1 }]);
    const got = logRecords(Buffer.concat([b1, b2.subarray(0, b2.length - 4)]), 11);
    assert.equal(got.nextOffset, 12);
    assert.deepEqual(
      got.records.map((r) => ({ offset: r.offset, ts: r.timestampMs, record: decodeTxnLogRecord(r.key, r.value) })),
      [{ offset: 11, ts: 1764620000005, record: { kind: 'tombstone', transactionalId: 'app-1' } }],
    );
    const all = logRecords(Buffer.concat([b1, b2]), 0);
    assert.deepEqual(all.records.map((r) => r.offset), [10, 11, 12]);
    assert.equal(all.nextOffset, 13);
    assert.deepEqual(decodeTxnLogRecord(all.records[2]!.key, all.records[2]!.value), { kind: 'transaction', transactionalId: 'app-1', value: ongoing });
  });

  test('control batches are skipped; a compressed batch or another magic is refused', () => {
    const control = batch(3, [{ key, value, tsDelta: 0 }], 0x20);
    assert.deepEqual(logRecords(control, 0), { records: [], nextOffset: 4 });
    assert.throws(() => logRecords(batch(5, [{ key, value, tsDelta: 0 }], 1), 0), /batch at offset 5: compressed \(codec 1\)/);
    const old = batch(6, [{ key, value, tsDelta: 0 }]);
    old.writeInt8(1, 16);
    assert.throws(() => logRecords(old, 0), /batch at offset 6: magic 1 \(expected 2\)/);
  });
});

// ---- hand-built values: every field, each tag, each state, every truncation -----------------------

/** One field as written, with the name the decoder gives it in its errors; a count says how many items follow. */
interface Seg {
  label: string;
  bytes: number[];
  count?: number;
  /** An unsigned varint: the decoder asks for its bytes one at a time. */
  varint?: true;
}
const be = (n: bigint | number, size: number): number[] => {
  const b = Buffer.alloc(size);
  if (size === 8) b.writeBigInt64BE(BigInt(n));
  else if (size === 4) b.writeInt32BE(Number(n));
  else if (size === 2) b.writeInt16BE(Number(n));
  else b.writeInt8(Number(n));
  return [...b];
};
function uvarint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

interface Spec {
  producerId: number;
  producerEpoch: number;
  timeoutMs: number;
  stateId: number;
  partitions: { topic: string; ids: number[] | null; tags?: number[] }[] | null;
  lastUpdate: number;
  start: number;
  /** v1 only: tagged fields as [tag, content]. */
  tags?: [number, number[]][];
}

function valueSegs(version: 0 | 1, s: Spec): Seg[] {
  const flex = version === 1;
  const segs: Seg[] = [
    { label: 'version', bytes: be(version, 2) },
    { label: 'ProducerId', bytes: be(s.producerId, 8) },
    { label: 'ProducerEpoch', bytes: be(s.producerEpoch, 2) },
    { label: 'TransactionTimeoutMs', bytes: be(s.timeoutMs, 4) },
    { label: 'TransactionStatus', bytes: be(s.stateId, 1) },
  ];
  const count = (label: string, n: number | null): Seg =>
    flex ? { label, bytes: uvarint(n === null ? 0 : n + 1), count: n ?? 0, varint: true } : { label, bytes: be(n ?? -1, 4), count: n ?? 0 };
  const v = (label: string, n: number): Seg => ({ label, bytes: uvarint(n), varint: true });
  segs.push(count('TransactionPartitions count', s.partitions ? s.partitions.length : null));
  for (const p of s.partitions ?? []) {
    const t = [...Buffer.from(p.topic)];
    segs.push(flex ? v('TransactionPartitions[].Topic length', t.length + 1) : { label: 'TransactionPartitions[].Topic length', bytes: be(t.length, 2) }, { label: 'TransactionPartitions[].Topic', bytes: t });
    segs.push(count('PartitionIds count', p.ids ? p.ids.length : null));
    for (const id of p.ids ?? []) segs.push({ label: 'PartitionIds[]', bytes: be(id, 4) });
    if (flex) {
      const tags = p.tags ?? [];
      segs.push(v('TransactionPartitions[] tagged field count', tags.length));
      for (const tag of tags) segs.push(v('TransactionPartitions[] tag', tag), v(`TransactionPartitions[] tag ${tag} size`, 1), { label: `TransactionPartitions[] tag ${tag}`, bytes: [0x55] });
    }
  }
  segs.push({ label: 'TransactionLastUpdateTimestampMs', bytes: be(s.lastUpdate, 8) }, { label: 'TransactionStartTimestampMs', bytes: be(s.start, 8) });
  if (flex) {
    const tags = s.tags ?? [];
    segs.push(v('TransactionLogValue tagged field count', tags.length));
    for (const [tag, content] of tags) segs.push(v('TransactionLogValue tag', tag), v(`TransactionLogValue tag ${tag} size`, content.length), { label: `TransactionLogValue tag ${tag}`, bytes: content });
  }
  return segs;
}
const joined = (segs: Seg[]): Buffer => Buffer.from(segs.flatMap((s) => s.bytes));

const SPEC: Spec = {
  producerId: 4242,
  producerEpoch: 17,
  timeoutMs: 45_000,
  stateId: 3,
  partitions: [
    { topic: 'ab', ids: [5, 6] },
    { topic: 'c', ids: [0] },
  ],
  lastUpdate: 1_764_620_000_777,
  start: 1_764_620_000_111,
};
const EVERY_TAG: [number, number[]][] = [
  [0, be(4241, 8)],
  [1, be(4243, 8)],
  [2, be(2, 2)],
  [3, be(18, 2)],
  [5, [1, 2, 3]],
  [9, []],
];
const decoded = (over: Partial<TxnLogValue> = {}): TxnLogValue => ({
  version: 0,
  producerId: 4242,
  previousProducerId: -1,
  nextProducerId: -1,
  nextProducerEpoch: -1,
  producerEpoch: 17,
  transactionTimeoutMs: 45_000,
  stateId: 3,
  state: 'PrepareAbort',
  partitions: [
    { topic: 'ab', partitionIds: [5, 6] },
    { topic: 'c', partitionIds: [0] },
  ],
  lastUpdateTimestampMs: 1_764_620_000_777,
  startTimestampMs: 1_764_620_000_111,
  clientTransactionVersion: 0,
  unknownTags: [],
  ...over,
});

describe('__transaction_state values built by hand', () => {
  test('v0: every field exactly as written', () => {
    assert.deepEqual(decodeTxnLogValue(joined(valueSegs(0, SPEC))), decoded());
  });

  test('v1 with every known tag and two unknown ones: each tag to its field, the unknown ones listed in order', () => {
    assert.deepEqual(decodeTxnLogValue(joined(valueSegs(1, { ...SPEC, tags: EVERY_TAG }))), decoded({
      version: 1,
      previousProducerId: 4241,
      nextProducerId: 4243,
      clientTransactionVersion: 2,
      nextProducerEpoch: 18,
      unknownTags: [5, 9],
    }));
  });

  test('v1 with one tag only: that field, the others at their defaults; tags on a partition are skipped', () => {
    for (const [tag, field, v] of [
      [0, 'previousProducerId', 4241],
      [1, 'nextProducerId', 4243],
      [2, 'clientTransactionVersion', 2],
      [3, 'nextProducerEpoch', 18],
    ] as const) {
      const spec = { ...SPEC, tags: EVERY_TAG.filter(([t]) => t === tag), partitions: [{ topic: 'ab', ids: [5, 6], tags: [0, 4] }, { topic: 'c', ids: [0] }] };
      assert.deepEqual(decodeTxnLogValue(joined(valueSegs(1, spec))), decoded({ version: 1, [field]: v }), `tag ${tag}`);
    }
    assert.deepEqual(decodeTxnLogValue(joined(valueSegs(1, SPEC))), decoded({ version: 1 }));
  });

  test('each state number, in v0 and v1, with null and empty partition lists', () => {
    for (const version of [0, 1] as const) {
      for (const [stateId, state] of TRANSACTION_STATES.entries()) {
        const partitions = stateId % 2 === 0 ? null : [];
        const v = decodeTxnLogValue(joined(valueSegs(version, { ...SPEC, stateId, partitions })));
        assert.deepEqual(v, decoded({ version, stateId, state, partitions }), `v${version} state ${stateId}`);
      }
      assert.throws(() => decodeTxnLogValue(joined(valueSegs(version, { ...SPEC, stateId: 8 }))), { name: 'ProtocolDecodeError', message: '__transaction_state value: unknown TransactionStatus 8 (expected 0-7)' });
      assert.throws(() => decodeTxnLogValue(joined(valueSegs(version, { ...SPEC, stateId: -1 }))), { message: '__transaction_state value: unknown TransactionStatus -1 (expected 0-7)' });
    }
  });

  test('a value cut at any byte: an error naming the field it stopped in (v0, and v1 with every tag)', () => {
    for (const segs of [valueSegs(0, SPEC), valueSegs(1, { ...SPEC, tags: EVERY_TAG })]) {
      const full = joined(segs);
      for (let cut = 0; cut < full.length; cut++) {
        // The decoder's own account, worked out from the layout: the first field not wholly in
        // the cut, unless a count before it promises more items than bytes are left.
        let at = 0;
        let expected = '';
        for (const s of segs) {
          if (at + s.bytes.length > cut) {
            expected = `__transaction_state value: truncated at byte ${at} of ${cut}, reading ${s.label} (${s.varint ? 1 : s.bytes.length} bytes needed)`;
            break;
          }
          at += s.bytes.length;
          if (s.count !== undefined && s.count > cut - at) {
            expected = `__transaction_state value: ${s.label.replace(/ count$/, '')} count ${s.count} at byte ${at} exceeds the message`;
            break;
          }
        }
        assert.throws(() => decodeTxnLogValue(full.subarray(0, cut)), { name: 'ProtocolDecodeError', message: expected }, `cut at ${cut}`);
      }
      assert.throws(() => decodeTxnLogValue(Buffer.concat([full, Buffer.from([0, 0])])), { message: `__transaction_state value: 2 bytes left over after byte ${full.length}` });
    }
  });

  test('a known tag shorter or longer than its field: an error naming the tag and the field', () => {
    const at = joined(valueSegs(1, { ...SPEC, tags: [] })).length - 1; // where the tag section starts
    for (const [tag, field, size] of [
      [0, 'PreviousProducerId', 8],
      [1, 'NextProducerId', 8],
      [2, 'ClientTransactionVersion', 2],
      [3, 'NextProducerEpoch', 2],
    ] as const) {
      const short = joined(valueSegs(1, { ...SPEC, tags: [[tag, new Array<number>(size - 1).fill(0)]] }));
      assert.throws(() => decodeTxnLogValue(short), {
        message: `__transaction_state value TransactionLogValue tag ${tag}: truncated at byte ${at + 3} of ${at + 3 + size - 1}, reading ${field} (${size} bytes needed)`,
      });
      const long = joined(valueSegs(1, { ...SPEC, tags: [[tag, new Array<number>(size + 1).fill(0)]] }));
      assert.throws(() => decodeTxnLogValue(long), { message: `__transaction_state value: TransactionLogValue tag ${tag} is ${size + 1} bytes but its value took ${size}` });
    }
  });

  test('null PartitionIds of a partition: refused, naming the topic (v0 and v1)', () => {
    for (const version of [0, 1] as const) {
      const v = joined(valueSegs(version, { ...SPEC, partitions: [{ topic: 'ab', ids: null }] }));
      assert.throws(() => decodeTxnLogValue(v), { name: 'ProtocolDecodeError', message: '__transaction_state value: PartitionIds of ab is null where an array is required' });
    }
  });

  test('value versions outside 0-1 are refused before anything else is read', () => {
    for (const version of [-1, 2, 3]) {
      const v = Buffer.concat([Buffer.from(be(version, 2)), joined(valueSegs(0, SPEC)).subarray(2)]);
      assert.throws(() => decodeTxnLogValue(v), { name: 'ProtocolDecodeError', message: `__transaction_state value: version ${version} is not known (expected 0-1)` });
    }
    assert.throws(() => decodeTxnLogValue(Buffer.from([0])), { message: '__transaction_state value: truncated at byte 0 of 1, reading version (2 bytes needed)' });
  });

  test('keys: truncated, null, with trailing bytes, another version', () => {
    const key = hex('logKey');
    assert.throws(() => decodeTxnLogKey(key.subarray(0, 1)), { name: 'ProtocolDecodeError', message: '__transaction_state key: truncated at byte 0 of 1, reading version (2 bytes needed)' });
    assert.throws(() => decodeTxnLogKey(key.subarray(0, 3)), { message: '__transaction_state key: truncated at byte 2 of 3, reading TransactionalId length (2 bytes needed)' });
    assert.throws(() => decodeTxnLogKey(key.subarray(0, 8)), { message: '__transaction_state key: truncated at byte 4 of 8, reading TransactionalId (5 bytes needed)' });
    assert.throws(() => decodeTxnLogKey(Buffer.from('0000ffff', 'hex')), { message: '__transaction_state key: TransactionalId is null where a string is required' });
    assert.throws(() => decodeTxnLogKey(Buffer.concat([key, Buffer.from([7])])), { message: '__transaction_state key: 1 bytes left over after byte 9' });
    assert.deepEqual(decodeTxnLogKey(Buffer.from('0001ffffff', 'hex')), { version: 1, transactionalId: null });
    assert.deepEqual(decodeTxnLogKey(Buffer.from('00000000', 'hex')), { version: 0, transactionalId: '' });
  });

  test('an unknown key version or a tombstone leaves the other ids as they were', () => {
    const state = new Map<string, TxnLogValue>([['app-1', ongoing]]);
    applyTxnLogRecord(state, decodeTxnLogRecord(Buffer.from('0001', 'hex'), null));
    assert.deepEqual([...state.keys()], ['app-1']);
    applyTxnLogRecord(state, { kind: 'tombstone', transactionalId: 'app-2' });
    assert.deepEqual([...state.keys()], ['app-1']);
  });
});

/** A record's body as bytes (attributes, timestamp delta, offset delta, key, value, headers). */
function recordBody(r: { tsDelta?: number; offsetDelta: number; key: Buffer | null; value: Buffer | null; headers?: number[] }): number[] {
  const bytes = (b: Buffer | null) => (b ? [...zigzag(b.length), ...b] : zigzag(-1));
  return [0, ...zigzag(r.tsDelta ?? 0), ...zigzag(r.offsetDelta), ...bytes(r.key), ...bytes(r.value), ...(r.headers ?? zigzag(0))];
}
/** A length-prefixed record; `length` overrides the prefix (to make a malformed one). */
const framed = (body: number[], length = body.length): Buffer => Buffer.from([...zigzag(length), ...body]);

function rawBatch(baseOffset: number, recs: Buffer[], o: { count?: number; lastOffsetDelta?: number } = {}): Buffer {
  const h = Buffer.alloc(61);
  h.writeBigInt64BE(BigInt(baseOffset), 0);
  h.writeInt8(2, 16);
  h.writeInt32BE(o.lastOffsetDelta ?? recs.length - 1, 23);
  h.writeBigInt64BE(1764620000000n, 27);
  h.writeInt32BE(o.count ?? recs.length, 57);
  const b = Buffer.concat([h, ...recs]);
  b.writeInt32BE(b.length - 12, 8);
  return b;
}

describe('record batches of __transaction_state: edge cases and malformed input', () => {
  const key = hex('logKey');
  const value = hex('logValueV0Ongoing');
  const ok = (offsetDelta: number, over: Partial<Parameters<typeof recordBody>[0]> = {}) => framed(recordBody({ offsetDelta, key, value, ...over }));

  test('nothing, or less than a batch header\'s first 12 bytes: no records, the offset stays', () => {
    assert.deepEqual(logRecords(Buffer.alloc(0), 7), { records: [], nextOffset: 7 });
    const b = rawBatch(7, [ok(0)]);
    assert.deepEqual(logRecords(b.subarray(0, 11), 7), { records: [], nextOffset: 7 });
    assert.deepEqual(logRecords(Buffer.concat([b, b.subarray(0, 11)]), 7), { records: [{ offset: 7, timestampMs: 1764620000000, key, value }], nextOffset: 8 });
  });

  test('batches before the offset asked for: their records left out, the offset asked for kept', () => {
    assert.deepEqual(logRecords(Buffer.concat([rawBatch(3, [ok(0), ok(1)]), rawBatch(5, [ok(0)])]), 20), { records: [], nextOffset: 20 });
  });

  test('an empty batch (compaction keeps one for its producer state): no records, the offset moves past it', () => {
    const empty = rawBatch(40, [], { lastOffsetDelta: 2 });
    assert.equal(empty.length, 61);
    assert.deepEqual(logRecords(Buffer.concat([empty, rawBatch(43, [ok(0)])]), 0), { records: [{ offset: 43, timestampMs: 1764620000000, key, value }], nextOffset: 44 });
  });

  test('a null key, an empty key and value, a negative timestamp delta, headers skipped', () => {
    const recs = [
      framed(recordBody({ offsetDelta: 0, key: null, value })),
      framed(recordBody({ offsetDelta: 1, key: Buffer.alloc(0), value: Buffer.alloc(0), tsDelta: -3 })),
      framed(recordBody({ offsetDelta: 2, key, value: null, tsDelta: 200, headers: [...zigzag(1), ...zigzag(1), 0x68, ...zigzag(2), 0x76, 0x76] })),
      ok(3, { tsDelta: -70 }),
    ];
    assert.deepEqual(logRecords(rawBatch(100, recs), 0), {
      records: [
        { offset: 100, timestampMs: 1764620000000, key: null, value },
        { offset: 101, timestampMs: 1764619999997, key: Buffer.alloc(0), value: Buffer.alloc(0) },
        { offset: 102, timestampMs: 1764620000200, key, value: null },
        { offset: 103, timestampMs: 1764619999930, key, value },
      ],
      nextOffset: 104,
    });
  });

  test('a batch length shorter than a batch header: refused (it would walk backwards)', () => {
    for (const len of [0, -12, 48]) {
      const b = Buffer.alloc(12);
      b.writeBigInt64BE(9n, 0);
      b.writeInt32BE(len, 8);
      assert.throws(() => logRecords(b, 0), { name: 'ProtocolDecodeError', message: `__transaction_state record batch at offset 9: length ${len} is shorter than a batch header (49 bytes)` });
    }
  });

  test('more records counted than the batch holds: an error naming the record, not bytes of the next batch', () => {
    const short = rawBatch(50, [ok(0)], { count: 2 });
    const where = '__transaction_state record batch at offset 50, record 1';
    assert.throws(() => logRecords(short, 0), { message: `${where}: truncated at byte ${short.length}, reading record length` });
    assert.throws(() => logRecords(Buffer.concat([short, rawBatch(51, [ok(0)])]), 0), { message: `${where}: truncated at byte ${short.length}, reading record length` });
  });

  test('malformed records: each error names the batch, the record and the field', () => {
    const where = '__transaction_state record batch at offset 60, record 0';
    const body = recordBody({ offsetDelta: 0, key, value });
    const noValue = recordBody({ offsetDelta: 0, key, value: null }).slice(0, -2); // up to the key, no value length
    const noHeaders = framed(body.slice(0, -1)); // the value ends the record: no header count
    const cases: [Buffer, string][] = [
      [framed(body, body.length + 1), `${where}: length ${body.length + 1} runs past its batch`],
      [Buffer.concat([framed([], 0), Buffer.from(body)]), `${where}: truncated at byte 62, reading attributes`],
      [Buffer.concat([framed([0], 1), Buffer.from(body.slice(1))]), `${where}: truncated at byte 63, reading timestamp delta`],
      [Buffer.concat([framed([0, 0], 2), Buffer.from(body.slice(2))]), `${where}: truncated at byte 64, reading offset delta`],
      [Buffer.concat([framed([0, 0, 0], 3), Buffer.from(body.slice(3))]), `${where}: truncated at byte 65, reading key length`],
      [Buffer.concat([framed(noValue), Buffer.from(zigzag(value.length)), value, Buffer.from([0])]), `${where}: truncated at byte ${62 + noValue.length}, reading value length`],
      [Buffer.concat([framed(body.slice(0, 4 + key.length - 1)), Buffer.from(body.slice(4 + key.length - 1))]), `${where}: key of 9 bytes at byte 66 runs past its record`],
      [Buffer.concat([framed(noValue.concat(zigzag(value.length))), value]), `${where}: value of ${value.length} bytes at byte ${62 + noValue.length + 2} runs past its record`],
      [Buffer.concat([noHeaders, Buffer.from([0])]), `${where}: truncated at byte ${61 + noHeaders.length}, reading header count`],
      [Buffer.from([...new Array<number>(10).fill(0x80), 0, ...body]), `${where}: record length is a varint longer than 10 bytes`],
      [Buffer.from([...zigzag(14), 0, ...new Array<number>(10).fill(0x81), 0, 0, 0, 0]), `${where}: timestamp delta is a varint longer than 10 bytes`],
    ];
    for (const [rec, message] of cases) assert.throws(() => logRecords(rawBatch(60, [rec]), 0), { name: 'ProtocolDecodeError', message }, message);
  });
});
