// The pipeline's kafkajs consumer adapter: the read_committed consumer of the source topic in the
// membership group, and everything about it that is kafkajs' own: its configuration, the batches
// it fetches (the offset a fetch was issued from, which kafkajs' typings omit), the batches it
// never passes on (END_BATCH_PROCESS), heartbeats while a batch waits, seeks during its restart,
// the group's assignment, and a consumer of an earlier run that must not come back
// (restartOnFailure), and the group's word on this member (joins and heartbeats accepted or
// refused, reported to a GroupMembership: membership.ts). The pipeline sees only SourceBatch and
// SourceHandlers; what a batch does to a partition task is partition-tasks.ts.
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { PipelineConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { isMembershipRefusal, type GroupMembership } from './membership.js';
import type { BatchRecord, BatchSpan } from './transforms/route.js';

/** The consumer group the instances join to split partitions; offsets are never read from it. */
export function membershipGroup(groupId: string): string {
  return `${groupId}.members`;
}

/** One fetched batch of a source partition, as the pipeline uses it. */
export interface SourceBatch {
  partition: number;
  /** The offset the fetch was issued from (kafkajs' position when it fetched). */
  fetchedOffset: string;
  /** The batch's last offset, control records included. */
  lastOffset: string;
  messages: BatchRecord[];
  /** The group has rebalanced or the consumer was sent elsewhere since the fetch. */
  isStale(): boolean;
}

/** What the consumer tells the pipeline; nothing of a consumer released (stopped, failed) reaches it. */
export interface SourceHandlers {
  /** This consumer joined the group with these partitions of the source topic. */
  assigned(partitions: Set<number>): void;
  /** A fetched batch held only control records (transaction markers) or aborted data. */
  emptyBatch(partition: number, span: BatchSpan): void;
  /** A batch while the consumer runs and the batch is not stale. */
  batch(batch: SourceBatch): Promise<void>;
  /** The consumer crashed and will not restart itself. */
  crashed(message: string): void;
}

export class SourceConsumer {
  private readonly consumer: Consumer;
  /** Released: its events and batches are ignored, and kafkajs never restarts it after a crash. */
  private released = false;

  constructor(
    kafka: Kafka,
    private readonly config: PipelineConfig,
    private readonly logger: Logger,
    private readonly handlers: SourceHandlers,
    private readonly membership: GroupMembership,
  ) {
    const c = config;
    // kafkajs commits offsets on its own in one place (an OFFSET_OUT_OF_RANGE reset commits the
    // default offset), which would overwrite the offsets our transactions commit. So the consumer
    // joins a membership group of its own, and offsets live only in pipeline.groupId, written by
    // the transactions (old-style TxnOffsetCommit needs no membership) and read after fencing.
    const consumer = kafka.consumer({
      groupId: membershipGroup(c.groupId),
      readUncommitted: false,
      sessionTimeout: c.sessionTimeout,
      heartbeatInterval: c.heartbeatInterval,
      rebalanceTimeout: Math.max(c.sessionTimeout, c.checkpoint.timeout + 10_000),
      maxWaitTimeInMs: 250,
      // Throttled (fault-injection runs): small fetches, so that batches are small steps of progress.
      // With whole 1 MiB batches waiting their turn, a coordinator kill left the consumer crashing and
      // re-fetching while batches held their slots, and the pipeline stalled (coordinator-kill chaos);
      // `npm run chaos -- --full-speed` runs faults at default fetch sizes instead, unthrottled.
      ...(c.faultInjection.maxRecordsPerSecond > 0 ? { maxBytesPerPartition: Math.min(16_384, c.maxBytesPerPartition), maxBytes: 65_536 } : { maxBytesPerPartition: c.maxBytesPerPartition }),
      allowAutoTopicCreation: false,
      // A consumer of an earlier run never restarts itself after a crash: it would rejoin the group
      // and hold partitions whose batches nobody processes.
      retry: { retries: 10, restartOnFailure: async () => !this.released },
    });
    this.consumer = consumer;
    // When the group was asked: kafkajs reports a request (with the time it was sent) as its
    // answer arrives, before the answer is acted on; an answer read after a pause is that old.
    const asked = { Heartbeat: -Infinity, SyncGroup: -Infinity };
    consumer.on(consumer.events.REQUEST, ({ payload }) => {
      if (payload.apiName === 'Heartbeat' || payload.apiName === 'SyncGroup') asked[payload.apiName] = payload.sentAt;
    });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      // One left behind by an earlier run (a disconnect during kafkajs' crash-restart delay, after
      // which kafkajs started it again): it must leave, or it keeps partitions nobody processes
      // (found by the soak: 3 such members held 2 of 3 partitions after broker outages).
      if (this.released) {
        this.logger.warn({ groupId: membershipGroup(c.groupId) }, 'a consumer of an earlier run rejoined the group; disconnecting it');
        void consumer.disconnect().catch(() => undefined);
        return;
      }
      this.handlers.assigned(new Set(payload.memberAssignment[c.sourceTopic] ?? []));
      membership.confirmed(asked.SyncGroup);
    });
    consumer.on(consumer.events.HEARTBEAT, () => {
      if (!this.released) membership.confirmed(asked.Heartbeat);
    });
    // kafkajs' own heartbeat or fetch was refused (it rejoins next); a refusal of the heartbeats
    // sent while a batch waits is seen in heartbeating().
    consumer.on(consumer.events.REBALANCING, () => membership.lost());
    // Batches holding only control records (transaction markers) or aborted data never reach
    // eachBatch; the task must still step over them, or its next batch would look like a gap.
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      if (this.released) return;
      if (payload.batchSize !== 0 || payload.topic !== c.sourceTopic) return;
      const first = (payload as { firstOffset?: string | null }).firstOffset;
      if (first != null) this.handlers.emptyBatch(payload.partition, { fetched: BigInt(first), last: BigInt(payload.lastOffset) });
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      membership.lost();
      if (!payload.restart && !this.released) this.handlers.crashed(payload.error.message);
    });
  }

  /** Connects, subscribes and runs; `check` (a stop meanwhile) is asked after each step. */
  async start(check: () => void): Promise<void> {
    const c = this.config;
    await this.consumer.connect();
    check();
    await this.consumer.subscribe({ topics: [c.sourceTopic], fromBeginning: c.startFrom === 'earliest' });
    check();
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: true,
      partitionsConsumedConcurrently: 64,
      eachBatch: (payload) => (this.released ? Promise.resolve() : this.heartbeating(payload, () => this.onBatch(payload))),
    });
  }

  /**
   * kafkajs heartbeats only between batches. At default fetch sizes a batch can wait for a
   * checkpoint (its barrier, then preCommit and commit of large transactions) longer than the
   * session timeout; without a heartbeat meanwhile the group evicts this member mid-checkpoint and
   * hands its partitions on, and their next owner fences the checkpoint (found by full-speed chaos;
   * slow links in net-slow-links chaos gave the same eviction, again and again).
   * A rebalance is still noticed: kafkajs' own heartbeat after the batch reports it.
   */
  private async heartbeating(payload: EachBatchPayload, fn: () => Promise<void>): Promise<void> {
    const beat = setInterval(
      () =>
        void payload.heartbeat().catch((err: unknown) => {
          if (isMembershipRefusal(err)) this.membership.lost();
        }),
      this.config.heartbeatInterval,
    );
    try {
      await fn();
    } finally {
      clearInterval(beat);
    }
  }

  private async onBatch({ batch, isStale, isRunning }: EachBatchPayload): Promise<void> {
    if (!isRunning() || isStale()) return;
    // kafkajs' Batch carries the offset the fetch was issued from, but its typings omit it.
    const fetchedOffset = String((batch as unknown as { fetchedOffset: string }).fetchedOffset);
    await this.handlers.batch({ partition: batch.partition, fetchedOffset, lastOffset: batch.lastOffset(), messages: batch.messages, isStale });
  }

  /**
   * Sends the consumer to `offset` of a source partition. kafkajs refuses a seek while its consumer
   * restarts after a crash (a broker failover exhausts its retries: "Consumer group was not
   * initialized"); that is no failure of ours: the restarted consumer's join seeks every ready
   * task to its position (the assignment handler), and a partition without a ready task is
   * positioned by the batch that initialises its task. A seek to at most a task's next offset is
   * always safe: records before it are never added twice (planBatch).
   */
  seek(partition: number, offset: bigint | string): void {
    try {
      this.consumer.seek({ topic: this.config.sourceTopic, partition, offset: String(offset) });
    } catch (err) {
      this.logger.debug({ partition, offset: String(offset), err: errorMessage(err) }, 'seek deferred: the consumer is restarting');
    }
  }

  /** Stops fetching (the group membership stays until release()). */
  stop(): Promise<void> {
    return this.consumer.stop();
  }

  /** Leaves the group; from now on nothing of this consumer reaches the handlers. Resolves once it has left (never rejects). */
  release(): Promise<void> {
    this.released = true;
    return this.consumer.disconnect().catch(() => undefined);
  }
}
