// Events from successive __transaction_state states of one transactional id
// (src/coordinator/events.ts): sequences as the coordinator writes them, under TV0/1 and TV2, with
// the client's commit and abort, a timeout abort, a fencing by a new instance and an expiry.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { TRANSACTION_STATES, type TransactionStateName, type TxnLogValue } from '../../../src/kafka/txn-log.js';
import { abortOutcome, clientEpochBump, coordinatorBumped, pastTimeout, transitionEvents, type TxnEvent } from '../../../src/coordinator/events.js';

const ID = 'orders-7';
const T0 = 1_700_000_000_000;

function st(state: TransactionStateName, over: Partial<TxnLogValue> = {}): TxnLogValue {
  return {
    version: 1,
    producerId: 1000,
    previousProducerId: -1,
    nextProducerId: -1,
    nextProducerEpoch: -1,
    producerEpoch: 3,
    transactionTimeoutMs: 60_000,
    stateId: TRANSACTION_STATES.indexOf(state),
    state,
    partitions: state === 'Ongoing' || state.startsWith('Prepare') ? [{ topic: 'out', partitionIds: [0] }] : null,
    lastUpdateTimestampMs: T0,
    startTimestampMs: state === 'Empty' ? -1 : T0,
    clientTransactionVersion: 0,
    unknownTags: [],
    ...over,
  };
}

/** Every event of a sequence of states, each against the one before it. */
function run(states: (TxnLogValue | null)[], first?: TxnLogValue): TxnEvent[] {
  const out: TxnEvent[] = [];
  let before = first;
  for (const [i, s] of states.entries()) {
    out.push(...transitionEvents(ID, before, s, T0 + 100_000 + i));
    before = s ?? undefined;
  }
  return out;
}

const common = (s: TxnLogValue) => ({ transactionalId: ID, producerId: s.producerId, producerEpoch: s.producerEpoch, transactionVersion: s.clientTransactionVersion, atMs: s.lastUpdateTimestampMs });

describe('TV0/1: the client commits and aborts', () => {
  test('Empty → Ongoing → PrepareCommit → CompleteCommit: began, ended committed with its duration, completed with its completion time', () => {
    const empty = st('Empty', { lastUpdateTimestampMs: T0 - 500 });
    const ongoing = st('Ongoing', { startTimestampMs: T0, lastUpdateTimestampMs: T0 });
    const more = st('Ongoing', { startTimestampMs: T0, lastUpdateTimestampMs: T0 + 40, partitions: [{ topic: 'out', partitionIds: [0, 1] }] });
    const prepare = st('PrepareCommit', { startTimestampMs: T0, lastUpdateTimestampMs: T0 + 250 });
    const complete = st('CompleteCommit', { startTimestampMs: T0, lastUpdateTimestampMs: T0 + 262, partitions: null });
    assert.deepEqual(run([empty, ongoing, more, prepare, complete]), [
      { ...common(ongoing), kind: 'began', startedAtMs: T0 },
      { ...common(prepare), kind: 'ended', outcome: 'committed', byClient: true, startedAtMs: T0, durationMs: 250 },
      { ...common(complete), kind: 'completed', committed: true, decidedAtMs: T0 + 250, completionMs: 12 },
    ]);
  });

  test('the client aborts (same epoch): ended aborted by the client, completed not committed', () => {
    const ongoing = st('Ongoing', { startTimestampMs: T0, lastUpdateTimestampMs: T0 + 5 });
    const prepare = st('PrepareAbort', { startTimestampMs: T0, lastUpdateTimestampMs: T0 + 900 });
    const complete = st('CompleteAbort', { startTimestampMs: T0, lastUpdateTimestampMs: T0 + 903 });
    assert.deepEqual(run([prepare, complete], ongoing), [
      { ...common(prepare), kind: 'ended', outcome: 'aborted', byClient: true, startedAtMs: T0, durationMs: 900 },
      { ...common(complete), kind: 'completed', committed: false, decidedAtMs: T0 + 900, completionMs: 3 },
    ]);
  });

  test('a second transaction after CompleteCommit begins again; one from nothing known begins too', () => {
    const done = st('CompleteCommit', { lastUpdateTimestampMs: T0 });
    const next = st('Ongoing', { startTimestampMs: T0 + 1000, lastUpdateTimestampMs: T0 + 1000 });
    assert.deepEqual(run([next], done), [{ ...common(next), kind: 'began', startedAtMs: T0 + 1000 }]);
    assert.deepEqual(run([next]), [{ ...common(next), kind: 'began', startedAtMs: T0 + 1000 }]);
    assert.deepEqual(run([next], st('CompleteAbort')), [{ ...common(next), kind: 'began', startedAtMs: T0 + 1000 }]);
  });

  test('Ongoing again with another start (a transaction whose end was not seen) begins a new one', () => {
    const a = st('Ongoing', { startTimestampMs: T0 });
    const b = st('Ongoing', { startTimestampMs: T0 + 1, lastUpdateTimestampMs: T0 + 1 });
    assert.deepEqual(run([b], a), [{ ...common(b), kind: 'began', startedAtMs: T0 + 1 }]);
  });

  test('a Prepare or Complete state written again is no new event; Complete after Ongoing or nothing is none', () => {
    const pc = st('PrepareCommit', { lastUpdateTimestampMs: T0 + 10 });
    assert.deepEqual(run([pc], pc), []);
    const pa = st('PrepareAbort', { lastUpdateTimestampMs: T0 + 10 });
    assert.deepEqual(run([pa], pa), []);
    assert.deepEqual(run([st('CompleteCommit')], st('CompleteCommit')), []);
    assert.deepEqual(run([st('CompleteCommit')], st('Ongoing')), []);
    assert.deepEqual(run([st('CompleteAbort')]), []);
    assert.deepEqual(run([st('CompleteAbort')], st('Empty')), []);
  });

  test('a Prepare state with no Ongoing seen still gives the duration from its own start', () => {
    const pc = st('PrepareCommit', { startTimestampMs: T0, lastUpdateTimestampMs: T0 + 77 });
    assert.deepEqual(run([pc]), [{ ...common(pc), kind: 'ended', outcome: 'committed', byClient: true, startedAtMs: T0, durationMs: 77 }]);
  });

  test('durations never go negative (a clock step between coordinators)', () => {
    const pc = st('PrepareCommit', { startTimestampMs: T0, lastUpdateTimestampMs: T0 - 5 });
    const cc = st('CompleteCommit', { lastUpdateTimestampMs: T0 - 9 });
    const ev = run([pc, cc], st('Ongoing'));
    assert.equal((ev[0] as { durationMs: number }).durationMs, 0);
    assert.equal((ev[1] as { completionMs: number }).completionMs, 0);
  });
});

