// eoswatch against a secured 1-node cluster (SASL_SSL, SCRAM-SHA-512, private CA, StandardAuthorizer
// deny-by-default): the daemon's services under a principal holding exactly the ACLs of
// harness/localcluster/acl.ts (the table docs/security.md prints), one ACL revoked, a wrong password,
// OAUTHBEARER (a good and an expired token), PLAIN, an untrusted CA, an expired client certificate,
// and mutual TLS with the certificate as the identity. Everything the harness
// does (topics, seed, reading the sink) it does as the cluster's super user.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { uniqueName, useCluster } from '../harness/index.js';
import { holds, until } from '../harness/wait.js';
import { PipelineProcess, pipelineConfig } from '../harness/pipeline.js';
import { assertSinkExactlyOnce, createTopicsAsAdmin, produceAsAdmin, waitCaughtUpAsAdmin } from '../harness/secure.js';
import { makeTestPki } from '../harness/tls.js';
import { aclsFor, grantAcls, listAcls, revokeAcls, type AclNames, type AclSpec } from '../../harness/localcluster/acl.js';
import { cliCommand } from '../../harness/chaos/worker.js';
import { permissionText } from '../../src/kafka/permissions.js';
import type { LocalCluster } from '../../harness/localcluster/cluster.js';
import { issueExpiredCertificate, unsecuredJwt } from '../../harness/localcluster/security.js';

const P = 3;
const VERSION = process.env.EOSWATCH_SECURE_KAFKA_VERSION ?? '4.4.0';

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

/** An ACL of User:least, the principal holding nothing but what a test grants it. */
const row = (resource: AclSpec['resource'], name: string, operation: AclSpec['operation'], prefixed = false): AclSpec => ({ principal: 'User:least', resource, name, prefixed, operation });

const getJson = async (url: string): Promise<{ status: number; body: unknown; text: string }> => {
  const r = await fetch(url);
  const text = await r.text();
  return { status: r.status, text, body: JSON.parse(text) as unknown };
};

