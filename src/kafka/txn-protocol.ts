// The transaction coordinator's admin APIs (KIP-664), encoded and decoded by hand: kafkajs 2.2.4
// knows none of them. Pure: buffers in, buffers out, no I/O (src/kafka/txn-admin.ts sends them).
//
// Schemas: Kafka's clients/src/main/resources/common/message/ (the copies in kafka-clients 4.4.0):
//   DescribeProducers (61) v0, DescribeTransactions (65) v0, ListTransactions (66) v0-v2
//   (v1 adds DurationFilter, KIP-994; v2 adds TransactionalIdPattern, KIP-1152),
//   WriteTxnMarkers (27) v1 (what Admin.abortTransaction sends to a partition leader; 3.9 speaks
//   v0-v1, 4.x v1-v2, v2 adds only the marker's TransactionVersion).
// The three KIP-664 APIs are flexible from v0, WriteTxnMarkers from v1: compact strings and arrays (unsigned varint length + 1, 0 = null),
// a tagged-field section after every struct; request header v2 (header v1 + tagged fields),
// response header v1 (correlation id + tagged fields): the primitives and headers are wire.ts, the
// error codes txn-errors.ts.
import { Reader, Writer } from './wire.js';

export const DESCRIBE_PRODUCERS = 61;
export const DESCRIBE_TRANSACTIONS = 65;
export const LIST_TRANSACTIONS = 66;
export const WRITE_TXN_MARKERS = 27;

export const API_NAMES: Readonly<Record<number, string>> = {
  [DESCRIBE_PRODUCERS]: 'DescribeProducers',
  [DESCRIBE_TRANSACTIONS]: 'DescribeTransactions',
  [LIST_TRANSACTIONS]: 'ListTransactions',
  [WRITE_TXN_MARKERS]: 'WriteTxnMarkers',
};

/** The versions this codec speaks, per API key. */
export const CODEC_VERSIONS: Readonly<Record<number, { min: number; max: number }>> = {
  [DESCRIBE_PRODUCERS]: { min: 0, max: 0 },
  [DESCRIBE_TRANSACTIONS]: { min: 0, max: 0 },
  [LIST_TRANSACTIONS]: { min: 0, max: 2 },
  [WRITE_TXN_MARKERS]: { min: 1, max: 1 },
};

/**
 * The highest version both this codec and the broker (its ApiVersions range) speak, or null when
 * the broker does not have the API (Kafka before 3.0) or no version is shared.
 */
export function negotiateVersion(apiKey: number, broker: { minVersion: number; maxVersion: number } | undefined | null): number | null {
  const mine = CODEC_VERSIONS[apiKey];
  if (!mine || !broker) return null;
  const v = Math.min(mine.max, broker.maxVersion);
  return v >= Math.max(mine.min, broker.minVersion) ? v : null;
}

// ---- ListTransactions (66) ---------------------------------------------------------------------

export interface ListTransactionsFilter {
  /** Transaction states to list (e.g. 'Ongoing'); empty or absent: every state. */
  states?: readonly string[];
  /** Producer ids to list; empty or absent: every producer. */
  producerIds?: readonly number[];
  /** Only transactions running longer than this (v1+); absent: no filter. */
  durationMs?: number;
  /** Only transactional ids matching this regular expression (Java syntax, v2+); absent: no filter. */
  transactionalIdPattern?: string;
}

/** The request body (after the header). Refuses a filter the version cannot carry, rather than silently dropping it. */
export function encodeListTransactionsRequest(filter: ListTransactionsFilter, version: number): Buffer {
  if (version < 0 || version > 2) throw new RangeError(`ListTransactions v${version} is not supported (0-2)`);
  if (filter.durationMs !== undefined && version < 1) throw new RangeError('ListTransactions v0 has no duration filter (the broker needs Kafka 3.8 or later)');
  if (filter.transactionalIdPattern !== undefined && version < 2) throw new RangeError(`ListTransactions v${version} has no transactional id pattern (the broker needs Kafka 4.1 or later)`);
  const w = new Writer()
    .compactArray(filter.states ?? [], (w, s) => w.compactNullableString(s))
    .compactArray(filter.producerIds ?? [], (w, p) => w.int64(p));
  if (version >= 1) w.int64(filter.durationMs ?? -1);
  if (version >= 2) w.compactNullableString(filter.transactionalIdPattern ?? null);
  return w.noTaggedFields().build();
}

