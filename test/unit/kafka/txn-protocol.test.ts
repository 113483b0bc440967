// The codec of the transaction coordinator's admin APIs (src/kafka/txn-protocol.ts) on bytes that
// Kafka's own generated message classes wrote (kafka-clients 4.4.0,
// test/fixtures/txn-messages/KafkaMessageFixtures.java): every request this codec encodes equals
// Kafka's bytes for the same message, every response Kafka encodes decodes to the fields it was built from.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  DESCRIBE_PRODUCERS,
  DESCRIBE_TRANSACTIONS,
  LIST_TRANSACTIONS,
  decodeDescribeProducersResponse,
  decodeDescribeTransactionsResponse,
  decodeListTransactionsResponse,
  encodeDescribeProducersRequest,
  encodeDescribeTransactionsRequest,
  encodeListTransactionsRequest,
  negotiateVersion,
} from '../../../src/kafka/txn-protocol.js';
import { ProtocolDecodeError, bodyAfterHeaderV1, decodeResponseHeaderV1, encodeRequestFrame, encodeRequestHeaderV2, skipResponseHeaderV1Tail } from '../../../src/kafka/wire.js';

/** Hex printed by KafkaMessageFixtures.java (Kafka 4.4.0's serializers). */
const KAFKA = {
  requestHeaderV2: '00420001000000070008656f73776174636800',
  responseHeaderV1: '0000000700',
  listTxnReqV0: '03084f6e676f696e670e50726570617265436f6d6d697403000000000000002a000000000000012c00',
  listTxnReqV0Empty: '010100',
  listTxnReqV1: '03084f6e676f696e670e50726570617265436f6d6d697403000000000000002a000000000000012c000000000000ea6000',
  listTxnReqV1NoFilter: '0101ffffffffffffffff00',
  listTxnReqV2: '03084f6e676f696e670e50726570617265436f6d6d697403000000000000002a000000000000012c000000000000ea60076170702d2e2a00',
  listTxnReqV2NoFilter: '0101ffffffffffffffff0000',
  listTxnResp: '0000000500000206426f67757303066170702d3100000000000003e8084f6e676f696e6700076170702dc3a9000001d1a94a20000f436f6d706c657465436f6d6d69740000',
  listTxnRespLoadingUnknownTag: '00000000000e0101016303010203',
  describeTxnReq: '03066170702d31066170702d3200',
  describeTxnResp:
    '00000000030000066170702d31084f6e676f696e670000ea600000019adb8c5b7b00000000000003e8000303046f7574030000000000000003000a6368616e67656c6f6702000000070000006905676f6e650100000000ffffffffffffffffffffffffffffffffffff010000',
  describeProducersReq: '02046f75740300000000000000020000',
  describeProducersResp:
    '0000000002046f757403000000000000000300000000000003e800000003000000290000019adb8c5cc8ffffffff00000000000000110000000000000003e900000000ffffffffffffffffffffffff00000002ffffffffffffffff00000000000200060f6e6f7420746865206c656164657201000000',
};
const hex = (k: keyof typeof KAFKA): Buffer => Buffer.from(KAFKA[k], 'hex');

describe('headers', () => {
  test('request header v2 equals Kafka bytes; kafkajs header v1 + the body prefix is the same frame', () => {
    const h = { apiKey: LIST_TRANSACTIONS, apiVersion: 1, correlationId: 7, clientId: 'eoswatch' };
    assert.equal(encodeRequestHeaderV2(h).toString('hex'), KAFKA.requestHeaderV2);
    const body = encodeListTransactionsRequest({}, 1);
    // What kafkajs sends: int32 size, key, version, correlation id, int16 client id, then our bytes.
    const headerV1 = Buffer.from('00420001000000070008656f73776174636800', 'hex').subarray(0, -1);
    const kafkajsPayload = Buffer.concat([headerV1, bodyAfterHeaderV1(body)]);
    const frame = encodeRequestFrame(h, body);
    assert.equal(frame.readInt32BE(0), kafkajsPayload.length);
    assert.deepEqual(frame.subarray(4), kafkajsPayload);
  });

  test('response header v1: correlation id, then the tagged-field section is skipped', () => {
    const withBody = Buffer.concat([hex('responseHeaderV1'), hex('listTxnRespLoadingUnknownTag')]);
    const h = decodeResponseHeaderV1(withBody);
    assert.equal(h.correlationId, 7);
    assert.equal(h.bodyOffset, 5);
    // kafkajs hands the decoder what follows the correlation id.
    const after = withBody.subarray(4);
    const offset = skipResponseHeaderV1Tail(after, 'ListTransactions');
    assert.equal(offset, 1);
    assert.equal(decodeListTransactionsResponse(after, 0, offset).errorCode, 14);
  });

  test('a response header with a tagged field is skipped whole', () => {
    const b = Buffer.from('0000000701050201020304', 'hex'); // 1 tag: tag 5, size 2, then body 03 04
    assert.equal(decodeResponseHeaderV1(b).bodyOffset, 9);
  });
});

