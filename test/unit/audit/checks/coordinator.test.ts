import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  coordinatorChecks,
  brokerMaxTimeout,
  byApplication,
  flinkGrowth,
  growth,
  isLive,
  lastActivityMs,
  longestTimeouts,
  permissionFor,
  streamsGrowth,
  DEFAULT_MAX_TIMEOUT_MS,
  FLINK_COUNTERS_PER_SUBTASK,
  IDS_PER_APPLICATION,
  LIVE_WITHIN_MS,
} from '../../../../src/audit/checks/coordinator.js';
import { ALL_CHECKS } from '../../../../src/audit/checks/index.js';
import { gatherCoordinatorView, type CoordinatorReaders } from '../../../../src/audit/sources/coordinator.js';
import { runAudit } from '../../../../src/audit/runner.js';
import { abortDue, findHanging, isTwoPhaseCommit, TWO_PHASE_COMMIT_TIMEOUT_MS } from '../../../../src/coordinator/hanging.js';
import { readOpenTransactions } from '../../../../src/coordinator/snapshot.js';
import type { AuditFacts, CheckResult, CoordinatorFacts, CoordinatorIdFacts } from '../../../../src/audit/types.js';
import type { TxnLogValue } from '../../../../src/kafka/txn-log.js';
import type { BrokerTransactions, DescribedTransaction, PartitionProducerStates } from '../../../../src/kafka/txn-admin.js';

const NOW = 1_800_000_000_000;
const UUIDS = ['11111111-2222-3333-4444-555555555555', '21111111-2222-3333-4444-555555555555', '31111111-2222-3333-4444-555555555555', '41111111-2222-3333-4444-555555555555'];

function id(transactionalId: string, o: Partial<CoordinatorIdFacts> = {}): CoordinatorIdFacts {
  return {
    transactionalId,
    application: o.application ?? 'app',
    engine: o.engine ?? 'pattern',
    state: 'CompleteCommit',
    producerId: 1,
    producerEpoch: 0,
    transactionTimeoutMs: 60_000,
    startTimestampMs: NOW - 1000,
    ...o,
  };
}

const streams = (uuid: string, thread: number, o: Partial<CoordinatorIdFacts> = {}) => id(`orders-${uuid}-${thread}`, { application: 'orders', engine: 'kafka-streams', ...o });
const stale = { state: 'CompleteCommit', startTimestampMs: NOW - LIVE_WITHIN_MS - 1 };

function view(ids: CoordinatorIdFacts[], o: Partial<CoordinatorFacts> = {}): AuditFacts {
  return { clients: [], checkpoints: [], coordinator: { takenAtMs: NOW, ids, maxTimeoutMs: [{ broker: 1, value: 900_000 }], logRead: true, permissionGaps: [], ...o } };
}

function run(check: string, f: AuditFacts): CheckResult[] {
  const c = coordinatorChecks.find((x) => x.id === check);
  assert.ok(c, `no check ${check}`);
  return c.evaluate(f);
}

describe('coordinator checks: registration', () => {
  test('every coordinator check is in ALL_CHECKS, and none runs without a coordinator view', () => {
    for (const c of coordinatorChecks) {
      assert.ok(ALL_CHECKS.includes(c), c.id);
      assert.deepEqual(c.evaluate({ clients: [], checkpoints: [] }), [], c.id);
      assert.ok(c.rationale.length > 40 && c.remediation.length > 20, c.id);
    }
  });

  test("the runner attributes coordinator targets to the coordinator source", async () => {
    const report = await runAudit(
      [{ name: 'coordinator', gather: async (f) => ((f.coordinator = view([]).coordinator), []) }],
      coordinatorChecks.filter((c) => c.id === 'coordinator.permissions'),
    );
    const f = report.findings.find((x) => x.check === 'coordinator.permissions')!;
    assert.equal(f.source, 'coordinator');
    assert.equal(f.target, 'coordinator');
    assert.equal(f.passed, true);
  });
});

