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
// response header v1 (correlation id + tagged fields).
import { EosError, ErrorCodes } from '../errors.js';

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

// ---- error codes -------------------------------------------------------------------------------

/** The error codes these APIs answer with (org.apache.kafka.common.protocol.Errors). */
export const ERRORS = {
  UNKNOWN_SERVER_ERROR: -1,
  NONE: 0,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  NOT_LEADER_OR_FOLLOWER: 6,
  REQUEST_TIMED_OUT: 7,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  TOPIC_AUTHORIZATION_FAILED: 29,
  CLUSTER_AUTHORIZATION_FAILED: 31,
  UNSUPPORTED_VERSION: 35,
  INVALID_REQUEST: 42,
  INVALID_PRODUCER_EPOCH: 47,
  CONCURRENT_TRANSACTIONS: 51,
  TRANSACTION_COORDINATOR_FENCED: 52,
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 53,
  TRANSACTIONAL_ID_NOT_FOUND: 105,
  INVALID_REGULAR_EXPRESSION: 128,
} as const;

const ERROR_NAMES = new Map<number, string>(Object.entries(ERRORS).map(([name, code]) => [code, name]));

export function errorName(code: number): string {
  return ERROR_NAMES.get(code) ?? `ERROR_${code}`;
}

/**
 * What a caller does with an error code: `retry` after re-finding the coordinator or leader
 * (it moved, or it is still loading), `permission` (an ACL is missing: say so, never page as if
 * the cluster were broken), `error` anything else.
 */
export type ErrorKind = 'none' | 'retry' | 'permission' | 'error';

export function errorKind(code: number): ErrorKind {
  switch (code) {
    case ERRORS.NONE:
      return 'none';
    case ERRORS.COORDINATOR_LOAD_IN_PROGRESS:
    case ERRORS.COORDINATOR_NOT_AVAILABLE:
    case ERRORS.NOT_COORDINATOR:
    case ERRORS.NOT_LEADER_OR_FOLLOWER:
    case ERRORS.REQUEST_TIMED_OUT:
      return 'retry';
    case ERRORS.TOPIC_AUTHORIZATION_FAILED:
    case ERRORS.CLUSTER_AUTHORIZATION_FAILED:
    case ERRORS.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
      return 'permission';
    default:
      return 'error';
  }
}

// ---- primitives --------------------------------------------------------------------------------

/** A malformed or truncated message: names the message, the field and the byte offset. */
export class ProtocolDecodeError extends EosError {
  constructor(message: string) {
    super(ErrorCodes.DECODE_FAILED, message);
    this.name = 'ProtocolDecodeError';
  }
}

/** Reads Kafka's primitive types from a buffer; every error names `what` (the message) and the field. */
export class Reader {
  offset: number;

  constructor(
    readonly buf: Buffer,
    readonly what: string,
    offset = 0,
  ) {
    this.offset = offset;
  }

  private need(n: number, field: string): void {
    if (this.offset + n > this.buf.length) {
      throw new ProtocolDecodeError(`${this.what}: truncated at byte ${this.offset} of ${this.buf.length}, reading ${field} (${n} bytes needed)`);
    }
  }

  int8(field: string): number {
    this.need(1, field);
    return this.buf.readInt8(this.offset++);
  }