describe('the coordinator aborts on timeout', () => {
  test('TV0/1: PrepareAbort with a bumped epoch after start + timeout: aborted_timeout, not by the client, no fencing', () => {
    const ongoing = st('Ongoing', { startTimestampMs: T0, transactionTimeoutMs: 10_000 });
    const prepare = st('PrepareAbort', { startTimestampMs: T0, transactionTimeoutMs: 10_000, producerEpoch: 4, lastUpdateTimestampMs: T0 + 12_000 });
    const complete = st('CompleteAbort', { producerEpoch: 4, lastUpdateTimestampMs: T0 + 12_020 });
    assert.deepEqual(run([prepare, complete], ongoing), [
      { ...common(prepare), kind: 'ended', outcome: 'aborted_timeout', byClient: false, startedAtMs: T0, durationMs: 12_000 },
      { ...common(complete), kind: 'completed', committed: false, decidedAtMs: T0 + 12_000, completionMs: 20 },
    ]);
  });

  test('TV2: the timeout abort (epoch +2) and one bumped like an EndTxn (+1) both after the timeout: aborted_timeout', () => {
    const ongoing = st('Ongoing', { clientTransactionVersion: 2, transactionTimeoutMs: 10_000 });
    for (const epoch of [4, 5]) {
      const prepare = st('PrepareAbort', { clientTransactionVersion: 2, transactionTimeoutMs: 10_000, producerEpoch: epoch, lastUpdateTimestampMs: T0 + 10_001 });
      assert.deepEqual(run([prepare], ongoing), [{ ...common(prepare), kind: 'ended', outcome: 'aborted_timeout', byClient: false, startedAtMs: T0, durationMs: 10_001 }]);
    }
  });

  test('the same epoch after the timeout is the client\'s own late abort (TV0/1); TV2 +1 before the timeout is the client\'s', () => {
    const prepare = st('PrepareAbort', { transactionTimeoutMs: 10_000, lastUpdateTimestampMs: T0 + 20_000 });
    assert.equal(abortOutcome(st('Ongoing', { transactionTimeoutMs: 10_000 }), prepare), 'aborted');
    const tv2 = st('PrepareAbort', { clientTransactionVersion: 2, producerEpoch: 4, transactionTimeoutMs: 10_000, lastUpdateTimestampMs: T0 + 10_000 });
    assert.equal(abortOutcome(st('Ongoing', { clientTransactionVersion: 2, transactionTimeoutMs: 10_000 }), tv2), 'aborted');
  });

  test('a PrepareAbort past its timeout with no Ongoing seen is the timeout; before it, a client abort', () => {
    assert.equal(abortOutcome(undefined, st('PrepareAbort', { transactionTimeoutMs: 1000, lastUpdateTimestampMs: T0 + 1001 })), 'aborted_timeout');
    assert.equal(abortOutcome(undefined, st('PrepareAbort', { transactionTimeoutMs: 1000, lastUpdateTimestampMs: T0 + 1000 })), 'aborted');
  });

  test('pastTimeout: strictly after start + timeout, as the coordinator checks it', () => {
    assert.equal(pastTimeout(st('PrepareAbort', { transactionTimeoutMs: 1000, lastUpdateTimestampMs: T0 + 1000 })), false);
    assert.equal(pastTimeout(st('PrepareAbort', { transactionTimeoutMs: 1000, lastUpdateTimestampMs: T0 + 1001 })), true);
  });
});

