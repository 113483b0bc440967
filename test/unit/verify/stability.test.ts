// When a sink may be judged (src/verify/stability.ts): the ends a read goes to are the high
// watermarks taken at its start, and it may start only once every LSO has reached them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stableLine, targetsOf, unstableMessage, unstablePartitions } from '../../../src/verify/stability.js';

const r = (partition: number, high: number, lso: number) => ({ partition, high: BigInt(high), lso: BigInt(lso) });

test('the targets are the high watermarks of the first reading, not its LSOs', () => {
  assert.deepEqual(targetsOf([r(0, 201, 0), r(1, 201, 201)]), new Map([[0, 201n], [1, 201n]]));
});

test("CI's case: the offsets' marker is written, the sink partition's is not (LSO at the transaction's first record): unstable until its LSO reaches the HW", () => {
  const targets = targetsOf([r(0, 200, 0), r(1, 201, 201)]);
  assert.deepEqual(unstablePartitions(targets, [r(0, 200, 0), r(1, 201, 201)]), [{ partition: 0, lso: 0n, target: 200n }]);
  assert.deepEqual(unstablePartitions(targets, [r(0, 201, 199), r(1, 201, 201)]), [{ partition: 0, lso: 199n, target: 200n }], 'one short is still unstable');
  assert.deepEqual(unstablePartitions(targets, [r(0, 201, 200), r(1, 201, 201)]), [], 'LSO = target: every transaction below it is decided');
  assert.deepEqual(unstablePartitions(targets, [r(0, 201, 201), r(1, 201, 201)]), [], 'the marker past the target');
});

test('an LSO read a moment after its HW (the two ListOffsets are not atomic, LSO > HW) counts as stable', () => {
  assert.deepEqual(unstablePartitions(targetsOf([r(0, 200, 201)]), [r(0, 200, 201)]), []);
});

test('a transaction opened past the targets (a sink still written to) does not hold the read', () => {
  const targets = targetsOf([r(0, 100, 100)]);
  assert.deepEqual(unstablePartitions(targets, [r(0, 150, 100)]), [], 'LSO stays at 100 behind the new transaction, HW moves on');
});

test('a partition missing from a reading is unstable (its LSO is unknown), and the result is sorted by partition', () => {
  const targets = targetsOf([r(3, 10, 10), r(1, 5, 0), r(2, 7, 7)]);
  assert.deepEqual(unstablePartitions(targets, [r(1, 5, 0), r(2, 7, 7)]), [
    { partition: 1, lso: 0n, target: 5n },
    { partition: 3, lso: -1n, target: 10n },
  ]);
});

test('an empty partition (HW 0) is stable at once', () => {
  assert.deepEqual(unstablePartitions(targetsOf([r(0, 0, 0)]), [r(0, 0, 0)]), []);
});

test('the report line and the timeout message name the partitions, their LSO and HW, and the open transaction', () => {
  assert.equal(stableLine('out', 6, 400), 'sink stable: LSO reached HW on 6 partitions of out after 0.4 s');
  assert.equal(stableLine('out', 1, 0), 'sink stable: LSO reached HW on 1 partition of out after 0.0 s');
  const m = unstableMessage('out', [{ partition: 1, lso: 0n, target: 200n }, { partition: 4, lso: -1n, target: 9n }], 30_000);
  assert.match(m, /^sink out not stable after 30\.0 s: /);
  assert.match(m, /partitions 1 \(LSO 0, HW 200\), 4 \(LSO unknown, HW 9\)/);
  assert.match(m, /An open transaction holds them/);
  assert.match(m, /no verdict of loss/);
  assert.match(unstableMessage('out', [{ partition: 2, lso: 3n, target: 5n }], 1000), /partition 2 \(LSO 3, HW 5\) .*holds it:/);
});
