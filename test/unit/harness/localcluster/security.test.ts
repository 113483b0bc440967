// The secured local cluster's pure parts: broker properties, SCRAM format arguments, ACL parsing
// and the ACL table, and docs/security.md kept equal to the table the secured test grants.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { nodeProperties, type ClusterState, type NodeState } from '../../../../harness/localcluster/cluster.js';
import { normaliseSecurity, propValue, scramFormatArgs, securityProperties, eoswatchKafkaSection, unsecuredJwt, type SecurityState } from '../../../../harness/localcluster/security.js';
import { aclEntry, aclsFor, aclTableMarkdown, describeAcl, parseOperation, parseResource, parsePrincipal, EOSWATCH_ACLS } from '../../../../harness/localcluster/acl.js';

const node: NodeState = { id: 1, brokerPort: 19092, controllerPort: 19093, dir: '/c/node-1', propsFile: '/c/node-1/server.properties', logFile: '/c/node-1/server.log', pid: null };
const state = (security?: SecurityState): ClusterState => ({ version: '4.4.0', clusterId: 'x', libs: '/l', dir: '/c', heap: '512m', overrides: {}, nodes: [node], ...(security ? { security } : {}) });
const sec = (mode: 'sasl-ssl' | 'ssl', mtls = false): SecurityState => ({ mode, mtls: mode === 'ssl' || mtls, pkiDir: '/c/pki', admin: 'admin', passwords: { admin: 'adm1n-pw', app: 'app-pw' } });
const pem = { keyPem: '-----BEGIN PRIVATE KEY-----\nAAA\n-----END PRIVATE KEY-----\n', certPem: '-----BEGIN CERTIFICATE-----\nBBB\n-----END CERTIFICATE-----\n' };
const props = (text: string) => Object.fromEntries(text.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));

