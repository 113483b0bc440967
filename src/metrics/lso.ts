// Metrics of the LSO monitor (hanging-transaction detection). Every series carries the labels of the
// pipeline the topic belongs to, `pipeline`, `engine` and `job_id` (src/metrics/checkpoint-stats.ts):
// the own pipeline's topics and lsoMonitor.topics the own pipeline's, a topic of flink.sinks the
// labels of the Flink job writing it, so they join eos_pipeline_up and the checkpoint series.
// Series of a partition that is no longer read (topic deleted, read failed) are removed rather than
// left at their last value.
import { Gauge, type Registry } from 'prom-client';
import { PIPELINE_LABELS } from './checkpoint-stats.js';
import { definedOnce } from './registry.js';
import { SeriesGauge } from './series-gauge.js';

/** The LSO metrics of a registry, defined once (a monitor built again after a restart shares them). */
export const lsoMetrics = definedOnce(define);

function define(registry: Registry) {
  const registers = [registry];
  const partitionLabels = [...PIPELINE_LABELS, 'topic' as const, 'partition' as const];
  return {
    lag: new SeriesGauge({
      name: 'eos_partition_lso_lag_records',
      help: 'High watermark minus last stable offset: records held back from read_committed consumers by open transactions.',
      labelNames: partitionLabels,
      registers,
    }),
    stuck: new SeriesGauge({
      name: 'eos_partition_lso_stuck_seconds',
      help: 'How long the last stable offset has not moved while records wait behind it (0 when nothing is held back).',
      labelNames: partitionLabels,
      registers,
    }),
    openAge: new SeriesGauge({
      name: 'eos_partition_open_transaction_age_seconds',
      help: 'Age of the oldest record held behind the last stable offset (the first record of the oldest open transaction), from sampled high watermarks, error at most lsoMonitor.interval; 0 when nothing is held back.',
      labelNames: partitionLabels,
      registers,
    }),
    hangingAfter: new Gauge({
      name: 'eos_lso_monitor_hanging_after_seconds',
      help: 'lsoMonitor.hangingAfter: the largest transaction.timeout.ms of the producers writing the watched topics (one series per pipeline whose topics are watched).',
      labelNames: [...PIPELINE_LABELS],
      registers,
    }),
    hanging: new Gauge({
      name: 'eos_hanging_transactions',
      help: 'Partitions of the topic whose last stable offset has been stuck longer than lsoMonitor.hangingAfter (a hanging transaction).',
      labelNames: [...PIPELINE_LABELS, 'topic' as const],
      registers,
    }),
  };
}
