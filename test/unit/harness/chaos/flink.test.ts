// What a Flink chaos round reads out of eoswatch's /metrics and Prometheus' alerts
// (harness/chaos/flink-observations.ts), and what each Flink scenario requires of it
// (harness/chaos/flink-scenarios.ts), on scrapes written the way eoswatch renders them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ObservationTracker, type FlinkObservations } from '../../../../harness/chaos/flink-observations.js';
import { FLINK_NETWORK_SCENARIOS, FLINK_SCENARIOS, ISOLATION_MS, SEED_FAULTS, SEED_PROTOCOL, findFlinkScenarios, seedFaultPlan, type FlinkScenarioContext } from '../../../../harness/chaos/flink-scenarios.js';
import { formatFlinkChaosMarkdown, formatFlinkChaosTable, seedFigures } from '../../../../harness/chaos/report.js';
import type { FlinkRoundResult } from '../../../../harness/chaos/flink-runner.js';

const JOB = 'flink-tm-kill-1-abc123';
const SINK = `${JOB}-out`;

/** A scrape of the round's daemon: the sink's LSO stuck seconds per partition, and the job's series. */
function scrape(o: { stuck?: number[]; up?: number; restUp?: number; restarts?: Record<string, number>; failures?: number; restored?: number; jobId?: string; extra?: string[] }): string {
  const jobId = o.jobId ?? 'j1';
  const l = (id = jobId) => `pipeline="${JOB}",engine="flink",job_id="${id}"`;
  const lines = [
    ...(o.stuck ?? []).map((v, p) => `eos_partition_lso_stuck_seconds{pipeline="eoswatch",topic="${SINK}",partition="${p}"} ${v}`),
    `eos_partition_lso_stuck_seconds{pipeline="eoswatch",topic="another-topic",partition="0"} 999`,
    `eos_flink_rest_up ${o.restUp ?? 1}`,
    ...(o.up === undefined ? [] : [`eos_pipeline_up{${l()}} ${o.up}`]),
    ...Object.entries(o.restarts ?? {}).map(([id, v]) => `eos_pipeline_restarts_total{${l(id)}} ${v}`),
    `eos_checkpoint_consecutive_failures{${l()}} ${o.failures ?? 0}`,
    `eos_checkpoint_consecutive_failures{pipeline="another-job",engine="flink",job_id="x"} 50`,
    ...(o.restored === undefined ? [] : [`eos_checkpoint_restored_id{${l()},savepoint="false"} ${o.restored}`]),
    ...(o.extra ?? []),
  ];
  return `${lines.join('\n')}\n`;
}

test('the held LSO of each killed process: its peak until the next kill, and when it dropped (Flink aborted the transaction)', () => {
  const t = new ObservationTracker(JOB, SINK, false);
  t.scrape(scrape({ stuck: [0.5, 0], up: 1 }), 'j1', 1000);
  t.processKilled('SIGKILL TaskManager', 2000);
  for (const [at, s] of [[3000, 1], [4000, 2], [10_000, 8], [20_000, 18]] as const) t.scrape(scrape({ stuck: [s, s - 1], up: 0 }), 'j1', at);
  t.scrape(scrape({ stuck: [0.4, 0], up: 1 }), 'j1', 21_000); // aborted on restore: the LSO moves
  t.scrape(scrape({ stuck: [1, 0], up: 1 }), 'j1', 22_000);
  t.processKilled('SIGKILL TaskManager', 30_000);
  t.scrape(scrape({ stuck: [0.2, 0], up: 1 }), 'j1', 31_000);
  t.scrape(scrape({ stuck: [1.5, 0] }), 'j1', 32_000);
  t.scrape(scrape({ stuck: [0.5, 0] }), 'j1', 33_000); // a drop before the hold reached 2 s is no release
  t.scrape(scrape({ stuck: [6, 0] }), 'j1', 40_000);
  const o = t.o;
  assert.deepEqual(o.lingering, [
    { fault: 'SIGKILL TaskManager', stuckMaxSeconds: 18, clearedAfterSeconds: 19 },
    { fault: 'SIGKILL TaskManager', stuckMaxSeconds: 6, clearedAfterSeconds: null },
  ]);
  assert.equal(o.lsoStuckMaxSeconds, 18, 'other topics do not count');
  assert.equal(o.jobDownSeen, true);
});

