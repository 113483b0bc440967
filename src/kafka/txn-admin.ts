// The transaction coordinator's admin APIs (KIP-664, brokers 3.0+) over kafkajs' own connections:
// ListTransactions to every broker (each coordinator answers for its partitions of
// __transaction_state), DescribeTransactions to each id's coordinator (FindCoordinator type 1),
// DescribeProducers to each partition's leader; to end a transaction, InitProducerId at its
// coordinator (as a new producer instance of the id would) or WriteTxnMarkers at a partition's
// leader (as Admin.abortTransaction does). kafkajs 2.2.4 has none of these APIs: the bodies
// are encoded and decoded by src/kafka/txn-protocol.ts and sent through the broker's connection
// pool, so TLS, SASL, metadata and ApiVersions are kafkajs' as everywhere else (the cluster comes
// from kafkajs' private factory, see createCluster in offsets.ts).
//
// Errors are carried per entry (a broker, a transactional id, a partition), never thrown for one
// entry: NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS and
// NOT_LEADER_OR_FOLLOWER are retried (re-finding the coordinator or leader) up to `attempts`
// times; the *_AUTHORIZATION_FAILED codes come back with kind 'permission'.
import { createRequire } from 'node:module';
import type { Kafka } from 'kafkajs';
import { createCluster } from './offsets.js';
import {
  API_NAMES,
  DESCRIBE_PRODUCERS,
  DESCRIBE_TRANSACTIONS,
  LIST_TRANSACTIONS,
  WRITE_TXN_MARKERS,
  decodeDescribeProducersResponse,
  decodeDescribeTransactionsResponse,
  decodeListTransactionsResponse,
  decodeWriteTxnMarkersResponse,
  encodeDescribeProducersRequest,
  encodeDescribeTransactionsRequest,
  encodeListTransactionsRequest,
  encodeWriteTxnMarkersRequest,
  negotiateVersion,
  type ListTransactionsFilter,
  type ProducerState,
  type TransactionDescription,
  type TransactionListing,
} from './txn-protocol.js';
import { ERRORS, kafkaError, thrownError, unsupported, type TxnApiError } from './txn-errors.js';
import { bodyAfterHeaderV1, skipResponseHeaderV1Tail } from './wire.js';

const require = createRequire(import.meta.url);
const Encoder = require('kafkajs/src/protocol/encoder') as new () => { writeBuffer(b: Buffer): unknown };

const COORDINATOR_TYPE_TRANSACTION = 1;

interface TxnBroker {
  nodeId: number | null;
  versions?: Record<number, { minVersion: number; maxVersion: number }> | null;
  /** kafkajs' own InitProducerId (v0-v1 in kafkajs 2.2.4). */
  initProducerId(req: { transactionalId: string; transactionTimeout: number }): Promise<{ producerId: string | number; producerEpoch: number }>;
  connectionPool: { send(req: { request: unknown; response: { decode(b: Buffer): Promise<unknown>; parse(x: unknown): Promise<unknown> }; requestTimeout: number }): Promise<unknown> };
}

interface TxnCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  refreshMetadataIfNecessary(): Promise<void>;
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  getNodeIds(): string[];
  findBroker(req: { nodeId: string }): Promise<TxnBroker>;
  findGroupCoordinator(req: { groupId: string; coordinatorType: number }): Promise<TxnBroker>;
  findTopicPartitionMetadata(topic: string): { partitionId: number }[];
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
}

export interface BrokerTransactions {
  nodeId: number;
  /** The ListTransactions version used; null when the broker has no ListTransactions (Kafka before 3.0). */
  apiVersion: number | null;
  error: TxnApiError | null;
  unknownStateFilters: string[];
  transactions: TransactionListing[];
}

export interface DescribedTransaction {
  transactionalId: string;
  coordinatorId: number | null;
  description: TransactionDescription | null;
  error: TxnApiError | null;
}

export interface PartitionProducerStates {
  partition: number;
  leaderId: number | null;
  producers: ProducerState[];
  error: TxnApiError | null;
}

export interface TxnAdminOptions {
  /** Tries per entry for retriable errors (coordinator moved or loading, leader moved). */
  attempts?: number;
  retryDelayMs?: number;
  requestTimeoutMs?: number;
}

export interface InitProducerIdResult {
  coordinatorId: number | null;
  /** The id's producer id and epoch after the call (the epoch bumped: older instances are fenced). */
  producerId: number | null;
  producerEpoch: number | null;
  /** Calls answered CONCURRENT_TRANSACTIONS while the coordinator ended the open transaction. */
  concurrentRetries: number;
  error: TxnApiError | null;
}

export interface MarkerResult {
  leaderId: number | null;
  error: TxnApiError | null;
}

