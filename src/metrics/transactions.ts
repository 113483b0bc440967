// Metrics of the transactions service (src/coordinator/transactions-service.ts): every
// transactional producer of the cluster as the coordinator sees it, labelled by application
// (ApplicationNamer, capped by transactions.maxApplications), never by transactional id — except
// eos_coordinator_hanging_transaction_info, which carries the id of at most transactions.topN hanging
// transactions (the oldest), so its series count is bounded by topN whatever the cluster holds.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export const TRANSACTION_OUTCOMES = ['committed', 'aborted', 'aborted_timeout', 'fenced'] as const;

export function defineTransactionsMetrics(registry: Registry) {
  const registers = [registry];
  return {
    up: new Gauge({
      name: 'eos_coordinator_up',
      help: 'Whether the last pass of the transactions service read the coordinator (the log or the poll): 1 yes, 0 no (then the per-application gauges and the named hanging transactions are removed until a pass succeeds).',
      registers,
    }),
    source: new Gauge({
      name: 'eos_coordinator_source',
      help: 'Where the transactions service reads the coordinator: 1 for the source in use (log: __transaction_state; poll: ListTransactions/DescribeTransactions, when the log cannot be read), 0 for the other.',
      labelNames: ['source'],
      registers,
    }),
    open: new Gauge({ name: 'eos_coordinator_open_transactions', help: 'Open transactions (Ongoing or being completed) at the coordinator, per application.', labelNames: ['application'], registers }),
    oldestOpen: new Gauge({ name: 'eos_coordinator_oldest_open_transaction_seconds', help: 'Age of the oldest open transaction of the application, 0 when none is open.', labelNames: ['application'], registers }),
    outcomes: new Counter({
      name: 'eos_coordinator_transactions_total',
      help: 'Transactions decided, by outcome: committed, aborted (by the client), aborted_timeout (by the coordinator, transaction.timeout.ms passed), fenced (a new instance took the transactional id). From the transaction log only.',
      labelNames: ['application', 'outcome'],
      registers,
    }),
    duration: new Histogram({
      name: 'eos_coordinator_transaction_duration_seconds',
      help: 'Transaction duration, begin (first partition added) to its decision (EndTxn, timeout or fencing), from the coordinator\'s timestamps.',
      labelNames: ['application'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900],
      registers,
    }),
    completion: new Histogram({
      name: 'eos_coordinator_commit_completion_seconds',
      help: 'Commit completion: the client\'s EndTxn until every marker is written (PrepareCommit to CompleteCommit).',
      labelNames: ['application'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    fencings: new Counter({ name: 'eos_coordinator_fencings_total', help: 'Producers fenced while a transaction was open: another instance initialised the same transactional id.', labelNames: ['application'], registers }),
    ids: new Gauge({ name: 'eos_coordinator_transactional_ids', help: 'Transactional ids the coordinator keeps (not expired), per application.', labelNames: ['application'], registers }),
    versions: new Gauge({ name: 'eos_coordinator_client_version_ids', help: 'Transactional ids per client transaction version (0/1 classic, 2 KIP-890), per application.', labelNames: ['application', 'version'], registers }),
    hanging: new Gauge({ name: 'eos_coordinator_hanging_transactions', help: 'Partitions whose last stable offset is held by a hanging transaction of the application (its producer wrote nothing for transactions.idleAfter).', labelNames: ['application'], registers }),
    hangingInfo: new Gauge({
      name: 'eos_coordinator_hanging_transaction_info',
      help: 'The oldest hanging transactions (at most transactions.topN series), value their age in seconds: names the transactional id for alerts.',
      labelNames: ['application', 'topic', 'partition', 'transactional_id'],
      registers,
    }),
    overflowed: new Gauge({ name: 'eos_coordinator_applications_overflowed', help: 'Applications beyond transactions.maxApplications, counted under application="(other)".', registers }),
  };
}

export type TransactionsMetrics = ReturnType<typeof defineTransactionsMetrics>;
