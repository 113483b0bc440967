// Reads __transaction_state from the beginning with the raw fetch path (src/kafka/raw-fetch.ts,
// src/kafka/record-batches.ts for the Fetch response), each record's key and value decoded by
// src/kafka/txn-log.ts. Reading the topic needs Describe and Read on it (an internal topic: a
// cluster-wide ACL few deployments grant), which is why the coordinator's APIs (txn-admin.ts)
// come first; this reader is for what those APIs do not keep: the history of each id.
import type { Kafka } from 'kafkajs';
import { RawFetcher } from './raw-fetch.js';
import { decodeFetchResponse } from './record-batches.js';
import { decodeTxnLogRecord, logRecords, type TxnLogRecord } from './txn-log.js';
import { EosError, ErrorCodes } from '../errors.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { ERRORS } from './txn-errors.js';

export const TRANSACTION_STATE_TOPIC = '__transaction_state';

/** A Fetch's total size at most (the brokers' fetch.max.bytes default is 55 MiB). */
const MAX_FETCH_BYTES = 50 << 20;

export interface TxnLogEntry {
  partition: number;
  offset: number;
  timestampMs: number;
  record: TxnLogRecord;
}

export interface TxnLogReadOptions {
  /** Partitions to read; all of them by default. */
  partitions?: number[];
  /** Where each partition starts (default 0: the log start). */
  from?: Map<number, number>;
  maxBytesPerPartition?: number;
  /** A partition whose leader is moving or not yet elected is read again this many times (default 4), */
  leaderRetries?: number;
  /** after waiting this long times the attempt's number, on fresh metadata (default 250 ms). */
  leaderBackoffMs?: number;
  clock?: Clock;
}

/**
 * Partition errors that say the leader moved, is not elected yet or is loading (Kafka's retriable
 * errors of a Fetch: UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER,
 * REPLICA_NOT_AVAILABLE, KAFKA_STORAGE_ERROR, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
 * OFFSET_NOT_AVAILABLE). A consumer refreshes its metadata and asks again; so does this reader,
 * within the pass: the log's partitions are created, and their leaders elected, when the first
 * transactional producer of a cluster starts, and a broker restart moves them. Only a leader that
 * does not settle within the retries fails the pass.
 */
const LEADER_MOVED = new Set<number>([
  ERRORS.UNKNOWN_TOPIC_OR_PARTITION,
  ERRORS.LEADER_NOT_AVAILABLE,
  ERRORS.NOT_LEADER_OR_FOLLOWER,
  ERRORS.REPLICA_NOT_AVAILABLE,
  ERRORS.KAFKA_STORAGE_ERROR,
  ERRORS.FENCED_LEADER_EPOCH,
  ERRORS.UNKNOWN_LEADER_EPOCH,
  ERRORS.OFFSET_NOT_AVAILABLE,
]);

/**
 * The log's partitions; null when the topic does not exist (no transactional producer has run on
 * the cluster yet). Asked by name, never through the topic list: a principal without Describe on
 * the topic is not shown it in a list (which would read as an empty log), while a Metadata request
 * naming it answers TOPIC_AUTHORIZATION_FAILED, thrown here for the callers to report as a
 * missing permission.
 */
async function logPartitions(kafka: Kafka): Promise<number[] | null> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const md = await admin.fetchTopicMetadata({ topics: [TRANSACTION_STATE_TOPIC] });
    return (md.topics[0]?.partitions ?? []).map((p) => p.partitionId).sort((a, b) => a - b);
  } catch (err) {
    if ((err as { type?: unknown }).type === 'UNKNOWN_TOPIC_OR_PARTITION') return null;
    throw err;
  } finally {
    await admin.disconnect();
  }
}

/**
 * One pass over the transaction log (an empty one while the topic does not exist): every record from `from` up to the high watermark at the time
 * of each partition's fetch, in offset order per partition, and where each partition ended (the
 * `from` of the next pass).
 */
export async function readTransactionLog(kafka: Kafka, opts: TxnLogReadOptions = {}): Promise<{ entries: TxnLogEntry[]; next: Map<number, number> }> {
  const entries: TxnLogEntry[] = [];
  const next = new Map<number, number>();
  // No log yet is an empty log: nothing to read, and every partition starts at 0 when it comes.
  const partitions = opts.partitions ?? (await logPartitions(kafka));
  if (partitions === null) return { entries, next };
  const position = new Map(partitions.map((partition) => [partition, opts.from?.get(partition) ?? 0]));
  const fetcher = new RawFetcher(kafka, false);
  const retries = opts.leaderRetries ?? 4;
  const backoffMs = opts.leaderBackoffMs ?? 250;
  try {
    await fetcher.connect(TRANSACTION_STATE_TOPIC);
    let todo = partitions;
    for (let attempt = 1; ; attempt++) {
      const moved = await readRound(fetcher, todo, position, opts.maxBytesPerPartition ?? 1 << 20, entries);
      if (moved.length === 0) break;
      if (attempt > retries) {
        const m = moved[0]!;
        throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `fetching ${TRANSACTION_STATE_TOPIC}-${m.partition} from broker ${m.leader}: partition error code ${m.errorCode} (its leader did not settle in ${retries} retries)`);
      }
      await (opts.clock ?? systemClock).sleep(backoffMs * attempt);
      await fetcher.refresh();
      todo = moved.map((m) => m.partition);
    }
  } finally {
    await fetcher.close();
  }
  for (const [partition, offset] of position) next.set(partition, offset);
  return { entries, next };
}