describe('TV2: every EndTxn bumps the epoch', () => {
  test('back-to-back commits, through an exhausted epoch (a new producer id at the CompleteCommit): each PrepareCommit counted once; PrepareCommit follows only Ongoing (TransactionMetadata), so PrepareCommit → PrepareCommit is the same state read again', () => {
    const tv2 = { clientTransactionVersion: 2 };
    const states: TxnLogValue[] = [];
    let pid = 1000;
    let epoch = 32_763;
    for (let i = 0; i < 5; i++) {
      const start = T0 + i * 100;
      states.push(st('Ongoing', { ...tv2, producerId: pid, producerEpoch: epoch, startTimestampMs: start, lastUpdateTimestampMs: start }));
      // Kafka's EndTxn: the epoch bumped in the PrepareCommit; at Short.MAX_VALUE - 1 a new producer id is taken at the CompleteCommit, epoch 0.
      const exhausted = epoch >= 32_766;
      states.push(st('PrepareCommit', { ...tv2, producerId: pid, producerEpoch: epoch + 1, nextProducerId: exhausted ? 2000 : -1, startTimestampMs: start, lastUpdateTimestampMs: start + 20 }));
      if (exhausted) [pid, epoch] = [2000, 0];
      else epoch++;
      states.push(st('CompleteCommit', { ...tv2, producerId: pid, producerEpoch: epoch, startTimestampMs: start, lastUpdateTimestampMs: start + 25 }));
    }
    const ended = run(states, st('Empty', { ...tv2, producerEpoch: 32_763 })).filter((e) => e.kind === 'ended');
    assert.deepEqual(ended.map((e) => e.kind === 'ended' && e.outcome), ['committed', 'committed', 'committed', 'committed', 'committed']);
    assert.deepEqual(ended.map((e) => [e.producerId, e.producerEpoch]), [[1000, 32_764], [1000, 32_765], [1000, 32_766], [1000, 32_767], [2000, 1]]);
    // The same PrepareCommit read twice is one commit.
    assert.equal(run([states[1]!, states[1]!, states[2]!], states[0]).filter((e) => e.kind === 'ended').length, 1);
  });

  test('commit with epoch +1: committed by the client, no fencing; the next transaction keeps the new epoch', () => {
    const ongoing = st('Ongoing', { clientTransactionVersion: 2, producerEpoch: 7 });
    const prepare = st('PrepareCommit', { clientTransactionVersion: 2, producerEpoch: 8, lastUpdateTimestampMs: T0 + 30 });
    const complete = st('CompleteCommit', { clientTransactionVersion: 2, producerEpoch: 8, lastUpdateTimestampMs: T0 + 34 });
    const next = st('Ongoing', { clientTransactionVersion: 2, producerEpoch: 8, startTimestampMs: T0 + 50, lastUpdateTimestampMs: T0 + 50 });
    assert.deepEqual(run([prepare, complete, next], ongoing), [
      { ...common(prepare), kind: 'ended', outcome: 'committed', byClient: true, startedAtMs: T0, durationMs: 30 },
      { ...common(complete), kind: 'completed', committed: true, decidedAtMs: T0 + 30, completionMs: 4 },
      { ...common(next), kind: 'began', startedAtMs: T0 + 50 },
    ]);
  });

  test('the client aborts with epoch +1 before the timeout: aborted by the client', () => {
    const prepare = st('PrepareAbort', { clientTransactionVersion: 2, producerEpoch: 8, lastUpdateTimestampMs: T0 + 30 });
    assert.deepEqual(run([prepare], st('Ongoing', { clientTransactionVersion: 2, producerEpoch: 7 })), [
      { ...common(prepare), kind: 'ended', outcome: 'aborted', byClient: true, startedAtMs: T0, durationMs: 30 },
    ]);
  });

  test('an abort bumped by 2 before the timeout is a fencing under TV2; by 1 under TV0/1', () => {
    const tv2 = st('PrepareAbort', { clientTransactionVersion: 2, producerEpoch: 9, lastUpdateTimestampMs: T0 + 30 });
    assert.equal(abortOutcome(st('Ongoing', { clientTransactionVersion: 2, producerEpoch: 7 }), tv2), 'fenced');
    assert.equal(abortOutcome(st('Ongoing', { producerEpoch: 7 }), st('PrepareAbort', { producerEpoch: 8, lastUpdateTimestampMs: T0 + 30 })), 'fenced');
  });

  test('clientEpochBump and coordinatorBumped', () => {
    assert.equal(clientEpochBump(0), 0);
    assert.equal(clientEpochBump(1), 0);
    assert.equal(clientEpochBump(2), 1);
    assert.equal(coordinatorBumped(st('Ongoing'), st('PrepareAbort')), false);
    assert.equal(coordinatorBumped(st('Ongoing'), st('PrepareAbort', { producerEpoch: 4 })), true);
    assert.equal(coordinatorBumped(st('Ongoing'), st('PrepareAbort', { producerId: 1001, producerEpoch: 0 })), true);
    assert.equal(coordinatorBumped(st('Ongoing', { clientTransactionVersion: 2 }), st('PrepareAbort', { clientTransactionVersion: 2, producerEpoch: 4 })), false);
    assert.equal(coordinatorBumped(st('Ongoing', { clientTransactionVersion: 2 }), st('PrepareAbort', { clientTransactionVersion: 2, producerEpoch: 5 })), true);
  });
});

