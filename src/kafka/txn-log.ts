// The records of __transaction_state, decoded: what the transaction coordinator writes for every
// transactional id at every state change. Pure: bytes in, objects out.
//
// Schemas: Kafka's TransactionLogKey.json and TransactionLogValue.json
// (transaction-coordinator/src/main/resources/common/message/, the copies in
// kafka-transaction-coordinator 4.4.0 and 3.9.1). A key or value starts with its int16 version.
//   key   v0: TransactionalId (string, int16 length)
//   value v0: non-flexible (int16-length strings, int32-count arrays, no tagged fields)
//   value v1: flexible (compact strings and arrays, tagged fields): tag 0 PreviousProducerId,
//             tag 1 NextProducerId, tag 2 ClientTransactionVersion (KIP-890), tag 3 NextProducerEpoch
//             (4.x); an absent tag has its default.
// A record with a null value (a tombstone) says the transactional id expired and was removed.
import { ProtocolDecodeError, Reader } from './wire.js';

/** The coordinator's TransactionState, by the byte it writes (TransactionState.java / TransactionMetadata.scala). */
export const TRANSACTION_STATES = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'] as const;
export type TransactionStateName = (typeof TRANSACTION_STATES)[number];

export function transactionStateName(id: number): TransactionStateName {
  const s = TRANSACTION_STATES[id];
  if (s === undefined) throw new ProtocolDecodeError(`__transaction_state value: unknown TransactionStatus ${id} (expected 0-${TRANSACTION_STATES.length - 1})`);
  return s;
}

/** States of an open transaction: it still holds its partitions' last stable offset. */
export const OPEN_STATES = ['Ongoing', 'PrepareCommit', 'PrepareAbort', 'PrepareEpochFence'] as const;

/** Whether a transaction in `state` still holds its partitions' last stable offset. */
export function holdsLso(state: string): boolean {
  return (OPEN_STATES as readonly string[]).includes(state);
}

export const TXN_LOG_KEY_VERSION = 0;
export const TXN_LOG_VALUE_VERSIONS = { min: 0, max: 1 } as const;

export interface TxnLogValue {
  version: number;
  producerId: number;
  /** Tag 0 (v1): the producer id of the last committed transaction; -1 when absent. */
  previousProducerId: number;
  /** Tag 1 (v1): the producer id handed out next for this transactional id (epoch overflow); -1 when absent. */
  nextProducerId: number;
  /** Tag 3 (v1, Kafka 4.x): the epoch that goes with nextProducerId; -1 when absent. */
  nextProducerEpoch: number;
  producerEpoch: number;
  transactionTimeoutMs: number;
  /** TransactionStatus as written. */
  stateId: number;
  state: TransactionStateName;
  /** Partitions in the transaction; null as written (Kafka writes null for Empty and complete states). */
  partitions: { topic: string; partitionIds: number[] }[] | null;
  lastUpdateTimestampMs: number;
  startTimestampMs: number;
  /** Tag 2 (v1): the client's transaction version (2 = KIP-890 TV2); 0 when absent. */
  clientTransactionVersion: number;
  /** Tags this decoder does not know, skipped (a newer Kafka's additions). */
  unknownTags: number[];
}

export type TxnLogRecord =
  | { kind: 'transaction'; transactionalId: string; value: TxnLogValue }
  /** Null value: the transactional id expired and was removed from the coordinator. */
  | { kind: 'tombstone'; transactionalId: string }
  /** A key version this decoder does not know (Kafka's own formatter prints "unknown"); the record is skipped. */
  | { kind: 'unknown-key'; keyVersion: number };

/** The transactional id of a __transaction_state key, or null for a key version other than 0. */
export function decodeTxnLogKey(key: Buffer): { version: number; transactionalId: string | null } {
  const r = new Reader(key, '__transaction_state key');
  const version = r.int16('version');
  if (version !== TXN_LOG_KEY_VERSION) return { version, transactionalId: null };
  const transactionalId = r.string('TransactionalId');
  r.end();
  return { version, transactionalId };
}

