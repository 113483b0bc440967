// Reads a topic from the beginning to the end it had when the read started, with a throwaway
// consumer group that never commits: the verifier's and the tests' independent view of a sink.
// read_committed stops at the last stable offset, so it waits for open transactions to finish.
import { randomUUID } from 'node:crypto';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { RawFetcher } from '../kafka/raw-fetch.js';
import { decodeFetchResponse, scanRecordSet } from './record-batches.js';

export interface ReadOptions {
  readUncommitted?: boolean;
  timeoutMs?: number;
  onRecord(partition: number, message: KafkaMessage): void;
  /** After each batch: offsets read so far and the offsets to read (the ends summed; compaction or retention make it an upper bound). */
  onProgress?(read: number, total: number): void;
}

export async function readTopic(kafka: Kafka, topic: string, opts: ReadOptions): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  let ends: Map<number, bigint>;
  try {
    ends = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
  } finally {
    await admin.disconnect();
  }
  // Fetches of at most 1 MiB (256 KiB per partition) instead of kafkajs' 10 MiB (1 MiB): kafkajs
  // decodes a whole fetch response into message objects before handing out its batches, so the
  // smaller responses keep fewer of them alive at a time. Reading 1,000,000 records of ~90 bytes
  // (bench/checker.bench.ts's topic) this took the same time within noise, about 10 % less CPU
  // (less garbage collection) and 40 % less peak memory than kafkajs' defaults. The broker still
  // returns a record batch larger than these limits when it comes first, so any record size makes
  // progress.
  const consumer = kafka.consumer({
    groupId: `eoswatch-reader-${randomUUID()}`,
    readUncommitted: opts.readUncommitted ?? false,
    maxWaitTimeInMs: 200,
    maxBytes: 1024 * 1024,
    maxBytesPerPartition: 256 * 1024,
  });
  await consumer.connect();
  const total = Number([...ends.values()].reduce((a, b) => a + b, 0n));
  const position = new Map<number, number>();
  let read = 0;
  const reached = new Set<number>();
  for (const [p, end] of ends) if (end === 0n) reached.add(p);
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  if (reached.size === ends.size) done();
  // END_BATCH_PROCESS also fires for batches holding only control records or aborted data,
  // whose lastOffset still moves the position: that is how a topic ending in a marker is finished.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    const end = ends.get(payload.partition) ?? 0n;
    if (BigInt(payload.lastOffset) + 1n >= end && !reached.has(payload.partition)) {
      reached.add(payload.partition);
      if (reached.size === ends.size) done();
    }
  });
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const end = ends.get(batch.partition) ?? 0n;
        const { messages } = batch;
        if (messages.length === 0) return;
        // Messages come in offset order: when the last one is below the end, all are (no BigInt per record).
        if (BigInt(messages[messages.length - 1]!.offset) < end) for (const m of messages) opts.onRecord(batch.partition, m);
        else for (const m of messages) if (BigInt(m.offset) < end) opts.onRecord(batch.partition, m);
        if (opts.onProgress) {
          const next = Math.min(Number(messages[messages.length - 1]!.offset) + 1, Number(end));
          read += next - (position.get(batch.partition) ?? 0);
          position.set(batch.partition, next);
          opts.onProgress(read, total);
        }
      },
    });
    const timeoutMs = opts.timeoutMs ?? 120_000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      finished,
      new Promise((_, rej) => {
        timer = setTimeout(
          () => rej(new Error(`reading ${topic} did not reach the end of partitions ${[...ends.keys()].filter((p) => !reached.has(p)).join(', ')} within ${timeoutMs} ms (an open transaction holds the last stable offset back?)`)),
          timeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
  } finally {
    await consumer.disconnect();
  }
}

export interface RecordReadOptions {
  readUncommitted?: boolean;
  timeoutMs?: number;
  /** Each record a consumer of the isolation level gets; `value` is a view into the fetched bytes, valid during the call. */
  onRecord(partition: number, value: Buffer | null, timestampMs: number, offset: number): void;
  onProgress?(read: number, total: number): void;
}

/** Per-partition and per-request fetch sizes of readTopicRecords. */
const PARTITION_MAX_BYTES = 256 * 1024;
const FETCH_MAX_BYTES = 1024 * 1024;
/** Fetch error codes after which the leader is looked up again and the fetch retried. */
const RETRIABLE = new Set([3, 5, 6, 7, 13, 56, 74, 75]);

/**
 * readTopic for the verifier: the same records of the same range (the topic from its log start to
 * the end it had when the read started, read_committed unless told otherwise), fetched with raw
 * Fetch requests and decoded by src/verify/record-batches.ts instead of a kafkajs consumer: no
 * consumer group, no per-record objects. One request per partition leader at a time; a record is
 * passed on as (partition, value, timestamp, offset).
 */
export async function readTopicRecords(kafka: Kafka, topic: string, opts: RecordReadOptions): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  const next = new Map<number, number>();
  const ends = new Map<number, number>();
  try {
    for (const o of await admin.fetchTopicOffsets(topic)) {
      ends.set(o.partition, Number(o.high));
      next.set(o.partition, Number(o.low));
    }
  } finally {
    await admin.disconnect();
  }
  const starts = new Map(next);
  const total = [...ends].reduce((a, [p, e]) => a + e - next.get(p)!, 0);
  const open = () => [...ends.keys()].filter((p) => next.get(p)! < ends.get(p)!);
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  const fetcher = new RawFetcher(kafka, !opts.readUncommitted);
  try {
    await fetcher.connect(topic);
    let read = 0;
    while (open().length) {
      if (Date.now() > deadline) {
        throw new Error(`reading ${topic} did not reach the end of partitions ${open().join(', ')} within ${timeoutMs} ms (an open transaction holds the last stable offset back?)`);
      }
      let stale = false;
      await Promise.all(
        [...fetcher.leaders(topic, open())].map(async ([nodeId, partitions]) => {
          const body = await fetcher.fetch(
            nodeId,
            topic,
            partitions.map((partition) => ({ partition, offset: next.get(partition)!, maxBytes: PARTITION_MAX_BYTES })),
            { maxWaitMs: 200, maxBytes: FETCH_MAX_BYTES },
          );
          const res = decodeFetchResponse(body);
          for (const p of res.partitions) {
            if (p.errorCode === 1) {
              // OFFSET_OUT_OF_RANGE: retention removed the records ahead of us; go on from the log start.
              next.set(p.partition, Math.max(next.get(p.partition)!, p.logStartOffset));
              continue;
            }
            if (RETRIABLE.has(p.errorCode)) {
              stale = true;
              continue;
            }
            if (p.errorCode !== 0) throw new Error(`fetching ${topic}/${p.partition}: Kafka error code ${p.errorCode}`);
            const from = next.get(p.partition)!;
            const end = ends.get(p.partition)!;
            // After a read_committed fetch the last stable offset may stop short of the records' end:
            // markers and aborted batches below it still move the position.
            if (!p.records) continue;
            const { nextOffset } = scanRecordSet(p.records, from, end, p.aborted, (value, ts, offset) => opts.onRecord(p.partition, value, ts, offset));
            next.set(p.partition, nextOffset);
          }
        }),
      );
      if (stale) {
        await new Promise((r) => setTimeout(r, 200));
        await fetcher.refresh();
      }
      if (opts.onProgress) {
        read = [...ends].reduce((a, [p, e]) => a + Math.min(next.get(p)!, e) - starts.get(p)!, 0);
        opts.onProgress(read, total);
      }
    }
  } finally {
    await fetcher.close();
  }
}
