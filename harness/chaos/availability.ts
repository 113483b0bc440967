// Availability of a chaos round, beside its exactly-once verdict: failed checkpoints, pipeline
// restarts and worker exits, and the longest commit stall, from the /metrics scrapes the runner
// takes of its workers during the round; and whether the scenario's availability expectation was
// met. Pure: the scrapes, the times and the counts are arguments.
import { parsePrometheusText, type Sample } from '../../src/metrics/text-format.js';

/** What one scrape of a worker's /metrics says (counters are per worker process). */
export interface WorkerMetrics {
  /** eos_checkpoints_total{outcome="completed"}, summed over the process's pipelines. */
  completed: number;
  /** eos_checkpoints_total{outcome="failed"} and {outcome="timeout"}. */
  failed: number;
  timeout: number;
  /** eos_service_restarts_total{service="pipeline"}: the daemon's supervisor started the pipeline again. */
  pipelineRestarts: number;
  /** eos_checkpoint_last_completed_timestamp_seconds in ms; null before the process completed one. */
  lastCompletedMs: number | null;
}

/** One scrape: `metrics` is absent when the worker was down or did not answer (a gap, not a zero). */
export interface Scrape {
  /** Epoch ms. */
  t: number;
  worker: string;
  /** The worker process's pid: counters start again at 0 in a new process. */
  pid: number;
  metrics?: WorkerMetrics;
}

const sum = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

/** The figures of one /metrics page (throws on a page that is not the text format). */
export function workerMetrics(text: string): WorkerMetrics {
  const { samples } = parsePrometheusText(text);
  const last = samples.filter((s) => s.name === 'eos_checkpoint_last_completed_timestamp_seconds' && s.value > 0).map((s) => s.value);
  return {
    completed: sum(samples, 'eos_checkpoints_total', { outcome: 'completed' }),
    failed: sum(samples, 'eos_checkpoints_total', { outcome: 'failed' }),
    timeout: sum(samples, 'eos_checkpoints_total', { outcome: 'timeout' }),
    pipelineRestarts: sum(samples, 'eos_service_restarts_total', { service: 'pipeline' }),
    lastCompletedMs: last.length ? Math.round(Math.max(...last) * 1000) : null,
  };
}

/** A scenario's availability expectation: the most of each it may show; absent keys are not judged. */
export interface AvailabilityExpectation {
  workerExits?: number;
  failedCheckpoints?: number;
  pipelineRestarts?: number;
  commitStallSeconds?: number;
  /** Judged only on a cluster of at least this many brokers (one broker away still leaves a quorum). */
  minBrokers?: number;
  /** A miss fails the round (otherwise it is reported as "not met" and the verdict is unchanged). */
  enforce?: boolean;
}

export interface RoundAvailability {
  /** Checkpoints that failed or timed out (eos_checkpoints_total outcome failed + timeout), every worker process. */
  failedCheckpoints: number;
  completedCheckpoints: number;
  /** eos_service_restarts_total{service="pipeline"}, every worker process. */
  pipelineRestarts: number;
  /** Worker processes that exited without the scenario stopping them (the runner restarted them). */
  workerExits: number;
  /**
   * Longest time without a completed checkpoint (of any worker) while input was pending: from the
   * round's first completed checkpoint until every input record was committed. Null when no
   * checkpoint completed.
   */
  longestCommitStallSeconds: number | null;
  /** Scrapes taken, and those that found the worker down or unanswering (gaps). */
  scrapes: number;
  scrapeGaps: number;
  /** Against the scenario's expectation: n/a when it has none (or the cluster is too small to judge). */
  expectation: 'met' | 'not met' | 'n/a';
  /** What was missed ("2 failed checkpoints (at most 0)"). */
  missed: string[];
  /** Whether a miss fails the round. */
  enforced: boolean;
}

export interface AvailabilityInput {
  scrapes: readonly Scrape[];
  workerExits: number;
  /** Epoch ms when every input record was committed (the end of "input pending"); null when it never was. */
  inputDoneAt: number | null;
  /** Epoch ms the round's readings stop (the end of the window when the input was never all committed). */
  endAt: number;
  expectation?: AvailabilityExpectation;
  brokers: number;
}

/** Per worker process, its last scrape with metrics: counters only grow within a process. */
function lastPerProcess(scrapes: readonly Scrape[]): WorkerMetrics[] {
  const last = new Map<string, WorkerMetrics>();
  for (const s of scrapes) if (s.metrics) last.set(`${s.worker}/${s.pid}`, s.metrics);
  return [...last.values()];
}

/**
 * The longest gap between completed checkpoints, in ms, within [first completion, end]. The
 * completions are the distinct eos_checkpoint_last_completed_timestamp_seconds values the scrapes
 * saw; one that a later completion overwrote before the next scrape is not seen, so a gap can be
 * overstated by up to one scrape interval, never understated.
 */
export function longestStallMs(scrapes: readonly Scrape[], end: number): number | null {
  const times = [...new Set(scrapes.map((s) => s.metrics?.lastCompletedMs).filter((t): t is number => t !== null && t !== undefined))].sort((a, b) => a - b);
  if (!times.length) return null;
  let worst = 0;
  let prev = times[0]!;
  for (const t of [...times.slice(1).filter((x) => x <= end), Math.max(end, prev)]) {
    worst = Math.max(worst, t - prev);
    prev = Math.max(prev, t);
  }
  return worst;
}

export function roundAvailability(input: AvailabilityInput): RoundAvailability {
  const per = lastPerProcess(input.scrapes);
  const total = (f: (m: WorkerMetrics) => number) => per.reduce((a, m) => a + f(m), 0);
  const stall = longestStallMs(input.scrapes, input.inputDoneAt ?? input.endAt);
  const a = {
    failedCheckpoints: total((m) => m.failed + m.timeout),
    completedCheckpoints: total((m) => m.completed),
    pipelineRestarts: total((m) => m.pipelineRestarts),
    workerExits: input.workerExits,
    longestCommitStallSeconds: stall === null ? null : stall / 1000,
    scrapes: input.scrapes.length,
    scrapeGaps: input.scrapes.filter((s) => !s.metrics).length,
  };
  const exp = input.expectation;
  if (!exp || input.brokers < (exp.minBrokers ?? 0)) return { ...a, expectation: 'n/a', missed: [], enforced: false };
  const missed: string[] = [];
  const check = (what: string, value: number | null, max: number | undefined, unit = '') => {
    if (max === undefined) return;
    if (value === null) missed.push(`${what}: no figure (at most ${max}${unit})`);
    else if (value > max) missed.push(`${what} ${unit ? value.toFixed(1) : value}${unit} (at most ${max}${unit})`);
  };
  check('worker exits', a.workerExits, exp.workerExits);
  check('failed checkpoints', a.failedCheckpoints, exp.failedCheckpoints);
  check('pipeline restarts', a.pipelineRestarts, exp.pipelineRestarts);
  check('commit stall', a.longestCommitStallSeconds, exp.commitStallSeconds, ' s');
  // A worker never scraped says nothing: no figure is not "0 failures".
  if (a.scrapes === a.scrapeGaps) missed.push('no scrape of any worker answered');
  return { ...a, expectation: missed.length ? 'not met' : 'met', missed, enforced: exp.enforce === true };
}
