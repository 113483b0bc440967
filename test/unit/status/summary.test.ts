import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { parsePrometheusText } from '../../../src/metrics/text-format.js';
import { formatSummary, histogramQuantile, summarize } from '../../../src/status/summary.js';
import { AlertTimers, fmtState, type Condition } from '../../../src/status/alert-timers.js';
import { MIRRORED_RULES } from '../../../src/status/alert-rules.js';
import { baseline, chartPoint, pointOf, Ring, type Point } from '../../../src/status/history.js';

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
  const s = summarize({ url: 'http://x', current: cur, history: [pointOf(prev.atMs, prev.metrics)], ready: { ok: true }, audit: { summary: { critical: 0, warning: 0 }, findings: [] } });
  assert.equal(s.windowSeconds, 5, 'the history holds 5 s: the rates say so');
  assert.equal(s.nominalWindowSeconds, 60);
  assert.equal(s.pipeline.inPerSecond, 200);
  assert.equal(s.pipeline.outPerSecond, 198);
  assert.equal(s.pipeline.lastCompletedSecondsAgo, 0.5);
  assert.deepEqual(s.pipeline.commitLatencyMs, { p50: 5, p99: 9.9 }, 'only the 5 commits of the window (all below 10 ms)');
  assert.deepEqual(s.canary, { sent: 100, received: 98, duplicates: 0, lost: 0, outOfOrder: 0, wrongValue: 0 });
  assert.deepEqual(s.alerts, []);
  const text = formatSummary(s);
  assert.match(text, /^pipeline\s+p up {2}records in 2,000 \(200\/s\) {2}out 1,990 \(198\/s\) {2}dead letters 0 {2}\(rates over 5 s\)/m);
  assert.match(text, /^alerts\s+none$/m);
});

test('each alert condition of alerts/eoswatch.rules.yml is reported', () => {
  const t0 = 2_000_000_000_000;
  const base = { in: 10, out: 10, completed: 5, lastCompleted: t0 / 1000 - 10, commit: [['0.1', 0], ['1', 10], ['+Inf', 10]] as [string, number][] };
  const prev = { atMs: t0 - 5000, metrics: parsePrometheusText(metrics({ ...base, commit: [['0.1', 0], ['1', 0], ['+Inf', 0]] })) };
  const cur = { atMs: t0, metrics: parsePrometheusText(metrics({ ...base, failed: 1, pending: 2, dup: 1, lost: 2, lag: 7, stuck: 301, critical: true, kafka: 0, fenced: 1 })) };
  const s = summarize({ url: 'http://x', current: cur, history: [pointOf(prev.atMs, prev.metrics)] });
  assert.deepEqual(s.alerts.map((a) => a.alert).sort(), [
    'EosCheckpointFailing', 'EosCheckpointStalled', 'EosCheckpointsPendingHigh', 'EosConfigAuditCritical', 'EosDataLossDetected',
    'EosDuplicatesDetected', 'EosHangingTransaction', 'EosKafkaUnreachable', 'EosProducerFenced', 'EosTransactionCommitLatencyHigh',
  ]);
  assert.equal(s.lso.worstPartition, 'out-1');
  const down = summarize({ url: 'http://x', current: { atMs: t0, metrics: parsePrometheusText(metrics({ ...base, up: 0 })) } });
  assert.ok(down.alerts.some((a) => a.alert === 'EosPipelineDown'));
  assert.ok(!down.alerts.some((a) => a.alert === 'EosCheckpointStalled'), 'a stalled checkpoint needs the pipeline up, as in the rule');
});

