// The acl.* checks (src/audit/checks/acl.ts) and the cluster source's DescribeAcls facts
// (src/audit/sources/cluster.ts gatherAcls, aclBindings): who may Write a watched application's
// transactional ids, whether everyone may Read the internal topics, and what is said when the
// ACLs cannot be read. Verdict code under mutation testing: every rule is pinned here.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import {
  aclChecks,
  coversName,
  coversPrefix,
  describeBinding,
  effectiveAllows,
  EVERYONE,
  grants,
  INTERNAL_TOPICS,
  isWildcard,
  overlapsPrefix,
  prefixesOf,
  readersOf,
  unjudged,
  writersOf,
} from '../../../../src/audit/checks/acl.js';
import { aclBindings, gatherAcls } from '../../../../src/audit/sources/cluster.js';
import { watchedPrefixes } from '../../../../src/audit/sources/index.js';
import { parseConfigText } from '../../../../src/config/load.js';
import type { AclBindingFacts, AclFacts, AuditFacts, CheckResult } from '../../../../src/audit/types.js';

const { AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs;

type B = AclBindingFacts;
const txn = (principal: string, name: string, pattern: B['pattern'] = 'prefixed', operation = 'Write', permission: B['permission'] = 'allow', host = '*'): B => ({ principal, host, resource: 'transactional-id', name, pattern, operation, permission });
const topic = (principal: string, name: string, pattern: B['pattern'] = 'literal', operation = 'Read', permission: B['permission'] = 'allow', host = '*'): B => ({ principal, host, resource: 'topic', name, pattern, operation, permission });

const writers = aclChecks.find((c) => c.id === 'acl.transactional-id-writers')!;
const internal = aclChecks.find((c) => c.id === 'acl.internal-topics-readable')!;
const facts = (acls?: AclFacts): AuditFacts => ({ clients: [], checkpoints: [], ...(acls ? { acls } : {}) });
const read = (bindings: B[], prefixes: [string, string][] = [['pipeline:orders', 'orders']]): AclFacts => ({ state: 'read', bindings, watchedPrefixes: prefixes.map(([owner, prefix]) => ({ owner, prefix })) });

describe('binding predicates', () => {
  test('grants: the operation itself or All, nothing else', () => {
    assert.equal(grants(txn('User:a', 'x', 'literal', 'Write'), 'Write'), true);
    assert.equal(grants(txn('User:a', 'x', 'literal', 'All'), 'Write'), true);
    assert.equal(grants(txn('User:a', 'x', 'literal', 'Describe'), 'Write'), false);
    assert.equal(grants(txn('User:a', 'x', 'literal', 'Read'), 'Write'), false);
  });

  test('coversName: literal equal or *, prefixed by prefix, other patterns never', () => {
    assert.equal(coversName(topic('U', '__consumer_offsets'), '__consumer_offsets'), true);
    assert.equal(coversName(topic('U', '__consumer_offset'), '__consumer_offsets'), false, 'a literal is not a prefix');
    assert.equal(coversName(topic('U', '*'), '__consumer_offsets'), true);
    assert.equal(coversName(topic('U', '__', 'prefixed'), '__consumer_offsets'), true);
    assert.equal(coversName(topic('U', '__consumer_offsets', 'prefixed'), '__consumer_offsets'), true, 'a prefix equal to the name');
    assert.equal(coversName(topic('U', '__consumer_offsetsx', 'prefixed'), '__consumer_offsets'), false);
    assert.equal(coversName(topic('U', '*', 'prefixed'), '__consumer_offsets'), false, 'prefixed * is the prefix "*", no wildcard');
    assert.equal(coversName(topic('U', '__consumer_offsets', 'other'), '__consumer_offsets'), false);
  });

  test('overlapsPrefix: some id of the prefix is covered', () => {
    assert.equal(overlapsPrefix(txn('U', 'orders-0', 'literal'), 'orders'), true, 'a literal id of the application');
    assert.equal(overlapsPrefix(txn('U', 'orders', 'literal'), 'orders'), true, 'the prefix itself as an id');
    assert.equal(overlapsPrefix(txn('U', 'order', 'literal'), 'orders'), false);
    assert.equal(overlapsPrefix(txn('U', 'billing-0', 'literal'), 'orders'), false);
    assert.equal(overlapsPrefix(txn('U', '*', 'literal'), 'orders'), true);
    assert.equal(overlapsPrefix(txn('U', 'orders-1', 'prefixed'), 'orders'), true, 'a narrower prefix');
    assert.equal(overlapsPrefix(txn('U', 'ord', 'prefixed'), 'orders'), true, 'a wider prefix');
    assert.equal(overlapsPrefix(txn('U', 'orders', 'prefixed'), 'orders'), true);
    assert.equal(overlapsPrefix(txn('U', 'bill', 'prefixed'), 'orders'), false);
    assert.equal(overlapsPrefix(txn('U', 'ordersx', 'other'), 'orders'), false);
    assert.equal(overlapsPrefix(txn('U', 'o', 'other'), 'orders'), false);
  });

  test('coversPrefix: every id of the prefix is covered', () => {
    assert.equal(coversPrefix(txn('U', '*', 'literal'), 'orders'), true);
    assert.equal(coversPrefix(txn('U', 'orders', 'literal'), 'orders'), false, 'one id only');
    assert.equal(coversPrefix(txn('U', 'ord', 'prefixed'), 'orders'), true);
    assert.equal(coversPrefix(txn('U', 'orders', 'prefixed'), 'orders'), true);
    assert.equal(coversPrefix(txn('U', 'orders-1', 'prefixed'), 'orders'), false, 'a narrower prefix covers some ids only');
    assert.equal(coversPrefix(txn('U', 'ord', 'other'), 'orders'), false);
  });

  test('isWildcard: User:* or the literal resource *', () => {
    assert.equal(isWildcard(txn(EVERYONE, 'orders')), true);
    assert.equal(isWildcard(txn('User:ops', '*', 'literal')), true);
    assert.equal(isWildcard(txn('User:ops', '*', 'prefixed')), false);
    assert.equal(isWildcard(txn('User:ops', 'orders')), false);
    assert.equal(isWildcard(txn('User:**', 'orders')), false);
  });

  test('describeBinding: principal, pattern, All, a host other than *', () => {
    assert.equal(describeBinding(txn('User:app', 'orders')), 'User:app (prefixed orders*)');
    assert.equal(describeBinding(txn('User:app', 'orders-0', 'literal')), 'User:app (literal orders-0)');
    assert.equal(describeBinding(txn('User:app', 'orders', 'prefixed', 'All')), 'User:app (prefixed orders*, All)');
    assert.equal(describeBinding(txn('User:*', '*', 'literal', 'Write', 'allow', '10.0.0.7')), 'User:* (literal *) from 10.0.0.7');
  });
});

describe('effectiveAllows, writersOf, readersOf', () => {
  test('allow bindings of the resource kind and operation only, sorted', () => {
    const bs = [
      txn('User:z', 'orders'),
      txn('User:a', 'orders', 'prefixed', 'All'),
      txn('User:d', 'orders', 'prefixed', 'Describe'),
      { ...txn('User:g', 'orders'), resource: 'group' as const },
      txn('User:b', 'billing'),
    ];
    assert.deepEqual(writersOf(bs, 'orders').map((b) => b.principal), ['User:a', 'User:z']);
  });

  test('a deny on every id of the prefix takes back the same principal\u2019s allow; a deny for everyone takes back all', () => {
    const allowApp = txn('User:app', 'orders');
    const allowOps = txn('User:ops', 'orders');
    assert.deepEqual(writersOf([allowApp, allowOps, txn('User:ops', 'orders', 'prefixed', 'Write', 'deny')], 'orders'), [allowApp]);
    assert.deepEqual(writersOf([allowApp, allowOps, txn('User:ops', 'ord', 'prefixed', 'All', 'deny')], 'orders'), [allowApp], 'a wider deny, through All');
    assert.deepEqual(writersOf([allowApp, allowOps, txn(EVERYONE, '*', 'literal', 'Write', 'deny')], 'orders'), [], 'everyone denied');
    assert.deepEqual(writersOf([allowApp, allowOps, txn('User:ops', 'orders-1', 'prefixed', 'Write', 'deny')], 'orders'), [allowApp, allowOps], 'a deny on some ids only');
    assert.deepEqual(writersOf([allowApp, allowOps, txn('User:ops', 'orders-1', 'literal', 'Write', 'deny')], 'orders'), [allowApp, allowOps], 'a literal deny on one id');
    assert.deepEqual(writersOf([allowApp, allowOps, txn('User:ops', 'orders', 'prefixed', 'Describe', 'deny')], 'orders'), [allowApp, allowOps], 'a deny of another operation');
    assert.deepEqual(writersOf([allowApp, txn('User:app', 'orders', 'prefixed', 'Write', 'deny', '10.0.0.1')], 'orders'), [allowApp], 'a deny from one host leaves the allow from any host');
    const fromHost = txn('User:app', 'orders', 'prefixed', 'Write', 'allow', '10.0.0.1');
    assert.deepEqual(writersOf([fromHost, txn('User:app', 'orders', 'prefixed', 'Write', 'deny', '10.0.0.1')], 'orders'), [], 'a deny from the allow\u2019s own host');
    assert.deepEqual(writersOf([fromHost, txn('User:app', 'orders', 'prefixed', 'Write', 'deny', '10.0.0.2')], 'orders'), [fromHost], 'a deny from another host');
    assert.deepEqual(writersOf([allowApp, txn('User:app', 'orders', 'prefixed', 'Write', 'deny', '*')], 'orders'), [], 'a deny from any host');
  });

  test('effectiveAllows uses its own applies and deniesAll', () => {
    const bs = [topic('User:a', 'x'), topic('User:b', 'y'), topic('User:b', 'y', 'literal', 'Read', 'deny')];
    assert.deepEqual(effectiveAllows(bs, 'topic', 'Read', () => true, () => false).map((b) => b.principal), ['User:a', 'User:b']);
    assert.deepEqual(effectiveAllows(bs, 'topic', 'Read', () => true, () => true).map((b) => b.principal), ['User:a']);
    assert.deepEqual(effectiveAllows(bs, 'topic', 'Read', (b) => b.name === 'y', () => false).map((b) => b.principal), ['User:b']);
    assert.deepEqual(effectiveAllows(bs, 'transactional-id', 'Read', () => true, () => false), []);
  });

  test('readersOf: Read or All on the topic, by literal, * or prefix; denies on it', () => {
    const t = '__transaction_state';
    assert.deepEqual(readersOf([topic(EVERYONE, '*')], t).length, 1);
    assert.deepEqual(readersOf([topic(EVERYONE, '__', 'prefixed', 'All')], t).length, 1);
    assert.deepEqual(readersOf([topic(EVERYONE, t, 'literal', 'Describe')], t).length, 0, 'Describe does not read');
    assert.deepEqual(readersOf([topic(EVERYONE, '__consumer_offsets')], t).length, 0);
    assert.deepEqual(readersOf([topic(EVERYONE, '*'), topic(EVERYONE, t, 'literal', 'Read', 'deny')], t).length, 0, 'a deny on the topic itself');
    assert.deepEqual(readersOf([topic(EVERYONE, '*'), topic(EVERYONE, '__consumer_offsets', 'literal', 'Read', 'deny')], t).length, 1, 'a deny on another topic');
  });
});

describe('prefixesOf and unjudged', () => {
  test('each prefix once, sorted, with its owners sorted and unique', () => {
    const a = read([], [['pipeline:b', 'orders'], ['flink job x', 'billing'], ['pipeline:a', 'orders'], ['pipeline:a', 'orders']]);
    assert.deepEqual(prefixesOf(a), [{ prefix: 'billing', owners: ['flink job x'] }, { prefix: 'orders', owners: ['pipeline:a', 'pipeline:b'] }]);
  });

  test('read: nothing to say; authorizer off: passed; denied: failed with the fix; error: failed', () => {
    assert.equal(unjudged(read([]), 's'), undefined);
    assert.deepEqual(unjudged({ state: 'authorizer-off', bindings: [], watchedPrefixes: [] }, 'who may x'), {
      target: 'acl',
      passed: true,
      observed: 'no authorizer on the cluster (DescribeAcls: SECURITY_DISABLED): no ACL restricts who may x; every client may',
      expected: 'ACLs judged where an authorizer is configured',
    });
    const denied = unjudged({ state: 'denied', error: 'CLUSTER_AUTHORIZATION_FAILED', bindings: [], watchedPrefixes: [] }, 'who may x')!;
    assert.equal(denied.passed, false);
    assert.equal(denied.target, 'acl');
    assert.equal(denied.observed, 'DescribeAcls refused (CLUSTER_AUTHORIZATION_FAILED): who may x cannot be told');
    assert.equal(denied.expected, 'Describe on Cluster (DescribeAcls)');
    assert.match(denied.remediation!, /--operation Describe --cluster/);
    assert.equal(unjudged({ state: 'denied', bindings: [], watchedPrefixes: [] }, 's')!.observed, 'DescribeAcls refused (authorization failed): s cannot be told');
    assert.deepEqual(unjudged({ state: 'error', error: 'timeout', bindings: [], watchedPrefixes: [] }, 's'), { target: 'acl', passed: false, observed: 'DescribeAcls failed (timeout): s cannot be told', expected: 'the ACLs read' });
    assert.equal(unjudged({ state: 'error', bindings: [], watchedPrefixes: [] }, 's')!.observed, 'DescribeAcls failed (unknown error): s cannot be told');
  });
});

describe('acl.transactional-id-writers', () => {
  const expected = "the application's own principal only; no User:* and no transactional-id:* ACL";

  test('definition', () => {
    assert.equal(writers.severity, 'warning');
    assert.match(writers.rationale, /fence/);
  });

  test('no ACL facts, or no watched prefix: nothing', () => {
    assert.deepEqual(writers.evaluate(facts()), []);
    assert.deepEqual(writers.evaluate(facts(read([txn(EVERYONE, '*', 'literal')], []))), []);
    assert.deepEqual(writers.evaluate(facts({ state: 'denied', error: 'X', bindings: [], watchedPrefixes: [] })), [], 'no prefix: the gap does not matter');
  });

  test('the application alone: passed, named', () => {
    assert.deepEqual(writers.evaluate(facts(read([txn('User:app', 'orders'), txn('User:app', 'orders', 'prefixed', 'Describe')]))), [
      { target: 'acl:transactional-id:orders', passed: true, observed: 'pipeline:orders: Write on transactional ids orders* granted to User:app (prefixed orders*)', expected },
    ]);
  });

  test('several named principals: all listed, passed (eoswatch cannot know which is the application)', () => {
    const [r] = writers.evaluate(facts(read([txn('User:app', 'orders'), txn('User:ops', 'orders-0', 'literal')])));
    assert.equal(r!.passed, true);
    assert.equal(r!.observed, 'pipeline:orders: Write on transactional ids orders* granted to User:app (prefixed orders*), User:ops (literal orders-0)');
  });

  test('User:* or transactional-id:*: failed, the wildcard named', () => {
    const [a] = writers.evaluate(facts(read([txn('User:app', 'orders'), txn(EVERYONE, 'orders')])));
    assert.deepEqual(a, {
      target: 'acl:transactional-id:orders',
      passed: false,
      observed: 'pipeline:orders: Write on transactional ids orders* granted to User:* (prefixed orders*), User:app (prefixed orders*); wildcard: User:* (prefixed orders*) can fence the application',
      expected,
    });
    const [b] = writers.evaluate(facts(read([txn('User:ops', '*', 'literal', 'All')])));
    assert.equal(b!.passed, false);
    assert.match(b!.observed, /wildcard: User:ops \(literal \*, All\) can fence the application$/);
  });

  test('no writer: passed, says only super users may', () => {
    assert.deepEqual(writers.evaluate(facts(read([txn('User:x', 'billing')]))), [
      { target: 'acl:transactional-id:orders', passed: true, observed: 'pipeline:orders: no ACL grants Write on transactional ids orders*; only super users may use them', expected },
    ]);
  });

  test('one result per prefix, owners joined', () => {
    const r = writers.evaluate(facts(read([txn(EVERYONE, 'billing')], [['pipeline:a', 'orders'], ['flink job j', 'billing'], ['streams:orders', 'orders']])));
    assert.deepEqual(r.map((x: CheckResult) => [x.target, x.passed]), [['acl:transactional-id:billing', false], ['acl:transactional-id:orders', true]]);
    assert.match(r[1]!.observed, /^pipeline:a, streams:orders: no ACL/);
  });

  test('authorizer off, refused, failed: one result for all prefixes', () => {
    const off = writers.evaluate(facts({ state: 'authorizer-off', bindings: [], watchedPrefixes: [{ owner: 'p', prefix: 'a' }, { owner: 'q', prefix: 'b' }] }));
    assert.equal(off.length, 1);
    assert.equal(off[0]!.passed, true);
    assert.match(off[0]!.observed, /who may write the watched transactional ids/);
    const denied = writers.evaluate(facts({ state: 'denied', error: 'CLUSTER_AUTHORIZATION_FAILED', bindings: [], watchedPrefixes: [{ owner: 'p', prefix: 'a' }] }));
    assert.equal(denied.length, 1);
    assert.equal(denied[0]!.passed, false);
    assert.equal(writers.evaluate(facts({ state: 'error', error: 'x', bindings: [], watchedPrefixes: [{ owner: 'p', prefix: 'a' }] }))[0]!.passed, false);
  });
});

describe('acl.internal-topics-readable', () => {
  test('definition', () => {
    assert.equal(internal.severity, 'warning');
    assert.deepEqual([...INTERNAL_TOPICS], ['__transaction_state', '__consumer_offsets']);
  });

  test('nothing without facts, nothing when refused or failed (the writers check names that)', () => {
    assert.deepEqual(internal.evaluate(facts()), []);
    assert.deepEqual(internal.evaluate(facts({ state: 'denied', error: 'X', bindings: [], watchedPrefixes: [] })), []);
    assert.deepEqual(internal.evaluate(facts({ state: 'error', error: 'X', bindings: [], watchedPrefixes: [] })), []);
  });

  test('authorizer off: one passed result', () => {
    const r = internal.evaluate(facts({ state: 'authorizer-off', bindings: [], watchedPrefixes: [] }));
    assert.equal(r.length, 1);
    assert.equal(r[0]!.passed, true);
    assert.match(r[0]!.observed, /who may read __transaction_state and __consumer_offsets/);
  });

  test('judged without watched prefixes too; both topics, each its own verdict', () => {
    const r = internal.evaluate(facts(read([topic(EVERYONE, '__transaction_state'), topic('User:mon', '__consumer_offsets')], [])));
    assert.deepEqual(r, [
      { target: 'topic:__transaction_state', passed: false, observed: 'readable by everyone through User:* (literal __transaction_state)', expected: 'no Read (or All) for User:*' },
      { target: 'topic:__consumer_offsets', passed: true, observed: 'no ACL lets everyone read it; readable by User:mon (literal __consumer_offsets)', expected: 'no Read (or All) for User:*' },
    ]);
  });

  test('through topic:* for everyone, named readers listed beside', () => {
    const r = internal.evaluate(facts(read([topic(EVERYONE, '*'), topic('User:admin', '__', 'prefixed', 'All')])));
    assert.equal(r[0]!.passed, false);
    assert.equal(r[0]!.observed, 'readable by everyone through User:* (literal *); by name: User:admin (prefixed __*, All)');
    assert.equal(r[1]!.passed, false);
  });

  test('no reader at all; a named principal via topic:* is no finding', () => {
    const r = internal.evaluate(facts(read([topic('User:ops', '*'), topic(EVERYONE, 'orders')])));
    assert.deepEqual(r.map((x: CheckResult) => x.passed), [true, true]);
    assert.equal(r[0]!.observed, 'no ACL lets everyone read it; readable by User:ops (literal *)');
    assert.equal(internal.evaluate(facts(read([])))[0]!.observed, 'no ACL lets everyone read it');
  });
});

describe('DescribeAcls facts (cluster source)', () => {
  test('aclBindings: kafkajs codes to names; unknown codes kept visible', () => {
    const b = aclBindings([
      {
        resourceType: AclResourceTypes.TRANSACTIONAL_ID,
        resourceName: 'orders',
        resourcePatternType: ResourcePatternTypes.PREFIXED,
        acls: [
          { principal: 'User:app', host: '*', operation: AclOperationTypes.WRITE, permissionType: AclPermissionTypes.ALLOW },
          { principal: 'User:x', host: '10.0.0.1', operation: AclOperationTypes.ALL, permissionType: AclPermissionTypes.DENY },
        ],
      },
      { resourceType: AclResourceTypes.TOPIC, resourceName: '*', resourcePatternType: ResourcePatternTypes.LITERAL, acls: [{ principal: 'User:*', host: '*', operation: AclOperationTypes.READ, permissionType: AclPermissionTypes.ALLOW }] },
      { resourceType: AclResourceTypes.GROUP, resourceName: 'g', resourcePatternType: 99, acls: [{ principal: 'User:g', host: '*', operation: AclOperationTypes.DESCRIBE, permissionType: AclPermissionTypes.ALLOW }] },
      { resourceType: AclResourceTypes.CLUSTER, resourceName: 'kafka-cluster', resourcePatternType: ResourcePatternTypes.LITERAL, acls: [{ principal: 'User:c', host: '*', operation: 99, permissionType: AclPermissionTypes.ALLOW }] },
      { resourceType: 99, resourceName: 'd', resourcePatternType: ResourcePatternTypes.LITERAL, acls: [] },
      { resourceType: 99, resourceName: 'e', resourcePatternType: ResourcePatternTypes.LITERAL, acls: [{ principal: 'User:e', host: '*', operation: AclOperationTypes.IDEMPOTENT_WRITE, permissionType: AclPermissionTypes.ALLOW }] },
    ]);
    assert.deepEqual(b, [
      { principal: 'User:app', host: '*', resource: 'transactional-id', name: 'orders', pattern: 'prefixed', operation: 'Write', permission: 'allow' },
      { principal: 'User:x', host: '10.0.0.1', resource: 'transactional-id', name: 'orders', pattern: 'prefixed', operation: 'All', permission: 'deny' },
      { principal: 'User:*', host: '*', resource: 'topic', name: '*', pattern: 'literal', operation: 'Read', permission: 'allow' },
      { principal: 'User:g', host: '*', resource: 'group', name: 'g', pattern: 'other', operation: 'Describe', permission: 'allow' },
      { principal: 'User:c', host: '*', resource: 'cluster', name: 'kafka-cluster', pattern: 'literal', operation: 'operation 99', permission: 'allow' },
      { principal: 'User:e', host: '*', resource: 'other', name: 'e', pattern: 'literal', operation: 'IdempotentWrite', permission: 'allow' },
    ]);
    const ops = [
      [AclOperationTypes.CREATE, 'Create'],
      [AclOperationTypes.DELETE, 'Delete'],
      [AclOperationTypes.ALTER, 'Alter'],
      [AclOperationTypes.CLUSTER_ACTION, 'ClusterAction'],
      [AclOperationTypes.DESCRIBE_CONFIGS, 'DescribeConfigs'],
      [AclOperationTypes.ALTER_CONFIGS, 'AlterConfigs'],
    ] as const;
    for (const [code, name] of ops) {
      assert.equal(aclBindings([{ resourceType: AclResourceTypes.CLUSTER, resourceName: 'c', resourcePatternType: ResourcePatternTypes.LITERAL, acls: [{ principal: 'U', host: '*', operation: code, permissionType: AclPermissionTypes.ALLOW }] }])[0]!.operation, name);
    }
  });

  const prefixes = [{ owner: 'pipeline:p', prefix: 'orders' }];
  const admin = (fn: () => Promise<unknown>) => ({ describeAcls: fn }) as unknown as Parameters<typeof gatherAcls>[0];

  test('gatherAcls: every ACL asked for, read', async () => {
    let asked: unknown;
    const a = await gatherAcls(
      admin(async function (this: unknown, ...args: unknown[]) {
        asked = args[0];
        return { resources: [{ resourceType: AclResourceTypes.TOPIC, resourceName: 't', resourcePatternType: ResourcePatternTypes.LITERAL, acls: [{ principal: 'User:a', host: '*', operation: AclOperationTypes.READ, permissionType: AclPermissionTypes.ALLOW }] }] };
      }),
      prefixes,
    );
    assert.deepEqual(asked, { resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY });
    assert.deepEqual(a, { state: 'read', bindings: [{ principal: 'User:a', host: '*', resource: 'topic', name: 't', pattern: 'literal', operation: 'Read', permission: 'allow' }], watchedPrefixes: prefixes });
  });

  test('gatherAcls: SECURITY_DISABLED is authorizer-off, *_AUTHORIZATION_FAILED denied (on the error or its cause), anything else an error', async () => {
    const failing = (e: unknown) => admin(async () => Promise.reject(e));
    assert.deepEqual(await gatherAcls(failing(Object.assign(new Error('Security features are disabled'), { type: 'SECURITY_DISABLED' })), prefixes), { state: 'authorizer-off', bindings: [], watchedPrefixes: prefixes });
    assert.deepEqual(await gatherAcls(failing(Object.assign(new Error('Cluster authorization failed'), { type: 'CLUSTER_AUTHORIZATION_FAILED' })), prefixes), { state: 'denied', error: 'CLUSTER_AUTHORIZATION_FAILED', bindings: [], watchedPrefixes: prefixes });
    assert.deepEqual(await gatherAcls(failing(Object.assign(new Error('wrapped'), { cause: { type: 'SECURITY_DISABLED' } })), prefixes), { state: 'authorizer-off', bindings: [], watchedPrefixes: prefixes });
    assert.deepEqual(await gatherAcls(failing(Object.assign(new Error('wrapped'), { cause: { type: 'TOPIC_AUTHORIZATION_FAILED' } })), []), { state: 'denied', error: 'TOPIC_AUTHORIZATION_FAILED', bindings: [], watchedPrefixes: [] });
    assert.deepEqual(await gatherAcls(failing(Object.assign(new Error('x'), { type: 'AUTHORIZATION_FAILED_SOON' })), []), { state: 'error', error: 'x', bindings: [], watchedPrefixes: [] }, 'the suffix only');
    assert.deepEqual(await gatherAcls(failing(new Error('Request timed out')), []), { state: 'error', error: 'Request timed out', bindings: [], watchedPrefixes: [] });
    assert.deepEqual(await gatherAcls(failing('plain'), []), { state: 'error', error: 'plain', bindings: [], watchedPrefixes: [] });
  });

  test('watchedPrefixes: the pipeline (when enabled), Flink prefixes, Streams application ids (when enabled)', () => {
    const cfg = parseConfigText(
      [
        'pipeline: {enabled: true, name: orders, sourceTopic: a, sinkTopic: b, transactionalIdPrefix: orders-tx}',
        'flink: {transactionalIdPrefixes: [{job: "enrich.*", prefix: enrich}]}',
        'streams: {enabled: true, applications: [{applicationId: billing}]}',
        '',
      ].join('\n'),
      'x.yaml',
      {},
    );
    assert.deepEqual(watchedPrefixes(cfg), [
      { owner: 'pipeline:orders', prefix: 'orders-tx' },
      { owner: 'flink job enrich.*', prefix: 'enrich' },
      { owner: 'streams:billing', prefix: 'billing' },
    ]);
    const off = parseConfigText('pipeline: {enabled: false}\nstreams: {enabled: false, applications: [{applicationId: billing}]}\n', 'y.yaml', {});
    assert.deepEqual(watchedPrefixes(off), []);
  });
});
