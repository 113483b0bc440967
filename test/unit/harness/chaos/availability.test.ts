// The availability figures of a chaos round (harness/chaos/availability.ts), its verdict
// (harness/chaos/verdict.ts) and the harness's pure helpers (harness/chaos/round-kafka.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { longestStallMs, roundAvailability, workerMetrics, type Scrape, type WorkerMetrics } from '../../../../harness/chaos/availability.js';
import { HarnessError, countVerdicts, exitCodeOf, harnessStep, roundVerdict, runVerdict, summaryLine } from '../../../../harness/chaos/verdict.js';
import { metadataShortfall, retryStep, startFailureSummary } from '../../../../harness/chaos/round-kafka.js';

const L = 'pipeline="p",engine="eoswatch",job_id=""';
const page = (o: { completed?: number; failed?: number; timeout?: number; restarts?: number; last?: number }) =>
  [
    '# HELP eos_checkpoints_total Checkpoints by outcome: completed, failed, timeout.',
    '# TYPE eos_checkpoints_total counter',
    `eos_checkpoints_total{${L},outcome="completed"} ${o.completed ?? 0}`,
    `eos_checkpoints_total{${L},outcome="failed"} ${o.failed ?? 0}`,
    `eos_checkpoints_total{${L},outcome="timeout"} ${o.timeout ?? 0}`,
    '# TYPE eos_service_restarts_total counter',
    `eos_service_restarts_total{service="pipeline"} ${o.restarts ?? 0}`,
    'eos_service_restarts_total{service="kafka-health"} 7',
    '# TYPE eos_checkpoint_last_completed_timestamp_seconds gauge',
    `eos_checkpoint_last_completed_timestamp_seconds{${L}} ${o.last ?? 0}`,
    '',
  ].join('\n');

test('a worker page: failed and timed-out checkpoints, the pipeline service restarts only, the last completion in ms', () => {
  assert.deepEqual(workerMetrics(page({ completed: 40, failed: 2, timeout: 1, restarts: 3, last: 1764620000.25 })), {
    completed: 40,
    failed: 2,
    timeout: 1,
    pipelineRestarts: 3,
    lastCompletedMs: 1764620000250,
  });
  // Before its first completed checkpoint the gauge is 0: no completion, not one at the epoch.
  assert.equal(workerMetrics(page({})).lastCompletedMs, null);
  assert.throws(() => workerMetrics('eos_checkpoints_total{outcome="completed" 1\n'), /bad/);
});

const m = (o: Partial<WorkerMetrics>): WorkerMetrics => ({ completed: 0, failed: 0, timeout: 0, pipelineRestarts: 0, lastCompletedMs: null, ...o });
const at = (t: number, worker: string, pid: number, metrics?: Partial<WorkerMetrics>): Scrape => ({ t, worker, pid, ...(metrics ? { metrics: m(metrics) } : {}) });

test('the longest commit stall: the widest gap between completions seen, from the first one to the end of pending input', () => {
  const scrapes = [1000, 2000, 2000, 9000, 10_000].map((c, i) => at(c + 100, i % 2 ? 'b' : 'main', 1, { lastCompletedMs: c }));
  assert.equal(longestStallMs(scrapes, 10_500), 7000);
  // The input was all committed at 5,000: what came after is not a stall while input was pending.
  assert.equal(longestStallMs(scrapes, 5000), 3000);
  // The end itself counts: nothing completed from 10,000 to 30,000 while input was still pending.
  assert.equal(longestStallMs(scrapes, 30_000), 20_000);
  assert.equal(longestStallMs([at(1, 'main', 1), at(2, 'main', 1, {})], 10), null);
});

test('availability: counters per worker process up to its last scrape, gaps are not zeros, the expectation judged', () => {
  const scrapes = [
    at(1000, 'main', 11, { failed: 1, completed: 5, lastCompletedMs: 900 }),
    at(2000, 'main', 11, { failed: 2, timeout: 1, completed: 6, pipelineRestarts: 1, lastCompletedMs: 1900 }),
    at(3000, 'main', 11), // killed: a gap, the process's counters stay at their last reading
    at(4000, 'main', 12, { failed: 1, completed: 2, lastCompletedMs: 3900 }),
    at(4000, 'b', 13, { completed: 3, lastCompletedMs: 3950 }),
  ];
  const a = roundAvailability({ scrapes, workerExits: 1, inputDoneAt: 4000, endAt: 9000, brokers: 3 });
  assert.deepEqual(
    { ...a },
    { failedCheckpoints: 4, completedCheckpoints: 11, pipelineRestarts: 1, workerExits: 1, longestCommitStallSeconds: 2, scrapes: 5, scrapeGaps: 1, expectation: 'n/a', missed: [], enforced: false },
  );
  const judged = roundAvailability({ scrapes, workerExits: 1, inputDoneAt: 4000, endAt: 9000, brokers: 3, expectation: { workerExits: 0, failedCheckpoints: 0, minBrokers: 3 } });
  assert.equal(judged.expectation, 'not met');
  assert.deepEqual(judged.missed, ['worker exits 1 (at most 0)', 'failed checkpoints 4 (at most 0)']);
  assert.equal(judged.enforced, false);
  const loose = roundAvailability({ scrapes, workerExits: 1, inputDoneAt: 4000, endAt: 9000, brokers: 3, expectation: { workerExits: 1, failedCheckpoints: 4, commitStallSeconds: 2, enforce: true } });
  assert.deepEqual([loose.expectation, loose.missed, loose.enforced], ['met', [], true]);
  const stall = roundAvailability({ scrapes, workerExits: 0, inputDoneAt: null, endAt: 9000, brokers: 3, expectation: { commitStallSeconds: 4 } });
  assert.deepEqual(stall.missed, ['commit stall 5.0 s (at most 4 s)']);
  // A 1-node cluster cannot keep a partition writable with its broker away: not judged.
  assert.equal(roundAvailability({ scrapes, workerExits: 1, inputDoneAt: 4000, endAt: 9000, brokers: 1, expectation: { workerExits: 0, minBrokers: 3 } }).expectation, 'n/a');
  // Never scraped: no figure is not "0 failed checkpoints".
  const blind = roundAvailability({ scrapes: [at(1, 'main', 11), at(2, 'main', 11)], workerExits: 0, inputDoneAt: 4000, endAt: 9000, brokers: 3, expectation: { failedCheckpoints: 0 } });
  assert.deepEqual([blind.expectation, blind.missed, blind.longestCommitStallSeconds], ['not met', ['no scrape of any worker answered'], null]);
});

