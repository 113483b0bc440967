// Metrics of the Streams service (src/streams/streams-service.ts), per watched Kafka Streams
// application, labelled `application` (its application.id, the same label the transactions
// service gives its transactional ids). The group's state, members and lag are the lag service's
// (eos_consumer_group_state, eos_consumer_group_members, eos_consumer_lag_*), and the
// application's health is eos_pipeline_up with engine="streams" (src/metrics/pipeline.ts): only
// what neither has is defined here.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { definedOnce } from './registry.js';

/** The Streams metrics of a registry, defined once. */
export const streamsMetrics = definedOnce(define);

/** From a quick cooperative rebalance to one that waits out a dead member's session (45 s by default) and more. */
export const REBALANCE_BUCKETS = [0.5, 1, 2.5, 5, 10, 15, 20, 30, 45, 60, 90, 120, 300];

function define(registry: Registry) {
  const registers = [registry];
  return {
    rebalances: new Counter({
      name: 'eos_streams_rebalances_total',
      help: 'Rebalances of the application\'s group that completed (the group Stable again): seen in progress, or seen only as a change of members between two Stable readings.',
      labelNames: ['application'],
      registers,
    }),
    rebalanceDuration: new Histogram({
      name: 'eos_streams_rebalance_duration_seconds',
      help: 'Duration of each rebalance seen in progress: the first reading in PreparingRebalance or CompletingRebalance to the first reading Stable again (error at most streams.interval).',
      labelNames: ['application'],
      buckets: REBALANCE_BUCKETS,
      registers,
    }),
    rebalancing: new Gauge({
      name: 'eos_streams_rebalance_in_progress_seconds',
      help: 'Age of the rebalance in progress (since the first reading that saw it), 0 when the group is not rebalancing.',
      labelNames: ['application'],
      registers,
    }),
    pollDuration: new Gauge({
      name: 'eos_streams_poll_duration_seconds',
      help: 'Duration of the last reading of the applications\' groups.',
      registers,
    }),
  };
}

export type StreamsMetrics = ReturnType<typeof define>;
