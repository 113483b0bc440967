// Pure logic of the Flink poller: which jobs to watch, whether a job is up, and what one
// /checkpoints answer adds to the checkpoint metrics. No I/O here (src/flink/flink-service.ts
// fetches and applies), so every rule is tested on recorded REST answers (test/unit/flink/poller.test.ts).
import type { CheckpointOutcome } from '../metrics/checkpoint-stats.js';
import type { CheckpointEntry, CheckpointingStatistics, JobExceptions, JobOverview } from './rest-types.js';

export interface JobSelector {
  /** Regular expressions matched against the whole job name. */
  names?: string[];
  ids?: string[];
}

/** Job states after which a job does not run again. */
export const TERMINAL = new Set(['FINISHED', 'CANCELED', 'FAILED']);

/** Problems of job-name patterns (flink.jobs.names, flink.sinks[].job), each naming the key and the pattern. */
export function jobPatternProblems(names: string[], key = (i: number) => `flink.jobs.names[${i}]`): string[] {
  return names.flatMap((n, i) => {
    try {
      new RegExp(`^(?:${n})$`);
      return [];
    } catch (err) {
      return [`${key(i)}: "${n}" is not a valid regular expression (${(err as Error).message})`];
    }
  });
}

/**
 * The jobs to watch: those selected by name or id (all jobs when the selector names none). Per job
 * name, every job that is not terminal; when a name has none, its newest terminal job, so a FAILED
 * job that nobody replaced stays visible as down while an old run replaced by a resubmit drops out.
 */
export function selectJobs(jobs: JobOverview[], selector: JobSelector = {}): JobOverview[] {
  const patterns = (selector.names ?? []).map((n) => new RegExp(`^(?:${n})$`));
  const ids = new Set(selector.ids ?? []);
  const all = patterns.length === 0 && ids.size === 0;
  const chosen = jobs.filter((j) => all || ids.has(j.jid) || patterns.some((p) => p.test(j.name)));
  const byName = new Map<string, JobOverview[]>();
  for (const j of chosen) byName.set(j.name, [...(byName.get(j.name) ?? []), j]);
  const out: JobOverview[] = [];
  for (const group of byName.values()) {
    const live = group.filter((j) => !TERMINAL.has(j.state));
    if (live.length) out.push(...live);
    else out.push(group.reduce((a, b) => (b['start-time'] > a['start-time'] ? b : a)));
  }
  return out;
}

/** Up: RUNNING and every task running (after a TaskManager loss a job is RUNNING with its tasks only scheduled). */
export function jobUp(job: JobOverview): boolean {
  const total = job.tasks.total ?? 0;
  return job.state === 'RUNNING' && total > 0 && (job.tasks.running ?? 0) + (job.tasks.finished ?? 0) === total;
}

/** What the poller remembers of one job between polls. */
export interface CheckpointTrack {
  /** Completed and failed counts as last counted (after a JobManager restart: since the restart). */
  completed: number;
  failed: number;
  /** Highest checkpoint id seen in any answer. */
  maxId: number;
  /** Ids already observed in the duration histogram that may still appear in the history. */
  observed: number[];
}

export interface CheckpointObservation {
  id: number;
  outcome: CheckpointOutcome;
  seconds: number;
  /** Flink's trigger_timestamp and latest_ack_timestamp (ms, the JobManager's clock). */
  triggerMs: number;
  lastAckMs: number;
}

export interface CheckpointUpdate {
  track: CheckpointTrack;
  /** The answer is older than one already counted (the REST cache): nothing in it is applied. */
  stale: boolean;
  /** To add to eos_checkpoints_total per outcome (never negative). */
  increments: Record<CheckpointOutcome, number>;
  /** Terminal checkpoints not observed before, oldest first. */
  observations: CheckpointObservation[];
  pending: number;
  consecutiveFailures: number;
  lastCompletedSeconds: number | null;
  sizeBytes: number | null;
  restored: { id: number; savepoint: boolean; atSeconds: number } | null;
}

/** A failed checkpoint that ran out of time (Flink: "Checkpoint expired before completing"). */
export function isTimeout(entry: CheckpointEntry): boolean {
  return /expired/i.test(entry.failure_message ?? '');
}

