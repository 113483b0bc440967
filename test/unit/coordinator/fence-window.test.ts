// Telling a TV2 fencing from the client's own abort by what follows (src/coordinator/fence-window.ts):
// the states as Kafka 4.4.0 wrote them for a Java client fenced by a second instance
// (PrepareAbort and CompleteAbort at epoch + 1, Empty at epoch + 2 105 ms later) and for its own abort.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { TRANSACTION_STATES, type TransactionStateName, type TxnLogValue } from '../../../src/kafka/txn-log.js';
import { transitionEvents, type TxnEvent } from '../../../src/coordinator/events.js';
import { FENCE_WINDOW_MS, HeldAborts } from '../../../src/coordinator/fence-window.js';

const ID = 'app-0';
const T0 = 1_800_000_000_000;

function st(state: TransactionStateName, epoch: number, at: number, over: Partial<TxnLogValue> = {}): TxnLogValue {
  return {
    version: 1,
    producerId: 10,
    previousProducerId: -1,
    nextProducerId: -1,
    nextProducerEpoch: -1,
    producerEpoch: epoch,
    transactionTimeoutMs: 60_000,
    stateId: TRANSACTION_STATES.indexOf(state),
    state,
    partitions: null,
    lastUpdateTimestampMs: at,
    startTimestampMs: T0,
    clientTransactionVersion: 2,
    unknownTags: [],
    ...over,
  };
}

const abort = (over: Partial<Extract<TxnEvent, { kind: 'ended' }>> = {}): TxnEvent => ({
  kind: 'ended',
  outcome: 'aborted',
  byClient: true,
  transactionalId: ID,
  producerId: 10,
  producerEpoch: 1,
  transactionVersion: 2,
  atMs: T0 + 1750,
  startedAtMs: T0,
  durationMs: 1750,
  ...over,
});

