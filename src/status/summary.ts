// What a running eoswatch shows, in one screen: built from its /metrics (two readings, for rates
// and increases), /readyz and /audit. `eoswatch status`, the demo's live summary and the status
// page (GET /status.json) all use this one piece of code. Pure: no I/O here.
import type { Parsed, Sample } from '../metrics/text-format.js';

export interface Reading {
  atMs: number;
  metrics: Parsed;
}

export interface FailingFinding {
  severity: string;
  check: string;
  target: string;
  observed: string;
  remediation: string;
}

export interface StatusInput {
  url: string;
  current: Reading;
  /** An earlier reading: rates and increases are over the time between the two. */
  previous?: Reading;
  ready?: { ok: boolean; services?: Record<string, { ready: boolean; detail?: string }> };
  audit?: { summary?: { critical: number; warning: number }; findings?: FailingFinding[] };
}

export interface Alert {
  /** The rule in alerts/eoswatch.rules.yml whose condition holds. */
  alert: string;
  detail: string;
}

export interface StatusSummary {
  url: string;
  at: string;
  windowSeconds: number | null;
  ready: boolean | null;
  kafka: { up: boolean | null; brokers: number | null };
  pipeline: {
    name: string | null;
    up: boolean | null;
    recordsIn: number;
    recordsOut: number;
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
  alerts: Alert[];
}

const of = (m: Parsed, name: string, labels: Record<string, string> = {}): Sample[] =>
  m.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const sum = (m: Parsed | undefined, name: string, labels: Record<string, string> = {}): number => (m ? of(m, name, labels).reduce((a, s) => a + s.value, 0) : 0);
const max = (m: Parsed, name: string): Sample | undefined => of(m, name).reduce<Sample | undefined>((a, s) => (a === undefined || s.value > a.value ? s : a), undefined);
const first = (m: Parsed, name: string): number | undefined => of(m, name)[0]?.value;

/** histogram_quantile over the buckets (cumulative counts by upper bound), linear within a bucket, as Prometheus does. */
export function histogramQuantile(q: number, buckets: { le: number; count: number }[]): number | undefined {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted[sorted.length - 1]?.count ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of sorted) {
    if (b.count >= rank) {
      if (b.le === Infinity) return prevLe;
      return prevLe + ((b.le - prevLe) * (rank - prevCount)) / Math.max(b.count - prevCount, Number.EPSILON);
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}

function buckets(m: Parsed | undefined, name: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const s of m ? of(m, `${name}_bucket`) : []) {
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    out.set(le, (out.get(le) ?? 0) + s.value);
  }
  return out;
}

/** Commit latency p50/p99 over the window (the whole life when nothing was committed in it). */
function commitLatency(cur: Parsed, prev: Parsed | undefined): { p50: number; p99: number } | null {
  const name = 'eos_kafka_transaction_commit_latency_seconds';
  const now = buckets(cur, name);
  const before = buckets(prev, name);
  let window = [...now].map(([le, count]) => ({ le, count: count - (before.get(le) ?? 0) }));
  if (!window.some((b) => b.count > 0)) window = [...now].map(([le, count]) => ({ le, count }));
  const p50 = histogramQuantile(0.5, window);
  const p99 = histogramQuantile(0.99, window);
  return p50 === undefined || p99 === undefined ? null : { p50: p50 * 1000, p99: p99 * 1000 };
}

/** The summary and the alert conditions of alerts/eoswatch.rules.yml that hold (without their `for:` durations). */
export function summarize(input: StatusInput): StatusSummary {
  const m = input.current.metrics;
  const p = input.previous?.metrics;
  const windowSeconds = input.previous ? (input.current.atMs - input.previous.atMs) / 1000 : null;
  const increase = (name: string, labels: Record<string, string> = {}) => (p ? Math.max(0, sum(m, name, labels) - sum(p, name, labels)) : 0);
  const perSecond = (name: string, labels: Record<string, string>) => (windowSeconds ? increase(name, labels) / windowSeconds : null);
  const pipelineUp = first(m, 'eos_pipeline_up');
  const lastCompleted = first(m, 'eos_checkpoint_last_completed_timestamp_seconds');
  const interval = first(m, 'eos_checkpoint_interval_seconds');
  const kafkaUp = first(m, 'eos_kafka_up');
  const canaryOn = of(m, 'eos_canary_records_total').length > 0;
  const canary = (result: string) => sum(m, 'eos_canary_records_total', { result });
  const worstLag = max(m, 'eos_partition_lso_lag_records');
  const failing = input.audit?.findings ?? [];

  const summary: StatusSummary = {
    url: input.url,
    at: new Date(input.current.atMs).toISOString(),
    windowSeconds,
    ready: input.ready ? input.ready.ok : null,
    kafka: { up: kafkaUp === undefined ? null : kafkaUp === 1, brokers: first(m, 'eos_kafka_brokers') ?? null },
    pipeline: {
      name: of(m, 'eos_pipeline_up')[0]?.labels.pipeline ?? null,
      up: pipelineUp === undefined ? null : pipelineUp === 1,
      recordsIn: sum(m, 'eos_pipeline_records_total', { direction: 'in' }),
      recordsOut: sum(m, 'eos_pipeline_records_total', { direction: 'out' }),
      deadLetters: sum(m, 'eos_pipeline_records_total', { direction: 'dlq' }),
      inPerSecond: perSecond('eos_pipeline_records_total', { direction: 'in' }),
      outPerSecond: perSecond('eos_pipeline_records_total', { direction: 'out' }),
      checkpointsCompleted: sum(m, 'eos_checkpoints_total', { outcome: 'completed' }),
      checkpointsFailed: sum(m, 'eos_checkpoints_total', { outcome: 'failed' }) + sum(m, 'eos_checkpoints_total', { outcome: 'timeout' }),
      consecutiveFailures: sum(m, 'eos_checkpoint_consecutive_failures'),
      pending: sum(m, 'eos_checkpoints_pending'),
      lastCompletedSecondsAgo: lastCompleted ? Math.max(0, input.current.atMs / 1000 - lastCompleted) : null,
      commitLatencyMs: commitLatency(m, p),
    },
    lso: {
      maxLagRecords: worstLag?.value ?? 0,
      worstPartition: worstLag && worstLag.value > 0 ? `${worstLag.labels.topic}-${worstLag.labels.partition}` : null,
      maxStuckSeconds: max(m, 'eos_partition_lso_stuck_seconds')?.value ?? 0,
    },
    canary: canaryOn
      ? { sent: canary('sent'), received: canary('received'), duplicates: canary('duplicate'), lost: canary('lost'), outOfOrder: canary('out_of_order'), wrongValue: canary('wrong_value') }
      : null,
    audit: input.audit?.summary ? { critical: input.audit.summary.critical, warning: input.audit.summary.warning, failing } : null,
    alerts: [],
  };

  const alerts = summary.alerts;
  const s = summary.pipeline;
  if (s.commitLatencyMs && s.commitLatencyMs.p99 > 500) alerts.push({ alert: 'EosTransactionCommitLatencyHigh', detail: `commit latency p99 ${fmtMs(s.commitLatencyMs.p99)} > 500 ms` });
  if (s.pending > 1) alerts.push({ alert: 'EosCheckpointsPendingHigh', detail: `${s.pending} checkpoints pending > 1` });
  const failedInWindow = increase('eos_checkpoints_total', { outcome: 'failed' }) + increase('eos_checkpoints_total', { outcome: 'timeout' });
  if (s.consecutiveFailures > 0 || failedInWindow > 0) alerts.push({ alert: 'EosCheckpointFailing', detail: `${s.consecutiveFailures} consecutive failed checkpoints, ${failedInWindow} failed in the window` });
  if (s.up === true && s.lastCompletedSecondsAgo !== null && interval && s.lastCompletedSecondsAgo > 3 * interval) {
    alerts.push({ alert: 'EosCheckpointStalled', detail: `last checkpoint ${s.lastCompletedSecondsAgo.toFixed(0)} s ago > 3 × ${interval} s` });
  }
  if (s.up === false) alerts.push({ alert: 'EosPipelineDown', detail: 'eos_pipeline_up 0' });
  // The canary counts since eoswatch started: no duplicate or loss is ever expected (the alerts look at 10 minutes).
  if (summary.canary && summary.canary.duplicates > 0) alerts.push({ alert: 'EosDuplicatesDetected', detail: `${summary.canary.duplicates} canary duplicates since start` });
  if (summary.canary && summary.canary.lost > 0) alerts.push({ alert: 'EosDataLossDetected', detail: `${summary.canary.lost} canary records lost since start` });
  const critical = of(m, 'eos_audit_check_passed', { severity: 'critical' }).filter((x) => x.value === 0);
  if (critical.length) alerts.push({ alert: 'EosConfigAuditCritical', detail: `${critical.length} critical audit finding${critical.length === 1 ? '' : 's'}, first ${critical[0]!.labels.check} (${critical[0]!.labels.target})` });
  const hanging = of(m, 'eos_partition_lso_stuck_seconds').filter(
    (x) => x.value > 300 && of(m, 'eos_partition_lso_lag_records', { topic: x.labels.topic!, partition: x.labels.partition! }).some((l) => l.value > 0),
  );
  if (hanging.length) alerts.push({ alert: 'EosHangingTransaction', detail: hanging.map((x) => `${x.labels.topic}-${x.labels.partition} stuck ${x.value.toFixed(0)} s`).join(', ') });
  const fenced = increase('eos_producer_fenced_total');
  if (fenced > 0) alerts.push({ alert: 'EosProducerFenced', detail: `${fenced} producers fenced in the window` });
  if (summary.kafka.up === false) alerts.push({ alert: 'EosKafkaUnreachable', detail: 'eos_kafka_up 0' });
  return summary;
}

export function fmtMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms < 10 ? ms.toFixed(1) : ms.toFixed(0)} ms`;
}

const n = (x: number): string => Math.round(x).toLocaleString('en-US');
const rate = (x: number | null): string => (x === null ? '' : ` (${n(x)}/s)`);

/** The summary as a few aligned lines for a terminal. */
export function formatSummary(s: StatusSummary): string {
  const p = s.pipeline;
  const lines: [string, string][] = [
    ['eoswatch', `${s.url}  ${s.ready === null ? '' : s.ready ? 'ready' : 'NOT READY'}  Kafka ${s.kafka.up === null ? 'unknown' : s.kafka.up ? `up${s.kafka.brokers ? ` (${s.kafka.brokers} broker${s.kafka.brokers === 1 ? '' : 's'})` : ''}` : 'UNREACHABLE'}`],
  ];
  if (p.up !== null) {
    lines.push(
      ['pipeline', `${p.name ?? ''} ${p.up ? 'up' : 'DOWN'}  records in ${n(p.recordsIn)}${rate(p.inPerSecond)}  out ${n(p.recordsOut)}${rate(p.outPerSecond)}  dead letters ${n(p.deadLetters)}`],
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
  lines.push(['alerts', s.alerts.length ? s.alerts.map((a) => `${a.alert}: ${a.detail}`).join('; ') : 'none']);
  const w = Math.max(...lines.map(([k]) => k.length));
  return `${lines.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n')}\n`;
}
