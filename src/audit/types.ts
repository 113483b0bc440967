// The audit's model. Sources gather facts (I/O); checks are pure functions of the facts; the
// runner turns check results into findings, metrics, the /audit document and the CLI report.
// One check group per file in checks/, one source per file in sources/ (node_exporter style).

export type Severity = 'critical' | 'warning' | 'info';

/** What a check is, independent of any target: the catalogue is generated from these. */
export interface CheckDefinition {
  /** Stable id, `<group>.<name>`, e.g. `producer.enable-idempotence`. */
  id: string;
  title: string;
  severity: Severity;
  /** Why it matters for exactly-once (what goes wrong: loss, duplicates, stall). */
  rationale: string;
  /** How to fix it: the setting and value. */
  remediation: string;
}

/** One evaluation of a check against one target. */
export interface CheckResult {
  /** What was checked: `broker:1`, `topic:orders`, `cluster`, `pipeline:default`, `producer:/etc/app/producer.properties`. */
  target: string;
  passed: boolean;
  /** What was seen, as a person would say it (the effective value and where it comes from). */
  observed: string;
  /** What exactly-once needs. */
  expected: string;
  /** The fix for this target when it differs from the check's (e.g. the eoswatch key for the pipeline). */
  remediation?: string;
}

export interface Finding extends CheckResult {
  check: string;
  title: string;
  severity: Severity;
  source: string;
  rationale: string;
  remediation: string;
}

/** A Java client configuration (Kafka clients, Kafka Streams, Flink KafkaSource/KafkaSink properties). */
export interface ClientFacts {
  role: 'producer' | 'consumer' | 'streams';
  /** File path (or `pipeline:<name>` for eoswatch's own pipeline expressed as client settings). */
  file: string;
  props: Map<string, string>;
}

/** Checkpointing of eoswatch's own pipeline or of a Flink job. */
export interface CheckpointFacts {
  origin: 'pipeline' | 'flink';
  /** `pipeline:<name>` or `flink:<file>`. */
  target: string;
  /** EXACTLY_ONCE | AT_LEAST_ONCE; undefined when checkpointing is not configured at all. */
  mode?: string;
  intervalMs?: number;
  timeoutMs?: number;
  minPauseMs?: number;
  tolerableFailed?: number;
  /** Flink only: externalized checkpoints retained on cancellation. */
  retainOnCancellation?: boolean;
  /** Flink only: unaligned checkpoints enabled. */
  unaligned?: boolean;
  /** Flink only: max concurrent checkpoints. */
  maxConcurrent?: number;
  /** Flink only: state backend name as configured (rocksdb, hashmap, ...). */
  stateBackend?: string;
  /** Flink only: incremental checkpoints. */
  incremental?: boolean;
  /** Flink only: KafkaSink delivery guarantee and transactional id prefix, when configured. */
  sinkDeliveryGuarantee?: string;
  sinkTransactionalIdPrefix?: string;
  /** Flink only: KafkaSink producer transaction.timeout.ms when configured. */
  sinkTransactionTimeoutMs?: number;
}

export interface ConfigEntry {
  value: string | null;
  /** Where the effective value comes from: default, static (server.properties), dynamic (broker or cluster). */
  source: 'default' | 'static' | 'dynamic-broker' | 'dynamic-default' | 'unknown';
}

export interface BrokerFacts {
  id: number;
  configs: Map<string, ConfigEntry>;
}

export interface PartitionFacts {
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
}

export interface TopicFacts {
  name: string;
  /** Why this topic is audited: source or sink of a pipeline, or an internal topic. */
  roles: ('source' | 'sink' | 'internal')[];
  partitions: PartitionFacts[];
  configs: Map<string, ConfigEntry>;
}

export interface ClusterFacts {
  /** Kafka version as far as it can be told (e.g. "4.1" from the API versions), or undefined. */
  version?: string;
  brokers: BrokerFacts[];
  topics: TopicFacts[];
}