describe('coordinator checks: liveness and grouping', () => {
  test('last activity is the later of the log update and the transaction start', () => {
    assert.equal(lastActivityMs(id('a', { startTimestampMs: 5, lastUpdateTimestampMs: 9 })), 9);
    assert.equal(lastActivityMs(id('a', { startTimestampMs: 9, lastUpdateTimestampMs: 5 })), 9);
    assert.equal(lastActivityMs(id('a', { startTimestampMs: -1 })), -1);
  });

  test('live: in a transaction, or active within the window (inclusive)', () => {
    assert.equal(isLive(id('a', { startTimestampMs: NOW - LIVE_WITHIN_MS }), NOW), true);
    assert.equal(isLive(id('a', { startTimestampMs: NOW - LIVE_WITHIN_MS - 1 }), NOW), false);
    assert.equal(isLive(id('a', { startTimestampMs: NOW - LIVE_WITHIN_MS - 1, state: 'Ongoing' }), NOW), true);
    assert.equal(isLive(id('a', { startTimestampMs: NOW - LIVE_WITHIN_MS - 1, state: 'PrepareCommit' }), NOW), true);
    assert.equal(isLive(id('a', { startTimestampMs: -1, state: 'Empty' }), NOW), false);
    // -1 is "unknown", not "1 ms before the epoch": never live by age, even with a now inside the window of -1.
    assert.equal(isLive(id('a', { startTimestampMs: -1, state: 'Empty' }), LIVE_WITHIN_MS - 5), false);
  });

  test("ids are grouped by application; an id that is its own application is left out", () => {
    const g = byApplication(view([id('x', { engine: 'id', application: 'x' }), id('a-1'), id('a-2'), id('b-1', { application: 'b' })]).coordinator);
    assert.deepEqual([...g.keys()], ['app', 'b']);
    assert.equal(g.get('app')!.length, 2);
    assert.equal(byApplication(undefined).size, 0);
  });
});

describe('coordinator.growing-transactional-ids', () => {
  test('Streams: two process UUIDs without transactions and one live is growing, with the Streams fix', () => {
    const r = run('coordinator.growing-transactional-ids', view([streams(UUIDS[0]!, 0, { state: 'Ongoing' }), streams(UUIDS[0]!, 1), streams(UUIDS[1]!, 0, stale), streams(UUIDS[2]!, 0, stale)]));
    assert.equal(r.length, 1);
    assert.equal(r[0]!.target, 'coordinator:app:orders');
    assert.equal(r[0]!.passed, false);
    assert.equal(r[0]!.observed, '4 ids over 3 process UUIDs: 1 live, 2 with no transaction for over 60 min');
    assert.match(r[0]!.remediation!, /state\.dir/);
  });

  test('Streams: as many stale as live (one rolling restart) passes; one stale alone passes', () => {
    assert.equal(streamsGrowth([streams(UUIDS[0]!, 0), streams(UUIDS[1]!, 0), streams(UUIDS[2]!, 0, stale), streams(UUIDS[3]!, 0, stale)], NOW).passed, true);
    assert.equal(streamsGrowth([streams(UUIDS[2]!, 0, stale)], NOW).passed, true);
    assert.equal(streamsGrowth([streams(UUIDS[2]!, 0, stale), streams(UUIDS[3]!, 0, stale)], NOW).passed, false);
    // One live thread makes its process live, whatever its other threads show.
    const v = streamsGrowth([streams(UUIDS[0]!, 0, stale), streams(UUIDS[0]!, 1), streams(UUIDS[1]!, 0, stale)], NOW);
    assert.equal(v.observed, '3 ids over 2 process UUIDs: 1 live, 1 with no transaction for over 60 min');
    assert.equal(v.passed, true);
  });

  test('Streams: an id of the application not in the Streams shape is not a process', () => {
    const v = streamsGrowth([id('orders-x-1', { engine: 'kafka-streams', application: 'orders', ...stale }), streams(UUIDS[0]!, 0, stale)], NOW);
    assert.match(v.observed, /over 1 process UUIDs: 0 live, 1 with/);
  });

  test(`Flink: more than ${FLINK_COUNTERS_PER_SUBTASK} counters on a subtask is growing, with the Flink fix`, () => {
    const flink = (n: number, subtask = 0) => Array.from({ length: n }, (_, i) => id(`sink-${subtask}-${i + 7}`, { engine: 'flink', application: 'sink' }));
    const r = run('coordinator.growing-transactional-ids', view([...flink(FLINK_COUNTERS_PER_SUBTASK + 1), ...flink(2, 1)]));
    assert.equal(r[0]!.passed, false);
    assert.equal(r[0]!.observed, `13 ids over 2 subtasks, up to ${FLINK_COUNTERS_PER_SUBTASK + 1} distinct counters (checkpoint numbers) per subtask`);
    assert.match(r[0]!.remediation!, /POOLING/);
    assert.equal(flinkGrowth(flink(FLINK_COUNTERS_PER_SUBTASK)).passed, true);
    assert.equal(flinkGrowth([id('sink-x', { engine: 'flink' })]).observed, '1 ids over 0 subtasks, up to 0 distinct counters (checkpoint numbers) per subtask');
  });

  test(`any engine: more than ${IDS_PER_APPLICATION} ids is growing; the check's own fix is kept for other engines`, () => {
    const many = (n: number, o: Partial<CoordinatorIdFacts> = {}) => Array.from({ length: n }, (_, i) => id(`app-${i}`, o));
    const r = run('coordinator.growing-transactional-ids', view(many(IDS_PER_APPLICATION + 1)));
    assert.deepEqual(r, [{ target: 'coordinator:app:app', passed: false, observed: `${IDS_PER_APPLICATION + 1} transactional ids`, expected: `at most ${IDS_PER_APPLICATION} ids per application` }]);
    assert.equal(growth('pattern', many(IDS_PER_APPLICATION), NOW).passed, true);
    assert.equal(growth('eoswatch', many(3), NOW).observed, '3 transactional ids');
    // Many Streams ids are judged by their count first.
    const s = growth('kafka-streams', Array.from({ length: IDS_PER_APPLICATION + 1 }, (_, i) => streams(UUIDS[0]!, i)), NOW);
    assert.equal(s.observed, `${IDS_PER_APPLICATION + 1} transactional ids`);
    assert.equal(s.passed, false);
    const p = run('coordinator.growing-transactional-ids', view([streams(UUIDS[0]!, 0)]));
    assert.equal(p[0]!.passed, true);
    assert.equal(p[0]!.remediation, undefined);
  });
});