test('job down and REST down count only after they were seen up; failovers add up over the job ids of the round; consecutive failures only after the first fault', () => {
  const t = new ObservationTracker(JOB, SINK, false);
  t.scrape(scrape({ up: 0, restUp: 0, failures: 7 }), 'j1', 0); // the daemon's first scrape, before its first poll; the job's first triggers failed
  t.faultInjected(1500);
  assert.deepEqual([t.o.jobDownSeen, t.o.restUnreachableSeen], [false, false]);
  t.scrape(scrape({ up: 1, restarts: { j1: 0 } }), 'j1', 1000);
  t.scrape(scrape({ up: 1, restarts: { j1: 2 }, failures: 4 }), 'j1', 2000);
  t.scrape(scrape({ restUp: 0, failures: 1 }), 'j1', 3000); // JobManager gone: the job's series stay, REST is down
  t.scrape(scrape({ up: 1, restarts: { j2: 1 }, restored: 41, jobId: 'j2' }), 'j2', 4000); // resubmitted: a new job id
  assert.deepEqual([t.o.jobDownSeen, t.o.restUnreachableSeen, t.o.restarts, t.o.consecutiveFailuresMax, t.o.restoredFromId], [false, true, 3, 4, 41]);
});

test('visibility: mean and the bucket bounding the 99th percentile, summed over the job ids; pending at its longest', () => {
  const t = new ObservationTracker(JOB, SINK, false);
  const l = (id: string) => `pipeline="${JOB}",engine="flink",job_id="${id}"`;
  const hist = (id: string, counts: [string, number][], sum: number) => [
    ...counts.map(([le, c]) => `eos_flink_sink_visibility_latency_seconds_bucket{${l(id)},le="${le}"} ${c}`),
    `eos_flink_sink_visibility_latency_seconds_sum{${l(id)}} ${sum}`,
    `eos_flink_sink_visibility_latency_seconds_count{${l(id)}} ${counts.at(-1)![1]}`,
  ];
  t.scrape(scrape({ extra: [`eos_flink_sink_visibility_pending_seconds{${l('j1')}} 7.5`] }), 'j1', 0);
  t.scrape(scrape({ extra: [...hist('j1', [['0.5', 90], ['1', 98], ['2.5', 99], ['+Inf', 100]], 40), ...hist('j2', [['0.5', 100], ['1', 100], ['2.5', 100], ['+Inf', 100]], 20), `eos_flink_sink_visibility_pending_seconds{${l('j2')}} 0`] }), 'j2', 1000);
  assert.deepEqual(t.o.visibility, { count: 200, meanSeconds: 0.3, p99AtMostSeconds: 1, pendingMaxSeconds: 7.5 });
  const slow = new ObservationTracker(JOB, SINK, false);
  slow.scrape(scrape({ extra: hist('j1', [['0.5', 0], ['+Inf', 3]], 600) }), 'j1', 0);
  assert.deepEqual([slow.o.visibility.count, slow.o.visibility.p99AtMostSeconds], [3, null], 'beyond the last bucket: no bound');
  // Checkpoints visible after the last fault: counted from the scrape before it, a new fault starts again.
  const after = new ObservationTracker(JOB, SINK, false);
  after.scrape(scrape({ extra: hist('j1', [['+Inf', 10]], 5) }), 'j1', 0);
  after.faultInjected(500);
  assert.equal(after.o.visibleAfterLastFault, 0);
  after.scrape(scrape({ extra: hist('j1', [['+Inf', 10]], 5) }), 'j1', 1000);
  assert.equal(after.o.visibleAfterLastFault, 0, 'nothing new since the fault');
  after.scrape(scrape({ extra: [...hist('j1', [['+Inf', 12]], 6), ...hist('j2', [['+Inf', 1]], 1)] }), 'j2', 2000);
  assert.equal(after.o.visibleAfterLastFault, 3, 'over every job id of the round');
  after.faultInjected(2500);
  assert.equal(after.o.visibleAfterLastFault, 0, 'a later fault: counted from it');
  after.scrape(scrape({ extra: [...hist('j1', [['+Inf', 12]], 6), ...hist('j2', [['+Inf', 2]], 1)] }), 'j2', 3000);
  assert.equal(after.o.visibleAfterLastFault, 1);
});

