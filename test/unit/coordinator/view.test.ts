// The coordinator's view, pure parts: transactional ids grouped into applications
// (src/coordinator/applications.ts) and the hanging-transaction verdict (src/coordinator/hanging.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationNamer, OTHER_APPLICATION, checkPattern, recognise } from '../../../src/coordinator/applications.js';
import { abortDue, findHanging, isTwoPhaseCommit, TWO_PHASE_COMMIT_TIMEOUT_MS, WriteActivity, type OpenTransaction, type PartitionView } from '../../../src/coordinator/hanging.js';

test('recognisers: user pattern, eoswatch prefix, Kafka Streams EOS v2, Flink KafkaSink, else the id', () => {
  const opts = { patterns: [checkPattern('^(?<app>billing)-worker-\\d+$')], eoswatchPrefixes: ['eoswatch-demo'] };
  const cases: [string, string, string][] = [
    ['billing-worker-7', 'billing', 'pattern'],
    ['eoswatch-demo-demo.orders-3', 'eoswatch-demo', 'eoswatch'],
    ['orders-app-1f0e4c5a-9b2d-4e6f-8a1b-2c3d4e5f6a7b-2', 'orders-app', 'kafka-streams'],
    ['orders-app-1F0E4C5A-9B2D-4E6F-8A1B-2C3D4E5F6A7B-12', 'orders-app', 'kafka-streams'],
    ['enrich-sink-0-17', 'enrich-sink', 'flink'],
    ['enrich-sink-3-0', 'enrich-sink', 'flink'],
    ['my-transactional-producer', 'my-transactional-producer', 'id'],
    ['legacy-7', 'legacy-7', 'id'],
    // The eoswatch prefix needs its topic and partition after it.
    ['eoswatch-demo-1', 'eoswatch-demo-1', 'id'],
  ];
  for (const [id, application, engine] of cases) assert.deepEqual(recognise(id, opts), { application, engine }, id);
  // Without the config's prefix, eoswatch's own ids look like what they are shaped like.
  assert.deepEqual(recognise('eoswatch-demo-demo.orders-3'), { application: 'eoswatch-demo-demo.orders-3', engine: 'id' });
  assert.deepEqual(recognise('p-orders-0-3'), { application: 'p-orders', engine: 'flink' });
  // The first pattern that matches wins; a pattern without a match falls through.
  const two = { patterns: [checkPattern('^(?<app>a)-x$'), checkPattern('^(?<app>[a-z]+)-.*$')] };
  assert.deepEqual(recognise('a-x', two), { application: 'a', engine: 'pattern' });
  assert.deepEqual(recognise('b-y', two), { application: 'b', engine: 'pattern' });
});

test('a user pattern must compile and have the named group "app"', () => {
  assert.throws(() => checkPattern('^(orders-\\d+$'), /transactional id pattern "\^\(orders-\\\\d\+\$" is not a regular expression/);
  assert.throws(() => checkPattern('^orders-\\d+$'), /has no named group "app"/);
  assert.ok(checkPattern('^(?<app>orders)-\\d+$') instanceof RegExp);
});

test('the namer caps distinct applications; ids of a known application keep their name past the cap', () => {
  const n = new ApplicationNamer({}, 2);
  assert.deepEqual(n.name('a-0-1'), { application: 'a', engine: 'flink' });
  assert.deepEqual(n.name('solo'), { application: 'solo', engine: 'id' });
  assert.deepEqual(n.name('third'), { application: OTHER_APPLICATION, engine: 'id' });
  assert.deepEqual(n.name('fourth'), { application: OTHER_APPLICATION, engine: 'id' });
  assert.deepEqual(n.name('a-5-99'), { application: 'a', engine: 'flink' }, 'a known application is not capped');
  assert.deepEqual([n.size, n.overflowed], [2, 2]);
  // Same name, other engine: a different application.
  const m = new ApplicationNamer({ eoswatchPrefixes: ['a'] }, 5);
  m.name('a-topic-1');
  m.name('a-0-1');
  assert.equal(m.size, 1, 'a-0-1 is eoswatch-shaped under prefix a as well');
});

