// The cluster's brokers and topic names, without kafkajs' metadata objects. kafkajs asks for the
// metadata of every topic whenever it asks for none (its Metadata request writes an empty topic
// list as null: "all topics"), and decodes each partition into an object with its replica lists:
// admin.describeCluster() (the Kafka health probe's, twice for a new connection), listTopics()
// and listGroups() (the lag service's) each decoded every partition of the cluster, several times
// every 15 s, for answers that need the brokers or the topic names only. Here the request is
// kafkajs' own (its version, sent over its connection: TLS, SASL and throttling stay kafkajs'),
// with the topic list written as asked (an empty list is no topic), and the response is read by
// hand, skipping the partitions. Built on kafkajs' cluster factory (createCluster in offsets.ts),
// kafkajs 2.2.4's inner API.
import { createRequire } from 'node:module';
import type { Kafka } from 'kafkajs';
import { createCluster } from './offsets.js';
import { ProtocolDecodeError, Reader } from './wire.js';
import { GroupReader, type GroupCluster } from './group-reader.js';

const require = createRequire(import.meta.url);
const apiKeys = require('kafkajs/src/protocol/requests/apiKeys') as { Metadata: number };
const { requests } = require('kafkajs/src/protocol/requests') as { requests: { Metadata: unknown } };
const Encoder = require('kafkajs/src/protocol/encoder') as new () => {
  writeInt32(v: number): unknown;
  writeBoolean(v: boolean): unknown;
  writeString(v: string): unknown;
};

export interface BrokerAddress {
  nodeId: number;
  host: string;
  port: number;
}

export interface ClusterMetadata {
  brokers: BrokerAddress[];
  /** The topics the answer names without an error (every topic the principal may describe, when all were asked for). */
  topics: string[];
}

interface ProtocolRequest {
  apiKey: number;
  apiVersion: number;
  apiName: string;
  encode(): Promise<unknown>;
}

interface MetadataBroker {
  lookupRequest(apiKey: number, definition: unknown): (args: { topics: string[]; allowAutoTopicCreation: boolean }) => { request: ProtocolRequest; response: unknown };
  connectionPool: { send(req: { request: ProtocolRequest; response: { decode(b: Buffer): Promise<unknown>; parse(x: unknown): Promise<unknown> }; requestTimeout?: number }): Promise<unknown> };
  listGroups(): Promise<{ groups: { groupId: string; protocolType: string }[] }>;
}

interface MetadataCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  isConnected(): boolean;
  findBroker(req: { nodeId: string }): Promise<MetadataBroker>;
  brokerPool: { findConnectedBroker(): Promise<MetadataBroker> };
}

/** UNKNOWN_TOPIC_OR_PARTITION: a topic asked for by name that does not exist. */
const UNKNOWN_TOPIC = 3;

/**
 * A Metadata response (versions 0–6, kafkajs' range) read for its brokers and topic names; the
 * partitions are skipped. A topic the broker does not know is left out; one with another error
 * (a leader being elected) exists and is named.
 */
export function decodeMetadata(body: Buffer, version: number): ClusterMetadata & { throttleTimeMs: number } {
  const r = new Reader(body, `Metadata v${version} response`);
  const throttleTimeMs = version >= 3 ? r.int32('throttle_time_ms') : 0;
  const brokers: BrokerAddress[] = [];
  const nBrokers = r.int32('brokers');
  for (let i = 0; i < nBrokers; i++) {
    const nodeId = r.int32('node_id');
    const host = r.string('host');
    const port = r.int32('port');
    if (version >= 1) r.nullableString('rack');
    brokers.push({ nodeId, host, port });
  }
  if (version >= 2) r.nullableString('cluster_id');
  if (version >= 1) r.int32('controller_id');
  const topics: string[] = [];
  const nTopics = r.int32('topics');
  for (let i = 0; i < nTopics; i++) {
    const error = r.int16('error_code');
    const name = r.string('name');
    if (version >= 1) r.int8('is_internal');
    const nPartitions = r.int32('partitions');
    for (let p = 0; p < nPartitions; p++) {
      r.offset += 2 + 4 + 4; // error_code, partition_index, leader_id
      skipInt32s(r, 'replica_nodes');
      skipInt32s(r, 'isr_nodes');
      if (version >= 5) skipInt32s(r, 'offline_replicas');
    }
    if (error !== UNKNOWN_TOPIC) topics.push(name);
  }
  return { brokers, topics, throttleTimeMs };
}

