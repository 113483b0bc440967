// What a running eoswatch shows, in one screen: built in the daemon (src/status/sampler.ts) from
// its metrics' series (src/metrics/samples.ts), its recent history (src/status/history.ts),
// readiness and audit, served as GET /status.json; `eoswatch status`, the demo's live summary and the status page all show that.
// Alert conditions mirror alerts/eoswatch.rules.yml, windows included, and are judged with the
// rules' `for:` (src/status/alert-timers.ts). Pure: no I/O, no clock here.
import type { Sample, Samples } from '../metrics/samples.js';
import { AlertTimers, fmtState, type AlertStatus, type Condition } from './alert-timers.js';
import { baseline, commitQuantileMs, histogramQuantile, increase, pointOf, zeroPoint, type Point } from './history.js';

export { histogramQuantile };

export interface Reading {
  atMs: number;
  metrics: Samples;
}

export interface FailingFinding {
  severity: string;
  check: string;
  target: string;
  observed: string;
  remediation: string;
}

/** Rates and the shown commit latency cover this much of the history. */
export const RATE_WINDOW_MS = 60_000;

/**
 * The metric families the summary and its history read (status/sampler.ts samples only these: a
 * registry watching 10,000 partitions holds 80,000 per-partition series the status does not read).
 * A family read here must be listed (test/unit/status/families.test.ts holds every name the two
 * files use to this list).
 */
export const STATUS_FAMILIES: ReadonlySet<string> = new Set([
  'eos_audit_check_passed',
  'eos_canary_records_total',
  'eos_checkpoint_consecutive_failures',
  'eos_checkpoint_interval_seconds',
  'eos_checkpoint_last_completed_timestamp_seconds',
  'eos_checkpoints_pending',
  'eos_checkpoints_total',
  'eos_consumer_lag_records',
  'eos_coordinator_hanging_transaction_info',
  'eos_kafka_brokers',
  'eos_kafka_transaction_commit_latency_seconds',
  'eos_kafka_up',
  'eos_partition_lso_lag_records',
  'eos_partition_lso_stuck_seconds',
  'eos_pipeline_records_total',
  'eos_pipeline_up',
  'eos_producer_fenced_total',
]);

export interface StatusInput {
  url: string;
  current: Reading;
  /**
   * Earlier points of this process, oldest first. Its counters started at zero with it, so an alert
   * window longer than the history counts from zero (what the process did since it started).
   */
  history?: readonly Point[];
  /** The current reading as a point, when the caller has made it already. */
  currentPoint?: Point;
  ready?: { ok: boolean; services?: Record<string, { ready: boolean; detail?: string }> };
  audit?: { summary?: { critical: number; warning: number }; findings?: FailingFinding[] };
  /** The transactions service's last report (src/coordinator/transactions-service.ts), when it runs. */
  transactions?: TransactionsView;
  /** The Streams service's last report (src/streams/streams-service.ts), when it runs. */
  streams?: StreamsInputView;
}

/** The watched Kafka Streams applications as the Streams service reports them (the fields read here). */
export interface StreamsInputView {
  applications: {
    applicationId: string;
    pipeline: string;
    state: string;
    up: boolean;
    members: readonly unknown[];
    rebalancingSince: string | null;
    rebalances: number;
    lastRebalance: ({ kind: 'completed'; durationMs: number } | { kind: 'unobserved' }) | null;
  }[];
  /** The last reading failed: the applications are as the one before saw them. */
  failure?: string;
}

/** One watched Kafka Streams application as the status shows it. */
export interface StreamsAppStatus {
  applicationId: string;
  pipeline: string;
  state: string;
  up: boolean;
  members: number;
  /** How long the rebalance in progress has lasted; null when none is. */
  rebalancingSeconds: number | null;
  rebalances: number;
  /** The last completed rebalance's duration (null: none timed yet). */
  lastRebalanceSeconds: number | null;
  /** Its group's lag to the LSO, summed over partitions (null: not read yet). */
  lagRecords: number | null;
}

