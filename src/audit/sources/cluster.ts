// The live cluster through the admin API: every broker's effective configuration (value and
// where it comes from), topic replicas and ISR, the internal transaction and offsets topics, and
// the cluster's ACLs (DescribeAcls, for the acl.* checks).
import kafkajs, { type Admin, type Kafka } from 'kafkajs';
import { retryRetriable } from '../../kafka/retry.js';
import type { AclBindingFacts, AclFacts, AuditFacts, ClusterFacts, ConfigEntry, TopicFacts, WatchedPrefix } from '../types.js';
import type { AuditSource } from '../runner.js';
import { EosError, ErrorCodes } from '../../errors.js';

/** Broker settings the checks read; asking for these only keeps the answer small. */
export const BROKER_CONFIG_NAMES = [
  'transaction.state.log.replication.factor',
  'transaction.state.log.min.isr',
  'transaction.max.timeout.ms',
  'offsets.topic.replication.factor',
  'log.message.format.version',
  'inter.broker.protocol.version',
  'unclean.leader.election.enable',
  'min.insync.replicas',
  'default.replication.factor',
];

// kafkajs is CommonJS and these enums are not visible to ESM named imports.
const { ConfigResourceTypes, ConfigSource, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs;
type ConfigSource = kafkajs.ConfigSource;

const TOPIC_CONFIG_NAMES = ['min.insync.replicas', 'unclean.leader.election.enable'];
const INTERNAL_TOPICS = ['__transaction_state', '__consumer_offsets'];

function sourceOf(s: ConfigSource | undefined, isDefault: boolean): ConfigEntry['source'] {
  switch (s) {
    case ConfigSource.DEFAULT_CONFIG:
      return 'default';
    case ConfigSource.STATIC_BROKER_CONFIG:
      return 'static';
    case ConfigSource.DYNAMIC_BROKER_CONFIG:
    case ConfigSource.TOPIC_CONFIG:
      return 'dynamic-broker';
    case ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG:
      return 'dynamic-default';
    default:
      return isDefault ? 'default' : 'unknown';
  }
}

export interface ClusterSourceOptions {
  /** Topics to audit with their roles; `all` audits every non-internal topic too. */
  topics: { name: string; role: 'source' | 'sink' }[];
  allTopics: boolean;
  /** The transactional-id prefixes the configuration watches (the acl.* checks); default none. */
  transactionalIdPrefixes?: WatchedPrefix[];
}

const RESOURCE_NAMES: Record<number, AclBindingFacts['resource']> = {
  [AclResourceTypes.TOPIC]: 'topic',
  [AclResourceTypes.GROUP]: 'group',
  [AclResourceTypes.TRANSACTIONAL_ID]: 'transactional-id',
  [AclResourceTypes.CLUSTER]: 'cluster',
};
const PATTERN_NAMES: Record<number, AclBindingFacts['pattern']> = { [ResourcePatternTypes.LITERAL]: 'literal', [ResourcePatternTypes.PREFIXED]: 'prefixed' };
const OPERATION_NAMES: Record<number, string> = {
  [AclOperationTypes.ALL]: 'All',
  [AclOperationTypes.READ]: 'Read',
  [AclOperationTypes.WRITE]: 'Write',
  [AclOperationTypes.CREATE]: 'Create',
  [AclOperationTypes.DELETE]: 'Delete',
  [AclOperationTypes.ALTER]: 'Alter',
  [AclOperationTypes.DESCRIBE]: 'Describe',
  [AclOperationTypes.CLUSTER_ACTION]: 'ClusterAction',
  [AclOperationTypes.DESCRIBE_CONFIGS]: 'DescribeConfigs',
  [AclOperationTypes.ALTER_CONFIGS]: 'AlterConfigs',
  [AclOperationTypes.IDEMPOTENT_WRITE]: 'IdempotentWrite',
};

/** DescribeAcls' answer as bindings (unknown codes kept as 'other' / `operation <n>`). Pure. */
export function aclBindings(resources: { resourceType: number; resourceName: string; resourcePatternType: number; acls: { principal: string; host: string; operation: number; permissionType: number }[] }[]): AclBindingFacts[] {
  return resources.flatMap((r) =>
    r.acls.map((a) => ({
      principal: a.principal,
      host: a.host,
      resource: RESOURCE_NAMES[r.resourceType] ?? 'other',
      name: r.resourceName,
      pattern: PATTERN_NAMES[r.resourcePatternType] ?? 'other',
      operation: OPERATION_NAMES[a.operation] ?? `operation ${a.operation}`,
      permission: a.permissionType === AclPermissionTypes.DENY ? 'deny' : 'allow',
    })),
  );
}

/**
 * Every ACL of the cluster. No authorizer (SECURITY_DISABLED) and a refused DescribeAcls
 * (Describe on Cluster missing) are facts for the acl.* checks, not failures of the source.
 */
export async function gatherAcls(admin: Pick<Admin, 'describeAcls'>, watchedPrefixes: WatchedPrefix[]): Promise<AclFacts> {
  try {
    const res = await admin.describeAcls({
      resourceType: AclResourceTypes.ANY,
      resourcePatternType: ResourcePatternTypes.ANY,
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    });
    return { state: 'read', bindings: aclBindings(res.resources as Parameters<typeof aclBindings>[0]), watchedPrefixes };
  } catch (err) {
    const e = err as { type?: string; cause?: { type?: string }; message?: string };
    const type = e.type ?? e.cause?.type ?? '';
    if (type === 'SECURITY_DISABLED') return { state: 'authorizer-off', bindings: [], watchedPrefixes };
    if (/_AUTHORIZATION_FAILED$/.test(type)) return { state: 'denied', error: type, bindings: [], watchedPrefixes };
    return { state: 'error', error: e.message ?? String(err), bindings: [], watchedPrefixes };
  }
}

/**
 * An authorization error of a request, rethrown naming the ACL the principal lacks (kafkajs says
 * only "Cluster authorization failed"); any other error unchanged.
 */
export async function namingDenied<T>(acl: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    // kafkajs may wrap the protocol error (retries exhausted): its type is then on the cause.
    const e = err as { type?: string; cause?: { type?: string } };
    const type = e.type ?? e.cause?.type ?? '';
    if (/_AUTHORIZATION_FAILED$/.test(type)) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `permission missing: ${acl} (${type}: ${(err as Error).message})`, { cause: err });
    throw err;
  }
}

