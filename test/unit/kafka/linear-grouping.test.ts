// The linear per-partition grouping of a send (src/kafka/linear-grouping.ts) against kafkajs'
// own groupMessagesPerPartition, loaded from its file beside the replacement in the module cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { loadOriginal } from '../../../src/kafka/module-cache.js';
import { groupMessagesPerPartition, installGrouping, linearGrouping, type GroupArgs } from '../../../src/kafka/linear-grouping.js';

const require = createRequire(import.meta.url);
const ORIGINAL = require.resolve('kafkajs/src/producer/groupMessagesPerPartition.js');

/** kafkajs 2.2.4's function, compiled from its file (the cache holds the replacement). */
function kafkajsOriginal(): (args: GroupArgs<unknown, unknown>) => Record<number, unknown[]> {
  return loadOriginal(require, ORIGINAL) as (args: GroupArgs<unknown, unknown>) => Record<number, unknown[]>;
}

// A small deterministic generator, so a failure names a reproducible case.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

test('groups exactly as kafkajs 2.2.4 does: same partitions, same key order, send order kept (500 generated sends)', () => {
  const original = kafkajsOriginal();
  for (let seed = 1; seed <= 500; seed++) {
    const r = rng(seed);
    const partitions = 1 + Math.floor(r() * 12);
    const partitionMetadata = Array.from({ length: partitions }, (_, i) => ({ partitionId: i }));
    const messages = Array.from({ length: Math.floor(r() * 200) }, (_, i) => ({ key: `k${i}`, value: String(i), partition: Math.floor(r() * partitions) }));
    const calls: unknown[] = [];
    const partitioner = ({ message }: { message: { partition: number } }) => (calls.push(message), message.partition);
    const args = { topic: 't', partitionMetadata, messages, partitioner };
    const mine = groupMessagesPerPartition(args);
    assert.deepEqual(Object.entries(mine), Object.entries(original(args as GroupArgs<unknown, unknown>)), `seed ${seed}`);
    for (const group of Object.values(mine)) for (const m of group) assert.ok(messages.includes(m), 'the caller\'s message objects, not copies');
    assert.equal(calls.length, messages.length * 2, 'the partitioner is asked once per message (by each implementation)');
  }
});

test('the partitioner gets the topic, the metadata and each message; no metadata: no groups, no partitioner call', () => {
  const seen: unknown[] = [];
  const partitionMetadata = [{ partitionId: 0 }, { partitionId: 1 }];
  const messages = [{ value: 'a' }, { value: 'b' }, { value: 'c' }];
  const grouped = groupMessagesPerPartition({ topic: 'orders', partitionMetadata, messages, partitioner: (a) => (seen.push(a), a.message.value === 'b' ? 1 : 0) });
  assert.deepEqual(grouped, { 0: [messages[0], messages[2]], 1: [messages[1]] });
  assert.deepEqual(seen, messages.map((message) => ({ topic: 'orders', partitionMetadata, message })));
  assert.deepEqual(groupMessagesPerPartition({ topic: 'orders', partitionMetadata: [], messages, partitioner: () => assert.fail('called') }), {});
});

test('kafkajs\' producer requires the replacement (preloaded, as src/cli.ts does)', () => {
  assert.equal(linearGrouping, true);
  require('kafkajs/src/producer/sendMessages.js');
  assert.equal(require.cache[ORIGINAL]?.exports, groupMessagesPerPartition);
});

test('installGrouping goes where sendMessages.js requires the grouping, and refuses once that is loaded, naming this module', () => {
  const fake = (loaded: Record<string, unknown>) => ({ resolve: ((id: string) => `/deps/${id}`) as NodeJS.RequireResolve, cache: loaded as NodeJS.Require['cache'] });
  const early = fake({});
  installGrouping(early);
  assert.equal(early.cache['/deps/kafkajs/src/producer/groupMessagesPerPartition.js']?.exports, groupMessagesPerPartition);
  const late = fake({ '/deps/kafkajs/src/producer/sendMessages.js': { exports: {} } });
  assert.throws(() => installGrouping(late), /^Error: src\/kafka\/linear-grouping\.ts was imported after kafkajs was loaded/);
});