/** Open and hanging transactions of the cluster as the status shows them: the oldest few, named. */
export interface TransactionsView {
  source: string;
  liveIds: number;
  open: number;
  oldestOpen: { transactionalId: string; application: string; ageMs: number; abortDue: string }[];
  hanging: { transactionalId: string; application: string; topic: string; partition: number; ageMs: number; heldBack: string; abortDue: string }[];
}

/** How many open and hanging transactions the summary names. */
export const TRANSACTIONS_SHOWN = 3;

export type { AlertStatus };

export interface StatusSummary {
  url: string;
  at: string;
  /** What the rates and the shown commit latency cover: the last `nominalWindowSeconds` of the daemon's history, less right after it started (null: no earlier point yet, no rates). */
  windowSeconds: number | null;
  nominalWindowSeconds: number;
  ready: boolean | null;
  kafka: { up: boolean | null; brokers: number | null };
  pipeline: {
    name: string | null;
    engine: string | null;
    up: boolean | null;
    /** null: no pipeline here exports eos_pipeline_records_total (a watched Flink job: not polled). */
    recordsIn: number | null;
    recordsOut: number | null;
    deadLetters: number;
    inPerSecond: number | null;
    outPerSecond: number | null;
    checkpointsCompleted: number;
    checkpointsFailed: number;
    consecutiveFailures: number;
    pending: number;
    lastCompletedSecondsAgo: number | null;
    commitLatencyMs: { p50: number; p99: number } | null;
  };
  lso: { maxLagRecords: number; worstPartition: string | null; maxStuckSeconds: number };
  canary: { sent: number; received: number; duplicates: number; lost: number; outOfOrder: number; wrongValue: number } | null;
  audit: { critical: number; warning: number; failing: FailingFinding[] } | null;
  /** Conditions that hold now, pending until they have held for their rule's `for:`, then firing. */
  /** null: the transactions service does not run here. */
  transactions: (TransactionsView & { hangingTotal: number }) | null;
  /** null: no Kafka Streams application is watched here. */
  streams: StreamsAppStatus[] | null;
  /** The Streams service's last reading failed (why): the applications shown are older. */
  streamsFailure: string | null;
  alerts: AlertStatus[];
  /** How many of `alerts` are firing. */
  firing: number;
}

const of = (m: Samples, name: string, labels: Record<string, string> = {}): Sample[] =>
  m.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const sum = (m: Samples, name: string, labels: Record<string, string> = {}): number => of(m, name, labels).reduce((a, s) => a + s.value, 0);
const max = (m: Samples, name: string): Sample | undefined => of(m, name).reduce<Sample | undefined>((a, s) => (a === undefined || s.value > a.value ? s : a), undefined);
const first = (m: Samples, name: string): number | undefined => of(m, name)[0]?.value;
/** The labels that name one pipeline (`on (job, instance, pipeline)` in the rules; job_id and engine tell Flink jobs apart). */
const pipelineKey = (s: Sample): Record<string, string> => Object.fromEntries(['pipeline', 'engine', 'job_id'].filter((k) => s.labels[k] !== undefined).map((k) => [k, s.labels[k]!]));
const samePipeline = (a: Sample, b: Sample): boolean => {
  const ka = pipelineKey(a);
  const kb = pipelineKey(b);
  return Object.keys(ka).length === Object.keys(kb).length && Object.entries(ka).every(([k, v]) => kb[k] === v);
};

/** The rules' windows: rate(...[5m]) of the commit latency, increase(...[10m]) of the counters. */
const LATENCY_WINDOW_MS = 5 * 60_000;
const INCREASE_WINDOW_MS = 10 * 60_000;

