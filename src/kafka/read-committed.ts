// read_committed for every kafkajs consumer of this process. A read_committed fetch answers the
// records below the last stable offset together with the transactions among them that were
// aborted (producer id, first offset), and the consumer drops a transactional record while its
// producer has an aborted transaction open, up to that producer's abort marker. kafkajs 2.2.4
// (consumer/filterAbortedMessages.js) takes that list in the order the broker sends it, which is
// the order the transactions *ended* (the broker's transaction index is written at the abort
// marker), and opens at most one of them per record. Two aborted transactions on a partition that
// end in the other order than they began (the first one begun is the last one aborted) therefore
// pass the earlier one's records to the application as if committed. A Flink job that loses its
// JobManager leaves exactly that behind: the task aborts its open transaction when it is
// cancelled, and the pre-committed one before it is aborted only when the job is restored
// (found by `npm run chaos -- --engine flink`, scenario jm-kill: the verifier counted those
// records as duplicates; Kafka's Java consumer does not show them).
//
// filterAborted below is the Java consumer's rule (Fetcher/CompletedFetch): the aborted
// transactions ordered by first offset, every one that began at or before a record open for its
// producer, until that producer's abort marker. Importing this module puts it in place of
// kafkajs' function in Node's module cache, which works only before kafkajs is first loaded
// (src/kafka/module-cache.ts; src/kafka/preload.ts imports it).
import { createRequire } from 'node:module';
import { replaceModule, type ModuleRequire } from './module-cache.js';

export interface AbortedTransaction {
  producerId: string;
  firstOffset: string;
}

/** The parts of a kafkajs message the filter reads (control records included: batch.js drops them afterwards). */
export interface FetchedMessage {
  offset: string;
  key?: Buffer | null;
  isControlRecord?: boolean;
  batchContext: { producerId: string; inTransaction: boolean };
}

/**
 * An ABORT control record: a control record whose key is version 0, type 0 (COMMIT is type 1). A
 * data record whose key happens to be four zero bytes (an int32 key 0) is none; kafkajs' own
 * filter took it for one and let the rest of an aborted transaction through.
 */
function isAbortMarker(m: FetchedMessage): boolean {
  const k = m.key;
  return m.isControlRecord === true && !!k && k.length === 4 && k[0] === 0 && k[1] === 0 && k[2] === 0 && k[3] === 0;
}

/** The messages of one fetched partition without the records of aborted transactions. */
export function filterAborted<M extends FetchedMessage>({ messages, abortedTransactions }: { messages: M[]; abortedTransactions?: AbortedTransaction[] | null }): M[] {
  if (!abortedTransactions || abortedTransactions.length === 0) return messages;
  const pending = abortedTransactions.map((t) => ({ producerId: String(t.producerId), first: BigInt(t.firstOffset) })).sort((a, b) => Number(a.first - b.first));
  const open = new Set<string>();
  let next = 0;
  return messages.filter((m) => {
    const offset = BigInt(m.offset);
    while (next < pending.length && pending[next]!.first <= offset) open.add(pending[next++]!.producerId);
    const producerId = String(m.batchContext.producerId);
    if (isAbortMarker(m)) {
      open.delete(producerId);
      return true;
    }
    return !(m.batchContext.inTransaction && open.has(producerId));
  });
}

/**
 * Puts filterAborted in Node's module cache where kafkajs' consumer/batch.js will require its
 * filter. Too late once batch.js is loaded (it keeps the function it required): that throws.
 */
export function installFilter(req: ModuleRequire): true {
  return replaceModule(req, {
    module: 'kafkajs/src/consumer/filterAbortedMessages.js',
    exports: filterAborted,
    requiredBy: 'kafkajs/src/consumer/batch.js',
    installer: 'src/kafka/read-committed.ts',
  });
}

/** True once kafkajs' consumer uses filterAborted (set when this module is evaluated). */
export const readCommittedFixed = installFilter(createRequire(import.meta.url));
