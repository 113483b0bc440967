// The canary and the LSO monitor inside the daemon, on a real 3-node cluster: the canary counts
// no loss and no duplicate across a broker SIGKILL and across its own restart, and the sink holds
// every canary record exactly once; a transactional
// producer killed with an open transaction shows as a hanging transaction that clears once the
// broker aborts it after the transaction timeout.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createTopic, kafkaFor, readAll, spawnTracked, uniqueName, useCluster, waitForLine } from '../harness/index.js';
import { PipelineProcess, pipelineConfig, pipelineTopics, tails, waitCaughtUp } from '../harness/pipeline.js';
import { assertExactlyOnce, checkSink, sourceRecords } from '../harness/seed.js';
import { holds, until } from '../harness/wait.js';

const P = 3;

/**
 * Waits until the canary has received as many records as it had sent successfully when the wait
 * began: every gap of those records closed, so none of them can be counted lost later. A record
 * really lost keeps this from ever holding, and the wait fails with the canary's counters.
 */
async function everySentRecordReceived(p: PipelineProcess, when: string): Promise<void> {
  const sent = (await p.metric('eos_canary_records_total', { result: 'sent' }))!;
  const received = async () => (await p.metric('eos_canary_records_total', { result: 'received' })) ?? 0;
  await until(`the canary to receive the ${sent} records it had sent ${when} (received ${await received()})`, async () => (await received()) >= sent, 90_000, { intervalMs: 500, context: () => tails(p) });
}

/** For a failure message: where the records the canary counted lost really are. */
async function whereAre(p: PipelineProcess, s: { brokers: string[]; source: string; sink: string }): Promise<string> {
  const m = /"latest":\[([^\]]*)\][^\n]*canary records lost/.exec(p.output);
  if (!m) return 'no loss logged';
  const ids = m[1]!.split(',').map((x) => JSON.parse(x) as string).map((k) => { const [run, part, seq] = k.split('/'); return `${run}-${part}-${seq}`; });
  const find = async (topic: string, readUncommitted: boolean) => (await readAll(s.brokers, topic, { readUncommitted })).filter((r) => ids.some((id) => String(r.message.value).includes(`"id":"${id}"`))).map((r) => `${topic}${readUncommitted ? ' (uncommitted)' : ''} ${r.partition}@${r.message.offset}: ${String(r.message.value)}`);
  return [`lost ids: ${ids.join(' ')}`, ...(await find(s.source, false)), ...(await find(s.sink, false)), ...(await find(s.sink, true))].join('\n');
}