/** One transactional id as the transaction coordinator knows it (DescribeTransactions, else its __transaction_state value). */
export interface CoordinatorIdFacts {
  transactionalId: string;
  /** src/coordinator/applications.ts' grouping. */
  application: string;
  engine: 'eoswatch' | 'kafka-streams' | 'flink' | 'pattern' | 'id';
  state: string;
  producerId: number;
  producerEpoch: number;
  transactionTimeoutMs: number;
  /** Start of the current (or, completed, the last) transaction; -1 when none. */
  startTimestampMs: number;
  /** __transaction_state only: when the coordinator last wrote this id's state; undefined when the log was not read. */
  lastUpdateTimestampMs?: number;
  /** __transaction_state only: the value's ClientTransactionVersion (0 when absent, 2 = KIP-890 TV2); undefined when the log was not read. */
  clientTransactionVersion?: number;
}

/** A coordinator API (or the transaction log) refused for a missing ACL. */
export interface CoordinatorPermissionGap {
  api: 'ListTransactions' | 'DescribeTransactions' | 'DescribeProducers' | 'DescribeConfigs' | 'Fetch';
  /** What was refused: "broker 2", "__transaction_state", "3 transactional ids (a, b, c)", a topic. */
  target: string;
  /** Kafka's error name, e.g. TRANSACTIONAL_ID_AUTHORIZATION_FAILED. */
  error: string;
}

/** The transaction coordinator's view: its transactional ids, the brokers' timeout maximum, what could not be read. */
export interface CoordinatorFacts {
  /** When the view was taken: the `now` the checks judge ages at. */
  takenAtMs: number;
  ids: CoordinatorIdFacts[];
  /** transaction.max.timeout.ms per broker (undefined: not reported). */
  maxTimeoutMs: { broker: number; value?: number }[];
  /** __transaction_state was read: last updates and client transaction versions are known. */
  logRead: boolean;
  permissionGaps: CoordinatorPermissionGap[];
}

/** One ACL binding as DescribeAcls returned it. */
export interface AclBindingFacts {
  /** `User:name`, `User:*` (everyone), or another principal type. */
  principal: string;
  /** `*` or one address. */
  host: string;
  resource: 'topic' | 'group' | 'transactional-id' | 'cluster' | 'other';
  /** The resource name: literal (`*` is every resource of its type) or, prefixed, the prefix. */
  name: string;
  pattern: 'literal' | 'prefixed' | 'other';
  /** Kafka's operation name: Read, Write, All, Describe, ... */
  operation: string;
  permission: 'allow' | 'deny';
}

/** A transactional-id prefix eoswatch watches, and whose it is (`pipeline:<name>`, `flink job <pattern>`, `streams:<application.id>`). */
export interface WatchedPrefix {
  owner: string;
  prefix: string;
}

/** The cluster's ACLs (DescribeAcls), for the acl.* checks. */
export interface AclFacts {
  /**
   * read: `bindings` holds every ACL; authorizer-off: the cluster has no authorizer
   * (SECURITY_DISABLED); denied: eoswatch may not describe ACLs (Describe on Cluster missing);
   * error: DescribeAcls failed otherwise.
   */
  state: 'read' | 'authorizer-off' | 'denied' | 'error';
  /** denied: Kafka's error name; error: the message. */
  error?: string;
  bindings: AclBindingFacts[];
  /** The transactional-id prefixes of the configuration: whose writers the check reports. */
  watchedPrefixes: WatchedPrefix[];
}

/** Everything the sources gathered. A source that failed leaves its part undefined and reports a SourceStatus. */
export interface AuditFacts {
  cluster?: ClusterFacts;
  coordinator?: CoordinatorFacts;
  /** The cluster source's DescribeAcls. */
  acls?: AclFacts;
  clients: ClientFacts[];
  checkpoints: CheckpointFacts[];
}

/** A check: its definition and a pure evaluation over the facts (no I/O). */
export interface Check extends CheckDefinition {
  evaluate(facts: AuditFacts): CheckResult[];
}

export interface SourceStatus {
  name: string;
  ok: boolean;
  durationMs: number;
  error?: string;
}
