// `eoswatch verify produce|check` on a real cluster: a pipeline run judged clean, and a sink
// with duplicates, losses and wrong values judged failed (exit 3).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createTopic, kafkaFor, uniqueName, useCluster, runEoswatch } from '../harness/index.js';
import { PipelineProcess, pipelineConfig, waitCaughtUp } from '../harness/pipeline.js';
import { readTopic, readTopicRecords, waitSinkStable, type SinkStable } from '../../src/verify/reader.js';
import type { UnstablePartition } from '../../src/verify/stability.js';


const eoswatch = runEoswatch;

describe('eoswatch verify (1-node cluster)', () => {
  const h = useCluster({ nodes: 1 });

  test('a pipeline run passes: every record once, value + 1, in order', async () => {
    const id = uniqueName('verify');
    const s = { brokers: h.cluster.brokers, source: `${id}-in`, sink: `${id}-out`, groupId: `${id}-g`, prefix: id };
    for (const t of [s.source, s.sink, `${s.sink}.dlq`]) await createTopic(s.brokers, t, 4, 1);
    const produced = await eoswatch(['verify', 'produce', '-b', h.cluster.bootstrapServers, '--topic', s.source, '--records', '5000']);
    assert.equal(produced.code, 0, produced.stderr);
    const manifest = JSON.parse(produced.stdout) as { run: string; partitions: number; records: number };
    assert.equal(manifest.partitions, 4);
    const p = new PipelineProcess(pipelineConfig(s));
    await waitCaughtUp(s.brokers, s.groupId, s.source);
    const r = await eoswatch(['verify', 'check', '-b', h.cluster.bootstrapServers, '--topic', s.sink, '--run', manifest.run, '--records', '5000', '--partitions', '4', '--uncommitted', '--format', 'json']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as { received: number; duplicates: number; lost: number; orderViolations: number; wrongValue: number; violations: string[]; latencyMs: { p50: number } | null };
    assert.deepEqual([report.received, report.duplicates, report.lost, report.orderViolations, report.wrongValue], [5000, 0, 0, 0, 0]);
    assert.deepEqual(report.violations, []);
    assert.ok(report.latencyMs && report.latencyMs.p50 > 0);
    await p.kill();
  });

  test('a sink with duplicates, a missing run and wrong values fails with exit 3 and says why', async () => {
    const topic = uniqueName('verify-bad');
    await createTopic(h.cluster.brokers, topic, 2, 1);
    // The same run written twice straight into the "sink", values not incremented.
    for (let i = 0; i < 2; i++) {
      const r = await eoswatch(['verify', 'produce', '-b', h.cluster.bootstrapServers, '--topic', topic, '--records', '100', '--run', 'dup']);
      assert.equal(r.code, 0, r.stderr);
    }
    const r = await eoswatch(['verify', 'check', '-b', h.cluster.bootstrapServers, '--topic', topic, '--run', 'dup', '--records', '120', '--partitions', '2']);
    assert.equal(r.code, 3);
    assert.match(r.stdout, /^duplicates\s+100 \(83\.3333%\)$/m);
    assert.match(r.stdout, /^lost\s+20 /m);
    assert.match(r.stdout, /^wrong value\s+100$/m);
    assert.match(r.stdout, /verdict\s+FAIL: duplicate rate .*; loss rate .*; 100 records with a wrong value/);
  });

  test('--uncommitted counts aborted records exactly, and records of transactions open meanwhile apart', async () => {
    const topic = uniqueName('verify-open');
    await createTopic(h.cluster.brokers, topic, 2, 1);
    const kafka = kafkaFor(h.cluster.brokers);
    const aborter = kafka.producer({ transactionalId: uniqueName('abort'), idempotent: true, maxInFlightRequests: 1 });
    await aborter.connect();
    const txn = await aborter.transaction();
    await txn.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ value: `aborted-${i}`, partition: i % 2 })) });
    await txn.abort();
    await aborter.disconnect();
    // A canary-like writer keeps opening and committing transactions while the check runs.
    const writer = kafka.producer({ transactionalId: uniqueName('busy'), idempotent: true, maxInFlightRequests: 1 });
    await writer.connect();
    let writing = true;
    const busy = (async () => {
      while (writing) {
        const t = await writer.transaction();
        await t.send({ topic, messages: [{ value: 'busy', partition: 0 }, { value: 'busy', partition: 1 }] });
        await new Promise((r) => setTimeout(r, 30));
        await t.commit();
      }
    })();
    try {
      const r = await eoswatch(['verify', 'check', '-b', h.cluster.bootstrapServers, '--topic', topic, '--run', 'none', '--records', '1', '--partitions', '2', '--uncommitted', '--format', 'json']);
      const report = JSON.parse(r.stdout) as { abortedRecords: number; openRecords: number };
      assert.equal(report.abortedRecords, 10, 'only the aborted transaction, never the busy writer\'s open ones');
      assert.ok(report.openRecords >= 0);
    } finally {
      writing = false;
      await busy;
      await writer.disconnect();
    }
  });

  test('read_committed drops aborted transactions that ended in the other order than they began, or hold a record keyed by four zero bytes (kafkajs 2.2.4 passes both)', async () => {
    // What a Flink JobManager loss leaves on a sink partition (chaos --engine flink, jm-kill): the
    // transaction begun first is aborted last. src/kafka/read-committed.ts makes kafkajs drop both.
    const topic = uniqueName('verify-interleaved');
    await createTopic(h.cluster.brokers, topic, 1, 1);
    const kafka = kafkaFor(h.cluster.brokers);
    const producer = async () => {
      const p = kafka.producer({ transactionalId: uniqueName('interleaved'), idempotent: true, maxInFlightRequests: 1 });
      await p.connect();
      return p;
    };
    const [first, second, committer] = [await producer(), await producer(), await producer()];
    try {
      const t1 = await first.transaction();
      await t1.send({ topic, messages: [0, 1, 2].map((i) => ({ partition: 0, value: `first-${i}` })) });
      const t2 = await second.transaction();
      await t2.send({ topic, messages: [0, 1, 2].map((i) => ({ partition: 0, value: `second-${i}` })) });
      await t2.abort();
      await t1.abort();
      const t3 = await committer.transaction();
      await t3.send({ topic, messages: [0, 1].map((i) => ({ partition: 0, value: `committed-${i}` })) });
      await t3.commit();
    } finally {
      for (const p of [first, second, committer]) await p.disconnect();
    }
    // The commit's markers are written after commit() returns: the reader waits for them itself (waitSinkStable).
    const seen: string[] = [];
    await readTopic(kafka, topic, { onRecord: (_p, m) => seen.push(String(m.value)) });
    assert.deepEqual(seen, ['committed-0', 'committed-1']);
    const all: string[] = [];
    await readTopic(kafka, topic, { readUncommitted: true, onRecord: (_p, m) => all.push(String(m.value)) });
    assert.equal(all.length, 8, 'read_uncommitted sees every record');

    // An aborted transaction with a record whose key is four zero bytes (an int32 key 0): kafkajs
    // 2.2.4 takes that record for the abort marker and passes the rest of the transaction.
    const zeroKey = uniqueName('verify-zero-key');
    await createTopic(h.cluster.brokers, zeroKey, 1, 1);
    const [aborting, committing] = [await producer(), await producer()];
    try {
      const t = await aborting.transaction();
      await t.send({ topic: zeroKey, messages: [{ partition: 0, key: Buffer.alloc(4), value: 'aborted-key-0' }] });
      await t.send({ topic: zeroKey, messages: [{ partition: 0, value: 'aborted-after' }] });
      await t.abort();
      const c = await committing.transaction();
      await c.send({ topic: zeroKey, messages: [{ partition: 0, value: 'committed' }] });
      await c.commit();
    } finally {
      for (const p of [aborting, committing]) await p.disconnect();
    }
    const kept: string[] = [];
    await readTopic(kafka, zeroKey, { onRecord: (_p, m) => kept.push(String(m.value)) });
    assert.deepEqual(kept, ['committed']);
  });

  test('a transaction left open below the HW never ends a read early: both readers and verify check wait, time out naming the partition with its LSO and HW, and read the records once it commits', async () => {
    // CI's "200 lost": the group's offsets were committed (their marker written) while a sink
    // partition's marker was not, and the read took its end from the LSO (kafkajs' admin
    // fetchTopicOffsets answers READ_COMMITTED) and finished that partition with nothing read.
    const topic = uniqueName('verify-open-below-hw');
    await createTopic(h.cluster.brokers, topic, 2, 1);
    const kafka = kafkaFor(h.cluster.brokers);
    const committer = kafka.producer({ transactionalId: uniqueName('committed'), idempotent: true, maxInFlightRequests: 1 });
    const holder = kafka.producer({ transactionalId: uniqueName('open'), idempotent: true, maxInFlightRequests: 1 });
    await committer.connect();
    await holder.connect();
    try {
      const c = await committer.transaction();
      await c.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ partition: i % 2, value: `committed-${i}` })) });
      await c.commit();
      // Its markers are written after commit() returns (the race itself): wait for them, so that
      // the open transaction's records come after them.
      await waitSinkStable(kafka, topic, { timeoutMs: 30_000 });
      // Partition 1: 200 records behind an open transaction (offsets 6..205 after 5 records and a marker).
      const open = await holder.transaction();
      await open.send({ topic, messages: Array.from({ length: 200 }, (_, i) => ({ partition: 1, value: `open-${i}` })) });

      const held = /not stable after .*partition 1 \(LSO 6, HW 206\) is still below the high watermark.*An open transaction holds it/;
      let early = 0;
      await assert.rejects(readTopic(kafka, topic, { timeoutMs: 2000, onRecord: () => early++ }), held, 'readTopic must wait, not finish at the LSO');
      await assert.rejects(readTopicRecords(kafka, topic, { timeoutMs: 2000, onRecord: () => early++ }), held, 'readTopicRecords must wait, not finish at the LSO');
      assert.equal(early, 0, 'no record is passed on before the sink is stable');
      const cli = await eoswatch(['verify', 'check', '-b', h.cluster.bootstrapServers, '--topic', topic, '--run', 'none', '--records', '1', '--partitions', '2', '--timeout', '3s']);
      assert.equal(cli.code, 1, `no verdict (exit 3) while a transaction is open\n${cli.stdout}${cli.stderr}`);
      assert.match(cli.stderr, held);

      // Both readers waiting (each has seen partition 1 held), then the commit: every record is read.
      const waiting = (): { seen: Promise<UnstablePartition[]>; on: (p: UnstablePartition[]) => void } => {
        let on!: (p: UnstablePartition[]) => void;
        const seen = new Promise<UnstablePartition[]>((r) => (on = r));
        return { seen, on };
      };
      const [w1, w2] = [waiting(), waiting()];
      const got: string[] = [];
      const raw: string[] = [];
      const stable: SinkStable[] = [];
      let finished = 0;
      const reads = Promise.all([
        readTopic(kafka, topic, { timeoutMs: 60_000, onWaiting: w1.on, onStable: (s) => stable.push(s), onRecord: (_p, m) => got.push(String(m.value)) }).then(() => finished++),
        readTopicRecords(kafka, topic, { timeoutMs: 60_000, onWaiting: w2.on, onStable: (s) => stable.push(s), onRecord: (_p, v) => raw.push(String(v)) }).then(() => finished++),
      ]);
      for (const w of [w1, w2]) assert.deepEqual(await w.seen, [{ partition: 1, lso: 6n, target: 206n }]);
      assert.equal(finished, 0);
      await open.commit();
      await reads;
      for (const values of [got, raw]) {
        assert.equal(values.length, 210, 'the committed records and the 200 of the transaction that was open');
        assert.equal(values.filter((v) => v.startsWith('open-')).length, 200);
      }
      assert.equal(stable.length, 2);
      for (const s of stable) {
        assert.deepEqual(s.ends, new Map([[0, 6n], [1, 206n]]), 'the ends are the high watermarks taken at the start');
        assert.match(s.line, new RegExp(`^sink stable: LSO reached HW on 2 partitions of ${topic} after \\d+\\.\\d s$`));
      }
    } finally {
      await committer.disconnect();
      await holder.disconnect();
    }
  });

  test('usage errors exit 2', async () => {
    assert.equal((await eoswatch(['verify', 'check', '--topic', 't', '--records', '10', '--partitions', '2'])).code, 2);
    assert.equal((await eoswatch(['verify', 'produce', '--topic', 't', '--records', '-3'])).code, 2);
    assert.equal((await eoswatch(['verify', 'frob'])).code, 2);
  });
});
