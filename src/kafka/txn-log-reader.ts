// Reads __transaction_state from the beginning with the raw fetch path (src/kafka/raw-fetch.ts,
// src/verify/record-batches.ts for the Fetch response), each record's key and value decoded by
// src/kafka/txn-log.ts. Reading the topic needs Describe and Read on it (an internal topic: a
// cluster-wide ACL few deployments grant), which is why the coordinator's APIs (txn-admin.ts)
// come first; this reader is for what those APIs do not keep: the history of each id.
import type { Kafka } from 'kafkajs';
import { RawFetcher } from './raw-fetch.js';
import { decodeFetchResponse } from '../verify/record-batches.js';
import { decodeTxnLogRecord, logRecords, type TxnLogRecord } from './txn-log.js';

export const TRANSACTION_STATE_TOPIC = '__transaction_state';

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
}

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
  const fetcher = new RawFetcher(kafka, false);
  try {
    await fetcher.connect(TRANSACTION_STATE_TOPIC);
    for (const [leader, parts] of fetcher.leaders(TRANSACTION_STATE_TOPIC, partitions)) {
      for (const partition of parts) {
        let offset = opts.from?.get(partition) ?? 0;
        for (;;) {
          const body = await fetcher.fetch(leader, TRANSACTION_STATE_TOPIC, [{ partition, offset, maxBytes: opts.maxBytesPerPartition ?? 1 << 20 }], { maxWaitMs: 0, maxBytes: opts.maxBytesPerPartition ?? 1 << 20 });
          const res = decodeFetchResponse(body);
          const p = res.partitions.find((x) => x.partition === partition);
          if (res.errorCode !== 0 || !p) throw new Error(`fetching ${TRANSACTION_STATE_TOPIC}-${partition} from broker ${leader}: error code ${res.errorCode}`);
          if (p.errorCode !== 0) throw new Error(`fetching ${TRANSACTION_STATE_TOPIC}-${partition} from broker ${leader}: partition error code ${p.errorCode}`);
          if (offset < p.logStartOffset) offset = p.logStartOffset;
          if (offset >= p.highWatermark || !p.records) break;
          const got = logRecords(p.records, offset);
          // A record at or past the high watermark this answer gave is left for the next pass (read
          // again from its offset), never stepped over.
          const beyond = got.records.find((r) => r.offset >= p.highWatermark);
          for (const r of got.records) {
            if (r.offset >= p.highWatermark) break;
            entries.push({ partition, offset: r.offset, timestampMs: r.timestampMs, record: decodeTxnLogRecord(r.key, r.value) });
          }
          if (beyond) {
            offset = beyond.offset;
            break;
          }
          if (got.nextOffset <= offset) throw new Error(`${TRANSACTION_STATE_TOPIC}-${partition}: a record batch at offset ${offset} is larger than ${opts.maxBytesPerPartition ?? 1 << 20} bytes`);
          offset = got.nextOffset;
        }
        next.set(partition, offset);
      }
    }
  } finally {
    await fetcher.close();
  }
  return { entries, next };
}
