// A Flink KafkaSink's commit latency per checkpoint: its transactions' events from
// __transaction_state (the transactions service's passes) grouped by the checkpoint id in the
// transactional id and joined with the checkpoint's completion (REST latest_ack_timestamp).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSinkTransactionalId, SinkCommitTracker } from '../../../src/flink/sink-commits.js';
import type { TxnEvent } from '../../../src/coordinator/events.js';

const P = 'orders-sink';
const base = (id: string, atMs: number) => ({ transactionalId: id, producerId: 7, producerEpoch: 0, transactionVersion: 0, atMs });
const began = (id: string, atMs: number): TxnEvent => ({ ...base(id, atMs), kind: 'began', startedAtMs: atMs });
const endTxn = (id: string, atMs: number, outcome: 'committed' | 'aborted' | 'aborted_timeout' | 'fenced' = 'committed'): TxnEvent => ({
  ...base(id, atMs),
  kind: 'ended',
  outcome,
  byClient: outcome === 'committed' || outcome === 'aborted',
  startedAtMs: atMs - 500,
  durationMs: 500,
});
const markers = (id: string, decidedAtMs: number, atMs: number, committed = true): TxnEvent => ({ ...base(id, atMs), kind: 'completed', committed, decidedAtMs, completionMs: atMs - decidedAtMs });
const tid = (subtask: number, checkpoint: number) => `${P}-${subtask}-${checkpoint}`;

/** A tracker past its first pass (the gap every new tracker starts with). */
function tracker(): SinkCommitTracker {
  const t = new SinkCommitTracker({ prefix: P });
  assert.deepEqual(t.pass([]), []);
  return t;
}

test('parseSinkTransactionalId: <prefix>-<subtask>-<checkpoint>, the prefix matched exactly (it may hold dashes and digits)', () => {
  assert.deepEqual(parseSinkTransactionalId('orders-sink-3-17', P), { subtask: 3, checkpointId: 17 });
  assert.deepEqual(parseSinkTransactionalId('a-1-2-0-5', 'a-1-2'), { subtask: 0, checkpointId: 5 });
  assert.equal(parseSinkTransactionalId('orders-sink-3', P), null, 'no checkpoint part');
  assert.equal(parseSinkTransactionalId('orders-sink-x-1', P), null);
  assert.equal(parseSinkTransactionalId('orders-sink-1-2-3', P), null, 'another prefix (orders-sink-1) would own it');
  assert.equal(parseSinkTransactionalId('orders-sinkX-1-2', P), null);
  assert.equal(parseSinkTransactionalId('other-0-1', P), null);
  assert.equal(parseSinkTransactionalId('orders-sink-0-1 ', P), null);
});

test('one value per checkpoint: its completion (latest_ack_timestamp) to the last subtask\'s markers, once a later pass brought nothing for it', () => {
  const t = tracker();
  // Checkpoint 5: subtasks 0 and 1 wrote records (Ongoing), the checkpoint completed at 10_000,
  // the committer's EndTxn at 10_020 and 10_030, markers at 10_025 and 10_070.
  assert.deepEqual(t.pass([began(tid(0, 5), 9_000), began(tid(1, 5), 9_100)]), []);
  assert.deepEqual(t.checkpoint(5, true, 10_000), [], 'no commit seen yet');
  assert.deepEqual(t.pass([endTxn(tid(0, 5), 10_020), markers(tid(0, 5), 10_020, 10_025), endTxn(tid(1, 5), 10_030), markers(tid(1, 5), 10_030, 10_070)]), [], 'complete, but this pass brought news for it');
  assert.deepEqual(t.pass([began(tid(0, 6), 10_100)]), [{ checkpointId: 5, seconds: 0.07, transactions: 2, from: 'checkpoint' }]);
  assert.deepEqual(t.pass([]), [], 'observed once');
  assert.equal(t.pending, 1, 'checkpoint 6 waits');
});

test('a subtask whose Ongoing is read only in the next pass (its log partition read before it was written) is waited for', () => {
  const t = tracker();
  t.checkpoint(8, true, 20_000);
  // Pass 1 read subtask 1's partition early: only subtask 0's transaction, begun and committed.
  assert.deepEqual(t.pass([began(tid(0, 8), 19_000), endTxn(tid(0, 8), 20_010), markers(tid(0, 8), 20_010, 20_015)]), []);
  // Pass 2 brings subtask 1, begun before the checkpoint completed, committed last.
  assert.deepEqual(t.pass([began(tid(1, 8), 19_500), endTxn(tid(1, 8), 20_040)]), []);
  assert.deepEqual(t.pass([markers(tid(1, 8), 20_040, 20_300)]), [], 'complete now; one quiet pass to go');
  assert.deepEqual(t.pass([]), [{ checkpointId: 8, seconds: 0.3, transactions: 2, from: 'checkpoint' }]);
});

