// Whether the principal may describe consumer groups, asked of one broker directly: FindCoordinator
// for a group needs Describe on it, and the broker answers GROUP_AUTHORIZATION_FAILED without it.
// kafkajs' own coordinator lookup (every admin call on a group) tries each broker and swallows that
// answer into "Failed to find group coordinator" after its retries, and ListGroups leaves such a
// group out without an error: neither tells a refusal from an absence. Built on kafkajs' cluster
// factory (createCluster in offsets.ts), kafkajs 2.2.4's inner API.
import type { Kafka } from 'kafkajs';
import { createCluster } from './offsets.js';

interface GroupBroker {
  findGroupCoordinator(req: { groupId: string; coordinatorType: number }): Promise<unknown>;
}

interface GroupCluster {
  connect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  disconnect(): Promise<void>;
  findControllerBroker(): Promise<GroupBroker>;
}

const COORDINATOR_TYPE_GROUP = 0;

/** The groups among `groupIds` the principal may not describe (GROUP_AUTHORIZATION_FAILED); other answers and errors are no refusal. */
export async function refusedGroups(kafka: Kafka, groupIds: readonly string[]): Promise<Set<string>> {
  const refused = new Set<string>();
  if (!groupIds.length) return refused;
  const cluster = createCluster<GroupCluster>(kafka, 0);
  await cluster.connect();
  try {
    await cluster.refreshMetadata();
    const broker = await cluster.findControllerBroker();
    for (const groupId of groupIds) {
      try {
        await broker.findGroupCoordinator({ groupId, coordinatorType: COORDINATOR_TYPE_GROUP });
      } catch (err) {
        if ((err as { type?: unknown }).type === 'GROUP_AUTHORIZATION_FAILED') refused.add(groupId);
      }
    }
    return refused;
  } finally {
    await cluster.disconnect();
  }
}