export function decodeTxnLogValue(value: Buffer): TxnLogValue {
  const r = new Reader(value, '__transaction_state value');
  const version = r.int16('version');
  if (version < TXN_LOG_VALUE_VERSIONS.min || version > TXN_LOG_VALUE_VERSIONS.max) {
    throw new ProtocolDecodeError(`__transaction_state value: version ${version} is not known (expected ${TXN_LOG_VALUE_VERSIONS.min}-${TXN_LOG_VALUE_VERSIONS.max})`);
  }
  const flexible = version >= 1;
  const str = (f: string) => (flexible ? r.compactString(f) : r.string(f));
  const producerId = r.int64('ProducerId');
  const producerEpoch = r.int16('ProducerEpoch');
  const transactionTimeoutMs = r.int32('TransactionTimeoutMs');
  const stateId = r.int8('TransactionStatus');
  const state = transactionStateName(stateId);
  const partition = (r: Reader) => {
    const topic = str('TransactionPartitions[].Topic');
    const id = (r: Reader) => r.int32('PartitionIds[]');
    const ids = flexible ? r.compactNullableArray('PartitionIds', id) : r.nullableArray('PartitionIds', id);
    if (ids === null) throw new ProtocolDecodeError(`__transaction_state value: PartitionIds of ${topic} is null where an array is required`);
    if (flexible) r.taggedFields('TransactionPartitions[]');
    return { topic, partitionIds: ids };
  };
  const partitions = flexible ? r.compactNullableArray('TransactionPartitions', partition) : r.nullableArray('TransactionPartitions', partition);
  const lastUpdateTimestampMs = r.int64('TransactionLastUpdateTimestampMs');
  const startTimestampMs = r.int64('TransactionStartTimestampMs');
  let previousProducerId = -1;
  let nextProducerId = -1;
  let nextProducerEpoch = -1;
  let clientTransactionVersion = 0;
  let unknownTags: number[] = [];
  if (flexible) {
    unknownTags = r.taggedFields('TransactionLogValue', {
      0: (t) => (previousProducerId = t.int64('PreviousProducerId')),
      1: (t) => (nextProducerId = t.int64('NextProducerId')),
      2: (t) => (clientTransactionVersion = t.int16('ClientTransactionVersion')),
      3: (t) => (nextProducerEpoch = t.int16('NextProducerEpoch')),
    });
  }
  r.end();
  return {
    version,
    producerId,
    previousProducerId,
    nextProducerId,
    nextProducerEpoch,
    producerEpoch,
    transactionTimeoutMs,
    stateId,
    state,
    partitions,
    lastUpdateTimestampMs,
    startTimestampMs,
    clientTransactionVersion,
    unknownTags,
  };
}

/** One record of __transaction_state (key and value as bytes; a null value is a tombstone). */
export function decodeTxnLogRecord(key: Buffer | null, value: Buffer | null): TxnLogRecord {
  if (key === null) throw new ProtocolDecodeError('__transaction_state record: null key (every record of the transaction log has one)');
  const k = decodeTxnLogKey(key);
  if (k.transactionalId === null) return { kind: 'unknown-key', keyVersion: k.version };
  if (value === null) return { kind: 'tombstone', transactionalId: k.transactionalId };
  return { kind: 'transaction', transactionalId: k.transactionalId, value: decodeTxnLogValue(value) };
}

/**
 * The coordinator's view of every transactional id, from its log read in order: the last record
 * of an id wins, a tombstone removes it (what the coordinator rebuilds when it loads a partition).
 */
export function applyTxnLogRecord(state: Map<string, TxnLogValue>, record: TxnLogRecord): void {
  if (record.kind === 'transaction') state.set(record.transactionalId, record.value);
  else if (record.kind === 'tombstone') state.delete(record.transactionalId);
}

// ---- the records of a fetched __transaction_state partition -------------------------------------

/** A record as stored: key and value are views into the fetched bytes (value null: a tombstone). */
export interface RawLogRecord {
  offset: number;
  timestampMs: number;
  key: Buffer | null;
  value: Buffer | null;
}

