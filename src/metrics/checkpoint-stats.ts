// The one owner of the checkpoint metrics. Two engines feed it: eoswatch's own pipeline (its
// checkpoint driver, src/pipeline/checkpoint-driver.ts) and a watched Flink job (the
// REST poller, src/flink/flink-service.ts). Every series carries `pipeline` (the pipeline or Flink
// job name), `engine` ("eoswatch" or "flink") and `job_id` (Flink's job id; empty for eoswatch), so
// dashboards and alerts work for both engines unchanged.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { definedOnce } from './registry.js';

export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The labels that identify one pipeline's series. */
export const PIPELINE_LABELS = ['pipeline', 'engine', 'job_id'] as const;
/** streams: a watched Kafka Streams application (src/streams/), which has no checkpoint series, only eos_pipeline_up and lag. */
export type Engine = 'eoswatch' | 'flink' | 'streams';
export interface PipelineLabels {
  pipeline: string;
  engine: Engine;
  job_id: string;
}
/**
 * declined: a Flink checkpoint refused before it was triggered while the job has not completed one
 * yet (Flink counts these as failed: "Not all required tasks are currently running" while a new
 * or restored job's tasks deploy); not a failure of a running job, so no alert counts it.
 */
export type CheckpointOutcome = 'completed' | 'failed' | 'timeout' | 'declined';
export const CHECKPOINT_OUTCOMES: readonly CheckpointOutcome[] = ['completed', 'failed', 'timeout', 'declined'];

/**
 * Why a checkpoint of the own pipeline failed, a closed set after Flink's CheckpointFailureReason
 * (src/pipeline/checkpoint-driver.ts decides; one reason per failed checkpoint):
 * - TIMEOUT: not completed within checkpoint.timeout (the one reason of outcome timeout);
 * - FENCED: a participant's producer was fenced by a newer epoch of its transactional id (another
 *   instance owns its partition now);
 * - SEND_FAILED: a record send of a participant failed, before the checkpoint or while its barrier
 *   drained the sends;
 * - PRE_COMMIT_FAILED: adding a participant's next offset failed (exactly-once: sendOffsets);
 * - COMMIT_FAILED: a participant's commit failed (its outcome unknown).
 */
export const CHECKPOINT_FAILURE_REASONS = ['TIMEOUT', 'FENCED', 'SEND_FAILED', 'PRE_COMMIT_FAILED', 'COMMIT_FAILED'] as const;
export type CheckpointFailureReason = (typeof CHECKPOINT_FAILURE_REASONS)[number];

function define(registry: Registry) {
  const registers = [registry];
  const labelNames = [...PIPELINE_LABELS];
  return {
    checkpointDuration: new Histogram({
      name: 'eos_checkpoint_duration_seconds',
      help: 'Checkpoint trigger to all partition transactions committed (outcome completed) or aborted (failed, timeout); for Flink, end_to_end_duration of each checkpoint, observed once by id.',
      labelNames: [...labelNames, 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    checkpointsPending: new Gauge({
      name: 'eos_checkpoints_pending',
      help: 'Checkpoints triggered and not yet completed or aborted (healthy: 0 or 1).',
      labelNames,
      registers,
    }),
    checkpoints: new Counter({
      name: 'eos_checkpoints_total',
      help: 'Checkpoints by outcome: completed, failed, timeout; declined (Flink): refused before triggering while a new or restored job has not completed a checkpoint yet (its tasks deploying).',
      labelNames: [...labelNames, 'outcome'],
      registers,
    }),
    checkpointFailures: new Counter({
      name: 'eos_checkpoint_failures_total',
      help: 'Failed checkpoints of the own pipeline by reason: TIMEOUT (checkpoint.timeout passed), FENCED (a producer was fenced by a newer epoch: another instance owns its partition), SEND_FAILED (a record send failed), PRE_COMMIT_FAILED (adding the next offset failed), COMMIT_FAILED (a commit failed); summed over the reasons, eos_checkpoints_total{outcome=~"failed|timeout"} of engine eoswatch. Flink jobs have none.',
      labelNames: [...labelNames, 'reason'],
      registers,
    }),
    consecutiveFailures: new Gauge({
      name: 'eos_checkpoint_consecutive_failures',
      help: 'Failed checkpoints since the last completed one; compare with tolerable failed checkpoints.',
      labelNames,
      registers,
    }),
    tolerableFailures: new Gauge({
      name: 'eos_checkpoint_tolerable_failures',
      help: 'Configured tolerable consecutive failed checkpoints.',
      labelNames,
      registers,
    }),
    lastCompleted: new Gauge({
      name: 'eos_checkpoint_last_completed_timestamp_seconds',
      help: 'Unix time of the last completed checkpoint.',
      labelNames,
      registers,
    }),
    checkpointInterval: new Gauge({
      name: 'eos_checkpoint_interval_seconds',
      help: 'Configured checkpoint interval (for "no checkpoint completed lately" alerts).',
      labelNames,
      registers,
    }),
    checkpointSize: new Gauge({
      name: 'eos_checkpoint_size_bytes',
      help: 'Size of the last completed checkpoint (Flink: checkpointed_size).',
      labelNames,
      registers,
    }),
    restoredFrom: new Gauge({
      name: 'eos_checkpoint_restored_id',
      help: 'Id of the checkpoint or savepoint the job last restored from (Flink: latest.restored); absent when it never restored.',
      labelNames: [...labelNames, 'savepoint'],
      registers,
    }),
    restoredAt: new Gauge({
      name: 'eos_checkpoint_restored_timestamp_seconds',
      help: 'Unix time of the last restore from a checkpoint or savepoint.',
      labelNames,
      registers,
    }),
  };
}

export type CheckpointMetrics = ReturnType<typeof define>;

/** The checkpoint metrics of a registry, defined once whoever asks first (pipeline or Flink poller). */
export const checkpointMetrics: (registry: Registry) => CheckpointMetrics = definedOnce(define);

/** Removes every checkpoint series of one pipeline (a Flink job that is gone). */
export function removeCheckpointSeries(m: CheckpointMetrics, labels: PipelineLabels): void {
  for (const outcome of CHECKPOINT_OUTCOMES) {
    m.checkpointDuration.remove({ ...labels, outcome });
    m.checkpoints.remove({ ...labels, outcome });
  }
  for (const reason of CHECKPOINT_FAILURE_REASONS) m.checkpointFailures.remove({ ...labels, reason });
  for (const savepoint of ['true', 'false']) m.restoredFrom.remove({ ...labels, savepoint });
  for (const g of [m.checkpointsPending, m.consecutiveFailures, m.tolerableFailures, m.lastCompleted, m.checkpointInterval, m.checkpointSize, m.restoredAt]) g.remove(labels);
}