test('every mirrored alert exists in alerts/eoswatch.rules.yml with the same for:', () => {
  const doc = parseYaml(readFileSync(new URL('../../../alerts/eoswatch.rules.yml', import.meta.url), 'utf8')) as { groups: { rules: { alert: string; for?: string }[] }[] };
  const rules = new Map(doc.groups.flatMap((g) => g.rules).map((r) => [r.alert, r.for]));
  const ms = (d: string | undefined) => (d === undefined ? 0 : Number(/^(\d+)m$/.exec(d)?.[1] ?? NaN) * 60_000 || Number(/^(\d+)s$/.exec(d)?.[1] ?? NaN) * 1000);
  for (const [name, { forMs }] of Object.entries(MIRRORED_RULES)) {
    assert.ok(rules.has(name), `${name} is a rule`);
    assert.equal(forMs, ms(rules.get(name)), `${name}: for: ${rules.get(name) ?? 'none'}`);
  }
});

const cond = (alert: Condition['alert']): Condition => ({ alert, detail: 'x' });
const MIN = 60_000;

test('a condition that holds 4 min of a 5 min for: and clears is never firing', () => {
  const t = new AlertTimers();
  let now = 0;
  for (; now <= 4 * MIN; now += 5000) {
    const [a] = t.evaluate([cond('EosTransactionCommitLatencyHigh')], now);
    assert.equal(a!.state, 'pending', `at ${now / 1000} s`);
    assert.equal(a!.heldSeconds, now / 1000);
    assert.equal(a!.forSeconds, 300);
  }
  assert.deepEqual(t.evaluate([], now), []);
  assert.equal(t.evaluate([cond('EosTransactionCommitLatencyHigh')], now + 5000)[0]!.state, 'pending', 'holding again starts from zero');
});

test('a condition that holds for its whole for: fires; one without for: fires at once', () => {
  const t = new AlertTimers();
  for (let now = 0; now < 5 * MIN; now += 5000) assert.equal(t.evaluate([cond('EosCheckpointsPendingHigh')], now)[0]!.state, 'pending');
  const [a] = t.evaluate([cond('EosCheckpointsPendingHigh')], 5 * MIN);
  assert.equal(a!.state, 'firing');
  assert.equal(a!.activeSince, new Date(0).toISOString());
  assert.equal(fmtState(a!), 'firing for 5m');
  const [b] = new AlertTimers().evaluate([cond('EosConfigAuditCritical')], 123);
  assert.equal(b!.state, 'firing');
});

test('a flapping condition restarts its timer at each break, as Prometheus does', () => {
  const t = new AlertTimers();
  let now = 0;
  // Holds 50 s, breaks for one evaluation, again and again: 1 min of for: is never reached.
  for (let round = 0; round < 10; round++) {
    for (let i = 0; i < 10; i++, now += 5000) assert.equal(t.evaluate([cond('EosCheckpointStalled')], now)[0]!.state, 'pending');
    t.evaluate([cond('EosKafkaUnreachable')], now);
    now += 5000;
  }
  const [a] = t.evaluate([cond('EosCheckpointStalled')], now);
  assert.equal(a!.heldSeconds, 0);
  assert.equal(fmtState(a!), 'pending 0 s of 1m');
  // EosKafkaUnreachable held at the last break but not at the evaluation after it: it starts over too.
  assert.equal(fmtState(t.evaluate([cond('EosKafkaUnreachable')], now + 5000)[0]!), 'pending 0 s of 2m');
  assert.equal(fmtState(t.evaluate([cond('EosKafkaUnreachable')], now + 17_000)[0]!), 'pending 12 s of 2m');
});

test('the summary judges with the timers it is given: pending, then firing, counted in firing', () => {
  const t0 = 3_000_000_000_000;
  const slow: [string, number][] = [['0.5', 0], ['1', 100], ['+Inf', 100]];
  const reading = (at: number, commits: number) => ({ atMs: at, metrics: parsePrometheusText(metrics({ in: 0, out: 0, completed: 1, lastCompleted: at / 1000, commit: slow.map(([le, c]) => [le, c * commits] as [string, number]) })) });
  const timers = new AlertTimers();
  const history: Point[] = [];
  let s;
  for (let i = 0; i <= 60; i++) {
    const r = reading(t0 + i * 5000, i + 1);
    s = summarize({ url: '', current: r, history }, timers);
    history.push(pointOf(r.atMs, r.metrics));
    const a = s.alerts.find((x) => x.alert === 'EosTransactionCommitLatencyHigh')!;
    assert.equal(a.state, i * 5 >= 300 ? 'firing' : 'pending', `after ${i * 5} s`);
    assert.equal(s.firing, s.alerts.filter((x) => x.state === 'firing').length);
  }
  assert.match(formatSummary(s!), /EosTransactionCommitLatencyHigh \(firing for 5m\): commit latency p99 \d+ ms > 500 ms over 5 min/);
});