describe('a new instance fences the old one', () => {
  test('TV0/1: InitProducerId while Ongoing: PrepareAbort (epoch +1, before the timeout) → ended fenced + fenced, then CompleteAbort, then Empty +2 is no second fencing', () => {
    const ongoing = st('Ongoing', { producerEpoch: 3, lastUpdateTimestampMs: T0 + 10 });
    const prepare = st('PrepareAbort', { producerEpoch: 4, lastUpdateTimestampMs: T0 + 2000 });
    const complete = st('CompleteAbort', { producerEpoch: 4, lastUpdateTimestampMs: T0 + 2010 });
    const empty = st('Empty', { producerEpoch: 5, lastUpdateTimestampMs: T0 + 2100 });
    assert.deepEqual(run([prepare, complete, empty], ongoing), [
      { ...common(prepare), kind: 'ended', outcome: 'fenced', byClient: false, startedAtMs: T0, durationMs: 2000 },
      { ...common(prepare), kind: 'fenced', previousProducerId: 1000, previousProducerEpoch: 3 },
      { ...common(complete), kind: 'completed', committed: false, decidedAtMs: T0 + 2000, completionMs: 10 },
    ]);
  });

  test('PrepareEpochFence written: ended fenced + fenced; the PrepareAbort after it adds nothing; CompleteAbort completes', () => {
    const ongoing = st('Ongoing', { producerEpoch: 3 });
    const fence = st('PrepareEpochFence', { producerEpoch: 4, lastUpdateTimestampMs: T0 + 500 });
    const prepare = st('PrepareAbort', { producerEpoch: 4, lastUpdateTimestampMs: T0 + 501 });
    const complete = st('CompleteAbort', { producerEpoch: 4, lastUpdateTimestampMs: T0 + 520 });
    assert.deepEqual(run([fence, prepare, complete], ongoing), [
      { ...common(fence), kind: 'ended', outcome: 'fenced', byClient: false, startedAtMs: T0, durationMs: 500 },
      { ...common(fence), kind: 'fenced', previousProducerId: 1000, previousProducerEpoch: 3 },
      { ...common(complete), kind: 'completed', committed: false, decidedAtMs: T0 + 501, completionMs: 19 },
    ]);
    assert.equal(abortOutcome(fence, prepare), 'fenced');
  });

  test('PrepareEpochFence with nothing seen before: previous producer unknown (-1)', () => {
    const fence = st('PrepareEpochFence', { lastUpdateTimestampMs: T0 + 5 });
    assert.deepEqual(run([fence]), [
      { ...common(fence), kind: 'ended', outcome: 'fenced', byClient: false, startedAtMs: T0, durationMs: 5 },
      { ...common(fence), kind: 'fenced', previousProducerId: -1, previousProducerEpoch: -1 },
    ]);
  });

  test('a new producer id while Ongoing (epoch exhausted): fenced', () => {
    const prepare = st('PrepareAbort', { producerId: 2000, producerEpoch: 0, lastUpdateTimestampMs: T0 + 50 });
    const ev = run([prepare], st('Ongoing', { producerEpoch: 32766 }));
    assert.deepEqual(ev.map((e) => e.kind), ['ended', 'fenced']);
    assert.deepEqual(ev[1], { ...common(prepare), kind: 'fenced', previousProducerId: 1000, previousProducerEpoch: 32766 });
  });

  test('Empty with a bump straight after Ongoing: fenced; Empty after Empty, or the same epoch after Ongoing: nothing', () => {
    const empty = st('Empty', { producerEpoch: 5, lastUpdateTimestampMs: T0 + 9 });
    assert.deepEqual(run([empty], st('Ongoing')), [{ ...common(empty), kind: 'fenced', previousProducerId: 1000, previousProducerEpoch: 3 }]);
    assert.deepEqual(run([empty], st('Empty')), []);
    assert.deepEqual(run([empty], st('CompleteCommit')), []);
    assert.deepEqual(run([st('Empty')], st('Ongoing')), []);
    assert.deepEqual(run([empty]), []);
  });
});