function entriesOf(s: CheckpointingStatistics): CheckpointEntry[] {
  const byId = new Map<number, CheckpointEntry>();
  for (const e of [...s.history, s.latest.completed, s.latest.savepoint, s.latest.failed]) if (e) byId.set(e.id, e);
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

/**
 * Failed checkpoints after the latest completed one (every failure when none ever completed). The
 * history holds only the newest `web.checkpoints.history` entries (10): ids between the latest
 * completed checkpoint and the oldest listed entry failed too (an id is given to each triggered
 * checkpoint, and none of them completed), except a completed savepoint among them.
 */
export function consecutiveFailures(s: CheckpointingStatistics): number {
  const last = s.latest.completed;
  // None completed yet: the failures of checkpoints that got an id. Flink counts the checkpoints
  // it refused to trigger while the job's tasks deploy as failed too, with no id and no entry.
  if (!last) return s.history.filter((e) => e.status === 'FAILED').length;
  const listed = s.history.filter((e) => e.id > last.id);
  if (!listed.length) return 0;
  const oldest = Math.min(...listed.map((e) => e.id));
  const sp = s.latest.savepoint;
  const unlisted = oldest - last.id - 1 - (sp && sp.status === 'COMPLETED' && sp.id > last.id && sp.id < oldest ? 1 : 0);
  return listed.filter((e) => e.status === 'FAILED').length + Math.max(0, unlisted);
}

/**
 * Folds one /jobs/<id>/checkpoints answer into the counts. Outcome counters diff Flink's counts and
 * never go backwards: lower counts with a newer checkpoint id mean the JobManager restarted (its
 * counts start again from zero, the ids go on), lower counts without a newer id are a stale cached
 * answer and are ignored. Each terminal checkpoint is observed once, by id.
 */
export function reduceCheckpoints(prev: CheckpointTrack | undefined, s: CheckpointingStatistics): CheckpointUpdate {
  const entries = entriesOf(s);
  const maxId = Math.max(prev?.maxId ?? 0, ...entries.map((e) => e.id));
  const base = { completed: prev?.completed ?? 0, failed: prev?.failed ?? 0 };
  const went_back = s.counts.completed < base.completed || s.counts.failed < base.failed;
  const none = { completed: 0, failed: 0, timeout: 0, declined: 0 };
  if (went_back && prev && maxId <= prev.maxId) {
    return { track: prev, stale: true, increments: none, observations: [], pending: s.counts.in_progress, consecutiveFailures: 0, lastCompletedSeconds: null, sizeBytes: null, restored: null };
  }
  if (went_back) {
    base.completed = 0;
    base.failed = 0;
  }
  const seen = new Set(prev?.observed ?? []);
  const fresh = entries.filter((e) => e.status !== 'IN_PROGRESS' && !seen.has(e.id));
  const observations: CheckpointObservation[] = fresh.map((e) => ({
    id: e.id,
    outcome: e.status === 'COMPLETED' ? 'completed' : isTimeout(e) ? 'timeout' : 'failed',
    seconds: Math.max(0, e.end_to_end_duration) / 1000,
    triggerMs: e.trigger_timestamp,
    lastAckMs: e.latest_ack_timestamp,
  }));
  const failedDelta = Math.max(0, s.counts.failed - base.failed);
  const timeouts = Math.min(failedDelta, observations.filter((o) => o.outcome === 'timeout').length);
  // Before the job's first completed checkpoint, the failures Flink counts without a checkpoint
  // (no entry, no id) are triggers it declined while the tasks deploy: declined, not failed.
  const withId = observations.filter((o) => o.outcome === 'failed').length;
  const declined = s.latest.completed ? 0 : Math.max(0, failedDelta - timeouts - withId);
  const increments = { completed: Math.max(0, s.counts.completed - base.completed), failed: failedDelta - timeouts - declined, timeout: timeouts, declined };

  const minKept = Math.min(...entries.map((e) => e.id));
  const observed = [...seen, ...fresh.map((e) => e.id)].filter((id) => id >= minKept).sort((a, b) => a - b);

  const lastCompleted = s.latest.completed;
  const r = s.latest.restored;
  return {
    track: { completed: s.counts.completed, failed: s.counts.failed, maxId, observed },
    stale: false,
    increments,
    observations,
    pending: s.counts.in_progress,
    consecutiveFailures: consecutiveFailures(s),
    lastCompletedSeconds: lastCompleted ? lastCompleted.latest_ack_timestamp / 1000 : null,
    sizeBytes: lastCompleted ? (lastCompleted.checkpointed_size ?? lastCompleted.state_size ?? null) : null,
    restored: r ? { id: r.id, savepoint: r.is_savepoint, atSeconds: r.restore_timestamp / 1000 } : null,
  };
}

/** Restarts seen in the exception history since the last poll: one entry per failover. */
export function newRestarts(lastSeenTimestamp: number | undefined, e: JobExceptions): { count: number; lastSeenTimestamp: number } {
  const stamps = (e.exceptionHistory?.entries ?? []).map((x) => x.timestamp);
  const since = lastSeenTimestamp ?? -Infinity;
  const count = stamps.filter((t) => t > since).length;
  return { count, lastSeenTimestamp: Math.max(lastSeenTimestamp ?? 0, ...stamps) };
}

/** Growth of a counter that may restart from zero (a new producer, a restarted task): never negative. */
export function counterDelta(prev: number | undefined, now: number): number {
  if (prev === undefined) return now;
  return now >= prev ? now - prev : now;
}

/** The KafkaSink metrics of a vertex, by role, from its aggregated subtask metric ids. */
export interface SinkMetricIds {
  commitTimeNs: string[];
  successful: string[];
  failed: string[];
  pending: string[];
}

/**
 * Picks the KafkaSink's figures out of a vertex's metric ids: the writer's Kafka producer
 * `txn-commit-time-ns-total` and the committer's `successfulCommittables`, `failedCommittables`,
 * `pendingCommittables` (operator names are part of the ids, e.g. `sink__out__Writer.…`).
 */
export function sinkMetricIds(ids: string[]): SinkMetricIds {
  const pick = (re: RegExp) => ids.filter((id) => re.test(id));
  return {
    commitTimeNs: pick(/Writer\.KafkaProducer\.txn-commit-time-ns-total$/),
    successful: pick(/Committer\.successfulCommittables$/),
    failed: pick(/Committer\.failedCommittables$/),
    pending: pick(/Committer\.pendingCommittables$/),
  };
}

/** A job's record counters among one vertex's per-subtask metric ids (`<subtask>.<operator>.<metric>`). */
export interface RecordMetricIds {
  /** Records the job's sources read: each source operator's numRecordsIn, per subtask. */
  in: string[];
  /** Records the job's sinks wrote: each sink writer's numRecordsOut (numRecordsSend where a writer has no numRecordsOut), per subtask. */
  out: string[];
}

/**
 * Picks the record counters out of a vertex's metric ids as `GET /jobs/<jid>/vertices/<vid>/metrics`
 * lists them (one id per subtask: `0.Source__source__fa.numRecordsIn`). The operators' own counters,
 * not the vertex's read-records / write-records, which count only records between tasks (a job
 * chained into one task reads 0 there). Per subtask, so a subtask that restarts on its own (a
 * region failover) resets only its own counters and the rest are not counted again.
 */
export function recordMetricIds(ids: string[]): RecordMetricIds {
  const source = /^\d+\.Source__[^.]*\.numRecordsIn$/;
  const writer = /^(\d+\.[^.]*__Writer)\.(numRecordsOut|numRecordsSend)$/;
  const out = new Map<string, string>();
  for (const id of ids) {
    const m = writer.exec(id);
    if (!m) continue;
    // Flink deprecated the writers' numRecordsSend for numRecordsOut; both count the records sent.
    if (m[2] === 'numRecordsOut' || !out.has(m[1]!)) out.set(m[1]!, id);
  }
  return { in: ids.filter((id) => source.test(id)).sort(), out: [...out.values()].sort() };
}

/**
 * Kafka topics a job's KafkaSource reads, from the source reader's per-partition metric ids
 * (`0.Source__source__cap_src.KafkaSourceReader.topic.cap_src.partition.0.currentOffset`), so the
 * lag of the job's consumer group can be labelled with the job. The names are as Flink's metric
 * query service writes them (metricScopeName: `cap.src` is `cap_src`); compare with metricScopeName(topic).
 */
export function sourceTopics(ids: string[]): string[] {
  const re = /^\d+\.Source__[^.]*\.KafkaSourceReader\.topic\.(.+)\.partition\.\d+\.currentOffset$/;
  return [...new Set(ids.flatMap((id) => re.exec(id)?.[1] ?? []))].sort();
}

/** One answer entry of Flink's metrics endpoints: the value is a string (`"1234"`), absent when not reported. */
export interface MetricValue {
  id: string;
  value?: string;
}

/**
 * Growth of counters read per subtask since the previous reading (`prev`, raw values by id; updated
 * in place): each id's own counterDelta, so a subtask whose counter restarted from zero adds only its
 * new count. An id missing from the answer (its subtask not running) adds nothing and keeps its last value.
 */
export function counterGrowth(prev: Map<string, number>, values: MetricValue[], ids: readonly string[]): number {
  const byId = new Map(values.map((v) => [v.id, v.value]));
  let growth = 0;
  for (const id of ids) {
    const raw = byId.get(id);
    const now = raw === undefined ? NaN : Number(raw);
    if (!Number.isFinite(now) || now < 0) continue;
    growth += counterDelta(prev.get(id), now);
    prev.set(id, now);
  }
  return growth;
}

/**
 * How old the poller's view of a job's checkpoint statistics can be, in seconds: the poll interval
 * plus the REST server's cache of them (`rest.cache.checkpoint-statistics.timeout`, which defaults to
 * `web.refresh-interval`, 3 s). The stalled-checkpoint alert adds it to its threshold.
 */
export function statisticsStaleness(pollIntervalMs: number, cacheMs: number): number {
  return (pollIntervalMs + Math.max(0, cacheMs)) / 1000;
}

/**
 * The REST server's checkpoint statistics cache in ms, from `GET /jobmanager/config` (key/value
 * pairs) and `GET /config` (`refresh-interval`): the explicit cache timeout when set, else the
 * refresh interval, else Flink's default 3000. A value that is not a duration counts as the default.
 */
export function statisticsCacheMs(jobmanagerConfig: { key: string; value: string }[] | null, webConfig: { 'refresh-interval'?: number } | null): number {
  const refresh = typeof webConfig?.['refresh-interval'] === 'number' ? webConfig['refresh-interval'] : undefined;
  const get = (k: string) => jobmanagerConfig?.find((e) => e.key === k)?.value;
  const explicit = durationMs(get('rest.cache.checkpoint-statistics.timeout'));
  return explicit ?? refresh ?? durationMs(get('web.refresh-interval')) ?? 3000;
}

/** A Flink duration (`3000`, `3 s`, `500ms`, `1 min`) in ms; undefined when absent or not one. */
export function durationMs(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|milli|millis|millisecond|milliseconds|s|sec|secs|second|seconds|m|min|minute|minutes|h|hour|hours)?\s*$/i.exec(v);
  if (!m) return undefined;
  const unit = (m[2] ?? 'ms').toLowerCase();
  const factor = unit.startsWith('h') ? 3_600_000 : unit === 'm' || unit.startsWith('min') ? 60_000 : unit.startsWith('s') ? 1000 : 1;
  return Number(m[1]) * factor;
}

/**
 * Metric ids joined into `get=` values (each URL-encoded, comma-separated) of at most `maxChars`
 * characters each, so no request line grows past what the REST server accepts; an id longer than
 * maxChars gets a request of its own.
 */
export function chunkIds(ids: readonly string[], maxChars: number): string[] {
  const out: string[] = [];
  let cur = '';
  for (const id of ids.map(encodeURIComponent)) {
    if (cur && cur.length + 1 + id.length > maxChars) {
      out.push(cur);
      cur = '';
    }
    cur = cur ? `${cur},${id}` : id;
  }
  if (cur) out.push(cur);
  return out;
}

/** A name as Flink's metric query service writes it into metric ids: space, '.', ':' and ',' become '_'. */
export function metricScopeName(name: string): string {
  return name.replace(/[ .:,]/g, '_');
}