/** The alert conditions of alerts/eoswatch.rules.yml that hold now (before their `for:`). */
export function conditions(m: Samples, now: Point, history: readonly Point[], s: Pick<StatusSummary, 'kafka'>): Condition[] {
  // A window longer than the history: the counters started at zero with this process.
  const since = (windowMs: number): Point => {
    const b = baseline(history, now.atMs, windowMs);
    return b && b.atMs <= now.atMs - windowMs ? b : zeroPoint(now.atMs - windowMs);
  };
  const out: Condition[] = [];
  const p99 = commitQuantileMs(0.99, since(LATENCY_WINDOW_MS), now);
  if (p99 !== undefined && p99 > 500) out.push({ alert: 'EosTransactionCommitLatencyHigh', detail: `commit latency p99 ${fmtMs(p99)} > 500 ms over 5 min` });
  const pending = of(m, 'eos_checkpoints_pending').filter((x) => x.value > 1);
  if (pending.length) out.push({ alert: 'EosCheckpointsPendingHigh', detail: pending.map((x) => `${x.labels.pipeline ?? ''}: ${x.value} checkpoints pending > 1`).join(', ') });
  const consecutive = of(m, 'eos_checkpoint_consecutive_failures').reduce((a, x) => Math.max(a, x.value), 0);
  const failed10m = increase(since(INCREASE_WINDOW_MS), now, 'failed');
  if (consecutive > 0 || failed10m > 0) out.push({ alert: 'EosCheckpointFailing', detail: `${consecutive} consecutive failed checkpoints, ${failed10m} failed in 10 min` });
  // Per pipeline, as the rule joins on (job, instance, pipeline): its own interval, its own up.
  const stalled: string[] = [];
  for (const up of of(m, 'eos_pipeline_up').filter((x) => x.value === 1)) {
    const last = of(m, 'eos_checkpoint_last_completed_timestamp_seconds').find((x) => samePipeline(x, up));
    const interval = of(m, 'eos_checkpoint_interval_seconds').find((x) => samePipeline(x, up));
    if (!last || !interval || !(interval.value > 0)) continue;
    const ago = now.atMs / 1000 - last.value;
    if (ago > 3 * interval.value) stalled.push(`${up.labels.pipeline ?? ''}: last checkpoint ${ago.toFixed(0)} s ago > 3 × ${interval.value} s`);
  }
  if (stalled.length) out.push({ alert: 'EosCheckpointStalled', detail: stalled.join(', ') });
  const down = of(m, 'eos_pipeline_up').filter((x) => x.value === 0);
  if (down.length) out.push({ alert: 'EosPipelineDown', detail: `eos_pipeline_up 0: ${down.map((x) => x.labels.pipeline ?? '').join(', ')}` });
  const dup = increase(since(INCREASE_WINDOW_MS), now, 'canaryDuplicates');
  if (dup > 0) out.push({ alert: 'EosDuplicatesDetected', detail: `${dup} canary duplicates in 10 min` });
  const lost = increase(since(INCREASE_WINDOW_MS), now, 'canaryLost');
  if (lost > 0) out.push({ alert: 'EosDataLossDetected', detail: `${lost} canary records lost in 10 min` });
  const critical = of(m, 'eos_audit_check_passed', { severity: 'critical' }).filter((x) => x.value === 0);
  if (critical.length) out.push({ alert: 'EosConfigAuditCritical', detail: `${critical.length} critical audit finding${critical.length === 1 ? '' : 's'}, first ${critical[0]!.labels.check} (${critical[0]!.labels.target})` });
  const hanging = of(m, 'eos_partition_lso_stuck_seconds').filter(
    (x) => x.value > 300 && of(m, 'eos_partition_lso_lag_records', { topic: x.labels.topic!, partition: x.labels.partition! }).some((l) => l.value > 0),
  );
  if (hanging.length) out.push({ alert: 'EosHangingTransaction', detail: hanging.map((x) => `${x.labels.topic}-${x.labels.partition} stuck ${x.value.toFixed(0)} s`).join(', ') });
  const named = of(m, 'eos_coordinator_hanging_transaction_info').filter((x) => x.value > 0);
  if (named.length) out.push({ alert: 'EosCoordinatorHangingTransaction', detail: named.map((x) => `${x.labels.transactional_id} on ${x.labels.topic}-${x.labels.partition} open ${x.value.toFixed(0)} s`).join(', ') });
  const fenced = increase(since(INCREASE_WINDOW_MS), now, 'fenced');
  if (fenced > 0) out.push({ alert: 'EosProducerFenced', detail: `${fenced} producers fenced in 10 min` });
  if (s.kafka.up === false) out.push({ alert: 'EosKafkaUnreachable', detail: 'eos_kafka_up 0' });
  return out;
}