test('the completion known only after the commits (REST poll after the log pass): observed at the completion', () => {
  const t = tracker();
  t.pass([began(tid(0, 3), 1_000), endTxn(tid(0, 3), 2_100), markers(tid(0, 3), 2_100, 2_150)]);
  assert.deepEqual(t.pass([]), [], 'settled, completion unknown');
  assert.deepEqual(t.checkpoint(3, true, 2_050), [{ checkpointId: 3, seconds: 0.1, transactions: 1, from: 'checkpoint' }]);
  assert.deepEqual(t.checkpoint(3, true, 2_050), [], 'a completion reported again is not a second value');
});

test('the JobManager\'s clock ahead of the coordinators\' (an EndTxn before the completion): the span starts at the first EndTxn', () => {
  const t = tracker();
  t.checkpoint(4, true, 5_000);
  t.pass([began(tid(0, 4), 3_000), began(tid(1, 4), 3_000), endTxn(tid(0, 4), 4_990), endTxn(tid(1, 4), 4_950), markers(tid(0, 4), 4_990, 5_010), markers(tid(1, 4), 4_950, 5_200)]);
  assert.deepEqual(t.pass([]), [{ checkpointId: 4, seconds: 0.25, transactions: 2, from: 'first-end-txn' }]);
});

test('the decision time comes from the markers event when the EndTxn state was compacted away or read in the same record', () => {
  const t = tracker();
  t.checkpoint(2, true, 1_000);
  t.pass([began(tid(0, 2), 500), markers(tid(0, 2), 1_010, 1_090)]);
  assert.deepEqual(t.pass([]), [{ checkpointId: 2, seconds: 0.09, transactions: 1, from: 'checkpoint' }]);
});

test('not observed: a failed checkpoint, a transaction seen only from its EndTxn on, an aborted one, other prefixes', () => {
  const t = tracker();
  // Checkpoint 10 failed: its transaction is committed with the next completed one, and is not 10's figure.
  t.pass([began(tid(0, 10), 100)]);
  assert.deepEqual(t.checkpoint(10, false, 900), []);
  t.pass([endTxn(tid(0, 10), 2_000), markers(tid(0, 10), 2_000, 2_010)]);
  // Checkpoint 11: subtask 1's transaction began before the stream (no Ongoing seen).
  t.checkpoint(11, true, 3_000);
  t.pass([began(tid(0, 11), 2_500), endTxn(tid(0, 11), 3_010), markers(tid(0, 11), 3_010, 3_020), endTxn(tid(1, 11), 3_010), markers(tid(1, 11), 3_010, 3_030)]);
  // Checkpoint 12: subtask 0 aborted (a failover before the commit).
  t.checkpoint(12, true, 4_000);
  t.pass([began(tid(0, 12), 3_500), endTxn(tid(0, 12), 4_500, 'aborted_timeout'), markers(tid(0, 12), 4_500, 4_510, false)]);
  // Another sink's transactions of the same checkpoint id.
  t.pass([began('orders-sink2-0-13', 4_600), endTxn('orders-sink2-0-13', 5_000), markers('orders-sink2-0-13', 5_000, 5_005)]);
  t.checkpoint(13, true, 4_900);
  assert.deepEqual(t.pass([]), []);
  assert.deepEqual(t.pass([]), []);
  assert.equal(t.pending, 2, 'checkpoints 11 and 12 wait (trimmed in time); 10 is closed; 13 has no transaction of this sink');
});

test('a lingering transaction aborted at a restore and its id begun again: the new transaction counts', () => {
  const t = tracker();
  t.pass([began(tid(0, 21), 1_000), endTxn(tid(0, 21), 2_000, 'fenced'), markers(tid(0, 21), 2_000, 2_005, false)]);
  t.pass([began(tid(0, 21), 3_000), endTxn(tid(0, 21), 4_020), markers(tid(0, 21), 4_020, 4_040)]);
  t.checkpoint(21, true, 4_000);
  assert.deepEqual(t.pass([]), [{ checkpointId: 21, seconds: 0.04, transactions: 1, from: 'checkpoint' }]);
});