describe('expiry', () => {
  test('a tombstone: expired at the record\'s time, with whether a transaction was open', () => {
    const done = st('CompleteCommit', { lastUpdateTimestampMs: T0 });
    assert.deepEqual(transitionEvents(ID, done, null, T0 + 7 * 86_400_000), [{ ...common(done), atMs: T0 + 7 * 86_400_000, kind: 'expired', wasOpen: false }]);
    const open = st('Ongoing');
    assert.deepEqual(transitionEvents(ID, open, null, T0 + 1), [{ ...common(open), atMs: T0 + 1, kind: 'expired', wasOpen: true }]);
  });

  test('a tombstone of an id never seen, and the Dead state, give nothing', () => {
    assert.deepEqual(transitionEvents(ID, undefined, null, T0), []);
    assert.deepEqual(transitionEvents(ID, st('CompleteCommit'), st('Dead'), T0), []);
  });
});

describe('Kafka 4.x writes its own aborts with version 2, also for a classic client', () => {
  // Seen on 4.4.0: a kafkajs (v0) producer's Ongoing epoch 0 v0, a new instance's InitProducerId,
  // then PrepareAbort epoch 1 v2 and CompleteAbort epoch 1 v2 written by the coordinator.
  test('an epoch bump of one from a v0 Ongoing to a v2 PrepareAbort before the timeout is a fencing', () => {
    const ongoing = st('Ongoing', { producerEpoch: 0, clientTransactionVersion: 0, startTimestampMs: T0, lastUpdateTimestampMs: T0 });
    const prepare = st('PrepareAbort', { producerEpoch: 1, clientTransactionVersion: 2, startTimestampMs: T0, lastUpdateTimestampMs: T0 + 21 });
    assert.equal(coordinatorBumped(ongoing, prepare), true);
    assert.deepEqual(run([prepare], ongoing), [
      { ...common(prepare), kind: 'ended', outcome: 'fenced', byClient: false, startedAtMs: T0, durationMs: 21 },
      { ...common(prepare), kind: 'fenced', previousProducerId: 1000, previousProducerEpoch: 0 },
    ]);
  });

  test('the same past the timeout is the timeout abort', () => {
    const ongoing = st('Ongoing', { producerEpoch: 0, clientTransactionVersion: 0, startTimestampMs: T0, lastUpdateTimestampMs: T0, transactionTimeoutMs: 3000 });
    const prepare = st('PrepareAbort', { producerEpoch: 1, clientTransactionVersion: 2, startTimestampMs: T0, lastUpdateTimestampMs: T0 + 3725, transactionTimeoutMs: 3000 });
    assert.deepEqual(run([prepare], ongoing), [{ ...common(prepare), kind: 'ended', outcome: 'aborted_timeout', byClient: false, startedAtMs: T0, durationMs: 3725 }]);
  });

  test('a TV2 client (v2 Ongoing) bumping by one is its own EndTxn', () => {
    const ongoing = st('Ongoing', { producerEpoch: 4, clientTransactionVersion: 2, startTimestampMs: T0, lastUpdateTimestampMs: T0 });
    const prepare = st('PrepareAbort', { producerEpoch: 5, clientTransactionVersion: 2, startTimestampMs: T0, lastUpdateTimestampMs: T0 + 9 });
    assert.equal(coordinatorBumped(ongoing, prepare), false);
    assert.deepEqual(run([prepare], ongoing), [{ ...common(prepare), kind: 'ended', outcome: 'aborted', byClient: true, startedAtMs: T0, durationMs: 9 }]);
  });
});