test('stalled is judged per pipeline, with its own interval and only while it is up', () => {
  const at = 4_000_000_000_000;
  const text = [
    'eos_pipeline_up{pipeline="k",engine="kafka"} 1',
    'eos_checkpoint_interval_seconds{pipeline="k",engine="kafka"} 1',
    `eos_checkpoint_last_completed_timestamp_seconds{pipeline="k",engine="kafka"} ${at / 1000 - 2}`,
    'eos_pipeline_up{pipeline="f",engine="flink",job_id="j"} 1',
    'eos_checkpoint_interval_seconds{pipeline="f",engine="flink",job_id="j"} 60',
    `eos_checkpoint_last_completed_timestamp_seconds{pipeline="f",engine="flink",job_id="j"} ${at / 1000 - 100}`,
    '',
  ].join('\n');
  // f: 100 s ago, 60 s interval: not stalled (it would be against k's 1 s interval); k: 2 s ago < 3 s.
  assert.deepEqual(summarize({ url: '', current: { atMs: at, metrics: parsePrometheusText(text) } }).alerts, []);
  const later = summarize({ url: '', current: { atMs: at + 90_000, metrics: parsePrometheusText(text) } }).alerts;
  assert.equal(later.length, 1);
  assert.match(later[0]!.detail, /^k: last checkpoint 92 s ago > 3 × 1 s, f: last checkpoint 190 s ago > 3 × 60 s$/);
  assert.equal(later[0]!.state, 'pending', 'for: 1m');
});

test('a Flink job without record counts shows n/a, not 0', () => {
  const text = 'eos_pipeline_up{pipeline="f",engine="flink",job_id="j"} 1\neos_checkpoints_total{pipeline="f",engine="flink",job_id="j",outcome="completed"} 7\n';
  const s = summarize({ url: 'u', current: { atMs: 1000, metrics: parsePrometheusText(text) } });
  assert.equal(s.pipeline.recordsIn, null);
  assert.equal(s.pipeline.inPerSecond, null);
  assert.match(formatSummary(s), /^pipeline\s+f up {2}records in\/out n\/a \(not polled from Flink\)$/m);
});

test('canary duplicates count over the rule\'s 10 minutes, from zero while the history is shorter', () => {
  const m = (dup: number) => parsePrometheusText(`eos_canary_records_total{result="duplicate"} ${dup}\n`);
  const pts: Point[] = [];
  for (let i = 0; i <= 12 * 12; i++) pts.push(pointOf(i * 5000, m(i < 12 ? 0 : 1)));
  // One duplicate, counted at 1 min: it shows for 10 minutes, then no longer.
  assert.equal(summarize({ url: '', current: { atMs: 10.5 * MIN, metrics: m(1) }, history: pts.filter((p) => p.atMs < 10.5 * MIN) }).alerts[0]?.alert, 'EosDuplicatesDetected');
  assert.equal(summarize({ url: '', current: { atMs: 5 * MIN, metrics: m(1) }, history: pts.filter((p) => p.atMs < 5 * MIN) }).alerts[0]?.alert, 'EosDuplicatesDetected');
  assert.deepEqual(summarize({ url: '', current: { atMs: 12 * MIN, metrics: m(1) }, history: pts.filter((p) => p.atMs < 12 * MIN) }).alerts, []);
});