test('after a gap (a new tracker, a baseline pass) the checkpoints of the first pass are not observed; later ones are', () => {
  const t = new SinkCommitTracker({ prefix: P });
  // Subtask 0 of checkpoint 30 began and committed inside the gap; subtask 1's Ongoing was logged
  // after its partition was read, so it shows in the first pass with its commit.
  t.checkpoint(30, true, 1_000);
  assert.deepEqual(t.pass([began(tid(1, 30), 900), endTxn(tid(1, 30), 1_010), markers(tid(1, 30), 1_010, 1_020)]), []);
  assert.deepEqual(t.pass([]), [], 'checkpoint 30 is not observed from subtask 1 alone');
  t.pass([began(tid(0, 31), 1_500)]);
  t.checkpoint(31, true, 2_000);
  // The log could not be read: a baseline pass; what was pending is dropped.
  assert.deepEqual(t.pass([], true), []);
  assert.equal(t.pending, 0);
  t.pass([endTxn(tid(0, 31), 2_010), markers(tid(0, 31), 2_010, 2_030)]);
  t.pass([began(tid(0, 32), 2_500)]);
  t.checkpoint(32, true, 3_000);
  t.pass([endTxn(tid(0, 32), 3_010), markers(tid(0, 32), 3_010, 3_020)]);
  assert.deepEqual(t.pass([]), [{ checkpointId: 32, seconds: 0.02, transactions: 1, from: 'checkpoint' }]);
});

test('at most maxPending checkpoints wait; the oldest go first', () => {
  const t = new SinkCommitTracker({ prefix: P, maxPending: 3 });
  t.pass([]);
  t.pass([1, 2, 3, 4].map((c) => began(tid(0, c), c * 1000)));
  assert.equal(t.pending, 3);
  for (const c of [1, 2, 3, 4]) t.checkpoint(c, true, c * 1000 + 500);
  t.pass([1, 2, 3, 4].flatMap((c) => [endTxn(tid(0, c), c * 1000 + 510), markers(tid(0, c), c * 1000 + 510, c * 1000 + 520)]));
  // Checkpoint 1's group was dropped; its late events made a new group without an Ongoing.
  assert.deepEqual(
    t.pass([]).map((o) => o.checkpointId),
    [2, 3, 4],
  );
});

test('pooled naming (FLIP-511 POOLING): an id ending in 0, or one begun again after its transaction was committed, stops the tracker for good, with the reason', () => {
  // The pool hands out 0 first: no checkpoint id is 0.
  const zero = tracker();
  zero.checkpoint(1, true, 1_000);
  assert.deepEqual(zero.pass([began(tid(0, 0), 900), endTxn(tid(0, 0), 1_010), markers(tid(0, 0), 1_010, 1_020)]), []);
  assert.match(zero.pooled ?? '', /orders-sink-0-0 ends in 0, which no checkpoint id is/);
  assert.equal(zero.pending, 0, 'nothing kept');
  assert.deepEqual(zero.pass([]), [], 'and nothing observed after');

  // Ids 1 and 2 in turn, each used again once committed: the second Ongoing of id 1 gives it away,
  // before its transaction could be joined with checkpoint 1's completion.
  const reuse = tracker();
  reuse.checkpoint(1, true, 1_000);
  assert.deepEqual(reuse.pass([began(tid(0, 1), 500), endTxn(tid(0, 1), 1_010), markers(tid(0, 1), 1_010, 1_020), began(tid(0, 2), 1_030)]), []);
  assert.equal(reuse.pooled, null, 'incrementing so far');
  const observed = reuse.pass([endTxn(tid(0, 2), 2_010), markers(tid(0, 2), 2_010, 2_020), began(tid(0, 1), 2_030)]);
  assert.deepEqual(observed, [], 'checkpoint 1 was complete, and is not taken: the naming is pooled');
  assert.match(reuse.pooled ?? '', /orders-sink-0-1 began a transaction again after one was committed under it/);
  assert.deepEqual(reuse.checkpoint(2, true, 2_000), [], 'completions are ignored too');

  // INCREMENTING after a restore: the lingering transaction of an id aborted, the same id begun
  // again (not committed before): still incrementing, and measured.
  const restore = tracker();
  restore.pass([began(tid(0, 7), 6_000), endTxn(tid(0, 7), 6_500, 'aborted'), markers(tid(0, 7), 6_500, 6_510, false), began(tid(0, 7), 6_600)]);
  assert.equal(restore.pooled, null);
  restore.checkpoint(7, true, 7_000);
  restore.pass([endTxn(tid(0, 7), 7_010), markers(tid(0, 7), 7_010, 7_050)]);
  assert.deepEqual(restore.pass([]), [{ checkpointId: 7, seconds: 0.05, transactions: 1, from: 'checkpoint' }]);
  // Another prefix's 0 is not this sink's.
  const other = tracker();
  other.pass([began('orders-sinkX-0-0', 1)]);
  assert.equal(other.pooled, null);
});