test("EosCheckpointFailing's consecutive-failures clause, asked of Prometheus for the round's job", () => {
  const t = new ObservationTracker(JOB, SINK, true);
  assert.equal(t.consecutiveFailuresClause, `max by (job, instance, pipeline) (eos_checkpoint_consecutive_failures{pipeline="${JOB}"}) > 0`);
  t.clauseResult([{ metric: {}, value: [0, '2'] }], 500);
  assert.equal(t.o.consecutiveFailuresClauseSeen, false, 'before any fault: a new job\'s first triggers');
  t.faultInjected(1000);
  t.faultInjected(5000);
  t.clauseResult([{ metric: {}, value: [0, '2'] }], 999);
  t.clauseResult([], 2000);
  assert.equal(t.o.consecutiveFailuresClauseSeen, false);
  t.clauseResult([{ metric: {}, value: [0, '4'] }], 3000);
  t.clauseResult([], 4000);
  assert.equal(t.o.consecutiveFailuresClauseSeen, true, 'once seen after the first fault, it stays seen');
});

test("alerts: this job's, and firing ones without a pipeline label; EosExporterDown between rounds is not the round's", () => {
  const t = new ObservationTracker(JOB, SINK, true);
  t.alerts([
    { labels: { alertname: 'EosPipelineDown', pipeline: JOB }, state: 'pending' },
    { labels: { alertname: 'EosCheckpointFailing', pipeline: JOB }, state: 'firing' },
    { labels: { alertname: 'EosCheckpointFailing', pipeline: 'flink-earlier-round' }, state: 'firing' },
    { labels: { alertname: 'EosExporterDown', job: 'eoswatch' }, state: 'firing' },
    { labels: { alertname: 'EosFlinkRestUnreachable', job: 'eoswatch' }, state: 'pending' },
  ]);
  t.alerts([
    { labels: { alertname: 'EosFlinkRestUnreachable', job: 'eoswatch' }, state: 'firing' },
    { labels: { alertname: 'EosPipelineDown', pipeline: JOB }, state: 'pending' },
  ]);
  assert.deepEqual(t.o.alertsFired, ['EosCheckpointFailing', 'EosFlinkRestUnreachable']);
  assert.deepEqual(t.o.alertsPending, ['EosPipelineDown']);
  t.alerts([{ labels: { alertname: 'EosPipelineDown', pipeline: JOB }, state: 'firing' }]);
  assert.deepEqual(t.o.alertsPending, [], 'pending only lists alerts that never fired');
});

const observed = (o: Partial<FlinkObservations>): FlinkObservations => ({
  ...new ObservationTracker(JOB, SINK, true).o,
  ...o,
});

