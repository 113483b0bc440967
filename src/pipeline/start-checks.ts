// What the pipeline checks before its consumer joins the group: the source, sink and dead-letter
// topics exist (eoswatch never creates them), and every source partition has a committed offset
// in pipeline.groupId, or pipeline.startFrom says where to start it.
import type { Admin } from 'kafkajs';
import type { PipelineConfig } from '../config/types.js';
import { EosError, ErrorCodes } from '../errors.js';
import { fetchCommittedOffsets } from '../kafka/offsets.js';
import type { Logger } from '../log.js';

/**
 * The pipeline refuses to start on purpose (no committed offset and startFrom none): with
 * onFailure exit the process exits; with keep-serving the start is retried (an operator may
 * commit offsets meanwhile).
 */
export class StartRefused extends EosError {
  constructor(message: string) {
    super(ErrorCodes.SERVICE_START_FAILED, message);
  }
}

/** Throws when a topic is missing or (startFrom none) a partition has no committed offset; `check` (a stop meanwhile) is asked after the offsets are read. */
export async function checkTopicsAndOffsets(admin: Admin, c: PipelineConfig, dlqTopic: string, logger: Logger, check: () => void): Promise<{ sinkPartitions: number; dlqPartitions: number }> {
  const meta = await admin.fetchTopicMetadata({ topics: [] });
  const partitionsOf = (topic: string): number => meta.topics.find((t) => t.name === topic)?.partitions.length ?? 0;
  const missing = [c.sourceTopic, c.sinkTopic, dlqTopic].filter((t) => partitionsOf(t) === 0);
  if (missing.length) {
    throw new EosError(ErrorCodes.SERVICE_START_FAILED, `pipeline: topic${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not found; create ${missing.length > 1 ? 'them' : 'it'} first (eoswatch never auto-creates topics)`);
  }

  const committed = await fetchCommittedOffsets(admin, c.groupId, c.sourceTopic);
  check();
  const without = [...committed.entries()].filter(([, o]) => o === null).map(([p]) => p);
  if (without.length && c.startFrom === 'none') {
    throw new StartRefused(
      `pipeline: consumer group "${c.groupId}" has no committed offset for ${c.sourceTopic} partition${without.length > 1 ? 's' : ''} ${without.join(', ')}; ` +
        `refusing to start (auto.offset.reset=none). To bootstrap, set pipeline.startFrom: earliest (or latest) for one run, ` +
        `or commit offsets with kafka-consumer-groups.sh --group ${c.groupId} --topic ${c.sourceTopic} --reset-offsets --to-earliest --execute`,
    );
  }
  if (without.length) {
    logger.warn({ partitions: without, startFrom: c.startFrom }, `no committed offset for some partitions: starting them from ${c.startFrom} (pipeline.startFrom)`);
  }
  return { sinkPartitions: partitionsOf(c.sinkTopic), dlqPartitions: partitionsOf(dlqTopic) };
}
