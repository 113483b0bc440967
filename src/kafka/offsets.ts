// Offsets the pipeline and the LSO poller need: a group's committed offsets, and each
// partition's high watermark and last stable offset (LSO).
import { createRequire } from 'node:module';
import type { Admin, Kafka } from 'kafkajs';
import { retryRetriable } from './retry.js';
import { listOffsets, type ListOffsetsBroker } from './list-offsets.js';

const require = createRequire(import.meta.url);
/** kafkajs' own filter of aborted records (the consumer's), so the probe reads what a consumer would. */
const filterAbortedMessages = require('kafkajs/src/consumer/filterAbortedMessages') as (r: { messages: FetchedRecord[]; abortedTransactions: unknown[] }) => FetchedRecord[];

/** Committed offset per partition of `topic` for `groupId`; null where the group has none. */
export async function fetchCommittedOffsets(admin: Admin, groupId: string, topic: string): Promise<Map<number, bigint | null>> {
  const res = await retryRetriable(() => admin.fetchOffsets({ groupId, topics: [topic] }));
  const out = new Map<number, bigint | null>();
  for (const t of res) {
    for (const p of t.partitions) out.set(p.partition, p.offset === '-1' || p.offset === '' ? null : BigInt(p.offset));
  }
  return out;
}

export interface PartitionEnds {
  partition: number;
  /** High watermark: end of the log, including records of open transactions. */
  high: bigint;
  /** Last stable offset: end of what read_committed consumers may read. */
  lso: bigint;
}

export interface OffsetCluster {
  connect(): Promise<void>;
  findGroupCoordinator(req: { groupId: string }): Promise<{
    offsetCommit(req: { groupId: string; groupGenerationId: number; memberId: string; topics: { topic: string; partitions: { partition: number; offset: string }[] }[] }): Promise<unknown>;
  }>;
  refreshMetadata(): Promise<void>;
  disconnect(): Promise<void>;
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  refreshMetadataIfNecessary(): Promise<void>;
  findTopicPartitionMetadata(topic: string): { partitionId: number; leader?: number | null }[];
  findBroker(req: { nodeId: string }): Promise<{
    fetch(req: {
      replicaId: number;
      isolationLevel: number;
      maxWaitTime: number;
      minBytes: number;
      maxBytes: number;
      topics: { topic: string; partitions: { partition: number; fetchOffset: string; maxBytes: number }[] }[];
    }): Promise<{ responses: { topicName: string; partitions: { partition: number; errorCode: number; abortedTransactions: unknown[]; messages: FetchedRecord[] }[] }[] }>;
  } & ListOffsetsBroker>;
}

interface FetchedRecord {
  offset: string;
  timestamp: string;
  isControlRecord?: boolean;
}

/** What a read_committed consumer would get first from a partition, starting at an offset. */
export type FirstRecord =
  /** A readable record below the LSO: real lag. */
  | { kind: 'record'; offset: bigint; timestamp: number }
  /** Only commit/abort markers and aborted records up to the LSO: nothing left to read. */
  | { kind: 'none' }
  /** The fetched bytes ended before the LSO without a readable record (or the fetch failed). */
  | { kind: 'unknown' };

export interface ProbeRequest {
  topic: string;
  partition: number;
  from: bigint;
  lso: bigint;
}

const READ_UNCOMMITTED = 0;
const READ_COMMITTED = 1;
/** ListOffsets' timestamp for the end of the log (what a read at this isolation level reaches). */
const LATEST = -1;
/** ListOffsets' timestamp for the start of the log. */
const EARLIEST = -2;

/**
 * kafkajs' admin lists offsets without an isolation level of its own, and its ListOffsets request
 * (v2 and later) then sends the protocol's default, READ_COMMITTED: admin.fetchTopicOffsets'
 * `high` is the last stable offset, not the high watermark (a sink read that took its end from it
 * stopped short of a transaction whose marker was not yet written: test/repro/dlq-race.ts). Both
 * ends need an explicit isolation level. kafkajs builds clusters with one only for consumers,
 * through a factory it keeps under a private symbol; the offset reader uses that factory directly. kafkajs 2.2.4 is in maintenance, so this inner
 * API does not move; test/integration/lag.test.ts checks LSO and high-watermark answers against real Kafka.
 */
export function createCluster<C = OffsetCluster>(kafka: Kafka, isolationLevel: number, opts: { metadataMaxAge?: number } = {}): C {
  const sym = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster');
  const factory = sym ? (kafka as unknown as Record<symbol, unknown>)[sym] : undefined;
  if (typeof factory !== 'function') throw new Error('this kafkajs version has no cluster factory; LSO reading needs kafkajs 2.x');
  return (factory as (o: { isolationLevel: number; metadataMaxAge?: number }) => C)({ isolationLevel, ...opts });
}

/**
 * How long the end-offset reader's metadata stands (kafkajs' default for its producers and
 * consumers). The factory's default is 0, which made every refreshMetadataIfNecessary() a refresh:
 * each reading of each topic decoded the metadata of every watched topic again, twice (200,000
 * partitions every 5 s for the LSO monitor on 10 topics of 1,000).
 */
