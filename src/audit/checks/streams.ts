// Kafka Streams applications (`--streams FILE`, audit.streamsConfigs): the StreamsConfig settings
// exactly-once depends on, and the producer and consumer settings as Streams derives them from
// the file (plain keys, then the client prefixes) and then overrides or refuses them.
// Semantics from apache/kafka streams/.../StreamsConfig.java (getMainConsumerConfigs,
// getRestoreConsumerConfigs, getGlobalConsumerConfigs, getProducerConfigs,
// checkIfUnexpectedUserSpecifiedConsumerConfig, verifyEOSTransactionTimeoutCompatibility).
import { formatDuration } from '../../config/duration.js';
import { clientTarget } from './util.js';
import type { AuditFacts, Check, CheckResult, ClientFacts, ClusterFacts } from '../types.js';

const EOS_V2 = 'exactly_once_v2';
/** Removed in Kafka Streams 4.0 (KIP-732 deprecated them in 3.0). */
const REMOVED_EOS = ['exactly_once', 'exactly_once_beta'];
/** StreamsConfig.DEFAULT_TRANSACTION_TIMEOUT: Streams' producer default under exactly-once. */
const STREAMS_EOS_TRANSACTION_TIMEOUT_MS = 10_000;
const EOS_DEFAULT_COMMIT_INTERVAL_MS = 100;
const DEFAULT_BROKER_MAX_TRANSACTION_TIMEOUT_MS = 900_000;
const DLQ_TOPIC = 'errors.dead.letter.queue.topic.name';

/** A StreamsConfig value as ConfigDef reads it: trimmed; empty is as good as unset. */
export function streamsSetting(props: Map<string, string>, key: string): string | undefined {
  return props.get(key)?.trim() || undefined;
}

const isInt = (v: string): boolean => /^-?[0-9]+$/.test(v);

const EOS_VALUES: (string | undefined)[] = [EOS_V2, ...REMOVED_EOS];

/** exactly_once_v2, or one of the removed forms a 3.x library still runs transactionally. */
export function eosEnabled(c: ClientFacts): boolean {
  return EOS_VALUES.includes(streamsSetting(c.props, 'processing.guarantee')?.toLowerCase());
}

/** A client setting as Streams reads it from the file: the key that wins and its value. */
export interface ClientSetting {
  key: string;
  value: string;
}

/**
 * The producer's (`producer.` > plain) or every consumer's (`consumer.` > plain) value of a client
 * setting: the level Streams filters through checkIfUnexpectedUserSpecifiedConsumerConfig. The
 * main./restore./global.consumer. prefixes come after that filter and are read on their own.
 */
export function commonSetting(props: Map<string, string>, client: 'producer' | 'consumer', key: string): ClientSetting | undefined {
  for (const k of [`${client}.${key}`, key]) {
    const v = streamsSetting(props, k);
    if (v !== undefined) return { key: k, value: v };
  }
  return undefined;
}

/** The consumer prefixes Streams applies as written, after its own overrides. */
const CONSUMER_PREFIXES = [
  { prefix: 'main.consumer.', client: 'main consumer' },
  { prefix: 'restore.consumer.', client: 'restore consumer' },
  { prefix: 'global.consumer.', client: 'global consumer' },
] as const;

const streamsClients = (facts: AuditFacts): ClientFacts[] => facts.clients.filter((c) => c.role === 'streams');

function perStreams(evaluate: (c: ClientFacts, facts: AuditFacts) => Omit<CheckResult, 'target'>, include: (c: ClientFacts) => boolean = () => true) {
  return (facts: AuditFacts): CheckResult[] =>
    streamsClients(facts).filter(include).map((c) => ({ target: clientTarget(c), ...evaluate(c, facts) }));
}

const ms = (n: number): string => `${n} ms (${formatDuration(n)})`;

