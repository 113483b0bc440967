// What happened to one transactional id between two successive states the transaction coordinator
// wrote for it in __transaction_state (src/kafka/txn-log.ts decodes them). Pure: two states in,
// events out; every time comes from the records themselves (lastUpdateTimestampMs: when the
// coordinator made the change; startTimestampMs: when the transaction began).
//
// How the coordinator moves an id (TransactionCoordinator / TransactionMetadata, Kafka 3.x and 4.x):
// - InitProducerId: Empty, with the epoch bumped (or a new producer id) each time an instance
//   (re)initialises the id. From a new instance while a transaction is Ongoing, the coordinator
//   first aborts the open transaction itself: it bumps the epoch (fencing the old instance; the
//   fence may be written as PrepareEpochFence) and writes PrepareAbort, then CompleteAbort.
// - The first AddPartitionsToTxn: Ongoing (startTimestampMs set).
// - EndTxn from the client: PrepareCommit / PrepareAbort (lastUpdateTimestampMs = the EndTxn), then,
//   once every partition has its marker, CompleteCommit / CompleteAbort.
// - The timeout (start + transaction.timeout.ms passed, checked every
//   transaction.abort.timed.out.transaction.cleanup.interval.ms): the coordinator aborts the
//   transaction, bumping the epoch, and writes PrepareAbort.
// - Under transaction version 2 (clientTransactionVersion 2, KIP-890) every EndTxn bumps the epoch
//   by one, the client's too: an epoch bump alone says nothing there.
// So a PrepareAbort is the coordinator's own (not the client's EndTxn) when its epoch went up by
// more than the client's EndTxn moves it (0 under TV0/1, 1 under TV2: the client's version is the
// Ongoing state's, since a 4.x coordinator writes its own aborts with version 2 even for a classic
// client) or its producer id changed; the coordinator's abort is a timeout when it came after
// start + timeout, else a fencing (under TV2 any abort after start + timeout is taken for the
// timeout). Under TV2 a fencing bumps the epoch by exactly one, like the client's own abort: this
// module calls it the client's abort, and src/coordinator/fence-window.ts tells the two apart by
// what follows (the new instance's InitProducerId right after the markers).
import { holdsLso, type TxnLogValue } from '../kafka/txn-log.js';

export type TxnOutcome = 'committed' | 'aborted' | 'aborted_timeout' | 'fenced';

interface EventBase {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  /** The client's transaction version (0, 1: classic; 2: KIP-890). */
  transactionVersion: number;
  /** When the coordinator wrote the state (lastUpdateTimestampMs; the record's time for a tombstone). */
  atMs: number;
}

export type TxnEvent =
  /** A transaction began (the first partition added): Ongoing after nothing open. */
  | (EventBase & { kind: 'began'; startedAtMs: number })
  /**
   * The transaction was decided: by the client's EndTxn (committed, aborted) or by the coordinator
   * (aborted_timeout, fenced). `durationMs`: began → decision.
   */
  | (EventBase & { kind: 'ended'; outcome: TxnOutcome; byClient: boolean; startedAtMs: number; durationMs: number })
  /** Every marker written (Complete*): `completionMs` is decision → markers written. */
  | (EventBase & { kind: 'completed'; committed: boolean; decidedAtMs: number; completionMs: number })
  /** A new producer instance took the id while a transaction was open: the old one is fenced. */
  | (EventBase & { kind: 'fenced'; previousProducerId: number; previousProducerEpoch: number })
  /** The id expired (tombstone): `wasOpen` when the coordinator still had a transaction open. */
  | (EventBase & { kind: 'expired'; wasOpen: boolean });

const PREPARED = new Set(['PrepareCommit', 'PrepareAbort', 'PrepareEpochFence']);

function base(transactionalId: string, v: TxnLogValue): EventBase {
  return { transactionalId, producerId: v.producerId, producerEpoch: v.producerEpoch, transactionVersion: v.clientTransactionVersion, atMs: v.lastUpdateTimestampMs };
}

/** The epoch bump a client's own EndTxn makes: 1 under TV2, none before. */
export function clientEpochBump(transactionVersion: number): number {
  return transactionVersion >= 2 ? 1 : 0;
}

/**
 * Did the coordinator (not the client) move the id from `before` to `after`: a new producer id, or
 * an epoch beyond the bump the client's own EndTxn makes. The client's version is `before`'s: a
 * Kafka 4.x coordinator writes its own aborts (timeout, fence) with version 2 even for a classic
 * client (seen on 4.4.0: Ongoing epoch 0 v0, then PrepareAbort epoch 1 v2).
 */
