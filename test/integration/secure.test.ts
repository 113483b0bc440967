// eoswatch against a secured 1-node cluster (SASL_SSL, SCRAM-SHA-512, private CA, StandardAuthorizer
// deny-by-default): the daemon's services under a principal holding exactly the ACLs of
// src/localcluster/acl.ts (the table docs/security.md prints), one ACL revoked, a wrong password,
// an untrusted CA, and mutual TLS with the certificate as the identity. Everything the harness
// does (topics, seed, reading the sink) it does as the cluster's super user.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { uniqueName, useCluster } from '../harness/index.js';
import { PipelineProcess, pipelineConfig } from '../harness/pipeline.js';
import { assertSinkExactlyOnce, createTopicsAsAdmin, produceAsAdmin, waitCaughtUpAsAdmin } from '../harness/secure.js';
import { makeTestPki } from '../harness/tls.js';
import { aclsFor, grantAcls, revokeAcls, type AclNames } from '../../src/localcluster/acl.js';
import type { LocalCluster } from '../../src/localcluster/cluster.js';

const P = 3;
const VERSION = process.env.EOSWATCH_SECURE_KAFKA_VERSION ?? '4.4.0';

/** Polls fn; fails at once when the daemon `p` exits (a wait for it to become ready would otherwise run out its timeout). */
async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs: number, ctx: () => string = () => '', p?: PipelineProcess): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    if (p && p.child.exitCode !== null) throw new Error(`the daemon exited (${p.child.exitCode}) while waiting for ${what}\n${ctx()}`);
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (${(last as Error).message})` : ''}\n${ctx()}`);
}

async function setup(c: LocalCluster, name: string): Promise<AclNames & { dlq: string }> {
  const id = uniqueName(name);
  const n = { source: `${id}-in`, sink: `${id}-out`, dlq: `${id}-out.dlq`, group: `${id}-group`, prefix: id, canaryId: `${id}-canary` };
  await createTopicsAsAdmin(c, [n.source, n.sink, n.dlq], P);
  return n;
}

function daemonConfig(c: LocalCluster, n: AclNames, kafka: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return pipelineConfig(
    { brokers: c.brokers, source: n.source, sink: n.sink, groupId: n.group, prefix: n.prefix },
    {},
    {
      kafka: { ...kafka, healthCheckInterval: '1s' },
      canary: { enabled: true, id: n.canaryId, rate: 20, lostAfter: '30s' },
      lag: { enabled: true, groups: [n.group], interval: '1s' },
      lsoMonitor: { interval: '1s' },
      audit: { schedule: '*/2 * * * * *' },
      ...extra,
    },
  );
}

const getJson = async (url: string): Promise<{ status: number; body: unknown; text: string }> => {
  const r = await fetch(url);
  const text = await r.text();
  return { status: r.status, text, body: JSON.parse(text) as unknown };
};

