// The __transaction_state decoder (src/kafka/txn-log.ts) on keys and values that Kafka's own
// generated classes wrote (kafka-transaction-coordinator 4.4.0, MessageUtil.toVersionPrefixedBytes;
// test/fixtures/txn-messages/KafkaMessageFixtures.java): value v0, v1 without tags, v1 with every
// tag (previous/next producer id, next epoch, client transaction version), v1 with an unknown tag.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { TRANSACTION_STATES, applyTxnLogRecord, decodeTxnLogKey, decodeTxnLogRecord, decodeTxnLogValue, holdsLso, transactionStateName, type TxnLogValue } from '../../src/kafka/txn-log.js';

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
