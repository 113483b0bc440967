import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatChaosTable, formatChaosMarkdown, runSummary } from '../../../../harness/chaos/report.js';
import type { ChaosRun, RoundResult } from '../../../../harness/chaos/runner.js';
import type { RoundAvailability } from '../../../../harness/chaos/availability.js';

const availability = (o: Partial<RoundAvailability> = {}): RoundAvailability => ({
  failedCheckpoints: 0, completedCheckpoints: 118, pipelineRestarts: 0, workerExits: 0, longestCommitStallSeconds: 4.25, scrapes: 120, scrapeGaps: 3,
  expectation: 'met', missed: [], enforced: false, ...o,
});

const round = (scenario: string, passed: boolean, extra: Partial<RoundResult> = {}): RoundResult =>
  ({
    scenario, round: 1, records: 100000, received: 100000, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0, abortedRecords: 12345,
    recoverySeconds: 12.3, worstLsoLagRecords: 123456, supervisorRestarts: 0, durationSeconds: 1234, passed, faults: ['worker main SIGKILL at 40 %'], ...extra,
  }) as unknown as RoundResult;

const run = (results: RoundResult[]): ChaosRun => ({ startedAt: '', kafkaVersion: '4.4.0', records: 100000, rounds: 1, partitions: 6, results, passed: results.every((r) => r.passed) });

test('chaos table fits 120 columns, explains every column and ends with the verdict and the rounds by verdict', () => {
  const r = run([round('coordinator-broker-kill', true, { availability: availability() }), round('process-kill-mid-commit', false)]);
  const text = formatChaosTable(r);
  for (const line of text.split('\n')) assert.ok(line.length <= 120, `${line.length} columns: ${line}`);
  assert.match(text, /aborted: records of aborted transactions,\s+seen only by a read_uncommitted pass/);
  assert.match(text, /ERROR: the harness\s+could not run the round \(a broker that would not start again, \.\.\.; never counted as a FAIL\)/);
  assert.match(text, /verdict: FAIL \(1 PASS, 1 FAIL, 0 ERROR \(harness\)\)\n$/);
  assert.match(formatChaosMarkdown(r), /Verdict: \*\*FAIL \(1 PASS, 1 FAIL, 0 ERROR \(harness\)\)\*\*\n$/);
});

test('the availability table: one row per round beside the exactly-once table, the stall defined in its legend', () => {
  const rounds = [
    round('broker-rolling-restart', true, { availability: availability({ failedCheckpoints: 2, workerExits: 1, pipelineRestarts: 1, expectation: 'not met', missed: ['worker exits 1 (at most 0)', 'failed checkpoints 2 (at most 0)'] }) }),
    round('worker-kill', true, { availability: availability({ expectation: 'n/a', longestCommitStallSeconds: null }) }),
    round('zombie', false, { verdict: 'ERROR', error: 'harness: writing the input: This server does not host this topic-partition', harnessNotes: ['broker 2 start attempt 1 failed: Kafka node 2 exited during start-up.'] }),
  ];
  const text = formatChaosTable(run(rounds));
  for (const line of text.split('\n')) assert.ok(line.length <= 120, `${line.length} columns: ${line}`);
  const table = text.slice(text.indexOf('\navailability:\n'));
  assert.match(table, /^scenario\s+#\s+ckpt failed\s+ckpt done\s+pipeline rst\s+worker exits\s+longest stall\s+gaps\s+availability$/m);
  assert.match(table, /^broker-rolling-restart\s+1\s+2\s+118\s+1\s+1\s+4\.3 s\s+3\/120\s+not met$/m);
  assert.match(table, /^worker-kill\s+1\s+0\s+118\s+0\s+0\s+-\s+3\/120\s+n\/a$/m);
  // A round without figures (failed before any scrape) shows dashes, not zeros.
  assert.match(table, /^zombie\s+1\s+-\s+-\s+-\s+-\s+-\s+-\s+-$/m);
  assert.match(text, /longest stall: the longest time\s+without a completed checkpoint of any worker while input was pending/);
  assert.match(text, /a worker down, starting or not answering is a gap, not a\s+zero/);
  assert.match(text, /broker-rolling-restart #1: availability not met: worker exits 1 \(at most 0\); failed checkpoints 2 \(at most 0\)/);
  assert.match(text, /zombie #1: harness: broker 2 start attempt 1 failed: Kafka node 2 exited during start-up\./);
  // The exactly-once table says ERROR for the harness's round, and the summary keeps it apart from FAIL.
  assert.match(text, /^zombie\s+1\s+100000.*\s+ERROR$/m);
  assert.match(text, /verdict: ERROR \(2 PASS, 0 FAIL, 1 ERROR \(harness\)\)\n$/);
  const md = formatChaosMarkdown(run(rounds));
  assert.match(md, /\| scenario \| # \| ckpt failed \| ckpt done \| pipeline rst \| worker exits \| longest stall \| gaps \| availability \|/);
  assert.match(md, /\| broker-rolling-restart \| 1 \| 2 \| 118 \| 1 \| 1 \| 4\.3 s \| 3\/120 \| not met \|/);
  assert.equal(runSummary({ ...run(rounds), counts: { pass: 5, fail: 0, error: 0 }, verdict: 'PASS' }), 'PASS (5 PASS, 0 FAIL, 0 ERROR (harness))');
});
