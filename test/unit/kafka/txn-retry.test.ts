// The transactional producer's coordinator calls retried on retriable errors (src/kafka/txn-retry.ts):
// the error classification, the retry loop on a manual clock, and the view of a cluster that
// kafkajs' transaction manager is given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { classifyCoordinatorError, coordinatorRetryingCluster, retryCoordinatorCall, txnRetry, type RetryDeps } from '../../../src/kafka/txn-retry.js';

const require = createRequire(import.meta.url);
const protocolError = require('kafkajs/src/protocol/error.js') as { createErrorFromCode(code: number): Error };
const kafkaError = (code: number) => protocolError.createErrorFromCode(code);
type Ctor = new (...args: unknown[]) => Error;
const errors = require('kafkajs/src/errors.js') as Record<'KafkaJSConnectionError' | 'KafkaJSNonRetriableError' | 'KafkaJSNumberOfRetriesExceeded' | 'KafkaJSProtocolError', Ctor>;
const { KafkaJSConnectionError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded } = errors;

test('classification: stale coordinators and broken connections refind; load, concurrent transactions and timeouts retry; fencing and authorisation are fatal', () => {
  const cases: [number | Error, string][] = [
    [16, 'refind'], // NOT_COORDINATOR(_FOR_GROUP): the message that failed the demo's checkpoint
    [15, 'refind'], // COORDINATOR_NOT_AVAILABLE
    [14, 'retry'], // COORDINATOR_LOAD_IN_PROGRESS
    [51, 'retry'], // CONCURRENT_TRANSACTIONS
    [7, 'retry'], // REQUEST_TIMED_OUT
    [6, 'retry'], // NOT_LEADER_OR_FOLLOWER
    [19, 'retry'], // NOT_ENOUGH_REPLICAS
    [47, 'fatal'], // INVALID_PRODUCER_EPOCH
    [48, 'fatal'], // INVALID_TXN_STATE
    [53, 'fatal'], // TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    [new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092'), 'refind'],
    [Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'refind'],
    [new KafkaJSNonRetriableError('Transaction state exception: Invalid transition'), 'fatal'],
    [new Error('anything else'), 'fatal'],
  ];
  for (const [c, kind] of cases) {
    const err = typeof c === 'number' ? kafkaError(c) : c;
    assert.equal(classifyCoordinatorError(err), kind, `${(err as { type?: string }).type ?? err.message}`);
  }
  // Judged by the innermost error of a wrapper, as kafkajs' retrier wraps the last one.
  const wrapped = new KafkaJSNumberOfRetriesExceeded(kafkaError(16), { retryCount: 5, retryTime: 100 });
  assert.equal(classifyCoordinatorError(wrapped), 'refind');
  assert.equal(classifyCoordinatorError(new KafkaJSNumberOfRetriesExceeded(kafkaError(47), { retryCount: 5, retryTime: 100 })), 'fatal');
  assert.equal(classifyCoordinatorError(undefined), 'fatal');
});

/** A manual clock: sleep advances time at once and records the pauses. */
function manual(live = () => true): RetryDeps & { t: number; pauses: number[] } {
  const d = {
    t: 0,
    pauses: [] as number[],
    now: () => d.t,
    sleep: async (ms: number) => {
      d.pauses.push(ms);
      d.t += ms;
    },
    live,
  };
  return d;
}

const policy = { budgetMs: 10_000, initialBackoffMs: 50, maxBackoffMs: 400 };

test('a call is sent again after retriable errors, to the coordinator found again after a stale one, with doubling pauses', async () => {
  const deps = manual();
  const sentTo: string[] = [];
  let finds = 0;
  const errors = [kafkaError(16), kafkaError(51), kafkaError(14)];
  const result = await retryCoordinatorCall(
    async () => `broker-${++finds + 1}`,
    'broker-1',
    async (b) => {
      sentTo.push(b);
      const e = errors.shift();
      if (e) throw e;
      return 'committed';
    },
    policy,
    deps,
  );
  assert.equal(result, 'committed');
  // NOT_COORDINATOR → found again (broker-2); CONCURRENT_TRANSACTIONS and LOAD_IN_PROGRESS → the same broker.
  assert.deepEqual(sentTo, ['broker-1', 'broker-2', 'broker-2', 'broker-2']);
  assert.equal(finds, 1);
  assert.deepEqual(deps.pauses, [50, 100, 200]);
});