describe(`secured cluster (1 node, SASL_SSL + ACLs, Kafka ${VERSION})`, () => {
  const h = useCluster({ nodes: 1, version: VERSION, security: { mode: 'sasl-ssl', users: ['eoswatch'] } });

  test('least privilege: every service ready under only the documented ACLs, records exactly once; DescribeConfigs revoked: the audit names it, the rest keeps working', async () => {
    const c = h.cluster;
    const n = await setup(c, 'least');
    const admin = (await c.kafka()).admin();
    await admin.connect();
    after(() => admin.disconnect());
    const acls = aclsFor('User:eoswatch', n);
    await grantAcls(admin, acls);
    const sent = await produceAsAdmin(c, n.source, P, 3000);
    const p = new PipelineProcess(daemonConfig(c, n, c.eoswatchKafka({ user: 'eoswatch' })));
    const url = await p.url;
    const ready = await until('/readyz 200', async () => (await fetch(`${url}/readyz`)).status === 200 && (await getJson(`${url}/readyz`)), 90_000, () => p.tail(40), p);
    const services = Object.keys((ready.body as { services: Record<string, unknown> }).services).sort();
    for (const s of ['audit', 'canary', 'kafka', 'lag', 'lso-monitor', 'pipeline']) assert.ok(services.some((x) => x.startsWith(s)), `service ${s} in /readyz: ${services.join(', ')}`);
    await waitCaughtUpAsAdmin(c, n.group, n.source, 90_000, () => p.tail(40));
    await assertSinkExactlyOnce(c, n.sink, [...sent], p.tail(40), n.canaryId);
    assert.equal(await p.metric('eos_kafka_up'), 1);
    await p.waitMetric('eos_canary_records_total', { result: 'received' }, 20, 60_000);
    assert.equal((await p.metric('eos_canary_records_total', { result: 'lost' })) ?? 0, 0);
    const audit = await until('an audit with the cluster source read', async () => {
      const a = (await getJson(`${url}/audit`)).body as { sources: { name: string; ok: boolean; error?: string }[] };
      return a.sources?.find((s) => s.name === 'cluster')?.ok && a;
    }, 60_000, () => p.tail(40), p);
    assert.deepEqual(audit.sources.filter((s) => /permission|authoriz/i.test(s.error ?? '')), [], 'no audit source failed for want of a permission');
    // The audit's coordinator view needs more than the audit row (Describe and Read on
    // __transaction_state, Describe on transactional ids: docs/transactions.md): without them it
    // is a coordinator.permissions finding naming what is missing, and the only refusal in the logs.
    const coordinator = await until('the coordinator view judged', async () => {
      const a = (await getJson(`${url}/audit`)).body as { findings: { check: string; passed: boolean; observed: string }[] };
      return a.findings.find((f) => f.check === 'coordinator.permissions');
    }, 30_000, () => p.tail(40), p);
    assert.equal(coordinator.passed, false);
    assert.match(coordinator.observed, /__transaction_state/);
    const refusals = p.output.split('\n').filter((l) => /AUTHORIZATION_FAILED|not authorized/i.test(l));
    assert.deepEqual(refusals.filter((l) => !l.includes('"service":"audit"')), [], 'no service but the audit (its coordinator view) was denied anything');

    // One ACL revoked: the audit says which permission is missing, by name; nothing else changes.
    const revoked = await revokeAcls(admin, acls.filter((a) => a.resource === 'cluster' && a.operation === 'DescribeConfigs'));
    assert.equal(revoked, 1);
    const denied = await until('an audit naming the missing permission', async () => {
      const a = (await getJson(`${url}/audit`)).body as { sources: { name: string; ok: boolean; error?: string }[]; findings: { source: string; passed: boolean; observed: string }[] };
      const s = a.sources.find((x) => x.name === 'cluster');
      return s && !s.ok && a;
    }, 30_000, () => p.tail(40), p);
    const cluster = denied.sources.find((s) => s.name === 'cluster')!;
    assert.match(cluster.error ?? '', /permission missing: DescribeConfigs on the cluster/);
    assert.ok(denied.findings.some((f) => !f.passed && /permission missing: DescribeConfigs on the cluster/.test(f.observed)), 'a failed finding names it');
    const more = await produceAsAdmin(c, n.source, P, 600, 3000);
    await waitCaughtUpAsAdmin(c, n.group, n.source, 60_000, () => p.tail(40));
    await assertSinkExactlyOnce(c, n.sink, [...sent, ...more], p.tail(40), n.canaryId);
    assert.equal((await fetch(`${url}/readyz`)).status, 200, 'the other services stay ready');
    assert.equal(p.child.exitCode, null, 'the daemon stays up');
    assert.doesNotMatch(p.output, /restarting the service|service stays failed|fatal service error/i, 'no service restarts');
    await p.kill();
  });

  test('what Kafka hides without an error is named: __transaction_state without Describe (the transactions service polls, says why), a lag group without Describe (eos_lag_permission_denied)', async () => {
    const c = h.cluster;
    const n = await setup(c, 'hidden');
    const admin = (await c.kafka()).admin();
    await admin.connect();
    after(() => admin.disconnect());
    // A committed transaction as the super user: __transaction_state exists.
    const tx = (await c.kafka()).producer({ transactionalId: `${n.prefix}-admin`, idempotent: true, maxInFlightRequests: 1 });
    await tx.connect();
    const t = await tx.transaction();
    await t.send({ topic: n.source, messages: [{ value: 'x' }] });
    await t.commit();
    await tx.disconnect();
    // The lag row for {group}, and Describe on the transactional ids: nothing on __transaction_state, nothing on the other group.
    await grantAcls(admin, [...aclsFor('User:eoswatch', n, ['health', 'lag']), { principal: 'User:eoswatch', resource: 'transactional-id', name: '*', prefixed: false, operation: 'Describe' }]);
    const hidden = `${n.group}-hidden`;
    const p = new PipelineProcess(
      daemonConfig(c, n, c.eoswatchKafka({ user: 'eoswatch' }), {
        pipeline: { enabled: false },
        canary: { enabled: false },
        lsoMonitor: { enabled: false, topics: [] },
        audit: { enabled: false },
        lag: { enabled: true, groups: [n.group, hidden], interval: '1s' },
        transactions: { enabled: true, interval: '1s' },
      }),
    );
    const url = await p.url;
    await until('the transactions service polling for want of a permission', async () => (await p.metric('eos_coordinator_source', { source: 'poll' })) === 1 && ((await p.metric('eos_coordinator_read_errors_total', { what: 'log', kind: 'permission' })) ?? 0) >= 1, 60_000, () => p.tail(40), p);
    assert.equal(await p.metric('eos_coordinator_up'), 1, 'the poll reads the coordinators');
    await until('the hidden group named', async () => (await p.metric('eos_lag_permission_denied', { resource: `group:${hidden}` })) === 1, 60_000, () => p.tail(40), p);
    assert.equal(await p.metric('eos_lag_permission_denied', { resource: `group:${n.group}` }), undefined, 'the group it may describe is not named');
    const ready = await until('/readyz with both details', async () => {
      const r = await getJson(`${url}/readyz`);
      return r.status === 200 && /no read permission on __transaction_state/.test(r.text) && /permission missing: Describe on group:/.test(r.text) && r;
    }, 30_000, () => p.tail(40), p);
    assert.match(ready.text, new RegExp(`Describe on group:${hidden}`));
    assert.match(p.output, /cannot read __transaction_state \(no Describe\/Read ACL on it\): polling/);
    assert.equal(p.child.exitCode, null, 'the daemon stays up');
    await p.kill();
  });

  test('npm run kafka -- acl grant|list|revoke on the running cluster, as its super user; no password in the output', async () => {
    const c = h.cluster;
    const cli = async (...args: string[]) => (await promisify(execFile)('node', ['--import', 'tsx', 'src/localcluster/cli.ts', ...args, '--dir', c.dir], { timeout: 60_000 })).stdout;
    const who = `User:${uniqueName('cli')}`;
    const out = [
      await cli('acl', 'grant', '--principal', who, '--resource', 'transactional-id:app-*', '--operation', 'Write', '--operation', 'Describe'),
      await cli('acl', 'grant', '--principal', who, '--resource', 'cluster', '--operation', 'DescribeConfigs'),
    ];
    const listed = await cli('acl', 'list', '--principal', who);
    assert.deepEqual(listed.trim().split('\n'), [`${who} Describe on transactional-id:app-*`, `${who} DescribeConfigs on cluster`, `${who} Write on transactional-id:app-*`]);
    out.push(listed, await cli('acl', 'revoke', '--principal', who, '--resource', 'transactional-id:app-*', '--operation', 'Write'));
    assert.match(out.at(-1)!, /^revoked 1 ACL: /);
    assert.deepEqual((await cli('acl', 'list', '--principal', who)).trim().split('\n'), [`${who} Describe on transactional-id:app-*`, `${who} DescribeConfigs on cluster`]);
    const state = JSON.parse(await readFile(`${c.dir}/cluster.json`, 'utf8')) as { security: { passwords: Record<string, string> } };
    for (const pw of Object.values(state.security.passwords)) for (const o of out) assert.ok(!o.includes(pw), 'no password in the CLI output');
    for (const n of c.nodes) assert.ok(!(await readFile(n.logFile, 'utf8')).includes(state.security.passwords.admin!), 'no password in the broker log');
  });

  test('a wrong password: eos_kafka_up 0, a clear error, the password nowhere in logs, /audit or /readyz', async () => {
    const c = h.cluster;
    const n = await setup(c, 'badpw');
    const wrong = `wrong-${uniqueName('pw')}`;
    const kafka = { ...c.eoswatchKafka({ user: 'eoswatch' }), sasl: { mechanism: 'scram-sha-512', username: 'eoswatch', password: wrong } };
    const p = new PipelineProcess(daemonConfig(c, n, kafka, { pipeline: { enabled: false }, canary: { enabled: false }, lsoMonitor: { enabled: false, topics: [] }, lag: { enabled: false } }));
    const url = await p.url;
    await until('eos_kafka_up 0', async () => (await p.metric('eos_kafka_up')) === 0, 60_000, () => p.tail(40), p);
    await p.waitFor(/SASL SCRAM SHA512 authentication failed|Authentication failed/i, 30_000);
    const bodies = [p.output, (await getJson(`${url}/readyz`)).text, await (await fetch(`${url}/audit`)).text(), await (await fetch(`${url}/metrics`)).text()];
    for (const b of bodies) assert.ok(!b.includes(wrong), 'the password appears nowhere');
    assert.equal(p.child.exitCode, null, 'the daemon stays up');
    await p.kill();
  });

  test('an untrusted CA: one clear certificate error, eos_kafka_up 0', async () => {
    const c = h.cluster;
    const n = await setup(c, 'badca');
    const pki = await makeTestPki();
    after(() => rm(pki.dir, { recursive: true, force: true }));
    const own = c.eoswatchKafka({ user: 'eoswatch' }) as { ssl: Record<string, unknown> };
    const kafka = { ...own, ssl: { ...own.ssl, caFile: `${pki.dir}/${pki.files.ca}` } };
    const p = new PipelineProcess(daemonConfig(c, n, kafka, { pipeline: { enabled: false }, canary: { enabled: false }, lsoMonitor: { enabled: false, topics: [] }, lag: { enabled: false }, audit: { enabled: false } }));
    await until('eos_kafka_up 0', async () => (await p.metric('eos_kafka_up')) === 0, 60_000, () => p.tail(40), p);
    await p.waitFor(/self[- ]signed|unable to verify|certificate/i, 30_000);
    await p.kill();
  });
});