describe('secured broker properties', () => {
  test('plaintext is unchanged: PLAINTEXT listener, no authorizer, no TLS', () => {
    const p = props(nodeProperties(state(), node));
    assert.equal(p.listeners, 'PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093');
    assert.equal(p['inter.broker.listener.name'], 'PLAINTEXT');
    assert.equal(p['listener.security.protocol.map'], 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT');
    assert.equal(p['authorizer.class.name'], undefined);
    assert.equal(Object.keys(p).some((k) => k.startsWith('ssl.') || k.startsWith('sasl.')), false);
  });

  test('sasl-ssl: SASL_SSL client and inter-broker listener, controller PLAINTEXT, deny-by-default, admin and ANONYMOUS super users', () => {
    const p = props(nodeProperties(state(sec('sasl-ssl')), node, pem));
    assert.equal(p.listeners, 'SASL_SSL://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093');
    assert.equal(p['advertised.listeners'], 'SASL_SSL://127.0.0.1:19092');
    assert.equal(p['listener.security.protocol.map'], 'CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL');
    assert.equal(p['inter.broker.listener.name'], 'SASL_SSL');
    assert.equal(p['authorizer.class.name'], 'org.apache.kafka.metadata.authorizer.StandardAuthorizer');
    assert.equal(p['allow.everyone.if.no.acl.found'], 'false');
    assert.equal(p['super.users'], 'User:admin;User:ANONYMOUS');
    assert.equal(p['sasl.enabled.mechanisms'], 'SCRAM-SHA-512,SCRAM-SHA-256,PLAIN,OAUTHBEARER');
    assert.equal(p['listener.name.sasl_ssl.oauthbearer.sasl.jaas.config'], 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin";');
    assert.equal(p['listener.name.sasl_ssl.ssl.client.auth'], 'none');
    assert.equal(p['ssl.client.auth'], undefined, 'plain ssl.client.auth is ignored on a SASL_SSL listener');
    assert.match(p['listener.name.sasl_ssl.plain.sasl.jaas.config']!, /username="admin" password="adm1n-pw" user_admin="adm1n-pw" user_app="app-pw";$/);
    // The inline PEM survives the properties file as one line with \n escapes.
    assert.equal(p['ssl.keystore.key'], '-----BEGIN PRIVATE KEY-----\\nAAA\\n-----END PRIVATE KEY-----');
    assert.equal(p['ssl.keystore.type'], 'PEM');
    assert.equal(p['ssl.truststore.location'], '/c/pki/ca.crt');
  });

  test('sasl-ssl with mTLS requires the certificate on the listener; ssl maps CN to the user', () => {
    assert.equal(securityProperties(sec('sasl-ssl', true), pem)['listener.name.sasl_ssl.ssl.client.auth'], 'required');
    const s = securityProperties(sec('ssl'), pem);
    assert.equal(s['listener.name.ssl.ssl.client.auth'], 'required');
    assert.equal(s['ssl.principal.mapping.rules'], 'RULE:^CN=([^,]+)$/$1/,DEFAULT');
    assert.equal(s['sasl.enabled.mechanisms'], undefined);
    // The brokers' own certificates (inter-broker listener) are super users: markers need ClusterAction.
    assert.equal(securityProperties(sec('ssl'), pem, 3)['super.users'], 'User:admin;User:ANONYMOUS;User:node-1;User:node-2;User:node-3');
    assert.equal(securityProperties(sec('sasl-ssl'), pem, 3)['super.users'], 'User:admin;User:ANONYMOUS');
    assert.equal(props(nodeProperties(state(sec('ssl')), node, pem)).listeners, 'SSL://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093');
  });

  test('a secured node without its key and certificate is refused', () => {
    assert.throws(() => nodeProperties(state(sec('sasl-ssl')), node), /need the node's key and certificate/);
  });

  test('propValue escapes backslashes and newlines', () => {
    assert.equal(propValue('a\\b\nc\r\n'), 'a\\\\b\\nc\\n');
  });

  test('SCRAM credentials of every user, both mechanisms; none in the ssl mode', () => {
    assert.deepEqual(scramFormatArgs(sec('sasl-ssl')), [
      '--add-scram', 'SCRAM-SHA-512=[name=admin,password=adm1n-pw]', '--add-scram', 'SCRAM-SHA-256=[name=admin,password=adm1n-pw]',
      '--add-scram', 'SCRAM-SHA-512=[name=app,password=app-pw]', '--add-scram', 'SCRAM-SHA-256=[name=app,password=app-pw]',
    ]);
    assert.deepEqual(scramFormatArgs(sec('ssl')), []);
  });

  test('options: a mode name or an object; bad modes and user names refused', () => {
    assert.deepEqual(normaliseSecurity(undefined), { mode: 'plaintext' });
    assert.deepEqual(normaliseSecurity('ssl'), { mode: 'ssl' });
    assert.throws(() => normaliseSecurity('tls' as never), /security: expected one of plaintext, sasl-ssl, ssl, found "tls"/);
    assert.throws(() => normaliseSecurity({ mode: 'sasl-ssl', users: ['a b'] }), /"a b" is not a user name/);
    assert.throws(() => normaliseSecurity({ mode: 'sasl-ssl', users: ['admin'] }), /super user/);
  });

  test("an eoswatch kafka section: files and SASL for sasl-ssl, the certificate only for ssl", () => {
    assert.deepEqual(eoswatchKafkaSection(sec('sasl-ssl'), ['h:1'], { user: 'app' }), {
      brokers: ['h:1'],
      ssl: { enabled: true, caFile: '/c/pki/ca.crt' },
      sasl: { mechanism: 'scram-sha-512', username: 'app', password: 'app-pw' },
    });
    assert.deepEqual(eoswatchKafkaSection(sec('ssl'), ['h:1'], { user: 'app' }), {
      brokers: ['h:1'],
      ssl: { enabled: true, caFile: '/c/pki/ca.crt', certFile: '/c/pki/user-app.crt', keyFile: '/c/pki/user-app.key' },
    });
    assert.throws(() => eoswatchKafkaSection(sec('ssl'), ['h:1'], { user: 'nobody' }), /no user "nobody"/);
  });
});

describe('ACLs', () => {
  test('resources: topic, group, transactional-id (prefix with *), cluster', () => {
    assert.deepEqual(parseResource('topic:orders'), { resource: 'topic', name: 'orders', prefixed: false });
    assert.deepEqual(parseResource('transactional-id:app-*'), { resource: 'transactional-id', name: 'app-', prefixed: true });
    assert.deepEqual(parseResource('cluster'), { resource: 'cluster', name: 'kafka-cluster', prefixed: false });
    for (const bad of ['orders', 'topic:', 'topic:*', 'user:x', 'cluster:x']) assert.throws(() => parseResource(bad), /--resource: expected/, bad);
  });

  test('operations by name, any case; principals User:NAME', () => {
    assert.equal(parseOperation('describeconfigs'), 'DescribeConfigs');
    assert.equal(parseOperation('Describe-Configs'), 'DescribeConfigs');
    assert.throws(() => parseOperation('Own'), /--operation: expected one of All, Read/);
    assert.equal(parsePrincipal('User:eoswatch'), 'User:eoswatch');
    assert.throws(() => parsePrincipal('eoswatch'), /expected User:NAME/);
  });

  test('kafkajs entries: allow, any host, literal or prefixed', () => {
    const e = aclEntry({ principal: 'User:a', resource: 'transactional-id', name: 'p-', prefixed: true, operation: 'Write' });
    assert.deepEqual(e, { resourceType: 5, resourceName: 'p-', resourcePatternType: 4, principal: 'User:a', host: '*', operation: 4, permissionType: 3 });
    assert.equal(aclEntry({ principal: 'User:a', resource: 'cluster', name: 'kafka-cluster', prefixed: false, operation: 'DescribeConfigs' }).resourceType, 4);
  });

  const names = { source: 's', sink: 'k', group: 'g', prefix: 'x', canaryId: 'c' };

  test('aclsFor fills the names, drops duplicates and keeps least privilege (no Create, Alter, All, cluster other than DescribeConfigs)', () => {
    const all = aclsFor('User:e', names).map(describeAcl);
    assert.equal(new Set(all).size, all.length);
    assert.ok(all.includes('User:e Write on transactional-id:x*'));
    assert.ok(all.includes('User:e Read on group:c.canary-reader'));
    assert.ok(all.includes('User:e DescribeConfigs on cluster'));
    assert.deepEqual(all.filter((a) => / (Create|Alter|All|Delete|AlterConfigs|ClusterAction|IdempotentWrite) on /.test(a)), []);
    assert.deepEqual(all.filter((a) => / on cluster$/.test(a)), ['User:e DescribeConfigs on cluster']);
    assert.deepEqual(aclsFor('User:e', names, ['lsoMonitor']).map(describeAcl), ['User:e Describe on topic:k']);
    assert.throws(() => aclsFor('User:e', names, ['nope']), /no ACL table for services nope/);
    assert.throws(() => aclsFor('User:e', { ...names, canaryId: undefined }, ['canary']), /no value given/);
  });

  test('docs/security.md holds the generated table exactly', () => {
    const doc = readFileSync(new URL('../../../../docs/security.md', import.meta.url), 'utf8');
    const m = /<!-- generated: aclTableMarkdown\(\) in harness\/localcluster\/acl\.ts -->\n([\s\S]*?)<!-- end generated -->/.exec(doc);
    assert.ok(m, 'docs/security.md has the generated-table markers');
    assert.equal(m[1], aclTableMarkdown(), 'regenerate the table in docs/security.md from aclTableMarkdown()');
    for (const s of EOSWATCH_ACLS) assert.match(m[1]!, new RegExp(`\\| ${s.service} \\|`));
  });
});

describe('the audit names a missing permission', () => {
  test('an *_AUTHORIZATION_FAILED error is rethrown naming the ACL; any other error unchanged', async () => {
    const { namingDenied } = await import('../../../../src/audit/sources/cluster.js');
    const denied = Object.assign(new Error('Cluster authorization failed'), { type: 'CLUSTER_AUTHORIZATION_FAILED' });
    await assert.rejects(
      namingDenied('DescribeConfigs on the cluster (broker configurations)', () => Promise.reject(denied)),
      { message: 'permission missing: DescribeConfigs on the cluster (broker configurations) (CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed)' },
    );
    const other = Object.assign(new Error('Request timed out'), { type: 'REQUEST_TIMED_OUT' });
    await assert.rejects(namingDenied('x', () => Promise.reject(other)), (e) => e === other);
    assert.equal(await namingDenied('x', async () => 7), 7);
  });
});

describe('unsecuredJwt (the local cluster\u2019s OAUTHBEARER tokens)', () => {
  const decode = (part: string): unknown => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  test('header alg none, sub, iat a minute before now, exp; an empty signature', () => {
    const t = unsecuredJwt('eoswatch', 1_800_000_600, 1_800_000_000_000);
    const [h, p, sig] = t.split('.');
    assert.deepEqual(decode(h!), { alg: 'none' });
    assert.deepEqual(decode(p!), { sub: 'eoswatch', iat: 1_799_999_940, exp: 1_800_000_600 });
    assert.equal(sig, '');
    assert.equal(t.split('.').length, 3);
  });
  test('an exp in the past: iat stays before it (Kafka refuses iat after exp as inconsistent, not as expired)', () => {
    const t = unsecuredJwt('eoswatch', 1_000, 1_800_000_000_000);
    assert.deepEqual(decode(t.split('.')[1]!), { sub: 'eoswatch', iat: 999, exp: 1_000 });
  });
});