test('a fatal error is thrown at once; a spent budget throws the last error; a disconnected producer stops', async () => {
  const deps = manual();
  let calls = 0;
  const fenced = kafkaError(47);
  await assert.rejects(
    retryCoordinatorCall(async () => 'b', 'b', async () => {
      calls++;
      throw fenced;
    }, policy, deps),
    (e) => e === fenced,
  );
  assert.equal(calls, 1);
  assert.deepEqual(deps.pauses, []);

  const slow = manual();
  calls = 0;
  await assert.rejects(
    retryCoordinatorCall(async () => 'b', 'b', async () => {
      calls++;
      throw kafkaError(51);
    }, { budgetMs: 1_000, initialBackoffMs: 50, maxBackoffMs: 400 }, slow),
    /concurrent transactions|CONCURRENT/i,
  );
  // 50 + 100 + 200 + 400 = 750 ms; one more 400 ms pause would pass the 1,000 ms budget.
  assert.deepEqual(slow.pauses, [50, 100, 200, 400]);
  assert.equal(calls, 5);
  assert.ok(slow.t <= 1_000);

  let live = true;
  const gone = manual(() => live);
  calls = 0;
  await assert.rejects(
    retryCoordinatorCall(async () => 'b', 'b', async () => {
      calls++;
      if (calls === 2) live = false;
      throw kafkaError(51);
    }, policy, gone),
  );
  assert.equal(calls, 2, 'no attempt after the producer disconnected');
});

test('finding the coordinator may fail while one is elected: the next attempt asks again', async () => {
  const deps = manual();
  const finds = [Promise.reject(new KafkaJSConnectionError('Connection error: connect ECONNREFUSED')), Promise.resolve('broker-3')];
  for (const f of finds) f.catch(() => undefined);
  const sentTo: string[] = [];
  const r = await retryCoordinatorCall(
    () => finds.shift()!,
    'broker-1',
    async (b) => {
      sentTo.push(b);
      if (b !== 'broker-3') throw new KafkaJSConnectionError('Connection error: connect ECONNREFUSED');
      return 'ok';
    },
    policy,
    deps,
  );
  assert.equal(r, 'ok');
  assert.deepEqual(sentTo, ['broker-1', 'broker-1', 'broker-3']);
});

test('the cluster view: coordinators answer with retrying transaction calls, other calls and the disconnect are the cluster\'s own', async () => {
  const attempts: string[] = [];
  let coordinator = 1;
  const broker = (id: number) => ({
    nodeId: id,
    endTxn: async (req: { transactionResult: boolean }) => {
      attempts.push(`endTxn@${id}`);
      if (id === 1) throw kafkaError(16);
      return { committed: req.transactionResult };
    },
    metadata: async function (this: { nodeId: number }) {
      return this.nodeId;
    },
  });
  let disconnected = 0;
  const cluster = {
    findGroupCoordinator: async (_args: { groupId: string; coordinatorType?: number }) => broker(coordinator++) as unknown as Record<string, unknown>,
    findBroker: async ({ nodeId }: { nodeId: number }) => broker(nodeId) as unknown as Record<string, unknown>,
    disconnect: async () => {
      disconnected++;
    },
    refreshMetadata: async () => 'refreshed',
  };
  const view = coordinatorRetryingCluster(cluster, undefined, { budgetMs: 5_000, initialBackoffMs: 1, maxBackoffMs: 2 });
  assert.equal(await view.refreshMetadata(), 'refreshed');
  const b = (await view.findGroupCoordinator({ groupId: 'txn-1', coordinatorType: 1 })) as ReturnType<typeof broker>;
  assert.equal(b.nodeId, 1);
  assert.equal(await b.metadata(), 1, 'a call that is not a coordinator call runs on the broker itself');
  assert.deepEqual(await b.endTxn({ transactionResult: true }), { committed: true });
  assert.deepEqual(attempts, ['endTxn@1', 'endTxn@2']);
  // Once the producer disconnects its cluster, a failing call is not retried.
  await cluster.disconnect();
  assert.equal(disconnected, 1);
  coordinator = 1;
  attempts.length = 0;
  const again = (await view.findGroupCoordinator({ groupId: 'txn-2', coordinatorType: 1 })) as ReturnType<typeof broker>;
  await assert.rejects(again.endTxn({ transactionResult: true }));
  assert.deepEqual(attempts, ['endTxn@1']);
});