export class TxnAdmin {
  private readonly cluster: TxnCluster;
  private connected = false;
  private readonly attempts: number;
  private readonly retryDelayMs: number;
  private readonly requestTimeoutMs: number;

  constructor(kafka: Kafka, opts: TxnAdminOptions = {}) {
    this.cluster = createCluster<TxnCluster>(kafka, 0);
    this.attempts = opts.attempts ?? 5;
    this.retryDelayMs = opts.retryDelayMs ?? 200;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
  }

  private async ensureConnected(): Promise<void> {
    if (this.connected) return;
    await this.cluster.connect();
    this.connected = true;
  }

  private async send<T extends { throttleTimeMs: number }>(broker: TxnBroker, apiKey: number, version: number, body: Buffer, decode: (b: Buffer, version: number, offset: number) => T): Promise<T> {
    const name = API_NAMES[apiKey]!;
    const encoder = new Encoder();
    encoder.writeBuffer(bodyAfterHeaderV1(body));
    const res = await broker.connectionPool.send({
      request: { apiKey, apiVersion: version, apiName: name, encode: async () => encoder },
      response: {
        // kafkajs hands decode() what follows the correlation id and throttles on clientSideThrottleTime (KIP-219).
        decode: async (b: Buffer) => {
          const decoded = decode(b, version, skipResponseHeaderV1Tail(b, name));
          return { decoded, clientSideThrottleTime: decoded.throttleTimeMs };
        },
        parse: async (x: unknown) => x,
      },
      requestTimeout: this.requestTimeoutMs,
    });
    return (res as { decoded: T }).decoded;
  }

  private delay(attempt: number): Promise<void> {
    return new Promise((r) => setTimeout(r, Math.min(this.retryDelayMs * 2 ** attempt, 2000)));
  }

  /**
   * ListTransactions on every broker, in the highest version both sides speak. A filter the
   * broker's version cannot carry (duration before 3.8, pattern before 4.1) makes that broker's
   * entry an 'unsupported' error rather than an unfiltered answer.
   */
  async listTransactions(filter: ListTransactionsFilter = {}): Promise<BrokerTransactions[]> {
    await this.ensureConnected();
    await this.cluster.refreshMetadata();
    const nodeIds = this.cluster.getNodeIds();
    const out = await Promise.all(nodeIds.map((id) => this.listOn(id, filter)));
    return out.sort((a, b) => a.nodeId - b.nodeId);
  }

  private async listOn(nodeId: string, filter: ListTransactionsFilter): Promise<BrokerTransactions> {
    const entry: BrokerTransactions = { nodeId: Number(nodeId), apiVersion: null, error: null, unknownStateFilters: [], transactions: [] };
    for (let attempt = 0; ; attempt++) {
      try {
        const broker = await this.cluster.findBroker({ nodeId });
        const version = negotiateVersion(LIST_TRANSACTIONS, broker.versions?.[LIST_TRANSACTIONS]);
        entry.apiVersion = version;
        if (version === null) return { ...entry, error: unsupported(`broker ${nodeId} has no ListTransactions (Kafka 3.0 or later is needed)`) };
        let body: Buffer;
        try {
          body = encodeListTransactionsRequest(filter, version);
        } catch (e) {
          return { ...entry, error: unsupported(`broker ${nodeId}: ${(e as Error).message}`) };
        }
        const res = await this.send(broker, LIST_TRANSACTIONS, version, body, decodeListTransactionsResponse);
        if (res.errorCode !== 0) {
          const error = kafkaError(res.errorCode);
          if (error.kind === 'retry' && attempt + 1 < this.attempts) {
            await this.delay(attempt);
            continue;
          }
          return { ...entry, error };
        }
        return { ...entry, unknownStateFilters: res.unknownStateFilters, transactions: res.transactions };
      } catch (e) {
        const error = thrownError(e);
        if (error.kind === 'retry' && attempt + 1 < this.attempts) {
          await this.delay(attempt);
          continue;
        }
        return { ...entry, error };
      }
    }
  }

