// The transaction coordinator's view for the audit (src/audit/checks/coordinator.ts): every
// transactional id the coordinators know (ListTransactions on every broker, DescribeTransactions
// of the listed ids), each id's last __transaction_state value where the log is readable (client
// transaction version, last update), DescribeProducers on the partitions of open transactions
// (the Read ACL find-hanging needs) and each broker's transaction.max.timeout.ms.
//
// The log is read first, the coordinators after: an id the log holds and no coordinator listed
// is then one ListTransactions left out for a missing Describe ACL on it (an id created between
// the two shows in the listing, not the log). A missing ACL is a permission gap in the facts,
// judged by the `coordinator.permissions` check, never a failed source; any other error is a
// problem of the source (an `audit.source` finding), the rest of the view still gathered.
import kafkajs, { type Admin, type Kafka } from 'kafkajs';
import { TxnAdmin } from '../../kafka/txn-admin.js';
import { applyTxnLogRecord, holdsLso, type TxnLogValue } from '../../kafka/txn-log.js';
import { readTransactionLog, TRANSACTION_STATE_TOPIC } from '../../kafka/txn-log-reader.js';
import { errorKind, errorName, thrownError, type TxnApiError } from '../../kafka/txn-errors.js';
import { recognise, type RecogniserOptions } from '../../coordinator/applications.js';
import type { AuditFacts, CoordinatorFacts, CoordinatorIdFacts, CoordinatorPermissionGap } from '../types.js';
import type { AuditSource } from '../runner.js';

const { ConfigResourceTypes } = kafkajs;

export interface CoordinatorReaders {
  txnAdmin: Pick<TxnAdmin, 'listTransactions' | 'describeTransactions' | 'describeProducers'>;
  /** The latest __transaction_state value of every id (a tombstone removes it). */
  readLog(): Promise<Map<string, TxnLogValue>>;
  /** transaction.max.timeout.ms of every broker. */
  maxTimeouts(): Promise<{ broker: number; value?: number }[]>;
}

export interface CoordinatorViewOptions extends RecogniserOptions {
  /** Ids described at most (the rest are judged from the log alone); default 5000. */
  maxDescribe?: number;
  now?: () => number;
}

/** A thrown error as Kafka's: a raw fetch names the code in its message ("error code 29"). */
function errorOf(e: unknown): TxnApiError {
  const err = thrownError(e);
  if (err.code !== -1) return err;
  const code = /error code (\d+)/.exec(err.message)?.[1];
  if (code === undefined) return err;
  const kind = errorKind(Number(code));
  return { code: Number(code), name: errorName(Number(code)), kind: kind === 'none' || kind === 'retry' ? 'error' : kind, message: err.message };
}

const examples = (ids: string[]): string => `${ids.length} transactional id${ids.length === 1 ? '' : 's'} (${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ', ...' : ''})`;

