// eoswatch transactions, pure parts: option parsing, the abort refusal rule, output formatting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findHanging } from '../../../src/coordinator/hanging.js';
import { parseTransactionsArgs } from '../../../src/commands/transactions.js';
import type { TxnInvocation } from '../../../src/commands/transactions-run.js';
import { abortRefusal, formatDuration, formatHanging, formatList, formatTable, hangingRows, toJson } from '../../../src/commands/transactions-view.js';

const parsed = async (args: string[]): Promise<TxnInvocation> => {
  const r = await parseTransactionsArgs(args);
  assert.notEqual(typeof r, 'number');
  return r as TxnInvocation;
};
const usageError = async (args: string[], message: RegExp) => assert.rejects(parseTransactionsArgs(args), (e: Error & { code?: string }) => e.code === 'EOS_USAGE' && message.test(e.message));

test('parsing: each subcommand, its defaults and its values', async () => {
  assert.deepEqual((await parsed(['list', '-b', 'k1:9092,k2:9092', '--state', 'Ongoing,PrepareCommit', '--duration', '5m'])).command, { sub: 'list', states: ['Ongoing', 'PrepareCommit'], durationMs: 300_000 });
  assert.deepEqual((await parsed(['list', '-b', 'k1:9092,k2:9092'])).brokers, ['k1:9092', 'k2:9092']);
  assert.deepEqual((await parsed(['describe', '--transactional-id', 'x'])).command, { sub: 'describe', transactionalId: 'x' });
  assert.deepEqual((await parsed(['producers', '--topic', 't', '--partition', '0'])).command, { sub: 'producers', topic: 't', partition: 0 });
  assert.deepEqual((await parsed(['find-hanging', '--topic', 'a', '--topic', 'b', '--topic', 'a'])).command, { sub: 'find-hanging', topics: ['a', 'b'], idleMs: 60_000 });
  assert.deepEqual((await parsed(['find-hanging', '--idle', '5s', '--format', 'json'])).format, 'json');
  assert.deepEqual((await parsed(['abort', '--transactional-id', 'x'])).command, { sub: 'abort', target: { kind: 'transactional-id', transactionalId: 'x' }, force: false, maxTransactionTimeoutMs: 900_000 });
  assert.deepEqual((await parsed(['abort', '--topic', 't', '--partition', '2', '--start-offset', '9007199254740993', '--force'])).command, {
    sub: 'abort',
    target: { kind: 'partition', topic: 't', partition: 2, startOffset: 9007199254740993n },
    force: true,
    maxTransactionTimeoutMs: 900_000,
  });
  const inv = await parsed(['find-hanging', '--app-pattern', '^(?<app>orders)-\\d+$']);
  assert.equal(inv.appPatterns[0]!.exec('orders-3')?.groups?.app, 'orders');
});

test('parsing: bad input is a usage error naming the option and what was expected', async () => {
  await usageError(['list', '--state', 'Ongoing,Running'], /--state: expected Empty, Ongoing, .* or PrepareEpochFence, found "Running"/);
  await usageError(['list', '--duration', 'soon'], /--duration: /);
  await usageError(['list', '--topic', 't'], /--topic: not an option of transactions list/);
  await usageError(['describe'], /--transactional-id is required/);
  await usageError(['producers'], /--topic is required/);
  await usageError(['producers', '--topic', 'a', '--topic', 'b'], /--topic: transactions producers takes one topic, found 2/);
  await usageError(['producers', '--topic', 'a', '--partition=-1'], /--partition: expected a non-negative integer, found "-1"/);
  await usageError(['find-hanging', '--idle', 'x'], /--idle: /);
  await usageError(['find-hanging', '--force'], /--force: not an option of transactions find-hanging/);
  await usageError(['find-hanging', '--app-pattern', '^orders-\\d+$'], /--app-pattern: .*no named group "app"/);
  await usageError(['abort'], /--transactional-id ID, or --topic T --partition N --start-offset O, is required/);
  await usageError(['abort', '--transactional-id', 'x', '--topic', 't'], /either --transactional-id, or --topic, --partition and --start-offset, not both/);
  await usageError(['abort', '--topic', 't', '--partition', '0'], /--start-offset is required/);
  await usageError(['abort', '--topic', 't', '--start-offset', '0'], /--partition is required/);
  await usageError(['abort', '--topic', 't', '--partition', '0', '--start-offset', '1.5'], /--start-offset: expected a non-negative integer, found "1.5"/);
  await usageError(['list', '--format', 'markdown'], /--format: expected table or json, found "markdown"/);
  await usageError(['list', '-b', 'nohost'], /--bootstrap-server: expected HOST:PORT, found "nohost"/);
  await usageError(['frob'], /unknown transactions command "frob"; expected: list, describe, producers, find-hanging, abort/);
});