describe('every pair of successive states', () => {
  test('PrepareEpochFence straight to CompleteAbort (no PrepareAbort written): completed, decided at the fence', () => {
    const fence = st('PrepareEpochFence', { producerEpoch: 4, lastUpdateTimestampMs: T0 + 500 });
    const complete = st('CompleteAbort', { producerEpoch: 4, lastUpdateTimestampMs: T0 + 530 });
    assert.deepEqual(run([complete], fence), [{ ...common(complete), kind: 'completed', committed: false, decidedAtMs: T0 + 500, completionMs: 30 }]);
    assert.deepEqual(run([fence], fence), []);
  });

  test('a new transaction in the same millisecond as the last one\'s start, after it completed: began', () => {
    const next = st('Ongoing', { startTimestampMs: T0 });
    for (const done of ['CompleteCommit', 'CompleteAbort', 'Empty'] as const) {
      assert.deepEqual(run([next], st(done, { startTimestampMs: T0 })), [{ ...common(next), kind: 'began', startedAtMs: T0 }], done);
    }
  });

  // Same producer id and epoch, before any timeout: which events each state gives after each other
  // state (rows: before, '-' = not known yet; columns: after, null = a tombstone).
  const AFTER = [...TRANSACTION_STATES, null] as const;
  const MATRIX: Record<string, string[]> = {
    // columns: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence, tombstone
    '-': ['', 'began', 'ended:committed', 'ended:aborted', '', '', '', 'ended:fenced fenced', ''],
    Empty: ['', 'began', 'ended:committed', 'ended:aborted', '', '', '', 'ended:fenced fenced', 'expired'],
    Ongoing: ['', '', 'ended:committed', 'ended:aborted', '', '', '', 'ended:fenced fenced', 'expired:open'],
    PrepareCommit: ['', '', '', 'ended:aborted', 'completed', 'completed', '', 'ended:fenced fenced', 'expired:open'],
    PrepareAbort: ['', '', 'ended:committed', '', 'completed', 'completed', '', '', 'expired:open'],
    CompleteCommit: ['', 'began', 'ended:committed', 'ended:aborted', '', '', '', 'ended:fenced fenced', 'expired'],
    CompleteAbort: ['', 'began', 'ended:committed', 'ended:aborted', '', '', '', 'ended:fenced fenced', 'expired'],
    Dead: ['', 'began', 'ended:committed', 'ended:aborted', '', '', '', 'ended:fenced fenced', 'expired'],
    PrepareEpochFence: ['', '', 'ended:committed', '', 'completed', 'completed', '', '', 'expired:open'],
  };

  const describeEvents = (ev: TxnEvent[]) =>
    ev.map((e) => (e.kind === 'ended' ? `ended:${e.outcome}` : e.kind === 'expired' ? (e.wasOpen ? 'expired:open' : 'expired') : e.kind)).join(' ');

  test('the events of each transition, by table', () => {
    for (const [row, expected] of Object.entries(MATRIX)) {
      const before = row === '-' ? undefined : st(row as TransactionStateName);
      const got = AFTER.map((a) => describeEvents(transitionEvents(ID, before, a === null ? null : st(a, { lastUpdateTimestampMs: T0 + 10 }), T0 + 20)));
      assert.deepEqual(got, expected, `after ${row}`);
    }
  });
});