test('each Flink scenario fails a round whose faults left no trace in eoswatch', () => {
  const [tm, jm, broker, coordinator, ckpt] = findFlinkScenarios('tm-kill,jm-kill,broker-kill,coordinator-kill,checkpoint-failure');
  const held = { fault: 'SIGKILL TaskManager', stuckMaxSeconds: 20, clearedAfterSeconds: 25 };
  const good = observed({ lingering: [held, held, held], restarts: 3, jobDownSeen: true, alertsFired: ['EosFlinkJobRestarting'] });
  assert.deepEqual(tm!.expect(good), []);
  assert.deepEqual(tm!.expect({ ...good, prometheus: false, alertsFired: [] }), [], 'without Prometheus the alert is not asked for');
  const bad = tm!.expect(observed({ lingering: [held, { ...held, stuckMaxSeconds: 1 }, { ...held, clearedAfterSeconds: null }], restarts: 2, alertsFired: [] }));
  assert.equal(bad.length, 5, bad.join('\n'));
  assert.match(bad.join('\n'), /held for at most 1 s/);
  assert.match(bad.join('\n'), /never moved again/);
  assert.match(bad.join('\n'), /2 failovers counted/);
  assert.match(bad.join('\n'), /eos_pipeline_up never went to 0/);
  assert.match(bad.join('\n'), /EosFlinkJobRestarting did not fire/);
  assert.match(tm!.expect(observed({ lingering: [held] })).join('\n'), /3 process kills expected, 1 recorded/);

  const jmHeld = { ...held, fault: 'SIGKILL JobManager' };
  assert.deepEqual(jm!.expect(observed({ lingering: [jmHeld], restUnreachableSeen: true, restoredFromId: 12 })), []);
  assert.deepEqual(jm!.expect(observed({ lingering: [jmHeld], restUnreachableSeen: false, restoredFromId: null })), [
    'eos_flink_rest_up never went to 0 while the JobManager was gone',
    'the resubmitted job shows no restored checkpoint (eos_checkpoint_restored_id)',
  ]);
  assert.deepEqual(jm!.expect(observed({ lingering: [jmHeld], restUnreachableSeen: true, restoredFromId: 0 })), ['the resubmitted job shows no restored checkpoint (eos_checkpoint_restored_id)']);
  assert.deepEqual(jm!.expect(observed({ lingering: [jmHeld], restUnreachableSeen: true, restoredFromId: 1 })), []);

  assert.deepEqual([broker!.expect(observed({})), coordinator!.expect(observed({}))], [[], []]);

  assert.deepEqual(ckpt!.expect(observed({ consecutiveFailuresMax: 3, alertsFired: ['EosCheckpointFailing'], consecutiveFailuresClauseSeen: true })), []);
  assert.match(ckpt!.expect(observed({ consecutiveFailuresMax: 2, alertsFired: [] })).join('\n'), /reached 2, expected at least 3[\s\S]*EosCheckpointFailing did not fire[\s\S]*never saw eos_checkpoint_consecutive_failures > 0/);
  assert.deepEqual(ckpt!.expect(observed({ consecutiveFailuresMax: 9, alertsFired: ['EosCheckpointFailing'] })), ['Prometheus never saw eos_checkpoint_consecutive_failures > 0 (the first clause of EosCheckpointFailing)'], 'fired only by the trigger failures of the start');
  assert.match(ckpt!.expect(observed({ consecutiveFailuresMax: 9, prometheus: false })).join('\n'), /no live Prometheus/);
  assert.deepEqual(FLINK_SCENARIOS.map((s) => s.name), ['tm-kill', 'jm-kill', 'broker-kill', 'broker-rolling-restart', 'coordinator-kill', 'checkpoint-failure']);
  assert.throws(() => findFlinkScenarios('tm-kill,nope'), /unknown scenario "nope"; expected one of: tm-kill, jm-kill, broker-kill, broker-rolling-restart, coordinator-kill, checkpoint-failure, jm-isolated, tm-isolated, seed-protocol, all, process, network/);
});

