// Admin helpers shared by the demo, the tests and the audit.
import type { Admin, ITopicConfig } from 'kafkajs';
import { pollUntil } from '../runtime/poll-until.js';

/**
 * Creates the topics that do not exist yet and waits until every partition has a leader. On
 * KRaft clusters a new topic reaches the brokers' metadata a little after CreateTopics returns,
 * so kafkajs' own waitForLeaders can fail with UNKNOWN_TOPIC_OR_PARTITION; this polls instead.
 */
export async function ensureTopics(admin: Admin, topics: ITopicConfig[], timeoutMs = 60_000): Promise<void> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((t) => !existing.has(t.topic));
  if (missing.length) {
    try {
      await admin.createTopics({ topics: missing, waitForLeaders: false });
    } catch (err) {
      if (!/already exists/i.test((err as Error).message)) throw err;
    }
  }
  const names = topics.map((t) => t.topic);
  await pollUntil(
    `a leader for every partition of topics ${names.join(', ')}`,
    async () => {
      const meta = await admin.fetchTopicMetadata({ topics: names });
      return topics.every((t) => {
        const m = meta.topics.find((x) => x.name === t.topic);
        return m && m.partitions.length >= (t.numPartitions ?? 1) && m.partitions.every((p) => p.leader >= 0);
      });
    },
    { timeoutMs, intervalMs: 200 },
  );
}
