// The transaction coordinator's view (src/audit/sources/coordinator.ts: ListTransactions,
// DescribeTransactions, the brokers' transaction.max.timeout.ms, __transaction_state when
// readable), judged per application (src/coordinator/applications.ts' grouping): ids that grow
// with time, timeouts against the brokers' maximum, mixed client transaction versions, KIP-939
// prepared transactions the coordinator never times out, and the permissions the view lacked.
// Pure: the view's own `takenAtMs` is the `now`.
import type { Check, CheckResult, CoordinatorFacts, CoordinatorIdFacts, CoordinatorPermissionGap } from '../types.js';
import { holdsLso } from '../../kafka/txn-log.js';
import { isTwoPhaseCommit } from '../../coordinator/hanging.js';

/** Kafka's default transaction.max.timeout.ms (15 min): the bound brokers apply when nothing else is set. */
export const DEFAULT_MAX_TIMEOUT_MS = 900_000;
/** "Close to the maximum": at or above this share of the brokers' transaction.max.timeout.ms. */
export const NEAR_MAX_SHARE = 0.9;
/** A timeout above this holds read_committed consumers longer than Kafka's own default maximum allows. */
export const LONG_TIMEOUT_MS = 900_000;
/** A Streams process whose ids have had no transaction for this long is not live. */
export const LIVE_WITHIN_MS = 3_600_000;
/** A Flink subtask with more distinct id counters than this is on the per-checkpoint (incrementing) naming. */
export const FLINK_COUNTERS_PER_SUBTASK = 10;
/** Any application with more ids than this grows the coordinator's state. */
export const IDS_PER_APPLICATION = 1000;

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const STREAMS_ID = new RegExp(`^.+-(${UUID})-\\d+$`);
const FLINK_ID = /^.+-(\d+)-(\d+)$/;

const appTarget = (app: string): string => `coordinator:app:${app}`;

/** The ids of each application, by application name (engine 'id' ids are each their own and left out). */
export function byApplication(c: CoordinatorFacts | undefined): Map<string, CoordinatorIdFacts[]> {
  const out = new Map<string, CoordinatorIdFacts[]>();
  for (const id of c?.ids ?? []) {
    if (id.engine === 'id') continue;
    const list = out.get(id.application);
    if (list) list.push(id);
    else out.set(id.application, [id]);
  }
  return out;
}

/** When the id last did anything the view can tell: its log's last update, else its transaction's start; -1 unknown. */
export function lastActivityMs(id: CoordinatorIdFacts): number {
  return Math.max(id.lastUpdateTimestampMs ?? -1, id.startTimestampMs);
}

/** Live: in a transaction now, or active within LIVE_WITHIN_MS of the view. */
export function isLive(id: CoordinatorIdFacts, now: number): boolean {
  const at = lastActivityMs(id);
  return holdsLso(id.state) || (at >= 0 && now - at <= LIVE_WITHIN_MS);
}

export interface GrowthVerdict {
  passed: boolean;
  observed: string;
  expected: string;
}

/** Kafka Streams: its process UUIDs, live or not. Growing: at least 2 not live and more of those than live ones. */
export function streamsGrowth(ids: CoordinatorIdFacts[], now: number): GrowthVerdict {
  const processes = new Map<string, boolean>();
  for (const id of ids) {
    const uuid = STREAMS_ID.exec(id.transactionalId)?.[1];
    if (!uuid) continue;
    processes.set(uuid, (processes.get(uuid) ?? false) || isLive(id, now));
  }
  const live = [...processes.values()].filter(Boolean).length;
  const stale = processes.size - live;
  return {
    passed: !(stale >= 2 && stale > live),
    observed: `${ids.length} ids over ${processes.size} process UUIDs: ${live} live, ${stale} with no transaction for over ${LIVE_WITHIN_MS / 60_000} min`,
    expected: 'process UUIDs without transactions (restarts with a new identity) fewer than 2, or not more than the live ones',
  };
}

