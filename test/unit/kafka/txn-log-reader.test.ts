// The raw-fetch loop of readTransactionLog (src/kafka/txn-log-reader.ts) against a fake broker that
// answers Fetch v11 the way Kafka does, over a hand-built __transaction_state partition (one record
// a batch, as the coordinator writes it): a response holds whole batches from the one containing
// the fetch offset, cut at maxBytes (the last batch partial; a first batch larger than maxBytes
// comes whole, KIP-74); and its high watermark is the one read *before* the log was read
// (Partition.readRecords: `initialHighWatermark`, then `localLog.read` up to the high watermark of
// that moment), so a response can carry records at or past the high watermark it reports. Every
// record must be read exactly once across fetches and passes, and every commit counted once
// (events.ts on the records read).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { Kafka } from 'kafkajs';
import { readTransactionLog, type TxnLogEntry } from '../../../src/kafka/txn-log-reader.js';
import { TRANSACTION_STATES, type TransactionStateName, type TxnLogValue } from '../../../src/kafka/txn-log.js';
import { transitionEvents } from '../../../src/coordinator/events.js';
import { zigzag } from '../../harness/varint.js';

const T0 = 1_764_620_000_000;

const key = (id: string): Buffer => {
  const b = Buffer.alloc(4 + Buffer.byteLength(id));
  b.writeInt16BE(0, 0);
  b.writeInt16BE(Buffer.byteLength(id), 2);
  b.write(id, 4);
  return b;
};

/** A value v0 (non-flexible) as TransactionLogValue writes it. */
function value(state: TransactionStateName, epoch: number, startMs: number, atMs: number): Buffer {
  const open = state === 'Ongoing' || state.startsWith('Prepare');
  const parts = open ? Buffer.from([0, 0, 0, 1, 0, 3, ...Buffer.from('out'), 0, 0, 0, 1, 0, 0, 0, 0]) : Buffer.from([0xff, 0xff, 0xff, 0xff]);
  const head = Buffer.alloc(17);
  head.writeInt16BE(0, 0);
  head.writeBigInt64BE(1000n, 2);
  head.writeInt16BE(epoch, 10);
  head.writeInt32BE(60_000, 12);
  head.writeInt8(TRANSACTION_STATES.indexOf(state), 16);
  const tail = Buffer.alloc(16);
  tail.writeBigInt64BE(BigInt(atMs), 0);
  tail.writeBigInt64BE(BigInt(state === 'Empty' ? -1 : startMs), 8);
  return Buffer.concat([head, parts, tail]);
}

/** A magic-2 batch of one record (the coordinator appends each state on its own). */
function batch(offset: number, k: Buffer, v: Buffer, ts: number): Buffer {
  const body = Buffer.from([0, ...zigzag(0), ...zigzag(0), ...zigzag(k.length), ...k, ...zigzag(v.length), ...v, ...zigzag(0)]);
  const h = Buffer.alloc(61);
  h.writeBigInt64BE(BigInt(offset), 0);
  h.writeInt8(2, 16);
  h.writeInt32BE(0, 23);
  h.writeBigInt64BE(BigInt(ts), 27);
  h.writeBigInt64BE(BigInt(ts), 35);
  h.writeBigInt64BE(-1n, 43);
  h.writeInt32BE(1, 57);
  const b = Buffer.concat([h, Buffer.from(zigzag(body.length)), body]);
  b.writeInt32BE(b.length - 12, 8);
  return b;
}

/** `n` committed transactions over `ids` ids, interleaved as concurrent producers write them: Ongoing, PrepareCommit, CompleteCommit each. */
function committedLog(n: number, ids: number): Buffer[] {
  const out: Buffer[] = [];
  const epoch = new Map<number, number>();
  let offset = 0;
  let t = T0;
  // Three ids' steps at a time, so that the states of one id are not adjacent.
  const steps: { id: number; state: TransactionStateName; start: number }[][] = [];
  for (let i = 0; i < n; i++) {
    const id = i % ids;
    const start = T0 + i * 10;
    steps.push((['Ongoing', 'PrepareCommit', 'CompleteCommit'] as const).map((state) => ({ id, state, start })));
  }
  for (let i = 0; i < steps.length; i += ids) {
    const group = steps.slice(i, i + ids);
    for (let s = 0; s < 3; s++) {
      for (const g of group) {
        const { id, state, start } = g[s]!;
        const e = epoch.get(id) ?? 0;
        // TV2: every EndTxn bumps the epoch (PrepareCommit carries the new one).
        const ep = state === 'Ongoing' ? e : e + 1;
        if (state === 'CompleteCommit') epoch.set(id, e + 1);
        out.push(batch(offset++, key(`app-${id}`), value(state, ep, start, ++t), t));
      }
    }
  }
  return out;
}

/**
 * A fake broker holding `batches` (batch i at offset i) of __transaction_state-0. `visibleHw`: the
 * high watermark when the log is read; `reportedHw(visibleHw)`: the one the response carries (read
 * before, so at most the visible one).
 */