test('the cluster view remembers each coordinator: one lookup per transactional id and group, asked again after a stale coordinator, a broken connection or a node gone from the metadata', async () => {
  const lookups: string[] = [];
  const calls: string[] = [];
  /** Where each key's coordinator is now (what FindCoordinator answers). */
  const where = new Map<string, number>([
    ['1:txn-a', 1],
    ['0:group', 2],
    ['1:txn-b', 2],
  ]);
  const down = new Set<number>();
  const inMetadata = new Set([1, 2, 3]);
  const broker = (id: number) => ({
    nodeId: id,
    endTxn: async (req: { transactionalId: string }) => {
      calls.push(`endTxn ${req.transactionalId}@${id}`);
      if (down.has(id)) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
      if (where.get(`1:${req.transactionalId}`) !== id) throw kafkaError(16);
      return 'ok';
    },
    txnOffsetCommit: async () => {
      calls.push(`txnOffsetCommit@${id}`);
      return 'ok';
    },
  });
  const cluster = {
    findGroupCoordinator: async (a: { groupId: string; coordinatorType?: number }) => {
      const key = `${a.coordinatorType ?? 0}:${a.groupId}`;
      lookups.push(key);
      return broker(where.get(key)!) as unknown as Record<string, unknown>;
    },
    findBroker: async ({ nodeId }: { nodeId: number }) => {
      if (!inMetadata.has(nodeId)) throw Object.assign(new Error(`Broker ${nodeId} not found in the cached metadata`), { name: 'KafkaJSBrokerNotFound' });
      return broker(nodeId) as unknown as Record<string, unknown>;
    },
    disconnect: async () => undefined,
  };
  const view = coordinatorRetryingCluster(cluster, undefined, { budgetMs: 5_000, initialBackoffMs: 1, maxBackoffMs: 1 });
  type B = ReturnType<typeof broker>;
  const endTxn = async (id: string) => ((await view.findGroupCoordinator({ groupId: id, coordinatorType: 1 })) as unknown as B).endTxn({ transactionalId: id });
  const offsets = async () => ((await view.findGroupCoordinator({ groupId: 'group' })) as unknown as B).txnOffsetCommit();

  for (let i = 0; i < 3; i++) assert.equal(await endTxn('txn-a'), 'ok');
  assert.equal(await offsets(), 'ok');
  assert.equal(await offsets(), 'ok');
  assert.equal(await endTxn('txn-b'), 'ok');
  assert.deepEqual(lookups, ['1:txn-a', '0:group', '1:txn-b'], 'one lookup per transactional id and per group, kept apart by coordinator type');
  assert.deepEqual(calls, ['endTxn txn-a@1', 'endTxn txn-a@1', 'endTxn txn-a@1', 'txnOffsetCommit@2', 'txnOffsetCommit@2', 'endTxn txn-b@2']);

  // The coordinator moved: the remembered one answers NOT_COORDINATOR, the retry asks again, and
  // the next call goes to the new one without a lookup.
  where.set('1:txn-a', 3);
  lookups.length = calls.length = 0;
  assert.equal(await endTxn('txn-a'), 'ok');
  assert.equal(await endTxn('txn-a'), 'ok');
  assert.deepEqual(calls, ['endTxn txn-a@1', 'endTxn txn-a@3', 'endTxn txn-a@3']);
  assert.deepEqual(lookups, ['1:txn-a']);

  // A broken connection to the remembered coordinator: asked again as well.
  down.add(3);
  where.set('1:txn-a', 1);
  lookups.length = calls.length = 0;
  assert.equal(await endTxn('txn-a'), 'ok');
  assert.deepEqual(calls, ['endTxn txn-a@3', 'endTxn txn-a@1']);
  assert.deepEqual(lookups, ['1:txn-a']);

  // The remembered node left the metadata: asked before the call, no failed call.
  inMetadata.delete(2);
  where.set('1:txn-b', 3);
  down.clear();
  lookups.length = calls.length = 0;
  assert.equal(await endTxn('txn-b'), 'ok');
  assert.deepEqual(calls, ['endTxn txn-b@3']);
  assert.deepEqual(lookups, ['1:txn-b']);
});