/** Flink's KafkaSink: distinct counters per subtask. Growing: some subtask has more than FLINK_COUNTERS_PER_SUBTASK. */
export function flinkGrowth(ids: CoordinatorIdFacts[]): GrowthVerdict {
  const counters = new Map<string, Set<string>>();
  for (const id of ids) {
    const m = FLINK_ID.exec(id.transactionalId);
    if (!m) continue;
    const set = counters.get(m[1]!) ?? new Set<string>();
    set.add(m[2]!);
    counters.set(m[1]!, set);
  }
  const most = Math.max(0, ...[...counters.values()].map((s) => s.size));
  return {
    passed: most <= FLINK_COUNTERS_PER_SUBTASK,
    observed: `${ids.length} ids over ${counters.size} subtasks, up to ${most} distinct counters (checkpoint numbers) per subtask`,
    expected: `at most ${FLINK_COUNTERS_PER_SUBTASK} ids per subtask (a pool bounded by the checkpoints in flight)`,
  };
}

const GROWTH_FIX: Record<string, string> = {
  'kafka-streams':
    'Keep the process UUID across restarts: give the instance a persistent state.dir (Kafka Streams stores its process id there), or run it with state; otherwise lower transactional.id.expiration.ms on the brokers so the ids of processes gone expire sooner.',
  flink:
    "Use the KafkaSink's pooling naming (transaction naming strategy POOLING, Flink Kafka connector 4.0+), which reuses a bounded set of ids; otherwise lower transactional.id.expiration.ms on the brokers to the longest time a job may be down.",
};

/** One application's growth verdict, by its engine; undefined: the engine's naming does not grow unless it is many ids. */
export function growth(engine: CoordinatorIdFacts['engine'], ids: CoordinatorIdFacts[], now: number): GrowthVerdict {
  const many: GrowthVerdict = {
    passed: ids.length <= IDS_PER_APPLICATION,
    observed: `${ids.length} transactional ids`,
    expected: `at most ${IDS_PER_APPLICATION} ids per application`,
  };
  if (!many.passed) return many;
  if (engine === 'kafka-streams') return streamsGrowth(ids, now);
  if (engine === 'flink') return flinkGrowth(ids);
  return many;
}

/** The brokers' transaction.max.timeout.ms: the lowest reported (the one that refuses first), else Kafka's default. */
export function brokerMaxTimeout(c: CoordinatorFacts): { ms: number; where: string } {
  const known = c.maxTimeoutMs.filter((b): b is { broker: number; value: number } => b.value !== undefined);
  if (known.length === 0) return { ms: DEFAULT_MAX_TIMEOUT_MS, where: 'not reported, Kafka default assumed' };
  const low = known.reduce((a, b) => (b.value < a.value ? b : a));
  return { ms: low.value, where: known.length === 1 ? `broker ${low.broker}` : `lowest, broker ${low.broker}` };
}

/** Each application's longest observed timeout (KIP-939 2PC ids, which carry Integer.MAX_VALUE, left out). */
export function longestTimeouts(c: CoordinatorFacts | undefined): { application: string; ms: number; ids: number }[] {
  const out: { application: string; ms: number; ids: number }[] = [];
  for (const [application, ids] of byApplication(c)) {
    const timeouts = ids.map((i) => i.transactionTimeoutMs).filter((t) => !isTwoPhaseCommit(t));
    if (timeouts.length) out.push({ application, ms: Math.max(...timeouts), ids: timeouts.length });
  }
  return out;
}

