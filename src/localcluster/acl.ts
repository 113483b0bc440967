// ACLs for the secured local cluster (`npm run kafka -- acl grant|revoke|list`) and the table of
// the ACLs each eoswatch service and command needs: one list that the secured integration test
// grants (test/integration/secure.test.ts) and docs/security.md prints (aclTableMarkdown), so the
// documentation cannot drift from what is proven. Parsing and the table are pure; grant, revoke and
// list go through the admin API as the cluster's super user.
import kafkajs, { type Admin, type AclEntry } from 'kafkajs';
import { EosError, ErrorCodes } from '../errors.js';

// kafkajs is CommonJS: its enums are read from the default export.
const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajs;
type AclOperationTypes = kafkajs.AclOperationTypes;
type AclResourceTypes = kafkajs.AclResourceTypes;

export type ResourceKind = 'topic' | 'group' | 'transactional-id' | 'cluster';

export const OPERATIONS = ['All', 'Read', 'Write', 'Create', 'Delete', 'Alter', 'Describe', 'ClusterAction', 'DescribeConfigs', 'AlterConfigs', 'IdempotentWrite'] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface AclSpec {
  principal: string;
  resource: ResourceKind;
  /** The literal name or, with prefixed, the prefix; 'kafka-cluster' for the cluster. */
  name: string;
  prefixed: boolean;
  operation: Operation;
}

const RESOURCE_TYPES: Record<ResourceKind, AclResourceTypes> = {
  topic: AclResourceTypes.TOPIC,
  group: AclResourceTypes.GROUP,
  'transactional-id': AclResourceTypes.TRANSACTIONAL_ID,
  cluster: AclResourceTypes.CLUSTER,
};

const OPERATION_TYPES: Record<Operation, AclOperationTypes> = {
  All: AclOperationTypes.ALL,
  Read: AclOperationTypes.READ,
  Write: AclOperationTypes.WRITE,
  Create: AclOperationTypes.CREATE,
  Delete: AclOperationTypes.DELETE,
  Alter: AclOperationTypes.ALTER,
  Describe: AclOperationTypes.DESCRIBE,
  ClusterAction: AclOperationTypes.CLUSTER_ACTION,
  DescribeConfigs: AclOperationTypes.DESCRIBE_CONFIGS,
  AlterConfigs: AclOperationTypes.ALTER_CONFIGS,
  IdempotentWrite: AclOperationTypes.IDEMPOTENT_WRITE,
};

/** `topic:name`, `group:name`, `transactional-id:prefix*`, `cluster`: a trailing * means prefixed. Pure. */
export function parseResource(text: string): Pick<AclSpec, 'resource' | 'name' | 'prefixed'> {
  if (text === 'cluster') return { resource: 'cluster', name: 'kafka-cluster', prefixed: false };
  const i = text.indexOf(':');
  const kind = text.slice(0, i) as ResourceKind;
  const raw = text.slice(i + 1);
  if (i <= 0 || !(kind in RESOURCE_TYPES) || kind === 'cluster' || raw === '' || raw === '*') {
    throw new EosError(ErrorCodes.USAGE, `--resource: expected topic:NAME, group:NAME, transactional-id:NAME (a trailing * for a prefix) or cluster, found "${text}"`);
  }
  const prefixed = raw.endsWith('*');
  return { resource: kind, name: prefixed ? raw.slice(0, -1) : raw, prefixed };
}

export function parseOperation(text: string): Operation {
  const op = OPERATIONS.find((o) => o.toLowerCase() === text.toLowerCase().replace(/[-_]/g, ''));
  if (!op) throw new EosError(ErrorCodes.USAGE, `--operation: expected one of ${OPERATIONS.join(', ')}, found "${text}"`);
  return op;
}

export function parsePrincipal(text: string): string {
  if (!/^User:[^\s;]+$/.test(text)) throw new EosError(ErrorCodes.USAGE, `--principal: expected User:NAME, found "${text}"`);
  return text;
}

/** The spec as a kafkajs ACL entry (allow, any host). Pure. */
export function aclEntry(a: AclSpec): AclEntry {
  return {
    resourceType: RESOURCE_TYPES[a.resource],
    resourceName: a.name,
    resourcePatternType: a.prefixed ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
    principal: a.principal,
    host: '*',
    operation: OPERATION_TYPES[a.operation],
    permissionType: AclPermissionTypes.ALLOW,
  };
}

export function describeAcl(a: AclSpec): string {
  return `${a.principal} ${a.operation} on ${a.resource === 'cluster' ? 'cluster' : `${a.resource}:${a.name}${a.prefixed ? '*' : ''}`}`;
}

export async function grantAcls(admin: Admin, acls: AclSpec[]): Promise<void> {
  if (acls.length) await admin.createAcls({ acl: acls.map(aclEntry) });
}

