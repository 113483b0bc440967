// The verifier's own decoding of a Fetch response (v11) and of the record batches (magic 2) in it,
// read_committed: records of aborted transactions and control records are left out, as the Java
// consumer does it (Fetcher/CompletedFetch: aborted transactions of the response by first offset,
// a producer's records skipped from its aborted transaction's first offset to its ABORT marker).
//
// Why not kafkajs' decoder: it builds an object per record (two Long parses and a string for the
// offset and the timestamp, a Buffer copy each for key and value, headers), and the verifier spent
// most of its time there and in the garbage collector (bench/RESULTS.md, checker profile). Here a
// record is handed over as (value view into the response, timestamp, offset): no copy, no object.
// No I/O: src/verify/reader.ts sends the requests.
import { gunzipSync } from 'node:zlib';
import { EosError, ErrorCodes } from '../errors.js';

export interface FetchedPartition {
  topic: string;
  partition: number;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  /** Aborted transactions overlapping the fetched range, by first offset. */
  aborted: { producerId: bigint; firstOffset: number }[];
  /** The record batches (the last one may be cut off by the size limits); null when none. */
  records: Buffer | null;
}

/** Called for each record a read_committed consumer gets; `value` is a view into the response (null for a null value). */
export type OnRecord = (value: Buffer | null, timestampMs: number, offset: number) => void;

function int64(b: Buffer, i: number): number {
  const v = b.readBigInt64BE(i);
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new EosError(ErrorCodes.DECODE_FAILED, `64-bit value ${v} beyond 2^53 in a fetch response`);
  return n;
}

/** Decodes a Fetch v11 response body (after the correlation id). */
export function decodeFetchResponse(b: Buffer): { throttleTimeMs: number; errorCode: number; partitions: FetchedPartition[] } {
  let i = 0;
  const throttleTimeMs = b.readInt32BE(i);
  const errorCode = b.readInt16BE(i + 4);
  i += 10; // throttle_time_ms, error_code, session_id
  const partitions: FetchedPartition[] = [];
  const topics = b.readInt32BE(i);
  i += 4;
  for (let t = 0; t < topics; t++) {
    const nameLen = b.readInt16BE(i);
    const topic = b.toString('utf8', i + 2, i + 2 + nameLen);
    i += 2 + nameLen;
    const count = b.readInt32BE(i);
    i += 4;
    for (let k = 0; k < count; k++) {
      const partition = b.readInt32BE(i);
      const pErr = b.readInt16BE(i + 4);
      const highWatermark = int64(b, i + 6);
      const lastStableOffset = int64(b, i + 14);
      const logStartOffset = int64(b, i + 22);
      i += 30;
      const nAborted = b.readInt32BE(i);
      i += 4;
      const aborted: FetchedPartition['aborted'] = [];
      for (let a = 0; a < nAborted; a++) {
        aborted.push({ producerId: b.readBigInt64BE(i), firstOffset: int64(b, i + 8) });
        i += 16;
      }
      i += 4; // preferred_read_replica
      const size = b.readInt32BE(i);
      i += 4;
      const records = size > 0 ? b.subarray(i, i + size) : null;
      i += Math.max(size, 0);
      aborted.sort((x, y) => x.firstOffset - y.firstOffset);
      partitions.push({ topic, partition, errorCode: pErr, highWatermark, lastStableOffset, logStartOffset, aborted, records });
    }
  }
  return { throttleTimeMs, errorCode, partitions };
}

// Record batch layout (magic 2), offsets from the start of the batch.
const BATCH_HEADER = 61;
const OFF_LENGTH = 8;
const OFF_MAGIC = 16;
const OFF_ATTRIBUTES = 21;
const OFF_LAST_OFFSET_DELTA = 23;
const OFF_BASE_TIMESTAMP = 27;
const OFF_MAX_TIMESTAMP = 35;
const OFF_PRODUCER_ID = 43;
const OFF_COUNT = 57;
const ATTR_COMPRESSION = 0x07;
const ATTR_LOG_APPEND_TIME = 0x08;
const ATTR_TRANSACTIONAL = 0x10;
const ATTR_CONTROL = 0x20;
/** The codecs the verifier does not read, by attribute value (0 none and 1 gzip are read). */
const UNREAD_CODECS: Record<number, string> = { 2: 'snappy', 3: 'lz4', 4: 'zstd' };

/** A cursor over varint-encoded fields. */
class Cursor {
  constructor(
    public b: Buffer,
    public i: number,
  ) {}

  /** A zigzag varint (records use them for lengths and deltas), up to 2^53. */
  varint(): number {
    const b = this.b;
    let n = 0;
    let mul = 1;
    for (;;) {
      if (this.i >= b.length) throw new RangeError('varint runs past the end of the records');
      const c = b[this.i++]!;
      n += (c & 0x7f) * mul;
      if (c < 0x80) break;
      mul *= 128;
      if (mul > 2 ** 63) throw new RangeError('varint longer than 10 bytes');
    }
    // zigzag: n even → n/2, odd → -(n+1)/2
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }
}

