// Consumer-lag metrics (names are contracts: dashboards and alerts use them). Lag is measured to
// the last stable offset, what a read_committed consumer can actually read; the high-watermark
// lag is exported beside it for comparison. The per-partition series carry the labels of the
// pipeline they belong to, `pipeline`, `engine`, `job_id` (src/metrics/checkpoint-stats.ts): the
// own pipeline's group its own, a group reading a Flink job's source or sink topic the job's, any
// other group the own pipeline's (src/lag/lag-service.ts lagLabels). The group's state and members
// are the group's, not a pipeline's (a group may read topics of several). Series of a group, topic or partition that is no
// longer read are removed rather than left at their last value.
import { Gauge, type Registry } from 'prom-client';
import { PIPELINE_LABELS } from './checkpoint-stats.js';
import { definedOnce } from './registry.js';
import { SeriesGauge } from './series-gauge.js';

/** The lag metrics of a registry, defined once. */
export const lagMetrics = definedOnce(define);

function define(registry: Registry) {
  const registers = [registry];
  const partitionLabels = [...PIPELINE_LABELS, 'group' as const, 'topic' as const, 'partition' as const];
  return {
    committed: new SeriesGauge({
      name: 'eos_consumer_committed_offset',
      help: 'Committed offset of the consumer group on the partition.',
      labelNames: partitionLabels,
      registers,
    }),
    lagRecords: new SeriesGauge({
      name: 'eos_consumer_lag_records',
      help: 'Last stable offset minus committed offset: offsets a read_committed consumer of the group still has to read.',
      labelNames: partitionLabels,
      registers,
    }),
    lagSeconds: new SeriesGauge({
      name: 'eos_consumer_lag_seconds',
      help: 'How long the first unconsumed committed record has been readable (offset-time table of sampled last stable offsets, error at most lag.interval); 0 without lag.',
      labelNames: partitionLabels,
      registers,
    }),
    hwLagRecords: new SeriesGauge({
      name: 'eos_consumer_hw_lag_records',
      help: 'High watermark minus committed offset: the lag HW-based exporters report, which counts records of open transactions.',
      labelNames: partitionLabels,
      registers,
    }),
    stuck: new SeriesGauge({
      name: 'eos_consumer_group_stuck_seconds',
      help: 'How long the committed offset has not moved while eos_consumer_lag_records > 0 (0 otherwise).',
      labelNames: partitionLabels,
      registers,
    }),
    state: new Gauge({
      name: 'eos_consumer_group_state',
      help: 'Consumer group state: 1 for the current state (Stable, PreparingRebalance, CompletingRebalance, Empty, Dead, Unknown), 0 for the others.',
      labelNames: ['group', 'state'],
      registers,
    }),
    members: new Gauge({
      name: 'eos_consumer_group_members',
      help: 'Members of the consumer group.',
      labelNames: ['group'],
      registers,
    }),
    groups: new Gauge({
      name: 'eos_lag_groups_watched',
      help: 'Consumer groups whose lag the last reading covered.',
      registers,
    }),
    pollDuration: new Gauge({
      name: 'eos_lag_poll_duration_seconds',
      help: 'Duration of the last lag reading (groups, committed offsets and end offsets of every watched partition).',
      registers,
    }),
    denied: new Gauge({
      name: 'eos_lag_permission_denied',
      help: 'A group lag.groups names that the lag service may not describe (GROUP_AUTHORIZATION_FAILED), resource="group:<name>": 1 while refused. Kafka leaves such groups out of ListGroups without an error; their lag is not read.',
      labelNames: ['resource'],
      registers,
    }),
  };
}

export type LagMetrics = ReturnType<typeof define>;

export const GROUP_STATES = ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead', 'Unknown'];

/**
 * The age of each open transaction of the pipeline's producers (one per input partition), computed
 * at scrape time from in-memory timestamps the pipeline keeps, plus the configured timeout, so an
 * alert fires before the broker aborts the transaction.
 */
export function pipelineTransactionAgeMetrics(registry: Registry, pipeline: string, timeoutMs: number, openSince: () => Map<number, number>) {
  const registers = [registry];
  // A pipeline built again in the same process (restarted by its supervisor) replaces the gauges.
  for (const name of ['eos_pipeline_transaction_timeout_seconds', 'eos_pipeline_transaction_open_seconds']) registry.removeSingleMetric(name);
  // The own pipeline's series: engine="eoswatch", job_id empty, like its checkpoint series.
  const labels = { pipeline, engine: 'eoswatch', job_id: '' };
  new Gauge({
    name: 'eos_pipeline_transaction_timeout_seconds',
    help: 'transaction.timeout.ms of the pipeline\'s transactional producers.',
    labelNames: [...PIPELINE_LABELS],
    registers,
  }).set(labels, timeoutMs / 1000);
  new Gauge({
    name: 'eos_pipeline_transaction_open_seconds',
    help: 'Time since the first record of the open transaction of the input partition\'s producer; 0 when no transaction holds records.',
    labelNames: [...PIPELINE_LABELS, 'partition' as const],
    registers,
    collect() {
      // In-memory state only (the pipeline's tasks): nothing slow in a scrape.
      this.reset();
      const now = Date.now();
      for (const [partition, since] of openSince()) this.set({ ...labels, partition: String(partition) }, since > 0 ? (now - since) / 1000 : 0);
    },
  });
}