const NOW = 10_000_000;
const txn = (o: Partial<OpenTransaction> = {}): OpenTransaction => ({
  transactionalId: 'orders-app-1',
  producerId: 42,
  producerEpoch: 3,
  state: 'Ongoing',
  startTimestampMs: NOW - 600_000,
  transactionTimeoutMs: 900_000,
  partitions: [{ topic: 'out', partition: 0 }],
  ...o,
});
const part = (o: Partial<PartitionView> = {}): PartitionView => ({
  topic: 'out',
  partition: 0,
  high: 300n,
  lso: 100n,
  producers: [{ producerId: 42, producerEpoch: 3, lastTimestampMs: NOW - 590_000, currentTransactionStartOffset: 100 }],
  ...o,
});

test('an open transaction holding the LSO whose producer went quiet is hanging, named, with its age, held-back records and abort time', () => {
  const [h, ...rest] = findHanging([part()], [txn()], NOW, 60_000);
  assert.equal(rest.length, 0);
  assert.deepEqual(h, {
    topic: 'out',
    partition: 0,
    kind: 'idle',
    transactionalId: 'orders-app-1',
    producerId: 42,
    producerEpoch: 3,
    state: 'Ongoing',
    startOffset: 100n,
    heldBack: 200n,
    ageMs: 600_000,
    idleMs: 590_000,
    abortAtMs: NOW + 300_000,
    partitions: [{ topic: 'out', partition: 0 }],
  });
  assert.equal(abortDue(h!, NOW), 'in 5m 0s');
  assert.equal(abortDue(h!, NOW + 303_000), 'overdue by 3s');
  assert.equal(abortDue({ abortAtMs: null }, NOW), 'never');
  assert.equal(abortDue({ abortAtMs: NOW + 7_500_000 }, NOW), 'in 2h 5m');
  assert.equal(abortDue({ abortAtMs: NOW + 59_400 }, NOW), 'in 59s');
});

test('not hanging: a producer that wrote within idleAfter, a partition whose LSO is at its end, a transaction behind the one holding the LSO', () => {
  assert.deepEqual(findHanging([part({ producers: [{ producerId: 42, producerEpoch: 3, lastTimestampMs: NOW - 59_999, currentTransactionStartOffset: 100 }] })], [txn()], NOW, 60_000), []);
  const atIdle = findHanging([part({ producers: [{ producerId: 42, producerEpoch: 3, lastTimestampMs: NOW - 60_000, currentTransactionStartOffset: 100 }] })], [txn()], NOW, 60_000);
  assert.equal(atIdle.length, 1, 'idle for exactly idleAfter is hanging');
  assert.deepEqual(findHanging([part({ lso: 300n, high: 300n })], [txn()], NOW, 60_000), []);
  assert.deepEqual(findHanging([part({ lso: 301n, high: 300n })], [txn()], NOW, 60_000), [], 'an LSO past the high watermark (a reading between two requests) holds nothing');
  // The quiet producer's transaction starts at 150, behind the one at the LSO (100), which is busy.
  const behind = part({
    producers: [
      { producerId: 7, producerEpoch: 0, lastTimestampMs: NOW - 1_000, currentTransactionStartOffset: 100 },
      { producerId: 42, producerEpoch: 3, lastTimestampMs: NOW - 590_000, currentTransactionStartOffset: 150 },
    ],
  });
  assert.deepEqual(findHanging([behind], [txn()], NOW, 60_000), []);
  // A producer with no open transaction on the partition (-1) holds nothing.
  assert.deepEqual(findHanging([part({ producers: [{ producerId: 42, producerEpoch: 3, lastTimestampMs: 0, currentTransactionStartOffset: -1 }] })], [txn()], NOW, 60_000), []);
});

