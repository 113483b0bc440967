// Naming a missing ACL (src/kafka/permissions.ts) and the KIP-430 codec it reads the brokers'
// answer with (src/kafka/authorized-operations.ts): the pure parts. The probe against a real
// secured cluster is in test/integration/secure.test.ts.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { ProtocolDecodeError, Reader, Writer } from '../../../src/kafka/wire.js';
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

  test('a response cut anywhere is a decode error naming the message and the field it was reading', () => {
    const fieldsAt = (b: Buffer, decode: (b: Buffer) => unknown, what: string) => {
      const fields = new Set<string>();
      for (let k = 0; k < b.length; k++) {
        let msg = '';
        try {
          decode(b.subarray(0, k));
        } catch (e) {
          assert.ok(e instanceof ProtocolDecodeError, `cut at ${k}: ${String(e)}`);
          msg = e.message;
        }
        assert.ok(msg.startsWith(`${what}: `), `cut at ${k} of ${b.length}: ${msg || 'decoded without an error'}`);
        const m = /reading (.+?) \(|^[^:]+: ([a-z_]+) runs past the end|^[^:]+: ([a-z_]+) count -?\d+ at byte/.exec(msg);
        assert.ok(m, `cut at ${k}: ${msg}`);
        fields.add(m[1] ?? m[2] ?? `${m[3]!} count`);
      }
      return [...fields].sort();
    };
    const meta = metadataResponse([{ error: 0, name: 'in', ops: 0, partitions: 1 }], 0);
    assert.deepEqual(
      fieldsAt(meta, (b) => decodeMetadataResponse(b), 'Metadata v8 response'),
      ['brokers count', 'cluster_authorized_operations', 'cluster_id', 'cluster_id length', 'controller_id', 'error_code', 'host', 'host length', 'is_internal', 'isr_nodes', 'isr_nodes count', 'leader_epoch', 'leader_id', 'name', 'name length', 'node_id', 'offline_replicas count', 'partition_index', 'partitions count', 'port', 'rack', 'rack length', 'replica_nodes', 'replica_nodes count', 'throttle_time_ms', 'topic_authorized_operations', 'topics count'].sort(),
    );
    const groups = describeGroupsResponse([{ error: 0, id: 'g', ops: 0, members: 1 }]);
    assert.deepEqual(
      fieldsAt(groups, (b) => decodeDescribeGroupsResponse(b), 'DescribeGroups v3 response'),
      ['authorized_operations', 'client_host', 'client_host length', 'client_id', 'client_id length', 'error_code', 'group_id', 'group_id length', 'group_state', 'group_state length', 'groups count', 'member_assignment length', 'member_id', 'member_id length', 'member_metadata', 'member_metadata length', 'members count', 'protocol_data', 'protocol_data length', 'protocol_type', 'protocol_type length', 'throttle_time_ms'].sort(),
    );
  });

  test('a member with empty metadata bytes decodes; bytes longer than the message are an error, not a read past the end', () => {
    const w = new Writer().int32(0).int32(1).int16(0).nullableString('g').nullableString('Empty').nullableString('consumer').nullableString('');
    w.int32(1).nullableString('m').nullableString('c').nullableString('h').int32(0).int32(0);
    assert.deepEqual(decodeDescribeGroupsResponse(w.int32(bits(READ)).build()), [{ groupId: 'g', errorCode: 0, authorizedOperations: bits(READ) }]);
    const long = new Writer().int32(0).int32(1).int16(0).nullableString('g').nullableString('S').nullableString('c').nullableString('');
    long.int32(1).nullableString('m').nullableString('c').nullableString('h').int32(1000).int8(1).int32(0).int32(0);
    assert.throws(() => decodeDescribeGroupsResponse(long.build()), /member_metadata runs past the end/);
    const negative = new Writer().int32(0).int32(1).int16(0).nullableString('g').nullableString('S').nullableString('c').nullableString('');
    negative.int32(1).nullableString('m').nullableString('c').nullableString('h').int32(-1).int32(0).int32(0);
    assert.throws(() => decodeDescribeGroupsResponse(negative.build()), /member_metadata runs past the end/);
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
    assert.deepEqual([...refusedKinds(null)], []);
    assert.deepEqual([...refusedKinds({ type: 'CLUSTER_AUTHORIZATION_FAILED' })], ['cluster'], 'a plain object with a type');
    assert.deepEqual([...refusedKinds({ message: 'x', originalError: { type: 'GROUP_AUTHORIZATION_FAILED' } })], ['group']);
    assert.deepEqual([...refusedKinds(new Error('a', { cause: undefined }))], []);
    const loop = new Error('loop') as Error & { cause?: unknown };
    loop.cause = loop;
    assert.deepEqual([...refusedKinds(loop)], [], 'a cause chain that loops ends');
    const chain = (depth: number) => {
      let e: unknown = Object.assign(new Error('deep'), { type: 'TOPIC_AUTHORIZATION_FAILED' });
      for (let i = 0; i < depth; i++) e = new Error(`level ${i}`, { cause: e });
      return e;
    };
    assert.deepEqual([...refusedKinds(chain(5))], ['topic'], 'five causes deep');
    assert.deepEqual([...refusedKinds(chain(6))], [], 'not followed further than five causes');
    assert.deepEqual([...refusedKinds(new AggregateError([new Error('a', { cause: new Error('Cluster authorization failed') })]))], ['cluster']);
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

  test('every verdict says why, in words', () => {
    const all = judgePermissions(
      [p('topic', 'in', 'Write'), p('topic', 'out', 'Read'), p('topic', 'gone', 'Read'), p('topic', 'odd', 'Read'), p('topic', 'x', 'Read'), p('topic', 'err', 'Read'), p('group', 'refused', 'Read'), p('group', 'none', 'Read'), p('group', 'loading', 'Read'), p('group', 'bad', 'Read'), p('group', 'hidden', 'Read'), p('topic', 'pre', 'Read', true), p('transactional-id', 'app', 'Write', true), p('transactional-id', 'lit', 'Write'), p('transactional-id', 'app', 'Describe', true), p('cluster', 'kafka-cluster', 'DescribeConfigs')],
      { ...answers, topics: new Map([...answers.topics, ['err', { errorCode: 41, authorizedOperations: 0 }]]), groups: new Map([...answers.groups, ['bad', { errorCode: 16, authorizedOperations: 0 }]]) },
      new Set(['transactional-id']),
    ).map((v) => `${v.verdict}: ${v.why ?? ''}`);
    assert.deepEqual(all, [
      'missing: not among the authorized operations',
      'missing: TOPIC_AUTHORIZATION_FAILED (not even Describe)',
      'unknown: the topic does not exist',
      'unknown: the broker did not report its authorized operations',
      'unknown: no metadata answer',
      'unknown: metadata error 41',
      'missing: GROUP_AUTHORIZATION_FAILED (not even Describe)',
      'unknown: no answer for the group',
      'unknown: COORDINATOR_LOAD_IN_PROGRESS',
      'unknown: DescribeGroups error 16',
      'missing: GROUP_AUTHORIZATION_FAILED',
      'unknown: Kafka reports no authorized operations for it',
      'missing: TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
      'missing: TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
      'unknown: Kafka reports no authorized operations for it',
      'missing: not among the authorized operations',
    ]);
    const granted = judgePermissions([p('topic', 'in', 'Read')], answers, new Set())[0]!;
    assert.deepEqual(granted, { permission: p('topic', 'in', 'Read'), verdict: 'granted' });
    const noCluster = (refused: string[]) => judgePermissions([p('cluster', 'kafka-cluster', 'DescribeConfigs')], { ...answers, clusterOperations: undefined }, new Set(refused as never[]))[0]!;
    assert.deepEqual([noCluster([]).why, noCluster(['cluster']).why], ['Kafka reports the cluster\u2019s operations only to a principal with Describe on it', 'CLUSTER_AUTHORIZATION_FAILED']);
    assert.equal(noCluster(['cluster']).verdict, 'missing');
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
  function watch(answer: (needed: readonly NeededPermission[]) => PermissionVerdict[] | Promise<PermissionVerdict[]>, log = logger) {
    let now = 1_000_000;
    const calls: { refused: string[] }[] = [];
    const registry = new Registry();
    const needed = [p('topic', 'in', 'Read'), p('topic', 'out', 'Write')];
    const w = new PermissionWatch({
      service: 'svc',
      kafka: {} as never,
      needed: () => needed,
      registry,
      logger: log,
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

  test('what it logs: one warning per newly missing set (it, them), the reasons; one line when all are granted again', async () => {
    const lines: { level: string; msg: string; missing?: string[]; granted?: string[] }[] = [];
    const log = createLogger('debug', { write: (l: string) => void lines.push(JSON.parse(l) as (typeof lines)[number]) });
    let missing = ['out'];
    const { w, advance } = watch((n) => n.map((q) => ({ permission: q, verdict: missing.includes(q.name) ? 'missing' : 'granted', why: `why ${q.name}` })), log);
    await w.failed('Not authorized to access topics');
    missing = ['in', 'out'];
    advance(5_000);
    await w.failed('Not authorized to access topics');
    advance(5_000);
    await w.failed('Not authorized to access topics');
    w.succeeded();
    w.succeeded();
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg, l.missing ?? l.granted]),
      [
        ['warn', "permission missing: Write on topic:out; grant it to eoswatch's principal (docs/security.md)", ['Write on topic:out (why out)']],
        ['warn', "permission missing: Read on topic:in; grant it to eoswatch's principal (docs/security.md)", ['Read on topic:in (why in)']],
        ['info', 'the missing permissions are granted again', ['Read on topic:in', 'Write on topic:out']],
      ],
    );
    missing = ['in', 'out'];
    lines.length = 0;
    await w.failed('Not authorized to access topics');
    assert.equal(lines[0]?.msg, "permission missing: Read on topic:in, Write on topic:out; grant them to eoswatch's principal (docs/security.md)");
  });

  test('failures while a probe is out wait for its answer: one probe; a failing probe is logged at debug', async () => {
    const lines: { level: string; msg: string }[] = [];
    const log = createLogger('debug', { write: (l: string) => void lines.push(JSON.parse(l) as (typeof lines)[number]) });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let fail = false;
    const { w, calls, advance } = watch(async (n) => {
      await gate;
      if (fail) throw new Error('probe down');
      return missingOut(n);
    }, log);
    const a = w.failed('Not authorized to access topics');
    const b = w.failed('Not authorized to access topics');
    release();
    assert.deepEqual(await Promise.all([a, b]), ['permission missing: Write on topic:out', 'permission missing: Write on topic:out']);
    assert.equal(calls.length, 1);
    fail = true;
    advance(5_000);
    await w.failed('Not authorized to access topics');
    assert.deepEqual(lines.filter((l) => l.level === 'debug').map((l) => l.msg), ['could not ask the brokers which permissions are missing']);
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
