// The __transaction_state decoder (src/kafka/txn-log.ts) on keys and values that Kafka's own
// generated classes wrote (kafka-transaction-coordinator 4.4.0, MessageUtil.toVersionPrefixedBytes;
// test/fixtures/txn-messages/KafkaMessageFixtures.java): value v0, v1 without tags, v1 with every
// tag (previous/next producer id, next epoch, client transaction version), v1 with an unknown tag.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { TRANSACTION_STATES, applyTxnLogRecord, logRecords, decodeTxnLogKey, decodeTxnLogRecord, decodeTxnLogValue, holdsLso, transactionStateName, type TxnLogValue } from '../../src/kafka/txn-log.js';

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

function zigzag(n: number): number[] {
  let z = n >= 0 ? n * 2 : -n * 2 - 1;
  const out: number[] = [];
  while (z >= 0x80) {
    out.push((z % 128) | 0x80);
    z = Math.floor(z / 128);
  }
  out.push(z);
  return out;
}

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
