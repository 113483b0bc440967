// Producer-side exactly-once settings of Kafka clients and Flink's KafkaSink (Kafka Streams: streams.ts).
// Defaults are those of Kafka clients >= 3.0 (KIP-679: idempotence and acks=all by default).
import { formatDuration } from '../../config/duration.js';
import { clientTarget, perClient } from './util.js';
import type { AuditFacts, Check, CheckpointFacts, CheckResult, ClientFacts } from '../types.js';

const INT_MAX = 2147483647;
const DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000;
const DEFAULT_BROKER_MAX_TRANSACTION_TIMEOUT_MS = 900_000;
/** KafkaSinkBuilder sets transaction.timeout.ms to 1 hour unless told otherwise. */
const KAFKA_SINK_DEFAULT_TRANSACTION_TIMEOUT_MS = 3_600_000;
const FLINK_DEFAULT_CHECKPOINT_TIMEOUT_MS = 600_000;

/** `producer:/etc/app/producer.properties`; eoswatch's own pipeline is already `pipeline:<name>`. */
export { clientTarget } from './util.js';

/** Kafka's ConfigDef trims values; an empty value is as good as unset for these keys. */
export function setting(c: ClientFacts, key: string): string | undefined {
  const v = c.props.get(key)?.trim();
  return v === undefined || v === '' ? undefined : v;
}


/**
 * The producer properties of a Flink KafkaSink (`file` is `flink:<path>`). The sink sets
 * transactional.id itself from its prefix and defaults transaction.timeout.ms to 1 hour, so those
 * two are judged on the job's checkpoint facts (flink.kafka-sink-exactly-once, and
 * producer.transaction-timeout with target `flink:<path>`), not as a plain Kafka producer.
 */
const isFlinkSink = (c: ClientFacts): boolean => c.file.startsWith('flink:');

const producers = (facts: AuditFacts): ClientFacts[] => facts.clients.filter((c) => c.role === 'producer');

const perProducer = (evaluate: (c: ClientFacts) => Omit<CheckResult, 'target'>, include?: (c: ClientFacts) => boolean) =>
  perClient('producer', evaluate, include);

const ms = (n: number): string => `${n} ms (${formatDuration(n)})`;
const isInt = (v: string): boolean => /^-?[0-9]+$/.test(v);

/** Why an unset enable.idempotence is not enabled after all (Kafka >= 3.2 turns the default off silently). */
function idempotenceConflict(c: ClientFacts): string | undefined {
  const acks = setting(c, 'acks')?.toLowerCase();
  if (acks !== undefined && acks !== 'all' && acks !== '-1') return `acks=${acks}`;
  const retries = setting(c, 'retries');
  if (retries === '0') return 'retries=0';
  const inFlight = setting(c, 'max.in.flight.requests.per.connection');
  if (inFlight !== undefined && isInt(inFlight) && Number(inFlight) > 5) return `max.in.flight.requests.per.connection=${inFlight}`;
  return undefined;
}

const enableIdempotence: Check = {
  id: 'producer.enable-idempotence',
  title: 'Producer idempotence is enabled',
  severity: 'critical',
  rationale:
    'Without idempotence a retried send that had in fact reached the broker is written twice, and a retry can reorder a partition. ' +
    'Transactions require it. Since Kafka 3.0 it is on by default, but an unset value is silently turned off when acks, retries or max.in.flight conflict.',
  remediation: 'Set enable.idempotence=true (with acks=all, retries unset or 2147483647, max.in.flight.requests.per.connection <= 5).',
  evaluate: perProducer((c) => {
    const v = setting(c, 'enable.idempotence');
    const expected = 'enable.idempotence=true';
    if (v === undefined) {
      const conflict = idempotenceConflict(c);
      return conflict
        ? { passed: false, observed: `enable.idempotence unset, but ${conflict} turns the default off`, expected }
        : { passed: true, observed: 'enable.idempotence unset (default true since Kafka 3.0)', expected };
    }
    return { passed: v.toLowerCase() === 'true', observed: `enable.idempotence=${v}`, expected };
  }),
};