/** A zigzag varint of at most 10 bytes at `at.i`, none of them at or past `limit` (the end of its record or batch). */
function zigzagVarint(b: Buffer, at: { i: number }, limit: number, where: string, field: string): number {
  let v = 0;
  for (let n = 0; n < 10; n++) {
    if (at.i >= limit) throw new ProtocolDecodeError(`${where}: truncated at byte ${at.i}, reading ${field}`);
    const x = b[at.i++]!;
    v += (x & 0x7f) * 2 ** (7 * n);
    if ((x & 0x80) === 0) return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }
  throw new ProtocolDecodeError(`${where}: ${field} is a varint longer than 10 bytes`);
}

const BATCH_HEADER = 61;

/**
 * The records (with their keys) of the record batches (magic 2) of a fetched partition, from
 * `fromOffset` on; a batch cut off at the end (the fetch size limit) is left for the next fetch.
 * The coordinator writes its log uncompressed (TransactionLog.EnforcedCompression = NONE), so a
 * compressed batch is refused rather than guessed at. src/kafka/record-batches.ts decodes only
 * values; the transaction log needs keys. Every field of a record is read within that record
 * (its length prefix), and every record within its batch: a malformed one is an error naming the
 * batch, the record and the field, never bytes of its neighbour.
 */
export function logRecords(records: Buffer, fromOffset: number): { records: RawLogRecord[]; nextOffset: number } {
  const out: RawLogRecord[] = [];
  let next = fromOffset;
  let i = 0;
  while (i + 12 <= records.length) {
    const baseOffset = Number(records.readBigInt64BE(i));
    const batchLength = records.readInt32BE(i + 8);
    if (batchLength < BATCH_HEADER - 12) throw new ProtocolDecodeError(`__transaction_state record batch at offset ${baseOffset}: length ${batchLength} is shorter than a batch header (${BATCH_HEADER - 12} bytes)`);
    const end = i + 12 + batchLength;
    if (end > records.length) break;
    const magic = records.readInt8(i + 16);
    if (magic !== 2) throw new ProtocolDecodeError(`__transaction_state record batch at offset ${baseOffset}: magic ${magic} (expected 2)`);
    const attributes = records.readInt16BE(i + 21);
    const lastOffsetDelta = records.readInt32BE(i + 23);
    const baseTimestamp = Number(records.readBigInt64BE(i + 27));
    const count = records.readInt32BE(i + 57);
    if ((attributes & 0x07) !== 0) throw new ProtocolDecodeError(`__transaction_state record batch at offset ${baseOffset}: compressed (codec ${attributes & 0x07}); the coordinator writes it uncompressed`);
    const control = (attributes & 0x20) !== 0;
    if (!control) {
      const at = { i: i + BATCH_HEADER };
      for (let n = 0; n < count; n++) {
        const where = `__transaction_state record batch at offset ${baseOffset}, record ${n}`;
        const len = zigzagVarint(records, at, end, where, 'record length');
        const recEnd = at.i + len;
        if (recEnd > end) throw new ProtocolDecodeError(`${where}: length ${len} runs past its batch`);
        const bytes = (field: string): Buffer | null => {
          const n = zigzagVarint(records, at, recEnd, where, `${field} length`);
          if (n < 0) return null;
          if (n > recEnd - at.i) throw new ProtocolDecodeError(`${where}: ${field} of ${n} bytes at byte ${at.i} runs past its record`);
          return records.subarray(at.i, (at.i += n));
        };
        if (at.i >= recEnd) throw new ProtocolDecodeError(`${where}: truncated at byte ${at.i}, reading attributes`);
        at.i += 1; // attributes (int8, unused)
        const tsDelta = zigzagVarint(records, at, recEnd, where, 'timestamp delta');
        const offsetDelta = zigzagVarint(records, at, recEnd, where, 'offset delta');
        const key = bytes('key');
        const value = bytes('value');
        zigzagVarint(records, at, recEnd, where, 'header count');
        at.i = recEnd; // the headers themselves: the coordinator writes none
        const offset = baseOffset + offsetDelta;
        if (offset >= fromOffset) out.push({ offset, timestampMs: baseTimestamp + tsDelta, key, value });
      }
    }
    next = Math.max(next, baseOffset + lastOffsetDelta + 1);
    i = end;
  }
  return { records: out, nextOffset: next };
}
