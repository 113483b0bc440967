// Broker and topic configuration that exactly-once depends on, read from the live cluster's
// effective configuration (value and where it comes from), one result per broker or topic.
import type { BrokerFacts, Check, CheckResult, ClusterFacts, TopicFacts } from '../types.js';
import { describeEntry, intOf } from './util.js';

function perBroker(cluster: ClusterFacts | undefined, fn: (b: BrokerFacts) => Omit<CheckResult, 'target'>): CheckResult[] {
  return (cluster?.brokers ?? []).map((b) => ({ target: `broker:${b.id}`, ...fn(b) }));
}

function auditedTopics(cluster: ClusterFacts | undefined): TopicFacts[] {
  return (cluster?.topics ?? []).filter((t) => !t.roles.includes('internal'));
}

/** Parses "3.9-IV0", "2.8", "0.10.2" into a comparable [major, minor]. */
export function parseKafkaVersion(v: string | null | undefined): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(v ?? '');
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function atLeast(v: [number, number], major: number, minor: number): boolean {
  return v[0] > major || (v[0] === major && v[1] >= minor);
}

/**
 * The record format brokers write. Transactions need format v2 (Kafka 0.11+). On 3.x,
 * log.message.format.version is ignored once inter.broker.protocol.version is 3.0 or newer
 * (KIP-724); 4.0 removed the setting: only v2 exists.
 */
export function effectiveMessageFormat(b: BrokerFacts): { ok: boolean; observed: string } {
  const lmf = b.configs.get('log.message.format.version');
  const ibp = b.configs.get('inter.broker.protocol.version');
  if (!lmf && !ibp) return { ok: true, observed: 'Kafka 4.x: log.message.format.version no longer exists, every record is format v2' };
  const ibpV = parseKafkaVersion(ibp?.value);
  if (ibpV && atLeast(ibpV, 3, 0)) {
    return { ok: true, observed: `format v2: ${describeEntry('inter.broker.protocol.version', ibp)} is 3.0 or newer, so ${describeEntry('log.message.format.version', lmf)} is ignored` };
  }
  const lmfV = parseKafkaVersion(lmf?.value);
  if (lmfV && atLeast(lmfV, 0, 11)) return { ok: true, observed: `format v2: ${describeEntry('log.message.format.version', lmf)}` };
  return { ok: false, observed: `${describeEntry('log.message.format.version', lmf)} with ${describeEntry('inter.broker.protocol.version', ibp)}: records below format v2 cannot carry transactions` };
}

/** The fix for a min ISR finding when the replicas are too few for it to be the first step. */
const RAISE_RF_FIRST =
  'First raise the replication factor to 3 (a topic with fewer replicas than min.insync.replicas + 1 stops accepting writes as soon as one replica is down), then ';

