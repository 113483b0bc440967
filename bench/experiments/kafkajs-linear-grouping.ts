// Experiment, not a fix: preloaded into the benchmarked eoswatch process with
//   npm run bench:pipeline -- --eos-preload bench/experiments/kafkajs-linear-grouping.ts
// kafkajs 2.2.4 groups a send's messages per partition with `[...current, message]` for every
// message (src/producer/groupMessagesPerPartition.js), so one sendBatch of n messages to one
// partition copies n²/2 array elements: eoswatch sends a whole fetched batch (up to 1 MB, ~6,700
// records of 135 bytes) in one sendBatch. This replaces that module, before kafkajs loads it, with
// the same grouping in linear time, to measure what the quadratic copy costs.
import { createRequire } from 'node:module';

type Grouper = (args: {
  topic: string;
  partitionMetadata: unknown[];
  messages: unknown[];
  partitioner: (args: { topic: string; partitionMetadata: unknown[]; message: unknown }) => number;
}) => Record<number, unknown[]>;

const require = createRequire(import.meta.url);
const path = require.resolve('kafkajs/src/producer/groupMessagesPerPartition.js');
require(path);
const cached = require.cache[path];
if (!cached) throw new Error(`kafkajs-linear-grouping: ${path} is not in the require cache`);
const linear: Grouper = ({ topic, partitionMetadata, messages, partitioner }) => {
  const result: Record<number, unknown[]> = {};
  if (partitionMetadata.length === 0) return result;
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message });
    (result[partition] ??= []).push(message);
  }
  return result;
};
cached.exports = linear;