describe('ListTransactions', () => {
  const filter = { states: ['Ongoing', 'PrepareCommit'], producerIds: [42, 300] };

  test('v0, v1 and v2 requests equal Kafka bytes, with and without filters', () => {
    assert.equal(encodeListTransactionsRequest(filter, 0).toString('hex'), KAFKA.listTxnReqV0);
    assert.equal(encodeListTransactionsRequest({}, 0).toString('hex'), KAFKA.listTxnReqV0Empty);
    assert.equal(encodeListTransactionsRequest({ ...filter, durationMs: 60000 }, 1).toString('hex'), KAFKA.listTxnReqV1);
    assert.equal(encodeListTransactionsRequest({}, 1).toString('hex'), KAFKA.listTxnReqV1NoFilter);
    assert.equal(encodeListTransactionsRequest({ ...filter, durationMs: 60000, transactionalIdPattern: 'app-.*' }, 2).toString('hex'), KAFKA.listTxnReqV2);
    assert.equal(encodeListTransactionsRequest({}, 2).toString('hex'), KAFKA.listTxnReqV2NoFilter);
  });

  test('a filter the version cannot carry is refused, not dropped', () => {
    assert.throws(() => encodeListTransactionsRequest({ durationMs: 1000 }, 0), /v0 has no duration filter.*3\.8/);
    assert.throws(() => encodeListTransactionsRequest({ transactionalIdPattern: 'x' }, 1), /v1 has no transactional id pattern.*4\.1/);
    assert.throws(() => encodeListTransactionsRequest({}, 3), /v3 is not supported/);
  });

  test('response: throttle, unknown state filters, listings (UTF-8 id, producer id beyond 2^32)', () => {
    assert.deepEqual(decodeListTransactionsResponse(hex('listTxnResp'), 1), {
      throttleTimeMs: 5,
      errorCode: 0,
      unknownStateFilters: ['Bogus'],
      transactions: [
        { transactionalId: 'app-1', producerId: 1000, state: 'Ongoing' },
        { transactionalId: 'app-é', producerId: 2_000_000_000_000, state: 'CompleteCommit' },
      ],
    });
  });

  test('response: an error code and an unknown tagged field (skipped)', () => {
    assert.deepEqual(decodeListTransactionsResponse(hex('listTxnRespLoadingUnknownTag'), 0), { throttleTimeMs: 0, errorCode: 14, unknownStateFilters: [], transactions: [] });
  });

  test('a truncated response names the message, the field and the byte', () => {
    const b = hex('listTxnResp');
    assert.throws(
      () => decodeListTransactionsResponse(b.subarray(0, 20), 1),
      (e: unknown) => e instanceof ProtocolDecodeError && /^ListTransactions v1 response: truncated at byte \d+ of 20, reading ProducerId/.test(e.message),
    );
    assert.throws(() => decodeListTransactionsResponse(Buffer.concat([b, Buffer.from([0])]), 1), /1 bytes left over/);
  });
});

describe('DescribeTransactions', () => {
  test('request equals Kafka bytes', () => {
    assert.equal(encodeDescribeTransactionsRequest(['app-1', 'app-2']).toString('hex'), KAFKA.describeTxnReq);
  });

  test('response: an ongoing transaction with its partitions, and a per-entry error', () => {
    assert.deepEqual(decodeDescribeTransactionsResponse(hex('describeTxnResp'), 0), {
      throttleTimeMs: 0,
      transactions: [
        {
          errorCode: 0,
          transactionalId: 'app-1',
          state: 'Ongoing',
          transactionTimeoutMs: 60000,
          transactionStartTimeMs: 1764620000123,
          producerId: 1000,
          producerEpoch: 3,
          topics: [
            { topic: 'out', partitions: [0, 3] },
            { topic: 'changelog', partitions: [7] },
          ],
        },
        { errorCode: 105, transactionalId: 'gone', state: '', transactionTimeoutMs: 0, transactionStartTimeMs: -1, producerId: -1, producerEpoch: -1, topics: [] },
      ],
    });
  });
});

describe('DescribeProducers', () => {
  test('request equals Kafka bytes', () => {
    assert.equal(encodeDescribeProducersRequest([{ topic: 'out', partitions: [0, 2] }]).toString('hex'), KAFKA.describeProducersReq);
  });

  test('response: producers with and without an open transaction, a partition error with its message', () => {
    assert.deepEqual(decodeDescribeProducersResponse(hex('describeProducersResp'), 0), {
      throttleTimeMs: 0,
      topics: [
        {
          topic: 'out',
          partitions: [
            {
              partition: 0,
              errorCode: 0,
              errorMessage: null,
              activeProducers: [
                { producerId: 1000, producerEpoch: 3, lastSequence: 41, lastTimestamp: 1764620000456, coordinatorEpoch: -1, currentTxnStartOffset: 17 },
                { producerId: 1001, producerEpoch: 0, lastSequence: -1, lastTimestamp: -1, coordinatorEpoch: 2, currentTxnStartOffset: -1 },
              ],
            },
            { partition: 2, errorCode: 6, errorMessage: 'not the leader', activeProducers: [] },
          ],
        },
      ],
    });
  });
});

describe('versions', () => {
  test('the highest shared version; null without the API or without an overlap', () => {
    assert.equal(negotiateVersion(LIST_TRANSACTIONS, { minVersion: 0, maxVersion: 1 }), 1);
    assert.equal(negotiateVersion(LIST_TRANSACTIONS, { minVersion: 0, maxVersion: 5 }), 2);
    assert.equal(negotiateVersion(LIST_TRANSACTIONS, { minVersion: 3, maxVersion: 5 }), null);
    assert.equal(negotiateVersion(DESCRIBE_TRANSACTIONS, { minVersion: 0, maxVersion: 0 }), 0);
    assert.equal(negotiateVersion(DESCRIBE_PRODUCERS, undefined), null);
    assert.equal(negotiateVersion(12345, { minVersion: 0, maxVersion: 0 }), null);
  });
});