describe(`mutual TLS, the client certificate as the identity (1 node, SSL, Kafka ${VERSION})`, () => {
  const h = useCluster({ nodes: 1, version: VERSION, security: { mode: 'ssl', users: ['eoswatch'] } });

  test('User:eoswatch from its certificate: the pipeline and the audit work under its ACLs; without a certificate, no connection', async () => {
    const c = h.cluster;
    const n = await setup(c, 'mtls');
    const admin = (await c.kafka()).admin();
    await admin.connect();
    after(() => admin.disconnect());
    await grantAcls(admin, aclsFor('User:eoswatch', n, ['health', 'pipeline', 'audit', 'lsoMonitor']));
    const sent = await produceAsAdmin(c, n.source, P, 1000);
    const p = new PipelineProcess(daemonConfig(c, n, c.eoswatchKafka({ user: 'eoswatch' }), { canary: { enabled: false }, lag: { enabled: false } }));
    const url = await p.url;
    await waitCaughtUpAsAdmin(c, n.group, n.source, 90_000, () => p.tail(40));
    await assertSinkExactlyOnce(c, n.sink, sent, p.tail(40));
    await until('/readyz 200', async () => (await fetch(`${url}/readyz`)).status === 200, 60_000, () => p.tail(40), p);
    await p.kill();
    const own = c.eoswatchKafka({ user: 'eoswatch' }) as { ssl: { caFile: string } };
    const q = new PipelineProcess(daemonConfig(c, n, { brokers: c.brokers, ssl: { enabled: true, caFile: own.ssl.caFile } }, { pipeline: { enabled: false }, canary: { enabled: false }, lsoMonitor: { enabled: false, topics: [] }, lag: { enabled: false }, audit: { enabled: false } }));
    await until('eos_kafka_up 0 without a client certificate', async () => (await q.metric('eos_kafka_up')) === 0, 60_000, () => q.tail(40), q);
    await q.kill();
  });
});

