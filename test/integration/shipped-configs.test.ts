// Every configuration eoswatch ships (the example, the compose and Kubernetes ones, the demo's),
// audited against a healthy 3-node local cluster, has no critical or warning finding: the shipped
// defaults pass their own audit. Topics are made by `eoswatch topics create`, which is tested here
// too (replication from the cluster size, start offsets for a new source topic, refusal on 1 node).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { kafkaFor, uniqueName, useCluster, runEoswatch } from '../harness/index.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { runConfiguredAudit } from '../../src/audit/cli.js';
import { demoConfig } from '../../harness/demo/kafka.js';


const eoswatch = runEoswatch;

/** The config as shipped, pointed at the local cluster (plain listener) instead of its own. */
function atLocal(config: Config, brokers: string[]): Config {
  return { ...config, kafka: { ...config.kafka, brokers, ssl: { ...config.kafka.ssl, enabled: false }, sasl: undefined }, audit: { ...config.audit, cluster: true } };
}

async function failingFindings(config: Config): Promise<string[]> {
  const report = await runConfiguredAudit(config);
  return report.findings.filter((f) => !f.passed && f.severity !== 'info').map((f) => `${f.severity} ${f.check} ${f.target}: ${f.observed}`);
}

describe('shipped configurations pass their own audit on a healthy 3-node cluster', () => {
  const h = useCluster({ nodes: 3 });
  let dir = '';
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('topics create: RF 3 / min ISR 2, the pipeline group at the start of the new source topic, existing topics left alone', async () => {
    const brokers = h.cluster.bootstrapServers;
    const dry = await eoswatch(['topics', 'create', '--config', 'deploy/compose/eoswatch.yaml', '-b', brokers, '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /replication factor 3, min.insync.replicas 2/);
    assert.match(dry.stdout, /orders\s+would create/);
    const admin = kafkaFor(h.cluster.brokers).admin();
    await admin.connect();
    try {
      assert.ok(!(await admin.listTopics()).includes('orders'), '--dry-run created nothing');
      const made = await eoswatch(['topics', 'create', '--config', 'deploy/compose/eoswatch.yaml', '-b', brokers]);
      assert.equal(made.code, 0, made.stderr);
      assert.match(made.stdout, /orders\s+created\s+pipeline source; group eoswatch-pipeline starts at its beginning/);
      const meta = await admin.fetchTopicMetadata({ topics: ['orders', 'orders.enriched', 'orders.enriched.dlq'] });
      for (const t of meta.topics) for (const p of t.partitions) assert.equal(p.replicas.length, 3, `${t.name}-${p.partitionId}`);
      const cfg = await admin.describeConfigs({ resources: [{ type: 2, name: 'orders.enriched', configNames: ['min.insync.replicas'] }], includeSynonyms: false });
      assert.equal(cfg.resources[0]!.configEntries[0]!.configValue, '2');
      const [offsets] = await admin.fetchOffsets({ groupId: 'eoswatch-pipeline', topics: ['orders'] });
      assert.deepEqual(offsets!.partitions.map((p) => p.offset).sort(), Array(6).fill('0'));
      const again = await eoswatch(['topics', 'create', '--config', 'deploy/compose/eoswatch.yaml', '-b', brokers]);
      assert.match(again.stdout, /orders\s+exists/);
      const unsafe = await eoswatch(['topics', 'create', '-b', brokers, '--topic', uniqueName('rf2'), '--replication-factor', '2']);
      assert.equal(unsafe.code, 2);
      assert.match(unsafe.stderr, /refusing .* replication factor 2 .*--allow-unsafe/);
      // The first transaction creates __transaction_state, which the live checks look at.
      const producer = kafkaFor(h.cluster.brokers).producer({ transactionalId: uniqueName('shipped'), idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      const txn = await producer.transaction();
      await txn.send({ topic: 'orders.enriched.dlq', messages: [{ value: 'x' }] });
      await txn.abort();
      await producer.disconnect();
    } finally {
      await admin.disconnect();
    }
  });

  test('config/eoswatch.example.yaml and deploy/compose/eoswatch.yaml', async () => {
    for (const file of ['config/eoswatch.example.yaml', 'deploy/compose/eoswatch.yaml']) {
      assert.deepEqual(await failingFindings(atLocal(await loadConfig(file), h.cluster.brokers)), [], file);
    }
  });

  /**
   * The sidecar's eoswatch.yaml of a Kubernetes ConfigMap file, pointed at the local cluster, and
   * the workload file the pod mounts for the audit (data key `mounted`), written to a temporary
   * directory: returns the config and the path of the written workload file.
   */
  async function fromConfigMap(file: string, mounted: string): Promise<{ config: Config; mountedPath: string }> {
    dir ||= await mkdtemp(join(tmpdir(), 'eoswatch-shipped-'));
    const docs = parseAllDocuments(await readFile(file, 'utf8')).map((d) => d.toJS() as { data: Record<string, string> });
    const sidecarPath = join(dir, `${file.replaceAll('/', '-')}.eoswatch.yaml`);
    const mountedPath = join(dir, `${file.replaceAll('/', '-')}.${mounted}`);
    await writeFile(sidecarPath, docs.find((d) => d.data['eoswatch.yaml'])!.data['eoswatch.yaml']!);
    await writeFile(mountedPath, docs.find((d) => d.data[mounted])!.data[mounted]!);
    process.env.KAFKA_SASL_PASSWORD ??= 'not-used-here';
    return { config: atLocal(await loadConfig(sidecarPath), h.cluster.brokers), mountedPath };
  }

  test('deploy/kubernetes/configmap.yaml, with the workload streams.properties it mounts', async () => {
    const { config, mountedPath } = await fromConfigMap('deploy/kubernetes/configmap.yaml', 'streams.properties');
    assert.deepEqual(config.audit.streamsConfigs, ['/etc/orders-enricher/streams.properties'], 'the mounted path the test replaces');
    assert.deepEqual(await failingFindings({ ...config, audit: { ...config.audit, streamsConfigs: [mountedPath] } }), []);
  });

  test('deploy/kubernetes/flink/configmap.yaml, with the Flink config.yaml it mounts into the sidecar', async () => {
    const { config, mountedPath } = await fromConfigMap('deploy/kubernetes/flink/configmap.yaml', 'config.yaml');
    assert.deepEqual(config.audit.flinkConfigs, ['/opt/flink/conf/config.yaml'], 'the mounted path the test replaces');
    const audited = { ...config, audit: { ...config.audit, flinkConfigs: [mountedPath] } };
    const report = await runConfiguredAudit(audited);
    assert.ok(report.findings.some((f) => f.passed && f.target.includes(mountedPath)), 'the Flink config file was read and checked');
    // The only finding: the live job audit asks the pod's own JobManager (127.0.0.1:8081), which
    // does not run here (test/integration/flink.test.ts audits a running job).
    const failing = await failingFindings(audited);
    assert.equal(failing.length, 1, failing.join('\n'));
    assert.match(failing[0]!, /^warning audit\.source flink-jobs:http:\/\/127\.0\.0\.1:8081: .*ECONNREFUSED/);
  });

  test("the demo's configuration, with its topics made as the demo makes them", async () => {
    const config = demoConfig(h.cluster.brokers, 0);
    const made = await eoswatch(['topics', 'create', '-b', h.cluster.bootstrapServers, ...['demo.orders', 'demo.orders.enriched', 'demo.orders.dlq'].flatMap((t) => ['--topic', t])]);
    assert.equal(made.code, 0, made.stderr);
    assert.deepEqual(await failingFindings(config), []);
  });
});

describe('topics create on a 1-node cluster', () => {
  const h = useCluster({ nodes: 1 });

  test('refuses replication factor 1 unless --allow-unsafe, and says why', async () => {
    const topic = uniqueName('one-node');
    const refused = await eoswatch(['topics', 'create', '-b', h.cluster.bootstrapServers, '--topic', topic]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /replication factor 1 \(exactly-once needs 3, which a cluster of 1 broker cannot hold\)/);
    const made = await eoswatch(['topics', 'create', '-b', h.cluster.bootstrapServers, '--topic', topic, '--allow-unsafe']);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /not exactly-once safe \(allowed by --allow-unsafe\)/);
    const audit = await eoswatch(['audit', '-b', h.cluster.bootstrapServers, '--topic', topic, '--format', 'json']);
    const report = JSON.parse(audit.stdout) as { findings: { check: string; passed: boolean; remediation: string; target: string }[] };
    assert.equal(report.findings.find((f) => f.check === 'cluster.broker-count')?.passed, false, 'the audit says a single broker cannot be exactly-once safe');
    const isr = report.findings.find((f) => f.check === 'topic.min-insync-replicas' && f.target === `topic:${topic}`);
    assert.match(isr!.remediation, /^First raise the replication factor to 3/);
  });
});
