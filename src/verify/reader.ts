// Reads a topic from the beginning to the end it had when the read started, with a throwaway
// consumer group that never commits: the verifier's and the tests' independent view of a sink.
// A read_committed read first waits until the sink is stable (waitSinkStable: every partition's
// last stable offset has reached the high watermark taken when the read started), then reads up
// to that high watermark: a transaction still open below it never ends a read early.
import { randomUUID } from 'node:crypto';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { createCluster, EndOffsetReader, listStarts, type OffsetCluster } from '../kafka/offsets.js';
import { RawFetcher, type RawCluster } from '../kafka/raw-fetch.js';
import { retryRetriable } from '../kafka/retry.js';
import { decodeFetchResponse, scanRecordSet } from '../kafka/record-batches.js';
import { stableLine, targetsOf, unstableMessage, unstablePartitions, type UnstablePartition } from './stability.js';
import { EosError, ErrorCodes } from '../errors.js';
import { pollUntil, PollTimeoutError } from '../runtime/poll-until.js';

/** A sink found stable: the ends a read_committed read goes to, and how long that took. */
export interface SinkStable {
  topic: string;
  /** Per partition the high watermark taken when the read started; every partition's LSO has reached it. */
  ends: Map<number, bigint>;
  partitions: number;
  waitedMs: number;
  /** "sink stable: LSO reached HW on 6 partitions of <topic> after 0.4 s" */
  line: string;
}

/** Called while waitSinkStable waits: the partitions whose LSO is still below the HW taken at the start. */
export type OnWaiting = (pending: UnstablePartition[], waitedMs: number) => void;

/** How often waitSinkStable reads the LSOs again while a transaction is open. */
const STABLE_POLL_MS = 100;

/**
 * The one wait before a verdict on a sink (both readers below, so the test harness's checkSink,
 * the verifier's checkSinkTopic, `eoswatch verify check`, the chaos rounds and the benchmarks):
 * takes each partition's high watermark now and polls the last stable offsets until every one has
 * reached it, i.e. no transaction that wrote below it is still open. Throws, naming the partitions
 * with their LSO and HW, when that takes longer than timeoutMs. Readings that fail (a broker
 * restarting) are retried until the deadline (pollUntil: a reading still running then is not
 * waited for).
 */
export async function waitSinkStable(
  kafka: Kafka,
  topic: string,
  opts: {
    timeoutMs?: number;
    pollMs?: number;
    /** Each reading that found partitions not yet stable. */
    onWaiting?: OnWaiting;
    /** Read over this cluster (connected here when it is not; left connected) instead of connections of its own. */
    cluster?: OffsetCluster;
  } = {},
): Promise<SinkStable> {
  const t0 = Date.now();
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const reader = new EndOffsetReader(kafka, opts.cluster);
  let targets: Map<number, bigint> | undefined;
  let pending: UnstablePartition[] = [];
  let lastError: Error | undefined;
  // A reading still running at the deadline is not waited for: it reports nothing after the end.
  let over = false;
  try {
    await pollUntil(
      `the sink ${topic} stable`,
      async () => {
        try {
          const now = await reader.read(topic);
          if (now.length === 0) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `topic ${topic} has no partitions (does it exist?)`);
          if (over) return false;
          targets ??= targetsOf(now);
          pending = unstablePartitions(targets, now);
          lastError = undefined;
        } catch (err) {
          if (!over) lastError = err as Error;
          return false;
        }
        if (pending.length > 0) opts.onWaiting?.(pending, Date.now() - t0);
        return pending.length === 0;
      },
      { timeoutMs, intervalMs: opts.pollMs ?? STABLE_POLL_MS },
    );
  } catch (err) {
    if (!(err instanceof PollTimeoutError)) throw err;
    if (!targets || lastError) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `reading the ends of ${topic} failed for ${timeoutMs} ms: ${lastError?.message ?? 'no reading'}`);
    throw new EosError(ErrorCodes.SINK_NOT_STABLE, unstableMessage(topic, pending, Date.now() - t0));
  } finally {
    over = true;
    await reader.close();
  }
  const waitedMs = Date.now() - t0;
  return { topic, ends: targets!, partitions: targets!.size, waitedMs, line: stableLine(topic, targets!.size, waitedMs) };
}

/** Each partition's high watermark now (a read_uncommitted read's ends: nothing to wait for). */
async function highWatermarks(kafka: Kafka, topic: string, cluster?: OffsetCluster): Promise<Map<number, bigint>> {
  const reader = new EndOffsetReader(kafka, cluster);
  try {
    return new Map((await reader.read(topic)).map((e) => [e.partition, e.high]));
  } finally {
    await reader.close();
  }
}

/** The ends of a read: read_committed waits for a stable sink (and reports it), read_uncommitted takes the high watermarks. */
async function readEnds(
  kafka: Kafka,
  topic: string,
  readUncommitted: boolean,
  timeoutMs: number,
  hooks: { onStable?: (s: SinkStable) => void; onWaiting?: OnWaiting },
  cluster?: OffsetCluster,
): Promise<Map<number, bigint>> {
  if (readUncommitted) return highWatermarks(kafka, topic, cluster);
  const stable = await waitSinkStable(kafka, topic, { timeoutMs, onWaiting: hooks.onWaiting, cluster });
  hooks.onStable?.(stable);
  return stable.ends;
}