test('Kafka find-hanging\'s case: an open transaction on the partition that no coordinator knows; never aborted by the coordinator', () => {
  const [h] = findHanging([part()], [txn({ producerId: 99 })], NOW, 60_000);
  assert.equal(h!.kind, 'unknown-to-coordinator');
  assert.equal(h!.transactionalId, null);
  assert.equal(h!.state, null);
  assert.equal(h!.abortAtMs, null);
  assert.equal(h!.ageMs, 590_000, 'age from the producer\'s last write when the start is unknown');
  assert.equal(h!.producerEpoch, 3, 'the epoch the partition knows');
  assert.deepEqual(h!.partitions, [{ topic: 'out', partition: 0 }]);
});

test('a prepared (KIP-939) transaction never times out; a decided one still writing markers is completing', () => {
  const [prepared] = findHanging([part()], [txn({ prepared: true })], NOW, 60_000);
  assert.deepEqual([prepared!.kind, prepared!.abortAtMs], ['idle', null]);
  for (const state of ['PrepareCommit', 'PrepareAbort']) {
    const [h] = findHanging([part()], [txn({ state })], NOW, 60_000);
    assert.deepEqual([h!.kind, h!.state, h!.abortAtMs], ['completing', state, null], state);
  }
  const [fence] = findHanging([part()], [txn({ state: 'PrepareEpochFence', producerEpoch: 4 })], NOW, 60_000);
  assert.deepEqual([fence!.kind, fence!.producerEpoch], ['idle', 4], "the coordinator's epoch");
});

test('several partitions: one entry per partition held, oldest first, ties by topic and partition', () => {
  const open = [txn(), txn({ transactionalId: 'young', producerId: 43, startTimestampMs: NOW - 120_000, partitions: [{ topic: 'a', partition: 1 }] })];
  const parts = [
    part({ topic: 'b', partition: 2, producers: [{ producerId: 43, producerEpoch: 0, lastTimestampMs: NOW - 100_000, currentTransactionStartOffset: 100 }] }),
    part({ topic: 'a', partition: 1, producers: [{ producerId: 43, producerEpoch: 0, lastTimestampMs: NOW - 100_000, currentTransactionStartOffset: 100 }] }),
    part(),
  ];
  const hs = findHanging(parts, open, NOW, 60_000);
  assert.deepEqual(
    hs.map((h) => [h.transactionalId, h.topic, h.partition, h.ageMs]),
    [
      ['orders-app-1', 'out', 0, 600_000],
      ['young', 'a', 1, 120_000],
      ['young', 'b', 2, 120_000],
    ],
  );
});

test('recognisers at their edges: anchors, multi-digit numbers, prefixes with regex characters, patterns without the group', () => {
  const opts = { eoswatchPrefixes: ['eos.demo', 'p'] };
  const cases: [string, string, string][] = [
    ['eos.demo-orders-12', 'eos.demo', 'eoswatch'],
    ['eosXdemo-orders-1', 'eosXdemo-orders-1', 'id'], // "." in a prefix is a dot, not any character
    ['eos.demo-orders-3x', 'eos.demo-orders-3x', 'id'],
    ['xeos.demo-orders-3', 'xeos.demo-orders-3', 'id'],
    ['p-11', 'p-11', 'id'],
    ['p-t-0', 'p', 'eoswatch'],
    ['enrich-sink-12-345', 'enrich-sink', 'flink'],
    ['enrich-sink-0-17x', 'enrich-sink-0-17x', 'id'],
    ['orders-app-1f0e4c5a-9b2d-4e6f-8a1b-2c3d4e5f6a7b-2x', 'orders-app-1f0e4c5a-9b2d-4e6f-8a1b-2c3d4e5f6a7b-2x', 'id'],
    ['x-orders-app-1f0e4c5a-9b2d-4e6f-8a1b-2c3d4e5f6a7b-13', 'x-orders-app', 'kafka-streams'],
  ];
  for (const [id, application, engine] of cases) assert.deepEqual(recognise(id, opts), { application, engine }, id);
  // A pattern handed over without the named group (not through checkPattern) never names anything.
  assert.deepEqual(recognise('x-1', { patterns: [/^x-\d+$/] }), { application: 'x-1', engine: 'id' });
  assert.equal(OTHER_APPLICATION, '(other)');
});