/** The lowest value of an integer broker setting over the cluster's brokers, with the broker it comes from. */
function lowestBrokerInt(cluster: ClusterFacts | undefined, name: string): { value: number; broker: number } | undefined {
  let best: { value: number; broker: number } | undefined;
  for (const b of cluster?.brokers ?? []) {
    // Not reported ('undefined') and sensitive ('null') are no number.
    const v = String(b.configs.get(name)?.value).trim();
    if (!isInt(v)) continue;
    const n = Number(v);
    if (best === undefined || n < best.value) best = { value: n, broker: b.id };
  }
  return best;
}

const processingGuarantee: Check = {
  id: 'streams.processing-guarantee',
  title: 'Kafka Streams runs exactly_once_v2',
  severity: 'critical',
  rationale:
    'Kafka Streams defaults to at_least_once: after a crash or rebalance it reprocesses records whose output was already written, and state stores diverge from the changelog. ' +
    'exactly_once and exactly_once_beta are deprecated since 3.0 and removed in Kafka Streams 4.0: a 4.x application refuses to start with them (ConfigException). ' +
    'exactly_once_v2 (KIP-447) needs brokers >= 2.5.',
  remediation: `Set processing.guarantee=${EOS_V2}.`,
  evaluate: perStreams((c) => {
    const v = streamsSetting(c.props, 'processing.guarantee');
    const expected = `processing.guarantee=${EOS_V2}`;
    if (v === undefined) return { passed: false, observed: 'processing.guarantee unset (default at_least_once)', expected };
    const g = v.toLowerCase();
    if (REMOVED_EOS.includes(g)) {
      return {
        passed: false,
        observed: `processing.guarantee=${v}: removed in Kafka Streams 4.0 (the application does not start on 4.x), deprecated on 3.x`,
        expected,
      };
    }
    if (g !== EOS_V2 && g !== 'at_least_once') {
      return { passed: false, observed: `processing.guarantee=${v}: not a value Kafka Streams accepts (it does not start)`, expected };
    }
    return { passed: g === EOS_V2, observed: `processing.guarantee=${v}`, expected };
  }),
};

/** The replication factor Streams creates its internal topics with, as far as the audit can tell. */
function internalReplication(c: ClientFacts, cluster: ClusterFacts | undefined): { rf?: number; text: string } {
  const v = streamsSetting(c.props, 'replication.factor');
  if (v !== undefined && !isInt(v)) return { text: `replication.factor=${v} (not a number: Kafka Streams does not start)` };
  if (v !== undefined && Number(v) !== -1) return { rf: Number(v), text: `replication.factor=${v}` };
  const written = v === undefined ? 'replication.factor unset (default -1)' : 'replication.factor=-1';
  const broker = lowestBrokerInt(cluster, 'default.replication.factor');
  if (broker === undefined) {
    return {
      text: `${written}: the broker's default.replication.factor, which this audit has not read${cluster ? '' : ' (audit without the cluster)'}: it depends on the cluster`,
    };
  }
  return { rf: broker.value, text: `${written}: the broker's default.replication.factor=${broker.value} (broker ${broker.broker})` };
}

const replicationFactor: Check = {
  id: 'streams.replication-factor',
  title: 'Kafka Streams internal topics replicated at least 3 times',
  severity: 'critical',
  rationale:
    'Changelog and repartition topics hold the state and the in-flight records of the application: with fewer than 3 replicas one broker failure either stops the ' +
    'application (min.insync.replicas cannot be met) or loses acknowledged state. The default -1 takes the broker\'s default.replication.factor, whose own default is 1.',
  remediation: 'Set replication.factor=3 in the Streams configuration (existing internal topics keep their factor: reassign their partitions).',
  evaluate: perStreams((c, facts) => {
    const { rf, text } = internalReplication(c, facts.cluster);
    return { passed: (rf ?? 0) >= 3, observed: text, expected: '>= 3' };
  }),
};

