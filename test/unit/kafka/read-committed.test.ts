// read_committed filtering of fetched records (src/kafka/read-committed.ts): the Java consumer's
// rule in place of kafkajs 2.2.4's, which lets the records of an aborted transaction through when
// the broker lists it after one that began later (the order the transactions ended).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Module } from 'node:module';
import { filterAborted, installFilter, readCommittedFixed, type FetchedMessage } from '../../../src/kafka/read-committed.js';

const ABORT = Buffer.from([0, 0, 0, 0]);
const COMMIT = Buffer.from([0, 0, 0, 1]);
type M = FetchedMessage & { value: string };
const rec = (offset: number, producerId: string, value: string, inTransaction = true): M => ({ offset: String(offset), key: null, value, batchContext: { producerId, inTransaction } });
const marker = (offset: number, producerId: string, key: Buffer): M => ({ offset: String(offset), key, isControlRecord: true, value: `marker ${producerId}`, batchContext: { producerId, inTransaction: true } });
const values = (ms: M[]) => ms.map((m) => m.value);

/**
 * One partition as the chaos round jm-kill left it: producer 1104's transaction began at 0 and was
 * aborted last (marker 11), producer 2081's began at 3 and was aborted first (marker 10); then a
 * committed transaction of 1104 again (a later epoch) and one of 77.
 */
const partition: M[] = [
  rec(0, '1104', 'a0'),
  rec(1, '1104', 'a1'),
  rec(2, '1104', 'a2'),
  rec(3, '2081', 'b0'),
  rec(4, '2081', 'b1'),
  rec(5, '77', 'c0'),
  rec(6, '77', 'c1'),
  marker(7, '77', COMMIT),
  rec(8, '2081', 'b2'),
  rec(9, '5', 'plain', false),
  marker(10, '2081', ABORT),
  marker(11, '1104', ABORT),
  rec(12, '1104', 'd0'),
  marker(13, '1104', COMMIT),
];
// As the broker lists them: by the offset of their abort marker.
const brokerOrder = [
  { producerId: '2081', firstOffset: '3' },
  { producerId: '1104', firstOffset: '0' },
];

test('aborted transactions listed in the order they ended: both are dropped, the committed ones and non-transactional records pass', () => {
  assert.deepEqual(values(filterAborted({ messages: partition, abortedTransactions: brokerOrder })), ['c0', 'c1', 'marker 77', 'plain', 'marker 2081', 'marker 1104', 'd0', 'marker 1104']);
  // The same answer whatever the list's order.
  assert.deepEqual(values(filterAborted({ messages: partition, abortedTransactions: [...brokerOrder].reverse() })), values(filterAborted({ messages: partition, abortedTransactions: brokerOrder })));
});

test('kafkajs 2.2.4 as shipped lets the earlier-begun aborted transaction through (what filterAborted replaces)', () => {
  const require = createRequire(import.meta.url);
  const path = require.resolve('kafkajs/src/consumer/filterAbortedMessages.js');
  // Loaded from source, apart from the module cache entry filterAborted took over.
  const source = require('node:fs').readFileSync(path, 'utf8') as string;
  const mod = { exports: {} as unknown };
  new Function('module', 'exports', 'require', source)(mod, mod.exports, (id: string) => require(require.resolve(id, { paths: [require('node:path').dirname(path)] })));
  const shipped = mod.exports as typeof filterAborted;
  assert.deepEqual(values(shipped({ messages: partition, abortedTransactions: brokerOrder })).slice(0, 3), ['a0', 'a1', 'a2'], 'kafkajs passes records of an aborted transaction');
});

test('a fetch that starts inside two aborted transactions opens both at its first record', () => {
  const fromMiddle = partition.filter((m) => Number(m.offset) >= 4);
  assert.deepEqual(values(filterAborted({ messages: fromMiddle, abortedTransactions: brokerOrder })), ['c0', 'c1', 'marker 77', 'plain', 'marker 2081', 'marker 1104', 'd0', 'marker 1104']);
});

