// kafkajs 2.2.4 encodes a produce request (protocol/requests/produce/v3/request.js, which v4 to v7
// reuse) through one Encoder per record and per header, each with its own Buffer that is copied
// into the next level (record, batch, partition, topic, request), varints and varlongs built as
// arrays of bytes through its BigInt Long class, and a CRC32C one byte at a time. In the pipeline
// benchmark's profile that encoding was about a quarter of the main thread's samples, and much of
// the garbage collector's share. encodeProduceRequest below writes the same bytes into one Buffer
// sized up front: lengths measured first, varints written in place, int64s written from numbers
// when they fit, CRC32C by slicing-by-8. It covers uncompressed batches with Buffer or string keys,
// values and header values; anything else (compression, other value types, timestamps that do not
// fit its arithmetic, input kafkajs would refuse) goes to kafkajs' own encoder, so the bytes, and
// the errors, stay kafkajs'. Importing this module puts it in place of kafkajs' v3 request
// (src/kafka/module-cache.ts); test/unit/kafka/produce-encoding.test.ts compares the two.
import { createRequire } from 'node:module';
import { loadOriginal, replaceModule, type ModuleRequire } from './module-cache.js';

const require = createRequire(import.meta.url);
const V3_REQUEST = 'kafkajs/src/protocol/requests/produce/v3/request.js';

/** kafkajs' Encoder, as far as a request's encode() result goes (protocol/request.js copies `buffer`). */
interface EncoderLike {
  buf: Buffer;
  offset: number;
}
interface LongLike {
  value: bigint;
}

const Encoder = require('kafkajs/src/protocol/encoder.js') as new (initialSize?: number) => EncoderLike & {
  writeVarLong(v: unknown): EncoderLike & { buffer: Buffer };
};
const Long = require('kafkajs/src/utils/long.js') as { fromValue(v: unknown): LongLike; fromInt(v: number): LongLike };

export interface ProduceMessage {
  key?: unknown;
  value?: unknown;
  headers?: unknown;
  timestamp?: unknown;
}
export interface ProducePartitionData {
  partition: number;
  firstSequence?: number;
  messages: ProduceMessage[];
}
export interface ProduceArgs {
  acks: number;
  timeout: number;
  transactionalId?: string | null;
  producerId?: unknown;
  producerEpoch?: number;
  compression?: number;
  topicData: { topic: string; partitions: ProducePartitionData[] }[];
}
export interface ProduceRequest {
  apiKey: number;
  apiVersion: number;
  apiName: string;
  expectResponse(): boolean;
  encode(): Promise<EncoderLike>;
}
export type ProduceRequestFactory = (args: ProduceArgs) => ProduceRequest;

// ---- CRC32C (Castagnoli), slicing-by-8 -------------------------------------------------------

const CRC_TABLES = (() => {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let k = 1; k < 8; k++) t[k * 256 + n] = (t[(k - 1) * 256 + n]! >>> 8) ^ t[t[(k - 1) * 256 + n]! & 0xff]!;
  }
  return t;
})();

