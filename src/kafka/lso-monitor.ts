// The LSO monitor service: reads the high watermark and last stable offset of every partition of
// the watched topics on a timer (never inside a scrape) and reports how long each LSO has stood
// still with records behind it. Stuck longer than `hangingAfter` — longer than any healthy
// transaction may stay open — is a hanging transaction: every read_committed consumer of that
// partition is frozen until it is aborted (kafka-transactions.sh find-hanging / abort).
import type { Config } from '../config/types.js';
import type { Kafka } from 'kafkajs';
import type { Logger } from '../log.js';
import type { Service, ServiceContext, ServiceHealth } from '../service.js';
import { errorMessage } from '../errors.js';
import type { Periodic } from '../runtime/periodic.js';
import { every, failures, type FailureKind } from '../runtime/runs.js';
import { lsoMetrics } from '../metrics/lso.js';
import type { PipelineLabels } from '../metrics/checkpoint-stats.js';
import { EndOffsetReader, type PartitionEnds } from './offsets.js';
import { LsoTracker, type LsoState } from './lso-tracker.js';
import type { NeededPermission, PermissionWatch } from './permissions.js';
import { failureKind, permissionWatch } from './permission-probe.js';
import { defineService } from '../service.js';
import { periodicRequestTimeout } from './client.js';

export interface LsoMonitorOptions {
  /** The own pipeline's name: the labels of every topic `topicLabels` does not claim. */
  pipeline: string;
  topics: string[];
  /**
   * The pipeline labels of a topic another engine owns (a Flink job's sink topic: the job's labels,
   * src/flink/flink-service.ts topicLabels); undefined: the own pipeline's. Asked at every reading,
   * so a resubmitted job's new job_id moves the topic's series. Return the same object while the
   * answer stays the same.
   */
  topicLabels?: (topic: string) => PipelineLabels | undefined;
  intervalMs: number;
  hangingAfterMs: number;
  /** Every reading as it is taken (the Flink service's visibility latency: it claims its topics, claim()). */
  onReading?: (topic: string, ends: PartitionEnds[], now: number) => void;
}

type TopicLabels = PipelineLabels & { topic: string };
type PartitionLabels = TopicLabels & { partition: string };

const samePipeline = (a: PipelineLabels, b: PipelineLabels) => a.pipeline === b.pipeline && a.engine === b.engine && a.job_id === b.job_id;

export class LsoMonitorService implements Service {
  readonly name = 'lso-monitor';
  private readonly logger: Logger;
  private readonly metrics: ReturnType<typeof lsoMetrics>;
  private readonly tracker: LsoTracker;
  private reader: EndOffsetReader | undefined;
  private readonly periodic: Periodic;
  /** Counts a topic a reading missed (eos_service_errors_total{what="topic"}); the log line names the topic. */
  private readonly failed: (what: 'topic', kind?: FailureKind) => void;
  private polled = false;
  private stopped = false;
  /**
   * Partitions with series, per topic, to remove those that disappear, with the label object of
   * each: the same object is passed on every reading, so /metrics formats its labels once
   * (src/metrics/render.ts).
   */
  private readonly partitions = new Map<string, Map<number, PartitionLabels>>();
  /** The labels of each topic's topic-level series (hanging, read errors), as last used. */
  private readonly topicSeries = new Map<string, TopicLabels>();
  /** Label sets of eos_lso_monitor_hanging_after_seconds, by pipeline key. */
  private readonly hangingAfterSeries = new Map<string, PipelineLabels>();
  private readonly ownLabels: PipelineLabels;
  private readonly failing = new Map<string, string>();
  /** Names the ACLs the brokers refuse (Describe on a watched topic) after a failed reading. */
  private readonly permissions: PermissionWatch;

  constructor(
    private readonly kafka: Kafka,
    private opts: LsoMonitorOptions,
    ctx: ServiceContext,
  ) {
    this.logger = ctx.logger;
    this.metrics = lsoMetrics(ctx.registry);
    this.tracker = new LsoTracker(opts.hangingAfterMs);
    this.ownLabels = { pipeline: opts.pipeline, engine: 'eoswatch', job_id: '' };
    for (const t of opts.topics) this.labelsOf(t);
    const needed = (): NeededPermission[] => this.opts.topics.map((name) => ({ resource: 'topic', name, prefixed: false, operation: 'Describe' }));
    this.permissions = permissionWatch({ service: this.name, kafka, needed, registry: ctx.registry, logger: ctx.logger });
    // A reading that missed a topic failed (the topic's error is counted in eos_service_errors_total{what="topic"}).
    const run = { registry: ctx.registry, service: this.name, task: 'reading' };
    this.failed = failures(run, ['topic']);
    this.periodic = every(() => this.poll().then(() => this.failing.size === 0), {
      ...run,
      name: 'the LSO monitor',
      intervalMs: opts.intervalMs,
      onError: (err) => this.logger.warn({ err: errorMessage(err) }, 'LSO reading failed'),
    });
  }