describe('HeldAborts', () => {
  test('events other than a TV2 client abort pass at once', () => {
    const h = new HeldAborts();
    const classic = abort({ transactionVersion: 1 });
    const committed = abort({ outcome: 'committed' });
    const timeout = abort({ outcome: 'aborted_timeout', byClient: false });
    const began: TxnEvent = { kind: 'began', transactionalId: ID, producerId: 10, producerEpoch: 1, transactionVersion: 2, atMs: T0, startedAtMs: T0 };
    for (const ev of [classic, committed, timeout, began]) assert.deepEqual(h.take(ev), [ev]);
    assert.equal(h.size, 0);
  });

  test('a TV2 abort followed by its CompleteAbort and, 105 ms later, an Empty with the epoch bumped: a fencing', () => {
    const h = new HeldAborts();
    assert.deepEqual(h.take(abort()), []);
    assert.equal(h.size, 1);
    assert.deepEqual(h.transition(ID, st('CompleteAbort', 1, T0 + 1751), 0), [], 'the abort stays held through its markers');
    assert.deepEqual(h.transition(ID, st('Empty', 2, T0 + 1856), 0), [
      { ...abort(), outcome: 'fenced', byClient: false },
      { kind: 'fenced', transactionalId: ID, producerId: 10, producerEpoch: 2, transactionVersion: 2, atMs: T0 + 1856, previousProducerId: 10, previousProducerEpoch: 1 },
    ]);
    assert.equal(h.size, 0);
  });

  test('a new producer id instead of a bumped epoch is a fencing too', () => {
    const h = new HeldAborts();
    h.take(abort());
    h.transition(ID, st('CompleteAbort', 1, T0 + 1751), 0);
    const out = h.transition(ID, st('Empty', 0, T0 + 1800, { producerId: 11 }), 0);
    assert.deepEqual(out.map((e) => e.kind), ['ended', 'fenced']);
    assert.equal((out[0] as { outcome: string }).outcome, 'fenced');
  });

  test('an Empty at the window exactly is a fencing; one millisecond later the client aborted', () => {
    for (const [delay, outcome] of [
      [FENCE_WINDOW_MS, 'fenced'],
      [FENCE_WINDOW_MS + 1, 'aborted'],
    ] as const) {
      const h = new HeldAborts();
      h.take(abort());
      h.transition(ID, st('CompleteAbort', 1, T0 + 1751), 0);
      const out = h.transition(ID, st('Empty', 2, T0 + 1751 + delay), 0);
      assert.equal((out[0] as { outcome: string }).outcome, outcome, `after ${delay} ms`);
      assert.equal(out.length, outcome === 'fenced' ? 2 : 1);
    }
  });

  test('the next transaction (Ongoing) after the markers: the client aborted', () => {
    const h = new HeldAborts();
    h.take(abort());
    h.transition(ID, st('CompleteAbort', 1, T0 + 1751), 0);
    assert.deepEqual(h.transition(ID, st('Ongoing', 1, T0 + 1790), 0), [abort()]);
  });

  test('a bumped epoch within the window but not Empty (the next transaction): the client aborted', () => {
    const h = new HeldAborts();
    h.take(abort());
    h.transition(ID, st('CompleteAbort', 1, T0 + 1751), 0);
    assert.deepEqual(h.transition(ID, st('Ongoing', 2, T0 + 1790), 0), [abort()]);
  });

  test('an Empty without a bump, or straight after the PrepareAbort (no markers yet): the client aborted', () => {
    const h = new HeldAborts();
    h.take(abort());
    h.transition(ID, st('CompleteAbort', 1, T0 + 1751), 0);
    assert.deepEqual(h.transition(ID, st('Empty', 1, T0 + 1800), 0), [abort()]);
    h.take(abort());
    assert.deepEqual(h.transition(ID, st('Empty', 2, T0 + 1800), 0), [abort()]);
  });

  test('a second CompleteAbort is not the markers again: the abort is released', () => {
    const h = new HeldAborts();
    h.take(abort());
    h.transition(ID, st('CompleteAbort', 1, T0 + 1751), 0);
    assert.deepEqual(h.transition(ID, st('CompleteAbort', 1, T0 + 1760), 0), [abort()]);
  });

  test('a tombstone releases it as the client abort', () => {
    const h = new HeldAborts();
    h.take(abort());
    assert.deepEqual(h.transition(ID, null, T0 + 5000), [abort()]);
  });

  test('another id does not release it', () => {
    const h = new HeldAborts();
    h.take(abort());
    assert.deepEqual(h.transition('other', st('Empty', 2, T0 + 1800), 0), []);
    assert.equal(h.size, 1);
  });

  test('due: released as the client abort once the window passed since its last state, not before', () => {
    const h = new HeldAborts();
    h.take(abort());
    assert.deepEqual(h.due(T0 + 1750 + FENCE_WINDOW_MS), [], 'at the window exactly it is still held');
    h.transition(ID, st('CompleteAbort', 1, T0 + 2000), 0);
    assert.deepEqual(h.due(T0 + 1750 + FENCE_WINDOW_MS + 1), [], 'the window runs from the CompleteAbort');
    assert.deepEqual(h.due(T0 + 2000 + FENCE_WINDOW_MS + 1), [abort()]);
    assert.equal(h.size, 0);
    assert.deepEqual(h.due(T0 + 10_000_000), []);
  });

  test('clear forgets what is held', () => {
    const h = new HeldAborts();
    h.take(abort());
    h.take(abort({ transactionalId: 'b' }));
    assert.equal(h.size, 2);
    h.clear();
    assert.equal(h.size, 0);
    assert.deepEqual(h.due(T0 + 10_000_000), []);
  });

  test('commits are never held: TV2 commits, client aborts and a fencing in turn, as the transactions service feeds them (transition, then take); each commit counted at its PrepareCommit', () => {
    const h = new HeldAborts();
    const ongoing = (epoch: number, at: number) => st('Ongoing', epoch, at, { startTimestampMs: at, partitions: [{ topic: 'out', partitionIds: [0] }] });
    // Every EndTxn bumps the epoch (TV2); the fencing: an Empty bumped 105 ms after the CompleteAbort.
    const log: [TxnLogValue, string][] = [];
    let e = 0;
    let t = T0;
    const txn = (end: 'PrepareCommit' | 'PrepareAbort') => {
      log.push([ongoing(e, (t += 10)), ''], [st(end, e + 1, (t += 10), { startTimestampMs: t - 10 }), end], [st(end === 'PrepareCommit' ? 'CompleteCommit' : 'CompleteAbort', e + 1, (t += 2)), '']);
      e++;
    };
    txn('PrepareCommit');
    txn('PrepareAbort');
    txn('PrepareCommit');
    txn('PrepareCommit');
    txn('PrepareAbort');
    log.push([st('Empty', ++e, (t += 105), { startTimestampMs: -1 }), 'fence']);
    txn('PrepareCommit');
    txn('PrepareAbort');
    txn('PrepareCommit');
    const out: TxnEvent[] = [];
    let before: TxnLogValue | undefined = st('Empty', 0, T0 - 1, { startTimestampMs: -1 });
    for (const [after, what] of log) {
      const now = [...h.transition(ID, after, 0), ...transitionEvents(ID, before, after, 0).flatMap((ev) => h.take(ev))];
      const ended = now.filter((ev): ev is Extract<TxnEvent, { kind: 'ended' }> => ev.kind === 'ended');
      if (what === 'PrepareCommit') assert.ok(ended.some((ev) => ev.outcome === 'committed' && ev.atMs === after.lastUpdateTimestampMs), 'a commit is counted at its PrepareCommit');
      out.push(...now);
      before = after;
    }
    out.push(...h.due(t + FENCE_WINDOW_MS + 1));
    const outcomes = out.flatMap((ev) => (ev.kind === 'ended' ? [ev.outcome] : []));
    assert.deepEqual(outcomes, ['committed', 'aborted', 'committed', 'committed', 'fenced', 'committed', 'aborted', 'committed']);
    assert.equal(out.filter((ev) => ev.kind === 'fenced').length, 1);
    assert.equal(h.size, 0);
  });
});
