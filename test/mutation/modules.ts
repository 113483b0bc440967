// The verdict-critical modules under mutation testing, each with the unit tests that judge it.
// Adding a module: one entry here (its source file and the test files that exercise it). Tests
// must be pure (no Kafka, no sleeps): every mutant re-runs the test files that cover it.
export interface MutationModule {
  /** The source file whose mutants are counted (also the module's name in the report). */
  file: string;
  /** Unit test files that exercise it. */
  tests: string[];
}

// The check modules are judged by test/unit/audit/checks/cluster.test.ts too: it holds docs/audit-checks.md
// (every check's title, rationale and remediation) to the checks.
export const MUTATION_MODULES: MutationModule[] = [
  { file: 'src/kafka/send.ts', tests: ['test/unit/kafka/send.test.ts'] },
  { file: 'src/canary/tracker.ts', tests: ['test/unit/canary/tracker.test.ts'] },
  { file: 'src/log.ts', tests: ['test/unit/log.test.ts'] },
  { file: 'src/verify/record.ts', tests: ['test/unit/verify/checker.test.ts'] },
  { file: 'src/config/duration.ts', tests: ['test/unit/config/values.test.ts', 'test/unit/config/load.test.ts'] },
  { file: 'src/config/env.ts', tests: ['test/unit/config/values.test.ts', 'test/unit/config/load.test.ts'] },
  { file: 'src/kafka/lso-tracker.ts', tests: ['test/unit/kafka/lso-tracker.test.ts'] },
  { file: 'src/pipeline/checkpoint-coordinator.ts', tests: ['test/unit/pipeline/checkpoint-coordinator.test.ts'] },
  { file: 'src/pipeline/checkpoint-driver.ts', tests: ['test/unit/pipeline/checkpoint-driver.test.ts'] },
  { file: 'src/pipeline/membership.ts', tests: ['test/unit/pipeline/membership.test.ts'] },
  { file: 'src/verify/checker.ts', tests: ['test/unit/verify/checker.test.ts', 'test/unit/verify/checker-scan.test.ts', 'test/unit/verify/checker-latency.test.ts'] },
  { file: 'src/audit/checks/util.ts', tests: ['test/unit/audit/checks/clients.test.ts', 'test/unit/audit/checks/cluster.test.ts'] },
  { file: 'src/audit/checks/producer.ts', tests: ['test/unit/audit/checks/clients.test.ts', 'test/unit/audit/checks/cluster.test.ts'] },
  { file: 'src/audit/checks/consumer.ts', tests: ['test/unit/audit/checks/clients.test.ts', 'test/unit/audit/checks/cluster.test.ts'] },
  { file: 'src/audit/checks/checkpoint.ts', tests: ['test/unit/audit/checks/clients.test.ts', 'test/unit/audit/checks/cluster.test.ts'] },
  { file: 'src/audit/checks/live.ts', tests: ['test/unit/audit/checks/cluster.test.ts'] },
  { file: 'src/audit/checks/broker.ts', tests: ['test/unit/audit/checks/cluster.test.ts'] },
  { file: 'src/audit/checks/streams.ts', tests: ['test/unit/audit/checks/streams.test.ts', 'test/unit/audit/checks/cluster.test.ts'] },
  { file: 'src/redact.ts', tests: ['test/unit/redact.test.ts'] },
  { file: 'src/kafka/record-batches.ts', tests: ['test/unit/kafka/record-batches.test.ts'] },
  { file: 'src/kafka/read-committed.ts', tests: ['test/unit/kafka/read-committed.test.ts'] },
  { file: 'src/kafka/module-cache.ts', tests: ['test/unit/kafka/module-cache.test.ts', 'test/unit/kafka/read-committed.test.ts'] },
  { file: 'src/kafka/linear-grouping.ts', tests: ['test/unit/kafka/linear-grouping.test.ts'] },
  { file: 'src/coordinator/hanging.ts', tests: ['test/unit/coordinator/view.test.ts'] },
  { file: 'src/coordinator/applications.ts', tests: ['test/unit/coordinator/view.test.ts'] },
  { file: 'src/kafka/txn-log.ts', tests: ['test/unit/kafka/txn-log.test.ts'] },
  { file: 'src/coordinator/events.ts', tests: ['test/unit/coordinator/events.test.ts'] },
  { file: 'src/kafka/permissions.ts', tests: ['test/unit/kafka/permissions.test.ts'] },
  { file: 'src/kafka/authorized-operations.ts', tests: ['test/unit/kafka/permissions.test.ts'] },
  { file: 'src/coordinator/fence-window.ts', tests: ['test/unit/coordinator/fence-window.test.ts'] },
  { file: 'src/verify/stability.ts', tests: ['test/unit/verify/stability.test.ts'] },
  { file: 'src/audit/checks/coordinator.ts', tests: ['test/unit/audit/checks/coordinator.test.ts', 'test/unit/audit/checks/cluster.test.ts'] },
  { file: 'src/audit/checks/acl.ts', tests: ['test/unit/audit/checks/acl.test.ts', 'test/unit/audit/checks/cluster.test.ts'] },
  { file: 'src/runtime/clock.ts', tests: ['test/unit/runtime/clock.test.ts'] },
  { file: 'src/runtime/periodic.ts', tests: ['test/unit/runtime/periodic.test.ts'] },
  { file: 'src/runtime/poll-until.ts', tests: ['test/unit/runtime/poll-until.test.ts'] },
  { file: 'src/runtime/runs.ts', tests: ['test/unit/runtime/runs.test.ts'] },
  { file: 'src/runtime/mutex.ts', tests: ['test/unit/runtime/mutex.test.ts'] },
  { file: 'harness/chaos/flink-scenarios.ts', tests: ['test/unit/harness/chaos/flink.test.ts'] },
];

/** Score (killed ÷ killed + survived + not covered, equivalent mutants left out) each module must reach. */
export const MIN_SCORE = 90;
