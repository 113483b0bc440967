// Naming a missing ACL (src/kafka/permissions.ts) and the KIP-430 codec it reads the brokers'
// answer with (src/kafka/authorized-operations.ts): the pure parts. The probe against a real
// secured cluster is in test/integration/secure.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ProtocolDecodeError, Reader, Writer } from '../../../src/kafka/txn-protocol.js';
import { AUTHORIZED_OPERATIONS_OMITTED, allows, decodeDescribeGroupsResponse, decodeMetadataResponse, encodeDescribeGroupsRequest, encodeMetadataRequest } from '../../../src/kafka/authorized-operations.js';
import { PermissionWatch, judgePermissions, mayBeRefusal, permissionText, refusedKinds, type NeededPermission, type PermissionVerdict } from '../../../src/kafka/permissions.js';
import { neededPermissions } from '../../../src/kafka/needed-acls.js';
import { createLogger } from '../../../src/log.js';

const bits = (...codes: number[]) => codes.reduce((a, c) => a | (1 << c), 0);
const READ = 3;
const DESCRIBE = 8;
const DESCRIBE_CONFIGS = 10;

function metadataResponse(topics: { error: number; name: string; ops: number; partitions?: number }[], clusterOps: number): Buffer {
  const w = new Writer().int32(7); // throttle
  w.int32(2);
  for (const id of [1, 2]) w.int32(id).nullableString(`broker-${id}`).int32(9092).nullableString(id === 1 ? 'r1' : null);
  w.nullableString('cluster-x').int32(1);
  w.int32(topics.length);
  for (const t of topics) {
    w.int16(t.error).nullableString(t.name).int8(0);
    const n = t.partitions ?? 1;
    w.int32(n);
    for (let p = 0; p < n; p++) {
      w.int16(0).int32(p).int32(1).int32(5);
      w.int32(2).int32(1).int32(2); // replicas
      w.int32(1).int32(1); // isr
      w.int32(0); // offline
    }
    w.int32(t.ops);
  }
  return w.int32(clusterOps).build();
}

function describeGroupsResponse(groups: { error: number; id: string; ops: number; members?: number }[]): Buffer {
  const w = new Writer().int32(0).int32(groups.length);
  for (const g of groups) {
    w.int16(g.error).nullableString(g.id).nullableString('Stable').nullableString('consumer').nullableString('range');
    const n = g.members ?? 0;
    w.int32(n);
    for (let i = 0; i < n; i++) {
      w.nullableString(`m-${i}`).nullableString('client').nullableString('/127.0.0.1');
      w.int32(3).bytes(Buffer.from([1, 2, 3]));
      w.int32(0);
    }
    w.int32(g.ops);
  }
  return w.build();
}