  /**
   * The topic-level label object of a topic: its pipeline's labels and the topic, the same object
   * while they stay the same. A topic whose pipeline changed (a Flink job resubmitted: new job_id)
   * loses its series under the old labels first.
   */
  private labelsOf(topic: string): TopicLabels {
    const p = this.opts.topicLabels?.(topic) ?? this.ownLabels;
    const before = this.topicSeries.get(topic);
    if (before && samePipeline(before, p)) return before;
    if (before) {
      this.dropSeries(topic, new Map());
      this.metrics.hanging.remove(before);
    }
    const labels: TopicLabels = { pipeline: p.pipeline, engine: p.engine, job_id: p.job_id, topic };
    this.topicSeries.set(topic, labels);
    this.syncHangingAfter();
    return labels;
  }

  /** eos_lso_monitor_hanging_after_seconds for every pipeline whose topics are watched, and no other. */
  private syncHangingAfter(): void {
    const want = new Map<string, PipelineLabels>();
    for (const l of this.topicSeries.values()) want.set(`${l.pipeline}\u0000${l.engine}\u0000${l.job_id}`, { pipeline: l.pipeline, engine: l.engine, job_id: l.job_id });
    for (const [k, l] of this.hangingAfterSeries) if (!want.has(k)) this.metrics.hangingAfter.remove(l);
    for (const [k, l] of want) {
      if (!this.hangingAfterSeries.has(k)) this.metrics.hangingAfter.set(l, this.opts.hangingAfterMs / 1000);
      else want.set(k, this.hangingAfterSeries.get(k)!);
    }
    this.hangingAfterSeries.clear();
    for (const [k, l] of want) this.hangingAfterSeries.set(k, l);
  }

  async start(): Promise<void> {
    this.reader = new EndOffsetReader(this.kafka);
    this.logger.info({ topics: this.opts.topics, hangingAfterMs: this.opts.hangingAfterMs }, 'LSO monitor started');
    this.stopped = false;
    this.periodic.start();
  }

  /**
   * Another engine's service claims some of the watched topics (the Flink service its jobs' sink
   * topics, src/flink/flink-service.ts): their series carry its labels, and it gets every reading
   * of them. Before start().
   */
  claim(topics: ReadonlySet<string>, hooks: { topicLabels: (topic: string) => PipelineLabels | undefined; onReading: (topic: string, ends: PartitionEnds[], now: number) => void }): void {
    this.opts = {
      ...this.opts,
      topicLabels: (t) => (topics.has(t) ? hooks.topicLabels(t) : undefined),
      onReading: hooks.onReading,
    };
    // The series the constructor labelled as the own pipeline's move to the claimant's labels now.
    for (const t of this.opts.topics) if (topics.has(t)) this.labelsOf(t);
  }

  /** One reading of every watched topic. */
  async poll(): Promise<void> {
    for (const topic of this.opts.topics) {
      if (this.stopped || !this.reader) return;
      try {
        const ends = await this.reader.read(topic);
        this.apply(topic, ends, Date.now());
        if (this.failing.delete(topic)) this.logger.info({ topic }, 'LSO reading works again');
      } catch (err) {
        const labels = this.labelsOf(topic);
        this.failed('topic', failureKind(err));
        this.tracker.forget(topic);
        this.dropSeries(topic, new Map());
        this.metrics.hanging.remove(labels);
        const msg = errorMessage(err);
        if (this.failing.get(topic) !== msg) this.logger.warn({ topic, err: msg }, 'cannot read high watermarks and last stable offsets');
        this.failing.set(topic, msg);
        // A broken connection is rebuilt for the next reading.
        await this.reader?.close();
        if (!this.stopped) this.reader = new EndOffsetReader(this.kafka);
      }
    }
    if (this.failing.size) await this.permissions.failed([...this.failing.values()].join('; '));
    else this.permissions.succeeded();
    this.polled = true;
  }

