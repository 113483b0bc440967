// What the principal may do, as the brokers say it (KIP-430 "authorized operations"): Metadata v8
// with include_topic_authorized_operations and include_cluster_authorized_operations, and
// DescribeGroups v3 with include_authorized_operations. Each answers a 32-bit field in which bit
// N is set when operation N (org.apache.kafka.common.acl.AclOperation's codes) is allowed, the
// implied ones included (Read, Write, Delete and Alter imply Describe; AlterConfigs implies
// DescribeConfigs), as the authorizer judges it. A resource the principal may not even describe
// answers *_AUTHORIZATION_FAILED instead. Pure: buffers in, buffers out (src/kafka/permissions.ts
// sends them).
//
// Schemas (clients/src/main/resources/common/message/): MetadataRequest/Response v8 and
// DescribeGroupsRequest/Response v3, both non-flexible (int16 strings, int32 arrays, response
// header v0: what follows the correlation id is the body). Kafka 3.9 and 4.x speak both.
import { Reader, Writer } from './wire.js';
import { decodeDescribeGroups } from './group-reader.js';

export const METADATA = 3;
export const DESCRIBE_GROUPS = 15;
export const METADATA_VERSION = 8;
export const DESCRIBE_GROUPS_VERSION = 3;

/** AclOperation codes; bit `code` of an authorized-operations field. */
export const ACL_OPERATION_CODES = {
  All: 2,
  Read: 3,
  Write: 4,
  Create: 5,
  Delete: 6,
  Alter: 7,
  Describe: 8,
  ClusterAction: 9,
  DescribeConfigs: 10,
  AlterConfigs: 11,
  IdempotentWrite: 12,
} as const;

export type AclOperationName = keyof typeof ACL_OPERATION_CODES;

/** The field's value when the operations were not asked for (or the broker left them out). */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

/**
 * Whether the field allows `op`; undefined when the broker did not say (the field omitted). All
 * stands for every operation, should a broker ever answer with it.
 */
export function allows(bits: number, op: AclOperationName): boolean | undefined {
  if (bits === AUTHORIZED_OPERATIONS_OMITTED) return undefined;
  const has = (code: number) => ((bits >>> code) & 1) === 1;
  return has(ACL_OPERATION_CODES[op]) || has(ACL_OPERATION_CODES.All);
}

export function encodeMetadataRequest(topics: readonly string[]): Buffer {
  const w = new Writer().int32(topics.length);
  for (const t of topics) w.nullableString(t);
  // allow_auto_topic_creation, include_cluster_authorized_operations, include_topic_authorized_operations
  return w.int8(0).int8(1).int8(1).build();
}

export interface TopicAuthorization {
  name: string;
  errorCode: number;
  authorizedOperations: number;
}

export interface MetadataAuthorization {
  topics: TopicAuthorization[];
  clusterAuthorizedOperations: number;
}

export function decodeMetadataResponse(b: Buffer, offset = 0): MetadataAuthorization {
  const r = new Reader(b, 'Metadata v8 response', offset);
  r.int32('throttle_time_ms');
  r.nullableArray('brokers', (x) => {
    x.int32('node_id');
    x.string('host');
    x.int32('port');
    x.nullableString('rack');
  });
  r.nullableString('cluster_id');
  r.int32('controller_id');
  const ints = (x: Reader, field: string) => x.nullableArray(field, (y) => y.int32(field));
  const topics =
    r.nullableArray('topics', (x) => {
      const errorCode = x.int16('error_code');
      const name = x.string('name');
      x.int8('is_internal');
      x.nullableArray('partitions', (p) => {
        p.int16('error_code');
        p.int32('partition_index');
        p.int32('leader_id');
        p.int32('leader_epoch');
        ints(p, 'replica_nodes');
        ints(p, 'isr_nodes');
        ints(p, 'offline_replicas');
      });
      return { name, errorCode, authorizedOperations: x.int32('topic_authorized_operations') };
    }) ?? [];
  const clusterAuthorizedOperations = r.int32('cluster_authorized_operations');
  r.end();
  return { topics, clusterAuthorizedOperations };
}

export function encodeDescribeGroupsRequest(groups: readonly string[]): Buffer {
  const w = new Writer().int32(groups.length);
  for (const g of groups) w.nullableString(g);
  return w.int8(1).build(); // include_authorized_operations
}

export interface GroupAuthorization {
  groupId: string;
  errorCode: number;
  authorizedOperations: number;
}

export function decodeDescribeGroupsResponse(b: Buffer, offset = 0): GroupAuthorization[] {
  return decodeDescribeGroups(b, 3, offset).groups.map((g) => ({ groupId: g.groupId, errorCode: g.errorCode, authorizedOperations: g.authorizedOperations ?? 0 }));
}