export function coordinatorBumped(before: TxnLogValue, after: TxnLogValue): boolean {
  if (after.producerId !== before.producerId) return true;
  return after.producerEpoch - before.producerEpoch > clientEpochBump(before.clientTransactionVersion);
}

/** The coordinator aborts a transaction on timeout once start + timeout has passed (TransactionCoordinator.abortTimedOutTransactions). */
export function pastTimeout(v: TxnLogValue): boolean {
  return v.lastUpdateTimestampMs > v.startTimestampMs + v.transactionTimeoutMs;
}

/** Why a PrepareAbort was written after `before` (the Ongoing state, or undefined when not seen). */
export function abortOutcome(before: TxnLogValue | undefined, prepare: TxnLogValue): TxnOutcome {
  if (before?.state === 'PrepareEpochFence') return 'fenced';
  const byCoordinator = before ? coordinatorBumped(before, prepare) : false;
  // Past the timeout under TV2 the coordinator's abort bumps the epoch like an EndTxn: it is taken
  // for the timeout (the client's own EndTxn that late is the rare case).
  if (pastTimeout(prepare) && (byCoordinator || !before || prepare.clientTransactionVersion >= 2)) return 'aborted_timeout';
  if (byCoordinator) return 'fenced';
  return 'aborted';
}

/**
 * The events of one transactional id going from `before` (undefined: not known yet) to `after`
 * (null: a tombstone, the id expired), `logTimestampMs` being the record's own time (used for a
 * tombstone, which carries no state).
 */
export function transitionEvents(transactionalId: string, before: TxnLogValue | undefined, after: TxnLogValue | null, logTimestampMs: number): TxnEvent[] {
  if (after === null) {
    if (!before) return [];
    return [{ ...base(transactionalId, before), atMs: logTimestampMs, kind: 'expired', wasOpen: holdsLso(before.state) }];
  }
  const b = base(transactionalId, after);
  const wasOpen = before !== undefined && holdsLso(before.state);
  switch (after.state) {
    case 'Ongoing': {
      // Ongoing → Ongoing with the same start: more partitions added to the same transaction.
      if (wasOpen && before.startTimestampMs === after.startTimestampMs) return [];
      return [{ ...b, kind: 'began', startedAtMs: after.startTimestampMs }];
    }
    case 'PrepareCommit': {
      if (before?.state === 'PrepareCommit') return [];
      return [{ ...b, kind: 'ended', outcome: 'committed', byClient: true, startedAtMs: after.startTimestampMs, durationMs: Math.max(0, after.lastUpdateTimestampMs - after.startTimestampMs) }];
    }
    case 'PrepareEpochFence':
    case 'PrepareAbort': {
      // The abort of a fence already reported, or the same state written again.
      if (before?.state === 'PrepareEpochFence' || before?.state === 'PrepareAbort') return [];
      const outcome: TxnOutcome = after.state === 'PrepareEpochFence' ? 'fenced' : abortOutcome(before, after);
      const ended: TxnEvent = { ...b, kind: 'ended', outcome, byClient: outcome === 'aborted', startedAtMs: after.startTimestampMs, durationMs: Math.max(0, after.lastUpdateTimestampMs - after.startTimestampMs) };
      if (outcome !== 'fenced') return [ended];
      return [ended, { ...b, kind: 'fenced', previousProducerId: before?.producerId ?? -1, previousProducerEpoch: before?.producerEpoch ?? -1 }];
    }
    case 'CompleteCommit':
    case 'CompleteAbort': {
      if (!before || !PREPARED.has(before.state)) return [];
      const decidedAtMs = before.lastUpdateTimestampMs;
      return [{ ...b, kind: 'completed', committed: after.state === 'CompleteCommit', decidedAtMs, completionMs: Math.max(0, after.lastUpdateTimestampMs - decidedAtMs) }];
    }
    case 'Empty': {
      // Empty straight after an open transaction: the coordinator's log lost the abort (never
      // written by Kafka); a new instance took the id.
      if (!wasOpen || !coordinatorBumped(before, after)) return [];
      return [{ ...b, kind: 'fenced', previousProducerId: before.producerId, previousProducerEpoch: before.producerEpoch }];
    }
    default:
      return [];
  }
}
