import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePrometheusText } from '../../src/metrics/text-format.js';
import { formatSummary, histogramQuantile, summarize } from '../../src/status/summary.js';

const buckets = (name: string, counts: [string, number][]) => counts.map(([le, c]) => `${name}_bucket{le="${le}",pipeline="p"} ${c}`).join('\n');

function metrics(o: { in: number; out: number; completed: number; failed?: number; pending?: number; lastCompleted: number; commit: [string, number][]; dup?: number; lost?: number; lag?: number; stuck?: number; critical?: boolean; up?: number; kafka?: number; fenced?: number }): string {
  return [
    `eos_pipeline_up{pipeline="p"} ${o.up ?? 1}`,
    `eos_kafka_up ${o.kafka ?? 1}`,
    `eos_kafka_brokers 3`,
    `eos_pipeline_records_total{pipeline="p",direction="in"} ${o.in}`,
    `eos_pipeline_records_total{pipeline="p",direction="out"} ${o.out}`,
    `eos_pipeline_records_total{pipeline="p",direction="dlq"} 0`,
    `eos_checkpoints_total{pipeline="p",outcome="completed"} ${o.completed}`,
    `eos_checkpoints_total{pipeline="p",outcome="failed"} ${o.failed ?? 0}`,
    `eos_checkpoints_total{pipeline="p",outcome="timeout"} 0`,
    `eos_checkpoint_consecutive_failures{pipeline="p"} 0`,
    `eos_checkpoints_pending{pipeline="p"} ${o.pending ?? 0}`,
    `eos_checkpoint_interval_seconds{pipeline="p"} 1`,
    `eos_checkpoint_last_completed_timestamp_seconds{pipeline="p"} ${o.lastCompleted}`,
    `eos_producer_fenced_total{pipeline="p"} ${o.fenced ?? 0}`,
    buckets('eos_kafka_transaction_commit_latency_seconds', o.commit),
    `eos_partition_lso_lag_records{pipeline="p",topic="out",partition="0"} 0`,
    `eos_partition_lso_lag_records{pipeline="p",topic="out",partition="1"} ${o.lag ?? 0}`,
    `eos_partition_lso_stuck_seconds{pipeline="p",topic="out",partition="1"} ${o.stuck ?? 0}`,
    ...['sent', 'received', 'duplicate', 'lost', 'out_of_order', 'wrong_value'].map(
      (r) => `eos_canary_records_total{pipeline="p",result="${r}"} ${r === 'duplicate' ? (o.dup ?? 0) : r === 'lost' ? (o.lost ?? 0) : r === 'sent' ? 100 : r === 'received' ? 98 : 0}`,
    ),
    `eos_audit_check_passed{check="topic.replication-factor",target="topic:out",severity="critical"} ${o.critical ? 0 : 1}`,
    '',
  ].join('\n');
}

test('histogram_quantile interpolates within a bucket like Prometheus', () => {
  const b = [{ le: 0.01, count: 50 }, { le: 0.1, count: 100 }, { le: Infinity, count: 100 }];
  assert.equal(histogramQuantile(0.5, b), 0.01);
  assert.ok(Math.abs(histogramQuantile(0.99, b)! - 0.0982) < 1e-9);
  assert.equal(histogramQuantile(0.5, [{ le: 0.1, count: 0 }]), undefined);
});

test('a healthy pipeline: rates over the window, latency of the window, no alert', () => {
  const t0 = 1_000_000_000_000;
  const prev = { atMs: t0, metrics: parsePrometheusText(metrics({ in: 1000, out: 1000, completed: 10, lastCompleted: t0 / 1000, commit: [['0.01', 0], ['0.1', 10], ['1', 10], ['+Inf', 10]] })) };
  const cur = { atMs: t0 + 5000, metrics: parsePrometheusText(metrics({ in: 2000, out: 1990, completed: 15, lastCompleted: t0 / 1000 + 4.5, commit: [['0.01', 5], ['0.1', 15], ['1', 15], ['+Inf', 15]] })) };
  const s = summarize({ url: 'http://x', current: cur, previous: prev, ready: { ok: true }, audit: { summary: { critical: 0, warning: 0 }, findings: [] } });
  assert.equal(s.pipeline.inPerSecond, 200);
  assert.equal(s.pipeline.outPerSecond, 198);
  assert.equal(s.pipeline.lastCompletedSecondsAgo, 0.5);
  assert.deepEqual(s.pipeline.commitLatencyMs, { p50: 5, p99: 9.9 }, 'only the 5 commits of the window (all below 10 ms)');
  assert.deepEqual(s.canary, { sent: 100, received: 98, duplicates: 0, lost: 0, outOfOrder: 0, wrongValue: 0 });
  assert.deepEqual(s.alerts, []);
  const text = formatSummary(s);
  assert.match(text, /^pipeline\s+p up {2}records in 2,000 \(200\/s\) {2}out 1,990 \(198\/s\)/m);
  assert.match(text, /^alerts\s+none$/m);
});

test('each alert condition of alerts/eoswatch.rules.yml is reported', () => {
  const t0 = 2_000_000_000_000;
  const base = { in: 10, out: 10, completed: 5, lastCompleted: t0 / 1000 - 10, commit: [['0.1', 0], ['1', 10], ['+Inf', 10]] as [string, number][] };
  const prev = { atMs: t0 - 5000, metrics: parsePrometheusText(metrics({ ...base, commit: [['0.1', 0], ['1', 0], ['+Inf', 0]] })) };
  const cur = { atMs: t0, metrics: parsePrometheusText(metrics({ ...base, failed: 1, pending: 2, dup: 1, lost: 2, lag: 7, stuck: 301, critical: true, kafka: 0, fenced: 1 })) };
  const s = summarize({ url: 'http://x', current: cur, previous: prev });
  assert.deepEqual(s.alerts.map((a) => a.alert).sort(), [
    'EosCheckpointFailing', 'EosCheckpointStalled', 'EosCheckpointsPendingHigh', 'EosConfigAuditCritical', 'EosDataLossDetected',
    'EosDuplicatesDetected', 'EosHangingTransaction', 'EosKafkaUnreachable', 'EosProducerFenced', 'EosTransactionCommitLatencyHigh',
  ]);
  assert.equal(s.lso.worstPartition, 'out-1');
  const down = summarize({ url: 'http://x', current: { atMs: t0, metrics: parsePrometheusText(metrics({ ...base, up: 0 })) } });
  assert.ok(down.alerts.some((a) => a.alert === 'EosPipelineDown'));
  assert.ok(!down.alerts.some((a) => a.alert === 'EosCheckpointStalled'), 'a stalled checkpoint needs the pipeline up, as in the rule');
});