describe(`secured cluster (1 node, SASL_SSL + ACLs, Kafka ${VERSION})`, () => {
  const h = useCluster({ nodes: 1, version: VERSION, security: { mode: 'sasl-ssl', users: ['eoswatch', 'least'] } });

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
    const ready = await until('/readyz 200', async () => (await fetch(`${url}/readyz`)).status === 200 && (await getJson(`${url}/readyz`)), 90_000, { process: p });
    const services = Object.keys((ready.body as { services: Record<string, unknown> }).services).sort();
    for (const s of ['audit', 'canary', 'kafka', 'lag', 'lso-monitor', 'pipeline']) assert.ok(services.some((x) => x.startsWith(s)), `service ${s} in /readyz: ${services.join(', ')}`);
    await waitCaughtUpAsAdmin(c, n.group, n.source, 90_000, () => p.tail(40));
    await assertSinkExactlyOnce(c, n.sink, [...sent], p.tail(40), n.canaryId);
    assert.equal(await p.metric('eos_kafka_up'), 1);
    // Under only the documented ACLs every scheduled run gets what it went for.
    for (const [service, task] of [['kafka-health', 'probe'], ['lso-monitor', 'reading'], ['lag', 'reading'], ['audit', 'run'], ['canary', 'send']] as const) {
      assert.equal(await p.metric('eos_service_run_success', { service, task }), 1, `${service} ${task}: its last run succeeded\n${p.tail(20)}`);
    }
    await p.waitMetric('eos_canary_records_total', { result: 'received' }, 20, 60_000);
    assert.equal((await p.metric('eos_canary_records_total', { result: 'lost' })) ?? 0, 0);
    const audit = await until('an audit with the cluster source read', async () => {
      const a = (await getJson(`${url}/audit`)).body as { sources: { name: string; ok: boolean; error?: string }[] };
      return a.sources?.find((s) => s.name === 'cluster')?.ok && a;
    }, 60_000, { process: p });
    assert.deepEqual(audit.sources.filter((s) => /permission|authoriz/i.test(s.error ?? '')), [], 'no audit source failed for want of a permission');
    // The audit's coordinator view needs more than the audit row (Describe and Read on
    // __transaction_state, Describe on transactional ids: docs/transactions.md): without them it
    // is a coordinator.permissions finding naming what is missing, and the only refusal in the logs.
    const coordinator = await until('the coordinator view judged', async () => {
      const a = (await getJson(`${url}/audit`)).body as { findings: { check: string; passed: boolean; observed: string }[] };
      return a.findings.find((f) => f.check === 'coordinator.permissions');
    }, 30_000, { process: p });
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
    }, 30_000, { process: p });
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

  // Each service under a principal holding only its own ACLs (the canary's with the pipeline's,
  // which carries its records), then each of its ACLs removed in turn: the service names the
  // missing one (eos_permission_missing, its /readyz detail), the rest keeps working, nothing
  // restarts faster than its backoff, and the ACL granted again brings it back by itself. CI runs
  // one ACL per service; EOSWATCH_ACL_MATRIX=all every ACL (the results: docs/security.md).
  test('each ACL removed in turn: the service names the missing permission, the others keep working, granted again it recovers', async () => {
    const c = h.cluster;
    const n = await setup(c, 'turn');
    const admin = (await c.kafka()).admin();
    await admin.connect();
    after(() => admin.disconnect());
    await produceAsAdmin(c, n.source, P, 300);
    const all = process.env.EOSWATCH_ACL_MATRIX === 'all';
    const principal = 'User:least';
    const key = permissionText;
    const plans: { service: string; label: string; grant: string[]; ci: string; config: Record<string, unknown>; healthy: (p: PipelineProcess) => Promise<boolean> }[] = [
      {
        service: 'pipeline',
        label: 'pipeline',
        grant: ['pipeline'],
        ci: `Write on topic:${n.sink}`,
        config: { canary: { enabled: false }, lag: { enabled: false }, lsoMonitor: { enabled: false, topics: [] }, audit: { enabled: false } },
        healthy: async (p) => (await p.metric('eos_pipeline_up', { engine: 'eoswatch' })) === 1,
      },
      {
        service: 'canary',
        label: 'canary',
        grant: ['pipeline', 'canary'],
        ci: `Read on topic:${n.sink}`,
        config: { lag: { enabled: false }, lsoMonitor: { enabled: false, topics: [] }, audit: { enabled: false } },
        healthy: async (p) => (await p.metric('eos_pipeline_up', { engine: 'eoswatch' })) === 1 && /"canary":\{"ready":true,"detail":"run canary/.test((await getJson(`${await p.url}/readyz`)).text),
      },
      {
        service: 'lsoMonitor',
        label: 'lso-monitor',
        grant: ['lsoMonitor'],
        ci: `Describe on topic:${n.sink}`,
        config: { pipeline: { enabled: false }, canary: { enabled: false }, lag: { enabled: false }, lsoMonitor: { topics: [n.sink], interval: '1s' }, audit: { enabled: false } },
        healthy: async (p) => (await p.metric('eos_service_run_success', { service: 'lso-monitor', task: 'reading' })) === 1,
      },
      {
        service: 'lag',
        label: 'lag',
        grant: ['lag'],
        ci: `Describe on group:${n.group}`,
        config: { pipeline: { enabled: false }, canary: { enabled: false }, lsoMonitor: { enabled: false, topics: [] }, lag: { enabled: true, groups: [n.group], topics: [n.source], interval: '1s' }, audit: { enabled: false } },
        healthy: async (p) => (await p.metric('eos_service_run_success', { service: 'lag', task: 'reading' })) === 1 && (await p.metric('eos_lag_permission_denied', { resource: `group:${n.group}` })) === undefined,
      },
      {
        service: 'audit',
        label: 'audit',
        // The audit reads the configuration of the pipeline's topics when the pipeline runs.
        grant: ['pipeline', 'audit'],
        ci: `DescribeConfigs on topic:${n.sink}`,
        config: { canary: { enabled: false }, lag: { enabled: false }, lsoMonitor: { enabled: false, topics: [] } },
        healthy: async (p) => ((await getJson(`${await p.url}/audit`)).body as { sources?: { name: string; ok: boolean }[] }).sources?.find((x) => x.name === 'cluster')?.ok === true,
      },
    ];
    // The pipeline commits offsets to {group}: the lag service has a group to read.
    const results: string[] = [];
    for (const plan of plans) {
      const granted = aclsFor(principal, n, plan.grant);
      const own = aclsFor(principal, n, [plan.service]);
      // A row another granted row implies (Read/Write imply Describe on the same resource) or that
      // another service of this daemon also holds cannot be missed by removing it alone.
      const others = aclsFor(principal, n, plan.grant.filter((x) => x !== plan.service));
      const implied = (a: (typeof own)[number]) => a.operation === 'Describe' && granted.some((b) => b !== a && b.resource === a.resource && b.name === a.name && ['Read', 'Write'].includes(b.operation));
      // The lag service reads one record only where a committed offset stands just below the LSO
      // (markers): with plain records in the source it never does, so that row is not exercised.
      const unexercised = (a: (typeof own)[number]) => plan.service === 'lag' && a.operation === 'Read';
      const removable = own.filter((a) => !implied(a) && !unexercised(a) && !others.some((b) => key(b) === key(a)));
      const turns = all ? removable : removable.filter((a) => key(a) === plan.ci);
      assert.equal(turns.length, all ? removable.length : 1, `${plan.service}: the CI turn ${plan.ci} is one of its removable ACLs: ${removable.map(key).join(', ')}`);
      await grantAcls(admin, granted);
      const { pipeline: pipelineOverrides, ...rest } = plan.config;
      const config = daemonConfig(c, n, c.eoswatchKafka({ user: 'least' }), rest);
      Object.assign(config.pipeline as object, { restartStrategy: { type: 'fixed-delay', delay: '2s' } }, pipelineOverrides ?? {});
      const p = new PipelineProcess(config);
      const url = await p.url;
      await until(`${plan.service} healthy under only its ACLs`, () => plan.healthy(p), 90_000, { process: p });
      for (const a of turns) {
        const what = key(a);
        const restartsBefore = (await p.metric('eos_service_restarts_total', { service: plan.label })) ?? 0;
        const t0 = Date.now();
        assert.equal(await revokeAcls(admin, [a]), 1, `revoked ${what}`);
        // A refusal comes with work: records for the pipeline to process (its source is idle by now).
        if (plan.service === 'pipeline') await produceAsAdmin(c, n.source, P, 30, 10_000 + results.length * 100);
        // Only a send of a bad record writes to the dead-letter topic: one goes in.
        if (a.name === n.dlq) {
          const bad = (await c.kafka()).producer();
          await bad.connect();
          await bad.send({ topic: n.source, messages: [{ value: 'not json: dead-lettered' }] });
          await bad.disconnect();
        }
        const labels = { service: plan.label, operation: a.operation, resource: what.slice(what.indexOf(' on ') + 4) };
        await until(`${plan.service} naming ${what}`, async () => (await p.metric('eos_permission_missing', labels)) === 1, 90_000, { process: p });
        const ready = await until(`/readyz naming ${what}`, async () => {
          const r = await getJson(`${url}/readyz`);
          return new RegExp(`permission missing: [^"]*${what.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).test(r.text) && r;
        }, 30_000, { process: p });
        const named = Date.now() - t0;
        assert.equal(await p.metric('eos_service_run_success', { service: 'kafka-health', task: 'probe' }), 1, 'the health probe keeps working');
        if (plan.service === 'canary') assert.equal(await p.metric('eos_pipeline_up', { engine: 'eoswatch' }), 1, `the pipeline keeps running beside the canary\n${p.tail(30)}`);
        assert.equal(p.child.exitCode, null, 'the daemon stays up');
        const restarts = ((await p.metric('eos_service_restarts_total', { service: plan.label })) ?? 0) - restartsBefore;
        assert.ok(restarts <= 2 + (Date.now() - t0) / 2000, `${plan.service} restarted ${restarts} times in ${Date.now() - t0} ms: no faster than its 2 s delay`);
        await grantAcls(admin, [a]);
        const t1 = Date.now();
        await until(`${plan.service} back after ${what} was granted again`, async () => (await p.metric('eos_permission_missing', labels)) === undefined && (await plan.healthy(p)), 90_000, { process: p });
        results.push(`${plan.service}: ${what} named in ${(named / 1000).toFixed(1)} s, recovered in ${((Date.now() - t1) / 1000).toFixed(1)} s${ready.status === 503 ? ` (not ready: ${((ready.body as { notReady: string[] }).notReady ?? []).map((x) => x.slice(0, x.indexOf(':'))).join(', ')})` : ''}`);
      }
      assert.doesNotMatch(p.output, /fatal service error/, 'no service ended the daemon');
      await p.kill();
      await revokeAcls(admin, granted);
    }
    process.stdout.write(`# ACLs removed in turn:\n${results.map((r) => `#   ${r}`).join('\n')}\n`);
  });

  // The operator commands under the rows of docs/security.md's second table, as a principal with
  // nothing else; each once more without its row: a clear refusal, exit 1, no secret in the output.
  test('the operator commands under their documented ACLs: topics create, verify produce and check, transactions list; refused without them', async () => {
    const c = h.cluster;
    const id = uniqueName('cmd');
    const topic = `${id}-t`;
    const admin = (await c.kafka()).admin();
    await admin.connect();
    after(() => admin.disconnect());
    const dir = await mkdtemp(join(tmpdir(), 'eoswatch-cmd-'));
    after(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'eoswatch.yaml');
    await writeFile(file, JSON.stringify({ kafka: c.eoswatchKafka({ user: 'least' }), pipeline: { enabled: false } }));
    const password = (JSON.parse(await readFile(`${c.dir}/cluster.json`, 'utf8')) as { security: { passwords: Record<string, string> } }).security.passwords.least!;
    const run = async (...args: string[]) => {
      const r = await promisify(execFile)('node', [...cliCommand(), ...args, '--config', file], { timeout: 120_000 }).then(
        (x) => ({ code: 0, out: `${x.stdout}${x.stderr}`, stdout: x.stdout }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: `${e.stdout}${e.stderr}`, stdout: e.stdout }),
      );
      assert.ok(!r.out.includes(password), `no password in the output of ${args.join(' ')}`);
      return r;
    };

    // topics create: Create and Describe on the topic.
    const refusedCreate = await run('topics', 'create', '--topic', topic, '--partitions', '3', '--allow-unsafe');
    assert.equal(refusedCreate.code, 1, refusedCreate.out);
    assert.match(refusedCreate.out, new RegExp(`cannot create topic ${topic}: .*TOPIC_AUTHORIZATION_FAILED.*permission missing: Create on topic:${topic}`), 'the refusal is named');
    // Create, and Describe: the command waits for the new topic's leaders in the metadata.
    await grantAcls(admin, [row('topic', topic, 'Create'), row('topic', topic, 'Describe')]);
    const created = await run('topics', 'create', '--topic', topic, '--partitions', '3', '--allow-unsafe');
    assert.equal(created.code, 0, created.out);
    assert.equal((await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions.length, 3);

    // verify produce: Write on the topic (idempotent: IdempotentWrite comes with it).
    const refusedProduce = await run('verify', 'produce', '--topic', topic, '--records', '30');
    assert.notEqual(refusedProduce.code, 0, refusedProduce.out);
    assert.match(refusedProduce.out, /authoriz/i);
    await grantAcls(admin, [row('topic', topic, 'Write')]);
    const produced = await run('verify', 'produce', '--topic', topic, '--records', '30');
    assert.equal(produced.code, 0, produced.out);
    const runId = (JSON.parse(produced.out.split('\n').find((l) => l.startsWith('{'))!) as { run: string }).run;

    // verify check: Read (Describe implied) on the topic, no group.
    const check = ['verify', 'check', '--topic', topic, '--run', runId, '--records', '30', '--partitions', '3', '--value-delta', '0', '--timeout', '30s', '--format', 'json'];
    const refusedCheck = await run(...check);
    assert.notEqual(refusedCheck.code, 0, refusedCheck.out);
    await grantAcls(admin, [row('topic', topic, 'Read')]);
    const checked = await run(...check);
    assert.equal(checked.code, 0, checked.out);
    const report = JSON.stringify(JSON.parse(checked.stdout));
    assert.match(report, /"lost":0\b/, `30 records, none lost: ${report.slice(0, 400)}`);
    assert.match(report, /"duplicates":0\b/, 'none twice');

    // transactions list: Describe on the transactional ids; without it the list is empty, silently.
    const tx = (await c.kafka()).producer({ transactionalId: `${id}-tx`, idempotent: true, maxInFlightRequests: 1 });
    await tx.connect();
    const t = await tx.transaction();
    await t.send({ topic, messages: [{ value: 'open' }] });
    try {
      const hidden = await run('transactions', 'list');
      assert.equal(hidden.code, 0, hidden.out);
      assert.ok(!hidden.out.includes(`${id}-tx`), 'without Describe the id is not listed');
      await grantAcls(admin, [row('transactional-id', id, 'Describe', true)]);
      const listed = await run('transactions', 'list');
      assert.equal(listed.code, 0, listed.out);
      assert.match(listed.out, new RegExp(`${id}-tx`), 'with Describe on the prefix the open transaction is listed');
    } finally {
      await t.abort();
      await tx.disconnect();
    }
    await revokeAcls(admin, await listAcls(admin, 'User:least'));
  });

  // The Streams service (Describe on the application's group) and the transactions service
  // (Describe on the ids, Describe and Read on __transaction_state) under exactly their rows of
  // docs/security.md; the group's row removed and granted again.
  test('the Streams and transactions services under their rows: the log read, the group described; the group refused: named, no pipeline-down series, back when granted', async () => {
    const c = h.cluster;
    const n = await setup(c, 'svc');
    const admin = (await c.kafka()).admin();
    await admin.connect();
    after(() => admin.disconnect());
    // A group standing in for a Streams application (the service describes whatever group it is
    // named), and an open transaction of the application's ids as the super user.
    const app = `${n.prefix}-app`;
    const member = (await c.kafka()).consumer({ groupId: app });
    await member.connect();
    await member.subscribe({ topic: n.source, fromBeginning: true });
    await member.run({ eachMessage: async () => undefined });
    after(() => member.disconnect());
    const tx = (await c.kafka()).producer({ transactionalId: `${app}-0`, idempotent: true, maxInFlightRequests: 1 });
    await tx.connect();
    const t = await tx.transaction();
    await t.send({ topic: n.source, messages: [{ value: 'open' }] });
    after(async () => {
      await t.abort().catch(() => undefined);
      await tx.disconnect();
    });
    const groupRow = row('group', app, 'Describe');
    const rows = [groupRow, row('transactional-id', app, 'Describe', true), row('topic', '__transaction_state', 'Describe'), row('topic', '__transaction_state', 'Read')];
    await grantAcls(admin, rows);
    after(() => revokeAcls(admin, rows));
    const p = new PipelineProcess(
      daemonConfig(c, n, c.eoswatchKafka({ user: 'least' }), {
        pipeline: { enabled: false },
        canary: { enabled: false },
        lag: { enabled: false },
        lsoMonitor: { enabled: false, topics: [] },
        audit: { enabled: false },
        streams: { enabled: true, interval: '1s', applications: [{ applicationId: app }] },
        transactions: { enabled: true, interval: '1s' },
      }),
    );
    const url = await p.url;
    await until('the transactions service reading the log', async () => (await p.metric('eos_coordinator_source', { source: 'log' })) === 1, 60_000, { process: p });
    await until('the open transaction of the application seen', async () => (await getJson(`${url}/transactions`)).text.includes(`${app}-0`), 60_000, { process: p });
    await until('the Streams service reading its group', async () => (await p.metric('eos_service_run_success', { service: 'streams', task: 'reading' })) === 1, 60_000, { process: p });
    assert.equal(await p.metric('eos_permission_missing', { service: 'streams', operation: 'Describe', resource: `group:${app}` }), undefined);

    assert.equal(await revokeAcls(admin, [groupRow]), 1);
    await until('the Streams service naming the group it may not describe', async () => (await p.metric('eos_permission_missing', { service: 'streams', operation: 'Describe', resource: `group:${app}` })) === 1, 60_000, { process: p });
    assert.match((await getJson(`${url}/readyz`)).text, new RegExp(`permission missing: Describe on group:${app}`));
    assert.equal(await p.metric('eos_pipeline_up', { engine: 'streams', pipeline: app }), undefined, 'a group it may not describe is no application down');
    assert.equal(await p.metric('eos_coordinator_source', { source: 'log' }), 1, 'the transactions service keeps reading the log');
    await grantAcls(admin, [groupRow]);
    await until('the Streams service back', async () => (await p.metric('eos_permission_missing', { service: 'streams', operation: 'Describe', resource: `group:${app}` })) === undefined && (await p.metric('eos_service_run_success', { service: 'streams', task: 'reading' })) === 1, 60_000, { process: p });
    assert.equal(p.child.exitCode, null);
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
    await until('the transactions service polling for want of a permission', async () => (await p.metric('eos_coordinator_source', { source: 'poll' })) === 1 && ((await p.metric('eos_service_errors_total', { service: 'transactions', task: 'pass', what: 'log', kind: 'permission' })) ?? 0) >= 1, 60_000, { process: p });
    assert.equal(await p.metric('eos_coordinator_up'), 1, 'the poll reads the coordinators');
    await until('the hidden group named', async () => (await p.metric('eos_lag_permission_denied', { resource: `group:${hidden}` })) === 1, 60_000, { process: p });
    assert.equal(await p.metric('eos_lag_permission_denied', { resource: `group:${n.group}` }), undefined, 'the group it may describe is not named');
    const ready = await until('/readyz with both details', async () => {
      const r = await getJson(`${url}/readyz`);
      return r.status === 200 && /no read permission on __transaction_state/.test(r.text) && /permission missing: Describe on group:/.test(r.text) && r;
    }, 30_000, { process: p });
    assert.match(ready.text, new RegExp(`Describe on group:${hidden}`));
    assert.match(p.output, /cannot read __transaction_state \(no Describe\/Read ACL on it\): polling/);
    assert.equal(p.child.exitCode, null, 'the daemon stays up');
    await p.kill();
  });

  test('npm run kafka -- acl grant|list|revoke on the running cluster, as its super user; no password in the output', async () => {
    const c = h.cluster;
    const cli = async (...args: string[]) => (await promisify(execFile)('node', ['--import', 'tsx', 'harness/localcluster/cli.ts', ...args, '--dir', c.dir], { timeout: 60_000 })).stdout;
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
    await until('eos_kafka_up 0', async () => (await p.metric('eos_kafka_up')) === 0, 60_000, { process: p });
    await p.waitFor(/SASL SCRAM SHA512 authentication failed|Authentication failed/i, 30_000);
    // Polled: the log line comes from inside the first probe, whose run is measured when it ends.
    await p.waitMetric('eos_service_runs_total', { service: 'kafka-health', task: 'probe', result: 'failed' }, 2, 30_000);
    assert.equal(await p.metric('eos_service_run_success', { service: 'kafka-health', task: 'probe' }), 0, 'the probe\'s runs fail');
    assert.equal(await p.metric('eos_service_runs_total', { service: 'kafka-health', task: 'probe', result: 'ok' }), 0);
    await p.waitFor(/Kafka cluster unreachable/, 30_000);
    await holds('one warning while the error stays the same', () => p.output.match(/Kafka cluster unreachable/g)?.length === 1, 4000, { process: p });
    const refusals = p.output.split('\n').filter((l) => /authentication failed/i.test(l));
    assert.ok(refusals.length <= 4, `kafkajs' refusals collapsed:\n${refusals.join('\n')}`);
    const bodies = [p.output, (await getJson(`${url}/readyz`)).text, await (await fetch(`${url}/audit`)).text(), await (await fetch(`${url}/metrics`)).text()];
    for (const b of bodies) assert.ok(!b.includes(wrong), 'the password appears nowhere');
    assert.equal(p.child.exitCode, null, 'the daemon stays up');
    await p.kill();
  });

  test('OAUTHBEARER from a token file: User:<sub> under its ACLs (eos_kafka_up 1, the audit reads the cluster); an expired token: eos_kafka_up 0, one clear error, the token nowhere; the file rotated: back without a restart', async () => {
    const c = h.cluster;
    const n = await setup(c, 'oauth');
    const admin = (await c.kafka()).admin();
    await admin.connect();
    after(() => admin.disconnect());
    const dir = await mkdtemp(join(tmpdir(), 'eoswatch-oauth-'));
    after(() => rm(dir, { recursive: true, force: true }));
    // A principal that exists only in the token: no SCRAM user, no certificate.
    const sub = uniqueName('oauth');
    await grantAcls(admin, aclsFor(`User:${sub}`, n, ['health', 'audit']));
    const good = unsecuredJwt(sub, Math.floor(Date.now() / 1000) + 3600);
    await writeFile(join(dir, 'good'), `${good}\n`);
    const own = c.eoswatchKafka({ user: 'eoswatch' }) as { brokers: string[]; ssl: Record<string, unknown> };
    const oauth = (file: string) => ({ brokers: own.brokers, ssl: own.ssl, sasl: { mechanism: 'oauthbearer', tokenFile: join(dir, file) } });
    const quiet = { pipeline: { enabled: false }, canary: { enabled: false }, lsoMonitor: { enabled: false, topics: [] }, lag: { enabled: false } };
    const p = new PipelineProcess(daemonConfig(c, n, oauth('good'), { ...quiet, audit: { schedule: '*/2 * * * * *', topics: [n.source, n.sink] } }));
    const url = await p.url;
    await until('eos_kafka_up 1', async () => (await p.metric('eos_kafka_up')) === 1, 60_000, { process: p });
    // Deny-by-default: the cluster source reads broker configs only with the DescribeConfigs granted to User:<sub>.
    await until('the cluster source read as User:<sub>', async () => {
      const a = (await getJson(`${url}/audit`)).body as { sources?: { name: string; ok: boolean }[] };
      return a.sources?.find((s) => s.name === 'cluster')?.ok;
    }, 60_000, { process: p });
    const goodBodies = [p.output, (await getJson(`${url}/readyz`)).text, await (await fetch(`${url}/audit`)).text(), await (await fetch(`${url}/metrics`)).text()];
    for (const b of goodBodies) assert.ok(!b.includes(good.split('.')[1]!), 'the token appears nowhere');
    await p.kill();

    const expired = unsecuredJwt(sub, Math.floor(Date.now() / 1000) - 600);
    await writeFile(join(dir, 'expired'), expired);
    const q = new PipelineProcess(daemonConfig(c, n, oauth('expired'), { ...quiet, audit: { enabled: false } }));
    const qurl = await q.url;
    await until('eos_kafka_up 0', async () => (await q.metric('eos_kafka_up')) === 0, 60_000, { process: q });
    await q.waitFor(/the token in \S+expired \(kafka\.sasl\.tokenFile\) expired at /, 30_000);
    await q.waitFor(/Kafka cluster unreachable/, 30_000);
    await holds('one warning while the error stays the same', () => q.output.match(/Kafka cluster unreachable/g)?.length === 1, 4000, { process: q });
    // A probe a second: without collapsing, kafkajs alone would have logged it at every one.
    assert.ok(q.output.split('\n').filter((l) => /expired at/.test(l)).length <= 3, `the refusal said once by eoswatch, once (a minute) by kafkajs\n${q.tail(40)}`);
    const bodies = [q.output, (await getJson(`${qurl}/readyz`)).text, await (await fetch(`${qurl}/metrics`)).text()];
    for (const b of bodies) assert.ok(!b.includes(expired.split('.')[1]!), 'the token appears nowhere');
    assert.match(bodies[1]!, /expired at/, '/readyz says why');
    assert.equal(q.child.exitCode, null, 'the daemon stays up');
    // Rotation: whatever keeps the file fresh writes a new token; the next connection uses it, no restart.
    const rotated = unsecuredJwt(sub, Math.floor(Date.now() / 1000) + 3600);
    await writeFile(join(dir, 'expired'), `${rotated}\n`);
    await until('eos_kafka_up 1 with the rotated token', async () => (await q.metric('eos_kafka_up')) === 1, 60_000, { process: q });
    await until('/readyz no longer saying the token expired', async () => !/expired at/.test((await getJson(`${qurl}/readyz`)).text), 30_000, { process: q });
    assert.ok(!q.output.includes(rotated.split('.')[1]!), 'the rotated token appears nowhere');
    assert.match(q.output, /Kafka cluster reachable again|reachable again/i, 'the recovery is said');
    await q.kill();
  });

  test('PLAIN over TLS: eos_kafka_up 1, the audit reads the cluster as User:eoswatch', async () => {
    const c = h.cluster;
    const n = await setup(c, 'plain');
    const admin = (await c.kafka()).admin();
    await admin.connect();
    after(() => admin.disconnect());
    await grantAcls(admin, aclsFor('User:eoswatch', n, ['health', 'audit']));
    const p = new PipelineProcess(
      daemonConfig(c, n, c.eoswatchKafka({ user: 'eoswatch', mechanism: 'plain' }), {
        pipeline: { enabled: false },
        canary: { enabled: false },
        lsoMonitor: { enabled: false, topics: [] },
        lag: { enabled: false },
        audit: { schedule: '*/2 * * * * *', topics: [n.source, n.sink] },
      }),
    );
    const url = await p.url;
    await until('eos_kafka_up 1', async () => (await p.metric('eos_kafka_up')) === 1, 60_000, { process: p });
    await until('the cluster source read', async () => ((await getJson(`${url}/audit`)).body as { sources?: { name: string; ok: boolean }[] }).sources?.find((s) => s.name === 'cluster')?.ok, 60_000, { process: p });
    await p.kill();
  });

  test('the audit from the security side: User:* may write a watched prefix and read __transaction_state (findings name them); without Describe on the cluster, the gap is a finding, the source ok', async () => {
    const c = h.cluster;
    const n = await setup(c, 'aclaudit');
    const admin = (await c.kafka()).admin();
    await admin.connect();
    after(() => admin.disconnect());
    const wild = [
      { principal: 'User:*', resource: 'transactional-id' as const, name: n.prefix, prefixed: true, operation: 'Write' as const },
      { principal: 'User:*', resource: 'topic' as const, name: '__transaction_state', prefixed: false, operation: 'Read' as const },
    ];
    await grantAcls(admin, [...wild, { principal: 'User:eoswatch', resource: 'transactional-id', name: `${n.prefix}-0`, prefixed: false, operation: 'Write' }]);
    type Audit = { sources: { name: string; ok: boolean; error?: string }[]; findings: { check: string; target: string; passed: boolean; observed: string }[] };
    const extra = {
      pipeline: { enabled: false },
      canary: { enabled: false },
      lsoMonitor: { enabled: false, topics: [] },
      lag: { enabled: false },
      flink: { transactionalIdPrefixes: [{ job: 'enrich', prefix: n.prefix }] },
      audit: { schedule: '*/2 * * * * *', topics: [n.source] },
    };
    // As the super user: DescribeAcls answers.
    const p = new PipelineProcess(daemonConfig(c, n, c.eoswatchKafka(), extra));
    const url = await p.url;
    const a = await until('the acl findings', async () => {
      const r = (await getJson(`${url}/audit`)).body as Audit;
      return r.findings?.some((f) => f.check === 'acl.transactional-id-writers') && r;
    }, 60_000, { process: p });
    const writers = a.findings.find((f) => f.check === 'acl.transactional-id-writers' && f.target === `acl:transactional-id:${n.prefix}`)!;
    assert.equal(writers.passed, false, writers.observed);
    assert.match(writers.observed, new RegExp(`User:\\* \\(prefixed ${n.prefix}\\*\\)`));
    assert.match(writers.observed, new RegExp(`User:eoswatch \\(literal ${n.prefix}-0\\)`));
    assert.match(writers.observed, /can fence the application/);
    const txnLog = a.findings.find((f) => f.check === 'acl.internal-topics-readable' && f.target === 'topic:__transaction_state')!;
    assert.equal(txnLog.passed, false, txnLog.observed);
    assert.equal(a.findings.find((f) => f.check === 'acl.internal-topics-readable' && f.target === 'topic:__consumer_offsets')?.passed, true);
    await p.kill();

    // As User:eoswatch with the audit's documented ACLs, no Describe on the cluster: a permission gap, not a failed source.
    await grantAcls(admin, aclsFor('User:eoswatch', n, ['health', 'audit']));
    const q = new PipelineProcess(daemonConfig(c, n, c.eoswatchKafka({ user: 'eoswatch' }), extra));
    const qurl = await q.url;
    const b = await until('the acl gap', async () => {
      const r = (await getJson(`${qurl}/audit`)).body as Audit;
      return r.findings?.some((f) => f.check === 'acl.transactional-id-writers') && r;
    }, 60_000, { process: q });
    const gap = b.findings.find((f) => f.check === 'acl.transactional-id-writers')!;
    assert.equal(gap.passed, false);
    assert.match(gap.observed, /^DescribeAcls refused \(CLUSTER_AUTHORIZATION_FAILED\)/);
    assert.equal(b.sources.find((s) => s.name === 'cluster')?.ok, true, 'the cluster source itself is fine');
    assert.equal(b.findings.filter((f) => f.check === 'acl.internal-topics-readable').length, 0);
    await q.kill();
    assert.equal(await revokeAcls(admin, wild), 2, 'the wildcards gone for the cases after this one');
  });

  test('an untrusted CA: one clear certificate error, eos_kafka_up 0', async () => {
    const c = h.cluster;
    const n = await setup(c, 'badca');
    const pki = await makeTestPki();
    after(() => rm(pki.dir, { recursive: true, force: true }));
    const own = c.eoswatchKafka({ user: 'eoswatch' }) as { ssl: Record<string, unknown> };
    const kafka = { ...own, ssl: { ...own.ssl, caFile: `${pki.dir}/${pki.files.ca}` } };
    const p = new PipelineProcess(daemonConfig(c, n, kafka, { pipeline: { enabled: false }, canary: { enabled: false }, lsoMonitor: { enabled: false, topics: [] }, lag: { enabled: false }, audit: { enabled: false } }));
    await until('eos_kafka_up 0', async () => (await p.metric('eos_kafka_up')) === 0, 60_000, { process: p });
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
    await until('/readyz 200', async () => (await fetch(`${url}/readyz`)).status === 200, 60_000, { process: p });
    await p.kill();
    const own = c.eoswatchKafka({ user: 'eoswatch' }) as { ssl: { caFile: string } };
    const q = new PipelineProcess(daemonConfig(c, n, { brokers: c.brokers, ssl: { enabled: true, caFile: own.ssl.caFile } }, { pipeline: { enabled: false }, canary: { enabled: false }, lsoMonitor: { enabled: false, topics: [] }, lag: { enabled: false }, audit: { enabled: false } }));
    await until('eos_kafka_up 0 without a client certificate', async () => (await q.metric('eos_kafka_up')) === 0, 60_000, { process: q });
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
    await until('eos_kafka_up 1', async () => (await p.metric('eos_kafka_up')) === 1, 60_000, { process: p });
    const audit = await until('the cluster source read', async () => {
      const a = (await getJson(`${url}/audit`)).body as { sources?: { name: string; ok: boolean; error?: string }[] };
      return a.sources?.find((s) => s.name === 'cluster')?.ok && a;
    }, 60_000, { process: p });
    assert.ok(audit.sources!.length > 0);
    await p.kill();
  });

  test('an expired client certificate: eos_kafka_up 0, one clear warning naming the file, no key or password in the output, the daemon up', async () => {
    const c = h.cluster;
    const n = await setup(c, 'expcert');
    const expired = await issueExpiredCertificate(c.security!, 'eoswatch');
    const own = c.eoswatchKafka({ user: 'eoswatch', mechanism: 'scram-sha-256' }) as { ssl: Record<string, unknown>; sasl: { password: string } };
    const kafka = { ...own, ssl: { ...own.ssl, certFile: expired.certFile } };
    const p = new PipelineProcess(daemonConfig(c, n, kafka, { pipeline: { enabled: false }, canary: { enabled: false }, lsoMonitor: { enabled: false, topics: [] }, lag: { enabled: false }, audit: { enabled: false } }));
    const url = await p.url;
    await until('eos_kafka_up 0', async () => (await p.metric('eos_kafka_up')) === 0, 60_000, { process: p });
    await p.waitFor(/the client certificate \S+-expired\.crt \(kafka\.ssl\.certFile\) expired at 2020-02-01T00:00:00\.000Z/, 30_000);
    await p.waitFor(/Kafka cluster unreachable/, 30_000);
    const count = (re: RegExp) => p.output.match(re)?.length ?? 0;
    await holds('one warning about the certificate and one unreachable warning while the error stays the same', () => count(/\(kafka\.ssl\.certFile\) expired at/g) === 1 && count(/Kafka cluster unreachable/g) === 1, 4000, { process: p });
    const key = await readFile(expired.keyFile, 'utf8');
    const bodies = [p.output, (await getJson(`${url}/readyz`)).text, await (await fetch(`${url}/metrics`)).text()];
    for (const b of bodies) {
      assert.ok(!b.includes(own.sasl.password), 'no password');
      assert.ok(!b.includes(key.split('\n')[1]!), 'no key material');
    }
    assert.equal(p.child.exitCode, null, 'the daemon stays up');
    await p.kill();
  });
});
