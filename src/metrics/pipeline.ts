// Pipeline metrics (names are contracts: dashboards and alerts use them). Every series carries
// the `pipeline` label. Buckets resolve both a 5 ms commit and a 30 s stalled checkpoint.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export function pipelineMetrics(registry: Registry) {
  const registers = [registry];
  return {
    commitLatency: new Histogram({
      name: 'eos_kafka_transaction_commit_latency_seconds',
      help: 'Time from the end of preCommit (records flushed, offsets sent) to commit() returning, per transaction.',
      labelNames: ['pipeline'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    checkpointDuration: new Histogram({
      name: 'eos_checkpoint_duration_seconds',
      help: 'Checkpoint trigger to all partition transactions committed (outcome completed) or aborted (failed, timeout).',
      labelNames: ['pipeline', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    checkpointsPending: new Gauge({
      name: 'eos_checkpoints_pending',
      help: 'Checkpoints triggered and not yet completed or aborted (healthy: 0 or 1).',
      labelNames: ['pipeline'],
      registers,
    }),
    checkpoints: new Counter({
      name: 'eos_checkpoints_total',
      help: 'Checkpoints by outcome: completed, failed, timeout.',
      labelNames: ['pipeline', 'outcome'],
      registers,
    }),
    consecutiveFailures: new Gauge({
      name: 'eos_checkpoint_consecutive_failures',
      help: 'Failed checkpoints since the last completed one; compare with tolerable failed checkpoints.',
      labelNames: ['pipeline'],
      registers,
    }),
    tolerableFailures: new Gauge({
      name: 'eos_checkpoint_tolerable_failures',
      help: 'Configured tolerable consecutive failed checkpoints.',
      labelNames: ['pipeline'],
      registers,
    }),
    lastCompleted: new Gauge({
      name: 'eos_checkpoint_last_completed_timestamp_seconds',
      help: 'Unix time of the last completed checkpoint.',
      labelNames: ['pipeline'],
      registers,
    }),
    checkpointInterval: new Gauge({
      name: 'eos_checkpoint_interval_seconds',
      help: 'Configured checkpoint interval (for "no checkpoint completed lately" alerts).',
      labelNames: ['pipeline'],
      registers,
    }),
    transactions: new Counter({
      name: 'eos_transactions_total',
      help: 'Partition transactions by outcome: committed, aborted.',
      labelNames: ['pipeline', 'outcome'],
      registers,
    }),
    fenced: new Counter({
      name: 'eos_producer_fenced_total',
      help: 'Times a producer of this instance was fenced by a newer epoch of its transactional id.',
      labelNames: ['pipeline'],
      registers,
    }),
    records: new Counter({
      name: 'eos_pipeline_records_total',
      help: 'Records by direction: in (consumed and processed), out (produced to the sink), dlq (sent to the dead-letter topic).',
      labelNames: ['pipeline', 'direction'],
      registers,
    }),
    up: new Gauge({
      name: 'eos_pipeline_up',
      help: '1 while the pipeline runs with its last checkpoint completed; 0 once a checkpoint fails, while FAILED, starting or restarting.',
      labelNames: ['pipeline'],
      registers,
    }),
    assignedPartitions: new Gauge({
      name: 'eos_pipeline_assigned_partitions',
      help: 'Input partitions assigned to this instance.',
      labelNames: ['pipeline'],
      registers,
    }),
  };
}

export type PipelineMetrics = ReturnType<typeof pipelineMetrics>;
