// `eoswatch topics create` and `npm run kafka -- topics create`: the topics a configuration needs
// (pipeline source, sink and dead-letter topic, the canary's), with replication factor and
// min.insync.replicas from the cluster size. eoswatch's daemon never creates topics; this is the
// explicit step before it. A source topic created here gets the pipeline group's offsets committed
// at its start, so a new pipeline starts with pipeline.startFrom: none and needs no bootstrap run.
import type { Admin, Kafka } from 'kafkajs';
import type { Config } from '../config/types.js';
import { EosError, ErrorCodes } from '../errors.js';
import { ensureTopics } from './admin.js';
import { GroupOffsetWriter } from './offsets.js';

export interface TopicRequest {
  /** Topic names besides (or instead of) the config's. */
  names: string[];
  partitions: number;
  replicationFactor?: number;
  minInsyncReplicas?: number;
  /** Create with fewer than 3 replicas or min ISR below 2 (a cluster of fewer than 3 brokers, local development). */
  allowUnsafe: boolean;
}

export interface PlannedTopic {
  topic: string;
  /** What the config uses it for. */
  role: string;
  /** The pipeline's group gets its offsets at the start of this topic when it is created here. */
  startOffsetsFor?: string;
}

export interface TopicPlan {
  brokers: number;
  replicationFactor: number;
  minInsyncReplicas: number;
  partitions: number;
  topics: PlannedTopic[];
  /** Why these settings are unsafe for exactly-once, when they are (allowed only with allowUnsafe). */
  unsafe?: string;
}

/** The topics a configuration needs: the enabled pipeline's and the canary's. */
export function topicsOfConfig(config: Config): PlannedTopic[] {
  const out: PlannedTopic[] = [];
  const add = (topic: string, role: string, startOffsetsFor?: string) => {
    const seen = out.find((t) => t.topic === topic);
    if (seen) seen.role = `${seen.role}, ${role}`;
    else out.push({ topic, role, ...(startOffsetsFor ? { startOffsetsFor } : {}) });
  };
  const p = config.pipeline;
  if (p.enabled) {
    add(p.sourceTopic, 'pipeline source', p.groupId);
    add(p.sinkTopic, 'pipeline sink');
    add(p.deadLetterTopic ?? `${p.sinkTopic}.dlq`, 'pipeline dead letters');
  }
  if (config.canary.enabled) {
    add(config.canary.sourceTopic ?? p.sourceTopic, 'canary source');
    add(config.canary.sinkTopic ?? p.sinkTopic, 'canary sink');
  }
  return out;
}

/** The config's topics (if any) and the named ones. */
export function wantedTopics(config: Config | undefined, names: string[]): PlannedTopic[] {
  const fromConfig = config ? topicsOfConfig(config) : [];
  return [...fromConfig, ...names.filter((n) => !fromConfig.some((t) => t.topic === n)).map((topic) => ({ topic, role: 'named' }))];
}

/**
 * Replication settings for a cluster of `brokers`: RF 3 and min ISR 2 when it can hold them; refused
 * below that unless allowed, or unless every topic exists already (nothing would be created).
 */
export function planTopics(brokers: number, topics: PlannedTopic[], req: TopicRequest, existing: ReadonlySet<string> = new Set()): TopicPlan {
  if (!topics.length) throw new EosError(ErrorCodes.USAGE, 'no topics to create: name them, or give a --config whose pipeline or canary is enabled');
  const rf = req.replicationFactor ?? Math.min(3, brokers);
  const minIsr = req.minInsyncReplicas ?? (rf >= 3 ? 2 : 1);
  if (rf > brokers) throw new EosError(ErrorCodes.USAGE, `--replication-factor ${rf}: the cluster has only ${brokers} broker${brokers === 1 ? '' : 's'}`);
  if (minIsr < 1 || minIsr > rf) throw new EosError(ErrorCodes.USAGE, `--min-insync-replicas ${minIsr}: expected 1 to the replication factor (${rf})`);
  const problems = [
    ...(rf < 3 ? [`replication factor ${rf} (exactly-once needs 3${brokers < 3 ? `, which a cluster of ${brokers} broker${brokers === 1 ? '' : 's'} cannot hold` : ''})`] : []),
    ...(minIsr < 2 ? [`min.insync.replicas ${minIsr} (a write acknowledged by one replica is lost with it; needs 2)`] : []),
    ...(rf > 1 && minIsr >= rf ? [`min.insync.replicas ${minIsr} equal to the replication factor (one broker down stops every write)`] : []),
  ];
  const unsafe = problems.length ? problems.join('; ') : undefined;
  if (unsafe && !req.allowUnsafe && topics.some((t) => !existing.has(t.topic))) {
    throw new EosError(ErrorCodes.USAGE, `refusing to create topics that are not exactly-once safe: ${unsafe}. Add --allow-unsafe for local development.`);
  }
  return { brokers, replicationFactor: rf, minInsyncReplicas: minIsr, partitions: req.partitions, topics, ...(unsafe ? { unsafe } : {}) };
}

