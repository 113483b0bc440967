// Scenarios shared by the cluster integration files (one file per Kafka version/topology).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Registry } from 'prom-client';
import { createKafka } from '../../src/kafka/client.js';
import { KafkaHealthService } from '../../src/kafka/health.js';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { createTopic, kafkaFor, readAll, uniqueName, type LocalCluster } from '../harness/index.js';
import { parsePrometheusText, sampleValue } from '../harness/promtext.js';

/** Commits one transaction, aborts another, and checks what read_committed and read_uncommitted see. */
export async function commitAndAbort(cluster: LocalCluster, label: string): Promise<void> {
  const topic = uniqueName(`tx-${label}`);
  await createTopic(cluster.brokers, topic, 3, Math.min(3, cluster.nodes.length));
  const producer = kafkaFor(cluster.brokers).producer({ transactionalId: uniqueName('txid'), idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    const committed = Array.from({ length: 5 }, (_, i) => `${label}-committed-${i}`);
    const aborted = Array.from({ length: 5 }, (_, i) => `${label}-aborted-${i}`);
    const t1 = await producer.transaction();
    await t1.send({ topic, messages: committed.map((value, i) => ({ key: String(i), value })) });
    await t1.commit();
    const t2 = await producer.transaction();
    await t2.send({ topic, messages: aborted.map((value, i) => ({ key: String(i), value })) });
    await t2.abort();

    const records = await readAll(cluster.brokers, topic);
    const rc = records.map((r) => String(r.message.value)).sort();
    // Where each record sits, for a failure: a duplicate written twice has two offsets.
    const where = records.map((r) => `${String(r.message.value)}@${r.partition}:${r.message.offset}`).join(', ');
    assert.deepEqual(rc, [...committed].sort(), `read_committed sees exactly the committed records (${where})`);
    const ru = (await readAll(cluster.brokers, topic, { readUncommitted: true })).map((r) => String(r.message.value)).sort();
    assert.deepEqual(ru, [...committed, ...aborted].sort(), 'read_uncommitted also sees the aborted records: the abort wrote data that was hidden');
  } finally {
    await producer.disconnect();
  }
}

/** The health service reports the cluster up with every broker. */
export async function healthReportsUp(cluster: LocalCluster): Promise<void> {
  const registry = new Registry();
  const config = validateConfig({ kafka: { brokers: cluster.brokers } }, 'test', {});
  const logger = createLogger('silent');
  const svc = new KafkaHealthService(createKafka(config.kafka, logger), 60_000, { logger, registry, fatal: () => undefined });
  await svc.start();
  try {
    assert.equal(await svc.probe(), true);
    const m = parsePrometheusText(await registry.metrics());
    assert.equal(sampleValue(m, 'eos_kafka_up'), 1);
    assert.equal(sampleValue(m, 'eos_kafka_brokers'), cluster.nodes.length);
    assert.equal(svc.ready().ready, true);
  } finally {
    await svc.stop();
  }
}

/** pids of live java processes whose command line mentions the cluster directory. */
export function javaProcessesUnder(dir: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', `kafka.Kafka ${dir}`], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}