/**
 * The summary at `input.current`, its alert conditions judged by `timers` (one evaluation at the
 * current reading's time; the caller keeps the timers between evaluations). Without timers every
 * condition is judged as if it had just started to hold.
 */
export function summarize(input: StatusInput, timers: AlertTimers = new AlertTimers()): StatusSummary {
  const m = input.current.metrics;
  const history = input.history ?? [];
  const now = input.currentPoint ?? pointOf(input.current.atMs, m);
  const base = baseline(history, now.atMs, RATE_WINDOW_MS);
  const seconds = base ? (now.atMs - base.atMs) / 1000 : null;
  const perSecond = (key: 'recordsIn' | 'recordsOut') => (base && seconds && now[key] !== null ? increase(base, now, key) / seconds : null);
  const firstUp = of(m, 'eos_pipeline_up')[0];
  const ofFirst = (name: string) => (firstUp ? of(m, name).find((x) => samePipeline(x, firstUp))?.value : first(m, name));
  const lastCompleted = ofFirst('eos_checkpoint_last_completed_timestamp_seconds');
  const kafkaUp = first(m, 'eos_kafka_up');
  const canaryOn = of(m, 'eos_canary_records_total').length > 0;
  const canary = (result: string) => sum(m, 'eos_canary_records_total', { result });
  const worstLag = max(m, 'eos_partition_lso_lag_records');
  const failing = input.audit?.findings ?? [];
  const latencyFrom = base ?? zeroPoint(now.atMs);
  const p50 = commitQuantileMs(0.5, latencyFrom, now);
  const p99 = commitQuantileMs(0.99, latencyFrom, now);

  const kafka = { up: kafkaUp === undefined ? null : kafkaUp === 1, brokers: first(m, 'eos_kafka_brokers') ?? null };
  const alerts = timers.evaluate(conditions(m, now, history, { kafka }), now.atMs);
  return {
    url: input.url,
    at: new Date(input.current.atMs).toISOString(),
    windowSeconds: seconds,
    nominalWindowSeconds: RATE_WINDOW_MS / 1000,
    ready: input.ready ? input.ready.ok : null,
    kafka,
    pipeline: {
      name: firstUp?.labels.pipeline ?? null,
      engine: firstUp?.labels.engine ?? null,
      up: firstUp === undefined ? null : firstUp.value === 1,
      recordsIn: now.recordsIn,
      recordsOut: now.recordsOut,
      deadLetters: now.deadLetters,
      inPerSecond: perSecond('recordsIn'),
      outPerSecond: perSecond('recordsOut'),
      checkpointsCompleted: now.completed,
      checkpointsFailed: now.failed,
      consecutiveFailures: sum(m, 'eos_checkpoint_consecutive_failures'),
      pending: now.pending,
      lastCompletedSecondsAgo: lastCompleted ? Math.max(0, input.current.atMs / 1000 - lastCompleted) : null,
      commitLatencyMs: p50 === undefined || p99 === undefined ? null : { p50, p99 },
    },
    lso: {
      maxLagRecords: worstLag?.value ?? 0,
      worstPartition: worstLag && worstLag.value > 0 ? `${worstLag.labels.topic}-${worstLag.labels.partition}` : null,
      maxStuckSeconds: max(m, 'eos_partition_lso_stuck_seconds')?.value ?? 0,
    },
    canary: canaryOn
      ? { sent: canary('sent'), received: canary('received'), duplicates: canary('duplicate'), lost: canary('lost'), outOfOrder: canary('out_of_order'), wrongValue: canary('wrong_value') }
      : null,
    transactions: input.transactions
      ? {
          source: input.transactions.source,
          liveIds: input.transactions.liveIds,
          open: input.transactions.open,
          oldestOpen: input.transactions.oldestOpen.slice(0, TRANSACTIONS_SHOWN).map(({ transactionalId, application, ageMs, abortDue }) => ({ transactionalId, application, ageMs, abortDue })),
          hanging: input.transactions.hanging.slice(0, TRANSACTIONS_SHOWN).map(({ transactionalId, application, topic, partition, ageMs, heldBack, abortDue }) => ({ transactionalId, application, topic, partition, ageMs, heldBack, abortDue })),
          hangingTotal: input.transactions.hanging.length,
        }
      : null,
    streams: input.streams ? input.streams.applications.map((a) => streamsAppStatus(a, m, input.current.atMs)) : null,
    streamsFailure: input.streams?.failure ?? null,
    audit: input.audit?.summary ? { critical: input.audit.summary.critical, warning: input.audit.summary.warning, failing } : null,
    alerts,
    firing: alerts.filter((a) => a.state === 'firing').length,
  };
}

