// What eoswatch showed during a Flink chaos round (harness/chaos/flink-runner.ts), from its /metrics
// scraped every second and the alerts of a live Prometheus: pure, so the rules that turn scrapes
// into observations are tested on their own (test/unit/harness/chaos/flink.test.ts).
import { parsePrometheusText, type Sample } from '../../src/metrics/text-format.js';
import { LingeringWindows, mergeAlerts, type Lingering } from './observed.js';

/** What eoswatch showed during a round (from its /metrics every second, and the live Prometheus). */
export interface FlinkObservations {
  /** Longest eos_partition_lso_stuck_seconds of a sink partition, and eos_partition_open_transaction_age_seconds. */
  lsoStuckMaxSeconds: number;
  openTransactionAgeMaxSeconds: number;
  /** Per process kill: how long the killed process's open transaction held the sink's LSO, and when it was aborted. */
  lingering: Lingering[];
  /** Highest eos_checkpoint_consecutive_failures after the round's first fault (a new job's first triggers fail while its tasks deploy). */
  consecutiveFailuresMax: number;
  /** Failovers counted (eos_pipeline_restarts_total, summed over the round's job ids). */
  restarts: number;
  /** eos_pipeline_up 0 was seen after the job had been up. */
  jobDownSeen: boolean;
  restUnreachableSeen: boolean;
  /** eos_checkpoint_restored_id of the last job, when it restored. */
  restoredFromId: number | null;
  /** Checkpoints that became visible on the sink after the round's last fault ended (the job resumed committing). */
  visibleAfterLastFault: number;
  /** eos_flink_sink_visibility_latency_seconds over the round: observations, mean, the p99 bucket bound; and the longest pending. */
  visibility: { count: number; meanSeconds: number | null; p99AtMostSeconds: number | null; pendingMaxSeconds: number };
  /** Alerts of the shipped rules that fired for the round's job (or without a pipeline label), and those only pending. */
  alertsFired: string[];
  alertsPending: string[];
  /** A live Prometheus evaluated the rules during the round. */
  prometheus: boolean;
  /**
   * After the round's first fault, Prometheus found the first clause of EosCheckpointFailing true
   * for the job (consecutive failures > 0): the alert fired because of failing checkpoints, not
   * only because of the trigger failures its second clause counts while a new job's tasks deploy.
   */
  consecutiveFailuresClauseSeen: boolean;
}

/** What one scrape of the round's daemon adds to the observations (pure, so the rules can be tested). */
export class ObservationTracker {
  readonly o: FlinkObservations;
  private readonly restartsByJob = new Map<string, number>();
  private wasUp = false;
  private restSeenUp = false;
  private readonly lingering = new LingeringWindows();
  private firstFaultAt: number | null = null;
  /** The visibility count of the last scrape, and its value when the last fault was injected. */
  private visibleCount = 0;
  private visibleAtLastFault = 0;

  constructor(
    private readonly pipeline: string,
    private readonly sinkTopic: string,
    prometheus: boolean,
  ) {
    this.o = {
      lsoStuckMaxSeconds: 0,
      openTransactionAgeMaxSeconds: 0,
      lingering: [],
      consecutiveFailuresMax: 0,
      restarts: 0,
      jobDownSeen: false,
      restUnreachableSeen: false,
      restoredFromId: null,
      visibleAfterLastFault: 0,
      visibility: { count: 0, meanSeconds: null, p99AtMostSeconds: null, pendingMaxSeconds: 0 },
      alertsFired: [],
      alertsPending: [],
      prometheus,
      consecutiveFailuresClauseSeen: false,
    };
  }

  /** A fault was injected at `at` (the first one starts the counting of consecutive failures). */
  faultInjected(at: number): void {
    this.firstFaultAt ??= at;
    this.visibleAtLastFault = this.visibleCount;
    this.o.visibleAfterLastFault = 0;
  }

  /** A process was killed at `at`: from now on, how long the sink's LSO stays held and when it moves again. */
  processKilled(fault: string, at: number): void {
    this.faultInjected(at);
    this.lingering.killed(fault, at);
    this.o.lingering = this.lingering.list;
  }

