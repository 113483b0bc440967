// The Flink service: polls the JobManager's REST API on a timer and feeds the shared checkpoint
// and pipeline metrics (src/metrics/checkpoint-stats.ts, src/metrics/pipeline.ts) for every
// watched job, labelled pipeline=<job name>, engine="flink", job_id, and its own (src/metrics/flink.ts).
// The rules live in src/flink/poller.ts; the reading of a job's vertices' metrics (records, the
// KafkaSink's commits) in vertex-metrics.ts; this file fetches the jobs and their checkpoints and
// applies. Nothing happens inside a scrape.
import type { FlinkConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import { CHECKPOINT_OUTCOMES, removeCheckpointSeries, type PipelineLabels } from '../metrics/checkpoint-stats.js';
import type { PartitionEnds } from '../kafka/offsets.js';
import { pipelineMetrics } from '../metrics/pipeline.js';
import type { Service, ServiceContext, ServiceHealth } from '../service.js';
import { EosError, ErrorCodes } from '../errors.js';
import {
  jobPatternProblems,
  jobUp,
  metricScopeName,
  newRestarts,
  reduceCheckpoints,
  selectJobs,
  statisticsCacheMs,
  statisticsStaleness,
} from './poller.js';
import { FlinkHttpError, FlinkRestClient } from './rest-client.js';
import type { CheckpointConfigInfo, CheckpointingStatistics, JobExceptions, JobsOverview } from './rest-types.js';
import { VisibilityTracker, type VisibilityObservation } from './visibility.js';
import { SinkCommitTracker, type SinkCommitObservation } from './sink-commits.js';
import { pollRecords, pollSink, type WatchedJob } from './vertex-metrics.js';
import type { TxnEvent } from '../coordinator/events.js';
import { flinkMetrics } from '../metrics/flink.js';
import { Periodic } from '../runtime/periodic.js';
import { measured } from '../runtime/runs.js';
import { defineService } from '../service.js';
import { lsoMonitorService } from '../kafka/lso-monitor.js';
import { transactionsService } from '../coordinator/transactions-service.js';

/** The sink topics of a job name per flink.sinks (every entry whose pattern matches the whole name). */
export function sinkTopicsOf(sinks: FlinkConfig['sinks'], jobName: string): string[] {
  return [...new Set(sinks.filter((s) => new RegExp(`^(?:${s.job})$`).test(jobName)).flatMap((s) => s.topics))];
}

/** The KafkaSink transactionalIdPrefix of a job name per flink.transactionalIdPrefixes (the first entry whose pattern matches the whole name). */
export function transactionalIdPrefixOf(entries: FlinkConfig['transactionalIdPrefixes'], jobName: string): string | undefined {
  return (entries ?? []).find((e) => new RegExp(`^(?:${e.job})$`).test(jobName))?.prefix;
}

/** The flink.sinks entries naming a topic, in order. */
function sinkEntriesOf(sinks: FlinkConfig['sinks'], topic: string): FlinkConfig['sinks'] {
  return sinks.filter((s) => s.topics.includes(topic));
}

export class FlinkService implements Service {
  readonly name = 'flink';
  private readonly client: FlinkRestClient;
  private readonly logger: Logger;
  private readonly pipeline;
  private readonly flink;
  private readonly jobs = new Map<string, WatchedJob>();
  /** One poll, measured (eos_service_run_*{service="flink",task="poll"}): failed when the REST API did not answer. */
  private readonly measuredPoll: () => Promise<boolean>;
  /** The polls after the first (which start() awaits). */
  private readonly periodic: Periodic;
  private polling: Promise<void> | null = null;
  private lastError: string | null = 'not polled yet';
  private readonly visibility = new VisibilityTracker();
  /** The REST server's checkpoint statistics cache (ms), read once per connection; undefined: not read yet. */
  private statsCacheMs: number | undefined;
  /** Labels of the flink.sinks topics before their job is seen, the same object per topic. */
  private readonly pendingTopicLabels = new Map<string, PipelineLabels>();

  constructor(
    private readonly config: FlinkConfig,
    ctx: ServiceContext,
  ) {
    const problems = [
      ...jobPatternProblems(config.jobs.names),
      ...jobPatternProblems(config.sinks.map((x) => x.job), (i) => `flink.sinks[${i}].job`),
      ...jobPatternProblems((config.transactionalIdPrefixes ?? []).map((x) => x.job), (i) => `flink.transactionalIdPrefixes[${i}].job`),
    ];
    if (problems.length) throw new EosError(ErrorCodes.CONFIG_INVALID, problems.join('; '));
    this.client = new FlinkRestClient(config);
    this.logger = ctx.logger;
    this.pipeline = pipelineMetrics(ctx.registry);
    this.flink = flinkMetrics(ctx.registry);
    this.flink.restUp.set(0);
    this.measuredPoll = measured({ registry: ctx.registry, service: this.name, task: 'poll' }, () => this.pollOnce().then(() => this.lastError === null));
    this.periodic = new Periodic(() => this.measuredPoll().then(() => undefined), { name: 'flink.pollInterval', intervalMs: config.pollInterval, firstDelayMs: config.pollInterval, onError: () => undefined });
  }

  async start(): Promise<void> {
    await this.measuredPoll();
    this.periodic.start();
  }

  async stop(): Promise<void> {
    await this.periodic.stop();
    await this.polling;
  }

  ready(): ServiceHealth {
    if (this.lastError) return { ready: false, detail: this.lastError };
    return { ready: true, detail: `${this.jobs.size} Flink job(s) watched via ${this.client.currentUrl}` };
  }

  /**
   * The pipeline labels of a Kafka topic a watched job writes (flink.sinks) or reads (its
   * KafkaSource), for the LSO and lag series: the job's pipeline, engine="flink" and job_id. A sink
   * topic whose job is not seen yet (before the first poll, the job not running) carries the
   * flink.sinks entry's job pattern as pipeline, engine="flink" and an empty job_id; a topic of no
   * watched job: undefined. The same object on every call while the answer stays the same.
   */
  topicLabels(topic: string): PipelineLabels | undefined {
    const writers = [...this.jobs.values()].filter((w) => w.sinkTopics.includes(topic));
    const readers = [...this.jobs.values()].filter((w) => w.sourceTopics.includes(metricScopeName(topic)));
    // Several runs of a job may write one topic (an old FAILED run beside its resubmit is not kept,
    // see selectJobs); a running one is preferred.
    const pick = (list: WatchedJob[]) => list.find((w) => w.up) ?? list[0];
    const w = pick(writers) ?? pick(readers);
    if (w) return w.labels;
    const entry = sinkEntriesOf(this.config.sinks, topic)[0];
    if (!entry) return undefined;
    let l = this.pendingTopicLabels.get(topic);
    if (!l) {
      l = { pipeline: entry.job, engine: 'flink', job_id: '' };
      this.pendingTopicLabels.set(topic, l);
    }
    return l;
  }

  /**
   * One reading of a topic's high watermarks and last stable offsets, handed over by the LSO monitor
   * (src/kafka/lso-monitor.ts) as it takes it: the visibility latency of the jobs writing the topic.
   */
  lsoReading(topic: string, ends: PartitionEnds[], now: number): void {
    this.observeVisibility(this.visibility.reading(topic, ends, now));
    for (const [jid, w] of this.jobs) if (w.sinkTopics.includes(topic)) this.flink.visibilityPending.set(w.labels, this.visibility.pendingSeconds(jid, now));
  }

  /** Whether a watched job's sink commits are tracked (flink.transactionalIdPrefixes): the daemon then feeds transactionEvents. */
  get tracksCommits(): boolean {
    return (this.config.transactionalIdPrefixes ?? []).length > 0;
  }

  /**
   * One pass of the transactions service over __transaction_state (its onEvents): the sink commits
   * of the jobs with a transactionalIdPrefix, observed per checkpoint into
   * eos_kafka_transaction_commit_latency_seconds. No I/O; never throws into the transactions service.
   */
  transactionEvents(events: readonly TxnEvent[], baseline: boolean): void {
    for (const w of this.jobs.values()) {
      if (!w.commits) continue;
      try {
        this.observeCommits(w, w.commits.pass(events, baseline));
        if (w.commits.pooled) {
          this.logger.warn(
            { job: w.labels.pipeline, jobId: w.labels.job_id, prefix: w.commits.prefix, reason: w.commits.pooled },
            "the job's KafkaSink names its transactions from a pool (FLIP-511 POOLING): their ids are not checkpoint ids, so its commit latency per checkpoint is not measured",
          );
          w.commits = undefined;
        }
      } catch (err) {
        this.logger.warn({ job: w.labels.pipeline, err: (err as Error).message }, 'cannot take the sink commits of a transaction log pass');
      }
    }
  }

  private observeCommits(w: WatchedJob, list: SinkCommitObservation[]): void {
    for (const o of list) {
      this.pipeline.commitLatency.observe(w.labels, o.seconds);
      this.logger.debug({ job: w.labels.pipeline, jobId: w.labels.job_id, checkpoint: o.checkpointId, transactions: o.transactions, seconds: o.seconds, from: o.from }, 'KafkaSink commit latency of a checkpoint');
      if (o.from === 'first-end-txn' && !w.skewLogged) {
        w.skewLogged = true;
        this.logger.info(
          { job: w.labels.pipeline, jobId: w.labels.job_id, checkpoint: o.checkpointId },
          "a KafkaSink transaction was committed before its checkpoint's completion by the JobManager's clock: that clock is ahead of the Kafka coordinators'; such a checkpoint's commit latency starts at its first EndTxn",
        );
      }
    }
  }

  private observeVisibility(list: VisibilityObservation[]): void {
    for (const o of list) {
      const w = this.jobs.get(o.job);
      if (w) this.flink.visibility.observe(w.labels, o.seconds);
    }
  }

  /** One poll; a poll still running when the timer fires again is not doubled. */
  pollOnce(): Promise<void> {
    if (!this.polling) {
      this.polling = this.poll()
        .catch((err: Error) => {
          if (this.lastError !== err.message) this.logger.warn({ err: err.message }, 'Flink REST poll failed');
          this.lastError = err.message;
          this.flink.restUp.set(0);
          // Another JobManager (HA) or a restarted one may run with another cache: read it again.
          this.statsCacheMs = undefined;
          for (const j of this.jobs.values()) this.pipeline.up.set(j.labels, 0);
        })
        .finally(() => {
          this.polling = null;
        });
    }
    return this.polling;
  }

  private async poll(): Promise<void> {
    const overview = await this.client.get<JobsOverview>('/jobs/overview');
    this.flink.restUp.set(1);
    if (this.statsCacheMs === undefined) this.statsCacheMs = await this.readStatsCache();
    const selected = selectJobs(overview.jobs, this.config.jobs);
    const keep = new Set(selected.map((j) => j.jid));
    for (const [jid, w] of this.jobs) {
      if (!keep.has(jid)) {
        this.forget(w);
        this.jobs.delete(jid);
        this.logger.info({ job: w.labels.pipeline, jobId: jid }, 'Flink job no longer watched');
      }
    }
    for (const job of selected) {
      let w = this.jobs.get(job.jid);
      if (!w) {
        const labels: PipelineLabels = { pipeline: job.name, engine: 'flink', job_id: job.jid };
        w = {
          labels,
          recordLabels: { in: { ...labels, direction: 'in' }, out: { ...labels, direction: 'out' } },
          sinkPrev: new Map(),
          recordPrev: new Map(),
          sinkTopics: sinkTopicsOf(this.config.sinks, job.name),
          sourceTopics: [],
        };
        const prefix = transactionalIdPrefixOf(this.config.transactionalIdPrefixes, job.name);
        if (prefix !== undefined) w.commits = new SinkCommitTracker({ prefix });
        this.jobs.set(job.jid, w);
        this.pipeline.records.inc(w.recordLabels.in, 0);
        this.pipeline.records.inc(w.recordLabels.out, 0);
        if (w.sinkTopics.length) this.flink.visibilityPending.set(w.labels, 0);
        for (const outcome of CHECKPOINT_OUTCOMES) this.pipeline.checkpoints.inc({ ...w.labels, outcome }, 0);
        this.flink.restarts.inc(w.labels, 0);
        this.logger.info({ job: job.name, jobId: job.jid, state: job.state }, 'watching Flink job');
      }
      w.up = jobUp(job);
      this.pipeline.up.set(w.labels, w.up ? 1 : 0);
      this.flink.statsStaleness.set(w.labels, statisticsStaleness(this.config.pollInterval, this.statsCacheMs));
      await this.pollJob(job.jid, w);
      if (w.up) {
        await pollRecords(this.client, this.pipeline, job.jid, w);
        await pollSink(this.client, this.flink, job.jid, w);
      }
    }
    this.lastError = null;
  }

  private async pollJob(jid: string, w: WatchedJob): Promise<void> {
    const m = this.pipeline;
    const l = w.labels;
    try {
      const ex = await this.client.get<JobExceptions>(`/jobs/${jid}/exceptions`);
      const r = newRestarts(w.lastExceptionTs, ex);
      if (r.count) this.flink.restarts.inc(l, r.count);
      w.lastExceptionTs = r.lastSeenTimestamp;

      if (w.checkpointConfig === undefined) {
        w.checkpointConfig = await this.client.getOrNull<CheckpointConfigInfo>(`/jobs/${jid}/checkpoints/config`);
        if (w.checkpointConfig) {
          m.checkpointInterval.set(l, w.checkpointConfig.interval / 1000);
          if (w.checkpointConfig.tolerable_failed_checkpoints !== undefined) m.tolerableFailures.set(l, w.checkpointConfig.tolerable_failed_checkpoints);
        }
      }
      const s = await this.client.getOrNull<CheckpointingStatistics>(`/jobs/${jid}/checkpoints`);
      if (!s) {
        // 404: checkpointing is disabled for this job; there is nothing to count.
        if (!w.checkpointingDisabled) this.logger.warn({ job: l.pipeline, jobId: jid }, 'checkpointing is disabled for this Flink job');
        w.checkpointingDisabled = true;
        return;
      }
      w.checkpointingDisabled = false;
      const u = reduceCheckpoints(w.track, s);
      if (u.stale) return;
      w.track = u.track;
      for (const outcome of CHECKPOINT_OUTCOMES) if (u.increments[outcome]) m.checkpoints.inc({ ...l, outcome }, u.increments[outcome]);
      for (const o of u.observations) {
        m.checkpointDuration.observe({ ...l, outcome: o.outcome }, o.seconds);
        if (o.outcome === 'completed' && w.sinkTopics.length) this.observeVisibility(this.visibility.completed(jid, w.sinkTopics, { id: o.id, triggerMs: o.triggerMs, lastAckMs: o.lastAckMs }));
        if (w.commits) this.observeCommits(w, w.commits.checkpoint(o.id, o.outcome === 'completed', o.lastAckMs));
      }
      m.checkpointsPending.set(l, u.pending);
      m.consecutiveFailures.set(l, u.consecutiveFailures);
      if (u.lastCompletedSeconds !== null) m.lastCompleted.set(l, u.lastCompletedSeconds);
      if (u.sizeBytes !== null) m.checkpointSize.set(l, u.sizeBytes);
      if (u.restored) {
        m.restoredFrom.remove({ ...l, savepoint: String(!u.restored.savepoint) });
        m.restoredFrom.set({ ...l, savepoint: String(u.restored.savepoint) }, u.restored.id);
        m.restoredAt.set(l, u.restored.atSeconds);
      }
    } catch (err) {
      // A job that ended between the overview and these calls answers 404; the next poll drops it.
      if (err instanceof FlinkHttpError && err.status === 404) return;
      throw err;
    }
  }

  /** The REST server's checkpoint statistics cache (ms), from its configuration; Flink's default when unreadable. */
  private async readStatsCache(): Promise<number> {
    const [jm, web] = await Promise.all([
      this.client.getOrNull<{ key: string; value: string }[]>('/jobmanager/config').catch(() => null),
      this.client.getOrNull<{ 'refresh-interval'?: number }>('/config').catch(() => null),
    ]);
    return statisticsCacheMs(jm, web);
  }

  private forget(w: WatchedJob): void {
    this.visibility.forget(w.labels.job_id);
    this.flink.visibility.remove(w.labels);
    this.flink.visibilityPending.remove(w.labels);
    this.flink.sinkCommitTime.remove(w.labels);
    this.flink.sinkPending.remove(w.labels);
    this.pipeline.commitLatency.remove(w.labels);
    for (const outcome of ['successful', 'failed']) this.flink.sinkCommittables.remove({ ...w.labels, outcome });
    removeCheckpointSeries(this.pipeline, w.labels);
    this.pipeline.up.remove(w.labels);
    this.pipeline.records.remove(w.recordLabels.in);
    this.pipeline.records.remove(w.recordLabels.out);
    this.flink.statsStaleness.remove(w.labels);
    this.flink.restarts.remove(w.labels);
  }
}

export const flinkService = defineService({
  name: 'flink',
  section: 'flink',
  enabled: (config) => config.flink.enabled,
  // Built after the LSO monitor and the transactions service, it claims from them what is its own.
  create: ({ config, ctx, peers }) => {
    const service = new FlinkService(config.flink, ctx);
    // Its jobs' sink topics: their LSO series carry the job's pipeline, engine and job_id, and every
    // reading of them feeds the visibility latency.
    const sinks = new Set(config.flink.sinks.flatMap((s) => s.topics));
    if (sinks.size) peers.get(lsoMonitorService)?.claim(sinks, { topicLabels: (t) => service.topicLabels(t), onReading: (t, ends, now) => service.lsoReading(t, ends, now) });
    // Its KafkaSinks' commits per checkpoint come from the coordinator log's events (src/flink/sink-commits.ts).
    const txns = peers.get(transactionsService);
    if (service.tracksCommits) {
      if (txns) txns.onEvents((events, baseline) => service.transactionEvents(events, baseline));
      else ctx.logger.warn('flink.transactionalIdPrefixes is set but transactions.enabled is false: the Flink jobs\' commit latency (eos_kafka_transaction_commit_latency_seconds{engine="flink"}) comes from the transactions service and is absent');
    }
    return { service };
  },
});