test('the network scenarios: all stays the process faults (no root needed), network the two isolations; each fails a round that showed no failover', () => {
  assert.deepEqual(findFlinkScenarios('all').map((s) => s.name), FLINK_SCENARIOS.map((s) => s.name));
  assert.deepEqual(findFlinkScenarios('process').map((s) => s.name), FLINK_SCENARIOS.map((s) => s.name));
  assert.deepEqual(findFlinkScenarios('network').map((s) => s.name), ['jm-isolated', 'tm-isolated']);
  assert.ok(FLINK_NETWORK_SCENARIOS.every((s) => s.network) && FLINK_SCENARIOS.every((s) => !s.network));
  const [jm, tm, seed] = findFlinkScenarios('jm-isolated,tm-isolated,seed-protocol');
  const visible = { count: 10, meanSeconds: 0.5, p99AtMostSeconds: 1, pendingMaxSeconds: 0 };
  const resumed = { visibility: visible, visibleAfterLastFault: 4, consecutiveFailuresMax: 1, consecutiveFailuresClauseSeen: true };
  const held = { fault: 'TaskManager 1 isolated', stuckMaxSeconds: 30, clearedAfterSeconds: 31 };
  assert.deepEqual(jm!.expect(observed({ restarts: 1, jobDownSeen: true, ...resumed })), []);
  const bad = jm!.expect(observed({ restarts: 0, jobDownSeen: false, visibility: visible }));
  assert.deepEqual(bad, [
    '0 failovers counted (eos_pipeline_restarts_total), expected at least 1',
    'eos_pipeline_up never went to 0 while the job had lost its TaskManager',
    'no failed checkpoint counted (eos_checkpoint_consecutive_failures) while the job had lost its TaskManager',
    'no checkpoint became visible on the sink after the last fault (eos_flink_sink_visibility_latency_seconds): the job was not seen committing again',
  ]);
  assert.deepEqual(jm!.expect(observed({ restarts: 1, jobDownSeen: true, ...resumed, consecutiveFailuresClauseSeen: false })), ['Prometheus never saw eos_checkpoint_consecutive_failures > 0 after the fault (the first clause of EosCheckpointFailing)']);
  assert.deepEqual(jm!.expect(observed({ restarts: 1, jobDownSeen: true, ...resumed, consecutiveFailuresClauseSeen: false, prometheus: false })), [], 'without Prometheus only eoswatch is asked');
  assert.deepEqual(tm!.expect(observed({ restarts: 1, jobDownSeen: true, ...resumed, lingering: [held] })), []);
  assert.match(tm!.expect(observed({ restarts: 1, jobDownSeen: true, ...resumed, lingering: [{ ...held, clearedAfterSeconds: null }] })).join('\n'), /never moved again/);
  assert.match(tm!.expect(observed({ restarts: 1, jobDownSeen: true, ...resumed })).join('\n'), /1 process kills expected, 0 recorded/);
  // The seed's run: four kills and four isolations fail the job over at least eight times; the four kills each hold the LSO.
  const kills = Array.from({ length: 4 }, () => ({ ...held, fault: 'SIGKILL TaskManager' }));
  assert.deepEqual(seed!.expect(observed({ restarts: 8, jobDownSeen: true, ...resumed, lingering: kills })), []);
  assert.deepEqual(seed!.expect(observed({ restarts: 7, jobDownSeen: true, ...resumed, lingering: kills })), ['7 failovers counted (eos_pipeline_restarts_total), expected at least 8']);
  assert.equal(seed!.records, 1_000_000);
  assert.deepEqual(seed!.thresholds, { maxDuplicateRate: 0, maxLossRate: 0, maxOutOfOrderRate: 0.001 });
});

test("the seed protocol's plan: 12 faults, the kinds in turn, spread evenly over the input and none at its end", () => {
  const plan = seedFaultPlan(SEED_PROTOCOL.faultsPerKind, SEED_FAULTS.map((f) => f.name));
  assert.equal(plan.length, 12);
  assert.deepEqual(plan.slice(0, 4).map((p) => p.kind), ['tm-kill', 'jm-isolated', 'broker-rolling-restart', 'tm-kill']);
  for (const kind of ['tm-kill', 'jm-isolated', 'broker-rolling-restart']) assert.equal(plan.filter((p) => p.kind === kind).length, 4);
  assert.equal(plan[0]!.at, 1 / 13);
  assert.equal(plan[11]!.at, 12 / 13);
  for (let i = 1; i < plan.length; i++) assert.ok(plan[i]!.at > plan[i - 1]!.at);
});