test('abort refusal: a transaction within its own timeout, a prepared one, a known one by partition, an unknown one too recent', () => {
  const now = 1_000_000_000;
  const known = { kind: 'known' as const, via: 'transactional-id' as const, transactionalId: 'app-1', state: 'Ongoing', transactionTimeoutMs: 900_000 };
  // Started 62 s ago with a 15 min timeout: due in 13m 58s.
  assert.match(abortRefusal({ ...known, startTimestampMs: now - 62_000 }, now)!, /started 1m 2s ago, within its transaction timeout \(15m 0s\).*aborts it itself in 13m 58s/);
  // One millisecond before the due time it is still refused; at the due time it is not.
  assert.notEqual(abortRefusal({ ...known, startTimestampMs: now - 899_999 }, now), null);
  assert.equal(abortRefusal({ ...known, startTimestampMs: now - 900_000 }, now), null);
  assert.equal(abortRefusal({ ...known, startTimestampMs: now - 3_600_000 }, now), null);
  // Decided transactions are not timed out by the coordinator: InitProducerId only completes them.
  assert.equal(abortRefusal({ ...known, state: 'PrepareCommit', startTimestampMs: now - 1000 }, now), null);
  assert.match(abortRefusal({ ...known, startTimestampMs: now - 3_600_000, prepared: true }, now)!, /prepared \(KIP-939\)/);
  assert.match(abortRefusal({ ...known, via: 'partition', startTimestampMs: now - 3_600_000 }, now)!, /coordinator knows this transaction \(transactional id app-1, Ongoing\).*--transactional-id app-1/);
  const unknown = { kind: 'unknown' as const, maxTransactionTimeoutMs: 900_000, coordinatorsComplete: true };
  assert.match(abortRefusal({ ...unknown, lastTimestampMs: now - 60_000 }, now)!, /wrote to the partition 1m 0s ago.*due in 14m 0s/);
  assert.equal(abortRefusal({ ...unknown, lastTimestampMs: now - 900_000 }, now), null);
  assert.match(abortRefusal({ ...unknown, lastTimestampMs: now - 3_600_000, coordinatorsComplete: false }, now)!, /not every coordinator answered/);
});

test('formatting: durations, tables, list rows', () => {
  assert.deepEqual([0, 999, 1000, 59_499, 61_000, 3_600_000, 3 * 86_400_000 + 3_600_000].map(formatDuration), ['0ms', '999ms', '1s', '59s', '1m 1s', '1h 0m', '3d 1h']);
  assert.equal(formatTable(['A', 'Bee'], [['long-value', 'x'], ['y', 'z']]), 'A           Bee\nlong-value  x\ny           z\n');
  assert.equal(formatList([]), 'no transactional ids\n');
  const text = formatList([
    { transactionalId: 'orders-1', coordinatorId: 2, producerId: 7, state: 'Ongoing', application: 'orders', engine: 'pattern', startTimestampMs: 0, ageMs: 75_000, transactionTimeoutMs: 60_000 },
    { transactionalId: 'b', coordinatorId: 1, producerId: 8, state: 'CompleteCommit', application: 'b', engine: 'id', startTimestampMs: null, ageMs: null, transactionTimeoutMs: 60_000 },
  ]);
  assert.equal(text.split('\n')[0], 'TransactionalId  Coordinator  ProducerId  TransactionState  Application  Age     Timeout');
  assert.match(text, /^orders-1\s+2\s+7\s+Ongoing\s+orders\s+1m 15s\s+1m 0s$/m);
  assert.match(text, /^b\s+1\s+8\s+CompleteCommit\s+b\s+-\s+1m 0s$/m);
});

test('find-hanging rows: named, with application, abort due and held-back count; unknown-to-coordinator uncertain while a coordinator did not answer', () => {
  const now = 10_000_000;
  const partitions = [
    { topic: 'out', partition: 1, high: 6n, lso: 3n, producers: [{ producerId: 5, producerEpoch: 0, lastTimestampMs: now - 20_000, currentTransactionStartOffset: 3 }] },
    { topic: 'out', partition: 2, high: 9n, lso: 4n, producers: [{ producerId: 6, producerEpoch: 3, lastTimestampMs: now - 30_000, currentTransactionStartOffset: 4 }] },
  ];
  const open = [{ transactionalId: 'orders-app-0-4', producerId: 5, producerEpoch: 0, state: 'Ongoing', startTimestampMs: now - 22_000, transactionTimeoutMs: 900_000, partitions: [{ topic: 'out', partition: 1 }] }];
  const found = findHanging(partitions, open, now, 5_000);
  const rows = hangingRows(found, now, {}, true);
  assert.deepEqual(
    rows.map((r) => [r.transactionalId, r.application, r.partition, r.startOffset, r.heldBack, r.ageMs, r.abortDue, r.kind, r.certain]),
    [
      [null, null, 2, 4, 5, 30_000, 'never', 'unknown-to-coordinator', true],
      ['orders-app-0-4', 'orders-app', 1, 3, 3, 22_000, 'in 14m 38s', 'idle', true],
    ],
  );
  const table = formatHanging(rows, { partitions: 2, topics: 1, held: 0 });
  assert.match(table, /^orders-app-0-4\s+orders-app\s+5\s+0\s+out-1\s+3\s+22s\s+3\s+in 14m 38s\s+idle\s+out-1$/m);
  assert.match(table, /^-\s+-\s+6\s+3\s+out-2\s+4\s+30s\s+5\s+never\s+unknown-to-coordinator\s+out-2$/m);
  assert.doesNotMatch(table, /not certain/);
  const partial = hangingRows(found, now, {}, false);
  assert.deepEqual(partial.map((r) => r.certain), [false, true]);
  assert.match(formatHanging(partial, { partitions: 2, topics: 1, held: 0 }), /unknown-to-coordinator\?[^]*not certain/);
  assert.equal(formatHanging([], { partitions: 4, topics: 2, held: 1 }), 'no hanging transaction (4 partitions of 2 topics read; 1 held back by an open transaction whose producer is still writing)\n');
  // JSON: bigints as numbers, secrets under secret keys redacted.
  assert.equal(toJson({ lso: 3n, password: 'p' }), '{\n  "lso": 3,\n  "password": "[REDACTED]"\n}\n');
});
