// Admin helpers shared by the demo, the tests and the audit.
import { EosError, ErrorCodes } from '../errors.js';
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
      // kafkajs says only "Topic creation errors"; each topic's own error is in `errors`. A topic
      // created meanwhile (another instance) is fine; the others are named with their reason.
      const each = (err as { errors?: { topic?: string; type?: string; message?: string }[] }).errors ?? [];
      const failed = (each.length ? each : [err as { type?: string; message?: string }]).filter((e) => e.type !== 'TOPIC_ALREADY_EXISTS' && !/already exists/i.test(e.message ?? ''));
      if (failed.length) {
        const why = failed.map((e) => {
          const name = (e as { topic?: string }).topic;
          const denied = e.type === 'TOPIC_AUTHORIZATION_FAILED' || e.type === 'CLUSTER_AUTHORIZATION_FAILED' ? `; permission missing: Create on topic:${name ?? '<name>'} (or on the cluster)` : '';
          return `${name ? `topic ${name}: ` : ''}${e.message ?? String(e)}${e.type ? ` (${e.type})` : ''}${denied}`;
        });
        throw new EosError(ErrorCodes.KAFKA_REQUEST_FAILED, `cannot create ${why.join('; ')}`, { cause: err });
      }
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