/** A scenario context that records every call, in order. */
function recordingContext(calls: string[]): FlinkScenarioContext {
  return {
    brokers: [1, 2, 3],
    waitProgress: async (f: number) => void calls.push(`wait ${f.toFixed(3)}`),
    killTaskManager: async () => void calls.push('kill tm'),
    startTaskManager: async () => void calls.push('start tm'),
    isolateJobManager: async () => void calls.push('isolate jm'),
    isolateTaskManager: async () => void calls.push('isolate tm'),
    heal: async () => void calls.push('heal'),
    sleep: async (ms: number) => void calls.push(`sleep ${ms}`),
    fault: (t: string) => void calls.push(t),
    stopBroker: async (n: number) => void calls.push(`stop ${n}`),
    killBroker: async (n: number) => void calls.push(`kill ${n}`),
    startBroker: async (n: number) => void calls.push(`start ${n}`),
    waitReplicated: async () => void calls.push('in sync'),
    gateInput: (f: number | null) => void calls.push(`gate ${f === null ? 'open' : f.toFixed(3)}`),
    leaderOf: async (topic: string, p: number) => (calls.push(`leader of ${topic} ${p}`), 2),
    openTransactionCoordinator: async () => (calls.push('coordinator'), { transactionalId: 'x-0-7', broker: 3 }),
    killJobManager: async () => void calls.push('kill jm'),
    startJobManager: async () => void calls.push('start jm'),
    resubmitFromRetainedCheckpoint: async () => (calls.push('resubmit'), '/chk-7'),
    blockCheckpoints: async () => void calls.push('block'),
    unblockCheckpoints: async () => void calls.push('unblock'),
  } as unknown as FlinkScenarioContext;
}

test('each Flink scenario injects its faults in order, at its points of the committed input', async () => {
  const run = async (name: string) => {
    const calls: string[] = [];
    await findFlinkScenarios(name)[0]!.inject(recordingContext(calls));
    return calls;
  };
  assert.deepEqual(await run('tm-kill'), ['wait 0.200', 'kill tm', 'start tm', 'wait 0.450', 'kill tm', 'start tm', 'wait 0.700', 'kill tm', 'start tm']);
  assert.deepEqual(await run('jm-kill'), ['wait 0.300', 'kill jm', 'start jm', 'resubmit']);
  assert.deepEqual(await run('broker-kill'), ['wait 0.300', 'leader of sink 0', 'SIGKILL broker 2 (leader of sink partition 0)', 'kill 2', 'sleep 5000', 'start 2', 'in sync']);
  assert.deepEqual(await run('broker-rolling-restart'), ['wait 0.200', ...[1, 2, 3].flatMap((n) => [`SIGTERM broker ${n}`, `stop ${n}`, `start ${n}`, 'in sync'])]);
  assert.deepEqual(await run('coordinator-kill'), ['wait 0.300', 'coordinator', 'SIGKILL broker 3 (transaction coordinator of x-0-7)', 'kill 3', 'sleep 5000', 'start 3', 'in sync']);
  assert.deepEqual(await run('checkpoint-failure'), ['wait 0.300', 'block', 'sleep 20000', 'unblock']);
  assert.deepEqual(await run('jm-isolated'), ['wait 0.300', 'isolate jm', `sleep ${ISOLATION_MS}`, 'heal']);
  assert.deepEqual(await run('tm-isolated'), ['wait 0.300', 'isolate tm', `sleep ${ISOLATION_MS}`, 'heal']);
});