  int16(field: string): number {
    this.need(2, field);
    const v = this.buf.readInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  int32(field: string): number {
    this.need(4, field);
    const v = this.buf.readInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  /** An int64 as a number; producer ids, offsets and timestamps stay far below 2^53. */
  int64(field: string): number {
    this.need(8, field);
    const big = this.buf.readBigInt64BE(this.offset);
    const v = Number(big);
    if (!Number.isSafeInteger(v)) throw new ProtocolDecodeError(`${this.what}: ${field} ${big} at byte ${this.offset} is beyond 2^53`);
    this.offset += 8;
    return v;
  }

  uvarint(field: string): number {
    let v = 0;
    for (let shift = 0; shift <= 28; shift += 7) {
      this.need(1, field);
      const b = this.buf[this.offset++]!;
      v += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return v;
    }
    throw new ProtocolDecodeError(`${this.what}: ${field} is a varint longer than 5 bytes at byte ${this.offset}`);
  }

  private utf8(n: number, field: string): string {
    this.need(n, field);
    const s = this.buf.toString('utf8', this.offset, this.offset + n);
    this.offset += n;
    return s;
  }

  /** int16 length, -1 = null (non-flexible versions). */
  nullableString(field: string): string | null {
    const n = this.int16(`${field} length`);
    if (n < -1) throw new ProtocolDecodeError(`${this.what}: ${field} has length ${n}`);
    return n === -1 ? null : this.utf8(n, field);
  }

  string(field: string): string {
    const s = this.nullableString(field);
    if (s === null) throw new ProtocolDecodeError(`${this.what}: ${field} is null where a string is required`);
    return s;
  }

  compactNullableString(field: string): string | null {
    const n = this.uvarint(`${field} length`);
    return n === 0 ? null : this.utf8(n - 1, field);
  }

  compactString(field: string): string {
    const s = this.compactNullableString(field);
    if (s === null) throw new ProtocolDecodeError(`${this.what}: ${field} is null where a string is required`);
    return s;
  }

  /** int32 count, -1 = null (non-flexible versions). */
  nullableArray<T>(field: string, item: (r: Reader, i: number) => T): T[] | null {
    const n = this.int32(`${field} count`);
    if (n === -1) return null;
    return this.items(n, field, item);
  }

  compactNullableArray<T>(field: string, item: (r: Reader, i: number) => T): T[] | null {
    const n = this.uvarint(`${field} count`);
    return n === 0 ? null : this.items(n - 1, field, item);
  }

  compactArray<T>(field: string, item: (r: Reader, i: number) => T): T[] {
    const a = this.compactNullableArray(field, item);
    if (a === null) throw new ProtocolDecodeError(`${this.what}: ${field} is null where an array is required`);
    return a;
  }

  private items<T>(n: number, field: string, item: (r: Reader, i: number) => T): T[] {
    // Every element takes at least one byte: a count beyond the rest of the buffer is garbage.
    if (n < 0 || n > this.buf.length - this.offset) throw new ProtocolDecodeError(`${this.what}: ${field} count ${n} at byte ${this.offset} exceeds the message`);
    const out: T[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = item(this, i);
    return out;
  }

  /**
   * A tagged-field section. `known` reads the tags this schema defines (given a reader over just
   * that field's bytes); the tags returned are the unknown ones, skipped as the schema says.
   */
  taggedFields(field: string, known: Record<number, (r: Reader) => void> = {}): number[] {
    const n = this.uvarint(`${field} tagged field count`);
    const unknown: number[] = [];
    for (let i = 0; i < n; i++) {
      const tag = this.uvarint(`${field} tag`);
      const size = this.uvarint(`${field} tag ${tag} size`);
      this.need(size, `${field} tag ${tag}`);
      const read = known[tag];
      if (read) {
        const sub = new Reader(this.buf.subarray(0, this.offset + size), `${this.what} ${field} tag ${tag}`, this.offset);
        read(sub);
        if (sub.offset !== this.offset + size) throw new ProtocolDecodeError(`${this.what}: ${field} tag ${tag} is ${size} bytes but its value took ${sub.offset - this.offset}`);
      } else {
        unknown.push(tag);
      }
      this.offset += size;
    }
    return unknown;
  }

  end(): void {
    if (this.offset !== this.buf.length) throw new ProtocolDecodeError(`${this.what}: ${this.buf.length - this.offset} bytes left over after byte ${this.offset}`);
  }
}

/** Builds a message from Kafka's primitive types. */
export class Writer {
  private readonly parts: Buffer[] = [];

  private push(b: Buffer): this {
    this.parts.push(b);
    return this;
  }

  int8(v: number): this {
    const b = Buffer.alloc(1);
    b.writeInt8(v);
    return this.push(b);
  }

  int16(v: number): this {
    const b = Buffer.alloc(2);
    b.writeInt16BE(v);
    return this.push(b);
  }

  int32(v: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    return this.push(b);
  }

  int64(v: number | bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(BigInt(v));
    return this.push(b);
  }

  uvarint(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`unsigned varint ${v} out of range`);
    const bytes: number[] = [];
    while (v >= 0x80) {
      bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    bytes.push(v);
    return this.push(Buffer.from(bytes));
  }

  nullableString(s: string | null): this {
    if (s === null) return this.int16(-1);
    const b = Buffer.from(s, 'utf8');
    if (b.length > 0x7fff) throw new RangeError(`string of ${b.length} bytes is too long for an int16 length`);
    return this.int16(b.length).push(b);
  }

  compactNullableString(s: string | null): this {
    if (s === null) return this.uvarint(0);
    const b = Buffer.from(s, 'utf8');
    return this.uvarint(b.length + 1).push(b);
  }

  compactArray<T>(items: readonly T[] | null, item: (w: Writer, v: T) => void): this {
    if (items === null) return this.uvarint(0);
    this.uvarint(items.length + 1);
    for (const v of items) item(this, v);
    return this;
  }

  /** An empty tagged-field section (no tagged fields are ever sent). */
  noTaggedFields(): this {
    return this.uvarint(0);
  }

  bytes(b: Buffer): this {
    return this.push(b);
  }

  build(): Buffer {
    return Buffer.concat(this.parts);
  }
}

// ---- headers -----------------------------------------------------------------------------------

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
}

/** Request header v2: api key, version, correlation id, client id (int16 length, never compact), tagged fields. */
export function encodeRequestHeaderV2(h: RequestHeader): Buffer {
  return new Writer().int16(h.apiKey).int16(h.apiVersion).int32(h.correlationId).nullableString(h.clientId).noTaggedFields().build();
}

/**
 * The bytes of a request body as kafkajs must be given them: kafkajs writes request header v1
 * itself (key, version, correlation id, client id), so a flexible request's body starts with the
 * header's empty tagged-field section, which turns kafkajs' header v1 into header v2.
 */
export function bodyAfterHeaderV1(body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0]), body]);
}

/** A whole request as it goes on the wire: int32 size, header v2, body. */
export function encodeRequestFrame(h: RequestHeader, body: Buffer): Buffer {
  const payload = Buffer.concat([encodeRequestHeaderV2(h), body]);
  const size = Buffer.alloc(4);
  size.writeInt32BE(payload.length);
  return Buffer.concat([size, payload]);
}

/**
 * The offset of the response body in what follows the correlation id (what kafkajs hands a
 * response decoder): response header v1 ends with a tagged-field section.
 */
export function skipResponseHeaderV1Tail(afterCorrelationId: Buffer, what: string): number {
  const r = new Reader(afterCorrelationId, `${what} response header`);
  r.taggedFields('response header');
  return r.offset;
}

/** Response header v1 from the start of a response (after the int32 size). */
export function decodeResponseHeaderV1(b: Buffer, what = 'response'): { correlationId: number; bodyOffset: number } {
  const r = new Reader(b, `${what} header`);
  const correlationId = r.int32('correlation id');
  r.taggedFields('response header');
  return { correlationId, bodyOffset: r.offset };
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
