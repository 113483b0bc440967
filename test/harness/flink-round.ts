// One round of `npm run chaos -- --engine flink` in a test: run it, and hold it to exactly once
// (every record once, in order, value + 1) and to what eoswatch must have shown (no miss), with
// the round's report and log as the failure message.
import assert from 'node:assert/strict';
import type { FlinkScenario } from '../../harness/chaos/flink-scenarios.js';
import { runFlinkRound, type FlinkChaosOptions, type FlinkRoundResult } from '../../harness/chaos/flink-runner.js';
import { formatFlinkChaosTable } from '../../harness/chaos/report.js';
import type { LocalCluster } from '../../harness/localcluster/cluster.js';
import type { LocalFlinkCluster } from '../../harness/localcluster/flink-cluster.js';

export async function exactFlinkRound(
  kafka: LocalCluster,
  flink: LocalFlinkCluster,
  scenario: FlinkScenario,
  opts: Omit<FlinkChaosOptions, 'rounds' | 'log'>,
): Promise<{ r: FlinkRoundResult; context: string }> {
  const lines: string[] = [];
  const r = await runFlinkRound(kafka, flink, scenario, 1, { ...opts, rounds: 1, log: (l) => lines.push(l) });
  const run = { startedAt: '', kafkaVersion: kafka.version, flinkVersion: flink.state.version, records: opts.records, rounds: 1, partitions: opts.partitions, parallelism: opts.parallelism, results: [r], passed: r.passed };
  const context = `${formatFlinkChaosTable([run])}\n${lines.join('\n')}\n${r.error ?? ''}`;
  assert.equal(r.error, undefined, context);
  assert.deepEqual(
    { received: r.received, duplicates: r.duplicates, lost: r.lost, unexpected: r.unexpected, wrongValue: r.wrongValue, orderViolations: r.orderViolations, missed: r.missed },
    { received: opts.records, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0, missed: [] },
    context,
  );
  return { r, context };
}