test('installed: kafkajs\' producer gets the retrying transaction manager', () => {
  assert.equal(txnRetry, true);
  const eosManager = require('kafkajs/src/producer/eosManager/index.js') as Record<symbol, unknown>;
  assert.equal(eosManager[Symbol.for('eoswatch:txn-retry')], true);
});

test("the pipeline's request timeout: kafka.requestTimeout, at most a third of the checkpoint timeout, never below 1 s", async () => {
  const { pipelineRequestTimeout } = await import('../../../src/pipeline/pipeline-service.js');
  assert.equal(pipelineRequestTimeout(30_000, 30_000), 10_000, 'the defaults: a paused broker costs 10 s of a 30 s checkpoint');
  assert.equal(pipelineRequestTimeout(30_000, 600_000), 30_000, 'a long checkpoint keeps the configured timeout');
  assert.equal(pipelineRequestTimeout(5_000, 30_000), 5_000, 'a shorter configured timeout is kept');
  assert.equal(pipelineRequestTimeout(30_000, 2_000), 1_000, 'never below 1 s');
  assert.equal(pipelineRequestTimeout(30_000, 3_100), 1_033);
});

test("a periodic reader's request timeout (the LSO monitor): at most two intervals, never below 2 s", async () => {
  const { periodicRequestTimeout } = await import('../../../src/kafka/client.js');
  assert.equal(periodicRequestTimeout(30_000, 2_000), 4_000);
  assert.equal(periodicRequestTimeout(30_000, 500), 2_000);
  assert.equal(periodicRequestTimeout(30_000, 60_000), 30_000);
  assert.equal(periodicRequestTimeout(3_000, 10_000), 3_000);
});

/**
 * kafkajs' own transaction manager (its eosManager module, the original and as installed) over a
 * cluster whose coordinators are scripted: the bugs reproduced on kafkajs' real code.
 */
type EosManager = { initProducerId(): Promise<void>; beginTransaction(): void; sendOffsets(a: unknown): Promise<void>; commit(): Promise<void> };
type Factory = (o: Record<string, unknown>) => EosManager;
function scriptedCluster(script: { txnOffsetCommit?: number[]; endTxn?: number[] }) {
  const calls: string[] = [];
  const answer = (name: 'txnOffsetCommit' | 'endTxn', node: number) => async () => {
    calls.push(`${name}@${node}`);
    const code = script[name]?.shift();
    if (code) throw kafkaError(code);
    return {};
  };
  let node = 0;
  const broker = (id: number) => ({
    nodeId: id,
    initProducerId: async () => ({ producerId: 7, producerEpoch: 0 }),
    addOffsetsToTxn: async () => ({}),
    txnOffsetCommit: answer('txnOffsetCommit', id),
    endTxn: answer('endTxn', id),
  });
  return {
    calls,
    cluster: {
      retry: { retries: 3, initialRetryTime: 1, maxRetryTime: 5 },
      refreshMetadataIfNecessary: async () => undefined,
      findGroupCoordinator: async () => broker(++node),
      disconnect: async () => undefined,
    },
  };
}
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const offsets = { consumerGroupId: 'g', topics: [{ topic: 't', partitions: [{ partition: 0, offset: '5' }] }] };