describe('coordinator timeouts', () => {
  test("the brokers' maximum: the lowest reported, else Kafka's default", () => {
    assert.deepEqual(brokerMaxTimeout(view([], { maxTimeoutMs: [{ broker: 1, value: 900_000 }, { broker: 2, value: 600_000 }, { broker: 3, value: 700_000 }] }).coordinator!), { ms: 600_000, where: 'lowest, broker 2' });
    assert.deepEqual(brokerMaxTimeout(view([], { maxTimeoutMs: [{ broker: 3, value: 60_000 }, { broker: 4 }] }).coordinator!), { ms: 60_000, where: 'broker 3' });
    assert.deepEqual(brokerMaxTimeout(view([], { maxTimeoutMs: [{ broker: 1 }] }).coordinator!), { ms: DEFAULT_MAX_TIMEOUT_MS, where: 'not reported, Kafka default assumed' });
  });

  test('each application by its longest timeout; 2PC ids (Integer.MAX_VALUE) left out', () => {
    const t = longestTimeouts(view([id('a-1', { transactionTimeoutMs: 10_000 }), id('a-2', { transactionTimeoutMs: 30_000 }), id('a-3', { transactionTimeoutMs: TWO_PHASE_COMMIT_TIMEOUT_MS }), id('b-1', { application: 'b', transactionTimeoutMs: TWO_PHASE_COMMIT_TIMEOUT_MS })]).coordinator);
    assert.deepEqual(t, [{ application: 'app', ms: 30_000, ids: 2 }]);
  });

  test('near the maximum: at 90 % or more fails, just under passes', () => {
    const f = (ms: number) => run('coordinator.transaction-timeout-near-max', view([id('a-1', { transactionTimeoutMs: ms })], { maxTimeoutMs: [{ broker: 1, value: 600_000 }] }))[0]!;
    const at = f(540_000);
    assert.equal(at.passed, false);
    assert.equal(at.target, 'coordinator:app:app');
    assert.equal(at.observed, 'transaction timeout up to 9 min (1 ids) against transaction.max.timeout.ms=10 min (broker 1)');
    assert.equal(at.expected, '< 90 % of transaction.max.timeout.ms (9 min)');
    assert.equal(f(539_999).passed, true);
    assert.match(f(1500).observed, /up to 1500 ms/);
    assert.match(f(90_000).observed, /up to 90 s/);
  });

  test("long: above 15 min (Kafka's default maximum) fails", () => {
    const f = (ms: number) => run('coordinator.transaction-timeout-long', view([id('a-1', { transactionTimeoutMs: ms })]))[0]!;
    assert.equal(f(900_000).passed, true);
    const over = f(900_001);
    assert.equal(over.passed, false);
    assert.equal(over.observed, 'transaction timeout up to 900001 ms: a dead producer holds read_committed consumers of its partitions for that long');
    assert.equal(over.expected, '<= 15 min');
  });
});

