// The audit against real clusters: a 1-node cluster (every replication factor 1) yields the
// critical findings, the standard 3-node cluster none of them, 3.9 and 4.x both report the
// record format correctly, and a broker override made through the harness is detected.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CLI, createTopic, kafkaFor, uniqueName, useCluster } from '../harness/index.js';
import { until } from '../harness/wait.js';
import type { Finding } from '../../src/audit/types.js';

const execFileP = promisify(execFile);

interface Report {
  findings: Finding[];
  summary: { critical: number; warning: number };
  sources: { name: string; ok: boolean; error?: string }[];
  cluster?: { version?: string; brokers: number };
}

async function audit(args: string[]): Promise<{ code: number; report: Report; stdout: string }> {
  let stdout = '';
  let code = 0;
  try {
    ({ stdout } = await execFileP('node', [...CLI, 'audit', '--format', 'json', ...args]));
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    code = e.code;
    stdout = e.stdout;
    if (!stdout.startsWith('{')) throw new Error(`audit failed (${code}): ${e.stderr}`);
  }
  return { code, report: JSON.parse(stdout) as Report, stdout };
}

function failed(r: Report, check: string): Finding[] {
  return r.findings.filter((f) => f.check === check && !f.passed);
}

const RF1_CRITICAL = [
  'broker.transaction-state-log-replication-factor',
  'broker.transaction-state-log-min-isr',
  'broker.offsets-topic-replication-factor',
  'topic.replication-factor',
  'topic.min-insync-replicas',
];

describe('audit: 1-node Kafka 4.x cluster (replication factor 1 everywhere)', () => {
  const h = useCluster({ nodes: 1 });

  test('yields the critical findings and exit code 3', async () => {
    const topic = uniqueName('audit-rf1');
    await createTopic(h.cluster.brokers, topic, 3, 1);
    const { code, report } = await audit(['--bootstrap-server', h.cluster.bootstrapServers, '--topic', topic]);
    assert.equal(code, 3);
    for (const check of RF1_CRITICAL) assert.ok(failed(report, check).length > 0, `${check} should fail`);
    const rf = failed(report, 'broker.transaction-state-log-replication-factor')[0]!;
    assert.equal(rf.severity, 'critical');
    assert.equal(rf.target, 'broker:1');
    assert.match(rf.observed, /transaction\.state\.log\.replication\.factor=1 \(server\.properties\)/);
    assert.equal(rf.expected, '>= 3');
    assert.ok(rf.rationale.length > 20 && rf.remediation.length > 10);
    const fmt = report.findings.find((f) => f.check === 'broker.message-format')!;
    assert.equal(fmt.passed, true);
    assert.match(fmt.observed, /Kafka 4\.x: log\.message\.format\.version no longer exists/);
    assert.equal(report.cluster?.version, '4.x');
    assert.ok(report.sources.every((s) => s.ok));
  });
});

describe('audit: standard 3-node Kafka 4.x cluster', () => {
  const h = useCluster({ nodes: 3 });

  test('none of the critical findings; exit code 0', async () => {
    const topic = uniqueName('audit-rf3');
    await createTopic(h.cluster.brokers, topic, 3, 3);
    // The first transaction creates __transaction_state.
    const producer = kafkaFor(h.cluster.brokers).producer({ transactionalId: uniqueName('audit-txn'), idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const txn = await producer.transaction();
    await txn.send({ topic, messages: [{ value: 'x' }] });
    await txn.commit();
    await producer.disconnect();
    const admin = kafkaFor(h.cluster.brokers).admin();
    await admin.connect();
    try {
      await until('__transaction_state created', async () => (await admin.listTopics()).includes('__transaction_state'), 10_000, { intervalMs: 100 });
    } finally {
      await admin.disconnect();
    }
    const { code, report } = await audit(['--bootstrap-server', h.cluster.bootstrapServers, '--topic', topic]);
    const critical = report.findings.filter((f) => !f.passed && f.severity === 'critical');
    assert.deepEqual(critical, []);
    assert.equal(code, 0);
    assert.equal(report.cluster?.brokers, 3);
    const isr = report.findings.find((f) => f.check === 'live.transaction-state-isr');
    assert.equal(isr?.passed, true);
  });

  test('a node down makes __transaction_state partitions under-replicated, which the live checks see', async () => {
    const topic = uniqueName('audit-live');
    await createTopic(h.cluster.brokers, topic, 3, 3);
    await h.cluster.kill(3);
    try {
      await h.cluster.waitFenced(3);
      const { report } = await audit(['--bootstrap-server', h.cluster.bootstrapServers, '--topic', topic]);
      const under = failed(report, 'live.under-replicated');
      assert.equal(under.length, 1);
      assert.match(under[0]!.observed, /under-replicated partitions: .*isr 2\/3/);
    } finally {
      await h.cluster.start(3);
    }
  });
});

describe('audit: 1-node Kafka 3.9 cluster with a broker override', () => {
  const h = useCluster({ nodes: 1, version: '3.9.1', overrides: { 'unclean.leader.election.enable': 'true' } });

  test('reports the record format from inter.broker.protocol.version and detects the override', async () => {
    const { code, report } = await audit(['--bootstrap-server', h.cluster.bootstrapServers]);
    assert.equal(code, 3);
    const fmt = report.findings.find((f) => f.check === 'broker.message-format')!;
    assert.equal(fmt.passed, true);
    assert.match(fmt.observed, /inter\.broker\.protocol\.version=3\.9.* is 3\.0 or newer, so log\.message\.format\.version=.* is ignored/);
    assert.equal(report.cluster?.version, '3.9');
    const unclean = failed(report, 'broker.unclean-leader-election');
    assert.equal(unclean.length, 1);
    assert.match(unclean[0]!.observed, /unclean\.leader\.election\.enable=true \(server\.properties\)/);
  });
});