describe('canary and hanging-transaction detection (3-node cluster)', () => {
  // The broker looks for expired transactions every 2 s instead of 10 s, to keep the test short.
  const h = useCluster({ nodes: 3, overrides: { 'transaction.abort.timed.out.transaction.cleanup.interval.ms': '2000' } });

  test('the canary counts every record once, with no loss, across a broker SIGKILL and its own restart', async () => {
    const s = await pipelineTopics(h.cluster.brokers, 'canary', P, 3);
    const canary = { enabled: true, id: uniqueName('c'), rate: 40, lostAfter: '15s' };
    const cfg = pipelineConfig(s, { checkpoint: { interval: '500ms', timeout: '20s', tolerableFailedCheckpoints: 5 } }, { canary, lsoMonitor: { interval: '1s' } });
    let p = new PipelineProcess(cfg);
    await p.waitFor(/canary started/);
    const received = () => p.metric('eos_canary_records_total', { result: 'received' });
    await until('canary records at the sink', async () => ((await received()) ?? 0) >= 100, 60_000, { intervalMs: 500, context: () => tails(p) });
    assert.ok(((await p.metric('eos_canary_end_to_end_latency_seconds_count')) ?? 0) >= 100, 'latency observed per record');

    await h.cluster.kill(2);
    // The fault itself: the broker stays down for 8 s while the canary keeps sending, counting
    // nothing twice or wrong meanwhile.
    const clean = async () => {
      for (const result of ['duplicate', 'wrong_value']) if (((await p.metric('eos_canary_records_total', { result })) ?? 0) !== 0) return false;
      return true;
    };
    await holds('no canary record counted twice or wrong while broker 2 is down', clean, 8000, { intervalMs: 500, process: p });
    await h.cluster.start(2);
    const afterBounce = (await received())!;
    await until('canary records after the broker came back', async () => ((await received()) ?? 0) >= afterBounce + 200, 120_000, { intervalMs: 500, context: () => tails(p) });
    await everySentRecordReceived(p, 'across the broker SIGKILL');
    for (const result of ['lost', 'duplicate', 'wrong_value', 'late']) {
      assert.equal(await p.metric('eos_canary_records_total', { result }), 0, `${result} across the broker SIGKILL\n${await whereAre(p, s)}\n${tails(p)}`);
    }
    // One broker of three down costs at most a slower checkpoint, never a failed one.
    for (const outcome of ['failed', 'timeout']) assert.equal(await p.metric('eos_checkpoints_total', { outcome }), 0, `${outcome} checkpoints across the broker SIGKILL\n${tails(p)}`);
    assert.equal(await p.metric('eos_pipeline_up'), 1);

    // The whole daemon killed and started again: a new run; the old run's records in flight are not losses.
    await p.kill();
    p = new PipelineProcess(cfg);
    await p.waitFor(/canary started/);
    await until('canary records after the restart', async () => ((await received()) ?? 0) >= 100, 60_000, { intervalMs: 500, context: () => tails(p) });
    await everySentRecordReceived(p, 'after the restart');
    for (const result of ['lost', 'duplicate', 'wrong_value']) assert.equal(await p.metric('eos_canary_records_total', { result }), 0, `${result} after the restart\n${tails(p)}`);
    await p.kill();

    // The sink itself, not only the canary's counters: a daemon with the pipeline alone drains what
    // the canary sent last, then every canary record of the source must be in the sink exactly once,
    // with value + 1, in its partition and order (an independent read_committed reader).
    const drain = new PipelineProcess(pipelineConfig(s, { checkpoint: { interval: '500ms', timeout: '20s' } }));
    await drain.waitFor(/pipeline running/);
    await waitCaughtUp(s.brokers, s.groupId, s.source);
    await drain.kill();
    const sent = await sourceRecords(s.brokers, s.source);
    assert.ok(sent.length >= 400, `the canary wrote ${sent.length} records`);
    assertExactlyOnce(await checkSink(s.brokers, s.sink, sent), sent.length, 'canary records in the sink');
  });

  test('a transactional producer killed with an open transaction is a hanging transaction until the broker aborts it', async () => {
    const topic = uniqueName('hang');
    await createTopic(h.cluster.brokers, topic, 1, 3);
    const daemon = new PipelineProcess({
      http: { host: '127.0.0.1', port: 0 },
      kafka: { brokers: h.cluster.brokers },
      audit: { enabled: false },
      lsoMonitor: { topics: [topic], interval: '1s', hangingAfter: '4s' },
    });
    await daemon.waitFor(/LSO monitor started/);
    const labels = { topic, partition: '0' };
    await until('a first LSO reading', async () => (await daemon.metric('eos_partition_lso_lag_records', labels)) === 0, 30_000, { intervalMs: 500, context: () => tails(daemon) });

    // A producer process begins a transaction, writes into it, and is killed before it ends it.
    const script = `
      import { Kafka, logLevel } from 'kafkajs';
      const kafka = new Kafka({ clientId: 'hanger', brokers: ${JSON.stringify(h.cluster.brokers)}, logLevel: logLevel.NOTHING });
      const producer = kafka.producer({ transactionalId: '${uniqueName('hanger')}', transactionTimeout: 12000, maxInFlightRequests: 1, idempotent: true });
      await producer.connect();
      const txn = await producer.transaction();
      await txn.send({ topic: '${topic}', messages: [{ value: 'open-1' }, { value: 'open-2' }] });
      console.log('transaction open');
      setInterval(() => {}, 1000);
    `;
    const hanger = spawnTracked('node', ['--input-type=module', '-e', script]);
    await waitForLine(hanger, /transaction open/, 30_000);
    hanger.kill('SIGKILL');
    // Committed records keep arriving behind the open transaction: the high watermark moves, the LSO not.
    const producer = kafkaFor(h.cluster.brokers).producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [{ value: 'after-1' }, { value: 'after-2' }, { value: 'after-3' }] });
    await producer.disconnect();

    await until('eos_hanging_transactions 1', async () => (await daemon.metric('eos_hanging_transactions', { topic })) === 1, 20_000, { intervalMs: 500, context: () => tails(daemon) });
    assert.ok((await daemon.metric('eos_partition_lso_stuck_seconds', labels))! >= 4);
    assert.equal(await daemon.metric('eos_partition_lso_lag_records', labels), 5, 'two open records and three behind them');
    await daemon.waitFor(/"partition":0.*hanging transaction: the last stable offset has not moved/, 5000);

    // transaction.timeout.ms 12 s: the broker aborts it (checked every 2 s), the LSO jumps to the end.
    await until('the hanging transaction to clear', async () => (await daemon.metric('eos_hanging_transactions', { topic })) === 0, 40_000, { intervalMs: 500, context: () => tails(daemon) });
    assert.equal(await daemon.metric('eos_partition_lso_stuck_seconds', labels), 0);
    await daemon.waitFor(/hanging transaction cleared/, 5000);
    await daemon.kill();
  });
});
