// The ACLs each eoswatch service needs, least privilege: the one list that the services ask the
// brokers about after a refusal (src/kafka/permissions.ts), the secured integration test grants
// (test/integration/secure.test.ts, through harness/localcluster/acl.ts) and docs/security.md prints
// (aclTableMarkdown in harness/localcluster/acl.ts). Pure.
import type { AclOperationName } from './authorized-operations.js';
import { permissionText, type NeededPermission, type ResourceKind } from './permissions.js';

type Operation = AclOperationName;

// What eoswatch needs. Names are the config's: {source}, {sink} (and {sink}.dlq), {group},
// {prefix} (pipeline.transactionalIdPrefix), {canary.source}, {canary.sink}, {canary.id}.

export interface NeededAcl {
  resource: ResourceKind;
  /** A name template ({source}, {sink}, ...) or 'kafka-cluster'. */
  name: string;
  prefixed: boolean;
  operation: Operation;
  /** The Kafka APIs that need it. */
  apis: string;
}

export interface ServiceAcls {
  service: string;
  /** Where it is configured / what it is. */
  what: string;
  acls: NeededAcl[];
}

const t = (name: string, operation: Operation, apis: string, prefixed = false): NeededAcl => ({ resource: 'topic', name, prefixed, operation, apis });
const g = (name: string, operation: Operation, apis: string): NeededAcl => ({ resource: 'group', name, prefixed: false, operation, apis });
const x = (name: string, operation: Operation, apis: string): NeededAcl => ({ resource: 'transactional-id', name, prefixed: true, operation, apis });
const c = (operation: Operation, apis: string): NeededAcl => ({ resource: 'cluster', name: 'kafka-cluster', prefixed: false, operation, apis });

/**
 * The ACLs of each eoswatch service, least privilege: what the secured integration test grants
 * (and nothing more), checked against the authorize calls of Kafka's KafkaApis for the APIs each
 * uses. A principal with all of them runs every service.
 */
export const EOSWATCH_ACLS: ServiceAcls[] = [
  {
    service: 'health',
    what: 'kafka.healthCheckInterval: the broker list (eos_kafka_up)',
    acls: [],
  },
  {
    service: 'pipeline',
    what: 'pipeline.enabled: the transactional consume-transform-produce loop',
    acls: [
      t('{source}', 'Read', 'Fetch, ListOffsets, OffsetFetch, TxnOffsetCommit'),
      t('{source}', 'Describe', 'Metadata (partition count), ListOffsets'),
      t('{sink}', 'Write', 'Produce, AddPartitionsToTxn'),
      t('{sink}', 'Describe', 'Metadata'),
      t('{sink}.dlq', 'Write', 'Produce, AddPartitionsToTxn (the dead-letter topic)'),
      t('{sink}.dlq', 'Describe', 'Metadata'),
      g('{group}', 'Read', 'OffsetFetch, AddOffsetsToTxn, TxnOffsetCommit (the offsets group: it has no members)'),
      g('{group}.members', 'Read', 'FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup (the instances split the partitions in it)'),
      x('{prefix}', 'Write', 'InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn'),
      x('{prefix}', 'Describe', 'FindCoordinator (transaction)'),
    ],
  },
  {
    service: 'canary',
    what: 'canary.enabled: idempotent canary records into the pipeline source, read back read_committed from its sink',
    acls: [
      t('{canary.source}', 'Write', 'Produce, InitProducerId (idempotent: Write on a topic stands for IdempotentWrite)'),
      t('{canary.source}', 'Describe', 'Metadata (partition count)'),
      t('{canary.sink}', 'Read', 'Fetch'),
      t('{canary.sink}', 'Describe', 'Metadata, ListOffsets'),
      g('{canary.id}.canary-reader', 'Read', 'JoinGroup, SyncGroup, Heartbeat, OffsetFetch'),
    ],
  },
  {
    service: 'lsoMonitor',
    what: 'lsoMonitor: last stable offset vs high watermark of the watched topics',
    acls: [t('{sink}', 'Describe', 'ListOffsets (read_committed and read_uncommitted), Metadata')],
  },
  {
    service: 'lag',
    what: 'lag: committed offsets of the watched groups against the topic ends',
    acls: [
      g('{group}', 'Describe', 'ListGroups (filtered to the groups it may describe), DescribeGroups, OffsetFetch'),
      t('{source}', 'Describe', 'ListOffsets, Metadata, OffsetFetch'),
      t('{source}', 'Read', 'Fetch (read_committed, one record: whether only transaction markers follow a committed offset standing just below the LSO; without it such a group shows its markers as lag)'),
    ],
  },
  {
    service: 'audit',
    what: 'audit: broker and topic configuration, partitions and ISR',
    acls: [
      c('DescribeConfigs', 'DescribeConfigs (broker configs)'),
      t('{source}', 'Describe', 'Metadata (partitions, ISR); listTopics names only described topics'),
      t('{sink}', 'Describe', 'Metadata (partitions, ISR)'),
      t('{source}', 'DescribeConfigs', 'DescribeConfigs (topic configs)'),
      t('{sink}', 'DescribeConfigs', 'DescribeConfigs (topic configs)'),
    ],
  },
];

export interface AclNames {
  source: string;
  sink: string;
  group: string;
  prefix: string;
  /** pipeline.deadLetterTopic when it is not {sink}.dlq. */
  dlq?: string;
  /** canary.sourceTopic, sinkTopic (default: the pipeline's), canary.id. */
  canarySource?: string;
  canarySink?: string;
  canaryId?: string;
}

/** A row's name with the configuration's names filled in. Pure; throws for a name without a value. */
function fill(n: string, names: AclNames): string {
  const v = n
    .replace('{sink}.dlq', names.dlq ?? '{sink}.dlq')
    .replace('{source}', names.source)
    .replace('{sink}', names.sink)
    .replace('{group}', names.group)
    .replace('{prefix}', names.prefix)
    .replace('{canary.source}', names.canarySource ?? names.source)
    .replace('{canary.sink}', names.canarySink ?? names.sink)
    .replace('{canary.id}', names.canaryId ?? '');
  if (v === '' || v.startsWith('.') || /\{/.test(v)) throw new Error(`ACL name ${n}: no value given for it`);
  return v;
}

/** The needed permissions of the given services with the configuration's names, without duplicates. Pure. */
export function neededPermissions(names: AclNames, services: string[] = EOSWATCH_ACLS.map((s) => s.service)): NeededPermission[] {
  const unknown = services.filter((s) => !EOSWATCH_ACLS.some((x) => x.service === s));
  if (unknown.length) throw new Error(`no ACL table for services ${unknown.join(', ')} (known: ${EOSWATCH_ACLS.map((s) => s.service).join(', ')})`);
  const out = new Map<string, NeededPermission>();
  for (const s of EOSWATCH_ACLS.filter((x) => services.includes(x.service))) {
    for (const a of s.acls) {
      const p: NeededPermission = { resource: a.resource, name: fill(a.name, names), prefixed: a.prefixed, operation: a.operation };
      out.set(permissionText(p), p);
    }
  }
  return [...out.values()];
}