const acks: Check = {
  id: 'producer.acks',
  title: 'Producer waits for all in-sync replicas',
  severity: 'critical',
  rationale: 'With acks=0 or 1 a write acknowledged by the leader alone is lost when that leader fails before the followers copied it; idempotence and transactions require acks=all.',
  remediation: 'Set acks=all (or leave it unset on Kafka clients >= 3.0).',
  evaluate: perProducer((c) => {
    const v = setting(c, 'acks');
    const expected = 'acks=all (or -1)';
    if (v === undefined) return { passed: true, observed: 'acks unset (default all since Kafka 3.0)', expected };
    return { passed: ['all', '-1'].includes(v.toLowerCase()), observed: `acks=${v}`, expected };
  }),
};

const retries: Check = {
  id: 'producer.retries',
  title: 'Producer retries until delivery.timeout.ms',
  severity: 'critical',
  rationale:
    'A finite retries count gives up during a broker restart or leader election: the send fails, a transaction must abort and a checkpoint fails, ' +
    'and a non-transactional producer loses the record unless the application resends it. retries=0 also turns implicit idempotence off.',
  remediation: 'Leave retries unset (2147483647) and bound the retrying with delivery.timeout.ms instead.',
  evaluate: perProducer((c) => {
    const v = setting(c, 'retries');
    const expected = `retries unset or ${INT_MAX} (Integer.MAX_VALUE)`;
    if (v === undefined) return { passed: true, observed: `retries unset (default ${INT_MAX})`, expected };
    return { passed: isInt(v) && Number(v) >= INT_MAX, observed: `retries=${v}`, expected };
  }),
};

const retryBackoff: Check = {
  id: 'producer.retry-backoff',
  title: 'Producer backs off at least 1 s between retries',
  severity: 'warning',
  rationale:
    'With the default 100 ms every producer retries ten times a second while brokers restart, which adds load exactly when the cluster is weakest ' +
    '(Kafka >= 3.7 grows the backoff exponentially up to retry.backoff.max.ms, but starts at retry.backoff.ms).',
  remediation: 'Set retry.backoff.ms=1000.',
  // Java clients only: eoswatch's own pipeline producer (kafkajs) backs off exponentially from 20 ms to
  // 1 s (src/pipeline/pipeline-service.ts pipelineService), short at first to ride out CONCURRENT_TRANSACTIONS right after each commit;
  // it has no fixed retry.backoff.ms that a finding could ask to change.
  evaluate: perProducer((c) => {
    const v = setting(c, 'retry.backoff.ms');
    const expected = 'retry.backoff.ms >= 1000';
    if (v === undefined) return { passed: false, observed: 'retry.backoff.ms unset (default 100)', expected };
    return { passed: isInt(v) && Number(v) >= 1000, observed: `retry.backoff.ms=${v}`, expected };
  }, (c) => !c.file.startsWith('pipeline:')),
};

const requestTimeout: Check = {
  id: 'producer.request-timeout',
  title: 'Producer request timeout is at least 30 s',
  severity: 'warning',
  rationale: 'A short request timeout fails sends, transaction commits and offset commits during a slow broker (GC pause, leader election) that a 30 s wait would ride out.',
  remediation: 'Set request.timeout.ms=30000 or more (or leave it unset: the default is 30000).',
  evaluate: perProducer((c) => {
    const v = setting(c, 'request.timeout.ms');
    const expected = 'request.timeout.ms >= 30000';
    if (v === undefined) return { passed: true, observed: 'request.timeout.ms unset (default 30000)', expected };
    return { passed: isInt(v) && Number(v) >= 30_000, observed: `request.timeout.ms=${v}`, expected };
  }),
};