export async function revokeAcls(admin: Admin, acls: AclSpec[]): Promise<number> {
  if (!acls.length) return 0;
  const res = await admin.deleteAcls({ filters: acls.map(aclEntry) });
  return res.filterResponses.reduce((n, r) => n + r.matchingAcls.length, 0);
}

const byType = <T extends string>(m: Record<T, number>, v: number): T | undefined => (Object.keys(m) as T[]).find((k) => m[k] === v);

/** Every ACL of the cluster (or of one principal), as specs. */
export async function listAcls(admin: Admin, principal?: string): Promise<AclSpec[]> {
  const res = await admin.describeAcls({
    resourceType: AclResourceTypes.ANY,
    resourcePatternType: ResourcePatternTypes.ANY,
    operation: AclOperationTypes.ANY,
    permissionType: AclPermissionTypes.ANY,
    ...(principal ? { principal } : {}),
  });
  const out: AclSpec[] = [];
  for (const r of res.resources) {
    const resource = byType(RESOURCE_TYPES, r.resourceType);
    if (!resource) continue;
    for (const a of r.acls) {
      const operation = byType(OPERATION_TYPES, a.operation);
      if (!operation) continue;
      out.push({ principal: a.principal, resource, name: r.resourceName, prefixed: r.resourcePatternType === ResourcePatternTypes.PREFIXED, operation });
    }
  }
  return out.sort((a, b) => describeAcl(a).localeCompare(describeAcl(b)));
}

// ---------------------------------------------------------------------------------------------
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
    ],
  },
  {
    service: 'audit',
    what: 'audit: broker and topic configuration, partitions and ISR',
    acls: [
      c('DescribeConfigs', 'DescribeConfigs (broker configs)'),
      t('{source}', 'Describe', 'Metadata (partitions, ISR); listTopics names only described topics'),
      t('{sink}', 'Describe', 'Metadata (partitions, ISR)'),
      t('{sink}.dlq', 'Describe', 'Metadata (partitions, ISR)'),
      t('{source}', 'DescribeConfigs', 'DescribeConfigs (topic configs)'),
      t('{sink}', 'DescribeConfigs', 'DescribeConfigs (topic configs)'),
      t('{sink}.dlq', 'DescribeConfigs', 'DescribeConfigs (topic configs)'),
    ],
  },
];

export interface AclNames {
  source: string;
  sink: string;
  group: string;
  prefix: string;
  /** canary.sourceTopic, sinkTopic (default: the pipeline's), canary.id. */
  canarySource?: string;
  canarySink?: string;
  canaryId?: string;
}

/** The needed ACLs of the given services for one principal and the config's names, without duplicates. Pure. */
export function aclsFor(principal: string, names: AclNames, services: string[] = EOSWATCH_ACLS.map((s) => s.service)): AclSpec[] {
  const fill = (n: string): string => {
    const v = n
      .replace('{source}', names.source)
      .replace('{sink}', names.sink)
      .replace('{group}', names.group)
      .replace('{prefix}', names.prefix)
      .replace('{canary.source}', names.canarySource ?? names.source)
      .replace('{canary.sink}', names.canarySink ?? names.sink)
      .replace('{canary.id}', names.canaryId ?? '');
    if (v === '' || v.startsWith('.') || /\{/.test(v)) throw new Error(`ACL name ${n}: no value given for it`);
    return v;
  };
  const unknown = services.filter((s) => !EOSWATCH_ACLS.some((x) => x.service === s));
  if (unknown.length) throw new Error(`no ACL table for services ${unknown.join(', ')} (known: ${EOSWATCH_ACLS.map((s) => s.service).join(', ')})`);
  const out = new Map<string, AclSpec>();
  for (const s of EOSWATCH_ACLS.filter((x) => services.includes(x.service))) {
    for (const a of s.acls) {
      const spec: AclSpec = { principal, resource: a.resource, name: fill(a.name), prefixed: a.prefixed, operation: a.operation };
      out.set(describeAcl(spec), spec);
    }
  }
  return [...out.values()];
}

function resourceText(a: NeededAcl): string {
  return a.resource === 'cluster' ? 'cluster' : `${a.resource}:${a.name}${a.prefixed ? '*' : ''}`;
}

/** The table of docs/security.md, between its generated-table markers. Pure. */
export function aclTableMarkdown(): string {
  const rows = ['| Service | Resource | Operation | Needed by (Kafka APIs) |', '|---|---|---|---|'];
  for (const s of EOSWATCH_ACLS) {
    if (!s.acls.length) rows.push(`| ${s.service} | (none) | (none) | Metadata, ApiVersions: no ACL |`);
    for (const a of s.acls) rows.push(`| ${s.service} | \`${resourceText(a)}\` | ${a.operation} | ${a.apis} |`);
  }
  return `${rows.join('\n')}\n`;
}
