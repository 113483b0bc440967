// Telling a fencing from the client's own abort under transaction version 2 (KIP-890). Pure: log
// states and times in, events out; the caller passes the time.
//
// Under TV2 the coordinator writes the same states for both: a new instance's InitProducerId while
// a transaction is open makes the coordinator fence the old producer (epoch + 1) and abort
// (PrepareAbort, CompleteAbort at that epoch); the client's own abort bumps the epoch by one as
// well (seen on Kafka 4.4.0 with the Java client). What tells them apart is what follows. The new
// instance's InitProducerId was answered CONCURRENT_TRANSACTIONS while the abort ran and is retried
// every retry.backoff.ms (100 ms by default), so the coordinator writes Empty with the epoch bumped
// once more right after the CompleteAbort (105 ms with the Java client, 54 ms with kafkajs, on
// 4.4.0). After a client's own abort comes its next transaction (Ongoing), or nothing for a while.
// So a TV2 client abort is held until the next state of its id, or until FENCE_WINDOW_MS after its
// last state has passed: an Empty with a bumped epoch (or a new producer id) within the window after
// the CompleteAbort makes it a fencing, anything else a client abort. A producer that aborts, closes
// and is restarted within the window is taken for a fencing: the one case this cannot tell.
import type { TxnLogValue } from '../kafka/txn-log.js';
import type { TxnEvent } from './events.js';

/** How soon after a TV2 abort's markers a new instance's InitProducerId makes the abort a fencing. */
export const FENCE_WINDOW_MS = 1000;

type Ended = Extract<TxnEvent, { kind: 'ended' }>;

interface Held {
  ended: Ended;
  /** The time of the id's last state (the abort's decision, then its CompleteAbort). */
  lastAtMs: number;
  /** The producer id and epoch of that state. */
  producerId: number;
  producerEpoch: number;
  completed: boolean;
}

export class HeldAborts {
  private readonly held = new Map<string, Held>();

  /** The events to count now: every event but a TV2 client abort, which is held. */
  take(ev: TxnEvent): TxnEvent[] {
    if (ev.kind !== 'ended' || ev.outcome !== 'aborted' || ev.transactionVersion < 2) return [ev];
    this.held.set(ev.transactionalId, { ended: ev, lastAtMs: ev.atMs, producerId: ev.producerId, producerEpoch: ev.producerEpoch, completed: false });
    return [];
  }

  /**
   * The next state of an id (`after` null: a tombstone): a held abort of the id released, as a
   * fencing (an Empty with the epoch bumped or a new producer id, within the window after the
   * CompleteAbort) or as the client's abort (anything else); its CompleteAbort keeps it held.
   */
  transition(transactionalId: string, after: TxnLogValue | null, logTimestampMs: number): TxnEvent[] {
    const h = this.held.get(transactionalId);
    if (!h) return [];
    if (after?.state === 'CompleteAbort' && !h.completed) {
      h.completed = true;
      h.lastAtMs = after.lastUpdateTimestampMs;
      return [];
    }
    this.held.delete(transactionalId);
    const at = after ? after.lastUpdateTimestampMs : logTimestampMs;
    const bumped = after !== null && (after.producerId !== h.producerId || after.producerEpoch > h.producerEpoch);
    if (after?.state === 'Empty' && h.completed && bumped && at - h.lastAtMs <= FENCE_WINDOW_MS) {
      const { transactionalId: id, transactionVersion } = h.ended;
      return [
        { ...h.ended, outcome: 'fenced', byClient: false },
        { kind: 'fenced', transactionalId: id, producerId: after.producerId, producerEpoch: after.producerEpoch, transactionVersion, atMs: at, previousProducerId: h.producerId, previousProducerEpoch: h.producerEpoch },
      ];
    }
    return [h.ended];
  }

  /** Held aborts whose window has passed by `nowMs` with no new state: the client's own aborts. */
  due(nowMs: number): TxnEvent[] {
    const out: TxnEvent[] = [];
    for (const [id, h] of this.held) {
      if (nowMs - h.lastAtMs <= FENCE_WINDOW_MS) continue;
      this.held.delete(id);
      out.push(h.ended);
    }
    return out;
  }

  /** Forget everything held (the log is read again from the beginning). */
  clear(): void {
    this.held.clear();
  }

  get size(): number {
    return this.held.size;
  }
}