test('kafkajs bug reproduced: its sendOffsets gives up on NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS, its commit on any coordinator error; the installed manager retries them', async () => {
  const installed = require('kafkajs/src/producer/eosManager/index.js') as Factory & { original: Factory };
  const run = async (factory: Factory, script: { txnOffsetCommit?: number[]; endTxn?: number[] }) => {
    const { cluster, calls } = scriptedCluster(script);
    const eos = factory({ logger: quiet, cluster, transactional: true, transactionalId: 'tx-1', transactionTimeout: 60_000 });
    await eos.initProducerId();
    eos.beginTransaction();
    await eos.sendOffsets(offsets);
    await eos.commit();
    return calls;
  };
  // The original: the first NOT_COORDINATOR of TxnOffsetCommit fails the transaction (the demo's
  // "This is not the correct coordinator for this group"), and so does a LOAD_IN_PROGRESS.
  await assert.rejects(run(installed.original, { txnOffsetCommit: [16] }), /not the correct coordinator/);
  await assert.rejects(run(installed.original, { txnOffsetCommit: [14] }), /loading/i);
  await assert.rejects(run(installed.original, { endTxn: [16] }), /not the correct coordinator/);
  // Installed: each is sent again, after finding the coordinator again where it moved.
  const calls = await run(installed, { txnOffsetCommit: [16, 14], endTxn: [51, 16] });
  assert.deepEqual(
    calls.filter((c) => c.startsWith('txnOffsetCommit')).length,
    3,
    `TxnOffsetCommit sent three times: ${calls.join(', ')}`,
  );
  assert.equal(calls.filter((c) => c.startsWith('endTxn')).length, 3, `EndTxn sent three times: ${calls.join(', ')}`);
});

