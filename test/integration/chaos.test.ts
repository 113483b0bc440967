// The chaos scenarios in their short form (10,000 records, one round each) on the real 3-node
// cluster: each must end with every record in the sink exactly once, in order, with value + 1.
// The runner is the one behind `npm run chaos`; its verdict comes from the verifier, which
// reads the sink read_committed with its own consumer.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useCluster } from '../harness/index.js';
import { SCENARIOS, type Scenario } from '../../harness/chaos/scenarios.js';
import { runRound, type RoundResult } from '../../harness/chaos/runner.js';
import { formatChaosTable } from '../../harness/chaos/report.js';

const RECORDS = 10_000;
// `npm test` runs a representative subset (process kills, the zombie) to keep CI within its
// budget; EOSWATCH_CHAOS_ALL=1 runs every scenario in short form. Left to that and to the full
// matrix: worker-term (the kind case of worker-kill), broker-kill, and coordinator-kill, whose
// property (the coordinator's broker killed: no failed checkpoint, no restart) CI holds in
// pipeline-faults.test.ts, with net-coordinator-isolated of chaos-network.test.ts for the runner.
// The full set at 100,000 records is `npm run chaos -- --scenario all`, results in docs/chaos-results.md.
const SUBSET = new Set(['worker-kill', 'zombie']);
const scenarios = process.env.EOSWATCH_CHAOS_ALL === '1' ? SCENARIOS : SCENARIOS.filter((s) => SUBSET.has(s.name));

describe('chaos scenarios, short form (3-node cluster)', () => {
  const h = useCluster({ nodes: 3 });
  const workDir = mkdtempSync(join(tmpdir(), 'eoswatch-chaos-'));
  // Worker logs are quoted in a failing test's message; the directory itself goes with the file.
  after(() => rmSync(workDir, { recursive: true, force: true }));

  /** One round; it must end with every record in the sink exactly once, in order, with value + 1. */
  async function exactRound(scenario: Scenario, records: number, fullSpeed = false): Promise<{ r: RoundResult; context: string }> {
    const lines: string[] = [];
    const r = await runRound(h.cluster, scenario, 1, { records, rounds: 1, partitions: 6, fullSpeed, workDir, log: (l) => lines.push(l) });
    const context = `${formatChaosTable({ startedAt: '', kafkaVersion: '', records, rounds: 1, partitions: 6, results: [r], passed: r.passed })}\n${lines.join('\n')}\n${r.error ?? ''}`;
    assert.equal(r.error, undefined, context);
    assert.deepEqual(
      { received: r.received, duplicates: r.duplicates, lost: r.lost, unexpected: r.unexpected, wrongValue: r.wrongValue, orderViolations: r.orderViolations },
      { received: records, duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0, orderViolations: 0 },
      context,
    );
    return { r, context };
  }

  /**
   * The availability figures of a round that ran: scraped from the workers, within the round, and
   * judged against the scenario's expectation. An expectation with `enforce` fails the round (so
   * assert.ok(r.passed) holds it); until the pipeline fix lands the broker scenarios' is reported only.
   */
  function assertAvailability(scenario: Scenario, r: RoundResult, context: string): void {
    const a = r.availability;
    assert.ok(a, `the round has availability figures\n${context}`);
    assert.match(context, /^scenario\s+#\s+ckpt failed\s+ckpt done\s+pipeline rst\s+worker exits\s+longest stall\s+gaps\s+availability$/m);
    assert.ok(a.scrapes >= r.durationSeconds / 10 && a.scrapeGaps < a.scrapes, `the workers were scraped through the round (${a.scrapeGaps} gaps of ${a.scrapes})\n${context}`);
    // At 1 s checkpoints a round of tens of seconds completes tens of them.
    assert.ok(a.completedCheckpoints >= 5, `completed checkpoints counted (${a.completedCheckpoints})\n${context}`);
    for (const k of ['failedCheckpoints', 'pipelineRestarts', 'workerExits'] as const) assert.ok(Number.isInteger(a[k]) && a[k] >= 0, `${k} ${a[k]}\n${context}`);
    assert.equal(a.workerExits, r.supervisorRestarts);
    const stall = a.longestCommitStallSeconds;
    assert.ok(stall !== null && stall > 0 && stall < r.durationSeconds, `a longest commit stall within the round (${stall} s)\n${context}`);
    assert.equal(a.expectation === 'n/a', scenario.availability === undefined, `judged exactly when the scenario has an expectation\n${context}`);
    if (a.enforced) assert.equal(a.expectation, 'met', context);
  }

  for (const scenario of scenarios) {
    test(`${scenario.name}: ${scenario.description}`, async () => {
      const { r, context } = await exactRound(scenario, RECORDS);
      assert.ok(r.faults.length >= 1, `faults were injected\n${context}`);
      // Every fault landed while the pipeline still had work to do.
      assert.ok(!r.faults[0]!.endsWith('at 100 %'), `the first fault came after the pipeline had finished\n${context}`);
      assert.ok(r.passed, context);
      assertAvailability(scenario, r, context);
      if (scenario.name === 'worker-kill') {
        assert.equal(r.faults.filter((f) => f.startsWith('SIGKILL worker')).length, 3);
        // A killed worker's partitions wait for its replacement to boot and rejoin: seconds without a checkpoint.
        assert.ok(r.availability!.longestCommitStallSeconds! >= 2, `a kill shows as a commit stall\n${context}`);
        assert.equal(r.availability!.workerExits, 0, `the kills were the scenario's, not exits\n${context}`);
      }
      if (scenario.name === 'zombie') assert.ok(r.faults.some((f) => f.startsWith('zombie reported itself fenced')), `the zombie was fenced\n${context}`);
    });
  }

  // One round at default fetch and transaction sizes (`npm run chaos -- --full-speed`): unthrottled,
  // every kill meets transactions of thousands of records, and each kill waits for progress the
  // restarted worker made, so all three land inside the run. This round found the restart position
  // of never-committed partitions (docs/chaos-results.md); the full-speed matrix is in that file.
  const FULL_SPEED_RECORDS = 100_000;
  test('worker-kill at full speed (default fetch sizes), 100,000 records', async () => {
    const { r, context } = await exactRound(SCENARIOS.find((s) => s.name === 'worker-kill')!, FULL_SPEED_RECORDS, true);
    assert.equal(r.faults.filter((f) => f.startsWith('SIGKILL worker') && !f.endsWith('at 100 %')).length, 3, `three kills inside the run\n${context}`);
    // Large transactions were in flight: the worst LSO lag is far above a throttled round's few hundred.
    assert.ok(r.worstLsoLagRecords >= 2000, `transactions of default size (worst LSO lag ${r.worstLsoLagRecords})\n${context}`);
    assert.ok(r.passed, context);
  });
});