describe('coordinator.mixed-client-transaction-versions', () => {
  test('several versions in one application fail, one passes, none known gives no result', () => {
    const r = run('coordinator.mixed-client-transaction-versions', view([id('a-1', { clientTransactionVersion: 2 }), id('a-2', { clientTransactionVersion: 0 }), id('a-3', { clientTransactionVersion: 2 }), id('a-4'), id('b-1', { application: 'b', clientTransactionVersion: 2 }), id('c-1', { application: 'c' })]));
    assert.deepEqual(r, [
      { target: 'coordinator:app:app', passed: false, observed: 'client transaction version 0 on 1 id, 2 on 2 ids', expected: 'one version' },
      { target: 'coordinator:app:b', passed: true, observed: 'client transaction version 2 on 1 id', expected: 'one version' },
    ]);
  });
});

describe('coordinator.prepared-transactions (KIP-939)', () => {
  test('2PC is the timeout Integer.MAX_VALUE', () => {
    assert.equal(isTwoPhaseCommit(2147483647), true);
    assert.equal(isTwoPhaseCommit(2147483646), false);
    assert.equal(isTwoPhaseCommit(900_000), false);
  });

  test('an open 2PC transaction is flagged as never timing out; a completed one or an ordinary open one is not', () => {
    const r = run(
      'coordinator.prepared-transactions',
      view([
        id('db-1', { state: 'Ongoing', transactionTimeoutMs: TWO_PHASE_COMMIT_TIMEOUT_MS, startTimestampMs: NOW - 300_000, producerId: 7, producerEpoch: 3 }),
        id('db-2', { state: 'CompleteCommit', transactionTimeoutMs: TWO_PHASE_COMMIT_TIMEOUT_MS }),
        id('db-3', { state: 'PrepareCommit', transactionTimeoutMs: TWO_PHASE_COMMIT_TIMEOUT_MS, startTimestampMs: -1 }),
        id('a-1', { state: 'Ongoing' }),
      ]),
    );
    assert.deepEqual(r, [
      { target: 'coordinator:txn:db-1', passed: false, observed: 'Ongoing since 5 min ago, producer 7 epoch 3: never times out', expected: 'completed by its transaction manager' },
      { target: 'coordinator:txn:db-3', passed: false, observed: 'PrepareCommit since an unknown time, producer 1 epoch 0: never times out', expected: 'completed by its transaction manager' },
    ]);
    const none = run('coordinator.prepared-transactions', view([id('db-2', { state: 'CompleteCommit', transactionTimeoutMs: TWO_PHASE_COMMIT_TIMEOUT_MS }), id('a-1', { state: 'Ongoing' })]));
    assert.deepEqual(none.map((x) => [x.target, x.passed]), [['coordinator', true]]);
  });

  test('the age is never negative (a start after the view)', () => {
    const r = run('coordinator.prepared-transactions', view([id('db-1', { state: 'Ongoing', transactionTimeoutMs: TWO_PHASE_COMMIT_TIMEOUT_MS, startTimestampMs: NOW + 5000 })]));
    assert.match(r[0]!.observed, /since 0 min ago/);
  });
});