class FakeBroker {
  fetches: { offset: number; maxBytes: number }[] = [];
  /** Partition error codes the next fetches answer, one each, before the log is served (a leader not elected yet). */
  partitionErrors: number[] = [];
  refreshes = 0;
  visibleHw: number;
  reportedHw: (visible: number) => number = (v) => v;

  constructor(readonly batches: Buffer[]) {
    this.visibleHw = batches.length;
  }

  kafka(): Kafka {
    const broker = {
      versions: null,
      connectionPool: {
        send: async (req: { request: { encode(): Promise<{ buffer: Buffer }> }; response: { decode(b: Buffer): Promise<unknown>; parse(x: unknown): Promise<unknown> } }) => {
          const r = (await req.request.encode()).buffer;
          const topicLen = r.readInt16BE(29);
          const p = 29 + 2 + topicLen + 4; // the partition array's first entry
          const partition = r.readInt32BE(p);
          const offset = Number(r.readBigInt64BE(p + 8));
          const maxBytes = r.readInt32BE(p + 24);
          assert.equal(partition, 0);
          this.fetches.push({ offset, maxBytes });
          return req.response.parse(await req.response.decode(this.answer(offset, maxBytes)));
        },
      },
    };
    const cluster = {
      connect: async () => undefined,
      disconnect: async () => undefined,
      addMultipleTargetTopics: async () => undefined,
      refreshMetadata: async () => {
        this.refreshes++;
      },
      findTopicPartitionMetadata: () => [{ partitionId: 0 }],
      findLeaderForPartitions: (_t: string, parts: number[]) => ({ '1': parts }),
      findBroker: async () => broker,
    };
    return { [Symbol('private:Kafka:createCluster')]: () => cluster } as unknown as Kafka;
  }

  /** A Fetch v11 response body: whole batches from the one holding `offset` below the visible high watermark, cut at maxBytes. */
  private answer(offset: number, maxBytes: number): Buffer {
    const errorCode = this.partitionErrors.shift() ?? 0;
    const visible = errorCode ? [] : this.batches.slice(offset, this.visibleHw);
    const bytes = Buffer.concat(visible);
    const first = visible[0]?.length ?? 0;
    const records = bytes.subarray(0, Math.max(Math.min(maxBytes, bytes.length), first));
    const topic = Buffer.from('__transaction_state');
    const b = Buffer.alloc(4 + 2 + 4 + 4 + 2 + topic.length + 4 + 4 + 2 + 8 + 8 + 8 + 4 + 4 + 4);
    let i = 10; // throttle, error code, session id: 0
    b.writeInt32BE(1, i);
    b.writeInt16BE(topic.length, (i += 4));
    topic.copy(b, (i += 2));
    b.writeInt32BE(1, (i += topic.length));
    b.writeInt32BE(0, (i += 4)); // partition
    b.writeInt16BE(errorCode, (i += 4)); // error code
    b.writeBigInt64BE(BigInt(this.reportedHw(this.visibleHw)), (i += 2));
    b.writeBigInt64BE(BigInt(this.visibleHw), (i += 8)); // last stable offset
    b.writeBigInt64BE(0n, (i += 8)); // log start offset
    b.writeInt32BE(0, (i += 8)); // aborted transactions
    b.writeInt32BE(-1, (i += 4)); // preferred read replica
    b.writeInt32BE(records.length, (i += 4));
    return Buffer.concat([b, records]);
  }
}

/** The committed transactions the entries of successive passes give, states carried over as the transactions service does. */
function commits(passes: TxnLogEntry[][]): number {
  const states = new Map<string, TxnLogValue>();
  let n = 0;
  for (const entries of passes) {
    for (const e of entries) {
      if (e.record.kind !== 'transaction') continue;
      const id = e.record.transactionalId;
      for (const ev of transitionEvents(id, states.get(id), e.record.value, e.timestampMs)) if (ev.kind === 'ended' && ev.outcome === 'committed') n++;
      states.set(id, e.record.value);
    }
  }
  return n;
}