test('not hanging at the edges: an LSO at the end with a producer reporting it, a holder listed after a quiet producer behind it', () => {
  const atEnd = part({ lso: 300n, high: 300n, producers: [{ producerId: 42, producerEpoch: 3, lastTimestampMs: 0, currentTransactionStartOffset: 300 }] });
  assert.deepEqual(findHanging([atEnd], [txn()], NOW, 60_000), []);
  const quietFirst = part({
    producers: [
      { producerId: 42, producerEpoch: 3, lastTimestampMs: NOW - 590_000, currentTransactionStartOffset: 150 },
      { producerId: 7, producerEpoch: 0, lastTimestampMs: NOW - 1_000, currentTransactionStartOffset: 100 },
    ],
  });
  assert.deepEqual(findHanging([quietFirst], [txn()], NOW, 60_000), [], 'the holder is the one at the LSO, wherever it is listed');
  // A transaction at offset 0 holds an LSO of 0.
  const fromZero = part({ lso: 0n, producers: [{ producerId: 42, producerEpoch: 3, lastTimestampMs: NOW - 590_000, currentTransactionStartOffset: 0 }] });
  assert.deepEqual(findHanging([fromZero], [txn()], NOW, 60_000).map((h) => [h.startOffset, h.heldBack]), [[0n, 300n]]);
  // An LSO of -1 (no answer) and a producer without a transaction (-1): nothing holds it.
  const minus = part({ lso: -1n, producers: [{ producerId: 42, producerEpoch: 3, lastTimestampMs: 0, currentTransactionStartOffset: -1 }] });
  assert.deepEqual(findHanging([minus], [txn()], NOW, 60_000), []);
});

test('same age, same topic: partitions in order; abort due at its edges', () => {
  const p = (partition: number) => part({ partition, producers: [{ producerId: 42, producerEpoch: 3, lastTimestampMs: NOW - 590_000, currentTransactionStartOffset: 100 }] });
  assert.deepEqual(findHanging([p(5), p(2), p(9)], [txn()], NOW, 60_000).map((h) => h.partition), [2, 5, 9]);
  assert.equal(abortDue({ abortAtMs: NOW }, NOW), 'in 0s');
  assert.equal(abortDue({ abortAtMs: NOW + 60_000 }, NOW), 'in 1m 0s');
  assert.equal(abortDue({ abortAtMs: NOW + 3_600_000 }, NOW), 'in 1h 0m');
  assert.equal(abortDue({ abortAtMs: NOW + 3_599_000 }, NOW), 'in 59m 59s');
});