test('the ring keeps a fixed number of the newest points; the baseline is the newest one at least a window old', () => {
  const r = new Ring<number>(3);
  for (let i = 1; i <= 5; i++) r.push(i);
  assert.deepEqual(r.toArray(), [3, 4, 5]);
  assert.equal(r.length, 3);
  assert.equal(r.last(), 5);
  assert.throws(() => new Ring(0), /capacity must be a positive integer, found 0/);
  const pts = [0, 5, 10, 60, 65, 70].map((s) => pointOf(s * 1000, parsePrometheusText('')));
  assert.equal(baseline(pts, 70_000, 60_000)!.atMs, 10_000);
  assert.equal(baseline(pts, 64_000, 60_000)!.atMs, 0);
  assert.equal(baseline(pts, 30_000, 60_000)!.atMs, 0, 'shorter history: the oldest point');
  assert.equal(baseline(pts, 0, 60_000), undefined);
  assert.equal(baseline([], 10, 60_000), undefined);
});

test('chart points: rates per second and per minute over their window, latency of its commits', () => {
  const a = pointOf(0, parsePrometheusText(metrics({ in: 0, out: 0, completed: 0, failed: 0, lastCompleted: 0, commit: [['0.01', 0], ['0.1', 0], ['+Inf', 0]] })));
  const b = pointOf(60_000, parsePrometheusText(metrics({ in: 600, out: 1200, completed: 30, failed: 2, pending: 1, lag: 9, lastCompleted: 0, commit: [['0.01', 10], ['0.1', 20], ['+Inf', 20]] })));
  assert.deepEqual(chartPoint(a, b), { at: 60_000, inPerSecond: 10, outPerSecond: 20, completedPerMinute: 30, failedPerMinute: 2, commitP50Ms: 10, commitP99Ms: 98.2, pending: 1, lsoLag: 9 });
  assert.equal(chartPoint(undefined, b).inPerSecond, null);
});

test('the sampler keeps a fixed history and serves the same judgement to every reader', async () => {
  const { createRegistry } = await import('../../../src/metrics/registry.js');
  const { pipelineMetrics } = await import('../../../src/metrics/pipeline.js');
  const { StatusSampler } = await import('../../../src/status/sampler.js');
  const registry = createRegistry();
  const m = pipelineMetrics(registry);
  const labels = { pipeline: 'p', engine: 'kafka', job_id: '' };
  m.up.set(labels, 1);
  m.checkpointsPending.set(labels, 2);
  let now = 1_700_000_000_000;
  const sampler = new StatusSampler({ registry, readiness: () => ({ ready: true, services: {} }), now: () => now, stepMs: 5000, keepMs: 60_000 });
  for (let i = 0; i < 40; i++, now += 5000) {
    m.records.inc({ ...labels, direction: 'in' }, 500);
    await sampler.sample();
  }
  const h = sampler.history();
  assert.equal(h.points.length, 12, '60 s of 5 s steps, however long it ran');
  assert.equal(h.points[11]!.at - h.points[0]!.at, 55_000);
  assert.equal(h.points[11]!.inPerSecond, 100);
  assert.equal(sampler.history(h.points[9]!.at).points.length, 2, '?since: only the newer points');
  const s = sampler.summary()!;
  assert.equal(s.windowSeconds, 60, 'the 12 points before the last one reach back 60 s');
  assert.equal(s.pipeline.inPerSecond, 100);
  const pending = s.alerts.find((a) => a.alert === 'EosCheckpointsPendingHigh')!;
  assert.equal(pending.state, 'pending');
  assert.equal(pending.heldSeconds, 195, 'held since the first sample, 39 × 5 s ago');
  assert.equal(s.firing, 0);
});

