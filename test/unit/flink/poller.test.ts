// The Flink poller's rules on REST answers recorded from a real Flink 1.20 cluster running the
// seed's job (test/fixtures/flink): a healthy job, a TaskManager loss (RUNNING with tasks only
// scheduled), the restore after it, and answers derived from them for a JobManager restart and a
// stale cached answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  chunkIds,
  consecutiveFailures,
  counterDelta,
  counterGrowth,
  durationMs,
  jobUp,
  metricScopeName,
  newRestarts,
  recordMetricIds,
  reduceCheckpoints,
  selectJobs,
  sinkMetricIds,
  sourceTopics,
  statisticsCacheMs,
  statisticsStaleness,
  type MetricValue,
} from '../../../src/flink/poller.js';
import type { CheckpointEntry, CheckpointingStatistics, JobExceptions, JobOverview, JobsOverview } from '../../../src/flink/rest-types.js';

const fixture = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../../fixtures/flink/${name}`, import.meta.url), 'utf8')) as T;
const clone = <T>(x: T): T => structuredClone(x);

const healthy = fixture<JobsOverview>('overview.json').jobs[0]!;
const restarting = fixture<JobsOverview>('overview-restarting.json').jobs[0]!;

test('a RUNNING job is up only while every task runs: after a TaskManager loss its tasks are scheduled', () => {
  assert.equal(healthy.state, 'RUNNING');
  assert.equal(jobUp(healthy), true);
  assert.equal(restarting.state, 'RUNNING', 'the recorded answer: RUNNING although nothing runs');
  assert.equal(restarting.tasks.scheduled, 1);
  assert.equal(jobUp(restarting), false);
  assert.equal(jobUp({ ...healthy, state: 'RESTARTING' }), false);
  assert.equal(jobUp({ ...healthy, tasks: { ...healthy.tasks, total: 0, running: 0 } }), false, 'a job without tasks is not up');
});

test('jobs are selected by name pattern, by id, or all; a replaced terminal run drops out, a failed one stays', () => {
  const job = (jid: string, name: string, state: string, start: number): JobOverview => ({ ...healthy, jid, name, state, 'start-time': start });
  const jobs = [
    job('a1', 'orders-eos', 'CANCELED', 1),
    job('a2', 'orders-eos', 'RUNNING', 2),
    job('b1', 'payments-eos', 'FAILED', 1),
    job('b0', 'payments-eos', 'CANCELED', 0),
    job('c1', 'adhoc', 'RUNNING', 3),
  ];
  assert.deepEqual(selectJobs(jobs).map((j) => j.jid).sort(), ['a2', 'b1', 'c1']);
  assert.deepEqual(selectJobs(jobs, { names: ['.*-eos'] }).map((j) => j.jid).sort(), ['a2', 'b1']);
  assert.deepEqual(selectJobs(jobs, { names: ['orders'] }).map((j) => j.jid), [], 'a pattern matches the whole name');
  assert.deepEqual(selectJobs(jobs, { ids: ['c1'] }).map((j) => j.jid), ['c1']);
  assert.deepEqual(selectJobs(jobs, { ids: ['b0'] }).map((j) => j.jid), ['b0'], 'an id names exactly that job');
});

const first = fixture<CheckpointingStatistics>('checkpoints.json');
const afterRestore = fixture<CheckpointingStatistics>('checkpoints-after-restart.json');

test('the first answer counts everything Flink has counted and observes each terminal checkpoint in it once', () => {
  assert.deepEqual(first.counts, { restored: 0, total: 35, in_progress: 0, completed: 28, failed: 7 });
  const u = reduceCheckpoints(undefined, first);
  assert.equal(u.stale, false);
  assert.deepEqual(u.increments, { completed: 28, failed: 7, timeout: 0, declined: 0 });
  assert.deepEqual(
    u.observations.map((o) => o.id),
    [19, 20, 21, 22, 23, 24, 25, 26, 27, 28],
  );
  const byId = new Map(first.history.map((e) => [e.id, e]));
  for (const o of u.observations) {
    assert.equal(o.outcome, 'completed');
    assert.equal(o.seconds, byId.get(o.id)!.end_to_end_duration / 1000);
    assert.equal(o.triggerMs, byId.get(o.id)!.trigger_timestamp);
    assert.equal(o.lastAckMs, byId.get(o.id)!.latest_ack_timestamp);
    assert.ok(o.lastAckMs > o.triggerMs);
  }
  assert.equal(u.pending, 0);
  assert.equal(u.consecutiveFailures, 0);
  assert.equal(u.lastCompletedSeconds, first.latest.completed!.latest_ack_timestamp / 1000);
  assert.equal(u.sizeBytes, first.latest.completed!.checkpointed_size);
  assert.equal(u.restored, null, 'never restored');

  const again = reduceCheckpoints(u.track, first);
  assert.deepEqual(again.increments, { completed: 0, failed: 0, timeout: 0, declined: 0 }, 'the same answer twice adds nothing');
  assert.deepEqual(again.observations, []);
});

test('after a TaskManager loss: the failed trigger attempts are counted, each new checkpoint observed once, the restore reported', () => {
  const u1 = reduceCheckpoints(undefined, first);
  const u2 = reduceCheckpoints(u1.track, afterRestore);
  assert.deepEqual(u2.increments, { completed: 48 - 28, failed: 53 - 7, timeout: 0, declined: 0 });
  const ids = u2.observations.map((o) => o.id);
  assert.deepEqual(ids, [41, 42, 43, 44, 45, 46, 47, 48, 49, 50]);
  assert.deepEqual(
    u2.observations.filter((o) => o.outcome === 'failed').map((o) => o.id),
    [44, 45],
    'the recorded history holds two failed checkpoints ("Trigger checkpoint failure.")',
  );
  assert.deepEqual(u2.restored, { id: 43, savepoint: false, atSeconds: afterRestore.latest.restored!.restore_timestamp / 1000 });
  assert.equal(u2.consecutiveFailures, 0, 'checkpoint 50 completed after the failures');
  assert.equal(u2.lastCompletedSeconds, afterRestore.latest.completed!.latest_ack_timestamp / 1000);
});

test('a stale cached answer (lower counts, no newer id) is ignored: counters never go backwards', () => {
  const u2 = reduceCheckpoints(reduceCheckpoints(undefined, first).track, afterRestore);
  const stale = reduceCheckpoints(u2.track, first);
  assert.equal(stale.stale, true);
  assert.deepEqual(stale.increments, { completed: 0, failed: 0, timeout: 0, declined: 0 });
  assert.deepEqual(stale.observations, []);
  assert.deepEqual(stale.track, u2.track, 'nothing remembered from it');
  const next = reduceCheckpoints(stale.track, afterRestore);
  assert.deepEqual(next.increments, { completed: 0, failed: 0, timeout: 0, declined: 0 }, 'the fresh answer again adds nothing new');
});

/** The answer of a JobManager that restarted (HA): counts from zero, ids going on, restored from the last one. */
function afterJobManagerRestart(): CheckpointingStatistics {
  const s = clone(afterRestore);
  const last = s.latest.completed!;
  const next = (id: number, status: CheckpointEntry['status'], failure?: string): CheckpointEntry => ({
    ...last,
    id,
    status,
    end_to_end_duration: 200 + id,
    latest_ack_timestamp: last.latest_ack_timestamp + (id - last.id) * 1000,
    ...(failure ? { failure_message: failure } : {}),
  });
  s.history = [next(54, 'IN_PROGRESS'), next(53, 'FAILED', 'Checkpoint expired before completing.'), next(52, 'FAILED', 'Checkpoint was declined.'), next(51, 'COMPLETED')];
  s.counts = { restored: 1, total: 4, in_progress: 1, completed: 1, failed: 2 };
  s.latest = { completed: s.history[3]!, savepoint: null, failed: s.history[1]!, restored: { id: 50, restore_timestamp: last.latest_ack_timestamp + 500, is_savepoint: false } };
  return s;
}

test('after a JobManager restart counts start from zero: the new ones are added, the outcome of each failure kept', () => {
  const u2 = reduceCheckpoints(reduceCheckpoints(undefined, first).track, afterRestore);
  const s = afterJobManagerRestart();
  const u3 = reduceCheckpoints(u2.track, s);
  assert.equal(u3.stale, false);
  assert.deepEqual(u3.increments, { completed: 1, failed: 1, timeout: 1, declined: 0 });
  assert.deepEqual(
    u3.observations.map((o) => [o.id, o.outcome, o.seconds]),
    [
      [51, 'completed', 0.251],
      [52, 'failed', 0.252],
      [53, 'timeout', 0.253],
    ],
  );
  assert.equal(u3.pending, 1);
  assert.equal(u3.consecutiveFailures, 2);
  assert.equal(u3.restored?.id, 50);
  const u4 = reduceCheckpoints(u3.track, s);
  assert.deepEqual(u4.increments, { completed: 0, failed: 0, timeout: 0, declined: 0 });
  assert.deepEqual(u4.observations, [], 'the in-progress checkpoint is not observed until it ends');
  const done = clone(s);
  done.history[0]!.status = 'COMPLETED';
  done.counts = { ...done.counts, in_progress: 0, completed: 2 };
  done.latest.completed = done.history[0]!;
  const u5 = reduceCheckpoints(u4.track, done);
  assert.deepEqual(u5.observations.map((o) => o.id), [54]);
  assert.deepEqual(u5.increments, { completed: 1, failed: 0, timeout: 0, declined: 0 });
  assert.equal(u5.consecutiveFailures, 0);
});

test('a savepoint is counted and observed like a checkpoint; a job that never completed one has every failure consecutive', () => {
  const s = clone(first);
  s.history = [{ ...first.history[0]!, id: 29, is_savepoint: true }, ...first.history];
  s.latest.savepoint = s.history[0]!;
  s.counts = { ...s.counts, total: 36, completed: 29 };
  const u = reduceCheckpoints(reduceCheckpoints(undefined, first).track, s);
  assert.deepEqual(u.increments, { completed: 1, failed: 0, timeout: 0, declined: 0 });
  assert.deepEqual(u.observations.map((o) => o.id), [29]);

  // A new job whose tasks are still deploying: Flink declined 5 triggers ("Not all required tasks
  // are currently running") and counted them failed, with no checkpoint (no id, no entry).
  const never = clone(first);
  never.history = [];
  never.latest = { completed: null, savepoint: null, failed: null, restored: null };
  never.counts = { restored: 0, total: 5, in_progress: 0, completed: 0, failed: 5 };
  const n = reduceCheckpoints(undefined, never);
  assert.equal(n.consecutiveFailures, 0, 'declined triggers are no failed checkpoints');
  assert.deepEqual(n.increments, { completed: 0, failed: 0, timeout: 0, declined: 5 });
  assert.equal(n.lastCompletedSeconds, null);
  assert.equal(n.sizeBytes, null);
  // Two of them got a checkpoint and failed (an entry with an id): those are failures, consecutive.
  const tried = clone(never);
  tried.history = [4, 5].map((id) => ({ ...first.history[0]!, id, status: 'FAILED' as const, failure_message: 'Asynchronous task checkpoint failed.' }));
  tried.counts = { ...never.counts, total: 7, failed: 7 };
  const t = reduceCheckpoints(undefined, tried);
  assert.equal(t.consecutiveFailures, 2);
  assert.deepEqual(t.increments, { completed: 0, failed: 2, timeout: 0, declined: 5 });
  // Once one completed, every failure Flink counts is a failure again.
  const later = reduceCheckpoints(undefined, { ...clone(first), counts: { ...first.counts, failed: first.counts.failed + 3 } });
  assert.equal(later.increments.declined, 0);
});

test('consecutive failures go on counting past the history window: ids between the last completed checkpoint and the oldest listed entry failed too', () => {
  // Recorded while the job's checkpoint directory was a file: every trigger fails with an I/O
  // problem, the job (0 tolerable failures) restarts after each, nothing completes after 11.
  const failing = fixture<CheckpointingStatistics>('checkpoints-failing.json');
  assert.equal(failing.latest.completed!.id, 11);
  assert.deepEqual([failing.history.length, failing.history.every((e) => e.status === 'FAILED')], [10, true]);
  assert.match(failing.history[0]!.failure_message!, /IO-problem/);
  const oldest = Math.min(...failing.history.map((e) => e.id));
  assert.equal(oldest, 15, 'ids 12 to 14 are no longer listed');
  assert.equal(consecutiveFailures(failing), 13);
  assert.equal(failing.counts.failed, 13, 'Flink counted the same 13 failures');
  const u = reduceCheckpoints(undefined, failing);
  assert.equal(u.consecutiveFailures, 13);
  assert.deepEqual(u.increments, { completed: 11, failed: 13, timeout: 0, declined: 0 });

  // A completed savepoint among the unlisted ids is not a failure.
  const sp = clone(failing);
  sp.latest.savepoint = { ...failing.history[0]!, id: 13, status: 'COMPLETED', is_savepoint: true };
  assert.equal(consecutiveFailures(sp), 12);
  // Within the window the listed entries decide: one in progress, two failed.
  const short = clone(failing);
  short.history = [{ ...failing.history[0]!, id: 14, status: 'IN_PROGRESS' }, { ...failing.history[0]!, id: 13 }, { ...failing.history[0]!, id: 12 }, { ...failing.history[0]!, id: 11, status: 'COMPLETED' }];
  assert.equal(consecutiveFailures(short), 2);
  // Nothing listed after the latest completed checkpoint: no failures.
  short.history = short.history.slice(3);
  assert.equal(consecutiveFailures(short), 0);
});

test('restarts are counted once per exception-history entry', () => {
  const none = fixture<JobExceptions>('exceptions-none.json');
  const loss = fixture<JobExceptions>('exceptions-tm-loss.json');
  assert.deepEqual(newRestarts(undefined, none), { count: 0, lastSeenTimestamp: 0 });
  const r1 = newRestarts(0, loss);
  assert.equal(r1.count, 1);
  assert.equal(r1.lastSeenTimestamp, loss.exceptionHistory!.entries[0]!.timestamp);
  assert.equal(newRestarts(r1.lastSeenTimestamp, loss).count, 0, 'the same entry is not counted twice');
  const two = clone(loss);
  two.exceptionHistory!.entries.unshift({ ...two.exceptionHistory!.entries[0]!, timestamp: r1.lastSeenTimestamp + 5000 });
  assert.equal(newRestarts(r1.lastSeenTimestamp, two).count, 1);
});

test('Flink 2.2 answers (recorded the same way) read the same: job down while scheduled, counts, restore, restarts', () => {
  const f22 = <T>(name: string): T => fixture<T>(`2.2/${name}`);
  const up = f22<JobsOverview>('overview.json').jobs[0]!;
  const down = f22<JobsOverview>('overview-restarting.json').jobs[0]!;
  assert.equal(jobUp(up), true);
  assert.deepEqual([down.state, down.tasks.running, down.tasks.scheduled], ['RUNNING', 0, 1]);
  assert.equal(jobUp(down), false);

  const before = f22<CheckpointingStatistics>('checkpoints.json');
  const after = f22<CheckpointingStatistics>('checkpoints-after-restart.json');
  const u1 = reduceCheckpoints(undefined, before);
  assert.deepEqual(u1.increments, { completed: 16, failed: 11, timeout: 0, declined: 0 });
  assert.deepEqual(u1.observations.map((o) => o.id), [7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
  const u2 = reduceCheckpoints(u1.track, after);
  assert.deepEqual(u2.increments, { completed: 42 - 16, failed: 81 - 11, timeout: 0, declined: 0 });
  assert.deepEqual(u2.observations.map((o) => [o.id, o.outcome]), [
    [36, 'completed'],
    [37, 'failed'],
    [38, 'failed'],
    [39, 'failed'],
    [40, 'completed'],
    [41, 'completed'],
    [42, 'completed'],
    [43, 'completed'],
    [44, 'completed'],
    [45, 'completed'],
  ]);
  assert.equal(u2.restored?.id, 36);
  assert.equal(u2.consecutiveFailures, 0);
  assert.equal(newRestarts(0, f22<JobExceptions>('exceptions-tm-loss.json')).count, 1);
  assert.equal(newRestarts(undefined, f22<JobExceptions>('exceptions-none.json')).count, 0);
});

test('the KafkaSink figures are found among a vertex metric ids recorded from the seed job', () => {
  const ids = fixture<{ id: string }[]>('vertex-metrics.json').map((x) => x.id);
  assert.equal(ids.length, 303);
  assert.deepEqual(sinkMetricIds(ids), {
    commitTimeNs: ['0.sink__fb__Writer.KafkaProducer.txn-commit-time-ns-total'],
    successful: ['0.sink__fb__Committer.successfulCommittables'],
    failed: ['0.sink__fb__Committer.failedCommittables'],
    pending: ['0.sink__fb__Committer.pendingCommittables'],
  });
  assert.deepEqual(sinkMetricIds(['0.Source__source__fa.KafkaSourceReader.KafkaConsumer.commit-sync-time-ns-total']), { commitTimeNs: [], successful: [], failed: [], pending: [] });
});

test('a counter that restarts from zero (a new producer, a restarted task) never counts backwards', () => {
  assert.equal(counterDelta(undefined, 85_361_231), 85_361_231, 'first reading: all of it');
  assert.equal(counterDelta(85_361_231, 90_000_000), 90_000_000 - 85_361_231);
  assert.equal(counterDelta(90_000_000, 1_000), 1_000, 'restarted: the new value is all new');
  assert.equal(counterDelta(5, 5), 0);
});

// Recorded from the seed job at parallelism 2 (source cap.src -> increment -> KafkaSink cap.sink,
// chained into one vertex) while 200 records/s went in: GET /jobs/<jid>/vertices/<vid>/metrics?get=…
const values = fixture<MetricValue[]>('vertex-metric-values.json');
const valueIds = values.map((v) => v.id);

test("records in and out are the sources' numRecordsIn and the sink writers' numRecordsSend, per subtask, never the chained task's own counters", () => {
  const ids = recordMetricIds(valueIds);
  assert.deepEqual(ids.in, ['0.Source__source__cap_src.numRecordsIn', '1.Source__source__cap_src.numRecordsIn']);
  assert.deepEqual(ids.out, ['0.sink__cap_sink__Writer.numRecordsSend', '1.sink__cap_sink__Writer.numRecordsSend']);
  const task = values.filter((v) => /^\d\.numRecords(In|Out)$/.test(v.id));
  assert.ok(task.length === 4 && task.every((v) => v.value === '0'), 'the recorded task-level counters of a chained job read 0');
  assert.equal(counterGrowth(new Map(), values, ids.in), 1514 + 1513);
  assert.equal(counterGrowth(new Map(), values, ids.out), 1514 + 1513);
  // The seed job's full per-subtask id list (Flink 1.20, parallelism 1) reads the same.
  const listed = recordMetricIds(fixture<{ id: string }[]>('vertex-metrics.json').map((x) => x.id));
  assert.deepEqual(listed, { in: ['0.Source__source__fa.numRecordsIn'], out: ['0.sink__fb__Writer.numRecordsSend'] });
});

test("a writer's numRecordsOut is preferred to the deprecated numRecordsSend; each writer counted once", () => {
  const ids = recordMetricIds(['0.sink__a__Writer.numRecordsSend', '0.sink__a__Writer.numRecordsOut', '0.sink__b__Writer.numRecordsSend', '0.sink__a__Committer.numRecordsOut', '0.Source__s.numRecordsOut']);
  assert.deepEqual(ids.out, ['0.sink__a__Writer.numRecordsOut', '0.sink__b__Writer.numRecordsSend']);
  assert.deepEqual(ids.in, []);
});

test('a subtask restarted on its own (a region failover) adds only its new count; the other is not counted again', () => {
  const ids = recordMetricIds(valueIds).in;
  const prev = new Map<string, number>();
  assert.equal(counterGrowth(prev, values, ids), 3027);
  const later: MetricValue[] = [
    { id: '0.Source__source__cap_src.numRecordsIn', value: '2514' },
    { id: '1.Source__source__cap_src.numRecordsIn', value: '40' },
  ];
  assert.equal(counterGrowth(prev, later, ids), 1000 + 40, 'a summed counter would have read 2554 after 3027 and added all of it');
  assert.equal(counterGrowth(prev, [{ id: ids[0]! }], ids), 0, 'an id without a value (its subtask not running) adds nothing');
  assert.equal(counterGrowth(prev, [{ id: ids[0]!, value: '2614' }, { id: ids[1]!, value: '50' }], ids), 110, 'and its last value is kept');
  assert.equal(counterGrowth(prev, [{ id: ids[0]!, value: 'NaN' }], ids), 0);
});

test("the KafkaSource's topics come from its reader's partition metrics, spelled as Flink's metric ids spell them", () => {
  assert.deepEqual(sourceTopics(valueIds), ['cap_src']);
  assert.equal(metricScopeName('cap.src'), 'cap_src', 'the recorded job reads the topic cap.src');
  assert.equal(metricScopeName('sink: cap.sink: Writer'), 'sink__cap_sink__Writer', "the recorded operator 'sink: cap.sink: Writer'");
  assert.deepEqual(sourceTopics(['0.Source__s.KafkaSourceReader.topic.a_b.partition.10.currentOffset', '0.Source__s.KafkaSourceReader.topic.a_b.partition.1.committedOffset']), ['a_b']);
});

test("the staleness of the checkpoint statistics is the poll interval plus the REST server's cache, read from its configuration", () => {
  const jm = fixture<{ key: string; value: string }[]>('jobmanager-config.json');
  const web = fixture<{ 'refresh-interval'?: number }>('web-config.json');
  assert.equal(web['refresh-interval'], 3000, 'recorded GET /config');
  assert.equal(statisticsCacheMs(jm, web), 3000, 'no cache key set: the refresh interval');
  assert.equal(statisticsCacheMs([...jm, { key: 'rest.cache.checkpoint-statistics.timeout', value: '10 s' }], web), 10_000, 'the explicit cache timeout wins');
  assert.equal(statisticsCacheMs(null, null), 3000, "unreadable: Flink's default");
  assert.equal(statisticsCacheMs([{ key: 'web.refresh-interval', value: '1s' }], null), 1000);
  assert.equal(statisticsCacheMs([{ key: 'rest.cache.checkpoint-statistics.timeout', value: 'soon' }], { 'refresh-interval': 2000 }), 2000, 'a value that is not a duration counts as unset');
  assert.equal(statisticsStaleness(5000, 3000), 8);
  assert.equal(durationMs('500ms'), 500);
  assert.equal(durationMs('2 min'), 120_000);
  assert.equal(durationMs('1h'), 3_600_000);
  assert.equal(durationMs('3000'), 3000);
  assert.equal(durationMs('3 parsecs'), undefined);
});

test('metric ids are asked for in requests short enough for the REST server', () => {
  const ids = Array.from({ length: 400 }, (_, i) => `${i}.Source__source__cap_src.numRecordsIn`);
  const chunks = chunkIds(ids, 3000);
  assert.ok(chunks.length > 1);
  assert.ok(chunks.every((c) => c.length <= 3000));
  assert.deepEqual(chunks.flatMap((c) => c.split(',')).map(decodeURIComponent), ids, 'every id once, in order');
  assert.deepEqual(chunkIds(['a b'], 3000), ['a%20b']);
  assert.deepEqual(chunkIds([], 3000), []);
});
