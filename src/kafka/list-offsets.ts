// ListOffsets (versions 2 and 3, kafkajs' newest) encoded and decoded without kafkajs' objects:
// the LSO monitor and the lag service ask for the end of every partition they watch every few
// seconds, and kafkajs builds an encoder per partition for the request (copied into its topic's,
// then into the request's) and, for the answer, an object per partition with its offset and
// timestamp as decimal strings of a Long, which offsets.ts then parsed into a bigint. At 10,000
// partitions that was most of the daemon's own CPU between scrapes and much of its garbage. The
// request goes out over kafkajs' connection (TLS, SASL, throttling, its request queue: as every
// request); only the bytes are written and read here. Pure apart from `listOffsets`.
import { createRequire } from 'node:module';
import { Reader } from './wire.js';
import { EosError, ErrorCodes } from '../errors.js';

const require = createRequire(import.meta.url);
const apiKeys = require('kafkajs/src/protocol/requests/apiKeys') as { ListOffsets: number };
const { requests } = require('kafkajs/src/protocol/requests') as { requests: { ListOffsets: unknown } };
const Encoder = require('kafkajs/src/protocol/encoder') as new () => { writeBuffer(b: Buffer): unknown };
const { createErrorFromCode } = require('kafkajs/src/protocol/error') as { createErrorFromCode(code: number): Error };

export interface ListOffsetsTopic {
  topic: string;
  partitions: { partition: number; timestamp: number }[];
}

export interface ListOffsetsArgs {
  replicaId: number;
  isolationLevel: number;
  topics: ListOffsetsTopic[];
}

/** A partition the broker answered with an error (its offset is left out of the ends). */
export interface PartitionError {
  topic: string;
  partition: number;
  errorCode: number;
}

/** The body of a ListOffsets request, v2 or v3 (the same layout): the bytes kafkajs' encoder writes. */
export function encodeListOffsets(args: ListOffsetsArgs): Buffer {
  let size = 4 + 1 + 4;
  const names = args.topics.map((t) => Buffer.from(t.topic, 'utf8'));
  for (let i = 0; i < args.topics.length; i++) size += 2 + names[i]!.length + 4 + 12 * args.topics[i]!.partitions.length;
  const b = Buffer.allocUnsafe(size);
  let o = b.writeInt32BE(args.replicaId, 0);
  o = b.writeInt8(args.isolationLevel, o);
  o = b.writeInt32BE(args.topics.length, o);
  for (let i = 0; i < args.topics.length; i++) {
    const t = args.topics[i]!;
    o = b.writeInt16BE(names[i]!.length, o);
    o += names[i]!.copy(b, o);
    o = b.writeInt32BE(t.partitions.length, o);
    for (const p of t.partitions) {
      o = b.writeInt32BE(p.partition, o);
      o = b.writeBigInt64BE(BigInt(p.timestamp), o);
    }
  }
  return b;
}

/**
 * A ListOffsets v2/v3 response body (after the correlation id): each partition's offset added to
 * `ends` under its topic, the partitions with an error listed instead.
 */
export function decodeListOffsets(body: Buffer, ends: Map<string, Map<number, bigint>> = new Map()): { throttleTimeMs: number; ends: Map<string, Map<number, bigint>>; errors: PartitionError[] } {
  const r = new Reader(body, 'ListOffsets response');
  const throttleTimeMs = r.int32('throttle_time_ms');
  const nTopics = r.int32('topics count');
  const errors: PartitionError[] = [];
  for (let t = 0; t < nTopics; t++) {
    const topic = r.string('name');
    const nPartitions = r.int32('partitions count');
    let m = ends.get(topic);
    if (!m) ends.set(topic, (m = new Map()));
    for (let p = 0; p < nPartitions; p++) {
      const partition = r.int32('partition_index');
      const errorCode = r.int16('error_code');
      r.int64('timestamp'); // -1 for the latest
      const offset = r.bigint64('offset');
      if (errorCode === 0) m.set(partition, offset);
      else errors.push({ topic, partition, errorCode });
    }
  }
  return { throttleTimeMs, ends, errors };
}

/** The part of a kafkajs Broker (2.2.4) a raw ListOffsets needs. */
export interface ListOffsetsBroker {
  lookupRequest(apiKey: number, definition: unknown): (args: ListOffsetsArgs) => { request: { apiKey: number; apiVersion: number; apiName: string } };
  connectionPool: {
    send(req: { request: { apiKey: number; apiVersion: number; apiName: string; encode(): Promise<unknown> }; response: { decode(b: Buffer): Promise<unknown>; parse(x: unknown): Promise<unknown> } }): Promise<unknown>;
  };
}

/**
 * The offsets `topics` ask one broker for (its partitions only), added to `ends`. A partition
 * answered with an error fails the request with kafkajs' error for it, as kafkajs' own answer
 * would. A broker below ListOffsets v2 (Kafka before 0.11: no isolation level) fails it.
 */
export async function listOffsets(broker: ListOffsetsBroker, isolationLevel: number, topics: ListOffsetsTopic[], ends: Map<string, Map<number, bigint>>): Promise<void> {
  const args = { replicaId: -1, isolationLevel, topics };
  const { request } = broker.lookupRequest(apiKeys.ListOffsets, requests.ListOffsets)(args);
  if (request.apiVersion < 2) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `a broker speaks ListOffsets up to v${request.apiVersion} only (Kafka 0.11 or later is needed for isolation levels)`);
  const bytes = encodeListOffsets(args);
  await broker.connectionPool.send({
    request: {
      apiKey: request.apiKey,
      apiVersion: request.apiVersion,
      apiName: request.apiName,
      encode: async () => {
        const e = new Encoder();
        e.writeBuffer(bytes);
        return e;
      },
    },
    response: {
      // kafkajs hands decode() the response body; from v3 on it throttles on clientSideThrottleTime (KIP-219).
      decode: async (b: Buffer) => {
        const d = decodeListOffsets(b, ends);
        return request.apiVersion >= 3 ? { errors: d.errors, throttleTime: 0, clientSideThrottleTime: d.throttleTimeMs } : { errors: d.errors, throttleTime: d.throttleTimeMs };
      },
      parse: async (x: unknown) => {
        const first = (x as { errors: PartitionError[] }).errors[0];
        if (first) throw createErrorFromCode(first.errorCode);
        return x;
      },
    },
  });
}