function streamsAppStatus(a: StreamsInputView['applications'][number], m: Samples, nowMs: number): StreamsAppStatus {
  const lag = of(m, 'eos_consumer_lag_records', { group: a.applicationId });
  return {
    applicationId: a.applicationId,
    pipeline: a.pipeline,
    state: a.state,
    up: a.up,
    members: a.members.length,
    rebalancingSeconds: a.rebalancingSince === null ? null : Math.max(0, (nowMs - Date.parse(a.rebalancingSince)) / 1000),
    rebalances: a.rebalances,
    lastRebalanceSeconds: a.lastRebalance?.kind === 'completed' ? a.lastRebalance.durationMs / 1000 : null,
    lagRecords: lag.length ? lag.reduce((x, s) => x + s.value, 0) : null,
  };
}

/** An application's status in one line: "orders-app up (Stable, 2 members), 3 rebalances (last 8.0 s), lag 12 records". */
export function streamsAppLine(a: StreamsAppStatus): string {
  const name = a.pipeline === a.applicationId ? a.applicationId : `${a.pipeline} (${a.applicationId})`;
  const health = a.rebalancingSeconds !== null ? `REBALANCING for ${a.rebalancingSeconds.toFixed(0)} s` : a.up ? 'up' : 'DOWN';
  const last = a.lastRebalanceSeconds === null ? '' : ` (last ${a.lastRebalanceSeconds.toFixed(1)} s)`;
  return `${name} ${health} (${a.state}, ${a.members} member${a.members === 1 ? '' : 's'}), ${a.rebalances} rebalance${a.rebalances === 1 ? '' : 's'}${last}, lag ${a.lagRecords === null ? 'n/a' : `${Math.round(a.lagRecords).toLocaleString('en-US')} records`}`;
}

