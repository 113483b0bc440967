// Metrics of the LSO monitor (hanging-transaction detection). Series of a partition that is no
// longer read (topic deleted, read failed) are removed rather than left at their last value.
import { Counter, Gauge, type Registry } from 'prom-client';

export function lsoMetrics(registry: Registry) {
  const registers = [registry];
  return {
    lag: new Gauge({
      name: 'eos_partition_lso_lag_records',
      help: 'High watermark minus last stable offset: records held back from read_committed consumers by open transactions.',
      labelNames: ['pipeline', 'topic', 'partition'],
      registers,
    }),
    stuck: new Gauge({
      name: 'eos_partition_lso_stuck_seconds',
      help: 'How long the last stable offset has not moved while records wait behind it (0 when nothing is held back).',
      labelNames: ['pipeline', 'topic', 'partition'],
      registers,
    }),
    openAge: new Gauge({
      name: 'eos_partition_open_transaction_age_seconds',
      help: 'Age of the oldest record held behind the last stable offset (the first record of the oldest open transaction), from sampled high watermarks, error at most lsoMonitor.interval; 0 when nothing is held back.',
      labelNames: ['pipeline', 'topic', 'partition'],
      registers,
    }),
    hangingAfter: new Gauge({
      name: 'eos_lso_monitor_hanging_after_seconds',
      help: 'lsoMonitor.hangingAfter: the largest transaction.timeout.ms of the producers writing the watched topics.',
      labelNames: ['pipeline'],
      registers,
    }),
    hanging: new Gauge({
      name: 'eos_hanging_transactions',
      help: 'Partitions of the topic whose last stable offset has been stuck longer than lsoMonitor.hangingAfter (a hanging transaction).',
      labelNames: ['pipeline', 'topic'],
      registers,
    }),
    readErrors: new Counter({
      name: 'eos_lso_monitor_read_errors_total',
      help: 'Failed readings of a topic\'s high watermarks and last stable offsets.',
      labelNames: ['pipeline', 'topic'],
      registers,
    }),
  };
}
