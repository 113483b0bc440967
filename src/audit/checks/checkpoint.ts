// Checkpointing of eoswatch's own pipeline and of Flink jobs: the checkpoint is what commits the
// transactions, so its mode, pace and failure policy decide whether the output is exactly-once.
// Unset Flink values are judged by Flink's defaults, and the observation says so.
import { formatDuration } from '../../config/duration.js';
import type { Check, CheckpointFacts, CheckResult } from '../types.js';

const FLINK_DEFAULTS = { timeoutMs: 600_000, minPauseMs: 0, tolerableFailed: 0 } as const;

const enabled = (cp: CheckpointFacts): boolean => cp.intervalMs !== undefined && cp.mode !== undefined;

/** A configured value, else Flink's default for a Flink job; `unset` tells the observation to say which. */
function valueOf(cp: CheckpointFacts, key: keyof typeof FLINK_DEFAULTS): { value?: number; unset: boolean } {
  const v = cp[key];
  if (v !== undefined) return { value: v, unset: false };
  return cp.origin === 'flink' ? { value: FLINK_DEFAULTS[key], unset: true } : { unset: true };
}

/** Evaluates only enabled checkpointing (checkpoint.mode reports the rest), optionally Flink jobs only. */
function over(
  filter: { flinkOnly?: boolean; enabledOnly?: boolean },
  evaluate: (cp: CheckpointFacts) => Omit<CheckResult, 'target'> | undefined,
): Check['evaluate'] {
  return (facts) =>
    facts.checkpoints
      .filter((cp) => (!filter.flinkOnly || cp.origin === 'flink') && (!filter.enabledOnly || enabled(cp)))
      .flatMap((cp) => {
        const r = evaluate(cp);
        return r ? [{ target: cp.target, ...r }] : [];
      });
}

const mode: Check = {
  id: 'checkpoint.mode',
  title: 'Checkpointing is enabled in EXACTLY_ONCE mode',
  severity: 'critical',
  rationale:
    'The checkpoint commits the sink\'s transactions and the source offsets together. Without checkpointing a two-phase-commit sink never commits ' +
    '(or, at-least-once, output and offsets drift apart); AT_LEAST_ONCE lets records after the barrier into the snapshot, so they are replayed after a failure.',
  remediation: 'Set execution.checkpointing.interval (e.g. 10 s) and execution.checkpointing.mode: EXACTLY_ONCE (eoswatch pipeline: pipeline.checkpoint.interval and pipeline.mode: EXACTLY_ONCE).',
  evaluate: over({}, (cp) => {
    const expected = 'checkpointing enabled, mode EXACTLY_ONCE';
    if (!enabled(cp)) return { passed: false, observed: 'checkpointing not enabled (no checkpoint interval)', expected };
    return { passed: cp.mode === 'EXACTLY_ONCE', observed: `mode ${cp.mode}, interval ${formatDuration(cp.intervalMs!)}`, expected };
  }),
};

const tolerableFailures: Check = {
  id: 'checkpoint.tolerable-failures',
  title: 'No checkpoint failure is tolerated',
  severity: 'critical',
  rationale:
    'A tolerated failure keeps the job running while its state is not persisted and its transactions stay open: they grow until the broker ' +
    'aborts them at transaction.timeout.ms, and their records are lost. Failing the job restores the last consistent checkpoint instead.',
  remediation: 'Set execution.checkpointing.tolerable-failed-checkpoints: 0 (eoswatch pipeline: pipeline.checkpoint.tolerableFailedCheckpoints: 0).',
  evaluate: over({ enabledOnly: true }, (cp) => {
    const { value, unset } = valueOf(cp, 'tolerableFailed');
    const expected = 'tolerable failed checkpoints = 0';
    if (value === undefined) return { passed: false, observed: 'tolerable failed checkpoints unset', expected };
    return { passed: value === 0, observed: `tolerable failed checkpoints ${value}${unset ? ' (default)' : ''}`, expected };
  }),
};

const timeout: Check = {
  id: 'checkpoint.timeout',
  title: 'Checkpoint timeout is at least 3 × the interval',
  severity: 'warning',
  rationale:
    'A timeout close to the interval expires checkpoints as soon as a broker or the state backend slows down; each expiry aborts the transactions, ' +
    'and with repeated expiries the job restarts in a loop while nothing commits.',
  remediation: 'Set execution.checkpointing.timeout to at least 3 × execution.checkpointing.interval (eoswatch pipeline: pipeline.checkpoint.timeout).',
  evaluate: over({ enabledOnly: true }, (cp) => {
    const interval = cp.intervalMs!;
    const { value, unset } = valueOf(cp, 'timeoutMs');
    const expected = `timeout >= ${formatDuration(3 * interval)} (3 × interval ${formatDuration(interval)})`;
    if (value === undefined) return { passed: false, observed: 'checkpoint timeout unset', expected };
    const ratio = Math.round((value / interval) * 100) / 100;
    return {
      passed: value >= 3 * interval,
      observed: `timeout ${formatDuration(value)}${unset ? ' (default)' : ''}, interval ${formatDuration(interval)} (${ratio} × interval)`,
      expected,
    };
  }),
};

