import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatChaosTable, formatChaosMarkdown } from '../../src/chaos/report.js';
import type { RoundResult } from '../../src/chaos/runner.js';

const round = (scenario: string, passed: boolean): RoundResult =>
  ({
    scenario, round: 1, records: 100000, received: 100000, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0, abortedRecords: 12345,
    recoverySeconds: 12.3, worstLsoLagRecords: 123456, supervisorRestarts: 0, durationSeconds: 1234, passed, faults: ['worker main SIGKILL at 40 %'],
  }) as unknown as RoundResult;

test('chaos table fits 120 columns, explains every column and says what the restart count counts', () => {
  const run = { startedAt: '', kafkaVersion: '4.4.0', records: 100000, rounds: 1, partitions: 6, results: [round('coordinator-broker-kill', true), round('process-kill-mid-commit', false)], passed: false };
  const text = formatChaosTable(run);
  for (const line of text.split('\n')) assert.ok(line.length <= 120, `${line.length} columns: ${line}`);
  assert.match(text, /aborted: records of aborted transactions,\s+seen only by a read_uncommitted pass/);
  assert.match(text, /sup\.rst: restarts by eoswatch's pipeline supervisor inside\s+a worker \(process kills and restarts that a scenario injects are listed under faults\)/);
  assert.match(text, /verdict: FAIL\n$/);
  assert.match(formatChaosMarkdown(run), /\| sup\.rst \|[\s\S]*sup\.rst: restarts by eoswatch's pipeline supervisor/);
});