test('an abort marker closes only its own producer; a commit marker closes nothing; ids are compared as strings', () => {
  const ms = [rec(0, '9', 'x0'), rec(1, '8', 'y0'), marker(2, '8', ABORT), rec(3, '9', 'x1'), marker(4, '9', COMMIT), rec(5, '9', 'x2'), marker(6, '9', ABORT), rec(7, '9', 'x3')];
  assert.deepEqual(values(filterAborted({ messages: ms, abortedTransactions: [{ producerId: 9 as unknown as string, firstOffset: '0' }] })), ['y0', 'marker 8', 'marker 9', 'x3']);
  // A transaction listed as beginning later than a record leaves that record alone.
  assert.deepEqual(values(filterAborted({ messages: ms, abortedTransactions: [{ producerId: '9', firstOffset: '3' }] })), ['x0', 'y0', 'marker 8', 'marker 9', 'x3']);
  // Only a control record whose key is four zero bytes is an abort marker.
  const keys = [[0, 0, 0], [0, 0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]];
  const notMarker = [rec(0, '9', 'x0'), ...keys.map((k, i) => ({ ...marker(i + 1, '9', Buffer.from(k)), value: `key ${k.join('')}` })), { ...rec(7, '9', 'int32 key 0'), key: ABORT }, rec(8, '9', 'x1')];
  assert.deepEqual(values(filterAborted({ messages: notMarker, abortedTransactions: [{ producerId: '9', firstOffset: '0' }] })), []);
});

test('aborted transactions listed in any order are opened by first offset', () => {
  // Five producers, listed newest first; each one's records before the next one begins, all aborted at the end.
  const ids = ['p0', 'p1', 'p2', 'p3', 'p4'];
  const ms = [...ids.flatMap((id, i) => [rec(i * 10, id, `${id}-a`), rec(i * 10 + 1, id, `${id}-b`)]), ...ids.map((id, i) => marker(50 + i, id, ABORT)), rec(60, 'p9', 'kept')];
  const listed = ids.map((producerId, i) => ({ producerId, firstOffset: String(i * 10) })).reverse();
  assert.deepEqual(values(filterAborted({ messages: ms, abortedTransactions: listed })), ['marker p0', 'marker p1', 'marker p2', 'marker p3', 'marker p4', 'kept']);
});

test('installFilter puts filterAborted in the module cache once, and refuses when kafkajs is loaded already', () => {
  const fake = (loaded: Record<string, unknown>) => ({ resolve: ((id: string) => `/deps/${id}`) as NodeJS.RequireResolve, cache: loaded as NodeJS.Require['cache'] });
  const req = fake({});
  assert.equal(installFilter(req), true);
  const entry = req.cache['/deps/kafkajs/src/consumer/filterAbortedMessages.js']!;
  assert.ok(entry instanceof Module);
  assert.deepEqual([entry.exports === filterAborted, entry.loaded, entry.filename], [true, true, '/deps/kafkajs/src/consumer/filterAbortedMessages.js']);
  assert.equal(installFilter(req), true, 'a second install is a no-op');
  assert.equal(req.cache['/deps/kafkajs/src/consumer/filterAbortedMessages.js'], entry);
  const late = fake({ '/deps/kafkajs/src/consumer/batch.js': { exports: class {} } });
  assert.throws(() => installFilter(late), /^Error: src\/kafka\/read-committed\.ts was imported after kafkajs was loaded: it must come first/);
  assert.equal(late.cache['/deps/kafkajs/src/consumer/filterAbortedMessages.js'], undefined);
  // Installed already, batch.js loaded after it: fine.
  const both = fake({ '/deps/kafkajs/src/consumer/filterAbortedMessages.js': entry, '/deps/kafkajs/src/consumer/batch.js': { exports: class {} } });
  assert.equal(installFilter(both), true);
});

test('without aborted transactions the messages come back as they are', () => {
  assert.equal(filterAborted({ messages: partition, abortedTransactions: [] }), partition);
  assert.equal(filterAborted({ messages: partition, abortedTransactions: null }), partition);
  assert.equal(filterAborted({ messages: partition }), partition);
});

test("kafkajs' consumer batches use it: a fetched partition through kafkajs' own Batch", () => {
  assert.equal(readCommittedFixed, true);
  const require = createRequire(import.meta.url);
  const Batch = require('kafkajs/src/consumer/batch.js') as new (topic: string, fetchedOffset: string, data: unknown) => { messages: M[] };
  const b = new Batch('t', '0', { partition: 0, highWatermark: '14', abortedTransactions: brokerOrder, messages: partition.map((m) => ({ ...m, isControlRecord: m.isControlRecord ?? false })) });
  assert.deepEqual(values(b.messages), ['c0', 'c1', 'plain', 'd0']);
});