const minPause: Check = {
  id: 'checkpoint.min-pause',
  title: 'A pause separates consecutive checkpoints',
  severity: 'warning',
  rationale:
    'Without a minimum pause a slow checkpoint is followed immediately by the next one: the job does nothing but checkpoint (a checkpoint storm) ' +
    'and falls further behind.',
  remediation: 'Set execution.checkpointing.min-pause (e.g. half the interval; eoswatch pipeline: pipeline.checkpoint.minPause, default 500ms).',
  evaluate: over({ enabledOnly: true }, (cp) => {
    const { value, unset } = valueOf(cp, 'minPauseMs');
    const expected = 'min pause > 0';
    if (value === undefined) return { passed: false, observed: 'min pause unset', expected };
    return { passed: value > 0, observed: `min pause ${formatDuration(value)}${unset ? ' (default)' : ''}`, expected };
  }),
};

const retainOnCancellation: Check = {
  id: 'checkpoint.retain-on-cancellation',
  title: 'Checkpoints are retained when the job is cancelled',
  severity: 'warning',
  rationale:
    'Without retention the last checkpoint is deleted when the job is cancelled (a redeploy without a savepoint, an operator mistake): ' +
    'the next start has no consistent position and falls back to committed offsets or auto.offset.reset.',
  remediation: 'Set execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION (and clean up old checkpoints yourself).',
  evaluate: over({ flinkOnly: true, enabledOnly: true }, (cp) => {
    const expected = 'externalized-checkpoint-retention RETAIN_ON_CANCELLATION';
    const observed =
      cp.retainOnCancellation === undefined ? 'externalized-checkpoint-retention unset (default NO_EXTERNALIZED_CHECKPOINTS)'
      : cp.retainOnCancellation ? 'externalized-checkpoint-retention RETAIN_ON_CANCELLATION'
      : 'externalized-checkpoint-retention not RETAIN_ON_CANCELLATION (deleted on cancellation)';
    return { passed: cp.retainOnCancellation === true, observed, expected };
  }),
};

// ForSt (Flink 2.x) is a RocksDB fork with the same incremental checkpoints: it passes too.
const LSM_BACKEND = /rocksdb|forst/i;

const stateBackend: Check = {
  id: 'checkpoint.state-backend',
  title: 'State backend is RocksDB with incremental checkpoints',
  severity: 'warning',
  rationale:
    'The hashmap backend keeps state on the heap and snapshots all of it at every checkpoint: checkpoint time grows with the state until checkpoints ' +
    'time out. RocksDB with incremental checkpoints uploads only the changed files, so checkpoint time follows the rate of change.',
  remediation: 'Set state.backend.type: rocksdb and execution.checkpointing.incremental: true (state.backend.incremental before Flink 1.20).',
  evaluate: over({ flinkOnly: true, enabledOnly: true }, (cp) => {
    const backend = cp.stateBackend === undefined ? 'state backend unset (default hashmap)' : `state backend ${cp.stateBackend}`;
    const incremental =
      cp.incremental === undefined ? 'incremental checkpoints unset (default false)' : `incremental checkpoints ${cp.incremental}`;
    return {
      passed: cp.stateBackend !== undefined && LSM_BACKEND.test(cp.stateBackend) && cp.incremental === true,
      observed: `${backend}, ${incremental}`,
      expected: 'state backend rocksdb, incremental checkpoints true',
    };
  }),
};

// The KafkaSink is configured in job code. When none of its keys is in the configuration the
// check reports nothing: failing would flag every Flink config, passing would claim what was not seen.
const kafkaSinkExactlyOnce: Check = {
  id: 'flink.kafka-sink-exactly-once',
  title: 'Flink KafkaSink is exactly-once with a transactional id prefix',
  severity: 'critical',
  rationale:
    'Only DeliveryGuarantee.EXACTLY_ONCE writes through transactions committed with the checkpoint; NONE and AT_LEAST_ONCE duplicate records on every recovery. ' +
    'The transactional id prefix must be set, stable across restarts and unique per job on the cluster, or jobs fence each other and lingering transactions are not aborted.',
  remediation:
    'In the job: KafkaSink.builder().setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE).setTransactionalIdPrefix("<job>"); in Flink SQL: ' +
    "'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '<job>'. Only audited when these keys are in the configuration.",
  evaluate: over({ flinkOnly: true }, (cp) => {
    if (cp.sinkDeliveryGuarantee === undefined && cp.sinkTransactionalIdPrefix === undefined && cp.sinkTransactionTimeoutMs === undefined) {
      return undefined;
    }
    const guarantee = cp.sinkDeliveryGuarantee === undefined ? 'delivery guarantee unset (KafkaSink default NONE)' : `delivery guarantee ${cp.sinkDeliveryGuarantee}`;
    const prefix = cp.sinkTransactionalIdPrefix === undefined ? 'transactional id prefix unset' : `transactional id prefix ${cp.sinkTransactionalIdPrefix}`;
    return {
      passed: cp.sinkDeliveryGuarantee === 'EXACTLY_ONCE' && cp.sinkTransactionalIdPrefix !== undefined,
      observed: `${guarantee}, ${prefix}`,
      expected: 'delivery guarantee EXACTLY_ONCE, transactional id prefix set',
    };
  }),
};

export const checkpointChecks: Check[] = [
  mode,
  tolerableFailures,
  timeout,
  minPause,
  retainOnCancellation,
  stateBackend,
  kafkaSinkExactlyOnce,
];