const METADATA_MAX_AGE_MS = 300_000;

/**
 * Reads high watermark and LSO of every partition of the given topics, over one cluster of its own
 * per call site, or over a cluster connected by its caller (`shared`; close() leaves it connected).
 * Both isolation levels go over the same connections: each ListOffsets and Fetch names its own
 * level (list-offsets.ts, probe), so the cluster's own level is never used. One cluster, not one
 * per level, keeps one copy of kafkajs' metadata of the watched topics (at 10,000 partitions
 * about 2.2 MB of objects per copy: bench/RESULTS.md).
 */
export class EndOffsetReader {
  private readonly cluster: OffsetCluster;
  private connected = false;
  private readonly owned: boolean;

  constructor(kafka: Kafka, shared?: OffsetCluster) {
    this.owned = !shared;
    this.cluster = shared ?? createCluster(kafka, READ_COMMITTED, { metadataMaxAge: METADATA_MAX_AGE_MS });
  }

  private async ensureConnected(): Promise<void> {
    if (this.connected) return;
    await this.cluster.connect(); // kafkajs: nothing to do when connected
    this.connected = true;
  }

  async read(topic: string): Promise<PartitionEnds[]> {
    return (await this.readMany([topic])).get(topic) ?? [];
  }

  /**
   * High watermark and LSO of every partition of the given topics: one ListOffsets per broker and
   * isolation level, however many topics (listEnds).
   */
  async readMany(topics: string[]): Promise<Map<string, PartitionEnds[]>> {
    await this.ensureConnected();
    const [high, lso] = await Promise.all([freshOnFailure(this.cluster, () => listEnds(this.cluster, READ_UNCOMMITTED, topics)), freshOnFailure(this.cluster, () => listEnds(this.cluster, READ_COMMITTED, topics))]);
    const out = new Map<string, PartitionEnds[]>();
    for (const [topic, parts] of high) {
      const stable = lso.get(topic);
      out.set(
        topic,
        [...parts.entries()].map(([partition, h]) => ({ partition, high: h, lso: stable?.get(partition) ?? h })).sort((a, b) => a.partition - b.partition),
      );
    }
    return out;
  }

  /**
   * Reads, read_committed, what a consumer at `from` would get first on each partition: one Fetch
   * per partition leader for all requests, `maxBytes` per partition. Used sparingly (partitions whose
   * committed offset stands still a little below the LSO), to tell markers from unread records.
   */
  async probe(requests: ProbeRequest[], maxBytes = 64 * 1024): Promise<Map<string, FirstRecord>> {
    await this.ensureConnected();
    const out = new Map<string, FirstRecord>();
    const byLeader = new Map<string, Map<string, ProbeRequest[]>>();
    const topics = [...new Set(requests.map((r) => r.topic))];
    await this.cluster.addMultipleTargetTopics(topics);
    await this.cluster.refreshMetadataIfNecessary();
    for (const topic of topics) groupByLeader(this.cluster, topic, requests.filter((r) => r.topic === topic), (r) => r.partition, byLeader);
    await Promise.all(
      [...byLeader].map(async ([nodeId, perTopic]) => {
        const broker = await this.cluster.findBroker({ nodeId });
        const res = await broker.fetch({
          replicaId: -1,
          isolationLevel: READ_COMMITTED,
          maxWaitTime: 0,
          minBytes: 0,
          maxBytes: maxBytes * requests.length,
          topics: [...perTopic].map(([topic, rs]) => ({ topic, partitions: rs.map((r) => ({ partition: r.partition, fetchOffset: String(r.from), maxBytes })) })),
        });
        for (const t of res.responses) {
          for (const p of t.partitions) {
            const req = perTopic.get(t.topicName)?.find((r) => r.partition === p.partition);
            if (!req) continue;
            out.set(probeKey(req.topic, req.partition), p.errorCode ? { kind: 'unknown' } : firstReadable(p.messages, p.abortedTransactions, req));
          }
        }
      }),
    );
    return out;
  }

  async close(): Promise<void> {
    this.connected = false;
    if (this.owned) await this.cluster.disconnect().catch(() => undefined);
  }
}

/**
 * `read` once more on fresh metadata when it fails: the metadata is kept for minutes
 * (METADATA_MAX_AGE_MS), so a leader that moved since (NOT_LEADER_FOR_PARTITION, a broker gone,
 * a partition without a leader in the kept metadata) costs a refresh, not a failed reading.
 */
export async function freshOnFailure<T>(cluster: Pick<OffsetCluster, 'refreshMetadata'>, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    // A refresh that fails too (the cluster unreachable, a topic deleted) leaves the reading's error.
    await cluster.refreshMetadata().catch(() => {
      throw err;
    });
    return read();
  }
}

/**
 * Adds `items` (of one topic) to `byLeader` under their partition's leader, in one pass over the
 * topic's metadata (kafkajs' `findLeaderForPartitions` is O(n²)). Items of partitions the metadata
 * does not have are left out; a partition without a leader fails, naming it.
 */
