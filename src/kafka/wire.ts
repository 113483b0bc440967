// Kafka's wire format by hand, for the APIs kafkajs 2.2.4 does not speak (txn-protocol.ts: the
// transaction coordinator's; authorized-operations.ts; txn-log.ts: the transaction log's records):
// the primitive types, read (every error naming the message, the field and the byte) and
// written, and the request and response headers. Pure: buffers in, buffers out.
import { EosError, ErrorCodes } from '../errors.js';

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

  /** An int64 as a bigint (offsets kept as bigints by their readers). */
  bigint64(field: string): bigint {
    this.need(8, field);
    const v = this.buf.readBigInt64BE(this.offset);
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
