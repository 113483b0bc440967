// The Streams service: on its own timer (never inside a scrape), describes the consumer group of
// every watched Kafka Streams application (streams.applications, by application.id; one
// DescribeGroups per coordinator), follows its rebalances (rebalance.ts) and sets
// eos_pipeline_up{engine="streams"} and the eos_streams_* metrics. The group's state, members and
// lag to the last stable offset are the lag service's (its definition, src/lag/lag-service.ts lagService, has it cover these
// groups), the application's transactions the transactions service's (grouped under the
// application.id by src/coordinator/applications.ts): neither is read again here. /streams shows
// each application's group and members (client ids carry Streams' process UUID).
import type { Router } from 'express';
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from '../log.js';
import type { Service, ServiceContext, ServiceHealth } from '../service.js';
import type { Config, StreamsConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import { pipelineUpMetric } from '../metrics/pipeline.js';
import { streamsMetrics, type StreamsMetrics } from '../metrics/streams.js';
import type { PipelineLabels } from '../metrics/checkpoint-stats.js';
import { RebalanceTracker, type RebalanceEvent } from './rebalance.js';
import type { Periodic } from '../runtime/periodic.js';
import { every, failures, type FailureKind } from '../runtime/runs.js';
import { defineService, jsonReportRouter } from '../service.js';
import { periodicRequestTimeout } from '../kafka/client.js';
import type { PermissionWatch } from '../kafka/permissions.js';
import { failureKind, permissionWatch } from '../kafka/permission-probe.js';

/** The pipeline labels of a watched application's series. */
export function streamsLabels(app: { applicationId: string; name?: string }): PipelineLabels {
  return { pipeline: app.name ?? app.applicationId, engine: 'streams', job_id: '' };
}

export interface StreamsMemberView {
  memberId: string;
  clientId: string;
  clientHost: string;
}

export interface StreamsApplicationView {
  applicationId: string;
  pipeline: string;
  state: string;
  up: boolean;
  members: StreamsMemberView[];
  /** ISO time the rebalance in progress was first seen; null when none is. */
  rebalancingSince: string | null;
  rebalances: number;
  lastRebalance: (RebalanceEvent & { at: string }) | null;
}

export interface StreamsReport {
  at: string;
  applications: StreamsApplicationView[];
  /** The last reading failed (why): the applications are as the reading before saw them. */
  failure?: string;
}

interface Watched {
  applicationId: string;
  labels: PipelineLabels;
  tracker: RebalanceTracker;
  rebalances: number;
  lastRebalance: (RebalanceEvent & { at: string }) | null;
}

/** A group as kafkajs' describeGroups returns it (the fields read here). */
export interface DescribedGroup {
  groupId: string;
  state: string;
  /** The chosen assignor of a classic consumer group: "stream" for Kafka Streams. */
  protocol?: string;
  members: { memberId: string; clientId: string; clientHost: string }[];
}

export class StreamsService implements Service {
  readonly name = 'streams';
  private readonly logger: Logger;
  private readonly metrics: StreamsMetrics;
  private readonly up: ReturnType<typeof pipelineUpMetric>;
  private readonly watched: Watched[];
  /** Groups described for discovery that are not Streams applications, and those seen without members (asked again later). */
  private readonly notStreams = new Set<string>();
  private readonly emptyGroups = new Set<string>();
  private readingsSinceEmptyAsked = 0;
  private discoveryFailure: string | undefined;
  private admin: Admin | undefined;
  /** The readings (src/runtime/runs.ts measures them: eos_service_run_*{service="streams",task="reading"}). */
  private readonly periodic: Periodic;
  /** Counts a failed reading of the applications' groups (eos_service_errors_total). */
  private readonly failed: (what: 'reading', kind?: FailureKind) => void;
  private failure: string | undefined;
  private report: StreamsReport | undefined;

  /** Names the ACL (Describe on an application's group) the brokers refuse after a failed reading. */
  private readonly permissions: PermissionWatch;

  constructor(
    private readonly kafka: Kafka,
    private readonly config: StreamsConfig,
    ctx: ServiceContext,
    private readonly now: () => number = Date.now,
  ) {
    this.logger = ctx.logger;
    this.metrics = streamsMetrics(ctx.registry);
    // eos_pipeline_up alone: the other pipeline families (checkpoints, commit latency) do not describe a Streams app.
    this.up = pipelineUpMetric(ctx.registry);
    this.watched = config.applications.map((a) => watchedOf(a));
    // A refused DescribeGroups: the brokers say which application's group it may not describe.
    this.permissions = permissionWatch({ service: this.name, kafka, needed: () => this.watched.map((w) => ({ resource: 'group', name: w.applicationId, prefixed: false, operation: 'Describe' })), registry: ctx.registry, logger: ctx.logger });
    const run = { registry: ctx.registry, service: this.name, task: 'reading' };
    this.failed = failures(run, ['reading']);
    this.periodic = every(() => this.poll().then(() => undefined), { ...run, name: 'streams.interval', intervalMs: config.interval });
  }

  async start(): Promise<void> {
    this.admin = this.kafka.admin();
    this.logger.info({ applications: this.watched.map((w) => w.applicationId), intervalMs: this.config.interval }, 'streams service started');
    this.periodic.start();
  }

  /** One reading of every watched application's group. */
  async poll(): Promise<StreamsReport> {
    const t0 = performance.now();
    try {
      const admin = this.admin!;
      await admin.connect();
      // A failed discovery (a broker that did not answer ListGroups) costs the new applications only.
      if (this.config.discover) {
        await this.discover(admin).then(
          () => {
            if (this.discoveryFailure !== undefined) this.logger.info('discovering Streams applications works again');
            this.discoveryFailure = undefined;
          },
          (err: unknown) => {
            const msg = errorMessage(err);
            if (this.discoveryFailure !== msg) this.logger.warn({ err: msg }, 'cannot discover Streams applications this reading: the watched ones are read as before');
            this.discoveryFailure = msg;
          },
        );
      }
      const { groups } = this.watched.length ? await admin.describeGroups(this.watched.map((w) => w.applicationId)) : { groups: [] };
      const report = this.apply(groups, this.now());
      this.metrics.pollDuration.set((performance.now() - t0) / 1000);
      if (this.failure !== undefined) this.logger.info('reading the Streams applications\' groups works again');
      this.failure = undefined;
      this.permissions.succeeded();
      this.report = report;
      return report;
    } catch (err) {
      this.failed('reading', failureKind(err));
      const missing = await this.permissions.failed(err);
      const msg = `${errorMessage(err)}${missing ? `; ${missing}` : ''}`;
      if (this.failure !== msg) this.logger.warn({ err: msg }, 'cannot describe the Streams applications\' groups');
      this.failure = msg;
      if (this.report) this.report = { ...this.report, at: new Date(this.now()).toISOString(), failure: msg };
      // A health that is not known is not exported as the last one seen.
      for (const w of this.watched) {
        this.up.remove(w.labels);
        this.metrics.rebalancing.remove({ application: w.applicationId });
      }
      throw err;
    }
  }

  /**
   * Streams applications of the cluster not watched yet: the consumer groups listed, those not
   * classified yet described (in one DescribeGroups per coordinator), and each whose members use
   * Streams' assignor watched from now on. A group without members (Empty, protocol unknown) is
   * asked again every DISCOVER_EMPTY_EVERY readings; other groups are classified once.
   */
  private async discover(admin: Admin): Promise<void> {
    const askEmpty = ++this.readingsSinceEmptyAsked >= DISCOVER_EMPTY_EVERY;
    if (askEmpty) this.readingsSinceEmptyAsked = 0;
    const listed = new Set((await admin.listGroups()).groups.filter((g) => g.protocolType === 'consumer').map((g) => g.groupId));
    // Groups gone from the cluster are forgotten (a group of that name later is classified anew);
    // so is a discovered application whose group is gone (deleted, its offsets expired): its series
    // go with it. One whose instances all stopped keeps its group, and is down, as a named one.
    for (const set of [this.notStreams, this.emptyGroups]) for (const g of set) if (!listed.has(g)) set.delete(g);
    const named = new Set(this.config.applications.map((a) => a.applicationId));
    for (const w of [...this.watched]) {
      if (named.has(w.applicationId) || listed.has(w.applicationId)) continue;
      this.watched.splice(this.watched.indexOf(w), 1);
      this.up.remove(w.labels);
      this.metrics.rebalancing.remove({ application: w.applicationId });
      this.logger.info({ applicationId: w.applicationId }, 'discovered Streams application forgotten: its group is gone from the cluster');
    }
    const known = new Set(this.watched.map((w) => w.applicationId));
    const unknown = [...listed].filter((g) => !known.has(g) && !this.notStreams.has(g) && (askEmpty || !this.emptyGroups.has(g))).sort();
    if (!unknown.length) return;
    const { groups } = await admin.describeGroups(unknown.slice(0, DISCOVER_BATCH));
    const { found, notStreams, later } = classifyGroups(groups);
    for (const g of found) this.emptyGroups.delete(g);
    for (const g of notStreams) {
      this.notStreams.add(g);
      this.emptyGroups.delete(g);
    }
    for (const g of later) this.emptyGroups.add(g);
    for (const applicationId of found) {
      if (this.watched.length >= MAX_DISCOVERED + this.config.applications.length) {
        this.logger.warn({ applicationId, watched: this.watched.length }, `Streams application found but not watched: at most ${MAX_DISCOVERED} are discovered (name it under streams.applications)`);
        this.notStreams.add(applicationId);
        continue;
      }
      this.watched.push(watchedOf({ applicationId }));
      this.logger.info({ applicationId }, 'Streams application discovered: watched from now on');
    }
  }

  /** Whether a group is a watched application's (named or discovered). */
  watches(groupId: string): boolean {
    return this.watched.some((w) => w.applicationId === groupId);
  }

  /** A watched application group's series labels (its pipeline, engine="streams"); undefined for any other group. */
  labelsOf(groupId: string): PipelineLabels | undefined {
    return this.watched.find((w) => w.applicationId === groupId)?.labels;
  }

  /** One reading applied to the trackers and metrics (tests feed it recorded readings). A group DescribeGroups did not return is Dead. */
  apply(groups: readonly DescribedGroup[], atMs: number): StreamsReport {
    const byId = new Map(groups.map((g) => [g.groupId, g]));
    const applications: StreamsApplicationView[] = [];
    for (const w of this.watched) {
      const g = byId.get(w.applicationId);
      const members = g?.members ?? [];
      const { events, view } = w.tracker.observe({ state: g?.state ?? 'Dead', members: members.map((m) => m.memberId), atMs });
      const application = w.applicationId;
      for (const e of events) {
        w.rebalances++;
        w.lastRebalance = { ...e, at: new Date(e.endedAtMs).toISOString() };
        this.metrics.rebalances.inc({ application });
        if (e.kind === 'completed') this.metrics.rebalanceDuration.observe({ application }, e.durationMs / 1000);
        this.logger.info({ application, ...e }, e.kind === 'completed' ? 'Streams application rebalanced' : 'Streams application\'s members changed between two readings');
      }
      this.metrics.rebalancing.set({ application }, view.rebalancingSinceMs === null ? 0 : (atMs - view.rebalancingSinceMs) / 1000);
      this.up.set(w.labels, view.up ? 1 : 0);
      applications.push({
        applicationId: application,
        pipeline: w.labels.pipeline,
        state: view.state,
        up: view.up,
        members: members.map((m) => ({ memberId: m.memberId, clientId: m.clientId, clientHost: m.clientHost })),
        rebalancingSince: view.rebalancingSinceMs === null ? null : new Date(view.rebalancingSinceMs).toISOString(),
        rebalances: w.rebalances,
        lastRebalance: w.lastRebalance,
      });
    }
    return { at: new Date(atMs).toISOString(), applications };
  }

  get lastReport(): StreamsReport | undefined {
    return this.report;
  }

  router(): Router {
    return jsonReportRouter(() => this.report, () => this.failure ? `cannot describe the Streams applications' groups: ${this.failure}` : 'the first reading has not finished yet');
  }

  ready(): ServiceHealth {
    if (!this.report) return { ready: false, detail: this.failure ? `cannot describe the Streams applications' groups: ${this.failure}` : 'first reading has not finished' };
    const parts = this.report.applications.map((a) => `${a.applicationId} ${a.state} (${a.members.length} member${a.members.length === 1 ? '' : 's'})`);
    return { ready: true, detail: `${this.failure ? `last reading failed: ${this.failure}; ` : ''}${parts.join(', ')}` };
  }

  async stop(): Promise<void> {
    await this.periodic.stop();
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = undefined;
  }
}

/** Groups described per reading to find Streams applications; at most this many applications are discovered. */
const DISCOVER_BATCH = 100;
const MAX_DISCOVERED = 50;
/** A group seen Empty (its protocol unknown) is described again every this many readings. */
const DISCOVER_EMPTY_EVERY = 12;

function watchedOf(a: { applicationId: string; name?: string }): Watched {
  return { applicationId: a.applicationId, labels: streamsLabels(a), tracker: new RebalanceTracker(), rebalances: 0, lastRebalance: null };
}

/**
 * Described consumer groups sorted for discovery. Pure. `found`: Streams applications (members
 * using Kafka Streams' assignor, the classic protocol's chosen assignor "stream"); `notStreams`:
 * Stable groups with members and another assignor; `later`: the rest, asked again later
 * (DescribeGroups names the assignor only while a group is Stable: Empty, Dead and rebalancing
 * groups say nothing of it).
 */
export function classifyGroups(groups: readonly { groupId: string; state: string; protocol?: string; members: readonly unknown[] }[]): { found: string[]; notStreams: string[]; later: string[] } {
  const found: string[] = [];
  const notStreams: string[] = [];
  const later: string[] = [];
  for (const g of groups) {
    if (g.protocol === 'stream' && g.members.length > 0) found.push(g.groupId);
    else if (g.state === 'Stable' && g.members.length > 0) notStreams.push(g.groupId);
    else later.push(g.groupId);
  }
  return { found: found.sort(), notStreams: notStreams.sort(), later: later.sort() };
}

/** The watched Kafka Streams applications (streams.applications while streams.enabled). */
export function watchedApplications(config: Config): Config['streams']['applications'] {
  return config.streams.enabled ? config.streams.applications : [];
}

export const streamsService = defineService({
  name: 'streams',
  section: 'streams',
  enabled: (config) => watchedApplications(config).length > 0 || (config.streams.enabled && config.streams.discover),
  create: ({ config, ctx, kafka }) => {
    const service = new StreamsService(kafka({ requestTimeout: periodicRequestTimeout(config.kafka.requestTimeout, config.streams.interval) }, { retries: 1 }), config.streams, ctx);
    return { service, routes: [{ path: '/streams', description: 'the watched Kafka Streams applications: group state, members, rebalances (JSON)', router: service.router() }] };
  },
});