export interface ScanResult {
  /** The offset to fetch next: past the last whole batch (control and aborted batches included). */
  nextOffset: number;
  /** Whole batches read. */
  batches: number;
}

/**
 * Reads the record batches of one partition's record set from `fetchOffset` on, read_committed,
 * and calls `onRecord` for every record at or above `fetchOffset` and below `endOffset` that is
 * neither a control record nor part of an aborted transaction. A batch cut off by the fetch size
 * ends the scan (it comes again whole in the next fetch).
 */
export function scanRecordSet(records: Buffer, fetchOffset: number, endOffset: number, aborted: FetchedPartition['aborted'], onRecord: OnRecord): ScanResult {
  let nextOffset = fetchOffset;
  let batches = 0;
  let pos = 0;
  let nextAborted = 0;
  const abortedProducers = new Set<bigint>();
  while (pos + BATCH_HEADER <= records.length) {
    const baseOffset = int64(records, pos);
    const batchEnd = pos + 12 + records.readInt32BE(pos + OFF_LENGTH);
    if (batchEnd > records.length) break;
    const magic = records.readInt8(pos + OFF_MAGIC);
    if (magic !== 2) throw new EosError(ErrorCodes.DECODE_FAILED, `record batch of magic ${magic} at offset ${baseOffset}: only magic 2 (Kafka 0.11 and later) is read`);
    const attributes = records.readInt16BE(pos + OFF_ATTRIBUTES);
    const lastOffset = baseOffset + records.readInt32BE(pos + OFF_LAST_OFFSET_DELTA);
    const producerId = records.readBigInt64BE(pos + OFF_PRODUCER_ID);
    batches++;
    // The aborted transactions that have begun by the end of this batch.
    while (nextAborted < aborted.length && aborted[nextAborted]!.firstOffset <= lastOffset) abortedProducers.add(aborted[nextAborted++]!.producerId);
    if ((attributes & ATTR_CONTROL) !== 0) {
      // A marker ends its producer's transaction. The Java consumer looks for an ABORT marker here;
      // in a valid log a producer in an aborted transaction writes no other marker before it.
      abortedProducers.delete(producerId);
    } else if ((attributes & ATTR_TRANSACTIONAL) === 0 || !abortedProducers.has(producerId)) {
      // Records below the fetch offset or at the end offset are dropped one by one in readRecords.
      readRecords(records, pos, batchEnd, attributes, baseOffset, fetchOffset, endOffset, onRecord);
    }
    nextOffset = Math.max(nextOffset, lastOffset + 1);
    pos = batchEnd;
  }
  return { nextOffset, batches };
}

/** The records of a batch: its body, decompressed when needed, as a cursor at the first record. */
function recordsOf(records: Buffer, pos: number, batchEnd: number, attributes: number, baseOffset: number): Cursor {
  const codec = attributes & ATTR_COMPRESSION;
  if (codec === 0) return new Cursor(records, pos + BATCH_HEADER);
  if (codec === 1) {
    const body = gunzipSync(records.subarray(pos + BATCH_HEADER, batchEnd));
    return new Cursor(body, 0);
  }
  throw new EosError(ErrorCodes.DECODE_FAILED, `record batch at offset ${baseOffset} is compressed with ${UNREAD_CODECS[codec] ?? `codec ${codec}`}; the verifier reads uncompressed and gzip batches`);
}

function readRecords(records: Buffer, pos: number, batchEnd: number, attributes: number, baseOffset: number, fetchOffset: number, endOffset: number, onRecord: OnRecord): void {
  const count = records.readInt32BE(pos + OFF_COUNT);
  const logAppendTime = (attributes & ATTR_LOG_APPEND_TIME) !== 0;
  const baseTimestamp = int64(records, pos + OFF_BASE_TIMESTAMP);
  const maxTimestamp = logAppendTime ? int64(records, pos + OFF_MAX_TIMESTAMP) : 0;
  const c = recordsOf(records, pos, batchEnd, attributes, baseOffset);
  const b = c.b;
  for (let r = 0; r < count; r++) {
    const length = c.varint();
    const next = c.i + length;
    if (next > b.length) throw new RangeError(`record ${r} of the batch at offset ${baseOffset} runs past the batch`);
    c.i += 1; // record attributes
    const timestampDelta = c.varint();
    const offset = baseOffset + c.varint();
    const keyLen = c.varint();
    c.i += Math.max(keyLen, 0);
    const valueLen = c.varint();
    const value = valueLen < 0 ? null : b.subarray(c.i, c.i + valueLen);
    c.i = next; // headers are not read
    if (offset >= fetchOffset && offset < endOffset) onRecord(value, logAppendTime ? maxTimestamp : baseTimestamp + timestampDelta, offset);
  }
}
