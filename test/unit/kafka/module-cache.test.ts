// Replacing a kafkajs module in the module cache (src/kafka/module-cache.ts), on a fake cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Module } from 'node:module';
import { replaceModule } from '../../../src/kafka/module-cache.js';

const fake = (loaded: Record<string, unknown>) => ({ resolve: ((id: string) => `/deps/${id}`) as NodeJS.RequireResolve, cache: loaded as NodeJS.Require['cache'] });
const replacement = { module: 'lib/part.js', exports: () => 'mine', requiredBy: 'lib/user.js', installer: 'src/x.ts' };

test('puts the exports in the cache under the module\'s resolved file name, once', () => {
  const req = fake({});
  assert.equal(replaceModule(req, replacement), true);
  const entry = req.cache['/deps/lib/part.js']!;
  assert.ok(entry instanceof Module);
  assert.deepEqual([entry.exports === replacement.exports, entry.loaded, entry.filename, entry.id], [true, true, '/deps/lib/part.js', '/deps/lib/part.js']);
  assert.deepEqual(Object.keys(req.cache), ['/deps/lib/part.js'], 'nothing else is cached');
  assert.equal(replaceModule(req, replacement), true, 'a second install is a no-op');
  assert.equal(req.cache['/deps/lib/part.js'], entry, 'the same entry stays');
});

test('refuses, naming the installer, when the module that requires it is loaded already; fine when installed before it', () => {
  const late = fake({ '/deps/lib/user.js': { exports: {} } });
  assert.throws(() => replaceModule(late, replacement), /^Error: src\/x\.ts was imported after kafkajs was loaded: it must come first \(see src\/kafka\/module-cache\.ts\)$/);
  assert.equal(late.cache['/deps/lib/part.js'], undefined, 'nothing replaced');
  const installed = fake({});
  replaceModule(installed, replacement);
  const entry = installed.cache['/deps/lib/part.js'];
  installed.cache['/deps/lib/user.js'] = { exports: {} } as NodeJS.Module;
  assert.equal(replaceModule(installed, replacement), true);
  assert.equal(installed.cache['/deps/lib/part.js'], entry);
  // Another module's exports in the slot already (e.g. kafkajs' own, loaded early): replaced while nothing requires it yet.
  const original = fake({ '/deps/lib/part.js': { exports: () => 'kafkajs' } });
  assert.equal(replaceModule(original, replacement), true);
  assert.equal(original.cache['/deps/lib/part.js']!.exports, replacement.exports);
});

test("loadOriginal: a fresh copy of kafkajs' own file, apart from the one in the module cache", async () => {
  const { loadOriginal } = await import('../../../src/kafka/module-cache.js');
  const { createRequire } = await import('node:module');
  const req = createRequire(import.meta.url);
  const cached = req('kafkajs/src/producer/groupMessagesPerPartition.js') as (a: unknown) => unknown;
  const fresh = loadOriginal(req, 'kafkajs/src/producer/groupMessagesPerPartition.js') as (a: { topic: string; partitionMetadata: unknown[]; messages: unknown[]; partitioner: () => number }) => Record<string, unknown[]>;
  assert.equal(typeof fresh, 'function');
  assert.notEqual(fresh, cached, 'not the cached module');
  const messages = [{ key: 'a', value: '1' }, { key: 'b', value: '2' }, { key: 'c', value: '3' }];
  const grouped = fresh({ topic: 't', partitionMetadata: [{ partitionId: 0 }, { partitionId: 1 }], messages, partitioner: () => 1 });
  assert.deepEqual(grouped, { 1: messages }, "kafkajs' own grouping runs");
});