  /**
   * One reading of a topic (its partitions' high watermarks and last stable offsets, taken at `at`)
   * applied to the tracker and the metrics, under the labels of the topic's pipeline: what poll()
   * does with each reading it takes (tests feed it recorded readings).
   */
  apply(topic: string, ends: PartitionEnds[], at: number): void {
    const labels = this.labelsOf(topic);
    const states = this.tracker.update(topic, ends, at);
    this.opts.onReading?.(topic, ends, at);
    const before = this.partitions.get(topic);
    const now = new Map<number, PartitionLabels>();
    let hanging = 0;
    for (const s of states) {
      const pl = before?.get(s.partition) ?? { ...labels, partition: String(s.partition) };
      now.set(s.partition, pl);
      this.metrics.lag.set(pl, s.lag);
      this.metrics.stuck.set(pl, s.stuckMs / 1000);
      this.metrics.openAge.set(pl, s.openAgeMs / 1000);
      if (s.hanging) hanging++;
    }
    this.reportTransitions(states);
    this.metrics.hanging.set(labels, hanging);
    this.dropSeries(topic, now);
  }

  private reportTransitions(states: LsoState[]): void {
    for (const s of states) {
      if (s.hanging && !s.wasHanging) {
        this.logger.warn(
          { topic: s.topic, partition: s.partition, lagRecords: s.lag, stuckSeconds: Math.round(s.stuckMs / 1000) },
          'hanging transaction: the last stable offset has not moved for longer than lsoMonitor.hangingAfter; read_committed consumers of this partition are frozen (find it with kafka-transactions.sh find-hanging)',
        );
      } else if (!s.hanging && s.wasHanging) {
        this.logger.info({ topic: s.topic, partition: s.partition }, 'hanging transaction cleared: the last stable offset moves again');
      }
    }
  }

  private dropSeries(topic: string, now: Map<number, PartitionLabels>): void {
    for (const [p, pl] of this.partitions.get(topic) ?? []) {
      if (now.has(p)) continue;
      this.metrics.lag.remove(pl);
      this.metrics.stuck.remove(pl);
      this.metrics.openAge.remove(pl);
    }
    this.partitions.set(topic, now);
  }

  ready(): ServiceHealth {
    if (!this.polled) return { ready: false, detail: 'first reading of the watched topics has not finished' };
    const failing = [...this.failing.keys()];
    const missing = this.permissions.text();
    return { ready: true, detail: failing.length ? `cannot read: ${failing.join(', ')}${missing ? `; ${missing}` : ''}` : `watching ${this.opts.topics.length} topics` };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.periodic.stop();
    await this.reader?.close();
    this.reader = undefined;
  }
}

/**
 * The topics whose last stable offset is watched: lsoMonitor.topics, the own pipeline's source and
 * sink, the watched Flink jobs' sink topics (the LSO monitor's, and where the transactions service
 * also looks for an open transaction no coordinator knows).
 */
export function watchedTopics(config: Config): string[] {
  const topics = new Set(config.lsoMonitor.topics);
  if (config.pipeline.enabled) for (const t of [config.pipeline.sourceTopic, config.pipeline.sinkTopic]) topics.add(t);
  if (config.flink.enabled) for (const s of config.flink.sinks) for (const t of s.topics) topics.add(t);
  return [...topics];
}

export const lsoMonitorService = defineService({
  name: 'lso-monitor',
  section: 'lsoMonitor',
  enabled: (config) => config.lsoMonitor.enabled && watchedTopics(config).length > 0,
  // A leader that stopped answering (paused) holds a reading for its whole request timeout; the
  // monitor should rather miss one reading and read the partitions' new leaders at the next.
  // Another engine's topics are claimed by its service, built after this one (the Flink service: claim()).
  create: ({ config, ctx, kafka }) => ({
    service: new LsoMonitorService(
      kafka({ requestTimeout: periodicRequestTimeout(config.kafka.requestTimeout, config.lsoMonitor.interval) }, { retries: 1 }),
      { pipeline: config.pipeline.name, topics: watchedTopics(config), intervalMs: config.lsoMonitor.interval, hangingAfterMs: config.lsoMonitor.hangingAfter },
      ctx,
    ),
  }),
});