const minInsyncReplicas: Check = {
  id: 'streams.min-insync-replicas',
  title: 'Kafka Streams internal topics require at least 2 in-sync replicas',
  severity: 'critical',
  rationale:
    'Streams creates its changelog and repartition topics with the topic.* settings of its configuration, else the broker defaults. With min.insync.replicas=1 a ' +
    'write acknowledged by the leader alone is lost when that leader fails; with min.insync.replicas equal to the replication factor one broker down stops the application.',
  remediation: 'Set topic.min.insync.replicas=2 (with replication.factor=3), or min.insync.replicas=2 as the broker default.',
  evaluate: perStreams((c, facts) => {
    const v = streamsSetting(c.props, 'topic.min.insync.replicas');
    const { rf } = internalReplication(c, facts.cluster);
    let minIsr: number | undefined;
    let text: string;
    if (v !== undefined) {
      minIsr = isInt(v) ? Number(v) : undefined;
      text = `topic.min.insync.replicas=${v}${minIsr === undefined ? ' (not a number)' : ''}`;
    } else {
      const broker = lowestBrokerInt(facts.cluster, 'min.insync.replicas');
      if (broker) {
        minIsr = broker.value;
        text = `topic.min.insync.replicas unset: the broker's min.insync.replicas=${broker.value} (broker ${broker.broker})`;
      } else if (facts.cluster) {
        minIsr = 1;
        text = 'topic.min.insync.replicas unset: the broker default min.insync.replicas=1';
      } else {
        text = 'topic.min.insync.replicas unset: the broker\'s min.insync.replicas, which this audit has not read (audit without the cluster)';
      }
    }
    const expected = '>= 2 and below the replication factor';
    // Unknown values compare as never too high and never enough.
    if ((minIsr ?? 0) >= (rf ?? Infinity)) {
      return { passed: false, observed: `${text} with replication factor ${rf}: one replica down stops writes`, expected };
    }
    return { passed: (minIsr ?? 0) >= 2, observed: text, expected };
  }),
};

const standbyReplicas: Check = {
  id: 'streams.standby-replicas',
  title: 'Kafka Streams keeps a standby replica of its state',
  severity: 'warning',
  rationale:
    'Under exactly-once, an instance that crashes has its tasks\' local state wiped (it may hold uncommitted writes) and restored from the changelog from the start, ' +
    'on whichever instance gets the task: with no standby replica that restore reads the whole changelog before the task processes again, minutes to hours for large state.',
  remediation: 'Set num.standby.replicas=1 (a warm copy of each stateful task on another instance), with at least 2 instances.',
  evaluate: perStreams((c) => {
    const v = streamsSetting(c.props, 'num.standby.replicas');
    const expected = 'num.standby.replicas >= 1';
    const n = v === undefined ? 0 : isInt(v) ? Number(v) : undefined;
    const written = v === undefined ? 'num.standby.replicas unset (default 0)' : `num.standby.replicas=${v}`;
    if (n === undefined) return { passed: false, observed: `${written} (not a number)`, expected };
    if (n >= 1) return { passed: true, observed: written, expected };
    const cost = eosEnabled(c)
      ? 'after a crash each stateful task restores its whole changelog before it processes again'
      : 'a failed-over task restores its changelog before it processes again';
    return { passed: false, observed: `${written}: ${cost}`, expected };
  }),
};