test('the scenarios say what they do: each description names its faults and their timing', () => {
  const text = (name: string) => findFlinkScenarios(name)[0]!.description;
  assert.match(text('tm-kill'), /SIGKILL at 20 %, 45 % and 70 %/);
  assert.match(text('jm-kill'), /SIGKILL at 30 % \(no HA/);
  assert.match(text('broker-kill'), /leading sink partition 0 at 30 %, restarted after 5 s/);
  assert.match(text('broker-rolling-restart'), /every broker in turn stopped with SIGTERM/);
  assert.match(text('coordinator-kill'), /coordinating the sink's open transaction/);
  assert.match(text('checkpoint-failure'), /replaced by a file for 20 s at 30 %/);
  assert.match(text('jm-isolated'), /JobManager cut off from the TaskManager .* for 20 s at 30 %, past heartbeat\.timeout/);
  assert.match(text('tm-isolated'), /TaskManager cut off from the JobManager and every broker for 20 s at 30 %/);
  assert.match(text('seed-protocol'), /12 faults spread over the input, in turn tm-kill, jm-isolated, broker-rolling-restart \(4 of each\)/);
});

test('the seed protocol injects its faults in order at their points of the committed input, the cuts healed after the isolation', async () => {
  const calls: string[] = [];
  await findFlinkScenarios('seed-protocol')[0]!.inject(recordingContext(calls));
  assert.deepEqual(calls.slice(0, 20), [
    'gate 0.115', 'wait 0.077', 'kill tm', 'start tm',
    'gate 0.192', 'wait 0.154', 'isolate jm', `sleep ${ISOLATION_MS}`, 'heal',
    'gate 0.269', 'wait 0.231', 'SIGTERM broker 1', 'stop 1', 'start 1', 'in sync', 'SIGTERM broker 2', 'stop 2', 'start 2', 'in sync', 'SIGTERM broker 3',
  ]);
  // The input is written no further than halfway to the next fault's point while one runs (the
  // last: halfway to the end), and the gate opens once the last fault is done.
  assert.deepEqual(calls.filter((c) => c.startsWith('gate')).slice(-3), ['gate 0.885', 'gate 0.962', 'gate open']);
  assert.equal(calls.at(-1), 'gate open');
  assert.equal(findFlinkScenarios('seed-protocol')[0]!.faultsMidRun, true);
  assert.ok(FLINK_SCENARIOS.every((s) => !s.faultsMidRun));
  assert.equal(calls.filter((c) => c === 'kill tm').length, 4);
  assert.equal(calls.filter((c) => c === 'heal').length, 4);
  assert.equal(calls.filter((c) => c.startsWith('stop ')).length, 12);
  assert.ok(ISOLATION_MS > 10_000, 'past the cluster\'s heartbeat.timeout');
});

test("the seed's figures: duplicates and order over the sink's total, losses over the source's, each against its bound", () => {
  const bounds = SEED_PROTOCOL.thresholds;
  const clean = seedFigures({ records: 1_000_000, received: 1_000_000, duplicates: 0, lost: 0, orderViolations: 800 }, bounds);
  assert.deepEqual(clean.map((f) => [f.figure, f.count, f.of, f.rate, f.within]), [
    ['duplicate rate', 0, 1_000_000, 0, true],
    ['loss rate', 0, 1_000_000, 0, true],
    ['out-of-order rate', 800, 1_000_000, 0.0008, true],
  ]);
  const bad = seedFigures({ records: 1000, received: 990, duplicates: 10, lost: 10, orderViolations: 2 }, bounds);
  assert.deepEqual(bad.map((f) => [f.count, f.of, f.within]), [[10, 1000, false], [10, 1000, false], [2, 1000, false]]);
  assert.equal(bad[2]!.rate, 0.002);
  assert.equal(seedFigures({ records: 1000, received: 1000, duplicates: 0, lost: 0, orderViolations: 1 }, bounds)[2]!.within, true, 'exactly 0.1 % is within');
  assert.deepEqual(seedFigures({ records: 0, received: 0, duplicates: 0, lost: 0, orderViolations: 0 }, bounds).map((f) => f.within), [false, false, false], 'an empty sink proves nothing');
});

test('the Flink report: per round the verdict figures and what eoswatch saw, misses spelled out', () => {
  const r = {
    scenario: 'tm-kill', round: 1, flinkVersion: '1.20.3', records: 10000, received: 10000, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0,
    abortedRecords: 64, recoverySeconds: 3.2, outageSeconds: 41.5, worstLsoLagRecords: 120, durationSeconds: 230, supervisorRestarts: 0,
    faults: ['SIGKILL TaskManager at 20 %'],
    observed: observed({ lingering: [{ fault: 'SIGKILL TaskManager', stuckMaxSeconds: 37, clearedAfterSeconds: 38.5 }], restarts: 1, consecutiveFailuresMax: 4, visibility: { count: 40, meanSeconds: 0.61, p99AtMostSeconds: 2.5, pendingMaxSeconds: 1.5 }, alertsFired: ['EosCheckpointFailing'] }),
    missed: ['3 process kills expected, 1 recorded'], passed: false, error: '3 process kills expected, 1 recorded',
  } satisfies FlinkRoundResult;
  const run = { startedAt: 'now', kafkaVersion: '4.4.0', flinkVersion: '1.20.3', records: 10000, rounds: 1, partitions: 6, parallelism: 2, results: [r], passed: false };
  const text = formatFlinkChaosTable([run]);
  assert.match(text, /^Kafka 4\.4\.0, Flink 1\.20\.3, 10000 records per round, 6 partitions, job parallelism 2/);
  assert.match(text, /tm-kill\s+1\s+1\.20\.3\s+10000\s+0\s+0\s+0\s+64\s+41\.5 s\s+3\.2 s\s+37 s\s+4\s+1\s+0\.61 s\s+230 s\s+FAIL/);
  assert.match(text, /SIGKILL TaskManager: LSO held 37 s, released 38\.5 s after the fault; visibility latency: 40 checkpoints, mean 0\.61 s, p99 ≤ 2\.5 s, longest pending 1\.5 s/);
  assert.match(text, /alerts fired: EosCheckpointFailing; MISSED: 3 process kills expected, 1 recorded/);
  assert.match(text, /verdict: FAIL\n$/);
  const md = formatFlinkChaosMarkdown([run, { ...run, flinkVersion: '2.2.0', results: [{ ...r, flinkVersion: '2.2.0' }] }]);
  assert.match(md, /Flink 1\.20\.3 and 2\.2\.0/);
  assert.match(md, /\| tm-kill \| 1 \| 2\.2\.0 \|/);
  assert.doesNotMatch(md, /seed's table|POOLING/, 'no seed table without a seed-protocol round');
  assert.match(formatFlinkChaosTable([{ ...run, transactionNaming: 'pooling' }]), /job parallelism 2, transactional ids from a pool \(FLIP-511 POOLING\)\n/);
  const seed = { ...r, scenario: 'seed-protocol', records: 1_000_000, received: 1_000_000, orderViolations: 800, abortedRecords: 0 };
  const seedMd = formatFlinkChaosMarkdown([{ ...run, results: [seed] }]);
  assert.match(seedMd, /1000000 records per round/);
  assert.match(seedMd, /\| duplicate rate \| duplicated records \/ records at the sink \| 0 \| 0 % \(0 of 1,000,000\) \|/);
  assert.match(seedMd, /\| out-of-order rate \| .* \| ≤ 0\.100 % \| 0\.080 % \(800 of 1,000,000\) \|/);
  assert.match(formatFlinkChaosMarkdown([{ ...run, results: [{ ...seed, lost: 5 }] }]), /\| loss rate \| .* \| 0 \| 0\.001 % \(5 of 1,000,000\) \*\*over\*\* \|/);
});