describe('KIP-430 codec (Metadata v8, DescribeGroups v3)', () => {
  test('the Metadata request asks for the topics, no auto-creation, and both authorized-operations fields', () => {
    const r = new Reader(encodeMetadataRequest(['a', 'bc']), 'req');
    assert.equal(r.int32('n'), 2);
    assert.equal(r.string('t0'), 'a');
    assert.equal(r.string('t1'), 'bc');
    assert.deepEqual([r.int8('auto'), r.int8('cluster'), r.int8('topic')], [0, 1, 1]);
    r.end();
  });

  test('the DescribeGroups request asks for the groups and their authorized operations', () => {
    const r = new Reader(encodeDescribeGroupsRequest(['g']), 'req');
    assert.equal(r.int32('n'), 1);
    assert.equal(r.string('g'), 'g');
    assert.equal(r.int8('include'), 1);
    r.end();
  });

  test('a Metadata response: each topic error and operations, the cluster operations after the topics', () => {
    const m = decodeMetadataResponse(metadataResponse([{ error: 0, name: 'in', ops: bits(READ, DESCRIBE), partitions: 3 }, { error: 29, name: 'out', ops: AUTHORIZED_OPERATIONS_OMITTED, partitions: 0 }], bits(DESCRIBE_CONFIGS)));
    assert.deepEqual(m.topics, [
      { name: 'in', errorCode: 0, authorizedOperations: bits(READ, DESCRIBE) },
      { name: 'out', errorCode: 29, authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED },
    ]);
    assert.equal(m.clusterAuthorizedOperations, bits(DESCRIBE_CONFIGS));
  });

  test('a DescribeGroups response with members: their metadata bytes are stepped over', () => {
    const g = decodeDescribeGroupsResponse(describeGroupsResponse([{ error: 0, id: 'g1', ops: bits(READ, DESCRIBE), members: 2 }, { error: 30, id: 'g2', ops: 0 }]));
    assert.deepEqual(g, [
      { groupId: 'g1', errorCode: 0, authorizedOperations: bits(READ, DESCRIBE) },
      { groupId: 'g2', errorCode: 30, authorizedOperations: 0 },
    ]);
  });

  test('a truncated or padded response is a decode error naming the message', () => {
    const full = metadataResponse([{ error: 0, name: 'in', ops: 0 }], 0);
    assert.throws(() => decodeMetadataResponse(full.subarray(0, full.length - 2)), (e: Error) => e instanceof ProtocolDecodeError && /Metadata v8 response/.test(e.message));
    assert.throws(() => decodeMetadataResponse(Buffer.concat([full, Buffer.from([0])])), ProtocolDecodeError);
    const groups = describeGroupsResponse([{ error: 0, id: 'g', ops: 0, members: 1 }]);
    assert.throws(() => decodeDescribeGroupsResponse(groups.subarray(0, groups.length - 10)), (e: Error) => e instanceof ProtocolDecodeError && /DescribeGroups v3 response/.test(e.message));
  });

  test('allows: the operation bit, All for everything, undefined when the field was left out', () => {
    assert.equal(allows(bits(READ, DESCRIBE), 'Read'), true);
    assert.equal(allows(bits(READ, DESCRIBE), 'Write'), false);
    assert.equal(allows(bits(DESCRIBE), 'Describe'), true);
    assert.equal(allows(bits(2), 'Write'), true, 'All');
    assert.equal(allows(0, 'Describe'), false);
    assert.equal(allows(AUTHORIZED_OPERATIONS_OMITTED, 'Read'), undefined);
    assert.equal(allows(bits(DESCRIBE_CONFIGS), 'DescribeConfigs'), true);
    assert.equal(allows(bits(11), 'DescribeConfigs'), false, 'another bit is not this one');
  });
});

