// kafkajs 2.2.4 groups the messages of a send per partition (producer/groupMessagesPerPartition.js)
// with `[...current, message]` for every message, so a send of n messages to one partition copies
// n²/2 array elements. eoswatch sends a whole fetched batch at once (up to 1 MiB per partition,
// about 6,700 records of 135 bytes: some 22 million element copies and 180 MB of short-lived
// arrays per send); in the pipeline benchmark's profile those copies were 17 % of the samples and
// much of the garbage collector's share. groupMessagesPerPartition below groups the same way
// (partition chosen by the producer's partitioner, send order kept) in linear time; importing this
// module puts it in place of kafkajs' function (src/kafka/module-cache.ts).
import { createRequire } from 'node:module';
import { replaceModule, type ModuleRequire } from './module-cache.js';

export interface GroupArgs<M, P> {
  topic: string;
  partitionMetadata: P[];
  messages: M[];
  partitioner: (args: { topic: string; partitionMetadata: P[]; message: M }) => number;
}

/** The messages of one send per partition, in send order; nothing without partition metadata. */
export function groupMessagesPerPartition<M, P>({ topic, partitionMetadata, messages, partitioner }: GroupArgs<M, P>): Record<number, M[]> {
  const result: Record<number, M[]> = {};
  if (partitionMetadata.length === 0) return result;
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message });
    (result[partition] ??= []).push(message);
  }
  return result;
}

/** Puts groupMessagesPerPartition where kafkajs' producer/sendMessages.js requires it. */
export function installGrouping(req: ModuleRequire): true {
  return replaceModule(req, {
    module: 'kafkajs/src/producer/groupMessagesPerPartition.js',
    exports: groupMessagesPerPartition,
    requiredBy: 'kafkajs/src/producer/sendMessages.js',
    installer: 'src/kafka/linear-grouping.ts',
  });
}

/** True once kafkajs' producer uses groupMessagesPerPartition (set when this module is evaluated). */
export const linearGrouping = installGrouping(createRequire(import.meta.url));