const commitInterval: Check = {
  id: 'streams.commit-interval',
  title: 'Kafka Streams commits well inside the transaction timeout',
  severity: 'critical',
  rationale:
    'Under exactly-once a Streams transaction stays open from one commit to the next (commit.interval.ms, 100 ms by default). A transaction.timeout.ms below the ' +
    'commit interval makes Kafka Streams refuse to start; one close to it lets the coordinator abort a slow transaction (the task is fenced and its work redone); one above ' +
    'the brokers\' transaction.max.timeout.ms makes InitProducerId fail. Streams sets transaction.timeout.ms to 10 s unless told otherwise.',
  remediation:
    'Keep commit.interval.ms at most half of producer.transaction.timeout.ms (Streams\' default 10 s), and producer.transaction.timeout.ms at most the brokers\' transaction.max.timeout.ms.',
  evaluate: perStreams((c, facts) => {
    const civ = streamsSetting(c.props, 'commit.interval.ms');
    const txn = commonSetting(c.props, 'producer', 'transaction.timeout.ms');
    if ((civ !== undefined && !isInt(civ)) || (txn !== undefined && !isInt(txn.value))) {
      const bad = civ !== undefined && !isInt(civ) ? `commit.interval.ms=${civ}` : `${txn!.key}=${txn!.value}`;
      return { passed: false, observed: `${bad} (not a number: Kafka Streams does not start)`, expected: 'a number of milliseconds' };
    }
    const commitMs = civ === undefined ? EOS_DEFAULT_COMMIT_INTERVAL_MS : Number(civ);
    const timeoutMs = txn === undefined ? STREAMS_EOS_TRANSACTION_TIMEOUT_MS : Number(txn.value);
    const broker = lowestBrokerInt(facts.cluster, 'transaction.max.timeout.ms');
    const maxMs = broker?.value ?? DEFAULT_BROKER_MAX_TRANSACTION_TIMEOUT_MS;
    const observed = [
      civ === undefined ? `commit.interval.ms unset (default ${ms(commitMs)} under exactly-once)` : `commit.interval.ms=${civ} (${formatDuration(commitMs)})`,
      txn === undefined ? `transaction.timeout.ms unset (Streams default ${ms(timeoutMs)})` : `${txn.key}=${txn.value} (${formatDuration(timeoutMs)})`,
      `transaction.max.timeout.ms ${ms(maxMs)} (${broker ? `broker ${broker.broker}` : facts.cluster ? 'broker default' : 'broker default, no cluster facts'})`,
    ];
    const problems: string[] = [];
    if (timeoutMs < commitMs) problems.push('the transaction timeout is below the commit interval: Kafka Streams refuses to start');
    else if (commitMs * 2 > timeoutMs) problems.push('a commit that takes longer than the rest of the timeout is aborted by the coordinator');
    if (timeoutMs > maxMs) problems.push('the transaction timeout is above the broker maximum: InitProducerId fails and the application does not start');
    return {
      passed: problems.length === 0,
      observed: [...observed, ...problems].join('; '),
      expected: `commit.interval.ms at most half of transaction.timeout.ms, and transaction.timeout.ms at most ${ms(maxMs)}`,
    };
  }, eosEnabled),
};

interface HandlerSpec {
  /** The settings in the order Streams reads them: the first one set wins. */
  keys: string[];
  what: string;
  defaultText: string;
}

const HANDLERS: HandlerSpec[] = [
  {
    keys: ['deserialization.exception.handler', 'default.deserialization.exception.handler'],
    what: 'deserialization',
    defaultText: 'default LogAndFailExceptionHandler',
  },
  {
    keys: ['production.exception.handler', 'default.production.exception.handler'],
    what: 'production',
    defaultText: 'default DefaultProductionExceptionHandler (fails)',
  },
  {
    keys: ['processing.exception.handler'],
    what: 'processing',
    defaultText: 'default LogAndFailProcessingExceptionHandler',
  },
];

/**
 * A handler that goes on after an error: the built-in LogAndContinueExceptionHandler and
 * LogAndContinueProcessingExceptionHandler, or a class named like them (by its simple name).
 */
function continues(className: string): boolean {
  return /continue|skip|ignore/i.test(className.split('.').pop()!);
}

