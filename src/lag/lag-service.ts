// The lag service: on a timer (never inside a scrape), lists the consumer groups `lag.groups`
// selects, reads their state and committed offsets, reads the high watermark and last stable
// offset of every partition they have committed to in one batch (one ListOffsets per broker and
// isolation level), and sets lag in records (to the LSO and to the HW), lag in seconds and the
// stuck clock per group and partition. Groups, topics and partitions that vanish lose their series.
import type { Kafka } from 'kafkajs';
import type { Logger } from '../log.js';
import type { Service, ServiceContext, ServiceHealth } from '../service.js';
import type { Config, LagConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { Periodic } from '../runtime/periodic.js';
import { every, failures, type FailureKind } from '../runtime/runs.js';
import { GROUP_STATES, lagMetrics, type LagMetrics } from '../metrics/lag.js';
import { flat } from '../metrics/series-gauge.js';
import type { PipelineLabels } from '../metrics/checkpoint-stats.js';
import { refusedGroups } from '../kafka/group-access.js';
import { ClusterMetadataReader } from '../kafka/cluster-metadata.js';
import { EndOffsetReader, probeKey, type FirstRecord, type PartitionEnds, type ProbeRequest } from '../kafka/offsets.js';
import { LagCalculator, type PartitionLag } from './group-lag.js';
import { exactNames, nameMatcher, selectGroups, watchedTopic, type NameMatcher } from './selection.js';
import type { NeededPermission, PermissionWatch } from '../kafka/permissions.js';
import { failureKind, permissionWatch } from '../kafka/permission-probe.js';
import { defineService } from '../service.js';
import { flinkService } from '../flink/flink-service.js';
import { streamsService, watchedApplications } from '../streams/streams-service.js';

/** How often a named group missing from ListGroups is asked about again (whether it is refused or absent). */
const GROUP_ACCESS_RECHECK_MS = 60_000;

/** A committed offset this close below the LSO that stands still may sit before markers only: probed. */
const PROBE_MAX_LAG = 100;
/** At most this many partitions probed per reading (one Fetch per leader), to bound the cost. */
const PROBE_MAX_PARTITIONS = 200;

/** Which pipeline a group's lag on a topic belongs to (its series' pipeline, engine and job_id labels). */
export interface LagLabelling {
  /** The own pipeline's name (pipeline.name): the labels of every series no one else claims. */
  pipeline: string;
  /** The own pipeline's consumer group (pipeline.groupId) when it runs: its lag is the pipeline's. */
  groupId?: string;
  /** The labels of a topic another engine owns (a Flink job's source or sink topic); undefined: none. */
  topicLabels?: (topic: string) => PipelineLabels | undefined;
  /** The labels of a group another engine is (a watched Kafka Streams application's group); undefined: none. */
  groupLabels?: (group: string) => PipelineLabels | undefined;
  /** Groups read besides lag.groups (the Streams applications the Streams service discovered). */
  alsoGroups?: (group: string) => boolean;
}

/**
 * The pipeline labels of a group's lag on a topic: the own pipeline's group is the own pipeline's,
 * a watched Kafka Streams application's group the application's, a group on a topic a Flink job
 * reads or writes is that job's, any other the own pipeline's
 * (as the LSO monitor labels lsoMonitor.topics).
 */
export function lagLabels(l: LagLabelling, own: PipelineLabels, group: string, topic: string): PipelineLabels {
  if (l.groupId !== undefined && group === l.groupId) return own;
  return l.groupLabels?.(group) ?? l.topicLabels?.(topic) ?? own;
}

type PartitionSeries = PipelineLabels & { group: string; topic: string; partition: string };

/** What one reading found, for logs, readiness and the benchmark. */
export interface LagReading {
  groups: number;
  partitions: number;
  durationMs: number;
  /** Topics lag.topics names by name that the topic listing lacks: absent, or hidden for want of Describe. */
  hiddenTopics: string[];
}

export class LagService implements Service {
  readonly name = 'lag';
  private readonly logger: Logger;
  private readonly metrics: LagMetrics;
  private readonly calculator = new LagCalculator();
  private readonly groupMatch: NameMatcher;
  private readonly topicMatch: NameMatcher | null;
  private metadata: ClusterMetadataReader | undefined;
  private reader: EndOffsetReader | undefined;
  private readerTopics = new Set<string>();
  /** Readings start every interval (a reading longer than the interval delays the next one, never overlaps it). */
  private readonly periodic: Periodic;
  /** Counts a failure inside a reading (eos_service_errors_total): the whole reading, or one group. */
  private readonly failed: (what: 'reading' | 'group', kind?: FailureKind) => void;
  private last: LagReading | undefined;
  private failure: string | undefined;
  /** Label sets with series, to remove those that disappear. */
  private partitionSeries = new Map<string, PartitionSeries>();
  private readonly ownLabels: PipelineLabels;
  private groupSeries = new Set<string>();
  /** Probe answers by partition and committed offset, valid while the LSO they were asked for stands. */
  private probes = new Map<string, { lso: bigint; first: FirstRecord }>();
  /** Names the ACLs the brokers refuse after a failed reading or a named topic the listing lacks. */
  private readonly permissions: PermissionWatch;

  constructor(
    private readonly kafka: Kafka,
    private readonly config: LagConfig,
    ctx: ServiceContext,
    private readonly labelling: LagLabelling = { pipeline: 'default' },
  ) {
    this.ownLabels = { pipeline: labelling.pipeline, engine: 'eoswatch', job_id: '' };
    this.logger = ctx.logger;
    this.metrics = lagMetrics(ctx.registry);
    this.groupMatch = nameMatcher(config.groups);
    this.topicMatch = config.topics.length ? nameMatcher(config.topics) : null;
    const needed = (): NeededPermission[] => [
      ...exactNames(config.groups).map((name): NeededPermission => ({ resource: 'group', name, prefixed: false, operation: 'Describe' })),
      ...exactNames(config.topics).map((name): NeededPermission => ({ resource: 'topic', name, prefixed: false, operation: 'Describe' })),
    ];
    this.permissions = permissionWatch({ service: this.name, kafka, needed, registry: ctx.registry, logger: ctx.logger });
    // poll() reports its own failures (log, eos_service_errors_total, readiness).
    const run = { registry: ctx.registry, service: this.name, task: 'reading' };
    this.failed = failures(run, ['reading', 'group']);
    this.periodic = every(() => this.poll().then(() => undefined), { ...run, name: 'the lag reading', intervalMs: config.interval });
  }

  async start(): Promise<void> {
    this.metadata = new ClusterMetadataReader(this.kafka);
    this.logger.info({ groups: this.config.groups, topics: this.config.topics, intervalMs: this.config.interval }, 'lag service started');
    this.periodic.start();
  }

  /** One reading of every selected group; resolves with what it covered, rejects when the reading failed. */
  async poll(): Promise<LagReading> {
    const t0 = performance.now();
    try {
      const reading = await this.read();
      this.last = { ...reading, durationMs: performance.now() - t0 };
      this.metrics.pollDuration.set(this.last.durationMs / 1000);
      this.logger.debug(this.last, 'lag read');
      if (this.failure !== undefined) this.logger.info('lag reading works again');
      this.failure = undefined;
      // A topic lag.topics names that the listing lacks is absent or hidden (no Describe): ask.
      // A group it may not describe (this.denied) is asked about too, so that the one family of
      // eos_permission_missing names it beside eos_lag_permission_denied.
      const refusals = [...(reading.hiddenTopics.length ? [`unknown topic: ${reading.hiddenTopics.join(', ')}`] : []), ...(this.denied.size ? ['Not authorized to access group'] : [])];
      if (refusals.length) await this.permissions.failed(refusals.join('; '));
      else this.permissions.succeeded();
      return this.last;
    } catch (err) {
      this.failed('reading', failureKind(err));
      const msg = errorMessage(err);
      if (this.failure !== msg) this.logger.warn({ err: msg }, 'cannot read consumer lag');
      this.failure = msg;
      await this.permissions.failed(err);
      // Stale lag is worse than none: the series go until the next reading succeeds.
      this.dropSeries(new Map(), new Set());
      // A broken connection is rebuilt for the next reading.
      await this.closeReader();
      throw err;
    }
  }

  private async read(): Promise<Omit<LagReading, 'durationMs'>> {
    // The brokers and topic names without kafkajs' objects for every partition of the cluster
    // (its listGroups and listTopics each decode the whole cluster's metadata); the groups'
    // offsets and states from their kept coordinators (src/kafka/group-reader.ts).
    const metadata = this.metadata!;
    const cluster = await metadata.all();
    const listed = (await metadata.listGroups(cluster.brokers)).filter((g) => g.protocolType === 'consumer' || g.protocolType === '').map((g) => g.groupId);
    const also = this.labelling.alsoGroups;
    const groups = selectGroups(listed, also ? (g) => this.groupMatch(g) || also(g) : this.groupMatch);
    metadata.groups.coordinators.retain(new Set(groups));
    const described = groups.length ? await metadata.groups.describe(groups) : { groups: [], failed: [] };
    for (const f of described.failed) {
      // A group that cannot be described (coordinator moving) loses its state series this reading.
      this.failed('group', failureKind(f.error));
      this.logger.debug({ group: f.groupId, err: errorMessage(f.error) }, 'cannot describe the group');
    }
    const existing = new Set(cluster.topics);
    // Kafka's listings leave out what the principal may not describe, without an error: a named
    // group missing from ListGroups is asked for by name, which tells a refusal from an absence.
    const denied = new Set<string>();
    const listedSet = new Set(listed);
    for (const g of await this.refusedGroups(exactNames(this.config.groups).filter((g) => !listedSet.has(g)))) denied.add(`group:${g}`);

    // Committed offsets: one OffsetFetch per group, to its coordinator.
    const committed = new Map<string, Map<string, Map<number, bigint>>>();
    const unread = new Set<string>();
    await Promise.all(
      groups.map(async (group) => {
        try {
          // A topic gone since the group committed to it (deleted) has no ends to measure to. A
          // topic eoswatch may not describe never shows up here: OffsetFetch of all a group's
          // topics leaves it out without an error.
          const byTopic = await metadata.groups.offsets(group, (t) => existing.has(t) && watchedTopic(t, this.topicMatch));
          for (const [t, parts] of byTopic) {
            for (const [p, o] of parts) if (o < 0n) parts.delete(p);
            if (!parts.size) byTopic.delete(t);
          }
          committed.set(group, byTopic);
        } catch (err) {
          // One group that cannot be read (coordinator moving) costs only its own series.
          this.failed('group', failureKind(err));
          unread.add(group);
          this.logger.debug({ group, err: errorMessage(err) }, 'cannot read committed offsets of the group');
        }
      }),
    );

    const topics = new Set<string>();
    for (const byTopic of committed.values()) for (const t of byTopic.keys()) topics.add(t);
    const ends = topics.size ? await this.readEnds([...topics]) : new Map<string, PartitionEnds[]>();
    const now = Date.now();
    this.calculator.observe(ends, now);

    await this.probeStandingOffsets(committed, ends);
    const lsoOf = (topic: string, partition: number) => ends.get(topic)?.find((e) => e.partition === partition)?.lso;
    const nothingToRead = (topic: string, partition: number, c: bigint) => {
      const p = this.probes.get(`${probeKey(topic, partition)}\u0000${c}`);
      return p !== undefined && p.first.kind === 'none' && p.lso === lsoOf(topic, partition);
    };
    const lags: PartitionLag[] = [];
    for (const [group, byTopic] of committed) lags.push(...this.calculator.lag(group, byTopic, ends, now, nothingToRead));
    for (const group of this.groupSeries) if (!committed.has(group) && !unread.has(group)) this.calculator.forgetGroup(group);
    this.publish(lags, described.groups, committed);
    this.publishDenied(denied);
    return { groups: committed.size, partitions: lags.length, hiddenTopics: exactNames(this.config.topics).filter((t) => !existing.has(t)) };
  }

  /** What the last reading was refused: eos_lag_permission_denied, a warning when it changes, the readiness detail. */
  private publishDenied(denied: Set<string>): void {
    for (const r of this.denied) if (!denied.has(r)) this.metrics.denied.remove({ resource: r });
    for (const r of denied) this.metrics.denied.set({ resource: r }, 1);
    const now = [...denied].sort();
    if (now.join('\n') !== [...this.denied].sort().join('\n')) {
      if (now.length) this.logger.warn({ denied: now }, 'the lag service may not describe these (no Describe ACL): their lag is not read');
      else this.logger.info('the lag service may describe every group and topic it watches again');
    }
    this.denied = new Set(now);
  }

  private denied = new Set<string>();
  /** Named groups missing from ListGroups, and when each was last asked for (at most once a minute). */
  private unlisted = new Map<string, { atMs: number; refused: boolean }>();

  /** The named groups the listing lacked that the principal may not describe (asked again at most once a minute each). */
  private async refusedGroups(groups: string[]): Promise<string[]> {
    const now = Date.now();
    const ask = groups.filter((g) => (this.unlisted.get(g)?.atMs ?? -Infinity) <= now - GROUP_ACCESS_RECHECK_MS);
    if (ask.length) {
      try {
        const refused = await refusedGroups(this.kafka, ask);
        for (const g of ask) this.unlisted.set(g, { atMs: now, refused: refused.has(g) });
      } catch (err) {
        this.logger.debug({ err: errorMessage(err), groups: ask }, 'cannot ask whether the unlisted groups may be described');
      }
    }
    for (const g of this.unlisted.keys()) if (!groups.includes(g)) this.unlisted.delete(g);
    return groups.filter((g) => this.unlisted.get(g)?.refused);
  }

  /**
   * A committed offset that has not moved and sits a little below the LSO may be followed by
   * markers or aborted records only. One read_committed Fetch per leader tells; the answer is kept
   * while the committed offset and the LSO stay where they are, so an idle group costs one probe.
   */
  private async probeStandingOffsets(committed: Map<string, Map<string, Map<number, bigint>>>, ends: Map<string, PartitionEnds[]>): Promise<void> {
    const lsoOf = new Map<string, bigint>();
    for (const [topic, parts] of ends) for (const e of parts) lsoOf.set(probeKey(topic, e.partition), e.lso);
    const wanted = new Map<string, ProbeRequest>();
    for (const [group, byTopic] of committed) {
      for (const [topic, offsets] of byTopic) {
        for (const [partition, c] of offsets) {
          const k = probeKey(topic, partition);
          const lso = lsoOf.get(k);
          if (lso === undefined || lso <= c || lso - c > BigInt(PROBE_MAX_LAG)) continue;
          if (!this.calculator.unmoved(group, topic, partition, c)) continue;
          if (this.probes.get(`${k}\u0000${c}`)?.lso === lso) continue;
          if (wanted.size < PROBE_MAX_PARTITIONS && !wanted.has(k)) wanted.set(k, { topic, partition, from: c, lso });
        }
      }
    }
    // Answers for an LSO that moved on are stale.
    for (const [k, p] of this.probes) if (lsoOf.get(k.slice(0, k.lastIndexOf('\u0000'))) !== p.lso) this.probes.delete(k);
    if (!wanted.size || !this.reader) return;
    try {
      const answers = await this.reader.probe([...wanted.values()]);
      for (const [k, req] of wanted) this.probes.set(`${k}\u0000${req.from}`, { lso: req.lso, first: answers.get(k) ?? { kind: 'unknown' } });
    } catch (err) {
      // Without an answer the offsets speak for themselves: lag as counted.
      this.logger.debug({ err: errorMessage(err) }, 'cannot probe partitions behind their last stable offset');
    }
  }

  private async readEnds(topics: string[]): Promise<Map<string, PartitionEnds[]>> {
    // kafkajs' cluster keeps every topic it was asked about in its metadata requests; a topic that
    // left the watched set (deleted) would fail them, so the reader starts afresh.
    if (!this.reader || [...this.readerTopics].some((t) => !topics.includes(t))) {
      await this.closeReader();
      this.reader = new EndOffsetReader(this.kafka);
      this.readerTopics = new Set();
    }
    for (const t of topics) this.readerTopics.add(t);
    return this.reader.readMany(topics);
  }

  /**
   * One reading's lags, group states and members applied to the metrics, each partition series under
   * the labels of its pipeline (lagLabels): what a reading does once it has read the offsets (tests
   * feed it recorded readings). `committed`: the groups read, by id.
   */
  publish(lags: PartitionLag[], descriptions: { groupId: string; state: string; members: number }[], committed: Map<string, unknown>): void {
    const m = this.metrics;
    const series = new Map<string, PartitionSeries>();
    for (const l of lags) {
      const p = lagLabels(this.labelling, this.ownLabels, l.group, l.topic);
      // The pipeline is part of the key: a series whose pipeline changed (a resubmitted Flink job) goes.
      const key = `${p.pipeline}\u0000${p.engine}\u0000${p.job_id}\u0000${l.group}\u0000${l.topic}\u0000${l.partition}`;
      // The same label object on every reading: /metrics formats its labels once (src/metrics/render.ts).
      const labels = this.partitionSeries.get(key) ?? { pipeline: p.pipeline, engine: p.engine, job_id: p.job_id, group: l.group, topic: l.topic, partition: String(l.partition) };
      // The key is kept until the next reading: one piece, not the concatenation's tree (a Map
      // keeps the tree of a key it holds).
      series.set(flat(key), labels);
      m.committed.set(labels, Number(l.committed));
      m.lagRecords.set(labels, l.lsoLag);
      m.hwLagRecords.set(labels, l.hwLag);
      m.lagSeconds.set(labels, l.lagSeconds);
      m.stuck.set(labels, l.stuckSeconds);
    }
    const groups = new Set<string>();
    for (const d of descriptions) {
      if (!committed.has(d.groupId)) continue;
      groups.add(d.groupId);
      const state = GROUP_STATES.includes(d.state) ? d.state : 'Unknown';
      for (const s of GROUP_STATES) m.state.set({ group: d.groupId, state: s }, s === state ? 1 : 0);
      m.members.set({ group: d.groupId }, d.members);
    }
    m.groups.set(groups.size);
    this.dropSeries(series, groups);
  }

  private dropSeries(series: Map<string, PartitionSeries>, groups: Set<string>): void {
    const m = this.metrics;
    for (const [k, labels] of this.partitionSeries) {
      if (series.has(k)) continue;
      for (const g of [m.committed, m.lagRecords, m.hwLagRecords, m.lagSeconds, m.stuck]) g.remove(labels);
    }
    for (const group of this.groupSeries) {
      if (groups.has(group)) continue;
      for (const s of GROUP_STATES) m.state.remove({ group, state: s });
      m.members.remove({ group });
    }
    this.partitionSeries = series;
    this.groupSeries = groups;
    if (!groups.size) m.groups.set(0);
  }

  private async closeReader(): Promise<void> {
    const r = this.reader;
    this.reader = undefined;
    await r?.close();
  }

  /** The last successful reading, if any. */
  get lastReading(): LagReading | undefined {
    return this.last;
  }

  ready(): ServiceHealth {
    if (!this.last) return { ready: false, detail: this.failure ? `cannot read consumer lag: ${this.failure}` : 'first lag reading has not finished' };
    if (this.failure !== undefined) return { ready: true, detail: `last lag reading failed: ${this.failure}` };
    const missing = this.permissions.text();
    const denied = this.denied.size ? `; permission missing: Describe on ${[...this.denied].sort().join(', ')}` : missing ? `; ${missing}` : '';
    return { ready: true, detail: `${this.last.groups} groups, ${this.last.partitions} partitions${denied}` };
  }

  async stop(): Promise<void> {
    await this.periodic.stop();
    await this.closeReader();
    await this.metadata?.disconnect();
    this.metadata = undefined;
  }
}

/**
 * Kafka Streams applications' groups are the lag service's too (src/streams/): with lag.enabled
 * it also covers them, without it only them, under the application's labels.
 */
export const lagService = defineService({
  name: 'lag',
  section: 'lag',
  enabled: (config) => config.lag.enabled || watchedApplications(config).length > 0 || discovering(config),
  create: ({ config, ctx, kafka, peers }) => {
    const flink = peers.get(flinkService);
    // Built after the Streams service: its applications, named or discovered, are its groups.
    const streams = peers.get(streamsService);
    // A group's lag carries the labels of its pipeline: the own pipeline's group, a Streams application's group, a Flink job's source or sink topic.
    const labelling = {
      pipeline: config.pipeline.name,
      ...(config.pipeline.enabled ? { groupId: config.pipeline.groupId } : {}),
      ...(flink ? { topicLabels: (t: string) => flink.topicLabels(t) } : {}),
      ...(streams ? { groupLabels: (g: string) => streams.labelsOf(g), alsoGroups: (g: string) => streams.watches(g) } : {}),
    };
    const named = watchedApplications(config).map((a) => a.applicationId);
    return { service: new LagService(kafka({}, { retries: 1 }), lagCovering(config.lag, named, config.streams.interval, discovering(config)), ctx, labelling) };
  },
});

const discovering = (config: Config) => config.streams.enabled && config.streams.discover;

/**
 * The lag service's configuration with the watched Streams applications' groups added: lag.groups
 * plus those groups when lag is enabled; only those groups (every topic they commit to, read every
 * streams.interval) when it is not, the discovered ones added as they are found (alsoGroups).
 */
export function lagCovering(lag: LagConfig, streamsGroups: string[], streamsIntervalMs: number, discover = false): LagConfig {
  if (!streamsGroups.length && !discover) return lag;
  if (lag.enabled) return { ...lag, groups: [...new Set([...lag.groups, ...streamsGroups])] };
  return { enabled: true, groups: streamsGroups, topics: [], interval: streamsIntervalMs };
}
