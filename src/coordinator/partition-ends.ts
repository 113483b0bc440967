// The ends (high watermark, last stable offset) of the partitions a pass of the transactions
// service judges: the open transactions' topics in one request, and where that fails for the sake
// of one topic, topic by topic, so a topic that cannot be read (deleted under an open transaction,
// not described to eoswatch) costs the judgement of its own partitions only; and the watched
// topics without an open transaction. kafkajs keeps a topic it failed on among its metadata
// targets: the reader is renewed after each failure.
import type { Kafka } from 'kafkajs';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { redactText } from '../redact.js';
import { EndOffsetReader, type PartitionEnds } from '../kafka/offsets.js';

export class PassEnds {
  private reader: EndOffsetReader | undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly logger: Logger,
    /** A topic of open transactions could not be read (counted by the service). */
    private readonly topicFailed: () => void,
    /** The service is stopping: no new reader. */
    private readonly stopped: () => boolean,
  ) {}

  start(): void {
    this.reader = new EndOffsetReader(this.kafka);
  }

  /** A fresh reader for the next reading (none once stopped). */
  async renew(): Promise<void> {
    await this.reader?.close();
    if (!this.stopped()) this.reader = new EndOffsetReader(this.kafka);
  }

  /** The ends of the open transactions' topics; a topic that cannot be read goes to `unjudged`. */
  async ofOpen(topics: string[], unjudged: Set<string>): Promise<Map<string, PartitionEnds[]>> {
    try {
      return await this.reader!.readMany(topics);
    } catch (err) {
      // Topic by topic only for an error of a topic (a broker that does not answer would cost a
      // request timeout per topic: the pass fails as a whole instead).
      if (topics.length === 1 || !topicSpecific(err)) throw err;
    }
    const renew = async () => {
      await this.reader?.close();
      if (this.stopped()) throw new Error('the transactions service stopped');
      this.reader = new EndOffsetReader(this.kafka);
      return this.reader;
    };
    let reader = await renew();
    const out = new Map<string, PartitionEnds[]>();
    for (const topic of topics) {
      try {
        for (const [t, parts] of await reader.readMany([topic])) out.set(t, parts);
      } catch (err) {
        if (!topicSpecific(err)) throw err;
        this.topicFailed();
        this.logger.warn({ err: redactText(errorMessage(err)), topic }, 'cannot read the ends of a topic of open transactions: its partitions are not judged this pass');
        unjudged.add(topic);
        reader = await renew();
      }
    }
    return out;
  }

  /**
   * The ends of watched topics without an open transaction, added to `ends`. A topic that cannot
   * be read there (deleted, not created yet) costs nothing else: the LSO monitor reports it.
   */
  async ofWatched(topics: string[], ends: Map<string, PartitionEnds[]>): Promise<void> {
    try {
      for (const [t, parts] of await this.reader!.readMany(topics)) ends.set(t, parts);
    } catch (err) {
      this.logger.debug({ err: redactText(errorMessage(err)), topics }, 'cannot read the ends of the watched topics');
      await this.renew();
    }
  }

  async close(): Promise<void> {
    await this.reader?.close();
    this.reader = undefined;
  }
}

/** An error of one topic (unknown, deleted, not authorized), as kafkajs reports it (its type, or a cause's): the other topics can still be read. */
export function topicSpecific(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; depth++) {
    const x = e as { type?: string; message?: string; originalError?: unknown; cause?: unknown };
    if (x.type && TOPIC_ERRORS.has(x.type)) return true;
    if (/does not host this topic-partition|not authorized to access topics|unknown topic/i.test(x.message ?? '')) return true;
    e = x.originalError ?? x.cause;
  }
  return false;
}

const TOPIC_ERRORS = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'TOPIC_AUTHORIZATION_FAILED', 'UNKNOWN_TOPIC_ID', 'INVALID_TOPIC_EXCEPTION']);