  /** DescribeTransactions for each id at its coordinator; one request per coordinator. */
  async describeTransactions(transactionalIds: readonly string[]): Promise<Map<string, DescribedTransaction>> {
    await this.ensureConnected();
    const out = new Map<string, DescribedTransaction>();
    let pending = [...new Set(transactionalIds)];
    for (let attempt = 0; pending.length > 0; attempt++) {
      const last = attempt + 1 >= this.attempts;
      const retry: string[] = [];
      const settle = (id: string, d: Omit<DescribedTransaction, 'transactionalId'>) => {
        if (d.error?.kind === 'retry' && !last) retry.push(id);
        else out.set(id, { transactionalId: id, ...d });
      };
      // FindCoordinator (kafkajs: one key per request), then the ids grouped by coordinator.
      const byCoordinator = new Map<number, { broker: TxnBroker; ids: string[] }>();
      await Promise.all(
        pending.map(async (id) => {
          try {
            const broker = await this.cluster.findGroupCoordinator({ groupId: id, coordinatorType: COORDINATOR_TYPE_TRANSACTION });
            const nodeId = broker.nodeId ?? -1;
            const group = byCoordinator.get(nodeId) ?? { broker, ids: [] };
            group.ids.push(id);
            byCoordinator.set(nodeId, group);
          } catch (e) {
            settle(id, { coordinatorId: null, description: null, error: thrownError(e) });
          }
        }),
      );
      await Promise.all(
        [...byCoordinator].map(async ([coordinatorId, { broker, ids }]) => {
          const version = negotiateVersion(DESCRIBE_TRANSACTIONS, broker.versions?.[DESCRIBE_TRANSACTIONS]);
          if (version === null) {
            for (const id of ids) settle(id, { coordinatorId, description: null, error: unsupported(`broker ${coordinatorId} has no DescribeTransactions (Kafka 3.0 or later is needed)`) });
            return;
          }
          try {
            const res = await this.send(broker, DESCRIBE_TRANSACTIONS, version, encodeDescribeTransactionsRequest(ids), decodeDescribeTransactionsResponse);
            const answered = new Map(res.transactions.map((t) => [t.transactionalId, t]));
            for (const id of ids) {
              const t = answered.get(id);
              if (!t) settle(id, { coordinatorId, description: null, error: { code: -1, name: 'CLIENT_ERROR', kind: 'error', message: `coordinator ${coordinatorId} did not answer for this id` } });
              else if (t.errorCode !== 0) settle(id, { coordinatorId, description: null, error: kafkaError(t.errorCode) });
              else settle(id, { coordinatorId, description: t, error: null });
            }
          } catch (e) {
            for (const id of ids) settle(id, { coordinatorId, description: null, error: thrownError(e) });
          }
        }),
      );
      pending = retry;
      if (pending.length > 0) await this.delay(attempt);
    }
    return new Map(transactionalIds.map((id) => [id, out.get(id)!]));
  }