export const brokerChecks: Check[] = [
  {
    id: 'cluster.broker-count',
    title: 'The cluster has at least 3 brokers',
    severity: 'critical',
    rationale:
      'Exactly-once needs every committed record on at least 2 in-sync replicas out of 3, through one broker failure. A cluster with fewer than 3 brokers ' +
      'cannot have that: the replication findings (transaction log, offsets topic, topics) follow from the broker count and cannot be fixed on it. ' +
      'Fine for local development, never for production.',
    remediation: 'Run at least 3 brokers, then fix the replication findings (replication factor 3, min.insync.replicas=2).',
    evaluate: (f) => {
      if (!f.cluster) return [];
      const n = f.cluster.brokers.length;
      return [{ target: 'cluster', passed: n >= 3, observed: `${n} broker${n === 1 ? '' : 's'}`, expected: '>= 3 brokers' }];
    },
  },
  {
    id: 'broker.transaction-state-log-replication-factor',
    title: 'Transaction log replicated at least 3 times',
    severity: 'critical',
    rationale: 'The transaction state log (__transaction_state) records which transactions committed. With one copy, losing that broker loses transaction outcomes: committed data can be rolled back or hang, and producers cannot initialise.',
    remediation: 'Set transaction.state.log.replication.factor=3 before the log is first created (later, reassign __transaction_state partitions to 3 replicas).',
    evaluate: (f) =>
      perBroker(f.cluster, (b) => {
        const e = b.configs.get('transaction.state.log.replication.factor');
        return { passed: (intOf(e) ?? 0) >= 3, observed: describeEntry('transaction.state.log.replication.factor', e), expected: '>= 3' };
      }),
  },
  {
    id: 'broker.transaction-state-log-min-isr',
    title: 'Transaction log min ISR at least 2 and below its replication factor',
    severity: 'critical',
    rationale: 'With min ISR 1 a transaction outcome acknowledged by one replica is lost when that replica dies. Equal to the replication factor, any broker restart stops every transaction.',
    remediation: 'Set transaction.state.log.replication.factor=3 first (it needs 3 brokers), then transaction.state.log.min.isr=2.',
    evaluate: (f) =>
      perBroker(f.cluster, (b) => {
        const e = b.configs.get('transaction.state.log.min.isr');
        const rf = intOf(b.configs.get('transaction.state.log.replication.factor'));
        const v = intOf(e) ?? 0;
        return {
          passed: v >= 2 && (rf === undefined || v < rf),
          observed: `${describeEntry('transaction.state.log.min.isr', e)}, replication factor ${rf ?? 'unknown'}`,
          expected: '>= 2 and < transaction.state.log.replication.factor',
        };
      }),
  },
  {
    id: 'broker.offsets-topic-replication-factor',
    title: 'Consumer offsets topic replicated at least 3 times',
    severity: 'critical',
    rationale: 'Exactly-once pipelines commit their input offsets inside transactions into __consumer_offsets. One copy lost means lost positions: the pipeline re-reads (duplicates) or skips input.',
    remediation: 'Set offsets.topic.replication.factor=3 before the topic is first created.',
    evaluate: (f) =>
      perBroker(f.cluster, (b) => {
        const e = b.configs.get('offsets.topic.replication.factor');
        return { passed: (intOf(e) ?? 0) >= 3, observed: describeEntry('offsets.topic.replication.factor', e), expected: '>= 3' };
      }),
  },
  {
    id: 'broker.message-format',
    title: 'Brokers write record format v2 (needed for transactions)',
    severity: 'critical',
    rationale: 'Transactional and idempotent records need message format v2 (Kafka 0.11+). A downgraded format makes transactional producers fail or lose their guarantees.',
    remediation: 'On 3.x, set inter.broker.protocol.version to 3.0 or newer (log.message.format.version is then ignored); on 4.x there is nothing to do.',
    evaluate: (f) =>
      perBroker(f.cluster, (b) => {
        const r = effectiveMessageFormat(b);
        return { passed: r.ok, observed: r.observed, expected: 'record format v2' };
      }),
  },
  {
    id: 'broker.unclean-leader-election',
    title: 'Unclean leader election disabled',
    severity: 'critical',
    rationale: 'An out-of-sync replica elected leader truncates committed records: acknowledged and committed data disappears, and read_committed consumers never see it.',
    remediation: 'Set unclean.leader.election.enable=false (the default) on brokers and topics.',
    evaluate: (f) => [
      ...perBroker(f.cluster, (b) => {
        const e = b.configs.get('unclean.leader.election.enable');
        return { passed: e?.value !== 'true', observed: describeEntry('unclean.leader.election.enable', e), expected: 'false' };
      }),
      ...auditedTopics(f.cluster)
        .filter((t) => t.configs.get('unclean.leader.election.enable')?.value === 'true')
        .map((t) => ({ target: `topic:${t.name}`, passed: false, observed: describeEntry('unclean.leader.election.enable', t.configs.get('unclean.leader.election.enable')), expected: 'false' })),
    ],
  },
  {
    id: 'topic.replication-factor',
    title: 'Source and sink topics replicated at least 3 times',
    severity: 'critical',
    rationale: 'A topic with fewer than 3 replicas cannot keep min.insync.replicas=2 through one broker failure without losing either availability or acknowledged data.',
    remediation: 'Create the topic with replication factor 3, or reassign its partitions (kafka-reassign-partitions.sh).',
    evaluate: (f) =>
      auditedTopics(f.cluster).map((t) => {
        // No partitions in the metadata: Math.min() is Infinity, and an unknown factor is no pass.
        const rf = Math.min(...t.partitions.map((p) => p.replicas.length));
        const known = Number.isFinite(rf);
        return { target: `topic:${t.name}`, passed: known && rf >= 3, observed: `replication factor ${known ? rf : 'unknown'}`, expected: '>= 3' };
      }),
  },
  {
    id: 'topic.min-insync-replicas',
    title: 'Source and sink topics require at least 2 in-sync replicas',
    severity: 'critical',
    rationale: 'With min.insync.replicas=1, acks=all is acknowledged by the leader alone; if it dies before followers copy the batch, committed records are lost.',
    remediation: 'With replication factor 3 (topic.replication-factor comes first), set min.insync.replicas=2 on the topic (kafka-configs.sh --alter --entity-type topics, or eoswatch topics create for new topics) or as the broker default.',
    evaluate: (f) =>
      auditedTopics(f.cluster).map((t) => {
        const e = t.configs.get('min.insync.replicas');
        const rf = Math.min(...t.partitions.map((p) => p.replicas.length));
        const passed = (intOf(e) ?? 1) >= 2;
        return {
          target: `topic:${t.name}`,
          passed,
          observed: describeEntry('min.insync.replicas', e),
          expected: '>= 2',
          ...(!passed && rf < 3 ? { remediation: `${RAISE_RF_FIRST}set min.insync.replicas=2 on the topic (kafka-configs.sh --alter --entity-type topics).` } : {}),
        };
      }),
  },
];
