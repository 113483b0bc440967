// The brokers asked what eoswatch's principal may do (KIP-430): one Metadata v8 for the needed
// topics and the cluster, and per needed group FindCoordinator then DescribeGroups v3 at its
// coordinator, over kafkajs' own connections (TLS, SASL and ApiVersions as everywhere else; the
// cluster from kafkajs' private factory, see createCluster in offsets.ts). The answers are judged
// by judgePermissions (src/kafka/permissions.ts); permissionWatch() is a PermissionWatch that asks here.
import { createRequire } from 'node:module';
import type { Kafka } from 'kafkajs';
import { errorMessage } from '../errors.js';
import type { FailureKind } from '../runtime/runs.js';
import {
  DESCRIBE_GROUPS,
  DESCRIBE_GROUPS_VERSION,
  METADATA,
  METADATA_VERSION,
  decodeDescribeGroupsResponse,
  decodeMetadataResponse,
  encodeDescribeGroupsRequest,
  encodeMetadataRequest,
} from './authorized-operations.js';
import { createCluster } from './offsets.js';
import { PermissionWatch, judgePermissions, refusedKinds, type NeededPermission, type PermissionVerdict, type ResourceKind } from './permissions.js';

const require = createRequire(import.meta.url);
const Encoder = require('kafkajs/src/protocol/encoder') as new () => { writeBuffer(b: Buffer): unknown };

interface ProbeBroker {
  nodeId: number | null;
  findGroupCoordinator(req: { groupId: string; coordinatorType: number }): Promise<{ coordinator: { nodeId: number } }>;
  connectionPool: { send(req: { request: unknown; response: { decode(b: Buffer): Promise<unknown>; parse(x: unknown): Promise<unknown> }; requestTimeout: number }): Promise<unknown> };
}

interface ProbeCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  getNodeIds(): string[];
  findBroker(req: { nodeId: string }): Promise<ProbeBroker>;
}

/** Asks the brokers what the principal may do on the needed resources (one Metadata, one DescribeGroups per group). */
export async function probePermissions(kafka: Kafka, needed: readonly NeededPermission[], refused: ReadonlySet<ResourceKind>, requestTimeoutMs = 10_000): Promise<PermissionVerdict[]> {
  const cluster = createCluster<ProbeCluster>(kafka, 0);
  const send = async <T>(broker: ProbeBroker, apiKey: number, apiName: string, version: number, body: Buffer, decode: (b: Buffer) => T): Promise<T> => {
    const encoder = new Encoder();
    encoder.writeBuffer(body);
    const res = await broker.connectionPool.send({
      request: { apiKey, apiVersion: version, apiName, encode: async () => encoder },
      // Response header v0: what kafkajs hands over after the correlation id is the body.
      response: { decode: async (b: Buffer) => ({ decoded: decode(b), clientSideThrottleTime: 0 }), parse: async (x: unknown) => x },
      requestTimeout: requestTimeoutMs,
    });
    return (res as { decoded: T }).decoded;
  };
  const topics = [...new Set(needed.filter((p) => p.resource === 'topic' && !p.prefixed).map((p) => p.name))];
  const groups = [...new Set(needed.filter((p) => p.resource === 'group' && !p.prefixed).map((p) => p.name))];
  const answers = { topics: new Map<string, { errorCode: number; authorizedOperations: number }>(), clusterOperations: undefined as number | undefined, groups: new Map<string, { errorCode: number; authorizedOperations: number } | { error: string }>() };
  try {
    await cluster.connect();
    await cluster.refreshMetadata();
    const any = await cluster.findBroker({ nodeId: cluster.getNodeIds()[0]! });
    const meta = await send(any, METADATA, 'Metadata', METADATA_VERSION, encodeMetadataRequest(topics), (b) => decodeMetadataResponse(b));
    for (const t of meta.topics) answers.topics.set(t.name, t);
    answers.clusterOperations = meta.clusterAuthorizedOperations;
    await Promise.all(
      groups.map(async (groupId) => {
        try {
          const { coordinator } = await any.findGroupCoordinator({ groupId, coordinatorType: 0 });
          const at = await cluster.findBroker({ nodeId: String(coordinator.nodeId) });
          const [g] = await send(at, DESCRIBE_GROUPS, 'DescribeGroups', DESCRIBE_GROUPS_VERSION, encodeDescribeGroupsRequest([groupId]), (b) => decodeDescribeGroupsResponse(b));
          answers.groups.set(groupId, g ?? { error: 'no answer' });
        } catch (err) {
          answers.groups.set(groupId, { error: String((err as { type?: unknown }).type ?? errorMessage(err)) });
        }
      }),
    );
  } finally {
    await cluster.disconnect().catch(() => undefined);
  }
  return judgePermissions(needed, answers, refused);
}

/** A PermissionWatch that asks the brokers (what every service uses). */
export function permissionWatch(opts: Omit<ConstructorParameters<typeof PermissionWatch>[0], 'probe'>): PermissionWatch {
  return new PermissionWatch({ ...opts, probe: probePermissions });
}

/** The kind of a failure inside a service's run (eos_service_errors_total): permission when the brokers refused, else error. */
export function failureKind(err: unknown): FailureKind {
  return refusedKinds(err).size > 0 ? 'permission' : 'error';
}