describe('coordinator.permissions', () => {
  test('each gap names the ACL and what is lost without it; none passes', () => {
    const r = run('coordinator.permissions', view([], { permissionGaps: [{ api: 'Fetch', target: '__transaction_state', error: 'TOPIC_AUTHORIZATION_FAILED' }, { api: 'DescribeProducers', target: 'orders', error: 'TOPIC_AUTHORIZATION_FAILED' }] }));
    assert.equal(r.length, 2);
    assert.deepEqual(r[0], {
      target: 'coordinator:Fetch',
      passed: false,
      observed: `Fetch on __transaction_state: TOPIC_AUTHORIZATION_FAILED; without it: ${permissionFor({ api: 'Fetch', target: '' }).lost}`,
      expected: 'Describe and Read on Topic __transaction_state',
      remediation: "Grant Describe and Read on Topic __transaction_state to eoswatch's principal.",
    });
    assert.equal(r[1]!.expected, 'Read on Topic orders');
    assert.deepEqual(run('coordinator.permissions', view([])).map((x) => [x.target, x.passed]), [['coordinator', true]]);
  });

  test('every API maps to its ACL (KafkaApis authorize calls)', () => {
    assert.match(permissionFor({ api: 'DescribeTransactions', target: 'x' }).permission, /^Describe on TransactionalId/);
    assert.match(permissionFor({ api: 'ListTransactions', target: 'x' }).permission, /^Describe on TransactionalId \(ListTransactions leaves out/);
    assert.equal(permissionFor({ api: 'DescribeConfigs', target: 'x' }).permission, 'DescribeConfigs on Cluster');
    assert.match(permissionFor({ api: 'DescribeConfigs', target: 'x' }).lost, /Kafka default/);
    assert.match(permissionFor({ api: 'DescribeTransactions', target: 'x' }).lost, /state, timeout/);
    assert.match(permissionFor({ api: 'ListTransactions', target: 'x' }).lost, /list of ids/);
    assert.match(permissionFor({ api: 'DescribeProducers', target: 't' }).lost, /find-hanging/);
    assert.match(permissionFor({ api: 'Fetch', target: 't' }).lost, /client transaction versions/);
  });
});

// ---- the collector's merge, over in-memory readers ---------------------------------------------

function logValue(o: Partial<TxnLogValue> = {}): TxnLogValue {
  return {
    version: 1,
    producerId: 5,
    previousProducerId: -1,
    nextProducerId: -1,
    nextProducerEpoch: -1,
    producerEpoch: 1,
    transactionTimeoutMs: 20_000,
    stateId: 4,
    state: 'CompleteCommit',
    partitions: null,
    lastUpdateTimestampMs: NOW - 10,
    startTimestampMs: NOW - 20,
    clientTransactionVersion: 2,
    unknownTags: [],
    ...o,
  };
}

function readers(o: {
  listed?: string[];
  listError?: BrokerTransactions['error'];
  describe?: (id: string) => Omit<DescribedTransaction, 'transactionalId'>;
  log?: () => Promise<Map<string, TxnLogValue>>;
  producers?: (topic: string, partitions: readonly number[]) => Promise<Map<number, PartitionProducerStates>>;
  maxTimeouts?: () => Promise<{ broker: number; value?: number }[]>;
}): CoordinatorReaders & { asked: { describe: string[][]; producers: [string, readonly number[]][] } } {
  const asked = { describe: [] as string[][], producers: [] as [string, readonly number[]][] };
  return {
    asked,
    readLog: o.log ?? (async () => new Map()),
    maxTimeouts: o.maxTimeouts ?? (async () => [{ broker: 1, value: 900_000 }]),
    txnAdmin: {
      listTransactions: async () => [{ nodeId: 1, apiVersion: 1, error: o.listError ?? null, unknownStateFilters: [], transactions: (o.listed ?? []).map((transactionalId) => ({ transactionalId, producerId: 1, state: 'Ongoing' })) }],
      describeTransactions: async (ids) => {
        asked.describe.push([...ids]);
        return new Map(ids.map((i) => [i, { transactionalId: i, ...(o.describe?.(i) ?? { coordinatorId: 1, error: null, description: null }) }]));
      },
      describeProducers: async (topic, partitions) => {
        asked.producers.push([topic, partitions!]);
        return o.producers ? o.producers(topic, partitions!) : new Map();
      },
    },
  };
}

const described = (state: string, o: { timeout?: number; topics?: { topic: string; partitions: number[] }[] } = {}): Omit<DescribedTransaction, 'transactionalId'> => ({
  coordinatorId: 1,
  error: null,
  description: { errorCode: 0, transactionalId: 'x', state, transactionTimeoutMs: o.timeout ?? 60_000, transactionStartTimeMs: NOW - 100, producerId: 9, producerEpoch: 2, topics: o.topics ?? [] },
});
const perm = (name: string) => ({ code: 29, name, kind: 'permission' as const, message: name });

describe('the coordinator view (collector merge)', () => {
  test('describes what is listed, adds the log where it is readable, groups by application', async () => {
    const r = readers({
      listed: [`orders-${UUIDS[0]}-0`, 'solo'],
      describe: (i) => described(i === 'solo' ? 'Empty' : 'Ongoing', { topics: [{ topic: 'out', partitions: [2, 0] }] }),
      log: async () => new Map([[`orders-${UUIDS[0]}-0`, logValue()]]),
    });
    const { facts, problems } = await gatherCoordinatorView(r, { now: () => NOW });
    assert.deepEqual(problems, []);
    assert.equal(facts.logRead, true);
    assert.equal(facts.takenAtMs, NOW);
    assert.deepEqual(facts.permissionGaps, []);
    assert.deepEqual(facts.maxTimeoutMs, [{ broker: 1, value: 900_000 }]);
    assert.deepEqual(facts.ids[0], {
      transactionalId: `orders-${UUIDS[0]}-0`,
      application: 'orders',
      engine: 'kafka-streams',
      state: 'Ongoing',
      producerId: 9,
      producerEpoch: 2,
      transactionTimeoutMs: 60_000,
      startTimestampMs: NOW - 100,
      lastUpdateTimestampMs: NOW - 10,
      clientTransactionVersion: 2,
    });
    assert.deepEqual(facts.ids[1], { transactionalId: 'solo', application: 'solo', engine: 'id', state: 'Empty', producerId: 9, producerEpoch: 2, transactionTimeoutMs: 60_000, startTimestampMs: NOW - 100 });
    // DescribeProducers only on the partitions of open transactions, sorted.
    assert.deepEqual(r.asked.producers, [['out', [0, 2]]]);
  });

  test('an id the log holds and ListTransactions left out is a missing Describe ACL; it is judged from the log', async () => {
    const r = readers({ listed: ['a'], describe: () => described('Ongoing'), log: async () => new Map([['hidden', logValue({ transactionTimeoutMs: 42 })], ['gone', logValue({ state: 'Dead' })]]) });
    const { facts } = await gatherCoordinatorView(r);
    assert.deepEqual(facts.permissionGaps, [{ api: 'ListTransactions', target: '1 transactional id (hidden) the log holds', error: 'not listed (Describe on TransactionalId missing)' }]);
    assert.deepEqual(facts.ids.map((i) => [i.transactionalId, i.transactionTimeoutMs, i.state]), [['a', 60_000, 'Ongoing'], ['hidden', 42, 'CompleteCommit']]);
  });

  test('an incomplete listing does not accuse the log of unlisted ids', async () => {
    const r = readers({ listed: [], listError: { code: 15, name: 'COORDINATOR_NOT_AVAILABLE', kind: 'error', message: 'down' }, log: async () => new Map([['hidden', logValue()]]) });
    const { facts, problems } = await gatherCoordinatorView(r);
    assert.deepEqual(facts.permissionGaps, []);
    assert.deepEqual(problems, ['ListTransactions on broker 1: down']);
  });

  test('refusals are permission gaps, never problems: the log, ListTransactions, DescribeTransactions, DescribeProducers, DescribeConfigs', async () => {
    const r = readers({
      listed: ['a', 'b', 'c', 'd', 'e'],
      listError: perm('CLUSTER_AUTHORIZATION_FAILED'),
      describe: (i) => (i === 'e' ? described('Ongoing', { topics: [{ topic: 't', partitions: [1] }] }) : { coordinatorId: 1, description: null, error: perm('TRANSACTIONAL_ID_AUTHORIZATION_FAILED') }),
      log: async () => {
        throw new Error('fetching __transaction_state-0 from broker 1: partition error code 29');
      },
      producers: async () => new Map([[1, { partition: 1, leaderId: 1, producers: [], error: perm('TOPIC_AUTHORIZATION_FAILED') }]]),
      maxTimeouts: async () => {
        throw Object.assign(new Error('denied'), { code: 31 });
      },
    });
    const { facts, problems } = await gatherCoordinatorView(r);
    assert.deepEqual(problems, []);
    assert.equal(facts.logRead, false);
    assert.deepEqual(facts.maxTimeoutMs, []);
    assert.deepEqual(facts.permissionGaps, [
      { api: 'DescribeConfigs', target: 'the brokers', error: 'CLUSTER_AUTHORIZATION_FAILED' },
      { api: 'DescribeProducers', target: 't', error: 'TOPIC_AUTHORIZATION_FAILED' },
      { api: 'DescribeTransactions', target: '4 transactional ids (a, b, c, ...)', error: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED' },
      { api: 'Fetch', target: '__transaction_state', error: 'TOPIC_AUTHORIZATION_FAILED' },
      { api: 'ListTransactions', target: 'broker 1', error: 'CLUSTER_AUTHORIZATION_FAILED' },
    ]);
    assert.deepEqual(facts.ids.map((i) => i.transactionalId), ['e']);
  });

  test('other errors are problems of the source; a missing log topic (no transaction yet) is neither', async () => {
    const r = readers({
      listed: ['a'],
      describe: () => ({ coordinatorId: 1, description: null, error: { code: -1, name: 'CLIENT_ERROR', kind: 'error', message: 'lost' } }),
      log: async () => {
        throw Object.assign(new Error('This server does not host this topic-partition'), { code: 3 });
      },
      maxTimeouts: async () => {
        throw new Error('timed out');
      },
    });
    const { facts, problems } = await gatherCoordinatorView(r);
    assert.deepEqual(problems, ['DescribeTransactions: 1 failed (a: lost)', 'DescribeConfigs transaction.max.timeout.ms: timed out']);
    assert.deepEqual(facts.ids, []);
    assert.equal(facts.logRead, false);
    const broken = await gatherCoordinatorView(readers({ log: async () => Promise.reject(new Error('fetching __transaction_state-0 from broker 1: error code 7')) }));
    assert.deepEqual(broken.problems, ['reading __transaction_state: fetching __transaction_state-0 from broker 1: error code 7']);
    assert.deepEqual(broken.facts.permissionGaps, []);
  });

  test('describes at most maxDescribe ids; DescribeProducers errors other than permission are problems', async () => {
    const r = readers({
      listed: ['a', 'b', 'c'],
      describe: () => described('Ongoing', { topics: [{ topic: 't', partitions: [0] }] }),
      producers: async () => new Map([[0, { partition: 0, leaderId: 1, producers: [], error: { code: 6, name: 'NOT_LEADER_OR_FOLLOWER', kind: 'retry', message: 'moved' } }]]),
    });
    const { facts, problems } = await gatherCoordinatorView(r, { maxDescribe: 2 });
    assert.deepEqual(r.asked.describe, [['a', 'b']]);
    assert.deepEqual(facts.ids.map((i) => i.transactionalId), ['a', 'b']);
    assert.deepEqual(problems, ['DescribeProducers on t: moved']);
  });

  test('a thrown DescribeProducers is a gap when refused, a problem otherwise', async () => {
    const one = (err: unknown) =>
      gatherCoordinatorView(
        readers({
          listed: ['a'],
          describe: () => described('Ongoing', { topics: [{ topic: 't', partitions: [0] }] }),
          producers: async () => {
            throw err;
          },
        }),
      );
    assert.deepEqual((await one(Object.assign(new Error('no'), { code: 29 }))).facts.permissionGaps, [{ api: 'DescribeProducers', target: 't', error: 'TOPIC_AUTHORIZATION_FAILED' }]);
    assert.deepEqual((await one(new Error('boom'))).problems, ['DescribeProducers on t: boom']);
  });
});

describe('KIP-939 fed to hanging.ts (snapshot.ts)', () => {
  test('a described timeout of Integer.MAX_VALUE makes the open transaction prepared, so its abort is due never', async () => {
    const txnAdmin = {
      listTransactions: async () => [{ nodeId: 1, apiVersion: 1, error: null, unknownStateFilters: [], transactions: [{ transactionalId: 'db', producerId: 9, state: 'Ongoing' }, { transactionalId: 'app', producerId: 8, state: 'Ongoing' }] }],
      describeTransactions: async (ids: readonly string[]) =>
        new Map(ids.map((i) => [i, { transactionalId: i, ...described('Ongoing', { timeout: i === 'db' ? TWO_PHASE_COMMIT_TIMEOUT_MS : 60_000, topics: [{ topic: 't', partitions: [0] }] }) }])),
      describeProducers: async () => new Map(),
    };
    const { open } = await readOpenTransactions(txnAdmin);
    assert.deepEqual(open.map((t) => [t.transactionalId, t.prepared]), [['app', undefined], ['db', true]]);
    const db = open.find((t) => t.transactionalId === 'db')!;
    const hanging = findHanging([{ topic: 't', partition: 0, high: 10n, lso: 4n, producers: [{ producerId: db.producerId, producerEpoch: 2, lastTimestampMs: NOW - 600_000, currentTransactionStartOffset: 4 }] }], [db], NOW, 60_000);
    assert.equal(hanging[0]!.abortAtMs, null);
    assert.equal(abortDue(hanging[0]!, NOW), 'never');
  });
});

describe('coordinator checks: edges', () => {
  test('a Streams process is live when any thread is, in whichever order they come', () => {
    const v = streamsGrowth([streams(UUIDS[0]!, 1), streams(UUIDS[0]!, 0, stale), streams(UUIDS[1]!, 0, stale), streams(UUIDS[2]!, 0, stale)], NOW);
    assert.equal(v.observed, '4 ids over 3 process UUIDs: 1 live, 2 with no transaction for over 60 min');
    assert.equal(v.expected, 'process UUIDs without transactions (restarts with a new identity) fewer than 2, or not more than the live ones');
  });

  test('a timestamp of 0 is a time, not "unknown"', () => {
    assert.equal(isLive(id('a', { startTimestampMs: 0 }), 1000), true);
    const r = run('coordinator.prepared-transactions', view([id('db', { state: 'Ongoing', transactionTimeoutMs: TWO_PHASE_COMMIT_TIMEOUT_MS, startTimestampMs: 0 })], { takenAtMs: 120_000 }));
    assert.match(r[0]!.observed, /^Ongoing since 2 min ago/);
  });

  test('Flink ids: the subtask is every digit of it, and the counter ends the id', () => {
    const f = (ids: string[]) => flinkGrowth(ids.map((i) => id(i, { engine: 'flink', application: 'sink' })));
    assert.match(f(['sink-12-1', 'sink-2-1']).observed, /over 2 subtasks/);
    assert.match(f(['sink-0-1x']).observed, /over 0 subtasks/);
    assert.equal(f(['sink-0-1']).expected, `at most ${FLINK_COUNTERS_PER_SUBTASK} ids per subtask (a pool bounded by the checkpoints in flight)`);
  });

  test("brokers tied at the lowest maximum: the first is named", () => {
    assert.deepEqual(brokerMaxTimeout(view([], { maxTimeoutMs: [{ broker: 1, value: 600_000 }, { broker: 2, value: 600_000 }] }).coordinator!), { ms: 600_000, where: 'lowest, broker 1' });
  });

  test('the passing results say what was seen', () => {
    assert.deepEqual(run('coordinator.prepared-transactions', view([])), [{ target: 'coordinator', passed: true, observed: 'no prepared (2PC) transaction open', expected: 'none, or each completed by its transaction manager' }]);
    assert.deepEqual(run('coordinator.permissions', view([])), [{ target: 'coordinator', passed: true, observed: 'every coordinator API and the transaction log answered', expected: 'no authorization error' }]);
  });
});