function groupByLeader<T>(cluster: OffsetCluster, topic: string, items: T[], partitionOf: (item: T) => number, byLeader: Map<string, Map<string, T[]>>): void {
  const leaders = new Map(cluster.findTopicPartitionMetadata(topic).map((p) => [p.partitionId, p.leader]));
  for (const item of items) {
    const partition = partitionOf(item);
    if (!leaders.has(partition)) continue;
    const leader = leaders.get(partition);
    if (leader === null || leader === undefined || leader < 0) throw new Error(`no leader for partition ${partition} of ${topic}`);
    let perTopic = byLeader.get(String(leader));
    if (!perTopic) byLeader.set(String(leader), (perTopic = new Map()));
    let list = perTopic.get(topic);
    if (!list) perTopic.set(topic, (list = []));
    list.push(item);
  }
}

/**
 * The end offset (ListOffsets, latest) of every partition of `topics` at `isolationLevel`: one
 * request per partition leader. The partitions are grouped by leader in one pass over the
 * metadata (groupByLeader): kafkajs' `fetchTopicsOffset` groups them in O(n²) per topic (an Array.find per
 * partition, the leader's list copied on every partition, then a filter with `includes`: about
 * 10 million element copies per LSO reading of 10 topics × 1,000 partitions; the daemon's CPU at
 * that size moved within noise with this change, bench/RESULTS.md). A partition without a leader
 * fails the reading, as it does in kafkajs. The requests are written and their answers read
 * without kafkajs' objects per partition (list-offsets.ts).
 */
export async function listEnds(cluster: OffsetCluster, isolationLevel: number, topics: string[]): Promise<Map<string, Map<number, bigint>>> {
  return listOffsetsAt(cluster, isolationLevel, topics, LATEST);
}

/** The log start offset of every partition of `topics` (ListOffsets, earliest), as listEnds reads the ends. */
export async function listStarts(cluster: OffsetCluster, topics: string[]): Promise<Map<string, Map<number, bigint>>> {
  return listOffsetsAt(cluster, READ_UNCOMMITTED, topics, EARLIEST);
}

async function listOffsetsAt(cluster: OffsetCluster, isolationLevel: number, topics: string[], timestamp: number): Promise<Map<string, Map<number, bigint>>> {
  await cluster.addMultipleTargetTopics(topics);
  await cluster.refreshMetadataIfNecessary();
  const byLeader = new Map<string, Map<string, { partition: number; timestamp: number }[]>>();
  for (const topic of topics) {
    const all = cluster.findTopicPartitionMetadata(topic).map((p) => ({ partition: p.partitionId, timestamp }));
    groupByLeader(cluster, topic, all, (p) => p.partition, byLeader);
  }
  // Topics without partitions in the metadata (unknown, deleted) stay out, as in kafkajs' answer.
  const out = new Map<string, Map<number, bigint>>();
  await Promise.all(
    [...byLeader].map(async ([nodeId, perTopic]) => {
      const broker = await cluster.findBroker({ nodeId });
      await listOffsets(broker, isolationLevel, [...perTopic].map(([topic, partitions]) => ({ topic, partitions })), out);
    }),
  );
  return out;
}

export const probeKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

function firstReadable(messages: FetchedRecord[], abortedTransactions: unknown[], req: ProbeRequest): FirstRecord {
  const inRange = messages.filter((m) => BigInt(m.offset) >= req.from);
  const readable = filterAbortedMessages({ messages: inRange, abortedTransactions }).find((m) => !m.isControlRecord && BigInt(m.offset) < req.lso);
  if (readable) return { kind: 'record', offset: BigInt(readable.offset), timestamp: Number(readable.timestamp) };
  const last = inRange[inRange.length - 1];
  return last && BigInt(last.offset) >= req.lso - 1n ? { kind: 'none' } : { kind: 'unknown' };
}

/**
 * Commits offsets of a group that has no members (at-least-once mode: the instances split the
 * partitions through another group). A plain OffsetCommit with generation -1 and no member id, as
 * Kafka accepts for an empty group; kafkajs' admin.setOffsets would instead join the group with
 * a temporary consumer, which takes a rebalance per call.
 */
export class GroupOffsetWriter {
  private readonly cluster: OffsetCluster;
  private connected = false;

  constructor(kafka: Kafka) {
    this.cluster = createCluster(kafka, READ_UNCOMMITTED);
  }

  async commit(groupId: string, topic: string, partitions: { partition: number; offset: bigint }[]): Promise<void> {
    if (!this.connected) {
      await this.cluster.connect();
      this.connected = true;
    }
    await retryRetriable(async () => {
      const coordinator = await this.cluster.findGroupCoordinator({ groupId });
      await coordinator.offsetCommit({
        groupId,
        groupGenerationId: -1,
        memberId: '',
        topics: [{ topic, partitions: partitions.map((p) => ({ partition: p.partition, offset: String(p.offset) })) }],
      });
    });
  }

  async close(): Promise<void> {
    this.connected = false;
    await this.cluster.disconnect().catch(() => undefined);
  }
}
