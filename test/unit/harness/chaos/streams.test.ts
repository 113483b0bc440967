// What a Kafka Streams chaos round reads out of eoswatch's /metrics and Prometheus' alerts
// (harness/chaos/streams-observations.ts), what each Streams scenario requires of it
// (harness/chaos/streams-scenarios.ts), and its report, on scrapes written the way eoswatch renders them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { noStreamsObservations, StreamsObservationTracker, type StreamsObservations } from '../../../../harness/chaos/streams-observations.js';
import { STREAMS_SCENARIOS, findStreamsScenarios } from '../../../../harness/chaos/streams-scenarios.js';
import { formatStreamsChaosMarkdown, formatStreamsChaosTable } from '../../../../harness/chaos/report.js';
import type { StreamsChaosRun, StreamsRoundResult } from '../../../../harness/chaos/streams-runner.js';
import { countVerdicts } from '../../../../harness/chaos/verdict.js';

const APP = 'streams-instance-kill-1-abc123';
const SINK = `${APP}-out`;

interface Scrape {
  stuck?: number[];
  up?: number;
  rebalances?: number;
  inProgress?: number;
  members?: number;
  lag?: number[];
  oldest?: number;
  txns?: Partial<Record<'committed' | 'aborted' | 'aborted_timeout' | 'fenced', number>>;
  fencings?: number;
}

/** A scrape of the round's daemon, with another application's series beside the round's. */
function scrape(o: Scrape): string {
  const lines = [
    ...(o.stuck ?? []).map((v, p) => `eos_partition_lso_stuck_seconds{pipeline="eoswatch",topic="${SINK}",partition="${p}"} ${v}`),
    `eos_partition_lso_stuck_seconds{pipeline="eoswatch",topic="another-topic",partition="0"} 999`,
    ...(o.up === undefined ? [] : [`eos_pipeline_up{pipeline="${APP}",engine="streams",job_id=""} ${o.up}`]),
    `eos_pipeline_up{pipeline="other",engine="streams",job_id=""} 0`,
    ...(o.rebalances === undefined ? [] : [`eos_streams_rebalances_total{application="${APP}"} ${o.rebalances}`]),
    `eos_streams_rebalances_total{application="other"} 40`,
    `eos_streams_rebalance_in_progress_seconds{application="${APP}"} ${o.inProgress ?? 0}`,
    `eos_streams_rebalance_in_progress_seconds{application="other"} 300`,
    ...(o.members === undefined ? [] : [`eos_consumer_group_members{group="${APP}"} ${o.members}`]),
    `eos_consumer_group_members{group="other"} 9`,
    ...(o.lag ?? []).map((v, p) => `eos_consumer_lag_records{group="${APP}",topic="${APP}-in",partition="${p}",pipeline="${APP}",engine="streams",job_id=""} ${v}`),
    `eos_consumer_lag_records{group="other",topic="x",partition="0",pipeline="other",engine="streams",job_id=""} 5000`,
    `eos_coordinator_oldest_open_transaction_seconds{application="${APP}"} ${o.oldest ?? 0}`,
    `eos_coordinator_oldest_open_transaction_seconds{application="other"} 500`,
    ...Object.entries(o.txns ?? {}).map(([k, v]) => `eos_coordinator_transactions_total{application="${APP}",outcome="${k}"} ${v}`),
    `eos_coordinator_transactions_total{application="other",outcome="aborted_timeout"} 70`,
    ...(o.fencings === undefined ? [] : [`eos_coordinator_fencings_total{application="${APP}"} ${o.fencings}`]),
  ];
  return `${lines.join('\n')}\n`;
}

test('counters count from startCounting: the instances\' first joins and commits before it are not the round\'s; a counter first seen after it counts whole', () => {
  const t = new StreamsObservationTracker(APP, SINK, false);
  t.scrape(scrape({ up: 1, rebalances: 2, txns: { committed: 50 } }), 1000);
  t.scrape(scrape({ up: 1, rebalances: 3, txns: { committed: 80 } }), 2000);
  assert.equal(t.o.rebalances, 0, 'nothing counted before startCounting');
  t.startCounting();
  t.scrape(scrape({ up: 1, rebalances: 3, txns: { committed: 100 } }), 3000);
  t.scrape(scrape({ up: 0, rebalances: 5, txns: { committed: 140, aborted_timeout: 1 }, fencings: 2 }), 4000);
  assert.equal(t.o.rebalances, 2);
  assert.equal(t.o.transactions.committed, 60);
  assert.equal(t.o.transactions.abortedTimeout, 1, 'first seen after the start: counted whole');
  assert.equal(t.o.fencings, 2);
  assert.equal(t.o.transactions.fenced, 0);
  // A scrape that lacks the series (a failed pass) leaves the count as it was.
  t.scrape(scrape({ up: 1 }), 5000);
  assert.equal(t.o.rebalances, 2);
  assert.equal(t.o.transactions.committed, 60);
});

