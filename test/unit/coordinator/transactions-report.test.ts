// The transactions service's report (src/coordinator/transactions-report.ts): the topN oldest open
// transactions, every hanging one with its open transaction where the coordinator knows it, the
// hanging ones new since the last report, and the /readyz detail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newlyHanging, openView, passReport, readyDetail } from '../../../src/coordinator/transactions-report.js';
import type { HangingTransaction, OpenTransaction } from '../../../src/coordinator/hanging.js';

const now = 1_700_000_000_000;
const open = (id: string, producerId: number, ageMs: number, extra: Partial<OpenTransaction> = {}): OpenTransaction => ({
  transactionalId: id,
  producerId,
  producerEpoch: 3,
  state: 'Ongoing',
  startTimestampMs: now - ageMs,
  transactionTimeoutMs: 60_000,
  partitions: [{ topic: 'orders', partition: 0 }],
  ...extra,
});
const hanging = (id: string | null, producerId: number, partition: number, ageMs: number): HangingTransaction => ({
  topic: 'orders',
  partition,
  kind: id === null ? 'unknown-to-coordinator' : 'idle',
  transactionalId: id,
  producerId,
  producerEpoch: 3,
  state: id === null ? null : 'Ongoing',
  startOffset: 40n,
  heldBack: 7n,
  ageMs,
  idleMs: 30_000,
  abortAtMs: id === null ? null : now + 5_000,
  partitions: [{ topic: 'orders', partition }],
});
const application = (id: string) => id.split('-')[0]!;

test('openView: named by its application, aged from its start, due to abort at start + timeout unless prepared', () => {
  const v = openView(open('billing-1', 7, 20_000), 'billing', now);
  assert.equal(v.application, 'billing');
  assert.equal(v.ageMs, 20_000);
  assert.equal(v.startedAt, new Date(now - 20_000).toISOString());
  assert.equal(v.abortDue, 'in 40s');
  assert.equal(openView(open('billing-1', 7, 20_000, { prepared: true }), 'billing', now).abortDue, 'never');
  assert.equal(openView(open('billing-1', 7, -5), 'billing', now).ageMs, 0, 'a start after now (clock skew) is age 0');
});

test('passReport: the topN oldest open transactions oldest first; a hanging one with its open transaction, or unknown', () => {
  const txns = [open('a-1', 1, 1_000), open('b-1', 2, 90_000), open('c-1', 3, 50_000)];
  const r = passReport({ now, source: 'poll', problem: 'no Read on __transaction_state', liveIds: 9, open: txns, hanging: [hanging('b-1', 2, 0, 90_000), hanging(null, 99, 1, 12_000)], topN: 2, application });
  assert.equal(r.at, new Date(now).toISOString());
  assert.equal(r.source, 'poll');
  assert.equal(r.problem, 'no Read on __transaction_state');
  assert.equal(r.liveIds, 9);
  assert.equal(r.open, 3);
  assert.deepEqual(r.oldestOpen.map((o) => o.transactionalId), ['b-1', 'c-1']);
  const [known, unknown] = r.hanging;
  assert.equal(known!.application, 'b');
  assert.equal(known!.transactionalId, 'b-1');
  assert.equal(known!.startOffset, '40');
  assert.equal(known!.heldBack, '7');
  assert.equal(known!.kind, 'idle');
  assert.equal(known!.abortDue, 'in 5s', 'the hanging transaction\'s own abort time');
  assert.equal(unknown!.application, '(unknown)');
  assert.equal(unknown!.transactionalId, '');
  assert.equal(unknown!.state, 'unknown');
  assert.equal(unknown!.producerId, 99);
  assert.equal(unknown!.startedAt, new Date(now - 12_000).toISOString());
  assert.equal(unknown!.abortDue, 'never');
});

test('newlyHanging: those the previous report did not show on the same partition by the same producer', () => {
  const before = passReport({ now, source: 'log', problem: null, liveIds: 1, open: [], hanging: [hanging('a-1', 1, 0, 5_000)], topN: 5, application });
  const now2 = [hanging('a-1', 1, 0, 6_000), hanging('a-1', 1, 1, 6_000), hanging('a-2', 2, 0, 6_000)];
  assert.deepEqual(newlyHanging(now2, before).map((h) => `${h.producerId}/${h.partition}`), ['1/1', '2/0']);
  assert.equal(newlyHanging(now2, undefined).length, 3, 'without a previous report every one is new');
});

test('readyDetail: ids, open, the first three hanging by name, and the source', () => {
  const r = passReport({ now, source: 'log', problem: null, liveIds: 4, open: [], hanging: [0, 1, 2, 3].map((p) => hanging(`a-${p}`, p, p, 1_000)), topN: 5, application });
  assert.equal(readyDetail(r), '4 transactional ids, 0 open, 4 hanging (a-0 on orders-0, a-1 on orders-1, a-2 on orders-2, …); from __transaction_state');
  const polled = { ...r, source: 'poll' as const, hanging: r.hanging.slice(0, 1), problem: 'denied' };
  assert.equal(readyDetail(polled), '4 transactional ids, 0 open, 1 hanging (a-0 on orders-0); polling the coordinators (denied)');
  assert.equal(readyDetail({ ...r, hanging: [], problem: null, source: 'poll' }), '4 transactional ids, 0 open; polling the coordinators (log not read)');
});