describe('which ACL a refusal is about', () => {
  test('refusedKinds: the kafkajs type anywhere in the cause chain, or its message', () => {
    assert.deepEqual([...refusedKinds(Object.assign(new Error('x'), { type: 'TOPIC_AUTHORIZATION_FAILED' }))], ['topic']);
    assert.deepEqual([...refusedKinds(new Error('consumer crashed', { cause: Object.assign(new Error('y'), { type: 'GROUP_AUTHORIZATION_FAILED' }) }))], ['group']);
    assert.deepEqual([...refusedKinds('pipeline FAILED: 1 consecutive failed checkpoint; last: Not authorized to access topics: [Topic authorization failed]')], ['topic']);
    assert.deepEqual([...refusedKinds(new Error('Not authorized to access group: Group authorization failed'))], ['group']);
    assert.deepEqual([...refusedKinds(new Error('Transactional Id authorization failed'))], ['transactional-id']);
    assert.deepEqual([...refusedKinds(new Error('Cluster authorization failed'))], ['cluster']);
    assert.deepEqual([...refusedKinds(new AggregateError([new Error('a'), Object.assign(new Error('b'), { type: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED' })]))], ['transactional-id']);
    assert.deepEqual([...refusedKinds(new Error('Connection error: ECONNREFUSED'))], []);
    assert.deepEqual([...refusedKinds(undefined)], []);
  });

  test('mayBeRefusal: refusals, a coordinator kafkajs could not find, a topic the metadata hides; not an outage', () => {
    assert.equal(mayBeRefusal(new Error('Failed to find group coordinator')), true);
    assert.equal(mayBeRefusal('pipeline: topic x-out not found; create it first (eoswatch never auto-creates topics)'), true);
    assert.equal(mayBeRefusal('unknown topic: t'), true);
    assert.equal(mayBeRefusal(new Error('Not authorized to access topics: [Topic authorization failed]')), true);
    assert.equal(mayBeRefusal(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9092')), false);
    assert.equal(mayBeRefusal(new Error('The group is rebalancing, so a rejoin is needed')), false);
  });
});

const p = (resource: NeededPermission['resource'], name: string, operation: NeededPermission['operation'], prefixed = false): NeededPermission => ({ resource, name, operation, prefixed });

describe('judgePermissions', () => {
  const answers = {
    topics: new Map([
      ['in', { errorCode: 0, authorizedOperations: bits(READ, DESCRIBE) }],
      ['out', { errorCode: 29, authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED }],
      ['gone', { errorCode: 3, authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED }],
      ['odd', { errorCode: 0, authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED }],
    ]),
    clusterOperations: bits(DESCRIBE),
    groups: new Map<string, { errorCode: number; authorizedOperations: number } | { error: string }>([
      ['g', { errorCode: 0, authorizedOperations: bits(DESCRIBE) }],
      ['hidden', { error: 'GROUP_AUTHORIZATION_FAILED' }],
      ['refused', { errorCode: 30, authorizedOperations: 0 }],
      ['loading', { error: 'COORDINATOR_LOAD_IN_PROGRESS' }],
    ]),
  };
  const verdict = (q: NeededPermission, refused: string[] = []) => judgePermissions([q], answers, new Set(refused as never[]))[0]!.verdict;

  test('topics: the operation bit; a topic it may not describe misses everything; an absent topic is not judged', () => {
    assert.equal(verdict(p('topic', 'in', 'Read')), 'granted');
    assert.equal(verdict(p('topic', 'in', 'Write')), 'missing');
    assert.equal(verdict(p('topic', 'out', 'Describe')), 'missing');
    assert.equal(verdict(p('topic', 'out', 'Write')), 'missing');
    assert.equal(verdict(p('topic', 'gone', 'Read')), 'unknown');
    assert.equal(verdict(p('topic', 'odd', 'Read')), 'unknown', 'no operations field: not judged');
    assert.equal(verdict(p('topic', 'never-asked', 'Read')), 'unknown');
  });

  test('the cluster, groups (a refused FindCoordinator or DescribeGroups misses everything; another error is not judged)', () => {
    assert.equal(verdict(p('cluster', 'kafka-cluster', 'Describe')), 'granted');
    assert.equal(verdict(p('cluster', 'kafka-cluster', 'DescribeConfigs')), 'missing');
    const undescribed = { ...answers, clusterOperations: bits(DESCRIBE_CONFIGS) & ~bits(DESCRIBE) };
    const cluster = (op: NeededPermission['operation'], refused: string[]) => judgePermissions([p('cluster', 'kafka-cluster', op)], { ...undescribed, clusterOperations: 0 }, new Set(refused as never[]))[0]!.verdict;
    assert.equal(cluster('DescribeConfigs', []), 'unknown', 'an empty field without Describe says nothing of DescribeConfigs');
    assert.equal(cluster('DescribeConfigs', ['cluster']), 'missing', 'a cluster refusal names it');
    assert.equal(cluster('Describe', ['cluster']), 'unknown');
    assert.equal(judgePermissions([p('cluster', 'kafka-cluster', 'DescribeConfigs')], undescribed, new Set())[0]!.verdict, 'unknown');
    assert.equal(verdict(p('group', 'g', 'Describe')), 'granted');
    assert.equal(verdict(p('group', 'g', 'Read')), 'missing');
    assert.equal(verdict(p('group', 'hidden', 'Describe')), 'missing');
    assert.equal(verdict(p('group', 'refused', 'Read')), 'missing');
    assert.equal(verdict(p('group', 'loading', 'Read')), 'unknown');
  });

  test('transactional ids: Write is missing only when the refusal named a transactional id; Describe is never guessed', () => {
    assert.equal(verdict(p('transactional-id', 'app', 'Write', true), ['transactional-id']), 'missing');
    assert.equal(verdict(p('transactional-id', 'app', 'Write', true), ['topic']), 'unknown');
    assert.equal(verdict(p('transactional-id', 'app', 'Describe', true), ['transactional-id']), 'unknown');
  });

  test('the texts name the operation and the resource as docs/security.md does', () => {
    assert.equal(permissionText(p('transactional-id', 'app', 'Write', true)), 'Write on transactional-id:app*');
    assert.equal(permissionText(p('cluster', 'kafka-cluster', 'DescribeConfigs')), 'DescribeConfigs on cluster');
    assert.equal(permissionText(p('topic', 'out.dlq', 'Write')), 'Write on topic:out.dlq');
  });

  test('neededPermissions: a service\'s rows with the configured names, a dead-letter topic of its own', () => {
    const rows = neededPermissions({ source: 'in', sink: 'out', dlq: 'dead', group: 'g', prefix: 'app' }, ['pipeline']).map(permissionText);
    assert.ok(rows.includes('Write on topic:dead'), rows.join(', '));
    assert.ok(!rows.some((r) => r.includes('out.dlq')));
    assert.ok(rows.includes('Read on group:g.members'));
    assert.ok(rows.includes('Write on transactional-id:app*'));
  });
});

describe('PermissionWatch', () => {
  const logger = createLogger('silent');
  function watch(answer: (needed: readonly NeededPermission[]) => PermissionVerdict[]) {
    let now = 0;
    const calls: { refused: string[] }[] = [];
    const registry = new Registry();
    const needed = [p('topic', 'in', 'Read'), p('topic', 'out', 'Write')];
    const w = new PermissionWatch({
      service: 'svc',
      kafka: {} as never,
      needed: () => needed,
      registry,
      logger,
      now: () => now,
      probe: async (_k, n, refused) => {
        calls.push({ refused: [...refused] });
        return answer(n);
      },
    });
    const gauge = async () => (await registry.getSingleMetric('eos_permission_missing')!.get()).values.map((v) => `${String(v.labels.service)} ${String(v.labels.operation)} ${String(v.labels.resource)} ${v.value}`);
    return { w, calls, gauge, advance: (ms: number) => (now += ms) };
  }
  const missingOut = (n: readonly NeededPermission[]): PermissionVerdict[] => n.map((q) => ({ permission: q, verdict: q.name === 'out' ? 'missing' : 'granted' }));

  test('a refusal is probed: the missing permission is named, in the gauge and the text; success clears both', async () => {
    const { w, calls, gauge } = watch(missingOut);
    assert.equal(await w.failed(new Error('Not authorized to access topics: [Topic authorization failed]')), 'permission missing: Write on topic:out');
    assert.deepEqual(calls, [{ refused: ['topic'] }]);
    assert.deepEqual(await gauge(), ['svc Write topic:out 1']);
    w.succeeded();
    assert.equal(w.text(), undefined);
    assert.deepEqual(await gauge(), []);
  });

  test('a failure that is no refusal is not probed; probes are at most every 5 s; a failing probe keeps the last answer', async () => {
    let fail = false;
    const { w, calls, advance } = watch((n) => {
      if (fail) throw new Error('probe down');
      return missingOut(n);
    });
    assert.equal(await w.failed(new Error('Connection error: ECONNREFUSED')), undefined);
    assert.equal(calls.length, 0);
    const refusal = new Error('Not authorized to access topics: [Topic authorization failed]');
    await w.failed(refusal);
    advance(4_999);
    assert.equal(await w.failed(refusal), 'permission missing: Write on topic:out', 'the last answer, without asking');
    assert.equal(calls.length, 1);
    advance(1);
    fail = true;
    assert.equal(await w.failed(refusal), 'permission missing: Write on topic:out', 'a failed probe changes nothing');
    assert.equal(calls.length, 2);
  });

  test('a refusal right after a success is asked about at once: nothing known missing is no answer to stand by', async () => {
    const { w, calls, advance } = watch(missingOut);
    const refusal = new Error('Not authorized to access topics: [Topic authorization failed]');
    await w.failed(refusal);
    w.succeeded();
    advance(1_000);
    assert.equal(await w.failed(refusal), 'permission missing: Write on topic:out');
    assert.equal(calls.length, 2);
  });

  test('a permission granted meanwhile leaves the gauge when the next probe no longer finds it', async () => {
    let missing = ['in', 'out'];
    const { w, gauge, advance } = watch((n) => n.map((q) => ({ permission: q, verdict: missing.includes(q.name) ? 'missing' : 'granted' })));
    await w.failed('Not authorized to access topics');
    assert.deepEqual((await gauge()).sort(), ['svc Read topic:in 1', 'svc Write topic:out 1']);
    missing = ['out'];
    advance(5_000);
    assert.equal(await w.failed('Not authorized to access topics'), 'permission missing: Write on topic:out');
    assert.deepEqual(await gauge(), ['svc Write topic:out 1']);
  });
});