const maxInFlight: Check = {
  id: 'producer.max-in-flight',
  title: 'At most 5 requests in flight per connection',
  severity: 'critical',
  rationale:
    'The broker deduplicates only the last 5 batches per producer: with more in flight, idempotence is refused (explicit) or silently turned off (default), ' +
    'and retries can duplicate and reorder records.',
  remediation: 'Set max.in.flight.requests.per.connection to 5 or less (the default is 5).',
  evaluate: perProducer((c) => {
    const v = setting(c, 'max.in.flight.requests.per.connection');
    const expected = 'max.in.flight.requests.per.connection <= 5';
    if (v === undefined) return { passed: true, observed: 'max.in.flight.requests.per.connection unset (default 5)', expected };
    return { passed: isInt(v) && Number(v) >= 1 && Number(v) <= 5, observed: `max.in.flight.requests.per.connection=${v}`, expected };
  }),
};

const transactionalId: Check = {
  id: 'producer.transactional-id',
  title: 'Producer is transactional',
  severity: 'critical',
  rationale:
    'Without a transactional.id the output of a consume-transform-produce step is not atomic with its input offsets: after a crash the replayed input is written again. ' +
    'The id also fences a zombie instance that still writes. It must be stable across restarts and unique per producer.',
  remediation:
    'Set transactional.id to a stable id unique per producer instance (e.g. <app>-<input partition>). Flink\'s KafkaSink derives it from setTransactionalIdPrefix (see flink.kafka-sink-exactly-once).',
  evaluate: perProducer((c) => {
    const v = setting(c, 'transactional.id');
    return v === undefined
      ? { passed: false, observed: 'transactional.id unset (no transactions)', expected: 'transactional.id set' }
      : { passed: true, observed: `transactional.id=${v}`, expected: 'transactional.id set' };
  }, (c) => !isFlinkSink(c)),
};

/** The strictest transaction.max.timeout.ms of the cluster (any broker can be the coordinator). */
function brokerMaxTransactionTimeout(facts: AuditFacts): { ms: number; source: string } {
  const values = (facts.cluster?.brokers ?? []).flatMap((b) => {
    const v = b.configs.get('transaction.max.timeout.ms')?.value;
    return v !== undefined && v !== null && isInt(v.trim()) ? [{ broker: b.id, ms: Number(v.trim()) }] : [];
  });
  if (values.length === 0) {
    return { ms: DEFAULT_BROKER_MAX_TRANSACTION_TIMEOUT_MS, source: facts.cluster ? 'broker default' : 'broker default, no cluster facts' };
  }
  const min = values.reduce((a, b) => (b.ms < a.ms ? b : a));
  return { ms: min.ms, source: `broker ${min.broker}` };
}

/** How long a transaction stays open in the worst case: from one checkpoint to the next one's completion. */
function checkpointSpan(cp: CheckpointFacts): { ms: number; text: string } | undefined {
  if (cp.intervalMs === undefined) return undefined;
  const timeout = cp.timeoutMs ?? (cp.origin === 'flink' ? FLINK_DEFAULT_CHECKPOINT_TIMEOUT_MS : undefined);
  if (timeout === undefined) return undefined;
  const unset = cp.timeoutMs === undefined ? ' (default)' : '';
  return {
    ms: cp.intervalMs + timeout,
    text: `checkpoint interval ${formatDuration(cp.intervalMs)} + timeout ${formatDuration(timeout)}${unset} = ${formatDuration(cp.intervalMs + timeout)} (${cp.target})`,
  };
}

function judgeTransactionTimeout(
  target: string,
  timeout: { ms: number; text: string },
  span: { ms: number; text: string } | undefined,
  max: { ms: number; source: string },
): CheckResult {
  const tooShort = span !== undefined && timeout.ms <= span.ms;
  const tooLong = timeout.ms > max.ms;
  const observed = [
    timeout.text,
    span ? span.text : 'no checkpointing facts',
    `transaction.max.timeout.ms ${ms(max.ms)} (${max.source})`,
  ].join('; ');
  const expected = span
    ? `transaction.timeout.ms above ${ms(span.ms)} and at most ${ms(max.ms)}`
    : `transaction.timeout.ms at most ${ms(max.ms)} (broker transaction.max.timeout.ms)`;
  return { target, passed: !tooShort && !tooLong, observed, expected };
}