  /** One scrape of /metrics at `now`; `jobId` is the job currently running for the round. */
  scrape(text: string, jobId: string, now: number): void {
    const samples = parsePrometheusText(text).samples;
    const of = (name: string, pred: (s: Sample) => boolean = (s) => s.labels.pipeline === this.pipeline) => samples.filter((s) => s.name === name && pred(s));
    const max = (list: Sample[]) => list.reduce((m, s) => Math.max(m, s.value), 0);
    const onSink = (s: Sample) => s.labels.topic === this.sinkTopic;
    const stuck = max(of('eos_partition_lso_stuck_seconds', onSink));
    const o = this.o;
    o.lsoStuckMaxSeconds = Math.max(o.lsoStuckMaxSeconds, stuck);
    o.openTransactionAgeMaxSeconds = Math.max(o.openTransactionAgeMaxSeconds, max(of('eos_partition_open_transaction_age_seconds', onSink)));
    if (this.afterFault(now)) o.consecutiveFailuresMax = Math.max(o.consecutiveFailuresMax, max(of('eos_checkpoint_consecutive_failures')));
    for (const s of of('eos_pipeline_restarts_total')) this.restartsByJob.set(s.labels.job_id!, Math.max(this.restartsByJob.get(s.labels.job_id!) ?? 0, s.value));
    o.restarts = [...this.restartsByJob.values()].reduce((a, b) => a + b, 0);
    const up = of('eos_pipeline_up', (s) => s.labels.pipeline === this.pipeline && s.labels.job_id === jobId)[0]?.value;
    if (up === 1) this.wasUp = true;
    if (up === 0 && this.wasUp) o.jobDownSeen = true;
    const rest = of('eos_flink_rest_up', () => true)[0]?.value;
    if (rest === 1) this.restSeenUp = true;
    if (rest === 0 && this.restSeenUp) o.restUnreachableSeen = true;
    const restored = of('eos_checkpoint_restored_id', (s) => s.labels.pipeline === this.pipeline && s.labels.job_id === jobId)[0]?.value;
    if (restored !== undefined) o.restoredFromId = restored;
    o.visibility.pendingMaxSeconds = Math.max(o.visibility.pendingMaxSeconds, max(of('eos_flink_sink_visibility_pending_seconds')));
    const count = of('eos_flink_sink_visibility_latency_seconds_count').reduce((a, s) => a + s.value, 0);
    this.visibleCount = count;
    o.visibleAfterLastFault = Math.max(0, count - this.visibleAtLastFault);
    if (count > 0) {
      const sum = of('eos_flink_sink_visibility_latency_seconds_sum').reduce((a, s) => a + s.value, 0);
      const byLe = new Map<number, number>();
      for (const s of of('eos_flink_sink_visibility_latency_seconds_bucket')) {
        const le = Number(s.labels.le === '+Inf' ? Infinity : s.labels.le);
        byLe.set(le, (byLe.get(le) ?? 0) + s.value);
      }
      const p99 = [...byLe.entries()].sort((a, b) => a[0] - b[0]).find(([, c]) => c >= 0.99 * count)?.[0];
      o.visibility = { ...o.visibility, count, meanSeconds: sum / count, p99AtMostSeconds: p99 === undefined || p99 === Infinity ? null : p99 };
    }
    // The held LSO of a killed process: it grows while its transaction lingers, and drops when Flink aborts it.
    this.lingering.observe(stuck, now);
    o.lingering = this.lingering.list;
  }

  /** Alerts active now in Prometheus: those of this round's job (or without a pipeline label, firing). */
  alerts(active: { labels: Record<string, string>; state: string }[]): void {
    const { fired, pending } = mergeAlerts({ fired: this.o.alertsFired, pending: this.o.alertsPending }, active, (l) => l.pipeline === this.pipeline);
    this.o.alertsFired = fired;
    this.o.alertsPending = pending;
  }

  /** The expression Prometheus is asked each time alerts are read: EosCheckpointFailing's first clause for this job. */
  get consecutiveFailuresClause(): string {
    return `max by (job, instance, pipeline) (eos_checkpoint_consecutive_failures{pipeline="${this.pipeline}"}) > 0`;
  }

  /** The answer to consecutiveFailuresClause asked at `now`: any series after the first fault means the clause held. */
  clauseResult(series: unknown[], now: number): void {
    if (series.length > 0 && this.afterFault(now)) this.o.consecutiveFailuresClauseSeen = true;
  }

  private afterFault(now: number): boolean {
    return this.firstFaultAt !== null && now >= this.firstFaultAt;
  }

}