test('write activity: a producer is dated by when eoswatch saw its sequence move, not by its records\' timestamps', () => {
  const a = new WriteActivity(15_000);
  const seen = (views: PartitionView[]) => views.flatMap((v) => v.producers.map((p) => p.lastTimestampMs));
  // Event time hours old (a Streams app catching up): dated by first sight, not by the record.
  const catchingUp = (seq: number, o: Partial<PartitionView> = {}) => part({ producers: [{ producerId: 42, producerEpoch: 3, lastTimestampMs: NOW - 7_200_000, lastSequence: seq, currentTransactionStartOffset: 100 }], ...o });
  assert.deepEqual(seen(a.observe([catchingUp(10)], NOW)), [NOW]);
  // The same sequence later: still dated at first sight (idle grows); a moved one is dated anew.
  assert.deepEqual(seen(a.observe([catchingUp(10)], NOW + 30_000)), [NOW]);
  assert.deepEqual(seen(a.observe([catchingUp(11)], NOW + 40_000)), [NOW + 40_000]);
  assert.deepEqual(seen(a.observe([catchingUp(11)], NOW + 90_000)), [NOW + 40_000]);
  // Keyed by topic, partition, producer id and epoch (under transaction version 2 the epoch moves with every transaction).
  assert.deepEqual(seen(a.observe([catchingUp(11), catchingUp(11, { partition: 1 }), catchingUp(11, { topic: 'other' })], NOW + 95_000)), [NOW + 40_000, NOW + 95_000, NOW + 95_000]);
  const bumped = part({ producers: [{ producerId: 42, producerEpoch: 4, lastTimestampMs: 0, lastSequence: 11, currentTransactionStartOffset: 100 }] });
  assert.deepEqual(seen(a.observe([bumped], NOW + 100_000)), [NOW + 100_000]);
  assert.equal(a.size, 4, 'entries not observed in a pass are kept for forgetAfterMs');
  // A pass that could not read the partition does not reset it: 15 s without it, still dated at first sight.
  assert.deepEqual(seen(a.observe([], NOW + 115_000)), []);
  assert.deepEqual(seen(a.observe([bumped], NOW + 115_000)), [NOW + 100_000]);
  assert.equal(a.size, 1, 'the others, observed last at NOW + 95 s, are forgotten after 15 s');
  // Forgotten after more than forgetAfterMs without it: counted from then again.
  a.observe([], NOW + 130_001);
  assert.equal(a.size, 0);
  assert.deepEqual(seen(a.observe([bumped], NOW + 130_002)), [NOW + 130_002]);
  // Without a sequence (a caller that has none) the producer is passed on as it is.
  const plain = part();
  assert.deepEqual(a.observe([plain], NOW + 131_000), [plain]);
});

test('hanging by write activity: a producer catching up on old event time is never hanging; a dead one is, once idleAfter has passed since eoswatch saw it', () => {
  const a = new WriteActivity(300_000);
  const view = (seq: number) => part({ producers: [{ producerId: 42, producerEpoch: 3, lastTimestampMs: NOW - 7_200_000, lastSequence: seq, currentTransactionStartOffset: 100 }] });
  for (let i = 0; i < 10; i++) {
    const t = NOW + i * 30_000;
    assert.deepEqual(findHanging(a.observe([view(i)], t), [txn()], t, 60_000), [], `writing at pass ${i}`);
  }
  // It stops writing at the last pass (NOW + 270 s): hanging from NOW + 330 s on, not before.
  assert.deepEqual(findHanging(a.observe([view(9)], NOW + 329_999), [txn()], NOW + 329_999, 60_000), []);
  const [h] = findHanging(a.observe([view(9)], NOW + 330_000), [txn()], NOW + 330_000, 60_000);
  assert.equal(h?.idleMs, 60_000);
  assert.equal(h?.transactionalId, 'orders-app-1');
});

test('a KIP-939 prepared transaction is told by its timeout alone: Integer.MAX_VALUE', () => {
  assert.equal(TWO_PHASE_COMMIT_TIMEOUT_MS, 2147483647);
  assert.equal(isTwoPhaseCommit(2147483647), true);
  assert.equal(isTwoPhaseCommit(2147483646), false);
  assert.equal(isTwoPhaseCommit(900_000), false);
});

test('hanging transactions: the oldest first, whatever the order of topics and partitions', () => {
  const view = (topic: string, partition: number, producerId: number) => part({ topic, partition, producers: [{ producerId, producerEpoch: 0, lastTimestampMs: NOW - 600_000, currentTransactionStartOffset: 100 }] });
  const open = [
    txn({ transactionalId: 'young', producerId: 1, startTimestampMs: NOW - 100_000, partitions: [{ topic: 'a', partition: 0 }] }),
    txn({ transactionalId: 'old', producerId: 2, startTimestampMs: NOW - 900_000, partitions: [{ topic: 'z', partition: 9 }] }),
    txn({ transactionalId: 'middle', producerId: 3, startTimestampMs: NOW - 500_000, partitions: [{ topic: 'm', partition: 5 }] }),
  ];
  const found = findHanging([view('a', 0, 1), view('z', 9, 2), view('m', 5, 3)], open, NOW, 60_000);
  assert.deepEqual(found.map((h) => h.transactionalId), ['old', 'middle', 'young']);
});