const exceptionHandlers: Check = {
  id: 'streams.exception-handlers',
  title: 'Kafka Streams does not drop failed records silently',
  severity: 'critical',
  rationale:
    'A log-and-continue deserialization, production or processing exception handler skips the record that failed and commits past it: the record is lost for the output ' +
    'while the application reports nothing but a log line. Exactly-once then holds for what remains, not for the input.',
  remediation:
    `Fail on errors (the default handlers), or send failed records to a dead-letter topic: on Kafka Streams 4.1+ set ${DLQ_TOPIC} (KIP-1034: the built-in handlers ` +
    'write the failed record there), or use a handler that does.',
  evaluate: perStreams((c) => {
    const dlq = streamsSetting(c.props, DLQ_TOPIC);
    const parts: string[] = [];
    let dropping = false;
    for (const spec of HANDLERS) {
      const key = spec.keys.find((k) => streamsSetting(c.props, k) !== undefined);
      if (key === undefined) {
        parts.push(`${spec.what}: ${spec.defaultText}`);
        continue;
      }
      const v = streamsSetting(c.props, key)!;
      const goesOn = continues(v);
      dropping ||= goesOn;
      parts.push(`${key}=${v}${goesOn ? ' (continues after an error)' : ''}`);
    }
    if (dropping) parts.push(dlq === undefined ? `${DLQ_TOPIC} unset: a failed record is dropped` : `${DLQ_TOPIC}=${dlq}: a failed record goes to the dead-letter topic`);
    return {
      passed: !dropping || dlq !== undefined,
      observed: parts.join('; '),
      expected: `fail-on-error handlers, or ${DLQ_TOPIC} set`,
    };
  }),
};

const TMP_DIRS = /^(?:\/tmp|\/var\/tmp|\/dev\/shm)(?:\/|$)/;

const stateDir: Check = {
  id: 'streams.state-dir',
  title: 'Kafka Streams state is not under /tmp',
  severity: 'warning',
  rationale:
    'state.dir defaults to ${java.io.tmpdir}/kafka-streams, /tmp on Linux: a reboot (tmpfs) or a tmp cleaner (systemd-tmpfiles, tmpreaper) wipes the local state stores ' +
    'and every task restores its whole changelog, and a cleaner that deletes files under a running application corrupts them.',
  remediation: 'Set state.dir to a persistent directory owned by the application (e.g. /var/lib/<app>/kafka-streams, a persistent volume in Kubernetes).',
  evaluate: perStreams((c) => {
    const v = streamsSetting(c.props, 'state.dir');
    const expected = 'state.dir on persistent storage, not under /tmp';
    if (v === undefined) return { passed: false, observed: 'state.dir unset (default ${java.io.tmpdir}/kafka-streams, /tmp/kafka-streams on Linux)', expected };
    const tmp = TMP_DIRS.test(v) || v.includes('${java.io.tmpdir}');
    return { passed: !tmp, observed: `state.dir=${v}${tmp ? ' (temporary storage)' : ''}`, expected };
  }),
};

type Verdict = 'ignored' | 'refused' | 'weakens';

interface Override {
  key: string;
  value: string;
  verdict: Verdict;
  why: string;
}