/** CRC32C of buf[start, end), as kafkajs' recordBatch/crc32C computes it (an unsigned 32-bit number). */
export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  const t = CRC_TABLES;
  let crc = -1;
  let i = start;
  for (const last8 = end - 8; i <= last8; i += 8) {
    const a = crc ^ (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24));
    crc =
      t[1792 + (a & 0xff)]! ^ t[1536 + ((a >>> 8) & 0xff)]! ^ t[1280 + ((a >>> 16) & 0xff)]! ^ t[1024 + (a >>> 24)]! ^
      t[768 + buf[i + 4]!]! ^ t[512 + buf[i + 5]!]! ^ t[256 + buf[i + 6]!]! ^ t[buf[i + 7]!]!;
  }
  for (; i < end; i++) crc = t[(crc ^ buf[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

// ---- varints, as kafkajs' Encoder writes them --------------------------------------------------

/** kafkajs' Encoder.encodeZigZag (32-bit). */
const zigZag = (v: number): number => (v << 1) ^ (v >> 31);

function sizeOfUVarInt(u: number): number {
  let bytes = 1;
  while ((u & 0xffffff80) !== 0) {
    bytes++;
    u >>>= 7;
  }
  return bytes;
}
const sizeOfVarInt = (v: number): number => sizeOfUVarInt(zigZag(v));

function writeUVarInt(buf: Buffer, o: number, u: number): number {
  while ((u & 0xffffff80) !== 0) {
    buf[o++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[o++] = u & 0x7f;
  return o;
}
const writeVarInt = (buf: Buffer, o: number, v: number): number => writeUVarInt(buf, o, zigZag(v));

/** Beyond this a varlong is written by kafkajs' Encoder (below it the zigzag value is exact in a double). */
const VARLONG_FAST_LIMIT = 2 ** 52;

/** The zigzag value of a varlong, or -1 when kafkajs' Encoder must write it. */
function zigZag64(v: number): number {
  if (!Number.isSafeInteger(v) || v >= VARLONG_FAST_LIMIT || v <= -VARLONG_FAST_LIMIT) return -1;
  return v >= 0 ? v * 2 : -v * 2 - 1;
}
function sizeOfUVarLong(u: number): number {
  let bytes = 1;
  while (u >= 128) {
    bytes++;
    u = Math.floor(u / 128);
  }
  return bytes;
}
function writeUVarLong(buf: Buffer, o: number, u: number): number {
  while (u >= 128) {
    buf[o++] = (u % 128) | 0x80;
    u = Math.floor(u / 128);
  }
  buf[o++] = u;
  return o;
}

/** kafkajs' writeInt64 of any value its Long.fromValue takes: the low 64 bits, two's complement. */
function writeInt64(buf: Buffer, o: number, value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) {
    const high = Math.floor(value / 2 ** 32);
    buf.writeInt32BE(high | 0, o);
    buf.writeUInt32BE(value - high * 2 ** 32, o + 4);
  } else {
    buf.writeBigInt64BE(BigInt.asIntN(64, Long.fromValue(value).value), o);
  }
  return o + 8;
}

// ---- the request ------------------------------------------------------------------------------

/** Thrown inside the fast path for input it leaves to kafkajs. */
const LEAVE = new Error('left to kafkajs');
/** The bytes written differ from the sizes measured: a fault of this module, never left to kafkajs. */
class ProduceEncodingFault extends Error {}

/** Bytes of a key, value or header value as kafkajs counts them; only Buffers and strings. */
function byteLengthOf(v: unknown): number {
  if (Buffer.isBuffer(v)) return v.length;
  if (typeof v === 'string') return Buffer.byteLength(v);
  throw LEAVE;
}
function writeBytes(buf: Buffer, o: number, v: Buffer | string, length: number): number {
  if (typeof v === 'string') buf.write(v, o, length, 'utf8');
  else v.copy(buf, o);
  return o + length;
}

/** A record's headers as kafkajs flattens them: [key, value] pairs, arrays one pair per element. */
function headerPairs(headers: unknown): [string, Buffer | string][] | null {
  if (headers === undefined) return null;
  const h = headers as Record<string, unknown>;
  const keys = Object.keys(h); // throws on null, as kafkajs does: left to it
  if (keys.length === 0) return null;
  const pairs: [string, Buffer | string][] = [];
  for (const key of keys) {
    const v = h[key];
    if (Array.isArray(v)) {
      for (const e of v) pairs.push([key, checked(e)]);
    } else pairs.push([key, checked(v)]);
  }
  return pairs;
}
function checked(v: unknown): Buffer | string {
  if (typeof v === 'string' || Buffer.isBuffer(v)) return v;
  throw LEAVE;
}

function sizeOfHeaders(pairs: [string, Buffer | string][] | null): number {
  if (pairs === null) return 1;
  let size = sizeOfVarInt(pairs.length);
  for (const [k, v] of pairs) {
    const kl = Buffer.byteLength(k);
    const vl = byteLengthOf(v);
    size += sizeOfVarInt(kl) + kl + sizeOfVarInt(vl) + vl;
  }
  return size;
}
function writeHeaders(buf: Buffer, o: number, pairs: [string, Buffer | string][] | null): number {
  if (pairs === null) {
    buf[o] = 0;
    return o + 1;
  }
  o = writeVarInt(buf, o, pairs.length);
  for (const [k, v] of pairs) {
    const kl = Buffer.byteLength(k);
    o = writeVarInt(buf, o, kl);
    o = writeBytes(buf, o, k, kl);
    const vl = byteLengthOf(v);
    o = writeVarInt(buf, o, vl);
    o = writeBytes(buf, o, v, vl);
  }
  return o;
}

/** The batch fields kafkajs derives from a partition's messages, before anything is written. */
interface PartitionPlan {
  partition: number;
  firstSequence: number;
  messages: ProduceMessage[];
  firstTimestamp: unknown;
  maxTimestamp: unknown;
  /** Per record: body size, key length (-1: null), value length (-1: null), timestamp delta's zigzag (-1: kafkajs' bytes). */
  sizes: Float64Array;
  /** Records whose headers are not empty, by index. */
  headers: Map<number, [string, Buffer | string][]> | null;
  /** Varlongs kafkajs' Encoder wrote (timestamp deltas beyond VARLONG_FAST_LIMIT), by index. */
  slowDeltas: Map<number, Buffer> | null;
  /** Bytes of the record batch from its first offset to the end. */
  batchSize: number;
}

/** Record-batch v2 header after the CRC: attributes .. record count. */
const BATCH_BODY_HEADER = 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4;
/** firstOffset, length, partitionLeaderEpoch, magic, crc. */
const BATCH_PREFIX = 8 + 4 + 4 + 1 + 4;

function planPartition(data: ProducePartitionData, dateNow: number): PartitionPlan {
  const messages = data.messages;
  const n = messages.length;
  // kafkajs sorts the timestamps with Array.prototype.sort's default order (as strings) and takes
  // the first and last: the first occurrence of the smallest string, the last of the largest.
  let first: unknown;
  let max: unknown;
  let firstS = '';
  let maxS = '';
  let any = false;
  for (let i = 0; i < n; i++) {
    const t = messages[i]!.timestamp;
    if (t == null) continue;
    if (typeof t !== 'string' && typeof t !== 'number') throw LEAVE;
    const s = typeof t === 'string' ? t : String(t);
    if (!any) {
      first = max = t;
      firstS = maxS = s;
      any = true;
    } else {
      if (s < firstS) {
        first = t;
        firstS = s;
      }
      if (s >= maxS) {
        max = t;
        maxS = s;
      }
    }
  }
  const firstTimestamp = any ? first : dateNow;
  const maxTimestamp = any ? max : dateNow;
  const sizes = new Float64Array(n * 4);
  let headers: Map<number, [string, Buffer | string][]> | null = null;
  let slowDeltas: Map<number, Buffer> | null = null;
  let recordsSize = 0;
  for (let i = 0; i < n; i++) {
    const m = messages[i]!;
    const delta = ((m.timestamp || dateNow) as number) - (firstTimestamp as number);
    let zz = zigZag64(delta);
    let deltaSize: number;
    if (zz < 0) {
      const bytes = new Encoder().writeVarLong(delta).buffer; // throws where kafkajs would
      (slowDeltas ??= new Map()).set(i, Buffer.from(bytes));
      deltaSize = bytes.length;
      zz = -1;
    } else deltaSize = sizeOfUVarLong(zz);
    const kl = m.key == null ? -1 : byteLengthOf(m.key);
    const vl = m.value == null ? -1 : byteLengthOf(m.value);
    const pairs = headerPairs(m.headers);
    if (pairs !== null) (headers ??= new Map()).set(i, pairs);
    const body =
      1 + deltaSize + sizeOfVarInt(i) + (kl < 0 ? 1 : sizeOfVarInt(kl) + kl) + (vl < 0 ? 1 : sizeOfVarInt(vl) + vl) + sizeOfHeaders(pairs);
    sizes[i * 4] = body;
    sizes[i * 4 + 1] = kl;
    sizes[i * 4 + 2] = vl;
    sizes[i * 4 + 3] = zz;
    recordsSize += sizeOfVarInt(body) + body;
  }
  return {
    partition: data.partition,
    firstSequence: data.firstSequence === undefined ? 0 : data.firstSequence,
    messages,
    firstTimestamp,
    maxTimestamp,
    sizes,
    headers,
    slowDeltas,
    batchSize: BATCH_PREFIX + BATCH_BODY_HEADER + recordsSize,
  };
}

function writeBatch(buf: Buffer, o: number, p: PartitionPlan, attributes: number, producerId: unknown, producerEpoch: number): number {
  const start = o;
  buf.writeInt32BE(0, o); // firstOffset, int64 0
  buf.writeInt32BE(0, o + 4);
  buf.writeInt32BE(p.batchSize - 12, o + 8); // length: from partitionLeaderEpoch to the end
  buf.writeInt32BE(0, o + 12); // partitionLeaderEpoch
  buf.writeInt8(2, o + 16); // magic
  const crcAt = o + 17;
  o += BATCH_PREFIX;
  const bodyStart = o;
  const n = p.messages.length;
  buf.writeInt16BE(attributes, o);
  buf.writeInt32BE(n - 1, o + 2); // lastOffsetDelta
  o = writeInt64(buf, o + 6, p.firstTimestamp);
  o = writeInt64(buf, o, p.maxTimestamp);
  o = writeInt64(buf, o, producerId);
  buf.writeInt16BE(producerEpoch, o);
  buf.writeInt32BE(p.firstSequence, o + 2);
  buf.writeInt32BE(n, o + 6);
  o += 10;
  const sizes = p.sizes;
  for (let i = 0; i < n; i++) {
    const m = p.messages[i]!;
    o = writeVarInt(buf, o, sizes[i * 4]!);
    buf[o++] = 0; // attributes
    const zz = sizes[i * 4 + 3]!;
    if (zz < 0) {
      const bytes = p.slowDeltas!.get(i)!;
      bytes.copy(buf, o);
      o += bytes.length;
    } else if (zz < 128) buf[o++] = zz;
    else o = writeUVarLong(buf, o, zz);
    o = writeVarInt(buf, o, i); // offsetDelta
    const kl = sizes[i * 4 + 1]!;
    if (kl < 0) buf[o++] = 1;
    else o = writeBytes(buf, writeVarInt(buf, o, kl), m.key as Buffer | string, kl);
    const vl = sizes[i * 4 + 2]!;
    if (vl < 0) buf[o++] = 1;
    else o = writeBytes(buf, writeVarInt(buf, o, vl), m.value as Buffer | string, vl);
    o = writeHeaders(buf, o, p.headers?.get(i) ?? null);
  }
  buf.writeUInt32BE(crc32c(buf, bodyStart, o), crcAt);
  if (o - start !== p.batchSize) throw new ProduceEncodingFault(`produce encoding: batch of ${p.batchSize} bytes planned, ${o - start} written`);
  return o;
}

const sizeOfString = (s: string | null | undefined): number => (s == null ? 2 : 2 + Buffer.byteLength(s, 'utf8'));
function writeString(buf: Buffer, o: number, s: string | null | undefined): number {
  if (s == null) return buf.writeInt16BE(-1, o);
  const length = Buffer.byteLength(s, 'utf8');
  o = buf.writeInt16BE(length, o);
  buf.write(s, o, length, 'utf8');
  return o + length;
}

/**
 * The body of a produce request (v3 to v7: the same fields) as kafkajs' v3 request encodes it, or
 * null when it must be left to kafkajs: compression, keys, values or header values other than
 * Buffers and strings, timestamps other than strings and numbers, or input kafkajs refuses.
 */
export function encodeProduceRequest(args: ProduceArgs, now: () => number = Date.now): Buffer | null {
  const { acks, timeout, transactionalId = null, producerId = Long.fromInt(-1), producerEpoch = 0, compression, topicData } = args;
  if (compression !== undefined && compression !== 0) return null;
  if (transactionalId !== null && typeof transactionalId !== 'string') return null;
  try {
    let size = sizeOfString(transactionalId) + 2 + 4 + 4;
    const topics: { topic: string; plans: PartitionPlan[] }[] = [];
    for (const t of topicData) {
      if (typeof t.topic !== 'string') return null;
      const plans = t.partitions.map((p) => planPartition(p, now()));
      size += sizeOfString(t.topic) + 4;
      for (const p of plans) size += 4 + 4 + p.batchSize;
      topics.push({ topic: t.topic, plans });
    }
    const attributes = transactionalId ? 16 : 0;
    const buf = Buffer.allocUnsafe(size);
    let o = writeString(buf, 0, transactionalId);
    o = buf.writeInt16BE(acks, o);
    o = buf.writeInt32BE(timeout, o);
    o = buf.writeInt32BE(topics.length, o);
    for (const { topic, plans } of topics) {
      o = writeString(buf, o, topic);
      o = buf.writeInt32BE(plans.length, o);
      for (const p of plans) {
        o = buf.writeInt32BE(p.partition, o);
        o = buf.writeInt32BE(p.batchSize, o);
        o = writeBatch(buf, o, p, attributes, producerId, producerEpoch);
      }
    }
    if (o !== size) throw new ProduceEncodingFault(`produce encoding: ${size} bytes planned, ${o} written`);
    return buf;
  } catch (e) {
    // Anything else is input kafkajs refuses (a null message, an empty timestamp string, a value
    // out of range): its encoder runs instead and throws its own error.
    if (e instanceof ProduceEncodingFault) throw e;
    return null;
  }
}

/** kafkajs' v3 produce request with its encode() writing through encodeProduceRequest where it can. */
export function produceRequestV3(original: ProduceRequestFactory): ProduceRequestFactory {
  return (args) => {
    const request = original(args);
    const kafkajsEncode = request.encode;
    request.encode = async () => {
      const body = encodeProduceRequest(args);
      if (body === null) return kafkajsEncode();
      const encoder = new Encoder(1);
      encoder.buf = body;
      encoder.offset = body.length;
      return encoder;
    };
    return request;
  };
}

/** kafkajs' own v3 produce request factory, compiled from its file (the cache holds the replacement). */
export const kafkajsProduceRequestV3 = loadOriginal(require, V3_REQUEST) as ProduceRequestFactory;
const replacement = produceRequestV3(kafkajsProduceRequestV3);

/** Puts the replacement where kafkajs' produce v4 request (and so v5 to v7) and produce/index.js require v3. */
export function installProduceEncoding(req: ModuleRequire): true {
  return replaceModule(req, {
    module: V3_REQUEST,
    exports: replacement,
    requiredBy: 'kafkajs/src/protocol/requests/produce/v4/request.js',
    installer: 'src/kafka/produce-encoding.ts',
  });
}

/** True once kafkajs' producer encodes produce requests through encodeProduceRequest (set when this module is evaluated). */
export const produceEncoding = installProduceEncoding(require);
