// Fetch requests whose responses come back as bytes, undecoded: the verifier decodes the record
// batches itself (src/kafka/record-batches.ts). kafkajs encodes the request (Fetch v11) and sends
// it over its own connections, so TLS, SASL, metadata and leader lookup are kafkajs' as everywhere
// else; only the response decoder is replaced. Built on kafkajs' cluster factory (see
// createCluster in offsets.ts), kafkajs 2.2.4's inner API.
import { createRequire } from 'node:module';
import type { Kafka } from 'kafkajs';
import { createCluster } from './offsets.js';
import { EosError, ErrorCodes } from '../errors.js';

const require = createRequire(import.meta.url);
const fetchV11 = require('kafkajs/src/protocol/requests/fetch/v11/request') as (args: {
  replicaId: number;
  isolationLevel: number;
  maxWaitTime: number;
  minBytes: number;
  maxBytes: number;
  topics: { topic: string; partitions: { partition: number; currentLeaderEpoch: number; fetchOffset: string; logStartOffset: string; maxBytes: number }[] }[];
}) => { apiKey: number; apiVersion: number };

const FETCH_API_KEY = 1;

interface RawBroker {
  versions?: Record<number, { minVersion: number; maxVersion: number }> | null;
  connectionPool: { send(req: { request: unknown; response: { decode(b: Buffer): Promise<unknown>; parse(x: unknown): Promise<unknown> }; requestTimeout: number }): Promise<unknown> };
}

export interface RawCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  refreshMetadata(): Promise<void>;
  findTopicPartitionMetadata(topic: string): { partitionId: number }[];
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(req: { nodeId: string }): Promise<RawBroker>;
}

export interface RawFetchPartition {
  partition: number;
  offset: number;
  maxBytes: number;
}

export class RawFetcher {
  private readonly cluster: RawCluster;
  private readonly owned: boolean;

  /** With `shared`: fetches over a cluster its caller connected and disconnects (close() leaves it). */
  constructor(kafka: Kafka, readCommitted: boolean, shared?: RawCluster) {
    this.owned = !shared;
    this.cluster = shared ?? createCluster<RawCluster>(kafka, readCommitted ? 1 : 0);
    this.isolationLevel = readCommitted ? 1 : 0;
  }

  private readonly isolationLevel: number;

  async connect(topic: string): Promise<void> {
    await this.cluster.connect(); // kafkajs: nothing to do when connected
    await this.cluster.addMultipleTargetTopics([topic]);
  }

  /** Fresh metadata (after a leader moved). */
  async refresh(): Promise<void> {
    await this.cluster.refreshMetadata();
  }

  /** The leader of each partition, by node id. */
  leaders(topic: string, partitions: number[]): Map<string, number[]> {
    return new Map(Object.entries(this.cluster.findLeaderForPartitions(topic, partitions)));
  }

  /** One Fetch v11 to `nodeId`; the response body (after the correlation id), undecoded. */
  async fetch(nodeId: string, topic: string, partitions: RawFetchPartition[], opts: { maxWaitMs: number; maxBytes: number }): Promise<Buffer> {
    const broker = await this.cluster.findBroker({ nodeId });
    const v = broker.versions?.[FETCH_API_KEY];
    if (v && v.maxVersion < 11) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `broker ${nodeId} does not support Fetch v11 (Kafka 2.3 or later is needed to verify)`);
    const request = fetchV11({
      replicaId: -1,
      isolationLevel: this.isolationLevel,
      maxWaitTime: opts.maxWaitMs,
      minBytes: 1,
      maxBytes: opts.maxBytes,
      topics: [{ topic, partitions: partitions.map((p) => ({ partition: p.partition, currentLeaderEpoch: -1, fetchOffset: String(p.offset), logStartOffset: '-1', maxBytes: p.maxBytes })) }],
    });
    const body = await broker.connectionPool.send({
      request,
      // kafkajs hands decode() the response body and throttles on clientSideThrottleTime (KIP-219).
      response: { decode: async (b: Buffer) => ({ body: b, clientSideThrottleTime: b.readInt32BE(0) }), parse: async (x: unknown) => x },
      requestTimeout: opts.maxWaitMs + 100,
    });
    return (body as { body: Buffer }).body;
  }

  async close(): Promise<void> {
    if (this.owned) await this.cluster.disconnect().catch(() => undefined);
  }
}