const fmt = (ms: number): string => (ms % 60_000 === 0 ? `${ms / 60_000} min` : ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** What a refused API costs the view, and the ACL that grants it (Kafka's KafkaApis authorize calls). */
export function permissionFor(gap: Pick<CoordinatorPermissionGap, 'api' | 'target'>): { permission: string; lost: string } {
  switch (gap.api) {
    case 'Fetch':
      return {
        permission: 'Describe and Read on Topic __transaction_state',
        lost: 'the transaction log: client transaction versions, last updates of each id (Streams process liveness from the log) and the history the transactions service shows',
      };
    case 'DescribeTransactions':
      return { permission: 'Describe on TransactionalId (the ids or a prefix)', lost: 'those ids\u2019 state, timeout and start: their applications are judged from the log alone, or not at all' };
    case 'DescribeProducers':
      return { permission: `Read on Topic ${gap.target}`, lost: 'which producer holds each partition\u2019s last stable offset: find-hanging cannot name a hanging transaction there' };
    case 'DescribeConfigs':
      return { permission: 'DescribeConfigs on Cluster', lost: 'the brokers\u2019 transaction.max.timeout.ms: timeouts are judged against the Kafka default (15 min)' };
    case 'ListTransactions':
      return { permission: 'Describe on TransactionalId (ListTransactions leaves out the ids without it)', lost: 'the coordinator\u2019s list of ids: applications and their open transactions go unseen' };
  }
}

function prepared(c: CoordinatorFacts): CoordinatorIdFacts[] {
  return c.ids.filter((i) => isTwoPhaseCommit(i.transactionTimeoutMs) && holdsLso(i.state));
}

export const coordinatorChecks: Check[] = [
  {
    id: 'coordinator.growing-transactional-ids',
    title: 'Applications reuse their transactional ids',
    severity: 'warning',
    rationale:
      'An application that takes new transactional ids as it runs (a stateless Kafka Streams app gets a new process UUID, so new ids, on every restart; ' +
      "Flink's KafkaSink incrementing naming one id per subtask and checkpoint) leaves the old ones with the coordinator until transactional.id.expiration.ms " +
      '(7 days by default): its state, its load time after a failover and the expiration churn grow with time. Judged from one view: more than ' +
      `${IDS_PER_APPLICATION} ids; for Streams, 2 or more process UUIDs with no transaction for over ${LIVE_WITHIN_MS / 60_000} min and more of them than live ones ` +
      `(one rolling restart leaves as many as are live); for Flink, more than ${FLINK_COUNTERS_PER_SUBTASK} counters on one subtask (pooling keeps a few).`,
    remediation: 'Give the application stable ids (a stateful Streams app, pooled Flink naming), or lower transactional.id.expiration.ms on the brokers.',
    evaluate: (f) => {
      const out: CheckResult[] = [];
      for (const [application, ids] of byApplication(f.coordinator)) {
        const engine = ids[0]!.engine;
        const v = growth(engine, ids, f.coordinator!.takenAtMs);
        out.push({ target: appTarget(application), ...v, ...(!v.passed && GROWTH_FIX[engine] ? { remediation: GROWTH_FIX[engine] } : {}) });
      }
      return out;
    },
  },
  {
    id: 'coordinator.transaction-timeout-near-max',
    title: "Transaction timeouts leave room under the brokers' maximum",
    severity: 'warning',
    rationale:
      'A timeout above transaction.max.timeout.ms cannot be seen: the broker refuses InitProducerId (INVALID_TRANSACTION_TIMEOUT), so the producer never starts. ' +
      `One at ${NEAR_MAX_SHARE * 100} % of the maximum or more is one broker setting away from that: a broker, a new cluster or a lowered maximum with less ` +
      'makes the application fail on its next start.',
    remediation: "Lower the application's transaction.timeout.ms (it needs only its longest transaction plus margin), or raise transaction.max.timeout.ms on every broker first.",
    evaluate: (f) => {
      const c = f.coordinator;
      if (!c) return [];
      const max = brokerMaxTimeout(c);
      return longestTimeouts(c).map((t) => ({
        target: appTarget(t.application),
        passed: t.ms < NEAR_MAX_SHARE * max.ms,
        observed: `transaction timeout up to ${fmt(t.ms)} (${t.ids} ids) against transaction.max.timeout.ms=${fmt(max.ms)} (${max.where})`,
        expected: `< ${NEAR_MAX_SHARE * 100} % of transaction.max.timeout.ms (${fmt(NEAR_MAX_SHARE * max.ms)})`,
      }));
    },
  },
  {
    id: 'coordinator.transaction-timeout-long',
    title: 'Transaction timeouts short enough for read_committed consumers',
    severity: 'warning',
    rationale:
      "A producer that dies inside a transaction leaves it open until its timeout: every partition it wrote holds its last stable offset there, and read_committed " +
      `consumers of those partitions read nothing newer for that long. Above ${fmt(LONG_TIMEOUT_MS)} (Kafka's default transaction.max.timeout.ms, ` +
      'the longest stall Kafka accepts by default) that stall is longer than Kafka itself would allow.',
    remediation: `Set transaction.timeout.ms to the longest transaction plus margin (Flink: above the checkpoint interval plus the longest downtime to recover from, and at most ${fmt(LONG_TIMEOUT_MS)} where possible).`,
    evaluate: (f) =>
      longestTimeouts(f.coordinator).map((t) => ({
        target: appTarget(t.application),
        passed: t.ms <= LONG_TIMEOUT_MS,
        observed: `transaction timeout up to ${fmt(t.ms)}: a dead producer holds read_committed consumers of its partitions for that long`,
        expected: `<= ${fmt(LONG_TIMEOUT_MS)}`,
      })),
  },
  {
    id: 'coordinator.mixed-client-transaction-versions',
    title: 'One client transaction version per application',
    severity: 'info',
    rationale:
      "The coordinator records each id's client transaction version (__transaction_state, KIP-890: 2 is TV2, the epoch bump per transaction and server-side " +
      'partition verification; 0 the older protocol). Several in one application are a rolling upgrade in progress or a mixed fleet: its instances do not ' +
      'share the same protection against a late write of a timed-out transaction.',
    remediation: 'Finish the client upgrade on every instance (Kafka clients 4.0+ with transaction.version 2 finalized on the cluster).',
    evaluate: (f) => {
      const out: CheckResult[] = [];
      for (const [application, ids] of byApplication(f.coordinator)) {
        const versions = new Map<number, number>();
        for (const i of ids) if (i.clientTransactionVersion !== undefined) versions.set(i.clientTransactionVersion, (versions.get(i.clientTransactionVersion) ?? 0) + 1);
        if (versions.size === 0) continue;
        const seen = [...versions].sort((a, b) => a[0] - b[0]);
        out.push({
          target: appTarget(application),
          passed: versions.size === 1,
          observed: `client transaction version ${seen.map(([v, n]) => `${v} on ${n} id${n === 1 ? '' : 's'}`).join(', ')}`,
          expected: 'one version',
        });
      }
      return out;
    },
  },
  {
    id: 'coordinator.prepared-transactions',
    title: 'No KIP-939 prepared transaction left open',
    severity: 'warning',
    rationale:
      'A two-phase-commit (KIP-939) transaction carries the timeout Integer.MAX_VALUE: the coordinator never times it out. Open, it holds the last stable offset ' +
      "of every partition it wrote until its external transaction manager commits or aborts it; if that manager lost it, read_committed consumers wait forever.",
    remediation:
      "Let the external transaction manager (the database or application that prepared it) complete it; if it is lost, end it with kafka-transactions.sh forceTerminateTransaction or eoswatch transactions abort --transactional-id ID --force.",
    evaluate: (f) => {
      const c = f.coordinator;
      if (!c) return [];
      const open = prepared(c);
      if (open.length === 0) return [{ target: 'coordinator', passed: true, observed: 'no prepared (2PC) transaction open', expected: 'none, or each completed by its transaction manager' }];
      return open.map((i) => ({
        target: `coordinator:txn:${i.transactionalId}`,
        passed: false,
        observed: `${i.state} since ${i.startTimestampMs >= 0 ? `${fmt(Math.max(0, c.takenAtMs - i.startTimestampMs))} ago` : 'an unknown time'}, producer ${i.producerId} epoch ${i.producerEpoch}: never times out`,
        expected: 'completed by its transaction manager',
      }));
    },
  },
  {
    id: 'coordinator.permissions',
    title: "eoswatch may read the transaction coordinator's view",
    severity: 'warning',
    rationale:
      "Every part of the coordinator's view needs an ACL of its own (docs/transactions.md, Permissions). A missing one is no failure of the cluster: " +
      'the part it guards is simply not seen, and the checks above judge without it.',
    remediation: 'Grant the ACL the finding names to the principal eoswatch connects as (kafka-acls.sh --add --allow-principal ...), or accept what is lost.',
    evaluate: (f) => {
      const c = f.coordinator;
      if (!c) return [];
      if (c.permissionGaps.length === 0) return [{ target: 'coordinator', passed: true, observed: 'every coordinator API and the transaction log answered', expected: 'no authorization error' }];
      return c.permissionGaps.map((g) => {
        const p = permissionFor(g);
        return {
          target: `coordinator:${g.api}`,
          passed: false,
          observed: `${g.api} on ${g.target}: ${g.error}; without it: ${p.lost}`,
          expected: p.permission,
          remediation: `Grant ${p.permission} to eoswatch's principal.`,
        };
      });
    },
  },
];