export async function gatherCoordinatorView(r: CoordinatorReaders, opts: CoordinatorViewOptions = {}): Promise<{ facts: CoordinatorFacts; problems: string[] }> {
  const problems: string[] = [];
  const gaps: CoordinatorPermissionGap[] = [];

  let log = new Map<string, TxnLogValue>();
  let logRead = false;
  try {
    log = await r.readLog();
    logRead = true;
  } catch (e) {
    const err = errorOf(e);
    if (err.kind === 'permission') gaps.push({ api: 'Fetch', target: TRANSACTION_STATE_TOPIC, error: err.name });
    // No transaction yet: the topic does not exist, and there is nothing to read.
    else if (err.name !== 'UNKNOWN_TOPIC_OR_PARTITION') problems.push(`reading ${TRANSACTION_STATE_TOPIC}: ${err.message}`);
  }

  const brokers = await r.txnAdmin.listTransactions({});
  let listingComplete = true;
  for (const b of brokers) {
    if (!b.error) continue;
    listingComplete = false;
    if (b.error.kind === 'permission') gaps.push({ api: 'ListTransactions', target: `broker ${b.nodeId}`, error: b.error.name });
    else problems.push(`ListTransactions on broker ${b.nodeId}: ${b.error.message}`);
  }
  const listed = [...new Set(brokers.flatMap((b) => b.transactions.map((t) => t.transactionalId)))].sort();
  const toDescribe = listed.slice(0, opts.maxDescribe ?? 5000);
  const described = toDescribe.length ? await r.txnAdmin.describeTransactions(toDescribe) : new Map();
  const refused = new Map<string, string[]>();
  const failed: string[] = [];
  for (const [id, d] of described) {
    if (!d.error) continue;
    if (d.error.kind === 'permission') refused.set(d.error.name, [...(refused.get(d.error.name) ?? []), id]);
    else failed.push(`${id}: ${d.error.message}`);
  }
  for (const [error, ids] of refused) gaps.push({ api: 'DescribeTransactions', target: examples(ids), error });
  if (failed.length) problems.push(`DescribeTransactions: ${failed.length} failed (${failed.slice(0, 3).join('; ')})`);

  if (logRead && listingComplete) {
    const listedSet = new Set(listed);
    const unlisted = [...log].filter(([id, v]) => v.state !== 'Dead' && !listedSet.has(id)).map(([id]) => id).sort();
    if (unlisted.length) gaps.push({ api: 'ListTransactions', target: `${examples(unlisted)} the log holds`, error: 'not listed (Describe on TransactionalId missing)' });
  }

  const ids: CoordinatorIdFacts[] = [];
  const open = new Map<string, Set<number>>();
  for (const id of [...new Set([...listed, ...log.keys()])].sort()) {
    const d = described.get(id)?.description ?? null;
    const v = log.get(id);
    if (!d && (!v || v.state === 'Dead')) continue;
    const { application, engine } = recognise(id, opts);
    ids.push({
      transactionalId: id,
      application,
      engine,
      state: d?.state ?? v!.state,
      producerId: d?.producerId ?? v!.producerId,
      producerEpoch: d?.producerEpoch ?? v!.producerEpoch,
      transactionTimeoutMs: d?.transactionTimeoutMs ?? v!.transactionTimeoutMs,
      startTimestampMs: d?.transactionStartTimeMs ?? v!.startTimestampMs,
      ...(v ? { lastUpdateTimestampMs: v.lastUpdateTimestampMs, clientTransactionVersion: v.clientTransactionVersion } : {}),
    });
    if (d && holdsLso(d.state)) for (const t of d.topics) open.set(t.topic, new Set([...(open.get(t.topic) ?? []), ...t.partitions]));
  }

  // The Read ACL `transactions producers` and find-hanging need, asked where it matters: the partitions of open transactions.
  await Promise.all(
    [...open].slice(0, 50).map(async ([topic, partitions]) => {
      try {
        const states = await r.txnAdmin.describeProducers(topic, [...partitions].sort((a, b) => a - b));
        const errors = [...states.values()].map((s) => s.error).filter((e): e is TxnApiError => e !== null);
        const denied = errors.find((e) => e.kind === 'permission');
        if (denied) gaps.push({ api: 'DescribeProducers', target: topic, error: denied.name });
        else if (errors.length) problems.push(`DescribeProducers on ${topic}: ${errors[0]!.message}`);
      } catch (e) {
        const err = errorOf(e);
        if (err.kind === 'permission') gaps.push({ api: 'DescribeProducers', target: topic, error: err.name });
        else problems.push(`DescribeProducers on ${topic}: ${err.message}`);
      }
    }),
  );

  let maxTimeoutMs: CoordinatorFacts['maxTimeoutMs'] = [];
  try {
    maxTimeoutMs = await r.maxTimeouts();
  } catch (e) {
    const err = errorOf(e);
    if (err.kind === 'permission') gaps.push({ api: 'DescribeConfigs', target: 'the brokers', error: err.name });
    else problems.push(`DescribeConfigs transaction.max.timeout.ms: ${err.message}`);
  }

  gaps.sort((a, b) => a.api.localeCompare(b.api) || a.target.localeCompare(b.target));
  return { facts: { takenAtMs: (opts.now ?? Date.now)(), ids, maxTimeoutMs, logRead, permissionGaps: gaps }, problems };
}

/** transaction.max.timeout.ms of every broker, through kafkajs' DescribeConfigs. */
export async function brokerMaxTimeouts(admin: Admin): Promise<{ broker: number; value?: number }[]> {
  const { brokers } = await admin.describeCluster();
  const res = await admin.describeConfigs({
    includeSynonyms: false,
    resources: brokers.map((b) => ({ type: ConfigResourceTypes.BROKER, name: String(b.nodeId), configNames: ['transaction.max.timeout.ms'] })),
  });
  return res.resources
    .map((x) => {
      const v = Number(x.configEntries.find((e) => e.configName === 'transaction.max.timeout.ms')?.configValue ?? NaN);
      return { broker: Number(x.resourceName), ...(Number.isFinite(v) ? { value: v } : {}) };
    })
    .sort((a, b) => a.broker - b.broker);
}

/** The coordinator's view as an audit source over the audit's Kafka client. */
export function coordinatorSource(kafka: Kafka, opts: CoordinatorViewOptions = {}): AuditSource & { close(): Promise<void> } {
  let txnAdmin: TxnAdmin | undefined;
  let admin: Admin | undefined;
  const close = async () => {
    await txnAdmin?.close().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
    txnAdmin = undefined;
    admin = undefined;
  };
  return {
    name: 'coordinator',
    async gather(facts: AuditFacts) {
      txnAdmin ??= new TxnAdmin(kafka, { attempts: 3 });
      admin ??= kafka.admin({ retry: { retries: 1 } });
      const a = admin;
      try {
        await a.connect();
        const view = await gatherCoordinatorView(
          {
            txnAdmin,
            readLog: async () => {
              const state = new Map<string, TxnLogValue>();
              for (const e of (await readTransactionLog(kafka)).entries) applyTxnLogRecord(state, e.record);
              return state;
            },
            maxTimeouts: () => brokerMaxTimeouts(a),
          },
          opts,
        );
        facts.coordinator = view.facts;
        return view.problems;
      } catch (err) {
        await close();
        throw err;
      }
    },
    close,
  };
}
