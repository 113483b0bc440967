// The Flink service: polls the JobManager's REST API on a timer and feeds the shared checkpoint
// and pipeline metrics (src/metrics/checkpoint-stats.ts, src/metrics/pipeline.ts) for every
// watched job, labelled pipeline=<job name>, engine="flink", job_id. The rules live in
// src/flink/poller.ts; this file only fetches and applies. Nothing happens inside a scrape.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FlinkConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import { CHECKPOINT_OUTCOMES, PIPELINE_LABELS, removeCheckpointSeries, type PipelineLabels } from '../metrics/checkpoint-stats.js';
import { pipelineMetrics } from '../metrics/pipeline.js';
import type { Service, ServiceContext, ServiceHealth } from '../service.js';
import { EosError, ErrorCodes } from '../errors.js';
import { jobPatternProblems, jobUp, newRestarts, reduceCheckpoints, selectJobs, type CheckpointTrack } from './poller.js';
import { FlinkHttpError, FlinkRestClient } from './rest-client.js';
import type { CheckpointConfigInfo, CheckpointingStatistics, JobExceptions, JobsOverview } from './rest-types.js';

const byRegistry = new WeakMap<Registry, ReturnType<typeof define>>();

function define(registry: Registry) {
  const registers = [registry];
  return {
    restUp: new Gauge({ name: 'eos_flink_rest_up', help: '1 when a Flink JobManager REST URL answered the last poll.', registers }),
    restarts: new Counter({
      name: 'eos_pipeline_restarts_total',
      help: 'Failovers of a Flink job (one per entry of its exception history).',
      labelNames: [...PIPELINE_LABELS],
      registers,
    }),
  };
}

export function flinkMetrics(registry: Registry) {
  let m = byRegistry.get(registry);
  if (!m) {
    m = define(registry);
    byRegistry.set(registry, m);
  }
  return m;
}

interface WatchedJob {
  labels: PipelineLabels;
  track?: CheckpointTrack;
  lastExceptionTs?: number;
  checkpointConfig?: CheckpointConfigInfo | null;
  checkpointingDisabled?: boolean;
}

export class FlinkService implements Service {
  readonly name = 'flink';
  private readonly client: FlinkRestClient;
  private readonly logger: Logger;
  private readonly pipeline;
  private readonly flink;
  private readonly jobs = new Map<string, WatchedJob>();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  private lastError: string | null = 'not polled yet';

  constructor(
    private readonly config: FlinkConfig,
    ctx: ServiceContext,
  ) {
    const problems = jobPatternProblems(config.jobs.names);
    if (problems.length) throw new EosError(ErrorCodes.CONFIG_INVALID, problems.join('; '));
    this.client = new FlinkRestClient(config);
    this.logger = ctx.logger;
    this.pipeline = pipelineMetrics(ctx.registry);
    this.flink = flinkMetrics(ctx.registry);
    this.flink.restUp.set(0);
  }

  async start(): Promise<void> {
    await this.pollOnce();
    this.timer = setInterval(() => void this.pollOnce(), this.config.pollInterval);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.polling;
  }

  ready(): ServiceHealth {
    if (this.lastError) return { ready: false, detail: this.lastError };
    return { ready: true, detail: `${this.jobs.size} Flink job(s) watched via ${this.client.currentUrl}` };
  }

  /** One poll; a poll still running when the timer fires again is not doubled. */
  pollOnce(): Promise<void> {
    if (!this.polling) {
      this.polling = this.poll()
        .catch((err: Error) => {
          if (this.lastError !== err.message) this.logger.warn({ err: err.message }, 'Flink REST poll failed');
          this.lastError = err.message;
          this.flink.restUp.set(0);
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
        w = { labels: { pipeline: job.name, engine: 'flink', job_id: job.jid } };
        this.jobs.set(job.jid, w);
        for (const outcome of CHECKPOINT_OUTCOMES) this.pipeline.checkpoints.inc({ ...w.labels, outcome }, 0);
        this.flink.restarts.inc(w.labels, 0);
        this.logger.info({ job: job.name, jobId: job.jid, state: job.state }, 'watching Flink job');
      }
      this.pipeline.up.set(w.labels, jobUp(job) ? 1 : 0);
      await this.pollJob(job.jid, w);
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
      for (const o of u.observations) m.checkpointDuration.observe({ ...l, outcome: o.outcome }, o.seconds);
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

  private forget(w: WatchedJob): void {
    removeCheckpointSeries(this.pipeline, w.labels);
    this.pipeline.up.remove(w.labels);
    this.flink.restarts.remove(w.labels);
  }
}