test('the app down only after it was up; the group\'s members, lag, the oldest open transaction and the longest rebalance, of this application only', () => {
  const t = new StreamsObservationTracker(APP, SINK, false);
  t.scrape(scrape({ up: 0 }), 0);
  assert.equal(t.o.appDownSeen, false, 'down before it was ever up is the start, not a fault');
  t.scrape(scrape({ up: 1, members: 2, lag: [3, 4], oldest: 0.3 }), 1000);
  t.scrape(scrape({ up: 0, members: 3, lag: [30, 40, 5], oldest: 6.5, inProgress: 8 }), 2000);
  t.scrape(scrape({ up: 1, members: 2, lag: [0, 0], oldest: 0.2, inProgress: 0 }), 3000);
  const o = t.o;
  assert.equal(o.appDownSeen, true);
  assert.equal(o.membersMax, 3);
  assert.equal(o.lagMaxRecords, 75);
  assert.equal(o.openTransactionAgeMaxSeconds, 6.5);
  assert.equal(o.rebalanceMaxSeconds, 8);
});

test('the held output LSO of each killed instance: its peak until the next kill, and when it was released', () => {
  const t = new StreamsObservationTracker(APP, SINK, false);
  t.scrape(scrape({ stuck: [0.2, 0] }), 1000);
  t.processKilled('SIGKILL instance 1', 2000);
  t.scrape(scrape({ stuck: [1, 2] }), 3000);
  t.scrape(scrape({ stuck: [4, 3.5] }), 6000);
  t.scrape(scrape({ stuck: [0, 0.1] }), 7000);
  assert.deepEqual(t.o.lingering, [{ fault: 'SIGKILL instance 1', stuckMaxSeconds: 4, clearedAfterSeconds: 5 }]);
  assert.equal(t.o.lsoStuckMaxSeconds, 4, 'another topic does not count');
});

test('alerts: the application\'s (by pipeline or application label), firing ones of no pipeline; EosExporterDown between rounds is not the round\'s', () => {
  const t = new StreamsObservationTracker(APP, SINK, true);
  t.alerts([
    { labels: { alertname: 'EosStreamsRebalanceTooLong', application: APP }, state: 'pending' },
    { labels: { alertname: 'EosPipelineDown', pipeline: APP }, state: 'firing' },
    { labels: { alertname: 'EosKafkaBrokerDown' }, state: 'firing' },
    { labels: { alertname: 'EosExporterDown' }, state: 'firing' },
    { labels: { alertname: 'EosPipelineDown', pipeline: 'other' }, state: 'pending' },
    { labels: { alertname: 'EosCoordinatorTransactionsTimedOut', application: 'other' }, state: 'firing' },
  ]);
  t.alerts([{ labels: { alertname: 'EosStreamsRebalanceTooLong', application: APP }, state: 'firing' }]);
  assert.deepEqual(t.o.alertsFired, ['EosKafkaBrokerDown', 'EosPipelineDown', 'EosStreamsRebalanceTooLong']);
  assert.deepEqual(t.o.alertsPending, []);
});

function observed(over: Partial<StreamsObservations> = {}): StreamsObservations {
  return { ...noStreamsObservations(false), membersMax: 2, transactions: { committed: 100, aborted: 0, abortedTimeout: 0, fenced: 0 }, ...over };
}

