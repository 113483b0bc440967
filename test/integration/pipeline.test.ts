// The transactional pipeline against a real 3-node cluster: exactly-once end to end, the start
// position guard, the dead-letter topic, checkpoint timeout and FAILED. The sink is always read
// by test/harness code (a plain read_committed kafkajs consumer), never by the pipeline's.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Partitioners } from 'kafkajs';
import { readAll, uniqueName, useCluster, kafkaFor } from '../harness/index.js';
import { assertExactlyOnce, checkSink, produceSeed, type SentRecord } from '../harness/seed.js';
import { PipelineProcess, pipelineConfig, pipelineTopics, tails, waitCaughtUp, type PipelineSetup } from '../harness/pipeline.js';

const P = 6;

describe('transactional pipeline (3-node cluster)', () => {
  const h = useCluster({ nodes: 3 });

  const setup = (name: string): Promise<PipelineSetup> => pipelineTopics(h.cluster.brokers, name, P, 3);

  test('50,000 seed records: every id exactly once in the sink with value + 1, input order kept per partition', async () => {
    const s = await setup('fifty-k');
    const sent = await produceSeed(s.brokers, s.source, P, 50_000);
    const p = new PipelineProcess(pipelineConfig(s));
    await waitCaughtUp(s.brokers, s.groupId, s.source, 180_000);
    assertExactlyOnce(await checkSink(s.brokers, s.sink, sent), sent.length);
    assert.equal(await p.metric('eos_pipeline_records_total', { direction: 'in' }), 50_000);
    assert.equal(await p.metric('eos_pipeline_records_total', { direction: 'out' }), 50_000);
    assert.ok((await p.metric('eos_kafka_transaction_commit_latency_seconds_count'))! >= P);
    assert.ok((await p.metric('eos_checkpoints_total', { outcome: 'completed' }))! >= 1);
    assert.equal(await p.metric('eos_checkpoints_total', { outcome: 'failed' }), 0);
    assert.equal(await p.metric('eos_pipeline_up'), 1);
    assert.equal((await fetch(`${await p.url}/readyz`)).status, 200);
    p.signal('SIGTERM');
    assert.equal(await p.exited, 0);
  });

  test('a transactional source with aborted transactions: only committed input reaches the sink, and markers do not stall the group', async () => {
    const s = await setup('txn-source');
    const producer = kafkaFor(s.brokers).producer({ transactionalId: uniqueName('upstream'), idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const committed: SentRecord[] = [];
    let value = 0;
    for (let t = 0; t < 12; t++) {
      const txn = await producer.transaction();
      const batch: SentRecord[] = [];
      for (let i = 0; i < 50; i++, value++) batch.push({ id: `up-${value}`, value, partition: value % P });
      await txn.send({ topic: s.source, messages: batch.map((r) => ({ key: r.id, partition: r.partition, value: JSON.stringify({ id: r.id, ts: Date.now(), value: r.value }) })) });
      // Every third transaction is aborted, the last one too: the source ends in abort markers.
      if (t % 3 === 2 || t === 11) await txn.abort();
      else {
        await txn.commit();
        committed.push(...batch);
      }
    }
    await producer.disconnect();
    const p = new PipelineProcess(pipelineConfig(s));
    await waitCaughtUp(s.brokers, s.groupId, s.source);
    assertExactlyOnce(await checkSink(s.brokers, s.sink, committed), committed.length, tails(p));
    assert.equal(await p.metric('eos_pipeline_records_total', { direction: 'in' }), committed.length);
    await p.kill();
  });

  test('key partitioning: every id exactly once, each in the partition its key hashes to (one send per sink partition)', async () => {
    const s = await setup('bykey');
    const sent = await produceSeed(s.brokers, s.source, P, 12_000);
    const p = new PipelineProcess(pipelineConfig(s, { partitioning: 'key' }));
    await waitCaughtUp(s.brokers, s.groupId, s.source, 180_000);
    assertExactlyOnce(await checkSink(s.brokers, s.sink, sent, { checkOrder: false }), sent.length, tails(p));
    const partitioner = Partitioners.DefaultPartitioner();
    const metadata = Array.from({ length: P }, (_, partitionId) => ({ partitionId, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0 }));
    const misplaced = (await readAll(s.brokers, s.sink)).filter(({ partition, message }) => partitioner({ topic: s.sink, partitionMetadata: metadata, message: { key: message.key, value: null } }) !== partition);
    assert.equal(misplaced.length, 0, 'records in the partition of their key');
    await p.kill();
  });

  test('AT_LEAST_ONCE mode (no transactions, offsets committed after the sends): nothing lost across a SIGKILL, duplicates possible', async () => {
    const s = await setup('alo');
    const sent = await produceSeed(s.brokers, s.source, P, 20_000);
    const cfg = pipelineConfig(s, { mode: 'AT_LEAST_ONCE', faultInjection: { maxRecordsPerSecond: 4000 } });
    let p = new PipelineProcess(cfg);
    await p.waitFor(/partition task initialised/);
    // Killed mid-stream: some records written, most of the input still to come.
    await p.waitMetric('eos_pipeline_records_total', { direction: 'out' }, 1000);
    await p.kill();
    p = new PipelineProcess(pipelineConfig(s, { mode: 'AT_LEAST_ONCE' }));
    await waitCaughtUp(s.brokers, s.groupId, s.source, 180_000);
    const report = await checkSink(s.brokers, s.sink, sent);
    assert.equal(report.lost, 0, `at-least-once must not lose records\n${(report.examples ?? []).join('\n')}\n${tails(p)}`);
    assert.equal(report.unexpected + report.wrongValue, 0);
    assert.equal(report.total, sent.length + report.duplicates, 'every record in the sink is a sent one or a duplicate of one');
    assert.equal((await p.metric('eos_transactions_total', { outcome: 'committed' })) ?? 0, 0, 'no transactions in at-least-once mode');
    await p.kill();
  });

  test('no committed offset and no startFrom: refuses to start and says how to bootstrap', async () => {
    const s = await setup('no-offset');
    await produceSeed(s.brokers, s.source, P, 10);
    const p = new PipelineProcess(pipelineConfig(s, { startFrom: 'none' }));
    assert.equal(await p.exited, 1);
    assert.match(p.output, /has no committed offset for .* partitions 0, 1, 2, 3, 4, 5; refusing to start \(auto\.offset\.reset=none\)/);
    assert.match(p.output, /pipeline\.startFrom: earliest/);
    assert.equal((await readAll(s.brokers, s.sink)).length, 0, 'nothing was written');
  });

  test('malformed records go to the dead-letter topic in the same transaction; the rest is unaffected', async () => {
    const s = await setup('dlq');
    const good = await produceSeed(s.brokers, s.source, P, 600);
    const producer = kafkaFor(s.brokers).producer();
    await producer.connect();
    const bad = ['not json at all', JSON.stringify({ ts: 1, value: 3 }), JSON.stringify({ id: 'x', ts: 1, value: 'three' })];
    await producer.send({ topic: s.source, messages: bad.map((value, i) => ({ value, partition: i % P })) });
    await producer.disconnect();
    const good2 = await produceSeed(s.brokers, s.source, P, 600, { startValue: 600 });
    const p = new PipelineProcess(pipelineConfig(s));
    await waitCaughtUp(s.brokers, s.groupId, s.source);
    assertExactlyOnce(await checkSink(s.brokers, s.sink, [...good, ...good2], { checkOrder: false }), 1200);
    const dlq = await readAll(s.brokers, `${s.sink}.dlq`);
    assert.deepEqual(dlq.map((r) => String(r.message.value)).sort(), [...bad].sort());
    const reasons = dlq.map((r) => String(r.message.headers?.['eos.dlq.reason'])).sort();
    assert.deepEqual(reasons, ['field "id" missing or not a non-empty string', 'field "value" missing or not an integer', 'value is not JSON: Unexpected token \'o\', "not json at all" is not valid JSON'].sort());
    for (const r of dlq) {
      assert.equal(String(r.message.headers?.['eos.dlq.source.topic']), s.source);
      assert.match(String(r.message.headers?.['eos.dlq.source.offset']), /^\d+$/);
    }
    assert.equal(await p.metric('eos_pipeline_records_total', { direction: 'dlq' }), 3);
    await p.kill();
  });

  test('a checkpoint that times out is aborted, rewound and retried; nothing is lost or duplicated', async () => {
    const s = await setup('timeout');
    const sent = await produceSeed(s.brokers, s.source, P, 3000);
    // The first checkpoint with transactions sleeps past its timeout between preCommit and commit.
    const p = new PipelineProcess(
      pipelineConfig(s, {
        checkpoint: { interval: '500ms', timeout: '2s', tolerableFailedCheckpoints: 1 },
        faultInjection: { commitDelay: '3s', commitDelayTimes: 1 },
      }),
    );
    await p.waitFor(/"outcome":"timeout","failure":"TIMEOUT".*checkpoint aborted/);
    await waitCaughtUp(s.brokers, s.groupId, s.source);
    assertExactlyOnce(await checkSink(s.brokers, s.sink, sent), sent.length);
    assert.equal(await p.metric('eos_checkpoints_total', { outcome: 'timeout' }), 1);
    // Counted by its reason too, and by no other.
    assert.equal(await p.metric('eos_checkpoint_failures_total', { reason: 'TIMEOUT' }), 1);
    for (const reason of ['FENCED', 'SEND_FAILED', 'PRE_COMMIT_FAILED', 'COMMIT_FAILED']) assert.equal(await p.metric('eos_checkpoint_failures_total', { reason }), 0, reason);
    assert.ok((await p.metric('eos_transactions_total', { outcome: 'committed' }))! >= 1);
    assert.equal(await p.metric('eos_checkpoint_consecutive_failures'), 0);
    assert.equal(await p.metric('eos_pipeline_up'), 1);
    await p.kill();
  });

  test('tolerableFailedCheckpoints: 0 and one failure: the pipeline is FAILED, eos_pipeline_up 0, /readyz 503', async () => {
    const s = await setup('failed');
    await produceSeed(s.brokers, s.source, P, 500);
    const p = new PipelineProcess(
      pipelineConfig(s, {
        checkpoint: { interval: '500ms', timeout: '1s', tolerableFailedCheckpoints: 0 },
        faultInjection: { commitDelay: '2s' },
        onFailure: 'keep-serving',
        restartStrategy: { type: 'none' },
      }),
    );
    await p.waitFor(/pipeline FAILED/);
    assert.equal(await p.metric('eos_pipeline_up'), 0);
    assert.equal(await p.metric('eos_checkpoint_consecutive_failures'), 1);
    const ready = await fetch(`${await p.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.match(JSON.stringify(await ready.json()), /pipeline: (failed: pipeline )?FAILED: 1 consecutive failed checkpoint \(tolerable: 0\)/);
    assert.equal((await readAll(s.brokers, s.sink)).length, 0, 'the aborted transaction left nothing visible');
    await p.kill();
  });

  test('a FAILED pipeline exits non-zero by default (onFailure: exit)', async () => {
    const s = await setup('failed-exit');
    await produceSeed(s.brokers, s.source, P, 100);
    const p = new PipelineProcess(
      pipelineConfig(s, { checkpoint: { interval: '500ms', timeout: '1s' }, faultInjection: { commitDelay: '2s' } }),
    );
    assert.equal(await p.exited, 1);
    assert.match(p.output, /fatal service error; shutting down/);
  });
});