export interface TransactionListing {
  transactionalId: string;
  producerId: number;
  /** The coordinator's state name: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence. */
  state: string;
}

export interface ListTransactionsResponse {
  throttleTimeMs: number;
  errorCode: number;
  unknownStateFilters: string[];
  transactions: TransactionListing[];
}

export function decodeListTransactionsResponse(b: Buffer, version: number, offset = 0): ListTransactionsResponse {
  const r = new Reader(b, `ListTransactions v${version} response`, offset);
  const throttleTimeMs = r.int32('ThrottleTimeMs');
  const errorCode = r.int16('ErrorCode');
  const unknownStateFilters = r.compactArray('UnknownStateFilters', (r) => r.compactString('UnknownStateFilters[]'));
  const transactions = r.compactArray('TransactionStates', (r) => {
    const t = { transactionalId: r.compactString('TransactionalId'), producerId: r.int64('ProducerId'), state: r.compactString('TransactionState') };
    r.taggedFields('TransactionStates[]');
    return t;
  });
  r.taggedFields('ListTransactionsResponse');
  r.end();
  return { throttleTimeMs, errorCode, unknownStateFilters, transactions };
}

// ---- DescribeTransactions (65) -----------------------------------------------------------------

export function encodeDescribeTransactionsRequest(transactionalIds: readonly string[]): Buffer {
  return new Writer()
    .compactArray(transactionalIds, (w, id) => w.compactNullableString(id))
    .noTaggedFields()
    .build();
}

export interface TransactionDescription {
  errorCode: number;
  transactionalId: string;
  state: string;
  transactionTimeoutMs: number;
  /** -1 when no transaction is in progress. */
  transactionStartTimeMs: number;
  producerId: number;
  producerEpoch: number;
  /** Partitions in the transaction (while preparing: only those still without their marker). */
  topics: { topic: string; partitions: number[] }[];
}

export interface DescribeTransactionsResponse {
  throttleTimeMs: number;
  transactions: TransactionDescription[];
}

export function decodeDescribeTransactionsResponse(b: Buffer, version: number, offset = 0): DescribeTransactionsResponse {
  const r = new Reader(b, `DescribeTransactions v${version} response`, offset);
  const throttleTimeMs = r.int32('ThrottleTimeMs');
  const transactions = r.compactArray('TransactionStates', (r) => {
    const d: TransactionDescription = {
      errorCode: r.int16('ErrorCode'),
      transactionalId: r.compactString('TransactionalId'),
      state: r.compactString('TransactionState'),
      transactionTimeoutMs: r.int32('TransactionTimeoutMs'),
      transactionStartTimeMs: r.int64('TransactionStartTimeMs'),
      producerId: r.int64('ProducerId'),
      producerEpoch: r.int16('ProducerEpoch'),
      topics: r.compactArray('Topics', (r) => {
        const t = { topic: r.compactString('Topic'), partitions: r.compactArray('Partitions', (r) => r.int32('Partitions[]')) };
        r.taggedFields('Topics[]');
        return t;
      }),
    };
    r.taggedFields('TransactionStates[]');
    return d;
  });
  r.taggedFields('DescribeTransactionsResponse');
  r.end();
  return { throttleTimeMs, transactions };
}

// ---- DescribeProducers (61) --------------------------------------------------------------------

export function encodeDescribeProducersRequest(topics: readonly { topic: string; partitions: readonly number[] }[]): Buffer {
  return new Writer()
    .compactArray(topics, (w, t) => {
      w.compactNullableString(t.topic)
        .compactArray(t.partitions, (w, p) => w.int32(p))
        .noTaggedFields();
    })
    .noTaggedFields()
    .build();
}

export interface ProducerState {
  producerId: number;
  producerEpoch: number;
  lastSequence: number;
  lastTimestamp: number;
  /** -1 when the coordinator has not written a marker for this producer yet. */
  coordinatorEpoch: number;
  /** First offset of the producer's open transaction on this partition; -1 when none is open. */
  currentTxnStartOffset: number;
}

