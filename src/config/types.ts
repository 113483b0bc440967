// The typed form of config/schema.json after loading: defaults filled, durations in milliseconds.
// Keep it in step with the schema; test/unit/config/load.test.ts checks the example file against both.
import type { BackoffConfig, RestartStrategyConfig } from '../restart.js';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

export type LogFormat = 'auto' | 'json' | 'pretty';

export interface HttpConfig {
  host: string;
  port: number;
  /** ms */
  requestTimeout: number;
  maxConnections: number;
  webConfigFile?: string;
  /** ms: how often the web configuration file is read again (src/http/web-reload.ts) */
  webConfigReloadInterval: number;
}

export interface SslConfig {
  enabled: boolean;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  passphrase?: string;
  rejectUnauthorized: boolean;
}

/** SASL with a user name and password (PLAIN, SCRAM). */
export interface PasswordSaslConfig {
  mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  username: string;
  password: string;
}

/** SASL/OAUTHBEARER: the token is read from tokenFile at every authentication (src/kafka/oauth-token.ts). */
export interface OAuthBearerSaslConfig {
  mechanism: 'oauthbearer';
  tokenFile: string;
}

export type SaslConfig = PasswordSaslConfig | OAuthBearerSaslConfig;

export interface KafkaConfig {
  brokers: string[];
  clientId: string;
  /** ms */
  connectionTimeout: number;
  /** ms */
  requestTimeout: number;
  /** ms */
  healthCheckInterval: number;
  ssl: SslConfig;
  sasl?: SaslConfig;
}

export interface Config {
  http: HttpConfig;
  log: { level: LogLevel; format: LogFormat };
  /** gracePeriod in ms */
  shutdown: { gracePeriod: number };
  kafka: KafkaConfig;
  /** Restart backoff of failed services (src/daemon.ts); durations in ms */
  supervisor: BackoffConfig;
  pipeline: PipelineConfig;
  lsoMonitor: LsoMonitorConfig;
  transactions: TransactionsConfig;
  lag: LagConfig;
  flink: FlinkConfig;
  streams: StreamsConfig;
  canary: CanaryConfig;
  audit: AuditConfig;
}

export interface PipelineConfig {
  enabled: boolean;
  name: string;
  sourceTopic: string;
  sinkTopic: string;
  deadLetterTopic?: string;
  groupId: string;
  transactionalIdPrefix: string;
  mode: 'EXACTLY_ONCE' | 'AT_LEAST_ONCE';
  startFrom: 'none' | 'earliest' | 'latest';
  /** Set by `run --start-from` (not in the schema): the file's startFrom, which the audit judges; startFrom holds this run's. */
  configuredStartFrom?: 'none' | 'earliest' | 'latest';
  transform: 'increment' | 'identity';
  transformModule?: string;
  partitioning: 'input' | 'key';
  /** durations in ms */
  checkpoint: { interval: number; timeout: number; minPause: number; tolerableFailedCheckpoints: number };
  transactionTimeout: number;
  sessionTimeout: number;
  heartbeatInterval: number;
  onFailure: 'exit' | 'keep-serving';
  /** How a FAILED pipeline is restarted under onFailure keep-serving; durations in ms */
  restartStrategy: RestartStrategyConfig;
  /** ms a transform may take for one record (sync or async) before the record goes to the dead-letter topic */
  transformTimeout: number;
  /** bytes one fetch returns at most per source partition (max.partition.fetch.bytes) */
  maxBytesPerPartition: number;
  faultInjection: { commitDelay: number; commitDelayTimes: number; maxRecordsPerSecond: number };
}

export interface AuditConfig {
  enabled: boolean;
  schedule: string;
  cluster: boolean;
  topics: string[];
  allTopics: boolean;
  producerConfigs: string[];
  consumerConfigs: string[];
  /** Kafka Streams .properties files: the streams.* checks (src/audit/checks/streams.ts). */
  streamsConfigs: string[];
  flinkConfigs: string[];
  /** ms */
  sourceTimeout: number;
}

export interface StreamsConfig {
  enabled: boolean;
  /** ms */
  interval: number;
  /** Also watch the Streams applications found on the cluster (groups with protocol "stream"). */
  discover: boolean;
  applications: StreamsApplicationConfig[];
}

export interface StreamsApplicationConfig {
  /** application.id: the consumer group id and the prefix of the transactional ids. */
  applicationId: string;
  /** The pipeline label; default the application.id. */
  name?: string;
}

export interface FlinkConfig {
  enabled: boolean;
  restUrls: string[];
  jobs: { names: string[]; ids: string[] };
  /** ms */
  pollInterval: number;
  /** ms */
  requestTimeout: number;
  tls: { caFile?: string; rejectUnauthorized: boolean };
  auth?: { username?: string; password?: string; bearerToken?: string };
  /** Kafka sink topics of the watched jobs, by job-name pattern (visibility latency; the LSO monitor reads them). */
  sinks: { job: string; topics: string[] }[];
  /** KafkaSink transactionalIdPrefix by job-name pattern (per-checkpoint commit latency from the transactions service's events); the loader's default is []. */
  transactionalIdPrefixes?: { job: string; prefix: string }[];
}

export interface LsoMonitorConfig {
  enabled: boolean;
  topics: string[];
  /** ms */
  interval: number;
  /** ms */
  hangingAfter: number;
}

export interface TransactionsConfig {
  enabled: boolean;
  /** ms */
  interval: number;
  /** ms */
  idleAfter: number;
  patterns: string[];
  maxApplications: number;
  topN: number;
}

export interface CanaryConfig {
  enabled: boolean;
  id: string;
  sourceTopic?: string;
  sinkTopic?: string;
  /** records per second */
  rate: number;
  /** ms */
  lostAfter: number;
  valueDelta?: number;
}

export interface LagConfig {
  enabled: boolean;
  /** Group names, /regular expressions/, or `all`. */
  groups: string[];
  /** Topic names or /regular expressions/; empty: every topic the groups commit to. */
  topics: string[];
  /** ms */
  interval: number;
}
