// Builds the daemon from a config: one entry per service, switched on by its config section,
// the way node_exporter registers collectors. Adding a service = its module + one line here.
import type { WebConfig } from './http/web-config.js';
import type { Config } from './config/types.js';
import { Daemon } from './daemon.js';
import { createKafka } from './kafka/client.js';
import { DEFAULT_PROBE_TIMEOUT_MS, KafkaHealthService } from './kafka/health.js';
import type { Logger } from './log.js';
import { createRegistry } from './metrics/registry.js';
import { PipelineService } from './pipeline/pipeline-service.js';
import { AuditService } from './audit/audit-service.js';
import { statusPageRouter } from './http/status-page.js';
import { StatusSampler } from './status/sampler.js';
import { LsoMonitorService } from './kafka/lso-monitor.js';
import { CanaryService, canaryTopics } from './canary/canary-service.js';
import { LagService } from './lag/lag-service.js';
import { FlinkService } from './flink/flink-service.js';
import { TransactionsService } from './coordinator/transactions-service.js';
import type { Service, ServiceContext } from './service.js';
import type { Router } from 'express';
import type { LagConfig } from './config/types.js';
import { StreamsService, streamsLabels } from './streams/streams-service.js';

export interface BuiltDaemon {
  daemon: Daemon;
  /** Resolves with the error of the first service that declared itself fatal. */
  fatal: Promise<Error>;
}

/** `web`: the web configuration file already loaded (src/commands/options.ts webSettings); else the daemon reads http.webConfigFile. */
export function createDaemon(config: Config, logger: Logger, web?: WebConfig): BuiltDaemon {
  const registry = createRegistry();
  let reportFatal: (err: Error) => void = () => undefined;
  const fatal = new Promise<Error>((resolve) => {
    reportFatal = resolve;
  });
  let daemon: Daemon | undefined;
  const context = (name: string): ServiceContext => ({
    logger: logger.child({ service: name }),
    registry,
    fatal: (err) => reportFatal(err),
    failed: (err) => daemon?.serviceFailed(name, err),
  });
  const services: Service[] = [];
  const routes: { path: string; description: string; router: Router }[] = [];

  const health = context('kafka-health');
  services.push(
    new KafkaHealthService(createKafka(config.kafka, health.logger, { retry: { retries: 0 } }), config.kafka.healthCheckInterval, health, {
      // A broker that has not answered within a request timeout (at most 10 s) counts as down.
      probeTimeoutMs: Math.min(config.kafka.requestTimeout, DEFAULT_PROBE_TIMEOUT_MS),
      clientFor: (address) => createKafka({ ...config.kafka, brokers: [address] }, health.logger, { retry: { retries: 0 } }),
    }),
  );

  if (config.pipeline.enabled) {
    const ctx = context('pipeline');
    // Short first retries: after a commit, the next transaction's AddPartitionsToTxn meets
    // CONCURRENT_TRANSACTIONS until the markers are written (a few ms), and kafkajs retries with this.
    // Enough of them (about 35 s) to ride out a leader or coordinator failover; a send stuck longer
    // is cut by the checkpoint timeout, which aborts and re-initialises the producer.
    const kafka = createKafka({ ...config.kafka, requestTimeout: pipelineRequestTimeout(config.kafka.requestTimeout, config.pipeline.checkpoint.timeout) }, ctx.logger, {
      retry: { initialRetryTime: 20, maxRetryTime: 1000, retries: 40 },
    });
    services.push(new PipelineService(config.pipeline, kafka, ctx));
  }

  // The Flink service is built first: the LSO monitor hands it its readings of the Flink sink topics.
  const flink = config.flink.enabled ? new FlinkService(config.flink, context('flink')) : undefined;
  // The topics whose last stable offset is watched (the LSO monitor's, and where the transactions
  // service also looks for an open transaction no coordinator knows).
  const topics = new Set(config.lsoMonitor.topics);
  if (config.pipeline.enabled) for (const t of [config.pipeline.sourceTopic, config.pipeline.sinkTopic]) topics.add(t);
  const flinkSinks = new Set(flink ? config.flink.sinks.flatMap((s) => s.topics) : []);
  for (const t of flinkSinks) topics.add(t);
  if (config.lsoMonitor.enabled) {
    if (topics.size) {
      const ctx = context('lso-monitor');
      // A leader that stopped answering (paused) holds a reading for its whole request timeout; the
      // monitor should rather miss one reading and read the partitions' new leaders at the next.
      const kafka = createKafka({ ...config.kafka, requestTimeout: periodicRequestTimeout(config.kafka.requestTimeout, config.lsoMonitor.interval) }, ctx.logger, { retry: { retries: 1 } });
      const onReading = flink && flinkSinks.size ? flink.lsoReading.bind(flink) : undefined;
      // A Flink job's sink topic carries that job's pipeline, engine and job_id; every other topic the own pipeline's.
      const topicLabels = flink && flinkSinks.size ? (t: string) => (flinkSinks.has(t) ? flink.topicLabels(t) : undefined) : undefined;
      services.push(
        new LsoMonitorService(
          kafka,
          { pipeline: config.pipeline.name, topics: [...topics], intervalMs: config.lsoMonitor.interval, hangingAfterMs: config.lsoMonitor.hangingAfter, onReading, topicLabels },
          ctx,
        ),
      );
    }
  }

  // Kafka Streams applications (src/streams/): their groups' lag is the lag service's, which then
  // also covers them (only them when lag.enabled is false), under the application's labels.
  const streamsApps = config.streams.enabled ? config.streams.applications : [];
  const streamsGroups = new Map(streamsApps.map((a) => [a.applicationId, streamsLabels(a)]));
  if (config.lag.enabled || streamsGroups.size) {
    const ctx = context('lag');
    // A group's lag carries the labels of its pipeline: the own pipeline's group, a Streams application's group, a Flink job's source or sink topic.
    const labelling = {
      pipeline: config.pipeline.name,
      ...(config.pipeline.enabled ? { groupId: config.pipeline.groupId } : {}),
      ...(flink ? { topicLabels: (t: string) => flink.topicLabels(t) } : {}),
      ...(streamsGroups.size ? { groupLabels: (g: string) => streamsGroups.get(g) } : {}),
    };
    const lagConfig = lagCovering(config.lag, [...streamsGroups.keys()], config.streams.interval);
    services.push(new LagService(createKafka(config.kafka, ctx.logger, { retry: { retries: 1 } }), lagConfig, ctx, labelling));
  }
  if (streamsGroups.size) {
    const ctx = context('streams');
    const kafka = createKafka({ ...config.kafka, requestTimeout: periodicRequestTimeout(config.kafka.requestTimeout, config.streams.interval) }, ctx.logger, { retry: { retries: 1 } });
    const streams = new StreamsService(kafka, config.streams, ctx);
    services.push(streams);
    routes.push({ path: '/streams', description: 'the watched Kafka Streams applications: group state, members, rebalances (JSON)', router: streams.router() });
  }
  if (flink) services.push(flink);
  if (flink?.tracksCommits && !config.transactions.enabled) {
    logger.warn('flink.transactionalIdPrefixes is set but transactions.enabled is false: the Flink jobs\' commit latency (eos_kafka_transaction_commit_latency_seconds{engine="flink"}) comes from the transactions service and is absent');
  }

  if (config.canary.enabled) {
    const ctx = context('canary');
    const kafka = createKafka(config.kafka, ctx.logger, { retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 10 } });
    services.push(new CanaryService(kafka, canaryTopics(config), ctx));
  }

  let audit: AuditService | undefined;
  if (config.audit.enabled) {
    const ctx = context('audit');
    audit = new AuditService(config, createKafka(config.kafka, ctx.logger, { retry: { retries: 1 } }), ctx);
    services.push(audit);
    routes.push({ path: '/audit', description: 'the last exactly-once configuration audit (JSON)', router: audit.router() });
  }

  let txns: TransactionsService | undefined;
  if (config.transactions.enabled) {
    const ctx = context('transactions');
    const kafka = createKafka({ ...config.kafka, requestTimeout: periodicRequestTimeout(config.kafka.requestTimeout, config.transactions.interval) }, ctx.logger, { retry: { retries: 1 } });
    const t = config.transactions;
    txns = new TransactionsService(
      kafka,
      {
        intervalMs: t.interval,
        idleAfterMs: t.idleAfter,
        patterns: t.patterns,
        maxApplications: t.maxApplications,
        topN: t.topN,
        eoswatchPrefixes: config.pipeline.enabled ? [config.pipeline.transactionalIdPrefix] : [],
        watchTopics: [...topics].sort(),
      },
      ctx,
    );
    services.push(txns);
    // A watched Flink job's KafkaSink commits per checkpoint come from the log's events (src/flink/sink-commits.ts).
    if (flink?.tracksCommits) txns.onEvents((events, baseline) => flink.transactionEvents(events, baseline));
    routes.push({ path: '/transactions', description: 'open and hanging transactions of the cluster, named (JSON)', router: txns.router() });
  }

  // The status page at / (src/http/status-page.ts) and /status.json: the status sampler's summary,
  // alert timers and history, from the same registry, readiness and audit.
  const sampler = new StatusSampler({ registry, readiness: () => built.readiness(), audit: () => audit?.lastReport, transactions: () => txns?.lastReport, logger: logger.child({ service: 'status' }) });
  services.push(sampler);
  const built: Daemon = new Daemon({
    config,
    ...(web ? { web } : {}),
    logger,
    registry,
    services,
    routes: [...routes, { path: '/', description: 'live status page (summary: /status.json)', router: statusPageRouter({ sampler }) }],
  });
  daemon = built;
  return { daemon: built, fatal };
}

