// The audit sources a configuration asks for, shared by the daemon's audit service and
// `eoswatch audit`.
import type { Kafka } from 'kafkajs';
import type { Config } from '../../config/types.js';
import type { AuditSource } from '../runner.js';
import type { WatchedPrefix } from '../types.js';
import { clusterSource } from './cluster.js';
import { flinkSource, propertiesSource } from './files.js';
import { pipelineSource } from './pipeline.js';
import { coordinatorSource } from './coordinator.js';
import { checkPattern } from '../../coordinator/applications.js';
import { flinkJobsSource } from './flink.js';

/** The transactional-id prefixes of the applications the configuration names: whose writers acl.transactional-id-writers lists. */
export function watchedPrefixes(config: Config): WatchedPrefix[] {
  const p = config.pipeline;
  return [
    ...(p.enabled ? [{ owner: `pipeline:${p.name}`, prefix: p.transactionalIdPrefix }] : []),
    ...(config.flink.transactionalIdPrefixes ?? []).map((x) => ({ owner: `flink job ${x.job}`, prefix: x.prefix })),
    ...(config.streams.enabled ? config.streams.applications.map((a) => ({ owner: `streams:${a.applicationId}`, prefix: a.applicationId })) : []),
  ];
}

export function sourcesFromConfig(config: Config, kafka: Kafka | undefined): { sources: AuditSource[]; close(): Promise<void> } {
  const a = config.audit;
  const p = config.pipeline;
  const sources: AuditSource[] = [];
  const closers: (() => Promise<void>)[] = [];
  if (a.cluster && kafka) {
    const topics = [
      ...(p.enabled ? [{ name: p.sourceTopic, role: 'source' as const }, { name: p.sinkTopic, role: 'sink' as const }] : []),
      ...a.topics.map((name) => ({ name, role: 'sink' as const })),
    ];
    const c = clusterSource(kafka, { topics, allTopics: a.allTopics, transactionalIdPrefixes: watchedPrefixes(config) });
    sources.push(c);
    closers.push(() => c.close());
    // The transaction coordinator's view, its ids grouped as the transactions service groups them.
    const t = coordinatorSource(kafka, { patterns: config.transactions.patterns.map(checkPattern), eoswatchPrefixes: p.enabled ? [p.transactionalIdPrefix] : [] });
    sources.push(t);
    closers.push(() => t.close());
  }
  if (p.enabled) sources.push(pipelineSource(p));
  for (const f of a.producerConfigs) sources.push(propertiesSource('producer', f));
  for (const f of a.consumerConfigs) sources.push(propertiesSource('consumer', f));
  for (const f of a.streamsConfigs) sources.push(propertiesSource('streams', f));
  for (const f of a.flinkConfigs) sources.push(flinkSource(f));
  // The live settings of the jobs the Flink service watches.
  if (config.flink.enabled) sources.push(flinkJobsSource(config.flink));
  return { sources, close: async () => void (await Promise.all(closers.map((c) => c()))) };
}