export function fmtMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms < 10 ? ms.toFixed(1) : ms.toFixed(0)} ms`;
}

const n = (x: number | null): string => (x === null ? 'n/a' : Math.round(x).toLocaleString('en-US'));
const rate = (x: number | null): string => (x === null ? '' : ` (${n(x)}/s)`);

/** The summary as a few aligned lines for a terminal. */
export function formatSummary(s: StatusSummary): string {
  const p = s.pipeline;
  const lines: [string, string][] = [
    ['eoswatch', `${s.url}  ${s.ready === null ? '' : s.ready ? 'ready' : 'NOT READY'}  Kafka ${s.kafka.up === null ? 'unknown' : s.kafka.up ? `up${s.kafka.brokers ? ` (${s.kafka.brokers} broker${s.kafka.brokers === 1 ? '' : 's'})` : ''}` : 'UNREACHABLE'}`],
  ];
  if (p.up !== null) {
    lines.push(
      [
        'pipeline',
        `${p.name ?? ''} ${p.up ? 'up' : 'DOWN'}  ` +
          (p.recordsIn === null
            ? `records in/out n/a (${p.engine === 'flink' ? 'not polled from Flink' : 'not exported'})`
            : `records in ${n(p.recordsIn)}${rate(p.inPerSecond)}  out ${n(p.recordsOut)}${rate(p.outPerSecond)}  dead letters ${n(p.deadLetters)}` +
              `${s.windowSeconds === null ? '' : `  (rates over ${s.windowSeconds.toFixed(0)} s)`}`),
      ],
      [
        'checkpoints',
        `${n(p.checkpointsCompleted)} completed, ${n(p.checkpointsFailed)} failed  pending ${p.pending}` +
          `${p.lastCompletedSecondsAgo === null ? '' : `  last ${p.lastCompletedSecondsAgo.toFixed(1)} s ago`}` +
          `  commit p50 ${p.commitLatencyMs ? fmtMs(p.commitLatencyMs.p50) : 'n/a'}  p99 ${p.commitLatencyMs ? fmtMs(p.commitLatencyMs.p99) : 'n/a'}`,
      ],
    );
  }
  lines.push(['LSO lag', `max ${n(s.lso.maxLagRecords)} records${s.lso.worstPartition ? ` (${s.lso.worstPartition})` : ''}, longest stuck ${s.lso.maxStuckSeconds.toFixed(0)} s`]);
  if (s.canary) {
    const c = s.canary;
    lines.push(['canary', `sent ${n(c.sent)}  received ${n(c.received)}  duplicates ${n(c.duplicates)}  lost ${n(c.lost)}  out of order ${n(c.outOfOrder)}  wrong value ${n(c.wrongValue)}`]);
  }
  if (s.audit) {
    // The broker count first: on a single broker it explains the replication findings that follow.
    const f = s.audit.failing.find((x) => x.check === 'cluster.broker-count') ?? s.audit.failing[0];
    const more = s.audit.failing.length - 1;
    lines.push(['audit', `${s.audit.critical} critical, ${s.audit.warning} warning${f ? `: ${f.check} (${f.observed})${more > 0 ? ` and ${more} more: /audit?failing=1` : ''}` : ''}`]);
  }
  if (s.streamsFailure !== null) lines.push(['streams', `last reading failed: ${s.streamsFailure} (below: the reading before)`]);
  for (const a of s.streams ?? []) lines.push(['streams', streamsAppLine(a)]);
  if (s.transactions) {
    const t = s.transactions;
    const age = (ms: number) => fmtMs(ms);
    const oldest = t.oldestOpen[0];
    lines.push(['transactions', `${n(t.liveIds)} transactional ids, ${n(t.open)} open${oldest ? ` (oldest ${oldest.transactionalId} of ${oldest.application}, ${age(oldest.ageMs)})` : ''}${t.source === 'log' ? '' : '  (polling the coordinators: outcomes not counted)'}`]);
    for (const h of t.hanging) {
      lines.push(['  HANGING', `${h.transactionalId} (${h.application}) on ${h.topic}-${h.partition}: open ${age(h.ageMs)}, ${h.heldBack} records held back, abort ${h.abortDue}`]);
    }
    if (t.hangingTotal > t.hanging.length) lines.push(['', `and ${t.hangingTotal - t.hanging.length} more hanging: eoswatch transactions find-hanging`]);
  }
  lines.push(['alerts', s.alerts.length ? s.alerts.map((a) => `${a.alert} (${fmtState(a)}): ${a.detail}`).join('; ') : 'none']);
  const w = Math.max(...lines.map(([k]) => k.length));
  return `${lines.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n')}\n`;
}