function sinkUsesTransactions(cp: CheckpointFacts): boolean {
  if (cp.origin !== 'flink') return false;
  if (cp.sinkDeliveryGuarantee !== undefined) return cp.sinkDeliveryGuarantee === 'EXACTLY_ONCE';
  return cp.sinkTransactionalIdPrefix !== undefined || cp.sinkTransactionTimeoutMs !== undefined;
}

const transactionTimeout: Check = {
  id: 'producer.transaction-timeout',
  title: 'Transaction timeout outlasts a checkpoint and fits the broker maximum',
  severity: 'critical',
  rationale:
    'A transaction stays open from one checkpoint until the next one completes. If transaction.timeout.ms is shorter, the coordinator aborts it ' +
    'before the commit and the records of that checkpoint are lost. If it is above the broker\'s transaction.max.timeout.ms (default 15 min), ' +
    'InitProducerId fails with InvalidTxnTimeoutException and the producer cannot start: Flink\'s KafkaSink defaults to 1 hour.',
  remediation:
    'Set transaction.timeout.ms above checkpoint interval + checkpoint timeout (plus the restart time you want to survive) and at most the brokers\' ' +
    'transaction.max.timeout.ms; for Flink\'s KafkaSink set it explicitly (setProperty("transaction.timeout.ms", ...)) or raise the broker maximum.',
  evaluate(facts) {
    const max = brokerMaxTransactionTimeout(facts);
    const spans = facts.checkpoints.map(checkpointSpan).filter((s) => s !== undefined);
    const longest = spans.length ? spans.reduce((a, b) => (b.ms > a.ms ? b : a)) : undefined;
    const results = producers(facts).filter((c) => !isFlinkSink(c)).map((c) => {
      const v = setting(c, 'transaction.timeout.ms');
      if (v !== undefined && !isInt(v)) {
        return { target: clientTarget(c), passed: false, observed: `transaction.timeout.ms=${v} (not a number)`, expected: 'a number of milliseconds' };
      }
      const timeout = v === undefined
        ? { ms: DEFAULT_TRANSACTION_TIMEOUT_MS, text: `transaction.timeout.ms unset (default ${ms(DEFAULT_TRANSACTION_TIMEOUT_MS)})` }
        : { ms: Number(v), text: `transaction.timeout.ms=${v} (${formatDuration(Number(v))})` };
      return judgeTransactionTimeout(clientTarget(c), timeout, longest, max);
    });
    // A Flink job's KafkaSink is judged against its own checkpointing.
    for (const cp of facts.checkpoints.filter(sinkUsesTransactions)) {
      const timeout = cp.sinkTransactionTimeoutMs === undefined
        ? { ms: KAFKA_SINK_DEFAULT_TRANSACTION_TIMEOUT_MS, text: `KafkaSink transaction.timeout.ms unset (KafkaSink default ${ms(KAFKA_SINK_DEFAULT_TRANSACTION_TIMEOUT_MS)})` }
        : { ms: cp.sinkTransactionTimeoutMs, text: `KafkaSink transaction.timeout.ms=${cp.sinkTransactionTimeoutMs} (${formatDuration(cp.sinkTransactionTimeoutMs)})` };
      results.push(judgeTransactionTimeout(cp.target, timeout, checkpointSpan(cp), max));
    }
    return results;
  },
};

export const producerChecks: Check[] = [
  enableIdempotence,
  acks,
  retries,
  retryBackoff,
  requestTimeout,
  maxInFlight,
  transactionalId,
  transactionTimeout,
];
