// Harness helpers for a secured local cluster (ClusterOptions.security): topics, seed records,
// "caught up" and the exactly-once check of a sink, all as the cluster's super user (the plain
// helpers of ./index.js connect without TLS or SASL). The sink is read by the verifier's reader
// (src/verify/reader.ts), never by the pipeline's code.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LocalCluster } from '../../harness/localcluster/cluster.js';
import { ensureTopics } from '../../src/kafka/admin.js';
import { readTopic } from '../../src/verify/reader.js';
import type { SentRecord } from './seed.js';
import { waitGroupCaughtUp } from './pipeline.js';

export async function createTopicsAsAdmin(c: LocalCluster, topics: string[], partitions: number): Promise<void> {
  const admin = (await c.kafka()).admin();
  await admin.connect();
  try {
    await ensureTopics(admin, topics.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: c.nodes.length >= 3 ? 3 : 1 })));
  } finally {
    await admin.disconnect();
  }
}

export async function produceAsAdmin(c: LocalCluster, topic: string, partitions: number, count: number, startValue = 0): Promise<SentRecord[]> {
  const producer = (await c.kafka()).producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  await producer.connect();
  const sent: SentRecord[] = [];
  try {
    const messages = [];
    for (let j = 0; j < count; j++) {
      const value = startValue + j;
      const r: SentRecord = { id: randomUUID(), value, partition: value % partitions };
      sent.push(r);
      messages.push({ key: r.id, partition: r.partition, value: JSON.stringify({ id: r.id, ts: Date.now(), value }) });
    }
    await producer.send({ topic, acks: -1, messages });
  } finally {
    await producer.disconnect();
  }
  return sent;
}

/**
 * Polls until the group's committed offsets reach the ends every partition of topic had at the
 * call (what was written before it; a canary writing on into the topic does not move the target).
 */
export async function waitCaughtUpAsAdmin(c: LocalCluster, groupId: string, topic: string, timeoutMs = 90_000, context: () => string = () => ''): Promise<void> {
  const admin = (await c.kafka()).admin();
  await admin.connect();
  try {
    await waitGroupCaughtUp(admin, groupId, topic, timeoutMs, 'first-read', context);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Every sent id exactly once in the sink (read_committed, as the super user) with value + 1.
 * `canaryId`: the daemon's canary writes into the same source, so its records reach the sink too;
 * they are the canary's to judge (eos_canary_records_total), left out here.
 */
export async function assertSinkExactlyOnce(c: LocalCluster, sink: string, sent: SentRecord[], context = '', canaryId?: string): Promise<void> {
  const seen = new Map<string, number>();
  let wrongValue = 0;
  let unexpected = 0;
  let canary = 0;
  const expected = new Map(sent.map((r) => [r.id, r]));
  await readTopic(await c.kafka(), sink, {
    onRecord: (_partition, message) => {
      const rec = JSON.parse(String(message.value)) as { id: string; value: number; run?: unknown };
      if (canaryId !== undefined && typeof rec.run === 'string' && rec.run.startsWith(`canary.${canaryId}.`)) {
        canary++;
        return;
      }
      seen.set(rec.id, (seen.get(rec.id) ?? 0) + 1);
      const exp = expected.get(rec.id);
      if (!exp) unexpected++;
      else if (rec.value !== exp.value + 1) wrongValue++;
    },
  });
  const duplicates = [...seen.values()].reduce((n, k) => n + Math.max(0, k - 1), 0);
  const lost = sent.filter((r) => !seen.has(r.id)).length;
  assert.deepEqual({ duplicates, lost, unexpected, wrongValue }, { duplicates: 0, lost: 0, unexpected: 0, wrongValue: 0 }, `sink ${sink}: every sent id exactly once with value + 1 (${canary} canary records left out)\n${context}`);
}