/** What Streams does with the client settings of a file under exactly-once. */
export function streamsOverrides(c: ClientFacts): Override[] {
  const out: Override[] = [];
  const p = (key: string) => commonSetting(c.props, 'producer', key);
  const idem = p('enable.idempotence');
  if (idem && idem.value.toLowerCase() === 'false') {
    out.push({ ...idem, verdict: 'ignored', why: 'Streams forces enable.idempotence=true under exactly-once and logs a warning' });
  }
  const txnId = p('transactional.id');
  if (txnId) out.push({ ...txnId, verdict: 'ignored', why: 'Streams sets the transactional id itself (<application.id>-<process id>-<thread>) and logs a warning' });
  const inFlight = p('max.in.flight.requests.per.connection');
  if (inFlight && (!isInt(inFlight.value) || Number(inFlight.value) > 5)) {
    out.push({ ...inFlight, verdict: 'refused', why: 'StreamsConfig throws ConfigException: it cannot exceed 5 under exactly-once' });
  }
  const acks = p('acks');
  if (acks && !['all', '-1'].includes(acks.value.toLowerCase())) {
    out.push({ ...acks, verdict: 'refused', why: 'the idempotent producer Streams creates throws ConfigException: acks must be all' });
  }
  const retries = p('retries');
  if (retries && retries.value === '0') out.push({ ...retries, verdict: 'refused', why: 'the idempotent producer throws ConfigException: retries must be non-zero' });
  const iso = commonSetting(c.props, 'consumer', 'isolation.level');
  if (iso && iso.value.toLowerCase() !== 'read_committed') {
    out.push({ ...iso, verdict: 'ignored', why: 'Streams forces isolation.level=read_committed under exactly-once and logs a warning' });
  }
  const auto = commonSetting(c.props, 'consumer', 'enable.auto.commit');
  if (auto && auto.value.toLowerCase() !== 'false') out.push({ ...auto, verdict: 'ignored', why: 'Streams forces enable.auto.commit=false and logs an error' });
  for (const { prefix, client } of CONSUMER_PREFIXES) {
    const applied = `applied as written (the ${prefix} prefix comes after Streams' override)`;
    const isoKey = `${prefix}isolation.level`;
    const isoV = streamsSetting(c.props, isoKey);
    if (isoV !== undefined && isoV.toLowerCase() !== 'read_committed') {
      const effect =
        client === 'main consumer' ? 'the main consumer reads records of aborted and open transactions of the input'
        : client === 'restore consumer' ? 'restoring state reads aborted changelog writes into the stores'
        : 'global stores read records of aborted transactions';
      out.push({ key: isoKey, value: isoV, verdict: 'weakens', why: `${applied}: ${effect}` });
    }
    const autoKey = `${prefix}enable.auto.commit`;
    const autoV = streamsSetting(c.props, autoKey);
    if (autoV !== undefined && autoV.toLowerCase() !== 'false') {
      out.push(
        client === 'main consumer'
          ? { key: autoKey, value: autoV, verdict: 'weakens', why: `${applied}: offsets are committed on a timer, outside the transaction` }
          : { key: autoKey, value: autoV, verdict: 'refused', why: `the ${client} has no group.id: the consumer throws InvalidConfigurationException for enable.auto.commit=true` },
      );
    }
  }
  return out;
}

const clientOverrides: Check = {
  id: 'streams.client-overrides',
  title: 'Kafka Streams client overrides keep exactly-once',
  severity: 'critical',
  rationale:
    'Under exactly-once Kafka Streams overrides some producer and consumer settings (enable.idempotence, transactional.id, isolation.level, enable.auto.commit) and ' +
    'refuses others (max.in.flight.requests.per.connection > 5; acks other than all and retries=0 make its idempotent producer throw). The main.consumer., ' +
    'restore.consumer. and global.consumer. prefixes are applied after that override: isolation.level=read_uncommitted or enable.auto.commit=true there does take effect.',
  remediation:
    'Remove these producer./consumer. overrides (Streams sets them for exactly-once); never set isolation.level or enable.auto.commit under main.consumer., restore.consumer. or global.consumer.',
  evaluate: perStreams((c) => {
    const found = streamsOverrides(c);
    const bad = found.filter((o) => o.verdict !== 'ignored');
    return {
      passed: bad.length === 0,
      observed: found.length === 0 ? 'no producer or consumer override against exactly-once' : found.map((o) => `${o.key}=${o.value}: ${o.verdict} (${o.why})`).join('; '),
      expected: 'no override that Streams refuses or that takes effect against exactly-once',
    };
  }, eosEnabled),
};

export const streamsChecks: Check[] = [
  processingGuarantee,
  replicationFactor,
  minInsyncReplicas,
  standbyReplicas,
  commitInterval,
  exceptionHandlers,
  stateDir,
  clientOverrides,
];