export interface PartitionProducers {
  partition: number;
  errorCode: number;
  errorMessage: string | null;
  activeProducers: ProducerState[];
}

export interface DescribeProducersResponse {
  throttleTimeMs: number;
  topics: { topic: string; partitions: PartitionProducers[] }[];
}

export function decodeDescribeProducersResponse(b: Buffer, version: number, offset = 0): DescribeProducersResponse {
  const r = new Reader(b, `DescribeProducers v${version} response`, offset);
  const throttleTimeMs = r.int32('ThrottleTimeMs');
  const topics = r.compactArray('Topics', (r) => {
    const topic = r.compactString('Name');
    const partitions = r.compactArray('Partitions', (r) => {
      const p: PartitionProducers = {
        partition: r.int32('PartitionIndex'),
        errorCode: r.int16('ErrorCode'),
        errorMessage: r.compactNullableString('ErrorMessage'),
        activeProducers: r.compactArray('ActiveProducers', (r) => {
          const s: ProducerState = {
            producerId: r.int64('ProducerId'),
            producerEpoch: r.int32('ProducerEpoch'),
            lastSequence: r.int32('LastSequence'),
            lastTimestamp: r.int64('LastTimestamp'),
            coordinatorEpoch: r.int32('CoordinatorEpoch'),
            currentTxnStartOffset: r.int64('CurrentTxnStartOffset'),
          };
          r.taggedFields('ActiveProducers[]');
          return s;
        }),
      };
      r.taggedFields('Partitions[]');
      return p;
    });
    r.taggedFields('Topics[]');
    return { topic, partitions };
  });
  r.taggedFields('DescribeProducersResponse');
  r.end();
  return { throttleTimeMs, topics };
}

// ---- WriteTxnMarkers (27) ----------------------------------------------------------------------

export interface TxnMarker {
  producerId: number;
  producerEpoch: number;
  /** false: abort. */
  commit: boolean;
  /** The coordinator epoch the marker carries: a leader refuses one older than the last marker's of this producer. */
  coordinatorEpoch: number;
  topics: { topic: string; partitions: number[] }[];
}

/** The request body (after the header), v1 (flexible). */
export function encodeWriteTxnMarkersRequest(markers: readonly TxnMarker[], version = 1): Buffer {
  if (version !== 1) throw new RangeError(`WriteTxnMarkers v${version} is not supported (1)`);
  return new Writer()
    .compactArray(markers, (w, m) => {
      w.int64(m.producerId)
        .int16(m.producerEpoch)
        .int8(m.commit ? 1 : 0)
        .compactArray(m.topics, (w, t) => {
          w.compactNullableString(t.topic)
            .compactArray(t.partitions, (w, p) => w.int32(p))
            .noTaggedFields();
        })
        .int32(m.coordinatorEpoch)
        .noTaggedFields();
    })
    .noTaggedFields()
    .build();
}

export interface WriteTxnMarkersResponse {
  /** WriteTxnMarkers has no throttle time; 0 so the admin's sender can treat every response alike. */
  throttleTimeMs: number;
  markers: { producerId: number; topics: { topic: string; partitions: { partition: number; errorCode: number }[] }[] }[];
}

export function decodeWriteTxnMarkersResponse(b: Buffer, version: number, offset = 0): WriteTxnMarkersResponse {
  const r = new Reader(b, `WriteTxnMarkers v${version} response`, offset);
  const markers = r.compactArray('Markers', (r) => {
    const producerId = r.int64('ProducerId');
    const topics = r.compactArray('Topics', (r) => {
      const topic = r.compactString('Name');
      const partitions = r.compactArray('Partitions', (r) => {
        const p = { partition: r.int32('PartitionIndex'), errorCode: r.int16('ErrorCode') };
        r.taggedFields('Partitions[]');
        return p;
      });
      r.taggedFields('Topics[]');
      return { topic, partitions };
    });
    r.taggedFields('Markers[]');
    return { producerId, topics };
  });
  r.taggedFields('WriteTxnMarkersResponse');
  r.end();
  return { throttleTimeMs: 0, markers };
}