test('the sampler reads the metric objects, not a render: the same summaries as from the registry\'s /metrics text, alert timers and history included', async () => {
  const { createRegistry } = await import('../../../src/metrics/registry.js');
  const { pipelineMetrics } = await import('../../../src/metrics/pipeline.js');
  const { lsoMetrics } = await import('../../../src/metrics/lso.js');
  const { StatusSampler } = await import('../../../src/status/sampler.js');
  const registry = createRegistry();
  const m = pipelineMetrics(registry);
  const lso = lsoMetrics(registry);
  const labels = { pipeline: 'p"1', engine: 'eoswatch', job_id: '' };
  let now = 1_700_000_000_000;
  m.up.set(labels, 1);
  m.checkpointInterval.set(labels, 1);
  m.checkpointsPending.set(labels, 2);
  const sampler = new StatusSampler({ registry, readiness: () => ({ ready: true, services: {} }), now: () => now, stepMs: 5000, keepMs: 60_000 });
  const timers = new AlertTimers();
  const points: Point[] = [];
  for (let step = 0; step < 3; step++, now += 5000) {
    m.records.inc({ ...labels, direction: 'in' }, 500 * step);
    m.records.inc({ ...labels, direction: 'out' }, 400 * step);
    m.checkpoints.inc({ ...labels, outcome: step === 2 ? 'failed' : 'completed' });
    m.lastCompleted.set(labels, now / 1000 - 4 * step);
    for (let i = 0; i < 10 * step; i++) m.commitLatency.observe(labels, 0.002 * i);
    lso.lag.set({ pipeline: 'p"1', topic: 'out\\n', partition: '3' }, 7 * step);
    lso.stuck.set({ pipeline: 'p"1', topic: 'out\\n', partition: '3' }, 301 * step);
    await sampler.sample();
    const text = parsePrometheusText(await registry.metrics());
    const expected = summarize({ url: '', current: { atMs: now, metrics: text }, history: points, ready: { ok: true, services: {} } }, timers);
    points.push(pointOf(now, text));
    assert.deepEqual(sampler.summary(), expected, `sample ${step + 1}`);
  }
  const s = sampler.summary()!;
  assert.deepEqual(
    s.alerts.map((a) => a.alert).sort(),
    ['EosCheckpointFailing', 'EosCheckpointStalled', 'EosCheckpointsPendingHigh', 'EosHangingTransaction'],
    'what the comparison covered',
  );
  assert.equal(s.lso.worstPartition, 'out\\n-3');
  assert.equal(s.pipeline.inPerSecond, 150, '(500 × 1 + 500 × 2) records over the 10 s of history');
  assert.ok(s.pipeline.commitLatencyMs !== null);
});

test('the page script is valid JavaScript and loads nothing from elsewhere', async () => {
  const { PAGE_SCRIPT } = await import('../../../src/http/status-page.js');
  const vm = await import('node:vm');
  assert.doesNotThrow(() => new vm.Script(PAGE_SCRIPT));
  assert.doesNotMatch(PAGE_SCRIPT, /https?:\/\/(?!www\.w3\.org\/2000\/svg)/, 'no CDN, no outside address');
});

test('the transactions service\'s report: the oldest open and hanging transactions named, the hanging one as its alert', () => {
  const t0 = 3_000_000_000_000;
  const text = `${metrics({ in: 1, out: 1, completed: 1, lastCompleted: t0 / 1000, commit: [['+Inf', 0]] })}eos_coordinator_hanging_transaction_info{application="orders",topic="out",partition="2",transactional_id="orders-7"} 125\n`;
  const report = {
    source: 'log',
    liveIds: 1234,
    open: 5,
    oldestOpen: ['orders-7', 'a-1', 'a-2', 'a-3'].map((id, i) => ({ transactionalId: id, application: id.split('-')[0]!, ageMs: 125_000 - i * 1000, abortDue: 'in 12m 55s', producerId: 1 })),
    hanging: ['orders-7', 'b-1', 'b-2', 'b-3', 'b-4'].map((id) => ({ transactionalId: id, application: id.split('-')[0]!, topic: 'out', partition: 2, ageMs: 125_000, heldBack: '40', abortDue: 'in 12m 55s', kind: 'idle' })),
  };
  const s = summarize({ url: 'http://x', current: { atMs: t0, metrics: parsePrometheusText(text) }, transactions: report });
  assert.deepEqual(s.transactions?.oldestOpen.map((x) => x.transactionalId), ['orders-7', 'a-1', 'a-2'], 'the 3 oldest');
  assert.deepEqual(s.transactions?.oldestOpen[0], { transactionalId: 'orders-7', application: 'orders', ageMs: 125_000, abortDue: 'in 12m 55s' }, 'only the shown fields');
  assert.equal(s.transactions?.hanging.length, 3);
  assert.equal(s.transactions?.hangingTotal, 5);
  const alert = s.alerts.find((a) => a.alert === 'EosCoordinatorHangingTransaction');
  assert.equal(alert?.detail, 'orders-7 on out-2 open 125 s');
  const out = formatSummary(s);
  assert.match(out, /^transactions\s+1,234 transactional ids, 5 open \(oldest orders-7 of orders, 125\.00 s\)$/m);
  assert.match(out, /^ {2}HANGING\s+orders-7 \(orders\) on out-2: open 125\.00 s, 40 records held back, abort in 12m 55s$/m);
  assert.match(out, /and 2 more hanging: eoswatch transactions find-hanging$/m);
  const polled = formatSummary(summarize({ url: 'http://x', current: { atMs: t0, metrics: parsePrometheusText(text) }, transactions: { ...report, source: 'poll', hanging: [] } }));
  assert.match(polled, /polling the coordinators: outcomes not counted/);
  assert.doesNotMatch(polled, /HANGING/);
  assert.equal(summarize({ url: 'http://x', current: { atMs: t0, metrics: parsePrometheusText(text) } }).transactions, null);
});