describe('readTransactionLog: the raw-fetch loop', () => {
  const log = committedLog(40, 3); // 120 records
  const size = Math.max(...log.map((b) => b.length));

  test('a partition whose leader moved or is not elected yet is asked again on fresh metadata within the pass: every record once, no error', async () => {
    for (const codes of [[6], [5, 6], [3, 9, 74, 75], [78, 56]]) {
      const broker = new FakeBroker(log);
      broker.partitionErrors = [...codes];
      const { entries, next } = await readTransactionLog(broker.kafka(), { partitions: [0], from: new Map([[0, 3]]), leaderBackoffMs: 1 });
      assert.deepEqual(entries.map((e) => e.offset), log.map((_, i) => i).slice(3), `codes ${codes.join(',')}`);
      assert.equal(next.get(0), log.length);
      assert.equal(broker.refreshes, codes.length, 'metadata refreshed before each retry');
      // Asked again from where it stood, not from the start or past it.
      assert.deepEqual(broker.fetches.slice(0, codes.length + 1).map((f) => f.offset), Array(codes.length + 1).fill(3));
    }
  });

  test('a leader that does not settle within the retries fails the pass, naming the partition, the broker and the code', async () => {
    const broker = new FakeBroker(log);
    broker.partitionErrors = [6, 6, 6, 6];
    await assert.rejects(
      readTransactionLog(broker.kafka(), { partitions: [0], leaderRetries: 2, leaderBackoffMs: 1 }),
      /^EosError: fetching __transaction_state-0 from broker 1: partition error code 6 \(its leader did not settle in 2 retries\)$/,
    );
    assert.equal(broker.fetches.length, 3, 'the first read and two retries');
    assert.equal(broker.refreshes, 2);
    // The third retry would have been answered: a leader that settles in time is read.
    const settles = new FakeBroker(log);
    settles.partitionErrors = [6, 6];
    assert.equal((await readTransactionLog(settles.kafka(), { partitions: [0], leaderRetries: 2, leaderBackoffMs: 1 })).entries.length, log.length);
  });

  test('any other partition error fails the pass at once, without a retry', async () => {
    for (const code of [1, 29, 87]) {
      const broker = new FakeBroker(log);
      broker.partitionErrors = [code];
      await assert.rejects(readTransactionLog(broker.kafka(), { partitions: [0], leaderBackoffMs: 1 }), new RegExp(`fetching __transaction_state-0 from broker 1: partition error code ${code}$`));
      assert.equal(broker.refreshes, 0);
      assert.equal(broker.fetches.length, 1);
    }
  });

  test('a batch cut off at maxBytes is fetched again whole: every record once, in order, whatever the cut', async () => {
    const log = committedLog(12, 3); // 36 records
    const largest = Math.max(...log.map((b) => b.length));
    for (let maxBytes = 1; maxBytes <= 3 * largest + 3; maxBytes++) {
      const broker = new FakeBroker(log);
      const { entries, next } = await readTransactionLog(broker.kafka(), { partitions: [0], maxBytesPerPartition: maxBytes });
      assert.deepEqual(entries.map((e) => e.offset), log.map((_, i) => i), `maxBytes ${maxBytes}`);
      assert.equal(next.get(0), log.length);
      assert.equal(commits([entries]), 12);
      // Each fetch starts just past the last whole batch of the one before (the batch it cut off),
      // and one more at the end finds nothing below the high watermark.
      const expected: number[] = [];
      for (let o = 0; ; ) {
        expected.push(o);
        if (o >= log.length) break;
        let bytes = log[o]!.length;
        o++;
        while (o < log.length && bytes + log[o]!.length <= maxBytes) bytes += log[o++]!.length;
      }
      assert.deepEqual(broker.fetches.map((f) => f.offset), expected, `maxBytes ${maxBytes}`);
    }
  });

  test('records past the high watermark a response reports (read after it): left for the next pass, none lost, every commit counted once', async () => {
    for (const behind of [1, 2, 3, 7]) {
      for (const cut of [10, 11, 12, 59, 119]) {
        const broker = new FakeBroker(log);
        broker.visibleHw = cut + behind;
        broker.reportedHw = (v) => v - behind; // appends (and the high watermark) moved on between the two reads
        const one = await readTransactionLog(broker.kafka(), { partitions: [0] });
        assert.deepEqual(one.entries.map((e) => e.offset), Array.from({ length: cut }, (_, i) => i), `behind ${behind}, cut ${cut}`);
        assert.equal(one.next.get(0), cut);
        broker.visibleHw = log.length;
        broker.reportedHw = (v) => v;
        const two = await readTransactionLog(broker.kafka(), { partitions: [0], from: one.next });
        assert.deepEqual([...one.entries, ...two.entries].map((e) => e.offset), log.map((_, i) => i), `behind ${behind}, cut ${cut}`);
        assert.equal(commits([one.entries, two.entries]), 40, `behind ${behind}, cut ${cut}`);
      }
    }
  });

  test('both at once: small fetches cut batches while responses report a stale high watermark', async () => {
    const broker = new FakeBroker(log);
    broker.reportedHw = (v) => Math.max(0, v - 2);
    const passes: TxnLogEntry[][] = [];
    let from: Map<number, number> | undefined;
    for (let visible = 5; visible <= log.length + 2; visible += 5) {
      broker.visibleHw = Math.min(visible, log.length);
      const r = await readTransactionLog(broker.kafka(), { partitions: [0], maxBytesPerPartition: 2 * size + 17, ...(from ? { from } : {}) });
      passes.push(r.entries);
      from = r.next;
    }
    broker.reportedHw = (v) => v;
    passes.push((await readTransactionLog(broker.kafka(), { partitions: [0], from })).entries);
    assert.deepEqual(passes.flat().map((e) => e.offset), log.map((_, i) => i));
    assert.equal(commits(passes), 40);
  });
});
