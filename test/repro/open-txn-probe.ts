// Experiment: what do the two readers do when a sink partition's records sit behind an open transaction?
//   node --import tsx --import ./src/kafka/preload.ts test/repro/open-txn-probe.ts
// Before the fix (337d84e) both readers FINISHED at once, stopping at the LSO: open-from-0 with 0 of
// its records (ends lso 0, hw 200), committed-then-open with the 100 committed of 200; a raw
// read_committed Fetch at offset 0 answered no records (LSO 0), so the readers' end was the LSO:
// kafkajs' admin.fetchTopicOffsets sends ListOffsets with the default isolation level, READ_COMMITTED.
// With the fix both wait and throw "not stable" after their 4 s timeout.
import { test } from 'node:test';
import { LocalCluster, kafkaFor, createTopic, uniqueName } from '../harness/index.js';
import { readTopic, readTopicRecords } from '../../src/verify/reader.js';
import { EndOffsetReader } from '../../src/kafka/offsets.js';
import { RawFetcher } from '../../src/kafka/raw-fetch.js';
import { decodeFetchResponse, scanRecordSet } from '../../src/kafka/record-batches.js';

test('open-transaction probe', { timeout: 600_000 }, async () => {
  const cluster = await LocalCluster.start({ nodes: 1 });
  try {
    const brokers = cluster.brokers;
    const kafka = kafkaFor(brokers);
    for (const shape of ['open-from-0', 'committed-then-open', 'other-producer-committed-after-open']) {
      const topic = uniqueName(shape);
      await createTopic(brokers, topic, 1, 1);
      const mk = () => kafka.producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 });
      const a = mk();
      await a.connect();
      const msgs = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ partition: 0, value: `${tag}-${i}` }));
      let open;
      if (shape === 'open-from-0') {
        open = await a.transaction();
        await open.send({ topic, messages: msgs(200, 'open') });
      } else if (shape === 'committed-then-open') {
        const t = await a.transaction();
        await t.send({ topic, messages: msgs(100, 'c') });
        await t.commit();
        open = await a.transaction();
        await open.send({ topic, messages: msgs(100, 'open') });
      } else {
        open = await a.transaction();
        await open.send({ topic, messages: msgs(1, 'open') });
        const b = mk();
        await b.connect();
        const t = await b.transaction();
        await t.send({ topic, messages: msgs(100, 'c') });
        await t.commit();
        await b.disconnect();
      }
      const r = new EndOffsetReader(kafka);
      console.log(shape, 'ends', JSON.stringify((await r.read(topic)).map((e) => ({ lso: String(e.lso), hw: String(e.high) }))));
      await r.close();
      const f = new RawFetcher(kafka, true);
      await f.connect(topic);
      for (const [nodeId] of f.leaders(topic, [0])) {
        const res = decodeFetchResponse(await f.fetch(nodeId, topic, [{ partition: 0, offset: 0, maxBytes: 1 << 20 }], { maxWaitMs: 200, maxBytes: 1 << 20 }));
        for (const p of res.partitions) {
          let n = 0;
          const scan = p.records ? scanRecordSet(p.records, 0, 1e9, p.aborted, () => n++) : null;
          console.log(shape, 'raw fetch', JSON.stringify({ err: p.errorCode, hw: p.highWatermark, lso: p.lastStableOffset, aborted: p.aborted.map((x) => String(x.producerId) + '@' + x.firstOffset), bytes: p.records?.length ?? null, scan, n }));
        }
      }
      await f.close();
      for (const [name, fn] of [
        ['readTopic', async () => { let n = 0; await readTopic(kafka, topic, { timeoutMs: 4000, onRecord: () => n++ }); return n; }],
        ['readTopicRecords', async () => { let n = 0; await readTopicRecords(kafka, topic, { timeoutMs: 4000, onRecord: () => n++ }); return n; }],
      ] as const) {
        const t0 = Date.now();
        try {
          const n = await fn();
          console.log(shape, name, `FINISHED with ${n} records after ${Date.now() - t0} ms`);
        } catch (err) {
          console.log(shape, name, `threw after ${Date.now() - t0} ms: ${(err as Error).message}`);
        }
      }
      await open.commit();
      await a.disconnect();
    }
  } finally {
    await cluster.down();
  }
});