  /** DescribeProducers for partitions of `topic` (all of them by default), at each partition's leader. */
  async describeProducers(topic: string, partitions?: readonly number[]): Promise<Map<number, PartitionProducerStates>> {
    await this.ensureConnected();
    await this.cluster.addMultipleTargetTopics([topic]);
    const out = new Map<number, PartitionProducerStates>();
    let pending: number[] = partitions ? [...new Set(partitions)] : this.cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId);
    for (let attempt = 0; pending.length > 0; attempt++) {
      const last = attempt + 1 >= this.attempts;
      const retry: number[] = [];
      const settle = (p: PartitionProducerStates) => {
        if (p.error?.kind === 'retry' && !last) retry.push(p.partition);
        else out.set(p.partition, p);
      };
      const known = new Set(this.cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId));
      for (const p of pending) {
        if (!known.has(p)) settle({ partition: p, leaderId: null, producers: [], error: kafkaError(ERRORS.UNKNOWN_TOPIC_OR_PARTITION, `${topic}-${p} is not in the cluster's metadata`) });
      }
      const leaders = Object.entries(this.cluster.findLeaderForPartitions(topic, pending.filter((p) => known.has(p))));
      await Promise.all(
        leaders.map(async ([leader, parts]) => {
          const leaderId = Number(leader);
          try {
            const broker = await this.cluster.findBroker({ nodeId: leader });
            const version = negotiateVersion(DESCRIBE_PRODUCERS, broker.versions?.[DESCRIBE_PRODUCERS]);
            if (version === null) {
              for (const p of parts) settle({ partition: p, leaderId, producers: [], error: unsupported(`broker ${leader} has no DescribeProducers (Kafka 3.0 or later is needed)`) });
              return;
            }
            const res = await this.send(broker, DESCRIBE_PRODUCERS, version, encodeDescribeProducersRequest([{ topic, partitions: parts }]), decodeDescribeProducersResponse);
            const answered = new Map(res.topics.filter((t) => t.topic === topic).flatMap((t) => t.partitions.map((p) => [p.partition, p] as const)));
            for (const p of parts) {
              const a = answered.get(p);
              if (!a) settle({ partition: p, leaderId, producers: [], error: { code: -1, name: 'CLIENT_ERROR', kind: 'error', message: `leader ${leader} did not answer for ${topic}-${p}` } });
              else if (a.errorCode !== 0) settle({ partition: p, leaderId, producers: [], error: kafkaError(a.errorCode, a.errorMessage) });
              else settle({ partition: p, leaderId, producers: a.activeProducers, error: null });
            }
          } catch (e) {
            for (const p of parts) settle({ partition: p, leaderId, producers: [], error: thrownError(e) });
          }
        }),
      );
      pending = retry;
      if (pending.length > 0) {
        await this.delay(attempt);
        await this.cluster.refreshMetadata().catch(() => undefined);
      }
    }
    return new Map([...out].sort((a, b) => a[0] - b[0]));
  }

  /**
   * InitProducerId for `transactionalId` at its coordinator, as a new producer instance of the id
   * would: an open transaction is aborted by the coordinator (its markers written, the state
   * ended), a decided one completed, and the epoch bumped, which fences the old instance. The
   * coordinator answers CONCURRENT_TRANSACTIONS until the transaction has ended: sent again until
   * `deadlineMs` (time on this clock: Date.now). The id's transaction timeout becomes `transactionTimeoutMs`.
   */
  async initProducerId(transactionalId: string, transactionTimeoutMs: number, deadlineMs: number): Promise<InitProducerIdResult> {
    await this.ensureConnected();
    let coordinatorId: number | null = null;
    let concurrentRetries = 0;
    for (let attempt = 0; ; attempt++) {
      try {
        const broker = await this.cluster.findGroupCoordinator({ groupId: transactionalId, coordinatorType: COORDINATOR_TYPE_TRANSACTION });
        coordinatorId = broker.nodeId;
        const res = await broker.initProducerId({ transactionalId, transactionTimeout: transactionTimeoutMs });
        return { coordinatorId, producerId: Number(res.producerId), producerEpoch: res.producerEpoch, concurrentRetries, error: null };
      } catch (e) {
        const error = thrownError(e);
        const concurrent = error.code === ERRORS.CONCURRENT_TRANSACTIONS;
        if (concurrent) concurrentRetries++;
        if ((concurrent || error.kind === 'retry') && Date.now() < deadlineMs) {
          await new Promise((r) => setTimeout(r, concurrent ? 100 : Math.min(this.retryDelayMs * 2 ** Math.min(attempt, 4), 2000)));
          continue;
        }
        return { coordinatorId, producerId: null, producerEpoch: null, concurrentRetries, error };
      }
    }
  }

  /**
   * WriteTxnMarkers (abort) for one producer's transaction on one partition, at the partition's
   * leader, as Admin.abortTransaction does. The coordinator is not told: for a transaction it
   * does not know (a hanging one); for one it knows, initProducerId ends it everywhere.
   */
  async writeAbortMarker(topic: string, partition: number, marker: { producerId: number; producerEpoch: number; coordinatorEpoch: number }): Promise<MarkerResult> {
    await this.ensureConnected();
    await this.cluster.addMultipleTargetTopics([topic]);
    let leaderId: number | null = null;
    for (let attempt = 0; ; attempt++) {
      const last = attempt + 1 >= this.attempts;
      try {
        const leaders = Object.entries(this.cluster.findLeaderForPartitions(topic, [partition]));
        const leader = leaders.find(([, parts]) => parts.includes(partition))?.[0];
        if (leader === undefined) return { leaderId: null, error: kafkaError(ERRORS.UNKNOWN_TOPIC_OR_PARTITION, `${topic}-${partition} has no leader in the cluster's metadata`) };
        leaderId = Number(leader);
        const broker = await this.cluster.findBroker({ nodeId: leader });
        const version = negotiateVersion(WRITE_TXN_MARKERS, broker.versions?.[WRITE_TXN_MARKERS]);
        if (version === null) return { leaderId, error: unsupported(`broker ${leader} speaks no WriteTxnMarkers version this client does (v1)`) };
        const body = encodeWriteTxnMarkersRequest([{ ...marker, commit: false, topics: [{ topic, partitions: [partition] }] }], version);
        const res = await this.send(broker, WRITE_TXN_MARKERS, version, body, decodeWriteTxnMarkersResponse);
        const answer = res.markers.find((m) => m.producerId === marker.producerId)?.topics.find((t) => t.topic === topic)?.partitions.find((p) => p.partition === partition);
        if (!answer) return { leaderId, error: { code: -1, name: 'CLIENT_ERROR', kind: 'error', message: `leader ${leader} did not answer for ${topic}-${partition}` } };
        if (answer.errorCode === 0) return { leaderId, error: null };
        const error = kafkaError(answer.errorCode);
        if (error.kind === 'retry' && !last) {
          await this.delay(attempt);
          await this.cluster.refreshMetadata().catch(() => undefined);
          continue;
        }
        return { leaderId, error };
      } catch (e) {
        const error = thrownError(e);
        if (error.kind === 'retry' && !last) {
          await this.delay(attempt);
          await this.cluster.refreshMetadata().catch(() => undefined);
          continue;
        }
        return { leaderId, error };
      }
    }
  }

  async close(): Promise<void> {
    this.connected = false;
    await this.cluster.disconnect().catch(() => undefined);
  }
}