test('the watched Kafka Streams applications: health, members, the rebalance in progress or the last one timed, the group\'s lag, one line each', () => {
  const t0 = 3_000_000_000_000;
  const text = `${metrics({ in: 1, out: 1, completed: 1, lastCompleted: t0 / 1000, commit: [['+Inf', 0]] })}eos_consumer_lag_records{group="orders-app",topic="in",partition="0"} 1200\neos_consumer_lag_records{group="orders-app",topic="in",partition="1"} 34\neos_consumer_lag_records{group="other",topic="in",partition="0"} 999\n`;
  const streams = {
    applications: [
      { applicationId: 'orders-app', pipeline: 'orders-app', state: 'PreparingRebalance', up: false, members: [1, 2, 3], rebalancingSince: new Date(t0 - 12_400).toISOString(), rebalances: 3, lastRebalance: { kind: 'completed' as const, durationMs: 8040 } },
      { applicationId: 'billing', pipeline: 'Billing', state: 'Stable', up: true, members: [1], rebalancingSince: null, rebalances: 1, lastRebalance: { kind: 'unobserved' as const } },
    ],
  };
  const s = summarize({ url: 'http://x', current: { atMs: t0, metrics: parsePrometheusText(text) }, streams });
  assert.deepEqual(s.streams, [
    { applicationId: 'orders-app', pipeline: 'orders-app', state: 'PreparingRebalance', up: false, members: 3, rebalancingSeconds: 12.4, rebalances: 3, lastRebalanceSeconds: 8.04, lagRecords: 1234 },
    { applicationId: 'billing', pipeline: 'Billing', state: 'Stable', up: true, members: 1, rebalancingSeconds: null, rebalances: 1, lastRebalanceSeconds: null, lagRecords: null },
  ]);
  const out = formatSummary(s);
  assert.match(out, /^streams\s+orders-app REBALANCING for 12 s \(PreparingRebalance, 3 members\), 3 rebalances \(last 8\.0 s\), lag 1,234 records$/m);
  assert.match(out, /^streams\s+Billing \(billing\) up \(Stable, 1 member\), 1 rebalance, lag n\/a$/m);
  assert.equal(summarize({ url: 'http://x', current: { atMs: t0, metrics: parsePrometheusText(text) } }).streams, null);
  assert.equal(s.streamsFailure, null);
  const failed = formatSummary(summarize({ url: 'http://x', current: { atMs: t0, metrics: parsePrometheusText(text) }, streams: { ...streams, failure: 'The group coordinator is not available' } }));
  assert.match(failed, /^streams\s+last reading failed: The group coordinator is not available \(below: the reading before\)\nstreams\s+orders-app/m);
});