export interface TopicOutcome extends PlannedTopic {
  result: 'created' | 'exists' | 'would create';
  /** Offsets committed for the pipeline group (created source topics only). */
  startOffsetsCommitted?: boolean;
}

/** Creates the planned topics that do not exist; existing ones are left as they are. */
export async function applyTopicPlan(kafka: Kafka, admin: Admin, plan: TopicPlan, dryRun: boolean): Promise<TopicOutcome[]> {
  const existing = new Set(await admin.listTopics());
  const missing = plan.topics.filter((t) => !existing.has(t.topic));
  const outcomes: TopicOutcome[] = plan.topics.map((t) => ({ ...t, result: existing.has(t.topic) ? 'exists' : dryRun ? 'would create' : 'created' }));
  if (dryRun || !missing.length) return outcomes;
  await ensureTopics(
    admin,
    missing.map((t) => ({
      topic: t.topic,
      numPartitions: plan.partitions,
      replicationFactor: plan.replicationFactor,
      configEntries: [{ name: 'min.insync.replicas', value: String(plan.minInsyncReplicas) }],
    })),
  );
  const writer = new GroupOffsetWriter(kafka);
  try {
    for (const t of missing.filter((x) => x.startOffsetsFor)) {
      const partitions = Array.from({ length: plan.partitions }, (_, partition) => ({ partition, offset: 0n }));
      await writer.commit(t.startOffsetsFor!, t.topic, partitions);
      outcomes.find((o) => o.topic === t.topic)!.startOffsetsCommitted = true;
    }
  } finally {
    await writer.close();
  }
  return outcomes;
}

export function formatTopicOutcomes(plan: TopicPlan, outcomes: TopicOutcome[]): string {
  const lines = [
    `${plan.brokers} broker${plan.brokers === 1 ? '' : 's'}: ${plan.partitions} partitions, replication factor ${plan.replicationFactor}, min.insync.replicas ${plan.minInsyncReplicas}`,
    ...(plan.unsafe && outcomes.some((o) => o.result !== 'exists') ? [`not exactly-once safe (allowed by --allow-unsafe): ${plan.unsafe}`] : []),
  ];
  const width = Math.max(...outcomes.map((o) => o.topic.length));
  for (const o of outcomes) {
    const offsets = o.startOffsetsCommitted ? `; group ${o.startOffsetsFor} starts at its beginning` : o.startOffsetsFor && o.result === 'would create' ? `; group ${o.startOffsetsFor} would start at its beginning` : '';
    lines.push(`  ${o.topic.padEnd(width)}  ${o.result.padEnd(12)}  ${o.role}${offsets}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Plans, applies and describes: the one path of both command lines. */
export async function createConfiguredTopics(kafka: Kafka, topics: PlannedTopic[], req: TopicRequest, dryRun: boolean): Promise<{ plan: TopicPlan; outcomes: TopicOutcome[]; text: string }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { brokers } = await admin.describeCluster();
    const plan = planTopics(brokers.length, topics, req, new Set(await admin.listTopics()));
    const outcomes = await applyTopicPlan(kafka, admin, plan, dryRun);
    return { plan, outcomes, text: formatTopicOutcomes(plan, outcomes) };
  } finally {
    await admin.disconnect();
  }
}