function skipInt32s(r: Reader, field: string): void {
  const n = r.int32(field);
  if (n > 0) r.offset += 4 * n;
  if (r.offset > r.buf.length) throw new ProtocolDecodeError(`${r.what}: truncated in ${field}`);
}

/**
 * The cluster's brokers, and the names of `topics` (null: of every topic) that exist, through one
 * Metadata request of kafkajs' version to any broker `cluster` is connected to.
 */
async function metadata(broker: MetadataBroker, topics: string[] | null): Promise<ClusterMetadata> {
  const { request } = broker.lookupRequest(apiKeys.Metadata, requests.Metadata)({ topics: topics ?? [], allowAutoTopicCreation: false });
  const version = request.apiVersion;
  const encode = async () => {
    const e = new Encoder();
    if (topics === null) e.writeInt32(-1);
    else {
      e.writeInt32(topics.length);
      for (const t of topics) e.writeString(t);
    }
    if (version >= 4) e.writeBoolean(false);
    return e;
  };
  const res = await broker.connectionPool.send({
    request: { apiKey: request.apiKey, apiVersion: version, apiName: request.apiName, encode },
    // kafkajs hands decode() the response body; from v6 on it throttles on clientSideThrottleTime (KIP-219).
    response: {
      decode: async (b: Buffer) => {
        const d = decodeMetadata(b, version);
        return version >= 6 ? { ...d, throttleTime: 0, clientSideThrottleTime: d.throttleTimeMs } : { ...d, throttleTime: d.throttleTimeMs };
      },
      parse: async (x: unknown) => x,
    },
  });
  const { brokers, topics: names } = res as ClusterMetadata;
  return { brokers, topics: names };
}

/** Brokers and topic names of a cluster, over kafkajs' connections of a client of its own. */
export class ClusterMetadataReader {
  private readonly cluster: MetadataCluster;
  /** Committed offsets and descriptions of consumer groups over the same connections (once all() or brokers() connected them). */
  readonly groups: GroupReader;

  constructor(kafka: Kafka) {
    this.cluster = createCluster<MetadataCluster>(kafka, 0);
    // (The same kafkajs Cluster: typed here by what each side calls.)
    this.groups = new GroupReader(this.cluster as unknown as GroupCluster);
  }

  /** The brokers, as admin.describeCluster() names them (connecting first: ApiVersions, SASL). */
  async brokers(): Promise<BrokerAddress[]> {
    await this.cluster.connect();
    return (await metadata(await this.cluster.brokerPool.findConnectedBroker(), [])).brokers;
  }

  /** The brokers and the name of every topic the principal may describe (admin.listTopics()). */
  async all(): Promise<ClusterMetadata> {
    await this.cluster.connect();
    return metadata(await this.cluster.brokerPool.findConnectedBroker(), null);
  }

  /**
   * The consumer groups of every broker of `brokers` (admin.listGroups(), which first decodes the
   * whole cluster's metadata): one ListGroups per broker.
   */
  async listGroups(brokers: BrokerAddress[]): Promise<{ groupId: string; protocolType: string }[]> {
    const out: { groupId: string; protocolType: string }[] = [];
    for (const b of brokers) {
      // A broker the client has not met yet: kafkajs refreshes its metadata and fails this once.
      const broker = await this.cluster.findBroker({ nodeId: String(b.nodeId) }).catch(() => this.cluster.findBroker({ nodeId: String(b.nodeId) }));
      out.push(...(await broker.listGroups()).groups);
    }
    return out;
  }

  async disconnect(): Promise<void> {
    await this.cluster.disconnect().catch(() => undefined);
  }
}