test('each Streams scenario fails a round whose faults left no trace in eoswatch, and passes one that shows them', () => {
  const scenario = (name: string) => STREAMS_SCENARIOS.find((s) => s.name === name)!;
  const held = (n: number, s = 4) => Array.from({ length: n }, () => ({ fault: 'SIGKILL instance 1', stuckMaxSeconds: s, clearedAfterSeconds: 5 }));
  const kill = scenario('instance-kill');
  const ended = { committed: 300, aborted: 0, abortedTimeout: 0, fenced: 1 };
  const shown = { lingering: held(3), rebalances: 3, appDownSeen: true, transactions: ended };
  assert.deepEqual(kill.expect(observed(shown)), []);
  assert.deepEqual(kill.expect(observed({ ...shown, transactions: { ...ended, fenced: 0, abortedTimeout: 1 } })), [], 'timed out instead of fenced');
  const oneHeld = [{ fault: 'SIGKILL instance 1', stuckMaxSeconds: 0.4, clearedAfterSeconds: null }, ...held(1), { fault: 'SIGKILL instance 1', stuckMaxSeconds: 0, clearedAfterSeconds: null }];
  assert.deepEqual(kill.expect(observed({ ...shown, lingering: oneHeld })), [], 'one kill of three that caught a transaction is enough');
  assert.match(kill.expect(observed({ ...shown, rebalances: 2 })).join(), /^2 rebalances counted/, 'too few rebalances');
  assert.match(kill.expect(observed({ ...shown, lingering: held(2) })).join(), /^3 instance kills expected, 2 recorded$/);
  assert.match(kill.expect(observed({ ...shown, lingering: held(3, 1.5) })).join(), /^after no kill did the LSO monitor see the output's LSO held ≥ 2 s and then released \(1\.5 s, 1\.5 s, 1\.5 s\)$/);
  assert.match(kill.expect(observed({ ...shown, lingering: held(3).map((l) => ({ ...l, clearedAfterSeconds: null })) })).join(), /^after no kill did the LSO monitor see/, 'held but never released');
  assert.match(kill.expect(observed({ ...shown, transactions: { ...ended, fenced: 0 } })).join(), /^no transaction of the app counted fenced or aborted_timeout/);
  assert.match(kill.expect(observed({ ...shown, appDownSeen: false })).join(), /^eos_pipeline_up\{engine="streams"\} never went to 0/);
  assert.deepEqual(scenario('instance-term').expect(observed({ rebalances: 1 })), []);
  assert.equal(scenario('instance-term').expect(observed()).length, 1);
  const scale = scenario('scale-out-in');
  assert.deepEqual(scale.expect(observed({ rebalances: 2, membersMax: 3 })), []);
  assert.match(scale.expect(observed({ rebalances: 2, membersMax: 2 }))[0]!, /at most 2 members/);
  const zombie = scenario('zombie');
  assert.deepEqual(zombie.expect(observed({ rebalances: 1, transactions: { committed: 9, aborted: 0, abortedTimeout: 1, fenced: 0 } })), []);
  assert.match(zombie.expect(observed({ rebalances: 1 }))[0]!, /aborted_timeout/);
  for (const name of ['broker-kill', 'broker-rolling-restart', 'coordinator-kill']) {
    assert.deepEqual(scenario(name).expect(observed()), []);
    assert.equal(scenario(name).needsBrokers, true);
  }
  assert.deepEqual(findStreamsScenarios('all').map((s) => s.name), STREAMS_SCENARIOS.map((s) => s.name));
  assert.throws(() => findStreamsScenarios('instance-kil'), /unknown scenario "instance-kil"; expected one of: instance-kill, /);
});

test('the Streams report: per round the figures, the verdict (ERROR apart from FAIL) and what eoswatch saw, misses spelled out', () => {
  const base: StreamsRoundResult = {
    scenario: 'instance-kill',
    round: 1,
    records: 3000,
    received: 3000,
    duplicates: 0,
    lost: 0,
    unexpected: 0,
    wrongValue: 0,
    orderViolations: 0,
    abortedRecords: 41,
    recoverySeconds: 4.2,
    outageSeconds: 13.5,
    worstLsoLagRecords: 80,
    durationSeconds: 95,
    supervisorRestarts: 0,
    faults: ['SIGKILL instance 1 at 20 %'],
    observed: observed({ lingering: [{ fault: 'SIGKILL instance 1', stuckMaxSeconds: 4.5, clearedAfterSeconds: 5.1 }], rebalances: 3, appDownSeen: true, transactions: { committed: 300, aborted: 0, abortedTimeout: 0, fenced: 1 } }),
    missed: [],
    verdict: 'PASS',
    passed: true,
  };
  const failed: StreamsRoundResult = { ...base, round: 2, duplicates: 3, missed: ['2 rebalances counted (eos_streams_rebalances_total), expected at least 3'], verdict: 'FAIL', passed: false, error: '3 duplicates' };
  const harness: StreamsRoundResult = { ...base, round: 3, received: 0, verdict: 'ERROR', passed: false, error: 'starting broker 2: did not start within 600000 ms' };
  const results = [base, failed, harness];
  const run: StreamsChaosRun = { startedAt: '2026-12-02T07:00:00Z', kafkaVersion: '4.4.0', records: 3000, rounds: 3, partitions: 4, instances: 2, results, counts: countVerdicts(results), passed: false };
  const table = formatStreamsChaosTable(run);
  assert.match(table, /^Kafka 4\.4\.0, Kafka Streams app \(exactly_once_v2, a state store\), 2 instances, 3000 records per round, 4 partitions/);
  assert.match(table, /instance-kill\s+1\s+3000\s+0\s+0\s+0\s+41\s+13\.5 s\s+4\.2 s\s+5 s\s+3\s+0\s+1\s+95 s\s+PASS/);
  assert.match(table, /instance-kill\s+2\s+3000\s+3\s+.*FAIL/);
  assert.match(table, /instance-kill\s+3\s+0\s+.*ERROR/);
  assert.match(table, /SIGKILL instance 1: LSO held 4\.5 s, released 5\.1 s after the fault; 3 rebalances/);
  assert.match(table, /MISSED: 2 rebalances counted/);
  assert.match(table, /verdict: FAIL: 1 PASS, 1 FAIL, 1 ERROR \(harness\)\n$/);
  const md = formatStreamsChaosMarkdown(run);
  assert.match(md, /^## eoswatch chaos --engine streams\n/);
  assert.match(md, /\| instance-kill \| 1 \| 3000 \| 0 \| 0 \| 0 \| 41 \|/);
  assert.match(md, /Verdict: \*\*FAIL: 1 PASS, 1 FAIL, 1 ERROR \(harness\)\*\*/);
});