export async function gatherCluster(admin: Admin, opts: ClusterSourceOptions): Promise<ClusterFacts> {
  const { brokers } = await admin.describeCluster();
  const brokerConfigs = await namingDenied('DescribeConfigs on the cluster (broker configurations)', () =>
    admin.describeConfigs({
      includeSynonyms: false,
      resources: brokers.map((b) => ({ type: ConfigResourceTypes.BROKER, name: String(b.nodeId), configNames: BROKER_CONFIG_NAMES })),
    }),
  );
  const facts: ClusterFacts = {
    brokers: brokerConfigs.resources.map((r) => ({
      id: Number(r.resourceName),
      // A sensitive value is never read into the facts, so it cannot reach a report.
      configs: new Map(r.configEntries.map((e) => [e.configName, { value: e.isSensitive ? null : e.configValue, source: sourceOf(e.configSource, e.isDefault) }])),
    })),
    topics: [],
  };
  facts.brokers.sort((a, b) => a.id - b.id);
  const hasLmf = facts.brokers.some((b) => b.configs.has('log.message.format.version'));
  const ibp = facts.brokers[0]?.configs.get('inter.broker.protocol.version')?.value;
  facts.version = hasLmf ? (/^(\d+\.\d+)/.exec(ibp ?? '')?.[1] ?? '3.x') : '4.x';

  const existing = new Set(await admin.listTopics());
  const roles = new Map<string, Set<TopicFacts['roles'][number]>>();
  const add = (name: string, role: TopicFacts['roles'][number]) => {
    if (!existing.has(name)) return;
    if (!roles.has(name)) roles.set(name, new Set());
    roles.get(name)!.add(role);
  };
  for (const t of INTERNAL_TOPICS) add(t, 'internal');
  for (const t of opts.topics) add(t.name, t.role);
  if (opts.allTopics) for (const t of existing) if (!t.startsWith('__')) add(t, 'sink');
  const missing = opts.topics.filter((t) => !existing.has(t.name)).map((t) => t.name);
  if (missing.length) throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `topic${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')}`);

  const names = [...roles.keys()];
  if (names.length === 0) return facts;
  const meta = await retryRetriable(() => admin.fetchTopicMetadata({ topics: names }));
  const audited = names.filter((n) => !roles.get(n)!.has('internal'));
  const topicConfigs = new Map<string, Map<string, ConfigEntry>>();
  // One DescribeConfigs per chunk of topics: a 500-topic cluster is a handful of requests.
  for (let i = 0; i < audited.length; i += 100) {
    const chunk = audited.slice(i, i + 100);
    const res = await namingDenied(`DescribeConfigs on topic${chunk.length > 1 ? 's' : ''} ${chunk.join(', ')}`, () =>
      admin.describeConfigs({
        includeSynonyms: false,
        resources: chunk.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: TOPIC_CONFIG_NAMES })),
      }),
    );
    for (const r of res.resources) {
      topicConfigs.set(r.resourceName, new Map(r.configEntries.map((e) => [e.configName, { value: e.configValue, source: sourceOf(e.configSource, e.isDefault) }])));
    }
  }
  for (const t of meta.topics) {
    facts.topics.push({
      name: t.name,
      roles: [...(roles.get(t.name) ?? [])],
      partitions: t.partitions
        .map((p) => ({ partition: p.partitionId, leader: p.leader, replicas: p.replicas, isr: p.isr }))
        .sort((a, b) => a.partition - b.partition),
      configs: topicConfigs.get(t.name) ?? new Map(),
    });
  }
  return facts;
}

export function clusterSource(kafka: Kafka, opts: ClusterSourceOptions): AuditSource & { close(): Promise<void> } {
  let admin: Admin | undefined;
  return {
    name: 'cluster',
    async gather(facts: AuditFacts) {
      admin ??= kafka.admin({ retry: { retries: 1 } });
      try {
        await admin.connect();
        // First: the ACLs are judged even when the configurations below are refused.
        facts.acls = await gatherAcls(admin, opts.transactionalIdPrefixes ?? []);
        facts.cluster = await gatherCluster(admin, opts);
      } catch (err) {
        await admin.disconnect().catch(() => undefined);
        admin = undefined;
        throw err;
      }
      return [];
    },
    async close() {
      await admin?.disconnect().catch(() => undefined);
      admin = undefined;
    },
  };
}