test('classification, every name: Kafka\'s and kafkajs\' spellings, connection errors by name and by code, nested causes', () => {
  const refind = ['NOT_COORDINATOR', 'NOT_COORDINATOR_FOR_GROUP', 'COORDINATOR_NOT_AVAILABLE', 'GROUP_COORDINATOR_NOT_AVAILABLE'];
  const retry = ['COORDINATOR_LOAD_IN_PROGRESS', 'GROUP_LOAD_IN_PROGRESS', 'CONCURRENT_TRANSACTIONS', 'REQUEST_TIMED_OUT', 'NOT_ENOUGH_REPLICAS', 'NOT_ENOUGH_REPLICAS_AFTER_APPEND', 'NOT_LEADER_OR_FOLLOWER', 'NOT_LEADER_FOR_PARTITION', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION', 'NETWORK_EXCEPTION'];
  for (const type of refind) assert.equal(classifyCoordinatorError({ type }), 'refind', type);
  for (const type of retry) assert.equal(classifyCoordinatorError({ type }), 'retry', type);
  for (const type of ['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH', '']) assert.equal(classifyCoordinatorError({ type }), 'fatal', type);
  for (const name of ['KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSRequestTimeoutError', 'KafkaJSBrokerNotFound', 'KafkaJSGroupCoordinatorNotFound', 'KafkaJSMetadataNotLoaded']) {
    assert.equal(classifyCoordinatorError({ name }), 'refind', name);
  }
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']) assert.equal(classifyCoordinatorError({ code }), 'refind', code);
  assert.equal(classifyCoordinatorError({ code: 'ENOENT' }), 'fatal');
  // The innermost cause decides, however deep (kafkajs nests a few levels; a cycle stops at 8).
  let e: Record<string, unknown> = { type: 'CONCURRENT_TRANSACTIONS' };
  for (let i = 0; i < 7; i++) e = { name: 'KafkaJSNonRetriableError', cause: e };
  assert.equal(classifyCoordinatorError(e), 'retry');
  const loop: Record<string, unknown> = { name: 'KafkaJSNonRetriableError' };
  loop.cause = loop;
  assert.equal(classifyCoordinatorError(loop), 'fatal');
  assert.equal(classifyCoordinatorError({ cause: 'a string' }), 'fatal', 'a cause that is no error');
  assert.equal(classifyCoordinatorError('NOT_COORDINATOR'), 'fatal', 'a thrown string');
});

test('the retry loop: attempts reported in order, the budget edge, a producer gone during the pause, a fatal answer of the coordinator lookup', async () => {
  const seen: [number, string][] = [];
  const deps = { ...manual(), onRetry: (_e: unknown, attempt: number, kind: string) => void seen.push([attempt, kind]) };
  let n = 0;
  await retryCoordinatorCall(async () => 'b', 'b', async () => {
    if (++n < 4) throw kafkaError(n === 2 ? 16 : 51);
    return 'ok';
  }, policy, deps);
  assert.deepEqual(seen, [[1, 'retry'], [2, 'refind'], [3, 'retry']]);

  // A pause that would end exactly at the budget is still taken; one past it is not.
  const edge = manual();
  n = 0;
  await retryCoordinatorCall(async () => 'b', 'b', async () => {
    if (++n === 1) throw kafkaError(51);
    return 'ok';
  }, { budgetMs: 50, initialBackoffMs: 50, maxBackoffMs: 50 }, edge);
  assert.equal(n, 2);
  const past = manual();
  n = 0;
  await assert.rejects(retryCoordinatorCall(async () => 'b', 'b', async () => {
    n++;
    throw kafkaError(51);
  }, { budgetMs: 49, initialBackoffMs: 50, maxBackoffMs: 50 }, past));
  assert.equal(n, 1);

  let live = true;
  const during = { ...manual(() => live), sleep: async () => void (live = false) };
  n = 0;
  await assert.rejects(retryCoordinatorCall(async () => 'b', 'b', async () => {
    n++;
    throw kafkaError(51);
  }, policy, during), /CONCURRENT|concurrent/i);
  assert.equal(n, 1, 'disconnected while pausing: not sent again');

  const denied = kafkaError(53);
  await assert.rejects(
    retryCoordinatorCall(() => Promise.reject(denied), 'b', async () => {
      throw kafkaError(16);
    }, policy, manual()),
    (e) => e === denied,
    'a lookup refused for good ends the retries with its own error',
  );
});

test('the cluster view retries only coordinator calls, and runs everything else with the cluster and broker as `this`', async () => {
  let metadataCalls = 0;
  const broker = {
    nodeId: 1,
    metadata(this: { nodeId: number }) {
      metadataCalls++;
      if (metadataCalls === 1) return Promise.reject(kafkaError(16));
      return Promise.resolve(this.nodeId);
    },
  };
  const cluster = {
    brokers: 3,
    findGroupCoordinator: async (_a: { groupId: string; coordinatorType?: number }) => broker as unknown as Record<string, unknown>,
    findBroker: async () => broker as unknown as Record<string, unknown>,
    disconnect: async () => undefined,
    count(this: { brokers: number }) {
      return this.brokers;
    },
  };
  const view = coordinatorRetryingCluster(cluster, undefined, { budgetMs: 1_000, initialBackoffMs: 1, maxBackoffMs: 1 });
  assert.equal(view.count(), 3);
  assert.equal(view.brokers, 3);
  const b = (await view.findGroupCoordinator({ groupId: 'g' })) as unknown as typeof broker;
  await assert.rejects(b.metadata(), /not the correct coordinator/, 'not a coordinator call: not retried');
  assert.equal(await b.metadata(), 1);
  assert.equal(b.nodeId, 1);
});
