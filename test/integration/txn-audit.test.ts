// The audit's coordinator checks against a real cluster, through `eoswatch audit`: a 1-node
// Kafka 4.x cluster whose brokers allow transactions up to 60 min (transaction.max.timeout.ms),
// kafkajs transactional producers with ids in the Kafka Streams naming
// (<application.id>-<process UUID>-<thread>) and different timeouts, one transaction left open.
// The findings come from ListTransactions, DescribeTransactions, __transaction_state,
// DescribeProducers and DescribeConfigs as the `coordinator` source reads them.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import { CLI, createTopic, kafkaFor, uniqueName, useCluster } from '../harness/index.js';
import type { Finding } from '../../src/audit/types.js';

const execFileP = promisify(execFile);

interface Report {
  findings: Finding[];
  sources: { name: string; ok: boolean; error?: string }[];
}

async function audit(args: string[]): Promise<Report> {
  let stdout = '';
  try {
    ({ stdout } = await execFileP('node', [...CLI, 'audit', '--format', 'json', ...args]));
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    stdout = e.stdout;
    if (!stdout.startsWith('{')) throw new Error(`audit failed (${e.code}): ${e.stderr}`);
  }
  return JSON.parse(stdout) as Report;
}

function finding(r: Report, check: string, target: string): Finding {
  const f = r.findings.find((x) => x.check === check && x.target === target);
  assert.ok(f, `no ${check} finding for ${target}; have: ${r.findings.filter((x) => x.check === check).map((x) => x.target).join(', ')}`);
  return f;
}

describe('audit: the transaction coordinator view of a 1-node Kafka 4.x cluster', () => {
  const h = useCluster({ nodes: 1, overrides: { 'transaction.max.timeout.ms': '3600000' } });
  const producers: Producer[] = [];
  after(async () => {
    for (const p of producers) await p.disconnect().catch(() => undefined);
  });

  test('timeouts near the maximum and long, Streams ids grouped, permissions and 2PC clean', async () => {
    const topic = uniqueName('txn-audit');
    await createTopic(h.cluster.brokers, topic, 2, 1);
    const shop = uniqueName('shop');
    const ledger = uniqueName('ledger');
    const kafka = kafkaFor(h.cluster.brokers);
    const start = async (transactionalId: string, transactionTimeout: number, commit: boolean) => {
      const p = kafka.producer({ transactionalId, transactionTimeout, idempotent: true, maxInFlightRequests: 1 });
      producers.push(p);
      await p.connect();
      const txn = await p.transaction();
      await txn.send({ topic, messages: [{ key: transactionalId, value: 'x' }] });
      if (commit) await txn.commit();
    };
    await start(`${shop}-${randomUUID()}-1`, 1_200_000, true);
    await start(`${shop}-${randomUUID()}-1`, 60_000, false); // left open: DescribeProducers is asked for its partition
    await start(`${ledger}-${randomUUID()}-1`, 3_300_000, true);

    const report = await audit(['--bootstrap-server', h.cluster.bootstrapServers, '--topic', topic]);
    const source = report.sources.find((s) => s.name === 'coordinator');
    assert.deepEqual(source && { ok: source.ok, error: source.error }, { ok: true, error: undefined });

    // 55 min is at least 90 % of the brokers' 60 min: one lowered maximum from InitProducerId refused.
    const nearLedger = finding(report, 'coordinator.transaction-timeout-near-max', `coordinator:app:${ledger}`);
    assert.equal(nearLedger.passed, false);
    assert.equal(nearLedger.severity, 'warning');
    assert.equal(nearLedger.source, 'coordinator');
    assert.equal(nearLedger.observed, 'transaction timeout up to 55 min (1 ids) against transaction.max.timeout.ms=60 min (broker 1)');
    const nearShop = finding(report, 'coordinator.transaction-timeout-near-max', `coordinator:app:${shop}`);
    assert.equal(nearShop.passed, true);
    assert.match(nearShop.observed, /^transaction timeout up to 20 min \(2 ids\)/);

    // 20 min and 55 min both hold read_committed consumers longer than Kafka's default 15 min.
    assert.equal(finding(report, 'coordinator.transaction-timeout-long', `coordinator:app:${shop}`).passed, false);
    assert.equal(finding(report, 'coordinator.transaction-timeout-long', `coordinator:app:${ledger}`).passed, false);

    // Two process UUIDs of one Streams-named application, both live: not growing.
    const growing = finding(report, 'coordinator.growing-transactional-ids', `coordinator:app:${shop}`);
    assert.equal(growing.passed, true);
    assert.equal(growing.observed, '2 ids over 2 process UUIDs: 2 live, 0 with no transaction for over 60 min');

    // The log was read: every id's client transaction version is known, the same for all (kafkajs).
    const versions = finding(report, 'coordinator.mixed-client-transaction-versions', `coordinator:app:${shop}`);
    assert.equal(versions.passed, true);
    assert.match(versions.observed, /^client transaction version \d+ on 2 ids$/);

    // No authorizer: every API answered; no 2PC transaction.
    assert.equal(finding(report, 'coordinator.permissions', 'coordinator').passed, true);
    assert.equal(finding(report, 'coordinator.prepared-transactions', 'coordinator').passed, true);
  });
});
