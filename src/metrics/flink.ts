// Metrics of the Flink service (src/flink/flink-service.ts): what only a Flink job has (its REST
// API answering, the KafkaSink's commits and their visibility, the statistics' staleness, the
// failovers); the checkpoint and pipeline families every engine shares are checkpoint-stats.ts
// and pipeline.ts.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS, PIPELINE_LABELS } from './checkpoint-stats.js';
import { definedOnce } from './registry.js';

function define(registry: Registry) {
  const registers = [registry];
  return {
    restUp: new Gauge({ name: 'eos_flink_rest_up', help: '1 when a Flink JobManager REST URL answered the last poll.', registers }),
    sinkCommitTime: new Counter({
      name: 'eos_flink_sink_commit_time_seconds_total',
      help: "Time the KafkaSink's Kafka producers spent in commitTransaction (the writer producers' txn-commit-time-ns-total, summed over subtasks); divided by the rate of successful committables it is the mean commit latency.",
      labelNames: [...PIPELINE_LABELS],
      registers,
    }),
    sinkCommittables: new Counter({
      name: 'eos_flink_sink_committables_total',
      help: "KafkaSink committables (one transaction each) by outcome: successful, failed (the committer's successfulCommittables, failedCommittables).",
      labelNames: [...PIPELINE_LABELS, 'outcome'],
      registers,
    }),
    sinkPending: new Gauge({
      name: 'eos_flink_sink_pending_committables',
      help: "KafkaSink transactions pre-committed and waiting for their checkpoint to complete (the committer's pendingCommittables).",
      labelNames: [...PIPELINE_LABELS],
      registers,
    }),
    visibility: new Histogram({
      name: 'eos_flink_sink_visibility_latency_seconds',
      help: "Flink checkpoint completion (its latest_ack_timestamp) until the sink topic's last stable offset passed the records written before the checkpoint was triggered, i.e. until read_committed consumers can read them; from the LSO monitor's readings, at most one lsoMonitor.interval above the true value. Only jobs with flink.sinks.",
      labelNames: [...PIPELINE_LABELS],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    visibilityPending: new Gauge({
      name: 'eos_flink_sink_visibility_pending_seconds',
      help: "Age of the oldest completed Flink checkpoint whose records are still behind the sink topic's last stable offset (0: none); grows while the KafkaSink cannot commit.",
      labelNames: [...PIPELINE_LABELS],
      registers,
    }),
    statsStaleness: new Gauge({
      name: 'eos_flink_checkpoint_stats_staleness_seconds',
      help: "How far behind the job's checkpoint statistics eoswatch's view of them can be: flink.pollInterval plus the REST server's checkpoint statistics cache (rest.cache.checkpoint-statistics.timeout, default web.refresh-interval). The stalled-checkpoint alert adds it to its threshold.",
      labelNames: [...PIPELINE_LABELS],
      registers,
    }),
    restarts: new Counter({
      name: 'eos_pipeline_restarts_total',
      help: 'Failovers of a Flink job (one per entry of its exception history).',
      labelNames: [...PIPELINE_LABELS],
      registers,
    }),
  };
}

export const flinkMetrics = definedOnce(define);

export type FlinkMetrics = ReturnType<typeof define>;