/**
 * One round over `partitions`, each from its `position` to its end (moved on in place), entries
 * appended; the partitions whose leader answered that it moved or is not ready (LEADER_MOVED), to be
 * asked again on fresh metadata.
 */
async function readRound(fetcher: RawFetcher, partitions: number[], position: Map<number, number>, perPartition: number, entries: TxnLogEntry[]): Promise<{ partition: number; leader: string; errorCode: number }[]> {
  const moved: { partition: number; leader: string; errorCode: number }[] = [];
  // Every partition a broker leads in one Fetch (50 partitions by default: one round trip per
  // leader and round, not one per partition), the leaders read side by side.
  await Promise.all(
    [...fetcher.leaders(TRANSACTION_STATE_TOPIC, partitions)].map(async ([leader, parts]) => {
      const pending = new Set(parts);
      while (pending.size) {
        const asked = [...pending];
        const body = await fetcher.fetch(
          leader,
          TRANSACTION_STATE_TOPIC,
          asked.map((partition) => ({ partition, offset: position.get(partition)!, maxBytes: perPartition })),
          { maxWaitMs: 0, maxBytes: Math.min(perPartition * asked.length, MAX_FETCH_BYTES) },
        );
        const res = decodeFetchResponse(body);
        if (res.errorCode !== 0) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `fetching ${TRANSACTION_STATE_TOPIC} from broker ${leader}: error code ${res.errorCode}`);
        // A partition below its high watermark answered with no records: the response filled up
        // on the others (the Fetch's total size, the broker's fetch.max.bytes). It is asked again
        // while others still bring records, so a pass reads every partition to its end (a
        // baseline that stopped short would count the rest of the history as news next pass).
        let progressed = false;
        const starved: number[] = [];
        for (const partition of asked) {
          const p = res.partitions.find((x) => x.partition === partition);
          if (!p) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `fetching ${TRANSACTION_STATE_TOPIC}-${partition} from broker ${leader}: no answer for the partition`);
          if (p.errorCode !== 0) {
            if (!LEADER_MOVED.has(p.errorCode)) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `fetching ${TRANSACTION_STATE_TOPIC}-${partition} from broker ${leader}: partition error code ${p.errorCode}`);
            moved.push({ partition, leader, errorCode: p.errorCode });
            pending.delete(partition);
            continue;
          }
          let offset = position.get(partition)!;
          if (offset < p.logStartOffset) offset = p.logStartOffset;
          position.set(partition, offset);
          if (offset >= p.highWatermark) {
            pending.delete(partition);
            continue;
          }
          if (!p.records || p.records.length === 0) {
            starved.push(partition);
            continue;
          }
          const got = logRecords(p.records, offset);
          if (got.records.length === 0 && got.nextOffset <= offset) {
            // Only part of a batch: the response's total size ran out inside it. The first
            // partition of a Fetch always gets its first batch whole (KIP-74), so there it means
            // a batch larger than the partition's limit.
            if (partition === asked[0]) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `${TRANSACTION_STATE_TOPIC}-${partition}: a record batch at offset ${offset} is larger than ${perPartition} bytes`);
            starved.push(partition);
            continue;
          }
          progressed = true;
          // A record at or past the high watermark this answer gave is left for the next pass (read
          // again from its offset), never stepped over.
          const beyond = got.records.find((r) => r.offset >= p.highWatermark);
          for (const r of got.records) {
            if (r.offset >= p.highWatermark) break;
            entries.push({ partition, offset: r.offset, timestampMs: r.timestampMs, record: decodeTxnLogRecord(r.key, r.value) });
          }
          if (beyond) {
            position.set(partition, beyond.offset);
            pending.delete(partition);
            continue;
          }
          if (got.nextOffset <= offset) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `${TRANSACTION_STATE_TOPIC}-${partition}: a record batch at offset ${offset} is larger than ${perPartition} bytes`);
          position.set(partition, got.nextOffset);
        }
        // Nothing came for any of them: the rest waits for the next pass.
        if (!progressed) for (const partition of starved) pending.delete(partition);
      }
    }),
  );
  return moved;
}