/**
 * The pipeline's request timeout: kafka.requestTimeout, at most a third of the checkpoint timeout.
 * A request to a broker that stopped answering (SIGSTOP, a partition of the network) waits its
 * whole request timeout before kafkajs sends it to the partition's new leader; with the default
 * 30 s against a 30 s checkpoint, one paused broker of three would fail every checkpoint it
 * touches instead of slowing it down. Never below 1 s.
 */
export function pipelineRequestTimeout(requestTimeoutMs: number, checkpointTimeoutMs: number): number {
  return Math.min(requestTimeoutMs, Math.max(1_000, Math.floor(checkpointTimeoutMs / 3)));
}

/** A periodic reader's request timeout: kafka.requestTimeout, at most two of its intervals, never below 2 s. */
export function periodicRequestTimeout(requestTimeoutMs: number, intervalMs: number): number {
  return Math.min(requestTimeoutMs, Math.max(2_000, 2 * intervalMs));
}

/**
 * The lag service's configuration with the watched Streams applications' groups added: lag.groups
 * plus those groups when lag is enabled; only those groups (every topic they commit to, read every
 * streams.interval) when it is not.
 */
export function lagCovering(lag: LagConfig, streamsGroups: string[], streamsIntervalMs: number): LagConfig {
  if (!streamsGroups.length) return lag;
  if (lag.enabled) return { ...lag, groups: [...new Set([...lag.groups, ...streamsGroups])] };
  return { enabled: true, groups: streamsGroups, topics: [], interval: streamsIntervalMs };
}
