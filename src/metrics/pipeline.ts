// Pipeline metrics (names are contracts: dashboards and alerts use them). Every series carries
// the `pipeline`, `engine` and `job_id` labels (src/metrics/checkpoint-stats.ts). Buckets resolve
// both a 5 ms commit and a 30 s stalled checkpoint. The checkpoint metrics are owned by
// checkpoint-stats.ts and only handed through here.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { checkpointMetrics, LATENCY_BUCKETS, PIPELINE_LABELS } from './checkpoint-stats.js';
import { definedOnce } from './registry.js';

export { LATENCY_BUCKETS };

/** The pipeline metrics of a registry, defined once (the own pipeline and the Flink poller share them). */
export const pipelineMetrics = definedOnce(define);

function define(registry: Registry) {
  const registers = [registry];
  const labelNames = [...PIPELINE_LABELS];
  return {
    ...checkpointMetrics(registry),
    commitLatency: new Histogram({
      name: 'eos_kafka_transaction_commit_latency_seconds',
      help: 'Time from the end of preCommit (records flushed, offsets sent) to commit() returning, per transaction.',
      labelNames,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    transactions: new Counter({
      name: 'eos_transactions_total',
      help: 'Partition transactions by outcome: committed, aborted.',
      labelNames: [...labelNames, 'outcome'],
      registers,
    }),
    fenced: new Counter({
      name: 'eos_producer_fenced_total',
      help: 'Times a producer of this instance was fenced by a newer epoch of its transactional id.',
      labelNames,
      registers,
    }),
    records: new Counter({
      name: 'eos_pipeline_records_total',
      help: 'Records by direction: in (consumed and processed), out (produced to the sink), dlq (sent to the dead-letter topic).',
      labelNames: [...labelNames, 'direction'],
      registers,
    }),
    up: pipelineUpMetric(registry),
    assignedPartitions: new Gauge({
      name: 'eos_pipeline_assigned_partitions',
      help: 'Input partitions assigned to this instance.',
      labelNames,
      registers,
    }),
  };
}

export type PipelineMetrics = ReturnType<typeof define>;

/**
 * eos_pipeline_up alone, defined once: a Kafka Streams application's health (src/streams/) is
 * this gauge without the rest of the pipeline family (whose eos_transactions_total a daemon with
 * the transactions service must not define).
 */
export const pipelineUpMetric = definedOnce((registry: Registry) => {
  const registers = [registry];
  const labelNames = [...PIPELINE_LABELS];
  return new Gauge({
    name: 'eos_pipeline_up',
    help: '1 while the pipeline runs with its last checkpoint completed; 0 once a checkpoint fails, while FAILED, starting or restarting (Flink: the job is RUNNING and every task is running; Kafka Streams: the application\'s group is Stable with at least one member).',
    labelNames,
    registers,
  });
});