test('a round is ERROR only for the harness, FAIL for the pipeline, PASS when the sink is exact and no enforced expectation missed', async () => {
  assert.equal(roundVerdict({ error: new HarnessError('broker 2 did not start again'), violations: [], enforcedMisses: [] }), 'ERROR');
  assert.equal(roundVerdict({ error: new Error('the pipeline stalled'), violations: [], enforcedMisses: [] }), 'FAIL');
  assert.equal(roundVerdict({ violations: ['3 duplicates'], enforcedMisses: [] }), 'FAIL');
  assert.equal(roundVerdict({ violations: [], enforcedMisses: ['worker exits 1 (at most 0)'] }), 'FAIL');
  assert.equal(roundVerdict({ violations: [], enforcedMisses: [] }), 'PASS');
  const wrapped = await harnessStep('writing the input', () => Promise.reject(new Error('This server does not host this topic-partition'))).catch((e: unknown) => e);
  assert.ok(wrapped instanceof HarnessError);
  assert.equal((wrapped as Error).message, 'writing the input: This server does not host this topic-partition');
  const inner = new HarnessError('broker 1 did not start again');
  assert.equal(await harnessStep('outer', () => Promise.reject(inner)).catch((e: unknown) => e), inner);
  assert.equal(await harnessStep('ok', async () => 42), 42);
});

test('the run: counts by verdict, its summary line and exit code (a FAIL wins over an ERROR, an ERROR is not a FAIL)', () => {
  const r = (verdict?: 'PASS' | 'FAIL' | 'ERROR', passed = verdict === 'PASS') => ({ ...(verdict ? { verdict } : {}), passed });
  const c = countVerdicts([r('PASS'), r('PASS'), r('ERROR')]);
  assert.deepEqual(c, { pass: 2, fail: 0, error: 1 });
  assert.equal(summaryLine(c), '2 PASS, 0 FAIL, 1 ERROR (harness)');
  assert.deepEqual([runVerdict(c), exitCodeOf(c)], ['ERROR', 1]);
  const failed = countVerdicts([r('FAIL'), r('ERROR'), r(undefined, true), r(undefined, false)]);
  assert.deepEqual(failed, { pass: 1, fail: 2, error: 1 });
  assert.deepEqual([runVerdict(failed), exitCodeOf(failed)], ['FAIL', 3]);
  assert.deepEqual([runVerdict(countVerdicts([r('PASS')])), exitCodeOf(countVerdicts([r('PASS')]))], ['PASS', 0]);
});

test("a broker's Metadata answer: the round's topics known, with every partition and a leader each", () => {
  const part = (partitionId: number, leader = 1) => ({ partitionId, leader });
  const answer = { topicMetadata: [{ topic: 'in', partitionMetadata: [part(0), part(1)] }, { topic: 'out', partitionMetadata: [part(0), part(1, -1)] }, { topic: 'dlq', partitionMetadata: [part(0)] }] };
  assert.equal(metadataShortfall(answer, ['in'], 2), '');
  assert.equal(metadataShortfall(answer, ['in', 'out', 'dlq', 'gone'], 2), 'out partitions 1 without a leader; dlq has 1 of 2 partitions; gone unknown');
});

test('a failed broker start in one line: the error and the first error of the log it quotes', () => {
  const msg = [
    'Kafka node 2 exited during start-up.',
    'First errors in /tmp/c/node-2/server.log:',
    '[2026-12-01 10:00:01,000] ERROR Exiting Kafka due to fatal exception (kafka.Kafka$)',
    'org.apache.kafka.common.errors.TimeoutException: could not reach node 1',
    'Tail of /tmp/c/node-2/server.log:',
    'shutdown complete',
  ].join('\n');
  assert.equal(startFailureSummary(msg), 'Kafka node 2 exited during start-up. [2026-12-01 10:00:01,000] ERROR Exiting Kafka due to fatal exception (kafka.Kafka$)');
  assert.equal(startFailureSummary('Kafka node 3 exited during start-up.\nTail of /x:\nline a\nlast line\n'), 'Kafka node 3 exited during start-up. last line');
  assert.equal(startFailureSummary(`x${'y'.repeat(400)}`).length, 240);
});

test('an idempotent harness step is tried again within its budget, then a HarnessError naming it', async () => {
  let calls = 0;
  const flaky = async () => {
    if (++calls === 1) throw new Error('This server does not host this topic-partition');
    return 'created';
  };
  assert.equal(await retryStep('creating the topics', flaky, 10_000), 'created');
  assert.equal(calls, 2);
  const err = await retryStep('creating the topics', () => Promise.reject(new Error('no controller')), 0).catch((e: unknown) => e);
  assert.ok(err instanceof HarnessError);
  assert.equal((err as Error).message, 'creating the topics (1 attempts): no controller');
});