describe('Kafka 3.9.1: SASL_SSL with client certificates (mutual TLS and SCRAM-SHA-256)', () => {
  const h = useCluster({ nodes: 1, version: '3.9.1', security: { mode: 'sasl-ssl', mtls: true, users: ['eoswatch'] } });

  test('health and the audit under their ACLs: eos_kafka_up 1, the cluster source read', async () => {
    const c = h.cluster;
    const n = await setup(c, 'k39');
    const admin = (await c.kafka()).admin();
    await admin.connect();
    after(() => admin.disconnect());
    await grantAcls(admin, aclsFor('User:eoswatch', n, ['health', 'audit']));
    const kafka = c.eoswatchKafka({ user: 'eoswatch', mechanism: 'scram-sha-256' }) as { ssl: { certFile?: string } };
    assert.ok(kafka.ssl.certFile, 'the client certificate is configured');
    const p = new PipelineProcess(daemonConfig(c, n, kafka, { pipeline: { enabled: false }, canary: { enabled: false }, lsoMonitor: { enabled: false, topics: [] }, lag: { enabled: false }, audit: { schedule: '*/2 * * * * *', topics: [n.source, n.sink] } }));
    const url = await p.url;
    await until('eos_kafka_up 1', async () => (await p.metric('eos_kafka_up')) === 1, 60_000, () => p.tail(40), p);
    const audit = await until('the cluster source read', async () => {
      const a = (await getJson(`${url}/audit`)).body as { sources?: { name: string; ok: boolean; error?: string }[] };
      return a.sources?.find((s) => s.name === 'cluster')?.ok && a;
    }, 60_000, () => p.tail(40), p);
    assert.ok(audit.sources!.length > 0);
    await p.kill();
  });
});