export interface ReadOptions {
  readUncommitted?: boolean;
  timeoutMs?: number;
  onRecord(partition: number, message: KafkaMessage): void;
  /** After each batch: offsets read so far and the offsets to read (the ends summed; compaction or retention make it an upper bound). */
  onProgress?(read: number, total: number): void;
  /** A read_committed read, once the sink is stable (before the first record). */
  onStable?(s: SinkStable): void;
  /** A read_committed read, while it waits for the sink to be stable. */
  onWaiting?: OnWaiting;
}

export async function readTopic(kafka: Kafka, topic: string, opts: ReadOptions): Promise<void> {
  const t0 = Date.now();
  const timeoutMs = opts.timeoutMs ?? 120_000;
  // One deadline for the wait and the read.
  const ends = await readEnds(kafka, topic, opts.readUncommitted ?? false, timeoutMs, opts);
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
  /** The next offset to pass on, per partition. */
  const delivered = new Map<number, number>();
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
        let { messages } = batch;
        if (messages.length === 0) return;
        // Each offset is passed on once: kafkajs restarts a consumer that crashed (a broker gone, a
        // coordinator moving) and, with no offsets committed, fetches the partition from its start
        // again. A record it delivers again is the reader's repeat, not a duplicate in the topic (a
        // duplicate written twice sits at two offsets).
        const from = delivered.get(batch.partition) ?? 0;
        if (Number(messages[0]!.offset) < from) messages = messages.filter((m) => Number(m.offset) >= from);
        if (messages.length === 0) return;
        delivered.set(batch.partition, Number(messages[messages.length - 1]!.offset) + 1);
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
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      finished,
      new Promise((_, rej) => {
        timer = setTimeout(
          () => rej(new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `reading ${topic} did not reach the end of partitions ${[...ends.keys()].filter((p) => !reached.has(p)).join(', ')} within ${timeoutMs} ms`)),
          Math.max(0, t0 + timeoutMs - Date.now()),
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
  /** A read_committed read, once the sink is stable (before the first record). */
  onStable?(s: SinkStable): void;
  /** A read_committed read, while it waits for the sink to be stable. */
  onWaiting?: OnWaiting;
}

/** Per-partition and per-request fetch sizes of readTopicRecords. */
const PARTITION_MAX_BYTES = 256 * 1024;
const FETCH_MAX_BYTES = 1024 * 1024;
/** Fetch error codes after which the leader is looked up again and the fetch retried. */
const RETRIABLE = new Set([3, 5, 6, 7, 13, 56, 74, 75]);

/**
 * readTopic for the verifier: the same records of the same range (the topic from its log start to
 * the high watermark it had when the read started, read_committed, once stable, unless told otherwise), fetched with raw
 * Fetch requests and decoded by src/kafka/record-batches.ts instead of a kafkajs consumer: no
 * consumer group, no per-record objects. One request per partition leader at a time; a record is
 * passed on as (partition, value, timestamp, offset).
 */
export async function readTopicRecords(kafka: Kafka, topic: string, opts: RecordReadOptions): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  // One deadline for the wait and the read (a bound on the read loop below, which fetches as fast
  // as records come: no condition to poll for).
  const deadline = Date.now() + timeoutMs;
  // One kafkajs cluster (its connections and metadata) for the ends, the log start offsets and the
  // fetches: each ListOffsets and Fetch names its isolation level. An end offset reader (two
  // clusters), an admin and the fetcher, connected in turn, took about 40 ms before the first fetch.
  const cluster = createCluster<OffsetCluster & RawCluster>(kafka, opts.readUncommitted ? 0 : 1);
  const fetcher = new RawFetcher(kafka, !opts.readUncommitted, cluster);
  try {
    const ends = new Map([...(await readEnds(kafka, topic, opts.readUncommitted ?? false, timeoutMs, opts, cluster))].map(([p, e]) => [p, Number(e)]));
    // Log start offsets (the same at either isolation level); retried as kafkajs' admin retried them.
    const lows = (await retryRetriable(() => listStarts(cluster, [topic]))).get(topic);
    const next = new Map<number, number>();
    for (const p of ends.keys()) next.set(p, Math.min(Number(lows?.get(p) ?? 0n), ends.get(p)!));
    const starts = new Map(next);
    const total = [...ends].reduce((a, [p, e]) => a + e - next.get(p)!, 0);
    const open = () => [...ends.keys()].filter((p) => next.get(p)! < ends.get(p)!);
    await fetcher.connect(topic);
    let read = 0;
    while (open().length) {
      if (Date.now() > deadline) {
        throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `reading ${topic} did not reach the end of partitions ${open().join(', ')} within ${timeoutMs} ms`);
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
            if (p.errorCode !== 0) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `fetching ${topic}/${p.partition}: Kafka error code ${p.errorCode}`);
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
    await cluster.disconnect().catch(() => undefined);
  }
}
